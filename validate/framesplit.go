package validate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// A sharded run reads a frame file by a split: the file is cut into
// chunks of splitChunk bytes, and each chunk is read (pread(2) into a
// buffer of its own, by fileReader) and skimmed by whichever shard takes it next (one
// whose core is shared with other processes takes fewer); every shard
// then judges the frames of the partitions it owns, chunk after chunk, in
// file order, wherever they were read (asking for its frames' cache
// lines a batch of frames ahead: they were read on another core, or long
// enough ago). What crosses cores is one list per chunk and shard (where
// each of its frames lies, its stream key's partition: chunkFrame), not a
// message per frame. What a split costs over one shard is the skim and
// the lists (skimFrame, the key's hash, the entry: some 20 ns a frame
// against a decode's 12) and the shards' waits; each engine holds half
// the streams, and judges a frame for less.
//
// Where a chunk's first frame starts is known for sure only once the
// chunk before is skimmed. Waiting for it made the skims a chain that
// passed from core to core at every chunk, and a core that sleeps wakes
// some 80 µs later here (a VM): the shards waited 30-50 ms of a 145 ms
// run. So a shard guesses: the first offset of its chunk from which the
// frames skim cleanly to the chunk's end (syncFrames). The guess is
// checked before anyone judges the chunk (verify: it must be where the
// chunk before ended); a wrong one (a frame's payload that holds frames)
// and a chunk with no clean run (an undecodable frame, one longer than
// what was read) are skimmed again from where the chunk before ended, as
// a reader would.
//
// Not by a walk of every shard over one mapping (walk.go), the way
// before: every shard skimmed every frame, and filling and dropping the
// mapping's page table from two threads of one process cost more system
// time than read(2) did (madvise and munmap took 58 ms of each walker's
// 150 ms on 1 M frames, go tool trace; 2 shards ÷ 1: wall 0.7x, CPU 1.6x).
//
// A second shard on 1 M frames of 200 B (perf cpu-clock, 4 runs of each,
// load 7-10 on 2 cores): 168 -> 257 ms of CPU a run; skimRun 17 (a
// quarter of it the store of a list entry, whose line the other core read
// last), skim 8, the key's hash 6, the judge's loop and prefetches 13,
// wake-ups 17 (pvm_irq_enable), polls 14. No chunk was skimmed twice
// (splitFixes 0: no syncFrames guess was wrong). 6 and 12 slots a shard
// cut the waits (some 600 a run -> 240 and 100) but cost 4 % and 21 % more
// CPU, chunks of 128 and 64 KiB 6 % and 14 % more (user+sys, 14-16
// interleaved rounds): the split's cost is in the caches more than in
// the waits.
//
// Every frame is judged as skimmed on the shard that owns its partition,
// in file order, with the index a reader would give it, and the
// undecodable tail goes to the owner of partitionOf(nil): the verdicts
// are one shard's (partition.go).

// splitChunk is how much of the file a shard of a split reads and skims
// at a time (a variable for tests): the splitSlots chunks a shard reads
// into stay in its core's L2 cache (1 MiB here) between the kernel's copy,
// the skim and the other shard's judge, as one reader's buffer does
// (frameReadBuf). On 1 M frames of 200 B, 2 shards, against 512 KiB:
// 600 fewer page faults (2650, buffers and lists) and 2-7 % less CPU
// (median of 14-16 interleaved runs, a loaded machine).
var splitChunk = 256 << 10

// splitSlots is how many chunks a split holds per shard: room for a
// shard to run ahead of the others while they judge.
const splitSlots = 3

// splitBatch is how many frames a shard asks the cache lines of at a
// time, a batch or two ahead of the one it judges.
const splitBatch = 8

// splitSlack is how much a shard reads past its chunk, for the frame that
// starts in it and ends after it: a few of the usual frames, so that the
// kernel copies little of the file twice (64 KiB was 12 % of every
// chunk); a larger frame there has more read for it (syncFrames, skim).
var splitSlack = 8 << 10

// maxSplitShards: a run of more shards walks the mapping instead (each
// shard of a split holds splitSlots chunks' buffers); a variable for
// tests.
var maxSplitShards = 16

// splitMinBytes: a smaller file is handed over as before (a split pays
// for its goroutines and buffers).
var splitMinBytes int64 = 1 << 20 // a variable for tests

// chunkFrame is a frame of a chunk that one shard judges: it lies at
// buf[off:off+size] of the chunk's slot, its attributes end at attrs
// (from its start), its index is the chunk's first index + ord.
type chunkFrame struct {
	off, size, attrs, ord uint32
	hint                  partHint
}

// chunkSlot holds one chunk at a time: chunk, chunk+len(slots), ...
type chunkSlot struct {
	chunk int // the chunk it holds (set with state)
	// state: slotFree, slotSkimmed (by its shard, from sync: a guess
	// unless the chunk is the first), slotVerified (sync is where the
	// chunk before ended: first and last are set), slotFixing (being
	// skimmed again).
	state int
	buf   []byte
	base  int64 // the file offset of buf[0]
	// sync is where its frames start (-1: no clean run found), end where
	// they end (where the next chunk's first one starts, or the
	// undecodable frame); count: its frames, the undecodable one
	// included; first the index before its first frame, last its last.
	sync, end   int64
	count       uint64
	first, last uint64
	lists       [][]chunkFrame // per shard, in file order
	stop        string         // the frame.decode message of the frame at end, or ""
	err         error          // reading it failed
	rd          *fileReader    // reads the file for it (the shard that holds it)
}

const (
	slotFree = iota
	slotSkimmed
	slotFixing
	slotVerified
)

type chunkSplit struct {
	s         *Sharded
	f         *os.File
	name      string
	opts      ReadOptions
	pos, size int64 // where the read starts, and the file's size then
	n         int
	ownerIdx  []int // partition → the index of its shard
	nilOwner  int   // the shard that judges the undecodable tail
	slots     []chunkSlot

	mu   sync.Mutex
	wake *spinWake // a chunk was skimmed or judged
	// final: the chunk the read ended at (EOF, an undecodable frame, an
	// I/O error: err), or -1; next: per shard, the first chunk it has not
	// judged yet.
	final int
	taken int // chunks taken by a shard to read and skim: [0, taken)
	// stopAt: the chunk the read stopped before (opts.Stop), or 0; the
	// read then ends at the chunk before it (final, ErrStopped).
	stopAt int
	err    error
	next   []int
	ins    []splitIn    // per shard: the Input and Frame it judges with
	read   atomic.Int64 // bytes read
}

type splitIn struct {
	in   Input
	f    frame.Frame
	skim frameSkim // the layout of the frames it skimmed last
	_    [64]byte
}

// readFramesSplit reads the frames of f, a regular file, from its offset
// by a split over s's shards; ok is false when f is not a regular file of
// frames of some size there (format and the first bytes decide, as for a
// mapping), or s has too many shards, and nothing was read then.
func (s *Sharded) readFramesSplit(f *os.File, name string, format Format, opts ReadOptions) (last uint64, err error, ok bool) {
	if len(s.shards) > maxSplitShards {
		return 0, nil, false
	}
	pos, size, there := regularAt(f)
	if !there || size-pos < splitMinBytes {
		return 0, nil, false
	}
	var head [len(utf8BOM)]byte
	n, _ := f.ReadAt(head[:], pos)
	if n == 0 || head[0] != frame.Magic || format != FormatFrames && bytes.HasPrefix(head[:n], []byte(utf8BOM)) {
		return 0, nil, false
	}
	// Everything handed over before (an earlier input) is judged first:
	// the shards are idle, and the split owns their engines.
	s.barrier()
	if !s.assigned {
		s.assignEven()
	}
	r := &chunkSplit{s: s, f: f, name: name, opts: opts, pos: pos, size: size, n: len(s.shards),
		final: -1, next: make([]int, len(s.shards)), ownerIdx: make([]int, len(s.owner)), wake: newSpinWake(len(s.shards))}
	for p, o := range s.owner {
		for k, sh := range s.shards {
			if sh == o {
				r.ownerIdx[p] = k
			}
		}
	}
	r.nilOwner = r.ownerIdx[partitionOf(nil, s.parts)]
	r.slots = make([]chunkSlot, splitSlots*r.n)
	for i := range r.slots {
		r.slots[i].lists = make([][]chunkFrame, r.n)
		r.slots[i].chunk = -1
		r.slots[i].rd = newFileReader(f)
	}
	r.ins = make([]splitIn, r.n)
	for k, sh := range s.shards {
		sh.walked.Store(opts.Index)
		r.ins[k].in = Input{Pos: Position{Kind: PosByte, Name: name}}
	}
	s.walking.Store(true)
	s.mappedReads++
	var wg sync.WaitGroup
	for k := 1; k < r.n; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.walk(k)
		}()
	}
	r.walk(0)
	wg.Wait()
	for _, sh := range s.shards {
		sh.eng.hint = partHint{}
	}
	fin := &r.slots[r.final%len(r.slots)]
	last, err = fin.last, r.err
	if _, serr := f.Seek(fin.end, io.SeekStart); serr != nil && err == nil {
		err = serr
	}
	s.added = last
	s.last.Store(last)
	s.walking.Store(false)
	s.splitBytes += r.read.Load()
	for i := range r.slots {
		s.splitRaws += r.slots[i].rd.raws
	}
	return last, err, true
}

// walk is shard k's part of the split: the chunks it takes read and
// skimmed, and every chunk's frames of its partitions judged.
func (r *chunkSplit) walk(k int) {
	for {
		// The next chunk no one has taken: a shard slowed down (its core
		// shared with other processes) reads and skims fewer.
		r.mu.Lock()
		c := r.taken
		start := r.pos + int64(c)*int64(splitChunk)
		if start >= r.size || r.final >= 0 && r.final < c {
			r.mu.Unlock()
			break
		}
		if c > 0 && r.opts.stopped() {
			r.stop(c)
			r.mu.Unlock()
			r.wake.notify(k)
			break
		}
		r.taken++
		r.mu.Unlock()
		sl := &r.slots[c%len(r.slots)]
		// The slot's chunk before (c - len(slots)) must be judged by all,
		// and the chunk after it too (verify reads where it ended): judge
		// meanwhile what is ready.
		over := false
		for {
			r.judgeReady(k)
			r.mu.Lock()
			over = r.final >= 0 && r.final < c
			if over || r.minNext() > c-len(r.slots)+1 {
				r.mu.Unlock()
				break
			}
			if !r.ready(r.next[k]) {
				r.wait(k)
			}
			r.mu.Unlock()
		}
		if over {
			break
		}
		err := sl.read(r, start, int(min(int64(splitChunk+splitSlack), r.size-start)))
		if err == nil {
			if c == 0 {
				err = r.skim(k, sl, start, r.pos)
			} else {
				r.syncFrames(k, sl, start)
			}
		}
		r.mu.Lock()
		sl.chunk, sl.state, sl.err = c, slotSkimmed, err
		r.mu.Unlock()
		r.wake.notify(k)
	}
	for {
		r.judgeReady(k)
		r.mu.Lock()
		if r.final >= 0 && r.next[k] > r.final {
			r.mu.Unlock()
			return
		}
		if !r.ready(r.next[k]) {
			r.wait(k)
		}
		r.mu.Unlock()
	}
}

// stop ends the read before chunk c, which no shard has taken (Stop):
// at c-1 once it is verified (at once if it is, else by verify); r.mu
// held.
func (r *chunkSplit) stop(c int) {
	if r.stopAt > 0 || r.final >= 0 {
		return
	}
	r.stopAt = c
	if sl := &r.slots[(c-1)%len(r.slots)]; sl.chunk == c-1 && sl.state == slotVerified {
		r.final, r.err = c-1, ErrStopped
	}
}

// wait has shard k wait for another to skim or judge a chunk; r.mu held
// (released while it waits).
func (r *chunkSplit) wait(k int) {
	gen := r.wake.seen() // what it has seen under r.mu
	r.mu.Unlock()
	r.wake.wait(k, gen)
	r.mu.Lock()
}

// ready says whether chunk d can be verified and judged; r.mu held.
func (r *chunkSplit) ready(d int) bool {
	sl := &r.slots[d%len(r.slots)]
	return sl.chunk == d && (sl.state == slotSkimmed || sl.state == slotVerified)
}

// minNext is the first chunk some shard has not judged; r.mu held.
func (r *chunkSplit) minNext() int {
	m := r.next[0]
	for _, c := range r.next[1:] {
		m = min(m, c)
	}
	return m
}

// judgeReady has shard k judge its frames of every chunk, in order, that
// is ready, verifying each first.
func (r *chunkSplit) judgeReady(k int) {
	for {
		r.mu.Lock()
		d := r.next[k]
		if r.final >= 0 && d > r.final || !r.ready(d) {
			r.mu.Unlock()
			return
		}
		sl := &r.slots[d%len(r.slots)]
		if sl.state == slotSkimmed {
			r.verify(k, sl, d) // unlocks and locks r.mu when it skims again
		}
		r.mu.Unlock()
		r.judge(k, sl)
		r.mu.Lock()
		r.next[k] = d + 1
		r.mu.Unlock()
		r.wake.notify(k)
	}
}

// verify checks that chunk d's frames start where chunk d-1's end (d-1
// is verified: judged already), and skims it again from there if not;
// r.mu held. It then sets the chunk's indices, and ends the read at d if
// the frames end there.
func (r *chunkSplit) verify(k int, sl *chunkSlot, d int) {
	from, first := r.pos, r.opts.Index
	if d > 0 {
		prev := &r.slots[(d-1)%len(r.slots)]
		from, first = prev.end, prev.last
	}
	if sl.err == nil && sl.sync != from {
		sl.state = slotFixing // no one else judges it meanwhile
		r.s.splitFixes++
		r.mu.Unlock()
		start := r.pos + int64(d)*int64(splitChunk)
		err := r.skim(k, sl, start, from)
		r.mu.Lock()
		sl.err = err
	}
	sl.state = slotVerified
	sl.first, sl.last = first, first+sl.count
	switch {
	case sl.err != nil:
		// Nothing of it is judged.
		for i := range sl.lists {
			sl.lists[i] = sl.lists[i][:0]
		}
		sl.end, sl.last, sl.stop = from, first, ""
		r.final, r.err = d, sl.err
	case sl.stop != "" || sl.end >= r.size:
		r.final = d
	case r.stopAt > 0 && d == r.stopAt-1:
		r.final, r.err = d, ErrStopped
	}
}

// read fills sl with want bytes of the file from start.
func (sl *chunkSlot) read(r *chunkSplit, start int64, want int) error {
	if cap(sl.buf) > 4*(splitChunk+splitSlack) {
		sl.buf = nil // a large frame has passed: give its buffer back
	}
	if cap(sl.buf) < want {
		sl.buf = make([]byte, max(want, splitChunk+splitSlack))
	}
	sl.base, sl.buf = start, sl.buf[:want]
	return r.readAt(sl.rd, sl.buf, start)
}

// grow reads more of the file into sl, so that it holds at least need
// bytes past the file offset at (or reaches the end of the file).
func (sl *chunkSlot) grow(r *chunkSplit, at int64, need int) error {
	end := min(r.size, at+int64(need))
	have := sl.base + int64(len(sl.buf))
	if end <= have {
		return nil
	}
	n := int(end - sl.base)
	if n > cap(sl.buf) {
		nb := make([]byte, len(sl.buf), max(n, 2*cap(sl.buf)))
		copy(nb, sl.buf)
		sl.buf = nb
	}
	sl.buf = sl.buf[:n]
	if err := r.readAt(sl.rd, sl.buf[have-sl.base:], have); err != nil {
		sl.buf = sl.buf[:have-sl.base] // nothing past what was read before
		return err
	}
	return nil
}

// readAt reads b whole from the file at off by rd: a short read is the
// file shrinking while it was read.
func (r *chunkSplit) readAt(rd *fileReader, b []byte, off int64) error {
	n := 0
	var err error
	for n < len(b) && err == nil {
		var m int
		m, err = rd.read(b[n:], off+int64(n))
		n += m
	}
	r.read.Add(int64(n))
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: the file shrank while it was read (%d bytes short)", r.name, len(b)-n)
	}
	return err
}

// syncTries is how many offsets syncFrames tries before it leaves the
// chunk to verify.
const syncTries = 16

// syncGrowMax is the most syncFrames reads past a chunk for a frame cut
// by the end of what was read (what every chunk read past its end before
// splitSlack was cut down).
const syncGrowMax = 64 << 10

// syncFrames skims the chunk at start (read into sl) from a guess: the
// first offset holding a frame header from which frames skim cleanly to
// the end of the chunk, within what was read. Without one, sync is -1.
func (r *chunkSplit) syncFrames(k int, sl *chunkSlot, start int64) {
	limit := min(r.size, start+int64(splitChunk))
	hdr := []byte{frame.Magic, frame.Version}
	sl.reset()
	o := 0
	for range syncTries {
		i := bytes.Index(sl.buf[o:int(limit-sl.base)], hdr)
		if i < 0 {
			break
		}
		o += i
		for {
			if r.skimRun(k, sl, start, sl.base+int64(o), false) {
				return
			}
			// The run stopped at sl.end: a frame cut by the end of what
			// was read (read more, run again), or no frame (the guess
			// was wrong).
			// A guess reads at most syncGrowMax past the chunk: a larger
			// frame there is left to verify, so that bytes which only look
			// like a large frame's start cost no more than that.
			e := int(sl.end - sl.base)
			most := splitChunk + syncGrowMax
			if sl.base+int64(len(sl.buf)) >= r.size || len(sl.buf) >= most || !frameCut(sl.buf[e:]) {
				break
			}
			if sl.grow(r, sl.end, min(max(2*(len(sl.buf)-e), splitSlack), most-e)) != nil {
				// verify skims it again, and meets the error.
				sl.reset()
				sl.sync = -1
				return
			}
		}
		o++
	}
	sl.reset()
	sl.sync = -1
}

// frameCut reports whether b is the start of a frame cut short: its
// header and length prefixes, as far as b holds them, are a frame's, and
// the frame ends past b.
func frameCut(b []byte) bool {
	n := len(b)
	if n < 2 || b[0] != frame.Magic || b[1] != frame.Version {
		return false
	}
	if n < frame.HeaderLen {
		return true
	}
	keyCount := int(binary.BigEndian.Uint16(b[8:10]))
	dataLen := int32(binary.BigEndian.Uint32(b[10:14]))
	if keyCount > frame.MaxAttributes || dataLen < 0 || dataLen > frame.MaxDataBytes {
		return false
	}
	p := frame.HeaderLen
	for range keyCount {
		if n-p < 6 {
			return true
		}
		nl := int(binary.BigEndian.Uint16(b[p:]))
		if nl > n-p-6 {
			return true
		}
		vl := int(int32(binary.BigEndian.Uint32(b[p+2+nl:])))
		if vl < 0 {
			return false
		}
		p += 6 + nl + vl
		if p > n {
			return true
		}
	}
	return int(dataLen) > n-p
}

// skim skims the chunk at start (read into sl) from from, where the
// chunk before ended, with decodeFrames' rules: it stops at the first
// frame it cannot decode, reading more of the file for a frame that ends
// past what was read.
func (r *chunkSplit) skim(k int, sl *chunkSlot, start, from int64) error {
	sl.reset()
	if from >= min(r.size, start+int64(splitChunk)) {
		// A frame of an earlier chunk covers this one.
		sl.sync, sl.end = from, from
		return nil
	}
	if from < sl.base || from >= sl.base+int64(len(sl.buf)) {
		panic(fmt.Sprintf("validate: a chunk read at %d starts at %d", sl.base, from))
	}
	for at := from; ; at = sl.end {
		if r.skimRun(k, sl, start, at, true) {
			return nil
		}
		o := int(sl.end - sl.base)
		if sl.base+int64(len(sl.buf)) < r.size && len(sl.buf)-o < maxFrameBuffer {
			// Maybe only part of the frame is here: read more, go on.
			if err := sl.grow(r, sl.end, max(2*(len(sl.buf)-o), splitSlack)); err != nil {
				return err
			}
			continue
		}
		var f frame.Frame
		_, err := frame.DecodeTo(&f, sl.buf[o:])
		if err == nil {
			panic("validate: DecodeTo accepted a frame skimFrame rejects")
		}
		msg := err.Error()
		var de *frame.DecodeError
		if errors.As(err, &de) {
			msg = fmt.Sprintf("%s at byte %d", de.Reason, sl.end+int64(de.Offset))
		}
		sl.count++
		sl.stop = msg
		return nil
	}
}

// skimRun lists the frames of sl from at (sync, when the list is empty)
// to the first that starts past the end of the chunk at start. It reports
// whether it got there; if not, sl.end is the frame it could not skim, and
// unless keep, what it listed is dropped.
func (r *chunkSplit) skimRun(k int, sl *chunkSlot, start, at int64, keep bool) bool {
	limit := min(r.size, start+int64(splitChunk))
	if sl.count == 0 {
		sl.sync = at
	}
	parts := r.s.parts
	sk := &r.ins[k].skim
	for at < limit {
		o := int(at - sl.base)
		size, attrs, key, ok := sk.skim(sl.buf[o:])
		if !ok {
			sl.end = at
			if !keep {
				sl.reset()
			}
			return false
		}
		p := partitionOf(key, parts)
		w := r.ownerIdx[p]
		// The key lies in the frame (hintFor's check holds): where, by
		// the addresses.
		var h partHint
		if n := len(key); n != 0 && n <= math.MaxUint16 {
			h = partHint{off: int32(uintptr(unsafe.Pointer(unsafe.SliceData(key))) - uintptr(unsafe.Pointer(&sl.buf[o]))), n: uint16(n), part: uint16(p)}
		}
		sl.lists[w] = append(sl.lists[w], chunkFrame{off: uint32(o), size: uint32(size), attrs: uint32(attrs),
			ord: uint32(sl.count + 1), hint: h})
		sl.count++
		at += int64(size)
	}
	sl.end = at
	return true
}

// reset empties sl's lists.
func (sl *chunkSlot) reset() {
	for i := range sl.lists {
		sl.lists[i] = sl.lists[i][:0]
	}
	sl.count, sl.stop = 0, ""
}

// judgeFrom judges list's frames from i on and returns len(list), or,
// after a panic judging one (Config.OnPanic), the index after it: the
// recovery is set up once for the chunk, not for each frame.
func (r *chunkSplit) judgeFrom(e *Engine, sl *chunkSlot, list []chunkFrame, in *Input, f *frame.Frame, at uintptr, i int) (next int) {
	if r.s.onPanic != nil {
		defer func() {
			if v := recover(); v != nil {
				e.hint = partHint{}
				r.s.survived(e, in, v) // in: the frame judged when it panicked
				next = i + 1
			}
		}()
	}
	for ; i < len(list); i++ {
		if i%splitBatch == 0 && i+2*splitBatch < len(list) {
			prefetchFrames(at, &list[i+2*splitBatch], min(len(list)-i-2*splitBatch, splitBatch))
		}
		it := &list[i]
		b := sl.buf[it.off : it.off+it.size]
		f.SetSkimmed(b, int(it.attrs), int(it.size))
		in.Pos.Offset, in.Index, in.Data = sl.base+int64(it.off), sl.first+uint64(it.ord), b
		e.hint = it.hint
		e.ObserveFrame(in, f)
	}
	return i
}

// judge has shard k judge its frames of sl, a verified chunk.
func (r *chunkSplit) judge(k int, sl *chunkSlot) {
	me := r.s.shards[k]
	e := me.eng
	in := &r.ins[k].in
	f := &r.ins[k].f
	list := sl.lists[k]
	at := uintptr(unsafe.Pointer(unsafe.SliceData(sl.buf)))
	// The frames were read on another core, or long enough ago to have
	// left this one's cache: ask for those a batch ahead (each one's
	// header and attributes, which the engine reads first), or the
	// header's load waits for it (3/4 of the loop's time, perf annotate),
	// and so does the frame cache's hash of the attributes. A batch at a
	// time: a call a line cost more than the rest of the loop.
	prefetchFrames(at, unsafe.SliceData(list), min(len(list), 2*splitBatch))
	for i := 0; i < len(list); {
		i = r.judgeFrom(e, sl, list, in, f, at, i)
	}
	if sl.stop != "" && k == r.nilOwner {
		bad := Input{Pos: Position{Kind: PosByte, Name: r.name, Offset: sl.end}, Index: sl.last}
		e.DecodeError(&bad, ProtoEventMesh, sl.stop)
	}
	me.walked.Store(sl.last)
}
