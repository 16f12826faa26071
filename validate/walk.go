package validate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/e2atap/e2atap/frame"
)

// A walk is how a sharded run reads a file it can map: every shard walks
// the whole mapping itself, from its own goroutine, finds each record's
// stream key and judges only the records of the partitions it owns. Nothing
// is handed from one core to another (no queue, no copy, no batch): what a
// shard spends on a record it does not own is finding where the record ends
// and routing it (quickRoute; for a frame its header and stream key), which
// is the whole price of the second core.
//
// Every shard sees every record at the same place in the same order, so
// each makes the decisions a reader handing records over would have made
// for it, and the verdicts are those of one shard (partition.go): a record
// goes to the owner of its key's partition, one without a key or that
// cannot be read to the shard that owns partitionOf(nil), the same one for
// every shard; a chat.interrupt is judged by its owner and cancels the
// streams of its session on every other shard right there, between the
// same two records (with the barriers of an ordered run around it). Lines,
// indices and offsets are counted by every shard alike.
//
// Inputs that cannot be mapped (standard input, pipes, gzip, small files)
// and the live path keep the reader and its hand-off; a run of one shard
// keeps the inline reader.

// bufferedLine is the line length past which the bufio reader of readJSONL
// collects a line in pieces (its buffer size): a walk keeps the same rules
// for such lines, so that both read a file into the same records.
const bufferedLine = 256 << 10

type walkJob struct {
	s      *Sharded
	name   string
	opts   ReadOptions
	frames bool
	// ordered: a sink depends on the order of calls across shards (not
	// Unordered): every shard waits for the others around an interrupt.
	ordered bool
	bar     walkBarrier
	leash   walkLeash
}

type walkResult struct {
	last uint64
	end  int64 // the file offset read up to
	err  error
}

// walkBarrier lets the shards of a walk meet: wait returns once every
// shard still walking has called it; a shard that stops early leaves, so
// that the others do not wait for it.
type walkBarrier struct {
	mu      sync.Mutex
	cond    sync.Cond
	n, here int
	gen     uint64
}

func (b *walkBarrier) init(n int) {
	b.n = n
	b.cond.L = &b.mu
}

func (b *walkBarrier) wait() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.here++
	if b.here >= b.n {
		b.here = 0
		b.gen++
		b.cond.Broadcast()
		return
	}
	for g := b.gen; g == b.gen; {
		b.cond.Wait()
	}
}

func (b *walkBarrier) leave() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.here > 0 && b.here >= b.n {
		b.here = 0
		b.gen++
		b.cond.Broadcast()
	}
}

// walkLeash keeps the shards of a walk within leashBytes of each other in
// the file, so that what the first one read is still in the shared cache
// when the others read it: a file larger than the cache is then read from
// memory once, not once per shard. A shard that is ahead waits (blocked,
// not spinning) until the last is within half the leash. Work is spread
// evenly over the shards (assignEven), so they seldom wait.
type walkLeash struct {
	mu      sync.Mutex
	cond    sync.Cond
	pos     []int64 // by shard; math.MaxInt64 once it is done
	waiting atomic.Int32
}

const leashBytes = 4 << 20

func (l *walkLeash) init(n int, pos int64) {
	l.cond.L = &l.mu
	l.pos = make([]int64, n)
	for k := range l.pos {
		l.pos[k] = pos
	}
}

// at says shard k is at file offset pos, and waits while it is too far
// ahead of the last.
func (l *walkLeash) at(k int, pos int64) {
	l.mu.Lock()
	l.pos[k] = pos
	last := slices.Min(l.pos)
	if l.waiting.Load() > 0 {
		l.cond.Broadcast()
	}
	if pos-last > leashBytes {
		l.waiting.Add(1)
		for pos-slices.Min(l.pos) > leashBytes/2 {
			l.cond.Wait()
		}
		l.waiting.Add(-1)
	}
	l.mu.Unlock()
}

func (l *walkLeash) done(k int) {
	l.mu.Lock()
	l.pos[k] = math.MaxInt64
	l.cond.Broadcast()
	l.mu.Unlock()
}

// walks says whether s reads a mapped file by a walk.
func (s *Sharded) walks() bool { return len(s.shards) > 1 && !s.closed && !s.noWalk }

// walkMapped reads the file of m from pos (records of the kind frames says)
// by a walk. ok is false when the file could not be mapped once more for
// every shard: nothing was read then, and m is as it was.
func (s *Sharded) walkMapped(file *os.File, m *mappedFile, pos int64, frames bool, name string, opts ReadOptions) (last uint64, err error, ok bool) {
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
	j := &walkJob{s: s, name: name, opts: opts, frames: frames, ordered: !s.unordered}
	j.bar.init(len(s.shards))
	j.leash.init(len(s.shards), pos)
	for _, sh := range s.shards {
		sh.walked.Store(opts.Index)
	}
	s.walking.Store(true)
	s.walkedFiles++
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
	w := &walker{j: j, k: k, s: j.s, me: j.s.shards[k], m: m, pos: pos, idx: j.opts.Index}
	defer j.bar.leave()
	defer j.leash.done(k)
	defer func() { w.me.walked.Store(w.idx) }()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			res.err = fmt.Errorf("%s: the file shrank while it was read (%v)", j.name, r)
		}
		res.last, res.end = w.idx, w.pos
	}()
	if j.frames {
		res.err = w.frames()
	} else {
		res.err = w.lines()
	}
	return res
}

// walker is one shard's walk.
type walker struct {
	j     *walkJob
	k     int
	s     *Sharded
	me    *shard
	m     *mappedFile
	pos   int64 // file offset of the next record
	idx   uint64
	line  int64
	pub   uint64 // idx when walked was last stored
	route router
	in    Input
	frm   frame.Frame
	scan  []byte
}

// published stores the walker's progress for Watermark every 256 records,
// and keeps it on the leash.
func (w *walker) published() {
	if w.idx-w.pub >= 256 {
		w.pub = w.idx
		w.me.walked.Store(w.idx)
		w.j.leash.at(w.k, w.pos)
	}
}

// remap maps the window holding pos; grew says it reaches further than
// the one before.
func (w *walker) remap() (grew bool, err error) {
	end := w.m.at + int64(len(w.m.win))
	if err := w.m.remap(w.pos); err != nil {
		return false, err
	}
	return w.m.at+int64(len(w.m.win)) > end, nil
}

// lines walks JSON lines, with readJSONL's rules: every line counts,
// an empty one is no record, one of blanks is a record not judged, one
// over MaxLineBytes is an e2a.decode.
func (w *walker) lines() error {
	limit := w.j.opts.MaxLineBytes
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
			// (walks need a window of more): skipped, its head judged.
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
		w.published()
	}
}

// giant skips a line that does not end within a window: an e2a.decode
// naming its head, as readJSONL reports a line over the limit.
func (w *walker) giant() error {
	off := int(w.pos - w.m.at)
	head := lineHead(w.m.win[off:])
	owner := w.decodeOwner(head)
	if owner == w.me {
		head = bytes.Clone(head) // the window moves on
	}
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
	if owner == w.me {
		in := Input{Pos: Position{Kind: PosLine, Name: w.j.name, Line: w.line}, Index: w.idx, FromLog: w.j.opts.FromLog, Data: head}
		w.me.eng.DecodeError(&in, ProtoE2A, fmt.Sprintf("line of %d bytes is over the %d-byte limit", n, w.j.opts.MaxLineBytes))
	}
	w.published()
	return nil
}

// decodeOwner is the shard of an undecodable JSON message (Sharded.DecodeError).
func (w *walker) decodeOwner(head []byte) *shard {
	var key []byte
	key, w.scan = headKey(lineHead(head), &w.route.head, w.scan)
	return w.s.owner[partitionOf(key, w.s.parts)]
}

func (w *walker) decodeError(head []byte, content int) {
	if w.decodeOwner(head) != w.me {
		return
	}
	in := Input{Pos: Position{Kind: PosLine, Name: w.j.name, Line: w.line}, Index: w.idx, FromLog: w.j.opts.FromLog, Data: head}
	w.me.eng.DecodeError(&in, ProtoE2A, fmt.Sprintf("line of %d bytes is over the %d-byte limit", content, w.j.opts.MaxLineBytes))
}

// observe is Sharded.Observe of one line, for this shard's part.
func (w *walker) observe(data []byte) {
	if isBlank(data) {
		return
	}
	s, e := w.s, w.me.eng
	in := &w.in
	*in = Input{Pos: Position{Kind: PosLine, Name: w.j.name, Line: w.line}, Index: w.idx, Data: data, FromLog: w.j.opts.FromLog}
	if data[0] == frame.Magic {
		f := &w.frm
		if _, err := frame.DecodeTo(f, data); err != nil {
			if s.shards[0] == w.me {
				e.Observe(in) // the engine reports it
			}
			return
		}
		key := routeFrame(f)
		p := partitionOf(key, s.parts)
		if s.owner[p] == w.me {
			e.hint = hintFor(key, data, p)
			e.ObserveFrame(in, f)
			e.hint = partHint{}
		}
		return
	}
	key, interrupt := w.route.routeJSON(data)
	p := partitionOf(key, s.parts)
	mine := s.owner[p] == w.me
	if !interrupt {
		if mine {
			e.hint = hintFor(key, data, p)
			e.Observe(in)
			e.hint = partHint{}
		}
		return
	}
	// A point of global order (Sharded.Observe): the owner judges it, every
	// other shard cancels its session's streams, all between the same two
	// records; an ordered run also waits for every shard around it.
	if w.j.ordered {
		w.j.bar.wait()
	}
	if mine {
		e.hint = hintFor(key, data, p)
		e.Observe(in)
		e.hint = partHint{}
	} else {
		e.cancelFrom(in)
	}
	if w.j.ordered {
		w.j.bar.wait()
	}
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

// walksLines says whether JSON lines starting with b (the start of a
// mapped file, to its end when eof) may be read by a walk: not gzip
// (a walk reads the bytes as they are), not a record log (a replay keeps
// state across streams: replay.go), and every line up to MaxLineBytes fits
// in one window.
func walksLines(b []byte, eof bool, limit int) bool {
	if limit > mapWindow-2-64<<10 {
		return false
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
