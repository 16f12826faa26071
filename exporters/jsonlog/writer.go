package jsonlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/validate"
)

// ErrClosed is what Err reports after lines arrived at a closed writer.
var ErrClosed = errors.New("jsonlog: writer closed")

// output is a line sink shared by Writer and FindingWriter: a buffered
// file (rotated by size) or any io.Writer. Its methods take the lock.
//
// It writes whole lines only, so that a crash (kill -9) leaves the file
// ending in a whole line: lines are gathered in buf and written out with
// one write call each time (a write(2) to a regular file is not cut short
// by a signal), and a file found ending in a partial line when it is opened
// (a crash in the middle of a write, a full disk, a power loss) is cut back
// to its last newline before anything is appended.
type output struct {
	path   string // "" for an io.Writer
	rotate int64
	keep   int

	mu   sync.Mutex
	file *os.File
	// syncs: file is a regular file, whose lines fsync makes durable; a
	// device or a pipe named as the path (/dev/stdout, /dev/full, a
	// FIFO) has nothing to make durable, and fsync fails on it (EINVAL):
	// that is no lost line.
	syncs  bool
	dst    io.Writer
	buf    []byte
	size   int64 // of the file, buffered lines included
	disk   int64 // of the file as written: where a failed write is cut back to
	err    error
	closed bool
	// before is called (lock held) before buffered lines are written out
	// because the buffer is full: the record log flushes the findings log
	// first, so that a record on disk has its findings on disk too.
	before func()

	// lostMark, when set (the record log), is written before the next
	// line after lines were lost to a failed write (lost): a replay of the
	// log must not judge across them.
	lostMark []byte
	lost     bool
	// marked: the last line on disk is lostMark (markLost's), so that a
	// failing file does not take one after each failed write.
	marked bool

	lines, failed atomic.Uint64
	cut           atomic.Int64 // bytes of torn last lines cut at open
}

// logLostMark is the record log's line for lines it lost: no record, and a
// loss of every scope (validate's replay gaps every open stream).
var logLostMark = []byte(`{"_e2atap":{"tap":"","lost":true,"all":true}}` + "\n")

// logOpenMark ends the record log of a run that stopped with streams open
// and did not end them (OpenLeft): logLostMark, which a replay that knows
// no "open" reads as before (every open stream gapped), and "open", which
// tells a replay that the run dropped them there unreported.
var logOpenMark = []byte(`{"_e2atap":{"tap":"","lost":true,"all":true,"open":true}}` + "\n")

// outputBuffer is how much an output holds before it writes out by itself;
// Flush and Sync write out sooner.
const outputBuffer = 256 << 10

func openOutput(path string, rotate int64, keep int) (*output, error) {
	if path == "-" {
		return writerOutput(os.Stdout), nil
	}
	o := &output{path: path, rotate: rotate, keep: keep}
	if err := o.open(); err != nil {
		return nil, err
	}
	return o, nil
}

func writerOutput(w io.Writer) *output {
	return &output{dst: w}
}

func (o *output) open() error {
	f, err := os.OpenFile(o.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	size, cut, err := cutTornLine(f)
	if err != nil {
		f.Close()
		return err
	}
	o.cut.Add(cut)
	o.file, o.dst, o.size, o.disk = f, f, size, size
	fi, err := f.Stat()
	o.syncs = err != nil || fi.Mode().IsRegular()
	return nil
}

// cutTornLine truncates f after its last newline, if it does not end in
// one, and returns the size it then has and how many bytes it cut.
func cutTornLine(f *os.File) (size, cut int64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size = fi.Size()
	if size == 0 || !fi.Mode().IsRegular() {
		return size, 0, nil
	}
	var chunk [32 << 10]byte
	end := size
	for end > 0 {
		n := int64(len(chunk))
		if n > end {
			n = end
		}
		b := chunk[:n]
		if _, err := f.ReadAt(b, end-n); err != nil {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			end = end - n + int64(i) + 1
			break
		}
		end -= n
	}
	if end == size {
		return size, 0, nil
	}
	if err := f.Truncate(end); err != nil {
		return 0, 0, fmt.Errorf("cutting a torn last line: %w", err)
	}
	return end, size - end, nil
}

func (o *output) setErr(err error) {
	if o.err == nil {
		o.err = err
	}
}

// write appends one line, rotating first when the line would take the file
// past the rotation size. A line is never split across files.
func (o *output) write(line []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		o.setErr(ErrClosed)
		o.failed.Add(1)
		return
	}
	if o.path != "" {
		if o.file == nil {
			// A failed rotation left no file: try again.
			if err := o.open(); err != nil {
				o.setErr(err)
				o.failed.Add(1)
				o.lost = o.lostMark != nil
				return
			}
		}
		if o.rotate > 0 && o.size > 0 && o.size+int64(len(line)) > o.rotate {
			if err := o.rotateLocked(); err != nil {
				o.setErr(err)
				if o.file == nil {
					o.failed.Add(1)
					o.lost = o.lostMark != nil
					return
				}
			}
		}
	}
	if len(o.buf) > 0 && len(o.buf)+len(line) > outputBuffer {
		if o.before != nil {
			o.before()
		}
		_ = o.writeOutLocked()
	}
	if o.lost {
		o.lost = false
		o.buf = append(o.buf, o.lostMark...)
		o.size += int64(len(o.lostMark))
		o.lines.Add(1) // so that failed, counting newlines, never passes lines
	}
	o.buf = append(o.buf, line...)
	o.size += int64(len(line))
	o.lines.Add(1)
	if len(o.buf) >= outputBuffer {
		if o.before != nil {
			o.before()
		}
		_ = o.writeOutLocked()
	}
}

// writeOutLocked writes the buffered lines with one write call. If it
// fails part way, the file is cut back to its last whole line and the
// lines are counted as failed.
func (o *output) writeOutLocked() error {
	if len(o.buf) == 0 || o.dst == nil {
		return nil
	}
	n, err := o.dst.Write(o.buf)
	if err == nil && n < len(o.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		o.setErr(err)
		o.failed.Add(uint64(bytes.Count(o.buf, []byte{'\n'})))
		o.lost = o.lostMark != nil
		if o.file != nil {
			if n > 0 {
				_ = o.file.Truncate(o.disk)
			}
			o.size = o.disk
		}
		o.buf = o.buf[:0]
		o.markLostLocked()
		return err
	}
	o.disk += int64(n)
	o.marked = false
	if cap(o.buf) > 4*outputBuffer {
		o.buf = nil // one huge line does not pin its buffer
	} else {
		o.buf = o.buf[:0]
	}
	return nil
}

// markLostLocked writes lostMark at once after a failed write (lost), in
// the room its cut gave back, where it would otherwise wait for the next
// line that gets in: on a disk that stays full until the stop, none does,
// and a replay of the log judged the streams open at its last line whole
// (e2a.missing_final for a stream whose final was lost, not missed). If
// the mark does not get in either, it waits as before.
func (o *output) markLostLocked() {
	if !o.lost || o.marked || o.file == nil {
		return
	}
	n, err := o.dst.Write(o.lostMark)
	if err != nil || n < len(o.lostMark) {
		if n > 0 {
			_ = o.file.Truncate(o.disk)
		}
		return
	}
	o.disk += int64(n)
	o.size += int64(n)
	o.lost, o.marked = false, true
	o.lines.Add(1) // as the mark written before a line
}

// rotateLocked renames path.i to path.i+1 (the oldest falls off), path to
// path.1, and opens a new path.
func (o *output) rotateLocked() error {
	ferr := o.writeOutLocked()
	cerr := o.file.Close()
	o.file, o.dst = nil, nil
	if o.keep == 0 {
		if err := os.Remove(o.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	} else {
		for i := o.keep - 1; i >= 1; i-- {
			from := o.path + "." + strconv.Itoa(i)
			if err := os.Rename(from, o.path+"."+strconv.Itoa(i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		if err := os.Rename(o.path, o.path+".1"); err != nil {
			return err
		}
	}
	if err := o.open(); err != nil {
		return err
	}
	return errors.Join(ferr, cerr)
}

func (o *output) flush() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	return o.writeOutLocked()
}

// sync writes the buffered lines out and, for a file, makes them durable
// (fsync). A file that is no longer at its path is left for the one there
// now (followPathLocked).
func (o *output) sync() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.followPathLocked()
	if err := o.writeOutLocked(); err != nil {
		return err
	}
	if o.file != nil && o.syncs {
		if err := o.file.Sync(); err != nil {
			o.setErr(err)
			return err
		}
	}
	return nil
}

// followPathLocked reopens the file when its path names another file or
// none (logrotate without copytruncate renamed or removed it): the lines
// went on into the renamed file, or into a deleted one that no one could
// read and whose disk space was never given back. Lines buffered and not
// yet written go to the new file. A file cut shorter under it (logrotate's
// copytruncate) is appended to where it now ends: a failed write is cut
// back to there, not to the old size (which would fill the file with
// zeros up to it).
func (o *output) followPathLocked() {
	if o.file == nil || o.path == "" {
		return
	}
	fi, ferr := o.file.Stat()
	pi, perr := os.Stat(o.path)
	switch {
	case ferr != nil:
		return
	case perr == nil && os.SameFile(fi, pi):
		if fi.Size() < o.disk {
			o.disk, o.size = fi.Size(), fi.Size()+int64(len(o.buf))
		}
		return
	case perr != nil && !errors.Is(perr, fs.ErrNotExist):
		return // cannot tell: keep writing where we are
	}
	if err := o.file.Close(); err != nil {
		o.setErr(err)
	}
	o.file, o.dst = nil, nil
	if err := o.open(); err != nil {
		o.setErr(err) // write tries again at the next line
		return
	}
	o.size += int64(len(o.buf))
}

func (o *output) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	err := o.writeOutLocked()
	o.markLostLocked() // a mark that did not get in at the failure
	if o.file != nil {
		if o.syncs {
			err = errors.Join(err, o.file.Sync())
		}
		err = errors.Join(err, o.file.Close())
		o.file, o.dst = nil, nil
	}
	return err
}

func (o *output) firstErr() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}

// Writer is the redacted record log: a validate.Sink that writes one line
// per record. It is safe for concurrent use; lines from concurrent calls
// never interleave. Lines are buffered (64 KiB): they reach the file when
// the buffer fills, on Flush and on Close.
type Writer struct {
	red    *Redactor
	out    *output
	carry  *carry // content keep: secrets split across chunks (carry.go)
	counts [NumRules]atomic.Uint64
}

var _ validate.Sink = (*Writer)(nil)

// NewWriter validates cfg and opens (appends to) cfg.Path.
func NewWriter(cfg Config) (*Writer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	out, err := openOutput(cfg.Path, cfg.RotateBytes, cfg.Keep)
	if err != nil {
		return nil, err
	}
	return newWriter(cfg.Redactor(), out), nil
}

// NewWriterTo writes to w with the Redactor r (no rotation).
func NewWriterTo(w io.Writer, r *Redactor) *Writer {
	return newWriter(r, writerOutput(w))
}

func newWriter(r *Redactor, out *output) *Writer {
	out.lostMark = logLostMark
	w := &Writer{red: r, out: out}
	if r.content == ContentKeep {
		w.carry = newCarry()
	}
	return w
}

// Redactor is the Writer's Redactor; give it to NewFindingWriter so that
// fingerprints in findings join with those in records.
func (w *Writer) Redactor() *Redactor { return w.red }

// Record writes the redacted line of one record.
func (w *Writer) Record(ri *validate.RecordInfo) {
	st := w.red.get()
	st.out = st.line[:0]
	st.appendLine(ri)
	st.line = st.out
	for r, n := range st.counts {
		if n > 0 {
			w.counts[r].Add(uint64(n))
		}
	}
	if w.carry != nil {
		w.carry.record(w, ri, st)
	} else {
		w.out.write(st.line)
	}
	w.red.put(st)
}

// LossMark writes a line with no record that says the tap lost messages
// of in's scope (its tap and connection) and no later record of the scope
// says so ("gap"), its connection having ended:
// {"_e2atap":{"tap":…,"time":…,"conn":…,"lost":true}}. A replay gaps the
// scope's open streams there, as the live run did (validate.LossMarker).
func (w *Writer) LossMark(in *validate.Input) {
	st := w.red.get()
	st.out = append(st.line[:0], `{"_e2atap":{"tap":"`...)
	st.out = appendEscaped(st.out, []byte(in.Tap))
	st.out = append(st.out, '"')
	if !in.Time.IsZero() {
		st.out = append(st.out, `,"time":"`...)
		st.out = in.Time.UTC().AppendFormat(st.out, time.RFC3339Nano)
		st.out = append(st.out, '"')
	}
	if in.Conn != "" {
		st.out = append(st.out, `,"conn":"`...)
		st.redactText([]byte(in.Conn), true)
		st.out = append(st.out, '"')
	}
	st.out = append(st.out, ",\"lost\":true}}\n"...)
	st.line = st.out
	w.out.write(st.line)
	w.red.put(st)
}

// OpenLeft writes the mark of streams left open (logOpenMark): the live
// run stopped with streams open and judged them no further, so a replay
// drops every open stream there, unreported, as the run did
// (validate.OpenMarker).
func (w *Writer) OpenLeft() {
	w.out.write(logOpenMark)
}

// Finding does nothing: findings go to a FindingWriter.
func (w *Writer) Finding(*validate.Finding) {}

// StreamStart does nothing.
func (w *Writer) StreamStart(*validate.StreamInfo) {}

// StreamEnd writes the stream's held chunk line (see carry.go).
func (w *Writer) StreamEnd(si *validate.StreamInfo) {
	if w.carry != nil {
		w.carry.end(w, si.Tap, si.Protocol, si.Key)
	}
}

// CarryMissed counts chunk boundaries where a secret straddled two chunks
// but the earlier chunk's line had been written already (held too long or
// too large): its part of the secret could not be masked.
func (w *Writer) CarryMissed() uint64 {
	if w.carry == nil {
		return 0
	}
	w.carry.mu.Lock()
	defer w.carry.mu.Unlock()
	return w.carry.missed
}

// Redactions returns how many values each rule masked so far, indexed by
// Rule (RuleNames gives the label values).
func (w *Writer) Redactions() [NumRules]uint64 {
	var c [NumRules]uint64
	for r := range c {
		c[r] = w.counts[r].Load()
	}
	return c
}

// Lines is the number of lines written; Failed the number lost to errors.
func (w *Writer) Lines() uint64  { return w.out.lines.Load() }
func (w *Writer) Failed() uint64 { return w.out.failed.Load() }

// Err is the first write, rotation or close error, if any.
func (w *Writer) Err() error { return w.out.firstErr() }

// Flush writes buffered lines out, and the chunk lines held since before
// the previous Flush.
func (w *Writer) Flush() error {
	if w.carry != nil {
		w.carry.flush(w)
	}
	return w.out.flush()
}

// Sync writes buffered lines out and fsyncs the file. Chunk lines held
// for a split secret (content keep, carry.go) stay held: writing one
// early could leak the first half of a secret whose second half has not
// arrived yet. A crash can therefore lose, from the log only, the held
// lines (at most one per stream and maxHeld bytes in all); their records
// were judged.
func (w *Writer) Sync() error { return w.out.sync() }

// Close writes the held chunk lines, flushes and closes the file
// (standard output stays open).
func (w *Writer) Close() error {
	if w.carry != nil {
		w.carry.all(w)
	}
	return w.out.close()
}

// Cut is how many bytes of a torn last line (left by a crash) were cut
// from the file when it was opened.
func (w *Writer) Cut() int64 { return w.out.cut.Load() }

// FlushFirst makes the Writer write fw's buffered findings out whenever
// its own full buffer is written out, so that a record on disk has the
// findings reported before it on disk too (after a crash, a record found
// in the log is not judged again). Call before the first Record.
func (w *Writer) FlushFirst(fw *FindingWriter) {
	w.out.before = func() { _ = fw.out.flush() }
}

// ResumeSource is src of a record's resume point as the log writes it
// (redacted like the source), for matching records read again after a
// crash with what the log holds (validate.ReadLoggedAt).
func (w *Writer) ResumeSource(src string) string {
	b := w.red.RedactText([]byte{'"'}, []byte(src))
	var out string
	if json.Unmarshal(append(b, '"'), &out) != nil {
		return src
	}
	return out
}

var dirNames = [...]string{"none", "upstream", "downstream"}

// appendLine writes the whole line of a record into st.out.
func (st *state) appendLine(ri *validate.RecordInfo) {
	var in *validate.Input
	var data []byte
	if ri.In != nil {
		in, data = ri.In, ri.In.Data
	}
	invalid, reason := false, ""
	switch {
	case ri.Frame != nil:
		st.frame(ri.Frame)
	case ri.Kind == "invalid" || ri.JSON == nil:
		invalid, reason = true, "undecodable"
	default:
		base := len(st.out)
		st.ce = ri.Class == e2a.ClassCloudEvent
		if err := st.record(data, ri.Class == e2a.ClassResponse); err != nil {
			st.out = st.out[:base]
			invalid, reason = true, "invalid_json"
			if errors.Is(err, e2a.ErrNotObject) {
				reason = "not_object"
			}
		}
	}
	if invalid {
		// Nothing of the content, not even the masks of a half-read record;
		// only the stream key the engine read in its head (an oversize
		// line's, a record broken after it), as a record's request_id is
		// logged: the engine did not judge that stream across the record,
		// and a replay of the log must not either (a seq_start or seq_gap
		// at its next record, where the live run had none).
		st.reset()
		st.out = append(st.out, '{')
		if len(ri.Stream) > 0 && ri.Protocol == validate.ProtoE2A {
			st.out = append(st.out, `"request_id":"`...)
			st.redactText(ri.Stream, true)
			st.out = append(st.out, '"')
		}
	}
	if st.out[len(st.out)-1] != '{' {
		st.out = append(st.out, ',')
	}
	st.out = append(st.out, `"_e2atap":{`...)
	if in != nil {
		st.out = append(st.out, `"tap":"`...)
		st.out = appendEscaped(st.out, []byte(in.Tap))
		st.out = append(st.out, '"')
		if in.Dir != 0 && int(in.Dir) < len(dirNames) {
			st.out = append(st.out, `,"direction":"`...)
			st.out = append(st.out, dirNames[in.Dir]...)
			st.out = append(st.out, '"')
		}
		if !in.Time.IsZero() {
			st.out = append(st.out, `,"time":"`...)
			st.out = in.Time.UTC().AppendFormat(st.out, time.RFC3339Nano)
			st.out = append(st.out, '"')
		}
		st.out = append(st.out, `,"source":"`...)
		st.source(in)
		st.out = append(st.out, '"')
		if in.Conn != "" {
			st.out = append(st.out, `,"conn":"`...)
			st.redactText([]byte(in.Conn), true)
			st.out = append(st.out, '"')
		}
		if src, off, ok := in.ResumePoint(); ok {
			// What recognises the record when the tap reads it again after
			// a crash (validate.ReadLoggedAt).
			st.out = append(st.out, `,"at":{"src":"`...)
			st.redactText([]byte(src), true)
			st.out = append(st.out, `","off":`...)
			st.out = strconv.AppendInt(st.out, off, 10)
			st.out = append(st.out, `,"len":`...)
			st.out = strconv.AppendInt(st.out, int64(len(data)), 10)
			st.out = append(st.out, '}')
		}
	} else {
		st.out = append(st.out, `"tap":""`...)
	}
	st.out = append(st.out, `,"kind":"`...)
	st.out = appendEscaped(st.out, []byte(ri.Kind))
	st.out = append(st.out, '"')
	if ri.Frame != nil {
		st.out = append(st.out, `,"format":"frame"`...)
	}
	if len(st.pathEnds) > 0 {
		st.out = append(st.out, `,"redacted":`...)
		st.out = st.appendPaths(st.out)
		if st.more > 0 {
			st.out = append(st.out, `,"redacted_more":`...)
			st.out = strconv.AppendInt(st.out, int64(st.more), 10)
		}
	}
	if st.trunc {
		st.out = append(st.out, `,"truncated":true`...)
	}
	if invalid {
		st.out = append(st.out, `,"invalid":true,"length":`...)
		st.out = strconv.AppendInt(st.out, int64(len(data)), 10)
		st.out = append(st.out, `,"reason":"`...)
		st.out = append(st.out, reason...)
		st.out = append(st.out, `","proto":"`...)
		st.out = append(st.out, ri.Protocol...)
		st.out = append(st.out, '"')
	}
	if in != nil && in.FromLog {
		// What the replay needs for e2a.secret, which reads the values the
		// redaction masks: the hit's kind and path (never the value).
		st.out = append(st.out, `,"from_log":true`...)
		if ri.JSON != nil && !invalid {
			// The engine's own test: a record its scan found free of
			// anything e2a.secret reports is not walked again (the walk
			// was a tenth of the record log's cost on clean traffic).
			var path, kind string
			var found bool
			if !ri.SecretFree || in.Logged != nil {
				path, kind, found = in.Secret()
			}
			split := in.Logged != nil && in.Logged.SecretSplit
			if !found && ri.SplitSecret != "" {
				path, kind, found, split = "body.delta", ri.SplitSecret, true, true
			}
			if found {
				st.out = append(st.out, `,"secret":{"kind":"`...)
				st.out = appendEscaped(st.out, []byte(kind))
				st.out = append(st.out, `","path":"`...)
				st.redactText([]byte(path), true) // a key may be personal data
				st.out = append(st.out, '"')
				if split {
					st.out = append(st.out, `,"split":true`...)
				}
				st.out = append(st.out, '}')
			}
		}
	}
	if in != nil && in.Gap {
		st.out = append(st.out, `,"gap":true`...)
	}
	if in != nil && in.Joined {
		st.out = append(st.out, `,"joined":true`...)
	}
	st.out = append(st.out, "}}\n"...)
}

// FindingWriter is the findings log: one finding per line in the RULES.md
// format {rule, severity, stream, source, message, tap, time}. It is a
// validate.Sink that only uses Finding; safe for concurrent use. The stream
// key, source and message are passed through the Redactor's text masking
// (credentials and personal data, with fingerprints) as a second line of
// defence: the validator's messages do not echo values.
type FindingWriter struct {
	red *Redactor
	out *output
}

var _ validate.Sink = (*FindingWriter)(nil)

// NewFindingWriter appends findings to path ("-": standard output), never
// rotated. Pass the record Writer's Redactor so that fingerprints join.
func NewFindingWriter(path string, r *Redactor) (*FindingWriter, error) {
	out, err := openOutput(path, 0, 0)
	if err != nil {
		return nil, err
	}
	return &FindingWriter{red: r, out: out}, nil
}

// NewFindingWriterTo writes findings to w.
func NewFindingWriterTo(w io.Writer, r *Redactor) *FindingWriter {
	return &FindingWriter{red: r, out: writerOutput(w)}
}

// Finding writes one finding line.
func (fw *FindingWriter) Finding(f *validate.Finding) {
	st := fw.red.get()
	st.out = st.line[:0]
	field := func(name, v string, redact bool) {
		st.out = append(st.out, `,"`...)
		st.out = append(st.out, name...)
		st.out = append(st.out, `":"`...)
		if redact {
			b := []byte(v)
			if u, ok := st.unescapedShape(b); ok {
				b = u // a stream id that spells a shape with \u00XX escapes
			}
			st.redactText(b, true)
		} else {
			st.out = appendEscaped(st.out, []byte(v))
		}
		st.out = append(st.out, '"')
	}
	st.out = append(st.out, `{"rule":"`...)
	st.out = appendEscaped(st.out, []byte(f.Rule))
	st.out = append(st.out, '"')
	field("severity", f.Severity.String(), false)
	field("stream", f.Stream, true)
	text, num := f.SourceParts()
	field("source", text, true)
	st.out = append(st.out[:len(st.out)-1], num...) // (digits: no escape)
	st.out = append(st.out, '"')
	field("message", f.Message, true)
	if f.Tap != "" {
		field("tap", f.Tap, false)
	}
	if !f.Time.IsZero() {
		st.out = append(st.out, `,"time":"`...)
		st.out = f.Time.UTC().AppendFormat(st.out, time.RFC3339Nano)
		st.out = append(st.out, '"')
	}
	st.out = append(st.out, "}\n"...)
	st.line = st.out
	fw.out.write(st.line)
	fw.red.put(st)
}

// Record does nothing.
func (fw *FindingWriter) Record(*validate.RecordInfo) {}

// StreamStart does nothing.
func (fw *FindingWriter) StreamStart(*validate.StreamInfo) {}

// StreamEnd does nothing.
func (fw *FindingWriter) StreamEnd(*validate.StreamInfo) {}

// Err is the first write or close error, if any.
func (fw *FindingWriter) Err() error { return fw.out.firstErr() }

// Lines and Failed count the lines written and the lines lost to a failed
// write (a full disk, a closed pipe).
func (fw *FindingWriter) Lines() uint64  { return fw.out.lines.Load() }
func (fw *FindingWriter) Failed() uint64 { return fw.out.failed.Load() }

// Flush writes buffered lines out.
func (fw *FindingWriter) Flush() error { return fw.out.flush() }

// Sync writes buffered findings out and fsyncs the file.
func (fw *FindingWriter) Sync() error { return fw.out.sync() }

// Close flushes and closes the file.
func (fw *FindingWriter) Close() error { return fw.out.close() }

// Cut is how many bytes of a torn last line were cut at open.
func (fw *FindingWriter) Cut() int64 { return fw.out.cut.Load() }

// source appends in's source (Input.Source) to st.out as JSON string
// content, masks applied. The source is the same record after record but
// for its number (a line, an offset, a sequence): the text before the
// number is redacted, and when it needed no mask it is remembered
// (st.sources) and appended escaped without the detectors' look; the
// number, digits only, is appended as it is. (Redacted with the text
// before it, a line number of eleven digits could be masked as a phone
// number, and each record's source was searched whole: a sixth of the
// record log's CPU on e2atap gen's records.)
func (st *state) source(in *validate.Input) {
	st.src = in.AppendSource(st.src[:0])
	text := st.src[:len(st.src)-in.Pos.NumberLen(st.src)]
	remember := len(text) <= memoMaxLen
	if remember {
		if st.sources == nil {
			st.sources = newMemo()
		} else if _, ok := st.sources.get(text); ok {
			st.out = appendEscaped(st.out, text)
			st.out = append(st.out, st.src[len(text):]...)
			return
		}
	}
	if !st.redactText(text, true) && remember {
		st.sources.put(text, 1)
	}
	st.out = append(st.out, st.src[len(text):]...)
}
