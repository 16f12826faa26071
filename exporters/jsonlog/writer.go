package jsonlog

import (
	"bufio"
	"errors"
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
type output struct {
	path   string // "" for an io.Writer
	rotate int64
	keep   int

	mu     sync.Mutex
	file   *os.File
	dst    io.Writer
	bw     *bufio.Writer
	size   int64
	err    error
	closed bool

	lines, failed atomic.Uint64
}

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
	return &output{dst: w, bw: bufio.NewWriterSize(w, 64<<10)}
}

func (o *output) open() error {
	f, err := os.OpenFile(o.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	o.file, o.size = f, fi.Size()
	if o.bw == nil {
		o.bw = bufio.NewWriterSize(f, 64<<10)
	} else {
		o.bw.Reset(f)
	}
	return nil
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
				return
			}
		}
		if o.rotate > 0 && o.size > 0 && o.size+int64(len(line)) > o.rotate {
			if err := o.rotateLocked(); err != nil {
				o.setErr(err)
				if o.file == nil {
					o.failed.Add(1)
					return
				}
			}
		}
	}
	n, err := o.bw.Write(line)
	o.size += int64(n)
	if err != nil {
		o.setErr(err)
		o.failed.Add(1)
		// bufio errors are sticky: start over on the same file.
		if o.file != nil {
			o.bw.Reset(o.file)
		}
		return
	}
	o.lines.Add(1)
}

// rotateLocked renames path.i to path.i+1 (the oldest falls off), path to
// path.1, and opens a new path.
func (o *output) rotateLocked() error {
	ferr := o.bw.Flush()
	cerr := o.file.Close()
	o.file = nil
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
	if o.closed || o.bw == nil {
		return nil
	}
	if err := o.bw.Flush(); err != nil {
		o.setErr(err)
		return err
	}
	return nil
}

func (o *output) close() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.closed = true
	var err error
	if o.bw != nil && (o.file != nil || o.path == "") {
		err = o.bw.Flush()
	}
	if o.file != nil {
		err = errors.Join(err, o.file.Close())
		o.file = nil
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

// Finding does nothing: findings go to a FindingWriter.
func (w *Writer) Finding(*validate.Finding) {}

// StreamStart does nothing.
func (w *Writer) StreamStart(*validate.StreamInfo) {}

// StreamEnd writes the stream's held chunk line (see carry.go).
func (w *Writer) StreamEnd(si *validate.StreamInfo) {
	if w.carry != nil {
		w.carry.end(w, si.Tap, si.Key)
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

// Close writes the held chunk lines, flushes and closes the file
// (standard output stays open).
func (w *Writer) Close() error {
	if w.carry != nil {
		w.carry.all(w)
	}
	return w.out.close()
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
		// Nothing of the content, not even the masks of a half-read record.
		st.reset()
		st.out = append(st.out, '{')
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
		st.redactText([]byte(in.Source()), true)
		st.out = append(st.out, '"')
		if in.Conn != "" {
			st.out = append(st.out, `,"conn":"`...)
			st.redactText([]byte(in.Conn), true)
			st.out = append(st.out, '"')
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
			if path, kind, found := in.Secret(); found {
				st.out = append(st.out, `,"secret":{"kind":"`...)
				st.out = appendEscaped(st.out, []byte(kind))
				st.out = append(st.out, `","path":"`...)
				st.redactText([]byte(path), true) // a key may be personal data
				st.out = append(st.out, `"}`...)
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
			st.redactText([]byte(v), true)
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
	field("source", f.Source, true)
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

// Flush writes buffered lines out.
func (fw *FindingWriter) Flush() error { return fw.out.flush() }

// Close flushes and closes the file.
func (fw *FindingWriter) Close() error { return fw.out.close() }
