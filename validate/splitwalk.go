package validate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// A split walk reads a regular file of JSON lines with every shard doing
// both halves of a record's work, "scan anywhere, judge by stream":
//
//   - The scan (e2a.Scan: the field scan and the secret pre-check, and the
//     stream key's partition) is the larger half of a record's CPU and
//     needs no stream state, so any shard may do it. The file is cut into
//     chunks of bytes; every shard takes the next chunk no one has taken
//     yet, reads it (pread(2), into the buffer of a slot of a ring:
//     splitRing) and scans the lines that start in it, keeping each
//     record's filled e2a.Record in the slot.
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
// A chunk owns the lines that start in it: the byte before it says whether
// its first byte starts one, a line that starts in it is read on past its
// end, and a chunk inside a line owns none. No shard waits for another to
// know where its chunk's lines are (the frame split has to guess: a
// frame's payload may hold the magic; a line ends at the first '\n').
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
// Read by pread(2), not through a mapping (the way before): the kernel's
// copy leaves a chunk in the reading core's cache for the scan, where a
// mapping's pages were read cold by the scan, and its page table was
// filled ahead and given back behind (madvise) from both threads. A line
// is read whole up to readLinesFile's bound (MaxLineBytes); a longer one
// is skipped unbuffered, its head judged, as readLinesFile does. The file
// is read up to the size it had when the read started; a file cut shorter
// is an I/O error (the file shrank), and the lines before the chunk that
// could not be read are judged.
//
// What a second shard costs (gen-200M, perf cpu-clock, 4 runs of each,
// load 7-10 on 2 cores): 400 -> 481 ms of CPU a run. Of the 81 ms, the
// waiters' polls were 41 (spinPause, spinWake.wait: before spinMiss),
// wake-ups 16 (pvm_irq_enable, the hypervisor's interrupt path) and 6 the
// futex and other system calls; the chunk's line loop 12 (scan: half of it
// the first store into a slot's record, a cache miss), and the judge
// reading records the other core scanned some 10 (judgeJSON, Classify,
// startMemo.mayStart). Every wait there was for a full ring (one shard a
// ring ahead of the other, not running). Tried and dropped (user+sys,
// 12-16 interleaved rounds against the same code without it): routing
// each line (routeJSON) and having its judge scan it, so that only the
// line crosses cores: 6-19 % more CPU (routing was 6 % of the samples;
// what the records cost did not go away visibly); a ring of 32 chunks:
// 3 % more; rings of 32 and 64 with the records taken from the chunks
// judged last (a shared stack): 30 % and 41 % more (the records in flight
// are what the caches must hold); a ring of 4: 2.5 times the context
// switches and 40 % more CPU; one vector-pass buffer for a shard's records (e2a.block): no
// change beyond the noise.
//
// A sink that depends on the order of calls across shards (a record log:
// Sharded.Unordered not called) needs the hand-off's barriers at each
// interrupt: it keeps readLinesMapped.

// splitChunkBytes is the most bytes a chunk spans, splitChunkLines how
// many lines it spans about (its size follows the lines' mean length)
// and the most records a slot keeps scanned (each e2a.Record is kept until
// the chunk is judged: 1.7 kB; a record past them, in a chunk of lines
// much shorter than those before, is scanned again by its judge); splitRing
// how many chunks may be scanned ahead of the slowest judge. (Variables
// for tests.)
var (
	splitChunkBytes = 32 << 10
	splitChunkLines = 32
	splitRing       = 16
)

// splitMinChunk is the least bytes a chunk spans (a file of short lines).
const splitMinChunk = 1 << 10

// splitLineSlack is how much a chunk is read past its end at first, for
// the line that starts in it and ends after it (read on as far as it
// goes).
const splitLineSlack = 2 << 10

type splitKind uint8

const (
	splitJSON     splitKind = iota // scanned: rec
	splitLate                      // scanned, not kept (the slot's records are full): its judge scans it again
	splitRescan                    // too long, or Scan rejected it: ObserveJSON's decode error
	splitLineOver                  // a line over MaxLineBytes: data is its head
	splitFrame                     // starts with the frame magic: Engine.Observe
	splitResidue                   // a crash residue's loss (residue): every shard gaps its streams
)

// A splitRec is one record of a scanned chunk.
type splitRec struct {
	kind   splitKind
	cancel bool  // a chat.interrupt request: the other shards cancel its session
	who    uint8 // the shard that judges it
	keyN   uint16
	part   uint16 // the stream key's partition (a hint: keyN != 0)
	keyOff int32  // the key at data[keyOff:keyOff+keyN]
	// data: the line (its head for splitLineOver), in the slot's buf or,
	// for lines read before the buffer grew, in the one it had.
	data []byte
	// line and idx: its line and Input.Index counted from its chunk's
	// start (1 for the first).
	line, idx uint32
	content   int // splitLineOver: the line's length
	rec       *e2a.Record
}

// A splitSlot holds one chunk of the ring: read, then scanned.
type splitSlot struct {
	buf        []byte // the file from base
	base       int64
	recs       []splitRec
	pool       []*e2a.Record // recs' records, reused
	lines, idx uint32        // the chunk's lines and records
	err        error         // reading it failed: the walk ends before it
	// scanned is 1 + the chunk it holds, once scanned; judged how many
	// shards have judged it.
	scanned atomic.Int64
	judged  atomic.Int32
	_       [48]byte
}

// splitWalk is the state of a split walk over one file.
type splitWalk struct {
	s      *Sharded
	f      *os.File
	name   string
	opts   ReadOptions
	who    []uint8 // partition → its owner's index
	slots  []splitSlot
	wake   *spinWake      // something a shard may wait for happened
	caches []e2a.Record   // per shard: the memories its scans share
	late   []e2a.Record   // per shard: where it scans a record its slot does not keep
	heads  []splitHeadBuf // per shard: a headKey's buffers
	counts [][]byte       // per shard: where it reads past a giant line's head
	rds    []*fileReader  // per shard: how it reads the file
	maxRec int            // Config.MaxRecordBytes
	// The lines from pos to size: every line starts at pos or after a
	// '\n'.
	pos, size int64
	// cutMu guards the cut of the next chunk to read: it starts at cut
	// and is chunk next. chunks is how many the file has, once the cut
	// reaches size (-1 before); failed says a chunk could not be read (no
	// chunk after it is taken).
	cutMu  sync.Mutex
	cut    int64
	next   int64
	chunks atomic.Int64
	failed atomic.Bool
	// stopAt: the chunk the read stopped before (opts.Stop), or 0 when it
	// did not stop; guarded by cutMu, read once the shards are done.
	stopAt int64
	// The bytes and lines of the chunks scanned so far: a chunk's size is
	// splitChunkLines lines of their mean length.
	seenBytes, seenLines atomic.Int64
	lines, idxTotal      []int64 // per shard: what it counted
}

type splitHeadBuf struct {
	h   e2a.Head
	buf []byte
}

// readLinesSplit reads the JSON lines of f, a regular file, from its
// offset by a split walk over s's shards, when no sink depends on the
// order of calls across shards (Unordered); ok is false when f does not
// hold such lines there (readLinesFile's decision: not a regular file of
// some size, gzip, frames, a record log, or a first part that does not
// decide), and nothing was read then.
func (s *Sharded) readLinesSplit(f *os.File, name string, format Format, opts ReadOptions) (last uint64, err error, ok bool) {
	if !s.unordered || s.noSplit || !s.walks() || format == FormatFrames {
		return 0, nil, false
	}
	pos, size, there := regularAt(f)
	if !there || size-pos < splitMinBytes {
		return 0, nil, false
	}
	limit := opts.MaxLineBytes
	b := make([]byte, min(int64(lineDecide), size-pos))
	n, rerr := f.ReadAt(b, pos)
	if n == 0 || rerr != nil && !errors.Is(rerr, io.EOF) {
		return 0, nil, false // read as before, which reports it
	}
	b = b[:n]
	if format == FormatAuto && b[0] == frame.Magic && !bytes.HasPrefix(b, []byte(utf8BOM)) {
		return 0, nil, false
	}
	if !mapsLines(b, true, limit) || pos+int64(n) < size && !decidedIn(b, limit) {
		return 0, nil, false
	}
	if bytes.HasPrefix(b, []byte(utf8BOM)) {
		pos += int64(len(utf8BOM))
	}
	// Everything handed over before (an earlier input) is judged first:
	// the shards are idle, and the walk owns their engines.
	s.barrier()
	if !s.assigned {
		s.assignEven()
	}
	k := len(s.shards)
	sw := &splitWalk{s: s, f: f, name: name, opts: opts, who: make([]uint8, s.parts),
		slots: make([]splitSlot, splitRing), wake: newSpinWake(k),
		caches: make([]e2a.Record, k), late: make([]e2a.Record, k), heads: make([]splitHeadBuf, k),
		counts: make([][]byte, k), rds: make([]*fileReader, k), maxRec: s.shards[0].eng.cfg.MaxRecordBytes, pos: pos, size: size, cut: pos,
		lines: make([]int64, k), idxTotal: make([]int64, k)}
	sw.chunks.Store(-1)
	// The first part read says how long the lines are.
	sw.seenBytes.Store(int64(n))
	sw.seenLines.Store(int64(bytes.Count(b, []byte{'\n'})))
	for p, sh := range s.owner {
		for i := range s.shards {
			if s.shards[i] == sh {
				sw.who[p] = uint8(i)
			}
		}
	}
	for i := range s.shards {
		s.shards[i].walked.Store(opts.Index)
		sw.late[i].ShareCaches(&sw.caches[i])
	}
	s.walking.Store(true)
	s.mappedReads++
	s.splitReads++
	var wg sync.WaitGroup
	for i := 1; i < k; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sw.work(i)
		}()
	}
	sw.work(0)
	wg.Wait()
	held := 0
	end := size
	if sw.stopAt > 0 {
		err, end = ErrStopped, sw.cut
	}
	for i := range sw.slots {
		sl := &sw.slots[i]
		held += len(sl.pool)
		if sl.err != nil && sl.scanned.Load() > 0 && (err == nil || sl.base < end) {
			err, end = sl.err, sl.base
		}
	}
	for _, sh := range s.shards {
		sh.eng.hint = partHint{}
	}
	s.splitHeld = max(s.splitHeld, held)
	for _, rd := range sw.rds {
		if rd != nil {
			s.splitRaws += rd.raws
		}
	}
	last = opts.Index + uint64(sw.idxTotal[0])
	// The file's offset is then past what was read, as after a mapped
	// read.
	if _, serr := f.Seek(end, io.SeekStart); serr != nil && err == nil {
		err = serr
	}
	s.added = last
	s.last.Store(last)
	s.walking.Store(false)
	return last, err, true
}

// work is shard k's part of the walk: judge what is scanned, else read and
// scan the next chunk, else wait for one of them to be possible.
func (sw *splitWalk) work(k int) {
	sh := sw.s.shards[k]
	e := sh.eng
	in := Input{Pos: Position{Kind: PosLine, Name: sw.name}, FromLog: sw.opts.FromLog}
	line, idx := int64(0), sw.opts.Index
	ring := int64(len(sw.slots))
	for j := int64(0); ; {
		gen := sw.wake.seen()
		if n := sw.chunks.Load(); n >= 0 && j >= n {
			break
		}
		if sl := &sw.slots[j%ring]; sl.scanned.Load() == j+1 {
			if sl.err != nil {
				break // the lines before it are judged
			}
			sw.judge(k, e, sl, &in, line, idx)
			line += int64(sl.lines)
			idx += uint64(sl.idx)
			sh.walked.Store(idx)
			// The slot is another chunk's once all have judged it.
			if sl.judged.Add(1) == int32(len(sw.s.shards)) {
				sw.wake.notify(k)
			}
			j++
			continue
		}
		if c, from, to, ok := sw.claim(); ok {
			sl := &sw.slots[c%ring]
			sw.scan(k, from, to, sl)
			if sl.err != nil {
				sw.failed.Store(true)
			}
			sl.judged.Store(0)
			sl.scanned.Store(c + 1)
			sw.wake.notify(k)
			continue
		}
		if n := sw.chunks.Load(); n >= 0 && j >= n {
			sw.wake.notify(k) // the read stopped here (claim): the others end too
			break
		}
		sw.wake.wait(k, gen)
	}
	sw.lines[k], sw.idxTotal[k] = line, int64(idx-sw.opts.Index)
}

// free says whether chunk c's slot may be read into: the chunk before it
// there is judged by every shard.
func (sw *splitWalk) free(c int64) bool {
	ring := int64(len(sw.slots))
	if c < ring {
		return true
	}
	sl := &sw.slots[c%ring]
	return sl.scanned.Load() == c-ring+1 && sl.judged.Load() == int32(len(sw.s.shards))
}

// claim takes the next chunk, file offsets [from, to), for its caller to
// read and scan: 3/4 of splitChunkLines lines of the mean length so far
// (so that few chunks hold more lines than a slot keeps records).
// ok is false when there is none, or its slot is not free yet.
func (sw *splitWalk) claim() (c, from, to int64, ok bool) {
	sw.cutMu.Lock()
	defer sw.cutMu.Unlock()
	c, from = sw.next, sw.cut
	if from >= sw.size || sw.failed.Load() {
		return 0, 0, 0, false
	}
	if c > 0 && sw.stopAt == 0 && sw.opts.stopped() {
		// No chunk after c-1 is read: the shards judge those before it
		// and end there (chunks), as at the end of the file.
		sw.stopAt = c
		sw.chunks.Store(c)
		return 0, 0, 0, false
	}
	if !sw.free(c) {
		return 0, 0, 0, false
	}
	n := int64(splitChunkBytes)
	if lines := sw.seenLines.Load(); lines > 0 {
		n = min(n, max(splitMinChunk, sw.seenBytes.Load()/lines*int64(max(1, splitChunkLines*3/4))))
	}
	to = min(sw.size, from+n)
	sw.cut, sw.next = to, c+1
	if to >= sw.size {
		sw.chunks.Store(c + 1)
	}
	return c, from, to, true
}

// read fills sl.buf with n bytes of the file from off.
func (sw *splitWalk) read(k int, sl *splitSlot, off int64, n int) error {
	if cap(sl.buf) > 4*(splitChunkBytes+splitLineSlack) {
		sl.buf = nil // a long line has passed: give its buffer back
	}
	if cap(sl.buf) < n {
		sl.buf = make([]byte, max(n, splitChunkBytes+splitLineSlack))
	}
	sl.base, sl.buf = off, sl.buf[:n]
	return sw.readAt(k, sl.buf, off)
}

// grow reads more of the file into sl.buf (no record of it scanned yet):
// up to n more bytes, fewer at the end of the file.
func (sw *splitWalk) grow(k int, sl *splitSlot, n int) error {
	have := len(sl.buf)
	n = int(min(int64(n), sw.size-sl.base-int64(have)))
	if have+n > cap(sl.buf) {
		nb := make([]byte, have, max(have+n, 2*cap(sl.buf)))
		copy(nb, sl.buf)
		sl.buf = nb
	}
	sl.buf = sl.buf[:have+n]
	if err := sw.readAt(k, sl.buf[have:], sl.base+int64(have)); err != nil {
		sl.buf = sl.buf[:have]
		return err
	}
	return nil
}

// readAt reads b whole from the file at off, by shard k's fileReader: a
// short read is the file shrinking while it was read.
func (sw *splitWalk) readAt(k int, b []byte, off int64) error {
	if sw.rds[k] == nil {
		sw.rds[k] = newFileReader(sw.f)
	}
	n := 0
	var err error
	for n < len(b) && err == nil {
		var m int
		m, err = sw.rds[k].read(b[n:], off+int64(n))
		n += m
	}
	if n == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: the file shrank while it was read (%d bytes short)", sw.name, len(b)-n)
	}
	return err
}

// scan reads the chunk [from, to) of the file into sl and scans the lines
// that start in it, by shard k: each line with readJSONL's rules
// (lineFile.lines), each record scanned.
func (sw *splitWalk) scan(k int, from, to int64, sl *splitSlot) {
	sl.recs, sl.lines, sl.idx, sl.err = sl.recs[:0], 0, 0, nil
	// The byte before the chunk says whether a line starts at from.
	lead := int64(1)
	if from == sw.pos {
		lead = 0
	}
	at := from - lead
	if sl.err = sw.read(k, sl, at, int(min(sw.size, to+splitLineSlack)-at)); sl.err != nil {
		return
	}
	buf := sl.buf
	end := int(to - at) // lines start before it
	first := 0          // where the chunk's first line starts
	if lead == 1 {
		nl := bytes.IndexByte(buf[:end-1], '\n')
		if nl < 0 {
			return // inside a line an earlier chunk owns
		}
		first = nl + 1
	}
	limit := sw.opts.MaxLineBytes
	// A line is read whole up to the bound of a line judged whole
	// (lineFile.lines); a longer one (giant) is skipped. Only the last
	// line that starts in the chunk may need more than was read; growing
	// the buffer may move it, so each record keeps its own data.
	lineMax := max(limit+2, bufferedLine+1)
	nrec := 0
	for off := first; off < end; {
		nl := bytes.IndexByte(buf[off:], '\n')
		giant := -1 // the giant's length, without its '\n'
		for nl < 0 && sl.base+int64(len(buf)) < sw.size {
			have := len(buf)
			if have-off >= lineMax {
				n, err := sw.skipLine(k, sl.base+int64(have), buf[have-1])
				if err != nil {
					sl.err = err
					return
				}
				giant = have - off + int(n)
				break
			}
			if sl.err = sw.grow(k, sl, min(max(have-off, splitLineSlack), lineMax-(have-off))); sl.err != nil {
				return
			}
			buf = sl.buf
			if i := bytes.IndexByte(buf[have:], '\n'); i >= 0 {
				nl = have - off + i
			}
		}
		raw := buf[off:]
		if nl >= 0 {
			raw = raw[:nl+1]
		}
		off += len(raw)
		sl.lines++
		if giant >= 0 {
			sl.idx++
			sw.lineOver(k, sl, lineHead(raw), giant)
			break
		}
		n := len(raw)
		t := trimEOL(raw)
		if n > bufferedLine || (nl < 0 && n >= bufferedLine) {
			content := len(t) // without its CR LF, as a shorter line
			sl.idx++
			if content > limit {
				sw.lineOver(k, sl, lineHead(raw), content)
				continue
			}
		} else {
			if len(t) == 0 {
				continue
			}
			sl.idx++
			if len(t) > limit {
				// A crash residue stripped first (stripOver).
				if rest, ok := residue(t); ok {
					sl.recs = append(sl.recs, splitRec{kind: splitResidue, line: sl.lines, idx: sl.idx})
					t = rest
				}
				if len(t) > limit {
					sw.lineOver(k, sl, lineHead(t), len(t))
					continue
				}
			}
		}
		if isBlank(t) {
			continue
		}
		if t[0] == frame.Magic && len(t) > len(utf8BOM) && bytes.HasPrefix(t, []byte(utf8BOM)) {
			t = t[len(utf8BOM):] // JSON behind a mark, as the first line (LineBOM)
		}
		if rest, ok := residue(t); ok {
			sl.recs = append(sl.recs, splitRec{kind: splitResidue, line: sl.lines, idx: sl.idx})
			if t = rest; isBlank(t) {
				continue
			}
		}
		sl.recs = append(sl.recs, splitRec{data: t, line: sl.lines, idx: sl.idx})
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
		var rec *e2a.Record
		if nrec < splitChunkLines {
			if nrec == len(sl.pool) {
				sl.pool = append(sl.pool, new(e2a.Record))
			}
			rec = sl.pool[nrec]
			rec.ShareCaches(&sw.caches[k])
		} else {
			rec = &sw.late[k]
		}
		if scanJSON(t, rec) != nil {
			r.kind = splitRescan
			r.who = sw.headOwner(k, t)
			continue
		}
		var key []byte
		if rid := rec.Get(e2a.FRequestID); rid.Type == e2a.String && len(rid.Str) > 0 {
			key = rid.Str
		}
		p := partitionOf(key, sw.s.parts)
		r.who = sw.who[p]
		r.cancel = rec.Get(e2a.FMethod).Is("chat.interrupt") // cancelScanned decides
		if rec == &sw.late[k] {
			r.kind = splitLate
			continue
		}
		nrec++
		r.rec = rec
		if d := offsetIn(key, t); d >= 0 && len(key) <= math.MaxUint16 && len(t) <= math.MaxInt32 {
			r.keyOff, r.keyN, r.part = int32(d), uint16(len(key)), uint16(p)
		}
	}
	sw.seenBytes.Add(to - from)
	sw.seenLines.Add(int64(sl.lines))
}

// skipLine reads on from file offset off to the end of a line too long to
// hold (or of the file), by shard k: how many bytes it has there, without
// its '\n'.
func (sw *splitWalk) skipLine(k int, off int64, prev byte) (int64, error) {
	if sw.counts[k] == nil {
		sw.counts[k] = make([]byte, 64<<10)
	}
	b := sw.counts[k]
	var n int64
	for off < sw.size {
		piece := b[:min(int64(len(b)), sw.size-off)]
		if err := sw.readAt(k, piece, off); err != nil {
			return n, err
		}
		if nl := bytes.IndexByte(piece, '\n'); nl >= 0 {
			if nl > 0 {
				prev = piece[nl-1]
			}
			if prev == '\r' {
				n-- // the CR of its CR LF: not content (trimEOL)
			}
			return n + int64(nl), nil
		}
		prev = piece[len(piece)-1]
		n += int64(len(piece))
		off += int64(len(piece))
	}
	return n, nil
}

// lineOver notes a line over MaxLineBytes (head: its first bytes), judged
// as Sharded.DecodeError would have it.
func (sw *splitWalk) lineOver(k int, sl *splitSlot, head []byte, content int) {
	if head[0] != frame.Magic && bytes.IndexByte(head, 0) >= 0 {
		// A crash residue longer than a line (lineOver).
		sl.recs = append(sl.recs, splitRec{kind: splitResidue, line: sl.lines, idx: sl.idx})
		return
	}
	sl.recs = append(sl.recs, splitRec{kind: splitLineOver, data: head, line: sl.lines, idx: sl.idx,
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
	for i := 0; i < len(sl.recs); {
		i = sw.judgeFrom(k, e, sl, in, line, idx, i)
	}
}

// judgeFrom judges sl's records from i on and returns len(sl.recs), or,
// after a panic judging one (Config.OnPanic), the index after it: the
// recovery is set up once for the chunk, not for each record.
func (sw *splitWalk) judgeFrom(k int, e *Engine, sl *splitSlot, in *Input, line int64, idx uint64, i int) (next int) {
	if sw.s.onPanic != nil {
		defer func() {
			if v := recover(); v != nil {
				e.hint = partHint{}
				sw.s.survived(e, in, v) // in: the record judged when it panicked
				next = i + 1
			}
		}()
	}
	me := uint8(k)
	for ; i < len(sl.recs); i++ {
		r := &sl.recs[i]
		if r.kind == splitResidue {
			e.GapAll() // every shard, its own streams
			continue
		}
		if r.who != me && !r.cancel {
			continue
		}
		in.Pos.Line, in.Index, in.Data = line+int64(r.line), idx+uint64(r.idx), r.data
		if r.who != me {
			rec := r.rec
			if rec == nil { // splitLate
				rec = &e.rec
				if scanJSON(in.Data, rec) != nil {
					panic("validate: a record scanned once does not scan again")
				}
			}
			e.cancelScanned(in, rec)
			continue
		}
		switch r.kind {
		case splitJSON:
			if r.keyN != 0 {
				e.hint = partHint{off: r.keyOff, n: r.keyN, part: r.part}
			}
			e.judgeJSON(in, r.rec)
			e.hint = partHint{}
		case splitLate, splitRescan:
			e.ObserveJSON(in)
		case splitLineOver:
			e.DecodeError(in, ProtoE2A, fmt.Sprintf("line of %d bytes is over the %d-byte limit", r.content, sw.opts.MaxLineBytes))
		case splitFrame:
			e.Observe(in)
		}
	}
	return i
}
