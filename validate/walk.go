package validate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// A sharded run reads a file it can map (a regular file of 1 MiB or more)
// in place, without copying a record out of the page cache:
//
// Frames by a walk: every shard walks the whole mapping itself, from its
// own goroutine, and judges only the frames of the partitions it owns.
// Nothing is handed from one core to another (no queue, no copy, no batch):
// what a shard spends on a frame it does not own is its header and stream
// key (skimFrame) and the key's partition. A frame is small and cheap to
// judge, so a reader that decodes and routes every frame for the others
// would be busy for most of what they judge (the speed-up of a hand-off
// stopped near 1.2x); a walk divides the judging and repeats only the skim.
// Every shard sees every frame at the same place in the same order, so the
// verdicts are those of one shard (partition.go): a frame goes to the owner
// of its key's partition, the undecodable tail to the shard that owns
// partitionOf(nil), as a reader would have handed them over.
//
// JSON lines by the reader's hand-off (Sharded.Observe), but in place: an
// item names the record in the reader's window (itemObserveWin) instead of
// carrying a copy, and the window stays mapped until every shard is done
// with it (SetWindow). Routing a record costs about a tenth of judging it,
// so routing every record once, on the reader, costs less CPU than a walk
// routing it on every shard (2 shards ÷ 1 shard, CPU, gen corpus, a loaded
// 2-core machine, interleaved: 1.16x by hand-off in place, 1.27x by walk,
// 1.19x by hand-off with copies).
//
// Inputs that cannot be mapped (standard input, pipes, gzip, small files)
// and the live path keep the reader and its hand-off with copies. A run of
// one inline shard (or an Engine) reads JSON lines in place too, each
// judged before the next is read (readLinesInline).

// bufferedLine is the line length past which the bufio reader of readJSONL
// collects a line in pieces (its buffer size): a mapped read keeps the
// same rules for such lines, so that both read a file into the same
// records.
const bufferedLine = 256 << 10

// dropChunk is how much of a window a mapped read gives back at once
// (dropBehind: a walk behind itself, a hand-off behind the watermark), so
// that the process holds about one window's pages, not one per shard; a
// multiple of any page size, a variable for tests.
var dropChunk = 2 << 20

type walkJob struct {
	s    *Sharded
	name string
	opts ReadOptions
}

type walkResult struct {
	last uint64
	end  int64 // the file offset read up to
	err  error
}

// walks says whether s reads a mapped file in place: by a walk for frames,
// by a hand-off in place for JSON lines.
func (s *Sharded) walks() bool { return len(s.shards) > 1 && !s.closed && !s.noWalk }

// inlineOne says whether s is a run of one inline shard: every record is
// judged before its call returns (readLinesInline).
func (s *Sharded) inlineOne() bool { return len(s.shards) == 1 && s.inline && !s.closed }

// walkMapped reads the frames of m from pos by a walk. ok is false when the
// file could not be mapped once more for every shard: nothing was read
// then, and m is as it was.
func (s *Sharded) walkMapped(file *os.File, m *mappedFile, pos int64, name string, opts ReadOptions) (last uint64, err error, ok bool) {
	maps := []*mappedFile{m}
	for len(maps) < len(s.shards) {
		o := openMapped(file)
		if o == nil || o.size != m.size {
			if o != nil {
				o.close(pos)
			}
			for _, o := range maps[1:] {
				o.close(pos)
			}
			return opts.Index, nil, false
		}
		maps = append(maps, o)
	}
	// Everything handed over before (an earlier input) is judged first:
	// the shards are idle, and the walk owns their engines.
	s.barrier()
	if !s.assigned {
		s.assignEven()
	}
	j := &walkJob{s: s, name: name, opts: opts}
	for _, sh := range s.shards {
		sh.walked.Store(opts.Index)
	}
	s.walking.Store(true)
	s.mappedReads++
	res := make([]walkResult, len(s.shards))
	var wg sync.WaitGroup
	for k := 1; k < len(s.shards); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[k] = j.walk(k, maps[k], pos)
		}()
	}
	res[0] = j.walk(0, maps[0], pos)
	wg.Wait()
	last = opts.Index
	end := pos
	for k := len(res) - 1; k >= 0; k-- {
		r := res[k]
		last, end = max(last, r.last), max(end, r.end)
		if r.err != nil {
			err = r.err
		}
		if k > 0 {
			maps[k].close(r.end)
		}
		s.shards[k].eng.hint = partHint{}
	}
	m.close(end) // last: the file's offset is then past what was read
	s.added = last
	s.last.Store(last)
	s.walking.Store(false)
	return last, err, true
}

// readLinesMapped reads the JSON lines of m from pos as a reader handing
// records over to s's shards (Sharded.Observe), in place in the mapping:
// no copy of a record, the routing done once.
func (s *Sharded) readLinesMapped(m *mappedFile, pos int64, name string, opts ReadOptions) (last uint64, err error) {
	j := &walkJob{s: s, name: name, opts: opts}
	w := &walker{j: j, s: s, feed: s, hand: s, me: s.shards[0], m: m, pos: pos, idx: opts.Index}
	shrank := func(why any) error { return fmt.Errorf("%s: the file shrank while it was read (%v)", name, why) }
	if err := s.SetWindow(m.win); err != nil {
		return opts.Index, shrank(err) // an earlier file's
	}
	s.mappedReads++
	if !s.assigned {
		s.assignShare(readerShare[2])
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !mappingFault(r, m.win) {
				panic(r)
			}
			err = shrank(r)
		}
		// Before the window goes: the shards are done with it.
		if werr := s.SetWindow(nil); werr != nil && err == nil {
			err = shrank(werr)
		}
		m.close(w.pos)
		last = w.idx
	}()
	return w.idx, w.lines()
}

// readLinesInline reads the JSON lines of m from pos into h, a handler
// that judges each record before its call returns (an Engine, a run of one
// inline shard), in place in the mapping: what read(2) would copy out of
// the page cache into the reader's buffer is judged where it lies, with
// readJSONL's rules. A file cut shorter while it is read faults on the
// lost pages: an I/O error, as a failed read(2) would be.
func readLinesInline(m *mappedFile, pos int64, name string, opts ReadOptions, h Handler) (last uint64, err error) {
	w := &walker{j: &walkJob{name: name, opts: opts}, feed: h, m: m, pos: pos, idx: opts.Index}
	if s, ok := h.(*Sharded); ok {
		s.mappedReads++
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !mappingFault(r, m.win) {
				panic(r)
			}
			err = fmt.Errorf("%s: the file shrank while it was read (%v)", name, r)
		}
		m.close(w.pos)
		last = w.idx
	}()
	return w.idx, w.lines()
}

// mappingFault says whether r, a value a read through a mapping recovered
// from a panic, is a fault on a page of its window win (the file shrank:
// an I/O error). Any other fault (a nil pointer, a bug) goes on panicking.
func mappingFault(r any, win []byte) bool {
	f, ok := r.(interface{ Addr() uintptr })
	if !ok || len(win) == 0 {
		return false
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(win)))
	return f.Addr() >= lo && f.Addr()-lo < uintptr(len(win))
}

// assignEven sets owner round robin: in a walk every shard reads and
// routes every record, so each owns the same share.
func (s *Sharded) assignEven() {
	s.assigned = true
	for p := range s.owner {
		s.owner[p] = s.shards[p%len(s.shards)]
	}
}

// walk is shard k's walk over its mapping m from pos.
func (j *walkJob) walk(k int, m *mappedFile, pos int64) (res walkResult) {
	res.last, res.end = j.opts.Index, pos
	w := &walker{j: j, s: j.s, me: j.s.shards[k], m: m, pos: pos, idx: j.opts.Index}
	defer func() { w.me.walked.Store(w.idx) }()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !mappingFault(r, m.win) {
				panic(r)
			}
			res.err = fmt.Errorf("%s: the file shrank while it was read (%v)", j.name, r)
		}
		res.last, res.end = w.idx, w.pos
	}()
	res.err = w.frames()
	return res
}

// walker reads a mapping: one shard's walk over frames, or the reader of
// JSON lines (feed).
type walker struct {
	j *walkJob
	s *Sharded
	// feed: the walker reads JSON lines (lines) and hands every record to
	// feed: a hand-off's Sharded (hand, the same), which judges them on
	// its shards in place in the window, or a handler that judges each
	// before its call returns (readLinesInline; hand nil).
	feed Handler
	hand *Sharded
	me   *shard
	m    *mappedFile
	pos  int64 // file offset of the next record
	idx  uint64
	line int64
	pub  uint64 // idx when walked was last stored
	// dropped: the window up to here is given back (dropBehind); marks:
	// a hand-off's index at the end of each chunk after it (giveBack).
	dropped int
	marks   []uint64
	in      Input
	frm     frame.Frame
}

// published stores a walk's progress for Watermark every 256 records.
func (w *walker) published() {
	if w.idx-w.pub >= 256 {
		w.pub = w.idx
		w.me.walked.Store(w.idx)
	}
}

// remap maps the window holding pos; grew says it reaches further than
// the one before. A hand-off's shards are first done with the old window.
func (w *walker) remap() (grew bool, err error) {
	end := w.m.at + int64(len(w.m.win))
	if w.hand != nil {
		if err := w.hand.SetWindow(nil); err != nil {
			return false, fmt.Errorf("%s: the file shrank while it was read (%v)", w.j.name, err)
		}
	}
	if err := w.m.remap(w.pos); err != nil {
		return false, err
	}
	w.dropped, w.marks = 0, w.marks[:0]
	if w.hand != nil {
		_ = w.hand.SetWindow(w.m.win) // nothing was handed over since the last call
	}
	return w.m.at+int64(len(w.m.win)) > end, nil
}

// lines reads JSON lines and hands them over, with readJSONL's rules: every line counts,
// an empty one is no record, one of blanks is a record not judged, one
// over MaxLineBytes is an e2a.decode.
func (w *walker) lines() error {
	limit := w.j.opts.MaxLineBytes
	// What every record's Input shares, set once: observe sets the rest (a
	// handler neither keeps nor changes an Input it was handed).
	w.in = Input{Pos: Position{Kind: PosLine, Name: w.j.name}, FromLog: w.j.opts.FromLog}
	for {
		off := int(w.pos - w.m.at)
		win := w.m.win
		if off >= len(win) {
			if w.m.eof() {
				return nil
			}
			if _, err := w.remap(); err != nil {
				return err
			}
			continue
		}
		nl := bytes.IndexByte(win[off:], '\n')
		if nl < 0 && !w.m.eof() {
			grew, err := w.remap()
			if err != nil {
				return err
			}
			if grew {
				continue
			}
			// A line longer than a window, so longer than MaxLineBytes
			// (mapsLines wants a window of more): skipped, its head
			// judged.
			if err := w.giant(); err != nil {
				return err
			}
			continue
		}
		raw := win[off:]
		if nl >= 0 {
			raw = win[off : off+nl+1]
		}
		w.line++
		n := len(raw)
		if n > bufferedLine || (nl < 0 && n >= bufferedLine) {
			w.idx++
			content := n
			if nl >= 0 {
				content--
			}
			if content > limit {
				w.decodeError(lineHead(raw), content)
			} else {
				w.observe(trimEOL(raw))
			}
		} else if t := trimEOL(raw); len(t) > 0 {
			w.idx++
			if len(t) > limit {
				w.decodeError(lineHead(t), len(t))
			} else {
				w.observe(t)
			}
		}
		w.pos += int64(n)
		w.giveBack(off + n)
	}
}

// giveBack gives back (dropBehind) the parts of a hand-off's window that
// every shard is done with: at each dropChunk of the window read, the
// index read so far is noted; once the watermark has passed it, the chunk
// before it is no longer read by anyone. An inline read is done with
// everything before off.
func (w *walker) giveBack(off int) {
	w.m.ahead(off)
	if w.idx&63 != 0 {
		return
	}
	if w.hand == nil {
		if off-w.dropped >= dropChunk {
			dropBehind(w.m.win[w.dropped : w.dropped+dropChunk])
			w.dropped += dropChunk
		}
		return
	}
	if off-w.dropped >= dropChunk*(len(w.marks)+1) {
		w.marks = append(w.marks, w.idx)
	}
	if len(w.marks) > 0 && w.hand.Watermark() >= w.marks[0] {
		dropBehind(w.m.win[w.dropped : w.dropped+dropChunk])
		w.dropped += dropChunk
		w.marks = w.marks[:copy(w.marks, w.marks[1:])]
	}
}

// giant skips a line that does not end within a window: an e2a.decode
// naming its head, as readJSONL reports a line over the limit.
func (w *walker) giant() error {
	off := int(w.pos - w.m.at)
	head := bytes.Clone(lineHead(w.m.win[off:])) // the window moves on
	n := int64(0)
	for {
		off := int(w.pos - w.m.at)
		win := w.m.win[off:]
		if nl := bytes.IndexByte(win, '\n'); nl >= 0 {
			w.pos += int64(nl + 1)
			n += int64(nl)
			break
		}
		w.pos += int64(len(win))
		n += int64(len(win))
		if w.m.eof() {
			break
		}
		if _, err := w.remap(); err != nil {
			return err
		}
	}
	w.line++
	w.idx++
	w.decodeError(head, int(n))
	return nil
}

func (w *walker) decodeError(head []byte, content int) {
	in := Input{Pos: Position{Kind: PosLine, Name: w.j.name, Line: w.line}, Index: w.idx, FromLog: w.j.opts.FromLog, Data: head}
	w.feed.DecodeError(&in, ProtoE2A, fmt.Sprintf("line of %d bytes is over the %d-byte limit", content, w.j.opts.MaxLineBytes))
}

// observe is observeLine's.
func (w *walker) observe(data []byte) {
	if isBlank(data) {
		return
	}
	in := &w.in
	in.Pos.Line, in.Index, in.Data = w.line, w.idx, data
	w.feed.Observe(in)
}

// frames walks concatenated frames, with decodeFrames' rules: it stops at
// the first frame it cannot decode, a frame.decode.
func (w *walker) frames() error {
	s, e := w.s, w.me.eng
	in := &w.in
	*in = Input{Pos: Position{Kind: PosByte, Name: w.j.name}}
	f := &w.frm
	stuck := false // the window cannot grow: what is left is all there is
	for {
		off := int(w.pos - w.m.at)
		buf := w.m.win
		eof := w.m.eof()
		if off >= len(buf) {
			if eof {
				return nil
			}
			if _, err := w.remap(); err != nil {
				return err
			}
			continue
		}
		// Most frames are another shard's: their header and stream key
		// are all this one reads of them.
		if size, key, ok := skimFrame(buf[off:]); ok {
			stuck = false
			w.idx++
			if p := partitionOf(key, s.parts); s.owner[p] == w.me {
				if _, err := frame.DecodeTo(f, buf[off:]); err != nil {
					panic("validate: skimFrame accepted a frame DecodeTo rejects: " + err.Error())
				}
				in.Pos.Offset, in.Index, in.Data = w.pos, w.idx, buf[off:off+size]
				e.hint = hintFor(key, in.Data, p)
				e.ObserveFrame(in, f)
			}
			w.pos += int64(size)
			w.published()
			w.m.ahead(off)
			if off-w.dropped >= dropChunk {
				// Each shard maps the file for itself: without this, a walk
				// of n shards would hold n windows in its RSS.
				dropBehind(buf[w.dropped : w.dropped+dropChunk])
				w.dropped += dropChunk
			}
			continue
		}
		_, err := frame.DecodeTo(f, buf[off:])
		if err == nil {
			panic("validate: DecodeTo accepted a frame skimFrame rejects")
		}
		if !eof && !stuck && len(buf)-off < maxFrameBuffer {
			grew, err := w.remap()
			if err != nil {
				return err
			}
			stuck = !grew
			continue
		}
		w.idx++
		at := w.pos
		msg := err.Error()
		var de *frame.DecodeError
		if errors.As(err, &de) {
			msg = fmt.Sprintf("%s at byte %d", de.Reason, at+int64(de.Offset))
		}
		if s.owner[partitionOf(nil, s.parts)] == w.me {
			in := Input{Pos: Position{Kind: PosByte, Name: w.j.name, Offset: at}, Index: w.idx}
			e.DecodeError(&in, ProtoEventMesh, msg)
		}
		return nil
	}
}

// mapsLines says whether JSON lines starting with b (the first window of
// a mapped file, to its end when eof) may be read in place: not gzip
// (the mapping holds the bytes as they are), not a record log (a replay keeps
// state across streams: replay.go), and every line up to MaxLineBytes fits
// in one window.
func mapsLines(b []byte, eof bool, limit int) bool {
	if !eof && limit > len(b)-2-64<<10 {
		return false // a line within the limit might not fit in a window
	}
	if len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b {
		return false
	}
	b = bytes.TrimPrefix(b, []byte(utf8BOM))
	// readJSONL decides at its first judged line that is not blank.
	for len(b) > 0 {
		nl := bytes.IndexByte(b, '\n')
		if nl < 0 && !eof {
			return false // undecided within the window: read as before
		}
		raw := b
		if nl >= 0 {
			raw = b[:nl+1]
		}
		b = b[len(raw):]
		n := len(raw)
		t := trimEOL(raw)
		if n > bufferedLine || (nl < 0 && n >= bufferedLine) {
			if content := n - min(1, nl+1); content > limit {
				continue
			}
		} else if len(t) > limit {
			continue
		}
		if !isBlank(t) {
			return !isRecordLog(t)
		}
	}
	return true
}
