package validate

import (
	"bytes"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// A split walk reads a mapped file of JSON lines with every shard doing
// both halves of a record's work, "scan anywhere, judge by stream":
//
//   - The scan (e2a.Scan: the field scan and the secret pre-check, and the
//     stream key's partition) is the larger half of a record's CPU and
//     needs no stream state, so any shard may do it. The mapped window is
//     cut into chunks at line ends (splitChunkBytes); every shard scans the
//     next chunk no one has claimed yet, into a slot of a ring
//     (splitRing) that keeps each record's filled e2a.Record.
//   - The judgement (the stream table, the sequence, is_final and status
//     rules, the findings) needs the stream's state, so a record is judged
//     by the shard that owns its stream key's partition. Every shard goes
//     through the chunks in file order and, once a chunk is scanned,
//     judges the records of its own partitions in it; of the others' it
//     reads only the partition, and the cancellation of a chat.interrupt
//     request (every shard cancels its streams of the session at the
//     interrupt's place among its own records, as cancelFrom does after a
//     hand-off).
//
// Nothing is routed before the scan (no second parse of a line: the scan's
// request_id is the key), no item crosses cores but the scanned record of
// a chunk the other shard scanned, and whichever shard is ahead scans
// instead of waiting. Every shard sees every record at the same place in
// the same order, so the verdicts are those of one shard (partition.go): a
// record goes to the owner of its request_id's partition, a line the scan
// rejects (and one over a limit) to the owner of the stream its head names
// (the one Engine.DecodeError gaps), a line holding a frame where
// Sharded.ObserveFrame would send it.
//
// A sink that depends on the order of calls across shards (a record log:
// Sharded.Unordered not called) needs the hand-off's barriers at each
// interrupt: it keeps readLinesMapped.
//
// The walk goes a window at a time (mapWindow): a phase scans and judges
// the window's whole lines, then the reader maps the next window; a line
// no window can hold is skipped between phases (walker.giant), as the
// hand-off skips it.

// splitChunkBytes is about how much of a window one chunk holds (it ends
// at the first line end past it), splitChunkLines how many lines it holds
// at most (each record's e2a.Record is kept until the chunk is judged:
// 1.7 kB, so that a file of short lines does not hold a chunk's worth of
// bytes in records of 1.7 kB each); splitRing how many chunks may be
// scanned ahead of the slowest judge. (Variables for tests.) Half of
// what they were (32 KiB, 64 lines): the ring's records and lines fit a
// core's L2 beside the engine's tables; 2 shards on gen-100M and
// py-ascii-100M took 4-11 % less CPU (median of 10-12 interleaved runs, a
// loaded machine) and 200 fewer page faults; 8 KiB was no better.
var (
	splitChunkBytes = 16 << 10
	splitChunkLines = 32
	splitRing       = 16
)

type splitKind uint8

const (
	splitJSON     splitKind = iota // scanned: rec
	splitRescan                    // too long, or Scan rejected it: ObserveJSON's decode error
	splitLineOver                  // a line over MaxLineBytes: data is its head
	splitFrame                     // starts with the frame magic: Engine.Observe
)

// A splitRec is one record of a scanned chunk.
type splitRec struct {
	kind   splitKind
	cancel bool  // a chat.interrupt request: the other shards cancel its session
	who    uint8 // the shard that judges it
	keyN   uint16
	part   uint16 // the stream key's partition (a hint: keyN != 0)
	keyOff int32  // the key at data[keyOff:keyOff+keyN]
	off    int    // data: the window's [off, off+n)
	n      int
	// line and idx: its line and Input.Index counted from its chunk's
	// start (1 for the first).
	line, idx uint32
	content   int // splitLineOver: the line's length
	rec       *e2a.Record
}

// A splitSlot holds one scanned chunk of the ring.
type splitSlot struct {
	// ends: where each line of the chunk ends in the window, past its
	// '\n' (claim finds them as it cuts the chunk; the scan goes by
	// them, not through the bytes a second time).
	ends       []int
	recs       []splitRec
	pool       []*e2a.Record // recs' records, reused
	lines, idx uint32        // the chunk's lines and records
	end        int           // its end in the window
	failed     bool          // reading it faulted
	// scanned is 1 + the chunk it holds, once scanned; judged how many
	// shards have judged it.
	scanned atomic.Int64
	judged  atomic.Int32
	_       [48]byte
}

// splitWalk is the state of a split walk over one file.
type splitWalk struct {
	s      *Sharded
	name   string
	opts   ReadOptions
	who    []uint8 // partition → its owner's index
	slots  []splitSlot
	wake   []chan struct{} // per shard: something it may wait for happened
	caches []e2a.Record    // per shard: the memories its scans share
	heads  []splitHeadBuf  // per shard: a headKey's buffers
	maxRec int             // Config.MaxRecordBytes

	// The phase: chunks of win[start:end], the chunk lines and records
	// before which are the base line and index.
	win        []byte
	start, end int
	baseLine   int64
	baseIdx    uint64
	// cutMu guards the cut of the next chunk to scan: it starts at cut
	// and is chunk next. chunks is how many the phase has, once the cut
	// reaches end (-1 before).
	cutMu           sync.Mutex
	cut             int
	next            int64
	chunks          atomic.Int64
	populated       atomic.Int64 // the window's page table is filled up to here
	dropped         atomic.Int64 // and given back up to here
	cached          bool
	fail            atomic.Bool
	failure         any
	failMu          sync.Mutex
	lines, idxTotal []int64 // per shard: what it counted in the phase
}

type splitHeadBuf struct {
	h   e2a.Head
	buf []byte
}

// splitLinesMapped reads the JSON lines of m from pos by a split walk.
func (s *Sharded) splitLinesMapped(m *mappedFile, pos int64, name string, opts ReadOptions) (last uint64, err error) {
	// Everything handed over before (an earlier input) is judged first:
	// the shards are idle, and the walk owns their engines.
	s.barrier()
	if !s.assigned {
		s.assignEven()
	}
	n := len(s.shards)
	sw := &splitWalk{s: s, name: name, opts: opts, who: make([]uint8, s.parts),
		slots: make([]splitSlot, splitRing), wake: make([]chan struct{}, n),
		caches: make([]e2a.Record, n), heads: make([]splitHeadBuf, n),
		maxRec: s.shards[0].eng.cfg.MaxRecordBytes, lines: make([]int64, n), idxTotal: make([]int64, n)}
	for p, sh := range s.owner {
		for k := range s.shards {
			if s.shards[k] == sh {
				sw.who[p] = uint8(k)
			}
		}
	}
	for k := range sw.wake {
		sw.wake[k] = make(chan struct{}, 1)
		s.shards[k].walked.Store(opts.Index)
	}
	s.walking.Store(true)
	s.mappedReads++
	s.splitReads++
	// The reader's cursor: windows, giant lines (its feed: s).
	w := &walker{j: &walkJob{s: s, name: name, opts: opts}, s: s, feed: s, m: m, pos: pos, idx: opts.Index}
	shrank := func(why any) error { return fmt.Errorf("%s: the file shrank while it was read (%v)", name, why) }
	defer func() {
		for _, sh := range s.shards {
			sh.eng.hint = partHint{}
		}
		held := 0
		for i := range sw.slots {
			held += len(sw.slots[i].pool)
		}
		s.splitHeld = max(s.splitHeld, held)
		m.close(w.pos)
		last = w.idx
		s.added = last
		s.last.Store(last)
		s.walking.Store(false)
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !mappingFault(r, m.win) {
				panic(r)
			}
			err = shrank(r)
		}
	}()
	for {
		off := int(w.pos - m.at)
		win := m.win
		if off >= len(win) {
			if m.eof() {
				return w.idx, nil
			}
			if _, err := w.remap(); err != nil {
				return w.idx, err
			}
			sw.dropped.Store(0)
			continue
		}
		end := len(win)
		if !m.eof() {
			nl := bytes.LastIndexByte(win[off:], '\n')
			if nl < 0 {
				grew, err := w.remap()
				if err != nil {
					return w.idx, err
				}
				sw.dropped.Store(0)
				if grew {
					continue
				}
				// A line longer than a window (so than MaxLineBytes):
				// skipped, its head judged, as the hand-off does.
				if err := w.giant(); err != nil {
					return w.idx, err
				}
				s.barrier()
				for _, sh := range s.shards {
					sh.walked.Store(w.idx)
				}
				continue
			}
			end = off + nl + 1
		}
		sw.phase(m, off, end, w.line, w.idx)
		if sw.fail.Load() {
			return w.idx, shrank(sw.failure)
		}
		w.line += sw.lines[0]
		w.idx += uint64(sw.idxTotal[0])
		w.pos += int64(end - off)
	}
}

// phase scans and judges the lines of m.win[start:end] on every shard.
func (sw *splitWalk) phase(m *mappedFile, start, end int, baseLine int64, baseIdx uint64) {
	sw.win, sw.start, sw.end = m.win, start, end
	sw.baseLine, sw.baseIdx = baseLine, baseIdx
	sw.cut, sw.next = start, 0
	sw.chunks.Store(-1)
	if start >= end {
		sw.chunks.Store(0)
	}
	sw.populated.Store(int64(m.populated))
	sw.cached = m.cached
	for i := range sw.slots {
		sw.slots[i].scanned.Store(0)
		sw.slots[i].judged.Store(0)
	}
	var wg sync.WaitGroup
	for k := 1; k < len(sw.s.shards); k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sw.work(k)
		}()
	}
	sw.work(0)
	wg.Wait()
	m.populated = int(min(sw.populated.Load(), int64(len(m.win))))
}

// work is shard k's part of a phase: judge what is scanned, else scan the
// next chunk, else wait for one of them to be possible.
func (sw *splitWalk) work(k int) {
	scanning := int64(-1)
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !mappingFault(r, sw.win) {
				panic(r)
			}
			sw.failMu.Lock()
			if sw.failure == nil {
				sw.failure = r
			}
			sw.failMu.Unlock()
			if scanning >= 0 {
				sl := &sw.slots[scanning%int64(len(sw.slots))]
				sl.failed = true
				sl.scanned.Store(scanning + 1)
			}
			sw.fail.Store(true)
			sw.wakeAll(k)
		}
	}()
	sh := sw.s.shards[k]
	e := sh.eng
	in := Input{Pos: Position{Kind: PosLine, Name: sw.name}, FromLog: sw.opts.FromLog}
	line, idx := sw.baseLine, sw.baseIdx
	sw.lines[k], sw.idxTotal[k] = 0, 0
	ring := int64(len(sw.slots))
	for j := int64(0); !sw.fail.Load(); {
		if n := sw.chunks.Load(); n >= 0 && j >= n {
			break
		}
		if sl := &sw.slots[j%ring]; sl.scanned.Load() == j+1 {
			if sl.failed {
				return
			}
			sw.judge(k, e, sl, &in, line, idx)
			line += int64(sl.lines)
			idx += uint64(sl.idx)
			sh.walked.Store(idx)
			end := sl.end // the slot is another chunk's once all have judged it
			if sl.judged.Add(1) == int32(len(sw.s.shards)) {
				sw.drop(end)
				sw.wakeAll(k)
			}
			j++
			continue
		}
		if c, from, to, ok := sw.claim(); ok {
			scanning = c
			sl := &sw.slots[c%ring]
			sw.scan(k, from, to, sl)
			scanning = -1
			sl.judged.Store(0)
			sl.scanned.Store(c + 1)
			sw.wakeAll(k)
			continue
		}
		<-sw.wake[k]
	}
	sw.lines[k], sw.idxTotal[k] = line-sw.baseLine, int64(idx-sw.baseIdx)
}

// free says whether chunk c's slot may be scanned into: the chunk before
// it there is judged by every shard.
func (sw *splitWalk) free(c int64) bool {
	ring := int64(len(sw.slots))
	if c < ring {
		return true
	}
	sl := &sw.slots[c%ring]
	return sl.scanned.Load() == c-ring+1 && sl.judged.Load() == int32(len(sw.s.shards))
}

func (sw *splitWalk) wakeAll(k int) {
	for i, ch := range sw.wake {
		if i == k {
			continue
		}
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// claim cuts the next chunk, [from, to) of the window, for its caller to
// scan: up to splitChunkLines lines, ending at the first line end past
// splitChunkBytes. ok is false when there is none, or its slot is not
// free yet.
func (sw *splitWalk) claim() (c int64, from, to int, ok bool) {
	sw.cutMu.Lock()
	defer sw.cutMu.Unlock()
	c, from = sw.next, sw.cut
	if from >= sw.end || !sw.free(c) {
		return 0, 0, 0, false
	}
	to = from
	sl := &sw.slots[c%int64(len(sw.slots))] // free: the claimer's
	sl.ends = sl.ends[:0]
	for n := 0; n < splitChunkLines && to-from < splitChunkBytes; n++ {
		nl := bytes.IndexByte(sw.win[to:sw.end], '\n')
		if nl < 0 {
			if to < sw.end {
				to = sw.end
				sl.ends = append(sl.ends, to)
			}
			break
		}
		to += nl + 1
		sl.ends = append(sl.ends, to)
	}
	sw.cut, sw.next = to, c+1
	if to >= sw.end {
		sw.chunks.Store(c + 1)
	}
	return c, from, to, true
}

// ahead fills the page table of the window's next part once a scan
// reaches within half a populateChunk of its filled end (the first shard
// there fills it), as mappedFile.ahead does for one reader.
func (sw *splitWalk) ahead(off int) {
	for {
		p := sw.populated.Load()
		if !sw.cached || int64(off+populateChunk/2) < p || p >= int64(len(sw.win)) {
			return
		}
		end := min(int64(len(sw.win)), p+int64(populateChunk))
		if sw.populated.CompareAndSwap(p, end) {
			populate(sw.win[p:end])
		}
	}
}

// drop gives back the dropChunks of the window before off, which every
// shard has judged.
func (sw *splitWalk) drop(off int) {
	for d := sw.dropped.Load(); d+int64(dropChunk) <= int64(off); d = sw.dropped.Load() {
		if sw.dropped.CompareAndSwap(d, d+int64(dropChunk)) {
			dropBehind(sw.win[d : d+int64(dropChunk)])
		}
	}
}

// scan reads the chunk win[from:to] into sl by shard k: each line with readJSONL's rules
// (walker.lines), each record scanned.
func (sw *splitWalk) scan(k int, from, to int, sl *splitSlot) {
	sl.recs, sl.lines, sl.idx, sl.end, sl.failed = sl.recs[:0], 0, 0, to, false
	sw.ahead(to)
	limit := sw.opts.MaxLineBytes
	win := sw.win
	nrec := 0
	off := from
	for _, e := range sl.ends {
		raw := win[off:e]
		nl := -1 // no '\n': the last line of the file
		if raw[len(raw)-1] == '\n' {
			nl = len(raw) - 1
		}
		at := off
		off = e
		sl.lines++
		n := len(raw)
		t := trimEOL(raw)
		if n > bufferedLine || (nl < 0 && n >= bufferedLine) {
			content := n
			if nl >= 0 {
				content--
			}
			sl.idx++
			if content > limit {
				sw.lineOver(k, sl, at, lineHead(raw), content)
				continue
			}
		} else {
			if len(t) == 0 {
				continue
			}
			sl.idx++
			if len(t) > limit {
				sw.lineOver(k, sl, at, lineHead(t), len(t))
				continue
			}
		}
		if isBlank(t) {
			continue
		}
		sl.recs = append(sl.recs, splitRec{off: at, n: len(t), line: sl.lines, idx: sl.idx})
		r := &sl.recs[len(sl.recs)-1]
		if t[0] == frame.Magic {
			r.kind = splitFrame
			f, _, err := frame.Decode(t)
			if err == nil {
				r.who = sw.who[partitionOf(routeFrame(&f), sw.s.parts)]
			}
			continue
		}
		if len(t) > sw.maxRec {
			r.kind = splitRescan
			r.who = sw.headOwner(k, t)
			continue
		}
		if nrec == len(sl.pool) {
			sl.pool = append(sl.pool, new(e2a.Record))
		}
		rec := sl.pool[nrec]
		rec.ShareCaches(&sw.caches[k])
		if scanJSON(t, rec) != nil {
			r.kind = splitRescan
			r.who = sw.headOwner(k, t)
			continue
		}
		nrec++
		r.rec = rec
		var key []byte
		if rid := rec.Get(e2a.FRequestID); rid.Type == e2a.String && len(rid.Str) > 0 {
			key = rid.Str
		}
		p := partitionOf(key, sw.s.parts)
		r.who = sw.who[p]
		if d := offsetIn(key, t); d >= 0 && len(key) <= math.MaxUint16 && len(t) <= math.MaxInt32 {
			r.keyOff, r.keyN, r.part = int32(d), uint16(len(key)), uint16(p)
		}
		r.cancel = rec.Get(e2a.FMethod).Is("chat.interrupt") // cancelScanned decides
	}
}

// lineOver notes a line over MaxLineBytes (head: its first bytes), judged
// as Sharded.DecodeError would have it.
func (sw *splitWalk) lineOver(k int, sl *splitSlot, at int, head []byte, content int) {
	sl.recs = append(sl.recs, splitRec{kind: splitLineOver, off: at, n: len(head), line: sl.lines, idx: sl.idx,
		content: content, who: sw.headOwner(k, head)})
}

// headOwner is the shard that owns the stream Engine.DecodeError gaps for
// a record that does not scan: the one its head names.
func (sw *splitWalk) headOwner(k int, data []byte) uint8 {
	hd := &sw.heads[k]
	var key []byte
	key, hd.buf = headKey(lineHead(data), &hd.h, hd.buf)
	return sw.who[partitionOf(key, sw.s.parts)]
}

// judge judges shard k's records of the chunk in sl; line and idx are the
// line and index before the chunk.
func (sw *splitWalk) judge(k int, e *Engine, sl *splitSlot, in *Input, line int64, idx uint64) {
	me := uint8(k)
	for i := range sl.recs {
		r := &sl.recs[i]
		if r.who != me && !r.cancel {
			continue
		}
		in.Pos.Line, in.Index, in.Data = line+int64(r.line), idx+uint64(r.idx), sw.win[r.off:r.off+r.n]
		if r.who != me {
			e.cancelScanned(in, r.rec)
			continue
		}
		switch r.kind {
		case splitJSON:
			if r.keyN != 0 {
				e.hint = partHint{off: r.keyOff, n: r.keyN, part: r.part}
			}
			e.judgeJSON(in, r.rec)
			e.hint = partHint{}
		case splitRescan:
			e.ObserveJSON(in)
		case splitLineOver:
			e.DecodeError(in, ProtoE2A, fmt.Sprintf("line of %d bytes is over the %d-byte limit", r.content, sw.opts.MaxLineBytes))
		case splitFrame:
			e.Observe(in)
		}
	}
}
