package validate

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// A sharded run reads a file it can map (a regular file of 1 MiB or more)
// in place, without copying a record out of the page cache:
//
// Frames by a split (framesplit.go), or, for a run of more than
// maxSplitShards shards, by a walk: every shard walks the whole mapping,
// one mapping they all share (walkMap), from its own goroutine, and
// judges only the frames of the partitions it owns.
// Nothing is handed from one core to another (no queue, no copy, no batch):
// what a shard spends on a frame it does not own is its header and stream
// key (skimFrame) and the key's partition. A frame is small and cheap to
// judge, so a reader that decodes and routes every frame for the others
// would be busy for most of what they judge (the speed-up of a hand-off
// stopped near 1.2x); a walk divides the judging and repeats only the skim.
// (A reader that only skims and hands over where a frame lies, its layout
// and partition, did no better either: 2 shards ÷ 1 shard CPU 1.47-1.49x
// against 1.38-1.46x by walk, frames-5M, interleaved; the items cross
// cores, and so does every frame judged.) A shard judges a frame it owns
// as skimmed (frame.Frame.SetSkimmed), not decoded a second time.
// Every shard sees every frame at the same place in the same order, so the
// verdicts are those of one shard (partition.go): a frame goes to the owner
// of its key's partition, the undecodable tail to the shard that owns
// partitionOf(nil), as a reader would have handed them over.
//
// JSON lines by a split walk (splitwalk.go: read by pread(2), not
// mapped) when no sink depends on the order of calls across shards
// (Sharded.Unordered: offline findings): every shard reads and scans the
// next chunk and judges its own partitions' records of every chunk, so
// that the scan (the larger half of a record's CPU) is shared and nothing
// is routed or handed over. Else (a record log needs the hand-off's
// barriers at interrupts) by the reader's hand-off (Sharded.Observe), but
// in place: an
// item names the record in the reader's window (itemObserveWin) instead of
// carrying a copy, and the window stays mapped until every shard is done
// with it (held: walker.remap). Routing a record costs about a tenth of judging it,
// so routing every record once, on the reader, costs less CPU than a walk
// routing it on every shard (2 shards ÷ 1 shard, CPU, gen corpus, a loaded
// 2-core machine, interleaved: 1.16x by hand-off in place, 1.27x by walk,
// 1.19x by hand-off with copies).
//
// Inputs that cannot be mapped (standard input, pipes, gzip, small files)
// and the live path keep the reader and its hand-off with copies. A run of
// one inline shard (or an Engine) reads JSON lines by read(2) into one
// reused buffer (readLinesFile), in place only when its first line is
// longer than that buffer (readLinesInline).

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
	s      *Sharded
	name   string
	opts   ReadOptions
	shared *walkMap // a walk's mapping
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

// walkMapped reads the frames of m from pos by a walk: every shard walks
// m, the one mapping they share (walkMap).
func (s *Sharded) walkMapped(m *mappedFile, pos int64, name string, opts ReadOptions) (last uint64, err error) {
	// Everything handed over before (an earlier input) is judged first:
	// the shards are idle, and the walk owns their engines.
	s.barrier()
	if !s.assigned {
		s.assignEven()
	}
	j := &walkJob{s: s, name: name, opts: opts, shared: newWalkMap(m, len(s.shards))}
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
			res[k] = j.walk(k, pos)
		}()
	}
	res[0] = j.walk(0, pos)
	wg.Wait()
	last = opts.Index
	end := pos
	for k := len(res) - 1; k >= 0; k-- {
		r := res[k]
		last, end = max(last, r.last), max(end, r.end)
		if r.err != nil {
			err = r.err
		}
		s.shards[k].eng.hint = partHint{}
	}
	j.shared.close()
	m.close(end) // the file's offset is then past what was read
	s.added = last
	s.last.Store(last)
	s.walking.Store(false)
	return last, err
}

// A walkMap is the one mapping the walkers of a walk share. The kernel
// fills its page table once for all of them, and it is mapped and
// unmapped once: with a mapping of its own for every walker, the kernel
// filled one page table each, and their mmap, munmap and madvise calls
// contended for the one lock of the process's address space (2 shards on
// frames took 1.7x the CPU of one, wall 0.96x).
//
// Every walker sees the same bytes, so each asks for the next window at
// the same offset (remap). The first to ask maps it; the others find it
// mapped. Two windows are mapped at most, so that a walker may run up to
// a window ahead of the slowest (waiting for each other at every window
// cost 2 walkers 0.22 s of a 0.35 s walk of 1 GB of frames on a loaded
// machine, go tool trace); a window is unmapped once every walker has left
// it. A walker that stops early (a fault: the file shrank) leaves, and is
// then waited for no more. Within a window, whichever walker is ahead
// fills the page table a chunk at a time (ahead), and a chunk is given
// back (dropPassed) once every walker still walking has passed it.
type walkMap struct {
	mu      sync.Mutex
	turn    sync.Cond // a window was mapped or left
	wins    [2]*walkWin
	top     int    // the newest window's generation: wins[top%2]
	at      int64  // the file offset it was mapped at
	err     error  // its remap's
	gens    []int  // each walker's window (generation)
	left    []bool // a walker that left
	waiting int    // walkers waiting for a window to be left
}

// A walkWin is one window of a walkMap.
type walkWin struct {
	m    *mappedFile
	refs int // walkers in it
	// populated and dropped: the page table of win[:populated] is filled,
	// and win[:dropped] is given back (a multiple of dropChunk).
	populated atomic.Int64
	_         [56]byte
	dropped   atomic.Int64
	_         [56]byte
	passed    []walkPass // each walker's own dropped, on its own cache line
}

type walkPass struct {
	off atomic.Int64
	_   [56]byte
}

func newWalkMap(m *mappedFile, walkers int) *walkMap {
	wm := &walkMap{gens: make([]int, walkers), left: make([]bool, walkers)}
	wm.turn.L = &wm.mu
	for i, f := range []*mappedFile{m, m.spare()} {
		wm.wins[i] = &walkWin{m: f, passed: make([]walkPass, walkers)}
	}
	wm.wins[0].refs = walkers
	wm.wins[0].reset(wm.left)
	return wm
}

// reset readies a window just mapped: its walkers have passed nothing.
func (ww *walkWin) reset(left []bool) {
	ww.populated.Store(int64(ww.m.populated))
	ww.dropped.Store(0)
	for k := range ww.passed {
		v := int64(0)
		if left[k] {
			v = math.MaxInt64
		}
		ww.passed[k].off.Store(v)
	}
}

// window is walker k's window.
func (wm *walkMap) window(k int) *walkWin {
	wm.mu.Lock()
	defer wm.mu.Unlock()
	return wm.wins[wm.gens[k]%2]
}

// remap moves walker k from its window to the next, which holds file
// offset pos (the end of what k could read); the first walker there maps
// it, once every walker has left the window before. grew says it reaches
// further than the one k left.
func (wm *walkMap) remap(k int, pos int64) (ww *walkWin, grew bool, err error) {
	wm.mu.Lock()
	defer wm.mu.Unlock()
	g := wm.gens[k]
	cur := wm.wins[g%2]
	for wm.top == g {
		next := wm.wins[(g+1)%2]
		if next.refs > 0 {
			wm.waiting++
			wm.turn.Wait() // a walker still in the window before g
			wm.waiting--
			continue
		}
		wm.err = next.m.remap(pos)
		wm.top, wm.at = g+1, pos
		next.reset(wm.left)
		wm.turn.Broadcast()
	}
	if wm.at != pos {
		panic(fmt.Sprintf("validate: walker %d remaps at %d, another at %d", k, pos, wm.at))
	}
	next := wm.wins[(g+1)%2]
	next.refs++
	wm.gens[k] = g + 1
	wm.leaveWin(k, cur, g)
	end := cur.m.at + int64(len(cur.m.win))
	return next, wm.err == nil && next.m.at+int64(len(next.m.win)) > end, wm.err
}

// leaveWin has walker k leave window ww of generation g; wm.mu held. The
// last to leave a window that is not the newest unmaps it.
func (wm *walkMap) leaveWin(k int, ww *walkWin, g int) {
	ww.passed[k].off.Store(math.MaxInt64) // holds no chunk back
	if ww.refs--; ww.refs == 0 && g < wm.top {
		ww.m.unmap()
		wm.turn.Broadcast()
	}
}

// leave says walker k reads the mapping no more: it is not waited for,
// nor does it hold a chunk back.
func (wm *walkMap) leave(k int) {
	wm.mu.Lock()
	defer wm.mu.Unlock()
	wm.left[k] = true
	g := wm.gens[k]
	wm.leaveWin(k, wm.wins[g%2], g)
}

// close unmaps what is still mapped.
func (wm *walkMap) close() {
	for _, ww := range wm.wins[1:] {
		ww.m.unmap()
	}
}

// ahead fills the page table of the window's next chunk once a walker at
// win offset off is half a chunk from its filled end (mappedFile.ahead,
// for all walkers: the first to get there fills it).
func (ww *walkWin) ahead(off int) {
	p := ww.populated.Load()
	if int64(off+populateChunk/2) < p || !ww.m.cached || p >= int64(len(ww.m.win)) {
		return
	}
	end := min(int64(len(ww.m.win)), p+int64(populateChunk))
	if ww.populated.CompareAndSwap(p, end) {
		populate(ww.m.win[p:end])
	}
}

// dropPassed notes that walker k has passed win[:passed] and gives back
// every chunk all walkers have passed.
func (ww *walkWin) dropPassed(k, passed int) {
	ww.passed[k].off.Store(int64(passed))
	lo := int64(math.MaxInt64)
	for i := range ww.passed {
		lo = min(lo, ww.passed[i].off.Load())
	}
	for d := ww.dropped.Load(); d+int64(dropChunk) <= lo; d = ww.dropped.Load() {
		if ww.dropped.CompareAndSwap(d, d+int64(dropChunk)) {
			dropBehind(ww.m.win[d : d+int64(dropChunk)])
		}
	}
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
		// Before the windows go: the shards are done with them.
		if werr := s.SetWindow(nil); werr != nil && err == nil {
			err = shrank(werr)
		}
		s.tail = 0 // full batches for the next input
		w.release()
		m.close(w.pos)
		last = w.idx
	}()
	return w.idx, w.lines()
}

// readLinesInline reads the JSON lines of m from pos into h, a handler
// that judges each record before its call returns (an Engine, a run of one
// inline shard), in place in the mapping, with readJSONL's rules: for a
// file readLinesFile leaves (its first line is longer than its buffer). A file cut shorter while it is read faults on the
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

// walk is shard k's walk over the shared mapping from pos.
func (j *walkJob) walk(k int, pos int64) (res walkResult) {
	res.last, res.end = j.opts.Index, pos
	ww := j.shared.window(k)
	w := &walker{j: j, s: j.s, k: k, me: j.s.shards[k], m: ww.m, ww: ww, pos: pos, idx: j.opts.Index}
	defer func() { w.me.walked.Store(w.idx) }()
	defer j.shared.leave(k) // after the recovery below, which reads the window
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			switch {
			case mappingFault(r, w.m.win):
				res.err = fmt.Errorf("%s: the file shrank while it was read (%v)", j.name, r)
			case j.s.onPanic != nil:
				// A defect judging what this goroutine walked: the walk
				// stops with it (validate's status says so), the process
				// does not.
				res.err = &InternalError{Value: r, Stack: debug.Stack()}
			default:
				panic(r)
			}
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
	k    int      // a walk's walker: its index in j.shared
	ww   *walkWin // and its window, m its mapping
	m    *mappedFile
	pos  int64 // file offset of the next record
	idx  uint64
	line int64
	pub  uint64 // idx when walked was last stored
	// dropped: the window up to here is given back (dropBehind; in a
	// walk: passed, given back once every walker has: walkMap); marks: a
	// hand-off's index at the end of each chunk after it (giveBack).
	dropped int
	marks   []uint64
	// held: a hand-off's previous window, mapped until the watermark
	// passes heldIdx, the last record handed over in it (remap).
	held    []byte
	heldIdx uint64
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
// the one before.
//
// A hand-off's shards may still judge records of the old window: it stays
// mapped (held) while the reader goes on in the new one, and is unmapped
// once the watermark has passed the last record handed over in it
// (release). Waiting for the shards at every window instead drained the
// pipeline: the reader idle until they had judged everything, then they
// idle until it had handed over the next batch (12 % of the wall time on
// gen, 2 shards, go tool trace). Only a window held from before the last
// remap is waited for.
func (w *walker) remap() (grew bool, err error) {
	if w.j.opts.stopped() {
		return false, ErrStopped
	}
	if w.j.shared != nil {
		w.dropped = 0
		w.ww, grew, err = w.j.shared.remap(w.k, w.pos)
		w.m = w.ww.m
		return grew, err
	}
	end := w.m.at + int64(len(w.m.win))
	if w.hand != nil {
		if w.held != nil {
			w.hand.barrier()
			w.release()
		}
		if w.hand.faulted.Load() {
			return false, fmt.Errorf("%s: the file shrank while it was read (%v)", w.j.name, errWindowFault)
		}
		// A batch holds the records of one window (batch.win).
		w.hand.Flush()
		w.held, w.heldIdx = w.m.detach(), w.idx
	}
	if err := w.m.remap(w.pos); err != nil {
		return false, err
	}
	w.dropped, w.marks = 0, w.marks[:0]
	if w.hand != nil {
		w.hand.win = w.m.win
	}
	return w.m.at+int64(len(w.m.win)) > end, nil
}

// release unmaps the held window: the shards are done with it.
func (w *walker) release() {
	if w.held != nil {
		unmapWindow(w.held)
		w.held = nil
	}
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
			content := len(trimEOL(raw)) // without its CR LF, as a shorter line
			if content > limit {
				w.decodeError(lineHead(raw), content)
			} else {
				w.observe(trimEOL(raw))
			}
		} else if t := trimEOL(raw); len(t) > 0 {
			w.idx++
			if len(t) > limit {
				if rest, ok := stripOver(w.feed, t, limit); ok {
					w.observe(rest)
				} else {
					w.decodeError(lineHead(rest), len(rest))
				}
			} else {
				w.observe(t)
			}
		}
		w.pos += int64(n)
		if w.giveBack(off + n) {
			return ErrStopped
		}
	}
}

// giveBack gives back (dropBehind) the parts of a hand-off's window that
// every shard is done with: at each dropChunk of the window read, the
// index read so far is noted; once the watermark has passed it, the chunk
// before it is no longer read by anyone. An inline read is done with
// everything before off. At each chunk, it asks whether the read is to
// stop (ReadOptions.Stop): a window is too long to wait for.
func (w *walker) giveBack(off int) (stop bool) {
	w.m.ahead(off)
	if w.idx&63 != 0 {
		return false
	}
	if w.hand != nil && w.hand.tail == 0 {
		w.nearEnd()
	}
	if w.held != nil && w.hand.Watermark() >= w.heldIdx {
		w.release()
	}
	if w.hand == nil {
		if off-w.dropped >= dropChunk {
			dropBehind(w.m.win[w.dropped : w.dropped+dropChunk])
			w.dropped += dropChunk
			return w.j.opts.stopped()
		}
		return false
	}
	if off-w.dropped >= dropChunk*(len(w.marks)+1) {
		w.marks = append(w.marks, w.idx)
		stop = w.j.opts.stopped()
	}
	if len(w.marks) > 0 && w.hand.Watermark() >= w.marks[0] {
		dropBehind(w.m.win[w.dropped : w.dropped+dropChunk])
		w.dropped += dropChunk
		w.marks = w.marks[:copy(w.marks, w.marks[1:])]
	}
	return stop
}

// tailBytes is how near the end of a mapped file of JSON lines its reader
// hands records over in smaller batches (tailShift: shardBatchItems/8),
// and tailShift how much smaller.
// (A variable so that tests can have files cross it.)
var tailBytes int64 = 4 << 20

const tailShift = 3

// nearEnd has the hand-off's batches shrink once the reader is within
// tailBytes of the end of the file: a shard that is the slower one holds
// a full queue of batches (shardQueue of shardBatchItems records, some
// 9 ms of judging) when the reader is done, which the reader then waits
// for with its core idle (the reader's wait at its last SetWindow on
// gen-100M, 2 shards, go tool trace: 0.4 to 11 ms, median 3). Smaller
// batches throughout would cost a hand-over and a wake-up of the shard
// every few records; at the end the queue holds small ones.
func (w *walker) nearEnd() {
	if w.m.size-w.pos <= tailBytes {
		w.hand.tail = tailShift
	}
}

// giant skips a line that does not end within a window: an e2a.decode
// naming its head, as readJSONL reports a line over the limit.
func (w *walker) giant() error {
	off := int(w.pos - w.m.at)
	head := bytes.Clone(lineHead(w.m.win[off:])) // the window moves on
	n := int64(0)
	prev := byte(0) // the byte before win
	for {
		off := int(w.pos - w.m.at)
		win := w.m.win[off:]
		if nl := bytes.IndexByte(win, '\n'); nl >= 0 {
			w.pos += int64(nl + 1)
			n += int64(nl)
			if nl > 0 {
				prev = win[nl-1]
			}
			if prev == '\r' {
				n-- // the CR of its CR LF: not content (trimEOL)
			}
			break
		}
		if len(win) > 0 {
			prev = win[len(win)-1]
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
	lineOver(w.feed, &in, content, w.j.opts.MaxLineBytes)
}

// observe is observeLine's.
func (w *walker) observe(data []byte) {
	if isBlank(data) {
		return
	}
	if rest, ok := residue(data); ok {
		gapAll(w.feed)
		if data = rest; isBlank(data) {
			return
		}
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
		if size, attrs, key, ok := skimFrame(buf[off:]); ok {
			stuck = false
			w.idx++
			if p := partitionOf(key, s.parts); s.owner[p] == w.me {
				f.SetSkimmed(buf[off:], attrs, size) // decoded as skimmed
				in.Pos.Offset, in.Index, in.Data = w.pos, w.idx, buf[off:off+size]
				e.hint = hintFor(key, in.Data, p)
				e.ObserveFrame(in, f)
			}
			w.pos += int64(size)
			w.published()
			w.ww.ahead(off)
			if off-w.dropped >= dropChunk {
				w.dropped += dropChunk
				w.ww.dropPassed(w.k, w.dropped)
				if w.j.opts.stopped() {
					return ErrStopped // a window is too long to wait for
				}
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
		t := trimEOL(raw)
		if len(t) > limit {
			continue
		}
		if !isBlank(t) {
			return !isRecordLog(t)
		}
	}
	return true
}
