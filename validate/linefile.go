package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/e2atap/e2atap/frame"
)

// lineReadBuf is the size of the buffer a JSON-lines file is read into for
// a handler that judges each record before its call returns (the frame
// reader's size, frameReadBuf, for the same reason: it stays in the L2
// cache between the kernel's copy and the scan).
// A variable so that tests can cut every line.
var lineReadBuf = 256 << 10

// lineDecide is how much of a file readLinesFile reads to decide whether
// to take it (readJSONL's decision: a record log or not): its first read.
const lineDecide = 256 << 10

// readLinesFile reads the JSON lines of f, a regular file, from its offset
// into one reused buffer by pread(2) (a raw one for what the page cache
// holds: fileReader), for a handler that judges each record
// before its call returns (an Engine, a run of one inline shard), with
// readJSONL's rules (those of a mapped read: walker.lines). A line cut by
// the buffer's end is moved to its front and read on; a longer one grows
// the buffer up to MaxLineBytes (and shrinks it back once it has passed),
// past which it is one e2a.decode naming its head, the rest skipped
// unbuffered. ok is false when f does not hold such lines there (not a
// regular file, nothing left, gzip, frames, a record log, or a first line
// too long to tell), and nothing was read then: Read goes on as before.
//
// Not through a mapping: filling its page table ahead of the reader and
// giving it back behind (madvise) cost more than the kernel's copy into a
// buffer that stays cached, and a mapping's window counted in the RSS. The
// file is read up to the size it had when the read started, and the
// offset is left past what was read, as a mapped read does; a file cut
// shorter while it is read is an I/O error (the file shrank).
func readLinesFile(f *os.File, name string, format Format, opts ReadOptions, h Handler) (last uint64, err error, ok bool) {
	pos, size, there := regularAt(f)
	if !there {
		return 0, nil, false
	}
	limit := opts.MaxLineBytes
	buf := make([]byte, max(lineReadBuf, lineDecide))
	prefault(buf) // the first read writes all of it
	n, err := f.ReadAt(buf[:min(int64(len(buf)), size-pos)], pos)
	if n == 0 || err != nil && !errors.Is(err, io.EOF) {
		return 0, nil, false // read as before, which reports it
	}
	b := buf[:n]
	left := size - pos - int64(n)
	if format == FormatAuto && b[0] == frame.Magic && !bytes.HasPrefix(b, []byte(utf8BOM)) {
		return 0, nil, false
	}
	// mapsLines decides as readJSONL does (gzip, a record log), on what
	// this buffer holds; undecided within it, the file is read as before.
	if !mapsLines(b, true, limit) || left > 0 && !decidedIn(b, limit) {
		return 0, nil, false
	}
	// The file's offset stays where it was until the read ends (the
	// deferred Seek): everything is read at an offset (fileReader), the
	// next read at base+len(b).
	r := &lineFile{rd: newFileReader(f), buf: buf, b: b, base: pos, left: left, name: name, opts: opts, h: h, idx: opts.Index}
	skip := 0
	if bytes.HasPrefix(b, []byte(utf8BOM)) {
		skip = len(utf8BOM)
	}
	if len(buf) > lineReadBuf {
		// A test's small buffer: nothing of it read yet, the BOM skipped.
		r.buf, r.b, r.base, r.left = make([]byte, lineReadBuf), nil, pos+int64(skip), size-pos-int64(skip)
	} else {
		r.off = skip
	}
	if s, ok := h.(*Sharded); ok {
		s.mappedReads++
	}
	defer func() {
		_, _ = f.Seek(r.base+int64(r.off), io.SeekStart)
	}()
	err = r.lines()
	return r.idx, err, true
}

// decidedIn says whether b, the start of a JSON-lines input, holds a whole
// line that readJSONL would decide by (the first judged one that is not
// blank), or only lines it skips.
func decidedIn(b []byte, limit int) bool {
	b = bytes.TrimPrefix(b, []byte(utf8BOM))
	for {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 {
			return false
		}
		raw := b[:nl+1]
		b = b[nl+1:]
		n := len(raw)
		t := trimEOL(raw)
		if n > bufferedLine {
			if n-1 > limit {
				continue
			}
		} else if len(t) > limit {
			continue
		}
		if !isBlank(t) {
			return true
		}
	}
}

// lineFile is readLinesFile's reader: b (a prefix of buf) holds the file
// from offset base, read up to off; left is what is still to be read of
// the size the file had.
type lineFile struct {
	rd   *fileReader
	buf  []byte
	b    []byte
	base int64
	off  int
	left int64
	name string
	opts ReadOptions
	h    Handler
	idx  uint64
	line int64
	in   Input
}

func (r *lineFile) eof() bool { return r.left == 0 }

// fill moves what is left unread to the front of the buffer, grows it when
// that is all of it (up to want bytes), and reads more after it.
func (r *lineFile) fill(want int) error {
	if r.opts.stopped() {
		return ErrStopped
	}
	rest := len(r.b) - r.off
	switch {
	case rest == cap(r.buf):
		nb := make([]byte, min(2*cap(r.buf), max(want, lineReadBuf)))
		r.buf = nb[:copy(nb, r.b[r.off:])]
	case cap(r.buf) > lineReadBuf && rest <= lineReadBuf/2:
		// A long line has passed: give its buffer back.
		nb := make([]byte, lineReadBuf)
		r.buf = nb[:copy(nb, r.b[r.off:])]
	default:
		r.buf = r.buf[:copy(r.buf[:cap(r.buf)], r.b[r.off:])]
	}
	r.base += int64(r.off)
	r.off = 0
	r.b = r.buf[:rest]
	n, err := r.rd.read(r.buf[rest:cap(r.buf)][:min(int64(cap(r.buf)-rest), r.left)], r.base+int64(rest))
	r.b = r.buf[:rest+n]
	r.left -= int64(n)
	switch {
	case r.left == 0:
		return nil
	case n == 0 && (err == nil || errors.Is(err, io.EOF)):
		return fmt.Errorf("%s: the file shrank while it was read (%d bytes short)", r.name, r.left)
	case errors.Is(err, io.EOF):
		return nil
	}
	return err
}

// lines is walker.lines on the buffer.
func (r *lineFile) lines() error {
	limit := r.opts.MaxLineBytes
	// Room for the longest line judged whole (its content, CR and LF), and
	// for more than the head and the length at which readJSONL collects a
	// line in pieces: a line skipped unbuffered (giant) is then named and
	// counted as one skipped whole.
	want := max(limit+2, bufferedLine+1)
	r.in = Input{Pos: Position{Kind: PosLine, Name: r.name}, FromLog: r.opts.FromLog}
	poison := poisonOn()
	for {
		if r.off >= len(r.b) {
			if r.eof() {
				return nil
			}
			if err := r.fill(want); err != nil {
				return err
			}
			continue
		}
		nl := bytes.IndexByte(r.b[r.off:], '\n')
		if nl < 0 && !r.eof() {
			if rest := len(r.b) - r.off; rest == cap(r.buf) && rest >= want {
				// Longer than any line judged whole: skipped, its head
				// judged.
				if err := r.giant(); err != nil {
					return err
				}
				continue
			}
			if err := r.fill(want); err != nil {
				return err
			}
			continue
		}
		raw := r.b[r.off:]
		if nl >= 0 {
			raw = raw[:nl+1]
		}
		r.line++
		n := len(raw)
		if n > bufferedLine || (nl < 0 && n >= bufferedLine) {
			r.idx++
			content := len(trimEOL(raw)) // without its CR LF, as a shorter line
			if content > limit {
				r.decodeError(lineHead(raw), content)
			} else {
				r.observe(trimEOL(raw))
			}
		} else if t := trimEOL(raw); len(t) > 0 {
			r.idx++
			if len(t) > limit {
				if rest, ok := stripOver(r.h, t, limit); ok {
					r.observe(rest)
				} else {
					r.decodeError(lineHead(rest), len(rest))
				}
			} else {
				r.observe(t)
			}
		}
		if poison {
			poisonLine(raw)
		}
		r.off += n
	}
}

// poisonLine overwrites a line its handler is done with (the poison mode,
// PoisonEnv): a handler that kept a reference into the read buffer reads
// bytes no record has, and its verdicts differ.
func poisonLine(b []byte) {
	for i := range b {
		b[i] = 0xff
	}
}

// giant skips a line longer than the buffer can grow to: an e2a.decode
// naming its head, as walker.giant.
func (r *lineFile) giant() error {
	head := bytes.Clone(lineHead(r.b[r.off:])) // the buffer is read over
	n := int64(0)
	prev := byte(0) // the byte before b
	for {
		b := r.b[r.off:]
		if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
			r.off += nl + 1
			n += int64(nl)
			if nl > 0 {
				prev = b[nl-1]
			}
			if prev == '\r' {
				n-- // the CR of its CR LF: not content (trimEOL)
			}
			break
		}
		if len(b) > 0 {
			prev = b[len(b)-1]
		}
		r.off += len(b)
		n += int64(len(b))
		if r.eof() {
			break
		}
		if err := r.fill(0); err != nil {
			return err
		}
	}
	r.line++
	r.idx++
	r.decodeError(head, int(n))
	return nil
}

func (r *lineFile) decodeError(head []byte, content int) {
	in := Input{Pos: Position{Kind: PosLine, Name: r.name, Line: r.line}, Index: r.idx, FromLog: r.opts.FromLog, Data: head}
	lineOver(r.h, &in, content, r.opts.MaxLineBytes)
}

// observe is observeLine's.
func (r *lineFile) observe(data []byte) {
	if isBlank(data) {
		return
	}
	if rest, ok := residue(data); ok {
		gapAll(r.h)
		if data = rest; isBlank(data) {
			return
		}
	}
	in := &r.in
	in.Pos.Line, in.Index, in.Data = r.line, r.idx, data
	r.h.Observe(in)
}
