package validate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/e2atap/e2atap/frame"
)

// Handler takes records from a reader: an *Engine, or a *Sharded run.
type Handler interface {
	Observe(*Input)
	ObserveFrame(*Input, *frame.Frame)
	DecodeError(in *Input, proto, msg string)
}

var (
	_ Handler = (*Engine)(nil)
)

// Format of an input file.
type Format uint8

const (
	FormatAuto Format = iota
	FormatJSONL
	FormatFrames
)

// ParseFormat reads auto, jsonl or frames.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "auto", "":
		return FormatAuto, nil
	case "jsonl", "json":
		return FormatJSONL, nil
	case "frames", "frame":
		return FormatFrames, nil
	}
	return FormatAuto, fmt.Errorf("unknown format %q (want auto, jsonl or frames)", s)
}

// ReadOptions bound what a reader holds in memory.
type ReadOptions struct {
	// MaxLineBytes: a longer JSON line is one e2a.decode finding and is
	// skipped without being buffered.
	MaxLineBytes int
	// FromLog marks the records as read from a log (e2a.secret applies).
	FromLog bool
	// Index is the first Input.Index to use - 1 (records are numbered from
	// Index+1); the reader returns the last index it used.
	Index uint64
	// Replayed, if set, remembers the records of a replayed record log
	// across Reads, so that a record read again after a crash is judged
	// once also when the log was rotated in between (validate path.1,
	// then path). Nil: each Read remembers its own.
	Replayed *Replayed
	// Stop, if set, is asked where a reader refills its buffer, window or
	// chunk (never for each record), from the reader's goroutines, maybe
	// several at once: once it says true the read ends early with
	// ErrStopped (validate's SIGINT or SIGTERM). The records before that
	// point are judged, the rest of the input is not read, and no stream
	// is ended. Nil: the input is read to its end.
	Stop func() bool
}

// ErrStopped is Read's error when ReadOptions.Stop ended the read before
// the end of its input.
var ErrStopped = errors.New("read stopped before the end of the input")

// stopped says whether Stop asks the read to end.
func (o *ReadOptions) stopped() bool { return o.Stop != nil && o.Stop() }

// stopReader ends a read (ErrStopped) at the first refill after Stop.
type stopReader struct {
	r    io.Reader
	opts *ReadOptions
}

func (r stopReader) Read(p []byte) (int, error) {
	if r.opts.stopped() {
		return 0, ErrStopped
	}
	return r.r.Read(p)
}

// Replayed is what replays of record logs remember across files (the
// resume points seen: replay.go). The zero value is ready to use.
type Replayed struct{ seen replaySeen }

// maxFrameBuffer bounds how much a frame reader buffers for one frame.
const maxFrameBuffer = 32 << 20

// utf8BOM is the byte order mark some editors and Windows tools put at the
// start of a text file. Its first byte is also the frame magic.
const utf8BOM = "\xef\xbb\xbf"

// Read reads one input and feeds h. A gzip-compressed input (a rotated
// log, a saved capture) is read decompressed, whatever the format; lines
// and byte offsets are then those of the decompressed data. It sniffs the
// format when asked (FormatAuto): a first byte 0xEF means frames, anything
// else JSON lines; a UTF-8 byte order mark (EF BB BF: a frame would have
// version 0xBB) means JSON lines, and is skipped. The returned error is an
// I/O error (a corrupt gzip stream is one, and so is a file cut shorter
// while it is read); bad content becomes findings. A regular file (r an
// *os.File) is read for a handler that judges each record before its call
// returns (an Engine, one inline shard) by pread(2) into one reused buffer
// (readFramesFile, readLinesFile); for several shards, by a split
// (framesplit.go, splitwalk.go: each shard reads by pread(2) and skims or
// scans the chunks it takes, and judges its partitions' records of all),
// or through a mapping, without copying them out of the page cache (a
// record log's hand-off in place: walk.go); the data handlers see is valid
// only during the call, as always.
func Read(r io.Reader, name string, format Format, opts ReadOptions, h Handler) (last uint64, err error) {
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = 8 << 20
	}
	if opts.stopped() {
		return opts.Index, ErrStopped
	}
	if f, ok := r.(*os.File); ok {
		// A regular file is read by pread(2) into one reused buffer for a
		// handler that judges each record before the next is read; for
		// several shards by a split (framesplit.go, splitwalk.go), JSON
		// lines for an ordered sink through a mapping (no copy out of
		// the page cache) by a hand-off in place (walk.go); anything
		// else (gzip, a record log, a hand-off with copies) as before,
		// from where the file was.
		sh, _ := h.(*Sharded)
		walk := sh != nil && sh.walks()
		if _, wh := h.(windowed); (!wh || sh != nil && sh.inlineOne()) && format != FormatJSONL {
			if last, err, ok := readFramesFile(f, name, format, opts, h); ok {
				return last, err
			}
		}
		if walk && format != FormatJSONL {
			if last, err, ok := sh.readFramesSplit(f, name, format, opts); ok {
				return last, err
			}
		}
		if walk && format != FormatFrames {
			if last, err, ok := sh.readLinesSplit(f, name, format, opts); ok {
				return last, err
			}
		}
		if (sh == nil || sh.inlineOne()) && format != FormatFrames {
			if last, err, ok := readLinesFile(f, name, format, opts, h); ok {
				return last, err
			}
		}
		if m := openMapped(f); m != nil {
			pos := m.start
			b := m.win[min(int(pos-m.at), len(m.win)):]
			if format != FormatJSONL && len(b) > 0 && b[0] == frame.Magic && (format == FormatFrames || !bytes.HasPrefix(b, []byte(utf8BOM))) {
				if walk {
					return sh.walkMapped(m, pos, name, opts)
				}
				return readFramesMapped(m, pos, name, opts, h)
			}
			if walk && format != FormatFrames && mapsLines(b, m.eof(), opts.MaxLineBytes) {
				at := pos
				if bytes.HasPrefix(b, []byte(utf8BOM)) {
					at += int64(len(utf8BOM))
				}
				return sh.readLinesMapped(m, at, name, opts)
			}
			if (sh == nil || sh.inlineOne()) && format != FormatFrames && mapsLines(b, m.eof(), opts.MaxLineBytes) {
				at := pos
				if bytes.HasPrefix(b, []byte(utf8BOM)) {
					at += int64(len(utf8BOM))
				}
				return readLinesInline(m, at, name, opts, h)
			}
			m.close(pos)
		}
	}
	if opts.Stop != nil {
		r = stopReader{r, &opts}
	}
	br := bufio.NewReaderSize(r, 256<<10)
	if b, _ := br.Peek(2); len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return opts.Index, fmt.Errorf("%s: gzip: %w", name, err)
		}
		defer zr.Close()
		var dr io.Reader = zr
		if opts.Stop != nil {
			dr = stopReader{zr, &opts} // a refill of what it decompresses
		}
		br = bufio.NewReaderSize(dr, 256<<10)
	}
	if format != FormatFrames {
		b, err := br.Peek(len(utf8BOM))
		if err != nil && !errors.Is(err, io.EOF) {
			return opts.Index, err
		}
		switch {
		case string(b) == utf8BOM:
			_, _ = br.Discard(len(utf8BOM))
			format = FormatJSONL
		case format == FormatAuto && len(b) > 0 && b[0] == frame.Magic:
			format = FormatFrames
		default:
			format = FormatJSONL
		}
	}
	if format == FormatFrames {
		return readFrames(br, name, opts, h)
	}
	return readJSONL(br, name, opts, h)
}

func readJSONL(br *bufio.Reader, name string, opts ReadOptions, h Handler) (uint64, error) {
	idx := opts.Index
	in := new(Input) // one for the whole read: handlers do not keep it
	var line int64
	var long []byte
	// A file whose first record line is one of e2atap's record log is
	// replayed (replay.go); decided once, so plain input pays nothing.
	replay, decided := false, false
	seen := &replaySeen{}
	if opts.Replayed != nil {
		seen = &opts.Replayed.seen
	}
	observe := func(line int64, idx uint64, data []byte) {
		if !decided && !isBlank(data) {
			replay, decided = isRecordLog(data), true
		}
		if replay {
			replayLine(h, in, seen, name, line, idx, data)
			return
		}
		observeLine(h, in, name, line, idx, data, opts.FromLog)
	}
	for {
		b, err := br.ReadSlice('\n')
		if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
			// A line the read failed in (an I/O error, validate
			// interrupted) did not end there: not judged as one, the
			// cut record would be an e2a.decode that no producer wrote.
			return idx, err
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the reader's buffer: collect it up to the
			// limit, then discard the rest.
			long = append(long[:0], b...)
			n := len(b)
			cr := false // the line's last byte was a CR
			for errors.Is(err, bufio.ErrBufferFull) {
				if len(b) > 0 {
					cr = b[len(b)-1] == '\r'
				}
				b, err = br.ReadSlice('\n')
				n += len(b)
				if len(long)+len(b) <= opts.MaxLineBytes+2 { // content, CR, LF
					long = append(long, b...)
				}
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return idx, err // cut, as above
			}
			line++
			idx++
			content := n
			if err == nil {
				// The newline, and a CR before it (trimEOL): a CRLF
				// line is as long as its LF twin.
				content--
				if len(b) >= 2 {
					cr = b[len(b)-2] == '\r'
				}
				if cr {
					content--
				}
			}
			if content > opts.MaxLineBytes {
				in := Input{Pos: Position{Kind: PosLine, Name: name, Line: line}, Index: idx, FromLog: opts.FromLog, Data: lineHead(long)}
				lineOver(h, &in, content, opts.MaxLineBytes)
			} else {
				observe(line, idx, trimEOL(long))
			}
			long = long[:0]
		} else if len(b) > 0 {
			line++
			if t := trimEOL(b); len(t) > 0 {
				idx++
				if len(t) > opts.MaxLineBytes {
					if rest, ok := stripOver(h, t, opts.MaxLineBytes); ok {
						observe(line, idx, rest)
					} else {
						in := Input{Pos: Position{Kind: PosLine, Name: name, Line: line}, Index: idx, FromLog: opts.FromLog, Data: lineHead(rest)}
						lineOver(h, &in, len(rest), opts.MaxLineBytes)
					}
				} else {
					observe(line, idx, t)
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return idx, nil
			}
			return idx, err
		}
	}
}

// MaxHeadBytes is how much of an oversize line is handed over with its
// e2a.decode, as a live tap that skips the line does: enough to name its
// stream, which is then gapped.
const MaxHeadBytes = 64 << 10

func lineHead(b []byte) []byte { return b[:min(len(b), MaxHeadBytes)] }

func observeLine(h Handler, in *Input, name string, line int64, idx uint64, data []byte, fromLog bool) {
	if isBlank(data) {
		return
	}
	if rest, ok := residue(data); ok {
		gapAll(h)
		if data = rest; isBlank(data) {
			return
		}
	}
	*in = Input{Pos: Position{Kind: PosLine, Name: name, Line: line}, Index: idx, Data: data, FromLog: fromLog}
	h.Observe(in)
}

// residue finds a log writer's crash residue in t, a line that is not a
// frame's: NUL bytes, which JSON never holds raw. A writer that crashed
// leaves its lost writes as a run of NULs and appends after them on its
// restart; the logdir tap drops the line up to its last NUL as a loss of
// the whole tap (every open stream gapped, no finding) and reads the rest
// as the line (tap/logdir: Losses). A reader of the same file does the
// same (gapAll, then the rest), so that validate gives the live verdicts
// rather than an e2a.decode and the false sequence findings of the
// records the crash lost. It returns the rest and true, or t and false:
// one IndexByte for a line with no NUL.
func residue(t []byte) ([]byte, bool) {
	i := bytes.IndexByte(t, 0)
	if i < 0 || t[0] == frame.Magic {
		return t, false
	}
	return t[i+1+bytes.LastIndexByte(t[i+1:], 0)+1:], true
}

// gapAll is the loss of a crash residue: every open stream of h.
func gapAll(h Handler) {
	if g, ok := h.(allGapper); ok {
		g.GapAll()
	}
}

// stripOver is residue for a line over the limit, t, read whole (one of
// up to bufferedLine bytes): the logdir tap strips a crash residue from a
// line it holds whole before it applies its limit, so the limit applies
// to the rest. ok says the rest is within it (a line to judge); else it
// is over (rest is t when t holds no residue).
func stripOver(h Handler, t []byte, limit int) (rest []byte, ok bool) {
	rest, res := residue(t)
	if !res {
		return t, false
	}
	gapAll(h)
	return rest, len(rest) <= limit
}

// lineOver reports a line over the limit (in.Data its head) as an
// e2a.decode, or, when its head holds a NUL (a crash residue longer than
// a line: the logdir tap drops it whole, and the line after the NULs with
// it), as the loss of one.
func lineOver(h Handler, in *Input, content, limit int) {
	if in.Data[0] != frame.Magic && bytes.IndexByte(in.Data, 0) >= 0 {
		gapAll(h)
		return
	}
	h.DecodeError(in, ProtoE2A, fmt.Sprintf("line of %d bytes is over the %d-byte limit", content, limit))
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
	}
	return b
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// frameBuf is what a frame reader holds of its input: buf, whose first
// byte is at file offset base, read up to off; eof when buf reaches the end
// of the input. fill makes more bytes available after off (it may move
// buf, base and off) or returns an I/O error.
type frameBuf struct {
	buf  []byte
	base int64
	off  int
	eof  bool
	fill func(*frameBuf) error
	m    *mappedFile // the mapping buf is a window of, or nil
}

// compact moves what is left to decode to the front of buf.
func (s *frameBuf) compact() {
	if s.off > 0 {
		n := copy(s.buf, s.buf[s.off:])
		s.buf = s.buf[:n]
		s.base += int64(s.off)
		s.off = 0
	}
}

// readFrames decodes concatenated frames; it stops at the first frame it
// cannot decode (frame.decode names the byte offset).
func readFrames(br *bufio.Reader, name string, opts ReadOptions, h Handler) (uint64, error) {
	s := &frameBuf{buf: make([]byte, 0, 1<<20)}
	s.fill = func(s *frameBuf) error {
		s.compact()
		if len(s.buf) == cap(s.buf) {
			nb := make([]byte, len(s.buf), 2*cap(s.buf))
			copy(nb, s.buf)
			s.buf = nb
		}
		n, err := br.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if errors.Is(err, io.EOF) {
			s.eof = true
			return nil
		}
		return err
	}
	return decodeFrames(s, name, opts, h)
}

// regularAt is where f, a regular file with something left to read, is
// read from and its size now; there is false for anything else.
func regularAt(f *os.File) (pos, size int64, there bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0, 0, false
	}
	if pos, err = f.Seek(0, io.SeekCurrent); err != nil || pos >= st.Size() {
		return 0, 0, false
	}
	return pos, st.Size(), true
}

// frameReadBuf is the buffer a frame file is read into (it
// grows for a larger frame, up to maxFrameBuffer, and shrinks back): it
// stays in the CPU's L2 cache between the kernel's copy and the decoding.
const frameReadBuf = 256 << 10

// readFramesFile reads the frames of f, a regular file, from its offset
// into one reused buffer by pread(2) (a raw one for what the page cache
// holds: fileReader), for a handler that judges each frame before its
// call returns (an Engine, a run of one inline shard): ok is
// false when f is not a regular file that holds frames there (format and
// the first byte decide, as for a mapping), and nothing was read then.
//
// Not through a mapping: filling its page table (or faulting it in) cost
// more system time than the kernel's copy into a buffer that stays cached
// (a cached file of 5 M 200-byte frames: 0.07-0.10 s against 0.04 s), and
// a mapping's window (64 MiB) counted in the RSS where the buffer is 256
// KiB. The file is read up to the size it had when the read started, and
// the offset is left past what was decoded, as a mapped read does; a file
// cut shorter while it is read is an I/O error (the file shrank).
func readFramesFile(f *os.File, name string, format Format, opts ReadOptions, h Handler) (last uint64, err error, ok bool) {
	pos, size, there := regularAt(f)
	if !there {
		return 0, nil, false
	}
	var head [len(utf8BOM)]byte
	n, _ := f.ReadAt(head[:min(int64(len(head)), size-pos)], pos)
	if n == 0 || head[0] != frame.Magic || format != FormatFrames && bytes.HasPrefix(head[:n], []byte(utf8BOM)) {
		return 0, nil, false
	}
	// The file's offset stays where it was until the read ends (the
	// deferred Seek): everything is read at an offset (fileReader).
	rd := newFileReader(f)
	left := size - pos
	s := &frameBuf{buf: make([]byte, 0, frameReadBuf), base: pos}
	prefault(s.buf[:frameReadBuf]) // the first read writes all of it
	s.fill = func(s *frameBuf) error {
		s.compact()
		switch {
		case len(s.buf) == cap(s.buf):
			nb := make([]byte, len(s.buf), 2*cap(s.buf))
			copy(nb, s.buf)
			s.buf = nb
		case cap(s.buf) > frameReadBuf && len(s.buf) <= frameReadBuf/2:
			// A large frame has passed: give its buffer back.
			nb := make([]byte, len(s.buf), frameReadBuf)
			copy(nb, s.buf)
			s.buf = nb
		}
		n, err := rd.read(s.buf[len(s.buf):cap(s.buf)][:min(int64(cap(s.buf)-len(s.buf)), left)], s.base+int64(len(s.buf)))
		s.buf = s.buf[:len(s.buf)+n]
		left -= int64(n)
		switch {
		case left == 0:
			s.eof = true
			return nil
		case errors.Is(err, io.EOF):
			return fmt.Errorf("%s: the file shrank while it was read (%d bytes short)", name, left)
		}
		return err
	}
	if err := s.fill(s); err != nil {
		return opts.Index, err, true
	}
	defer func() {
		_, _ = f.Seek(s.base+int64(s.off), io.SeekStart)
	}()
	last, err = decodeFrames(s, name, opts, h)
	return last, err, true
}

// readFramesMapped is readFrames on a mapped file: no copy out of the page
// cache. A file cut shorter while it is read faults on the lost pages;
// that is an I/O error, as a failed read(2) would be.
//
// A handler that can judge frames in place in the mapping (a windowed
// Handler: a Sharded run) is told each window and, before it is unmapped,
// waited for.
func readFramesMapped(m *mappedFile, pos int64, name string, opts ReadOptions, h Handler) (last uint64, err error) {
	s := &frameBuf{buf: m.win, base: m.at, off: int(pos - m.at), eof: m.eof(), m: m}
	wh, _ := h.(windowed)
	shrank := func(why any) error { return fmt.Errorf("%s: the file shrank while it was read (%v)", name, why) }
	s.fill = func(s *frameBuf) error {
		if wh != nil {
			if err := wh.SetWindow(nil); err != nil {
				return shrank(err)
			}
		}
		if err := m.remap(s.base + int64(s.off)); err != nil {
			return err
		}
		s.off = int(s.base + int64(s.off) - m.at)
		s.buf, s.base, s.eof = m.win, m.at, m.eof()
		if wh != nil {
			_ = wh.SetWindow(m.win) // nothing was handed over since the last call
		}
		return nil
	}
	if wh != nil {
		if err := wh.SetWindow(m.win); err != nil {
			return opts.Index, shrank(err) // an earlier file's
		}
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !mappingFault(r, m.win) {
				panic(r)
			}
			err = shrank(r)
			last = opts.Index
		}
		if wh != nil {
			// Before the window goes: the shards are done with it.
			if werr := wh.SetWindow(nil); werr != nil && err == nil {
				err = shrank(werr)
			}
		}
		m.close(s.base + int64(s.off))
	}()
	return decodeFrames(s, name, opts, h)
}

// inlineEngine is the engine of a run of one inline shard, which judges
// what it is handed on the caller's goroutine (Sharded.ObserveFrame's
// first case), or nil (s nil too).
func (s *Sharded) inlineEngine() *Engine {
	if s == nil || !s.inline || len(s.shards) != 1 {
		return nil
	}
	return s.shards[0].eng
}

// judgedRead is judged(in, false) for a reader's input idx (an Index set,
// nothing charged), small enough to be inlined.
func (s *Sharded) judgedRead(idx uint64) {
	s.done, s.added = idx, idx
	if idx&255 == 0 {
		s.last.Store(idx)
	}
}

// A windowed Handler judges frames in place in a reader's mapping
// (Sharded.SetWindow).
type windowed interface {
	SetWindow(win []byte) error
}

func decodeFrames(s *frameBuf, name string, opts ReadOptions, h Handler) (uint64, error) {
	idx := opts.Index
	// One Input and one Frame for the whole read: handlers neither keep
	// nor change them, so only what differs is set for each frame.
	in := &Input{Pos: Position{Kind: PosByte, Name: name}}
	f := new(frame.Frame)
	var dec frame.Decoder // the layout of the frames read
	// A run of one inline shard (validate --shards 1) judges each frame
	// on its engine straight away: no call through the Handler and the
	// Sharded for each one.
	sh, _ := h.(*Sharded)
	eng := sh.inlineEngine()
	fill := func() error {
		if opts.stopped() {
			return ErrStopped
		}
		return s.fill(s)
	}
	for {
		if s.off == len(s.buf) {
			if s.eof {
				return idx, nil
			}
			if err := fill(); err != nil {
				return idx, err
			}
			continue
		}
		if !dec.TryDecodeTo(f, s.buf[s.off:]) {
			if !s.eof && len(s.buf)-s.off < maxFrameBuffer {
				// Maybe only part of the frame is here: no error built.
				if err := fill(); err != nil {
					return idx, err
				}
				continue
			}
			_, err := frame.DecodeTo(f, s.buf[s.off:])
			idx++
			at := s.base + int64(s.off)
			in := Input{Pos: Position{Kind: PosByte, Name: name, Offset: at}, Index: idx}
			var de *frame.DecodeError
			msg := err.Error()
			if errors.As(err, &de) {
				msg = fmt.Sprintf("%s at byte %d", de.Reason, at+int64(de.Offset))
			}
			h.DecodeError(&in, ProtoEventMesh, msg)
			return idx, nil
		}
		idx++
		in.Pos.Offset, in.Index, in.Data = s.base+int64(s.off), idx, s.buf[s.off:s.off+f.Size]
		if eng != nil {
			eng.ObserveFrame(in, f)
			sh.judgedRead(idx)
		} else {
			h.ObserveFrame(in, f)
		}
		s.off += f.Size
		if s.m != nil {
			s.m.ahead(s.off)
		}
	}
}
