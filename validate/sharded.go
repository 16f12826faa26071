package validate

import (
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

type itemKind uint8

const (
	itemObserve    itemKind = iota
	itemFrame               // a frame the reader decoded: frm, on the batch's copy
	itemFrameWin            // the same in place, in the reader's mapping (batch.win)
	itemObserveWin          // itemObserve in place, in the reader's mapping
	itemDecodeError
	itemCancelOnly // a chat.interrupt owned by another shard: cancel only
	itemConnClosed
	itemGap
	itemExpire
	itemFinish
	itemBarrier
	itemHandover
	itemBehind   // Hold: the partition is behind
	itemCaughtUp // Hold: it is not
	itemGapAll
	itemLeaveOpen
)

// An item is one input for a shard, kept small (it crosses from the
// reader's core to the shard's): the fields in which inputs differ from
// record to record (position, index, charge, data), the rest in the
// batch's inputs, shared by the items of a run of like inputs (one file,
// one connection).
type item struct {
	kind    itemKind
	base    int32 // its Input is batch.inputs[base] with the fields below; -1: a zero Input
	ctl     int32 // 1 + its index in batch.ctl (proto, msg, barrier); 0: none
	off, n  int   // Data within the batch buffer
	index   uint64
	offset  int64 // Pos.Offset
	line    int64 // Pos.Line
	charged int
	lay     frame.Layout // itemFrame: the frame the reader decoded
	hint    partHint     // the stream key's partition, as the reader found it
}

type ctlItem struct {
	proto, msg string
	barrier    *sync.WaitGroup
	meet       *rendezvous // an interrupt's place in every shard's queue
}

// rendezvous orders a chat.interrupt with the records of every shard
// where no shard runs on the reader's goroutine (Sharded.Inline): the
// shard that owns it judges it (and its sinks log it) once every other
// shard has judged what came before it, and the others judge what comes
// after it only once it is judged. The reader does not wait: the shards
// meet at the interrupt's place in their queues, which stay full, where
// two barriers emptied every queue before the interrupt and again after
// it (with a record log, at every interrupt: 0.4 % of e2atap gen's
// records, the live taps held a third less). A panic judging either side
// still lets the other go on (the waits and the signals are deferred).
type rendezvous struct {
	arrived sync.WaitGroup // the other shards, at their cancel
	judged  sync.WaitGroup // the owner, past the interrupt
}

// meet judges an interrupt's item at its rendezvous: the owner's
// (itemObserve) or another shard's cancel (itemCancelOnly).
func (r *rendezvous) meet(e *Engine, kind itemKind, in *Input) {
	if kind == itemCancelOnly {
		defer r.judged.Wait()
		r.arrived.Done()
		e.cancelFrom(in)
		return
	}
	defer r.judged.Done()
	r.arrived.Wait()
	e.Observe(in)
}

type batch struct {
	items  []item
	buf    []byte
	inputs []Input
	ctl    []ctlItem
	win    []byte // the window of the reader's mapping its itemFrameWin lie in
}

// sameBase reports whether b may share a's batch.inputs entry: they differ
// at most in the fields an item carries itself. TestSameBase keeps it
// complete.
func sameBase(a, b *Input) bool {
	return a.Tap == b.Tap && a.Conn == b.Conn && a.Pos.Kind == b.Pos.Kind && a.Pos.Partition == b.Pos.Partition &&
		a.Pos.Name == b.Pos.Name && a.Dir == b.Dir && a.Time == b.Time && a.JSON == b.JSON && a.FromLog == b.FromLog &&
		a.Gap == b.Gap && a.Joined == b.Joined && a.Logged == b.Logged && a.Silent == b.Silent
}

// shardBatch bounds a batch: records and bytes.
const (
	shardBatchItems = 1024
	shardBatchBytes = 256 << 10
	shardQueue      = 8 // batches queued per shard before the reader blocks
)

type shard struct {
	eng  *Engine
	ch   chan *batch
	cur  *batch
	done chan struct{}
	zero Input       // the shard's Input of an item without a base
	frm  frame.Frame // the shard's frame of an itemFrame
	// badWin is the start of a window reading which faulted: its other
	// frames are skipped (the reader reports the file shrank).
	badWin *byte
	// For Watermark, stored once a batch, not once a record (a locked
	// store each, and a cache line the reader and the shard would pass
	// back and forth): processed is the highest Input.Index of the
	// batches the shard has judged; dispatched the highest of the batches
	// handed to it; open the lowest of the batch being filled (0: none).
	// The reader writes dispatched and open, the shard processed, each on
	// its own cache line.
	dispatched, open atomic.Uint64
	pending          uint64 // reader only: the highest Input.Index in cur
	_                [48]byte
	processed        atomic.Uint64
	_                [56]byte
	// walked: in a walk (walk.go), the highest Input.Index this shard has
	// passed.
	walked atomic.Uint64
	_      [56]byte
}

// Sharded spreads records over several Engines by stream key (request_id,
// sid, event id), one goroutine each, so that every stream is owned by one
// goroutine and per-stream order is kept while all cores work.
//
// The methods of Handler (Observe, ObserveFrame, DecodeError) and
// ConnClosed, Gap, Expire and Finish must be called from one goroutine
// (the reader); the Sink is called from every shard. The queue to each
// shard is bounded (shardQueue batches): a slow shard blocks the reader,
// which is backpressure, never loss.
type Sharded struct {
	shards []*shard
	parts  int      // partitions of the stream state (partition.go)
	owner  []*shard // partition → the shard that owns it (partition mod shards)
	route  router
	pool   sync.Pool
	wg     sync.WaitGroup
	closed bool
	last   atomic.Uint64 // highest Input.Index added when a batch was last handed over
	added  uint64        // reader only: the highest Input.Index added
	// release returns an input's budget charge once its shard judged it.
	release func(int)
	// onPanic is Config.OnPanic; panics counts what it was called for
	// (survive.go).
	onPanic func(in *Input, v any, stack []byte)
	panics  atomic.Uint64
	// unordered: no sink depends on the order of Record calls across
	// shards, so an interrupt needs no barrier (Unordered).
	unordered bool
	// inline: shard 0's engine runs on the caller's goroutine (Inline).
	inline bool
	// meet: the rendezvous of the interrupt being queued (meetAt).
	meet *rendezvous
	done uint64 // inline: the last Input.Index judged
	// assigned: owner is set (at the first record, by its kind: assign).
	assigned bool
	// win is the window of the reader's mapping the frames handed over lie
	// in (SetWindow), nil for none; faulted says that a shard could not
	// read it (the file shrank), for the reader's next SetWindow.
	win     []byte
	faulted atomic.Bool
	// walking: a walk is under way (walk.go): Watermark is the least of
	// the shards' walked. noWalk: read mapped files with the hand-off
	// anyway (tests compare the two).
	walking atomic.Bool
	noWalk  bool
	// noSplit: read mapped JSON lines by the hand-off even where a split
	// walk could (splitwalk.go; tests compare the two).
	noSplit     bool
	splitReads  int   // files read by a split walk
	splitHeld   int   // the most e2a.Records a split walk kept at once (their slots' pools)
	splitFixes  int   // chunks of frame splits skimmed again (a wrong guess at their first frame)
	splitBytes  int64 // bytes frame splits read
	splitRaws   int   // reads of splits (frames, lines) made raw (fileReader)
	mappedReads int   // files read in place (walk.go)
	// tail: batches hold shardBatchItems>>tail items, fewer near the end
	// of a mapped file (walker.nearEnd), so that little is left queued to
	// the other shards once the reader is done.
	tail uint
}

// Inline makes shard 0 judge its messages on the caller's goroutine
// before the call returns: no copy into a batch, no queue, no second
// goroutine for it. A run of one shard then costs what one Engine costs.
// In a run of several, the reader is also a shard: it judges the records of
// the partitions shard 0 owns itself and hands only the others' over, so
// that fewer records cross cores; shard 0 then owns a smaller share of the
// partitions than the others (readerShare), since the reader also reads and
// routes every record. Which shard owns a partition never changes a
// verdict (partition.go). The Sink is then called from the caller's
// goroutine too. Call before the first Observe.
func (s *Sharded) Inline() {
	if s.inline {
		return
	}
	sh := s.shards[0]
	close(sh.ch) // nothing was queued: its goroutine ends at once
	<-sh.done
	s.pool.Put(sh.cur)
	sh.cur = nil
	s.inline = true
}

// readerShare is the weight of the reader's own shard (Inline) against
// the weight 1 of every other, by the kind of record. With R the reader's
// own work per record (read, route, hand over) and J the judging, the
// reader and one other shard are equally busy at (J-R)/(J+R). From CPU
// profiles of two shards on 2 cores: JSON (gen), R ≈ 0.35 J (read(2),
// quickRoute, the copy); frames, R ≈ 0.65 J (decode, route, the item);
// JSON handed over in place from a mapping (walk.go), R ≈ 0.33 J on gen
// and py-ascii, 0.4 J with escaped request_ids (the line and the first
// touch of its bytes, routing, the item): the reader's and the other
// shard's shares of the run's CPU (perf, 2 shards) were 52 and 44 % at 0.6
// (gen-550M; py-ascii 51 and 45, py-esc100 53 and 44: the reader the
// bottleneck), 50 and 48 % at 0.5 (49 and 48, 49 and 46). Only the
// balance depends on them, never a verdict.
var readerShare = [3]float64{0.5, 0.25, 0.5} // JSON, frames, mapped JSON

// assign sets owner, partition → shard, at the first record: round robin
// over the shards, with the reader's own shard (Inline) taking only its
// share (readerShare) of the partitions.
func (s *Sharded) assign(frames bool) {
	if frames {
		s.assignShare(readerShare[1])
	} else {
		s.assignShare(readerShare[0])
	}
}

// assignShare is assign with the reader's weight w.
func (s *Sharded) assignShare(w float64) {
	s.assigned = true
	n := len(s.shards)
	if !s.inline || n == 1 {
		for p := range s.owner {
			s.owner[p] = s.shards[p%n]
		}
		return
	}
	// Shard 0 owns about w/(w+n-1) of the partitions, spread over the
	// range; the rest go round robin to the others.
	mine := int(float64(s.parts)*w/(w+float64(n-1)) + 0.5)
	mine = max(0, min(mine, s.parts-(n-1)))
	next := 1
	for p := range s.owner {
		if mine > 0 && (p*mine)/s.parts != ((p+1)*mine)/s.parts {
			s.owner[p] = s.shards[0]
			continue
		}
		s.owner[p] = s.shards[next]
		if next++; next == n {
			next = 1
		}
	}
}

// Unordered says that no sink depends on the order of calls across shards
// (only on each stream's, which is always kept): a chat.interrupt is then
// queued to every shard in order without waiting for them, so interrupts
// do not stall the pipeline. The verdicts are the same either way (every
// shard sees the interrupt at the same place in its own queue); what
// changes is only when a sink hears of the interrupt relative to records
// of other shards. A record log (replayed later in its own order) needs
// the barriers; offline findings are printed by index and do not. Call
// before the first Observe.
func (s *Sharded) Unordered() { s.unordered = true }

// maxPooledBatch: a batch that grew past this (a huge message) is not kept
// for reuse, so that one 8 MiB message does not pin 8 MiB per pooled batch.
const maxPooledBatch = 4 * shardBatchBytes

// OnRelease sets the function that returns an input's budget charge
// (Input.Charged) once its shard has judged it. Call before the first
// Observe.
func (s *Sharded) OnRelease(fn func(int)) { s.release = fn }

var _ Handler = (*Sharded)(nil)

// NewSharded starts n shards, each with its own Engine; n is bounded by
// ShardsFor (callers that tell the user use ShardsFor first). Each shard
// owns whole partitions of the stream state, so the verdicts do not depend
// on n.
func NewSharded(n int, cfg Config, sink Sink) *Sharded {
	if cfg.MaxStreams < 1 {
		cfg.MaxStreams = DefaultConfig().MaxStreams
	}
	cfg.MaxStreams = min(cfg.MaxStreams, MaxTableStreams)
	n, _ = ShardsFor(n, cfg.MaxStreams)
	s := &Sharded{parts: partitions(cfg.MaxStreams), onPanic: cfg.OnPanic}
	s.pool.New = func() any {
		// buf grows when records are copied into it (a batch of records
		// judged in place in a mapping never does): 256 KiB for each of
		// the up to shardQueue+1 batches of every shard would double the
		// heap of a run and bring a collection (and its write barriers)
		// into the middle of it.
		return &batch{items: make([]item, 0, shardBatchItems)}
	}
	var ids *respIDSet
	if cfg.Profile.Severity[RuleE2AResponseIDDup] != Off && n > 1 {
		// response_id uniqueness is global, not per stream: one shared set.
		ids = newRespIDSet(cfg.ResponseIDWindow)
	}
	for i := 0; i < n; i++ {
		sh := &shard{eng: NewEngine(cfg, sink), ch: make(chan *batch, shardQueue), done: make(chan struct{})}
		if ids != nil {
			sh.eng.shared = ids
		}
		sh.cur = s.pool.Get().(*batch)
		s.shards = append(s.shards, sh)
		s.wg.Add(1)
		go s.run(sh)
	}
	s.owner = make([]*shard, s.parts)
	return s
}

func (s *Sharded) run(sh *shard) {
	defer s.wg.Done()
	defer close(sh.done)
	for b := range sh.ch {
		var hi uint64
		for k := 0; k < len(b.items); {
			k = s.judgeItems(sh, b, k, &hi)
		}
		if hi != 0 {
			sh.processed.Store(hi)
		}
		b.items, b.buf, b.inputs, b.ctl, b.win = b.items[:0], b.buf[:0], b.inputs[:0], b.ctl[:0], nil
		if cap(b.buf) > maxPooledBatch {
			b.buf = make([]byte, 0, shardBatchBytes)
		}
		s.pool.Put(b)
	}
}

// judgeItems judges b's items from k on; hi is the highest Input.Index
// judged. It returns len(b.items), or, when reading a frame in the
// reader's mapping faulted (the file shrank under the reader, which then
// reports it: SetWindow), the index after that item; the window's other
// frames are then skipped.
func (s *Sharded) judgeItems(sh *shard, b *batch, k int, hi *uint64) (next int) {
	// in is the item being judged, for a recovery.
	var in *Input
	if b.win != nil {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	if b.win != nil || s.onPanic != nil {
		defer func() {
			r := recover()
			switch {
			case r == nil:
			case b.win != nil && mappingFault(r, b.win):
				s.faulted.Store(true)
				sh.badWin = unsafe.SliceData(b.win)
				next = k + 1
			case s.onPanic == nil || in == nil:
				panic(r)
			default:
				// A defect judging item k (Config.OnPanic): it alone is
				// skipped; the batch goes on after it.
				sh.eng.hint = partHint{}
				s.survived(sh.eng, in, r)
				if in.Index != 0 {
					*hi = in.Index
				}
				if in.Charged > 0 && s.release != nil {
					s.release(in.Charged)
				}
				next = k + 1
			}
		}()
	}
	for ; k < len(b.items); k++ {
		it := &b.items[k]
		in = &sh.zero
		if it.base >= 0 {
			in = &b.inputs[it.base] // the shard's now: set to this item's fields
		} else {
			*in = Input{}
		}
		in.Pos.Offset, in.Pos.Line, in.Index, in.Charged = it.offset, it.line, it.index, it.charged
		var c ctlItem
		if it.ctl > 0 {
			c = b.ctl[it.ctl-1]
		}
		var f *frame.Frame
		skip := false
		switch it.kind {
		case itemFrameWin, itemObserveWin:
			if sh.badWin != nil && sh.badWin == unsafe.SliceData(b.win) {
				skip = true // not judged: the read fails
				break
			}
			in.Data = b.win[it.off : it.off+it.n]
			if it.kind == itemFrameWin {
				sh.frm = it.lay.On(in.Data)
				f = &sh.frm
			}
		case itemFrame:
			in.Data = b.buf[it.off : it.off+it.n]
			sh.frm = it.lay.On(in.Data)
			f = &sh.frm
		default:
			in.Data = b.buf[it.off : it.off+it.n]
		}
		switch {
		case it.kind == itemBarrier:
			// Past it the engine may be a walk's (walk.go): not touched
			// after Done.
			c.barrier.Done()
		case c.meet != nil:
			sh.eng.hint = it.hint
			c.meet.meet(sh.eng, it.kind, in)
			sh.eng.hint = partHint{}
		case !skip:
			sh.eng.hint = it.hint
			judge(sh.eng, it.kind, in, c.proto, c.msg, f, c.barrier)
			sh.eng.hint = partHint{}
		}
		if in.Index != 0 {
			*hi = in.Index
		}
		if in.Charged > 0 && s.release != nil {
			s.release(in.Charged)
		}
	}
	return k
}

func judge(e *Engine, kind itemKind, in *Input, proto, msg string, f *frame.Frame, wg *sync.WaitGroup) {
	switch kind {
	case itemObserve, itemObserveWin:
		e.Observe(in)
	case itemFrame, itemFrameWin:
		e.ObserveFrame(in, f)
	case itemDecodeError:
		e.DecodeError(in, proto, msg)
	case itemCancelOnly:
		e.cancelFrom(in)
	case itemConnClosed:
		e.ConnClosed(in)
	case itemGap:
		e.Gap(in)
	case itemGapAll:
		e.GapAll()
	case itemLeaveOpen:
		e.LeaveOpen()
	case itemExpire:
		e.Expire(in.Time)
	case itemFinish:
		e.Finish(msg, in)
	case itemHandover:
		e.Handover(in)
	case itemBehind, itemCaughtUp:
		e.Hold(in, kind == itemBehind)
	case itemBarrier:
		wg.Done()
	}
}

// judged is the bookkeeping of an inline run after each input: the
// watermark moves every 256 records (and after anything else), which
// keeps it at or below what was judged without a locked store per record.
// (With other shards, last may pass what they still hold: Watermark
// takes their open and dispatched batches into account.)
func (s *Sharded) judged(in *Input, always bool) {
	if in.Index != 0 {
		s.done, s.added = in.Index, in.Index
		if always || in.Index&255 == 0 {
			s.last.Store(in.Index)
		}
	}
	if in.Charged > 0 && s.release != nil {
		s.release(in.Charged)
	}
}

// shardOf is the shard owning the partition of key, a frame's (frames)
// or a JSON record's.
func (s *Sharded) shardOf(key []byte, frames bool) *shard {
	if len(s.shards) == 1 {
		return s.shards[0]
	}
	if !s.assigned {
		s.assign(frames)
	}
	return s.owner[partitionOf(key, s.parts)]
}

// inlined says whether sh runs on the caller's goroutine.
func (s *Sharded) inlined(sh *shard) bool { return s.inline && sh == s.shards[0] }

func (s *Sharded) add(sh *shard, kind itemKind, in *Input, proto, msg string) {
	s.addFrame(sh, kind, in, proto, msg, nil, partHint{})
}

// addFrame queues an item (with the frame the reader decoded, for
// itemFrame, and the partition of its stream key) to sh, or has it judged
// at once when the run is inline.
func (s *Sharded) addFrame(sh *shard, kind itemKind, in *Input, proto, msg string, f *frame.Frame, hint partHint) {
	if s.inlined(sh) {
		// No copy, no queue: in and f are judged before the call returns,
		// which is as long as the caller keeps them.
		sh.eng.hint = hint
		judge(sh.eng, kind, in, proto, msg, f, nil)
		sh.eng.hint = partHint{}
		s.judged(in, kind != itemObserve && kind != itemFrame)
		return
	}
	b := sh.cur
	// The record's bytes first: reading them may fault (a mapping of a
	// file cut short), and then no item may be left without them.
	d := -1
	if (kind == itemFrame || kind == itemObserve) && s.win != nil {
		// In the reader's mapping, which stays until the shards are done
		// with it (SetWindow): no copy.
		d = offsetIn(in.Data, s.win)
	}
	off := len(b.buf)
	if d < 0 {
		b.buf = append(b.buf, in.Data...)
	}
	// Filled in place: an item is a few hundred bytes, built once.
	if len(b.items) == cap(b.items) {
		b.items = append(b.items, item{})
	} else {
		b.items = b.items[:len(b.items)+1]
	}
	it := &b.items[len(b.items)-1]
	if n := len(b.inputs); n == 0 || !sameBase(&b.inputs[n-1], in) {
		b.inputs = append(b.inputs, Input{})
		copyInput(&b.inputs[n], in)
		b.inputs[n].Data = nil
	}
	it.kind, it.base, it.ctl = kind, int32(len(b.inputs)-1), 0
	if proto != "" || msg != "" || s.meet != nil {
		b.ctl = append(b.ctl, ctlItem{proto: proto, msg: msg, meet: s.meet})
		it.ctl = int32(len(b.ctl))
	}
	it.off, it.n, it.hint = off, len(in.Data), hint
	it.index, it.offset, it.line, it.charged = in.Index, in.Pos.Offset, in.Pos.Line, in.Charged
	if f != nil {
		it.lay = f.Layout()
	}
	if d >= 0 {
		it.kind, it.off, b.win = itemFrameWin, d, s.win
		if kind == itemObserve {
			it.kind = itemObserveWin
		}
	}
	if in.Index != 0 {
		if sh.pending == 0 {
			sh.open.Store(in.Index)
		}
		sh.pending, s.added = in.Index, in.Index
	}
	if len(b.items) >= shardBatchItems>>s.tail || len(b.buf) >= shardBatchBytes {
		s.flush(sh)
	}
}

// copyInput is *dst = *src field by field: the reader has just stored
// some of src's fields, and a copy of the whole struct would load them back
// in wider words than they were stored in (a stall on every record).
// TestCopyInput keeps it complete.
func copyInput(dst, src *Input) {
	dst.Tap, dst.Conn = src.Tap, src.Conn
	dst.Pos.Kind, dst.Pos.Partition, dst.Pos.Name = src.Pos.Kind, src.Pos.Partition, src.Pos.Name
	dst.Pos.Offset, dst.Pos.Line = src.Pos.Offset, src.Pos.Line
	dst.Dir, dst.Time, dst.Data, dst.JSON = src.Dir, src.Time, src.Data, src.JSON
	dst.FromLog, dst.Gap, dst.Joined = src.FromLog, src.Gap, src.Joined
	dst.Index, dst.Charged, dst.Logged, dst.Silent = src.Index, src.Charged, src.Logged, src.Silent
}

func (s *Sharded) flush(sh *shard) {
	if s.inlined(sh) || len(sh.cur.items) == 0 {
		return
	}
	// In this order, so that Watermark, reading open before dispatched,
	// always sees the batch as open or as dispatched.
	if sh.pending != 0 {
		sh.dispatched.Store(sh.pending)
	}
	sh.ch <- sh.cur
	sh.cur = s.pool.Get().(*batch)
	if sh.pending != 0 {
		sh.open.Store(0)
		sh.pending = 0
		s.last.Store(s.added)
	}
}

// Observe routes a message to the shard of its stream. A chat.interrupt
// also reaches every other shard, in order, to cancel streams of its
// session there.
func (s *Sharded) Observe(in *Input) {
	if s.inline && len(s.shards) == 1 {
		s.shards[0].eng.Observe(in)
		s.judged(in, false)
		return
	}
	if len(s.shards) == 1 {
		// One shard: no routing at all (its engine reads what it needs).
		s.add(s.shards[0], itemObserve, in, "", "")
		return
	}
	if !in.JSON && len(in.Data) > 0 && in.Data[0] == frame.Magic && LineBOM(in) {
		j := *in // routed as the JSON it is (the shard's engine skips the mark again)
		j.Data = j.Data[len(utf8BOM):]
		in = &j
	}
	if !in.JSON && len(in.Data) > 0 && in.Data[0] == frame.Magic {
		f, _, err := frame.Decode(in.Data)
		if err != nil {
			s.add(s.shards[0], itemObserve, in, "", "") // the shard reports it
			return
		}
		s.ObserveFrame(in, &f)
		return
	}
	key, interrupt := s.route.routeJSON(in.Data)
	if !s.assigned {
		s.assign(false)
	}
	p := partitionOf(key, s.parts)
	owner := s.owner[p]
	if !interrupt {
		s.addFrame(owner, itemObserve, in, "", "", nil, hintFor(key, in.Data, p))
		return
	}
	// An interrupt is a point of global order: everything before it is
	// judged (and logged) on every shard before it, everything after it
	// only after it; without it a sink that logs from several shards could
	// write the interrupt before the request of a stream it cancels. With
	// no shard on this goroutine the shards meet at it (rendezvous); with
	// one, this goroutine waits for the others before and after it.
	if !s.unordered && !s.inline {
		s.meetAt(owner, in)
		return
	}
	if !s.unordered {
		s.barrier()
	}
	s.add(owner, itemObserve, in, "", "")
	for _, sh := range s.shards {
		if sh != owner {
			s.add(sh, itemCancelOnly, in, "", "")
		}
	}
	if !s.unordered {
		s.barrier()
	}
}

// meetAt queues the interrupt in to its owner and a cancel to every other
// shard, all meeting at one rendezvous, and hands every batch over: a
// shard waiting at it never waits for what the reader still holds.
func (s *Sharded) meetAt(owner *shard, in *Input) {
	r := &rendezvous{}
	r.arrived.Add(len(s.shards) - 1)
	r.judged.Add(1)
	s.meet = r // (addFrame puts it in the items' ctl)
	for _, sh := range s.shards {
		kind := itemCancelOnly
		if sh == owner {
			kind = itemObserve
		}
		s.add(sh, kind, in, "", "")
	}
	s.meet = nil
	for _, sh := range s.shards {
		s.flush(sh)
	}
}

// barrier waits until every shard has processed everything queued so far.
func (s *Sharded) barrier() {
	if s.inline && len(s.shards) == 1 {
		return // everything handed over has been judged
	}
	var wg sync.WaitGroup
	for _, sh := range s.shards {
		if s.inlined(sh) {
			continue // what it was given it has judged
		}
		wg.Add(1)
		b := sh.cur
		b.ctl = append(b.ctl, ctlItem{barrier: &wg})
		b.items = append(b.items, item{kind: itemBarrier, base: -1, ctl: int32(len(b.ctl)), off: len(b.buf)})
		s.flush(sh)
	}
	wg.Wait()
}

// ObserveFrame routes a decoded frame; in.Data holds exactly its bytes.
// The shard judges the frame as decoded here, on its batch's copy of the
// bytes: a frame is decoded once.
func (s *Sharded) ObserveFrame(in *Input, f *frame.Frame) {
	if s.inline && len(s.shards) == 1 {
		s.shards[0].eng.ObserveFrame(in, f)
		s.judged(in, false)
		return
	}
	if len(s.shards) == 1 {
		s.addFrame(s.shards[0], itemFrame, in, "", "", f, partHint{})
		return
	}
	if !s.assigned {
		s.assign(true)
	}
	key := routeFrame(f)
	p := partitionOf(key, s.parts)
	s.addFrame(s.owner[p], itemFrame, in, "", "", f, hintFor(key, in.Data, p))
}

// SetWindow says that the frames handed over from now on lie in win, a
// window of the reader's mapping (nil: none) that stays mapped until the
// next call, so that a shard judges them there instead of on a copy. It
// returns once nothing of the previous window is still to be judged (the
// reader may then unmap it), with errWindowFault if a shard faulted
// reading it (the file shrank under the reader).
func (s *Sharded) SetWindow(win []byte) error {
	if s.win != nil && !(s.inline && len(s.shards) == 1) {
		s.barrier() // every shard has judged what it was given
		for _, sh := range s.shards {
			sh.badWin = nil // idle now; a new window may reuse the address
		}
	}
	s.win = win
	if s.faulted.Swap(false) {
		return errWindowFault
	}
	return nil
}

var errWindowFault = errors.New("a shard faulted reading the mapping")

// DecodeError goes to the shard of the stream named by the head of the
// message (in.Data, possibly cut at a size limit), which the shard gaps.
func (s *Sharded) DecodeError(in *Input, proto, msg string) {
	var key []byte
	if proto == ProtoE2A && len(s.shards) > 1 {
		key, s.route.buf = headKey(lineHead(in.Data), &s.route.head, s.route.buf)
	}
	s.add(s.shardOf(key, proto == ProtoEventMesh), itemDecodeError, in, proto, msg)
}

func (s *Sharded) broadcast(kind itemKind, in *Input, msg string) {
	for _, sh := range s.shards {
		s.add(sh, kind, in, "", msg)
		s.flush(sh)
	}
}

// ConnClosed ends the streams of a connection on every shard.
func (s *Sharded) ConnClosed(in *Input) { s.broadcast(itemConnClosed, in, "") }

// anyOpenIn says whether a stream of in's scope (tap and connection) is
// open on some shard, in any of its partitions' tables (e.tab is only the
// one it used last; none is made current here). Call it only right after
// a barrier, from the reader's goroutine: the shards are idle then.
func (s *Sharded) anyOpenIn(in *Input) bool {
	for _, sh := range s.shards {
		for p := range sh.eng.parts {
			t := sh.eng.parts[p].tab
			if t == nil {
				continue
			}
			for i := int32(0); i < int32(t.len()); i++ {
				if t.at(i).flags&fEnded == 0 && inScope(t.key(i), in.Tap, in.Conn) {
					return true
				}
			}
		}
	}
	return false
}

// Gap marks a connection's open streams on every shard.
func (s *Sharded) Gap(in *Input) { s.broadcast(itemGap, in, "") }

// GapAll marks every open stream on every shard (Engine.GapAll).
func (s *Sharded) GapAll() { s.broadcast(itemGapAll, &Input{}, "") }

// LeaveOpen drops every open stream on every shard (Engine.LeaveOpen).
func (s *Sharded) LeaveOpen() { s.broadcast(itemLeaveOpen, &Input{}, "") }

// Handover drops the streams of a Kafka partition (in.Tap, in.Pos) that
// went to another consumer, on every shard (openfrom.go).
func (s *Sharded) Handover(in *Input) { s.broadcast(itemHandover, in, "") }

// Hold says on every shard whether a Kafka partition (in.Tap, in.Pos), or
// a connection (Pos Kind PosConn, in.Conn), is behind (Engine.Hold).
func (s *Sharded) Hold(in *Input, behind bool) {
	if behind {
		s.broadcast(itemBehind, in, "")
	} else {
		s.broadcast(itemCaughtUp, in, "")
	}
}

// openFirst is, per Kafka partition of tap with open streams, the first
// offset of its oldest open stream. Call it only right after a barrier,
// from the reader's goroutine: the shards are idle then.
func (s *Sharded) openFirst(tap string) map[KafkaPartition]int64 {
	out := map[KafkaPartition]int64{}
	for _, sh := range s.shards {
		sh.eng.opens.openFirst(tap, out)
	}
	return out
}

// Expire runs the idle timeout on every shard.
func (s *Sharded) Expire(in *Input) { s.broadcast(itemExpire, in, "") }

// Finish ends every open stream (reason), stops the shards and waits for
// them. The Sharded run cannot be used afterwards.
func (s *Sharded) Finish(reason string, at *Input) {
	if s.closed {
		return
	}
	s.broadcast(itemFinish, at, reason)
	s.Close()
}

// Watermark is an Input.Index that every shard has passed: no finding with
// a lower or equal index can still be reported (end-of-input findings,
// index 0, aside). Safe to call from any goroutine; a printer uses it to
// write findings in input order without holding them all.
func (s *Sharded) Watermark() uint64 {
	if s.walking.Load() {
		w := ^uint64(0)
		for _, sh := range s.shards {
			w = min(w, sh.walked.Load())
		}
		return w
	}
	w := s.last.Load()
	for _, sh := range s.shards {
		if o := sh.open.Load(); o != 0 && o-1 < w {
			w = o - 1 // a batch being filled holds o
		}
		d, p := sh.dispatched.Load(), sh.processed.Load()
		if p < d && p < w {
			w = p // this shard still works on what it was given
		}
	}
	return w
}

// Flush hands every partly filled batch to its shard (a live run calls it
// when its queue is idle, so that a quiet link is judged at once).
func (s *Sharded) Flush() {
	for _, sh := range s.shards {
		s.flush(sh)
	}
}

// Close stops the shards without ending the open streams (a live run that
// is not asked to report them at shutdown) and waits for them.
func (s *Sharded) Close() {
	if s.closed {
		return
	}
	s.closed = true
	for _, sh := range s.shards {
		if !s.inlined(sh) {
			s.flush(sh)
			close(sh.ch)
		}
	}
	s.wg.Wait()
	if s.inline {
		s.last.Store(s.added) // all judged
	}
}

// anyOpen says whether a shard holds an open stream (after Close).
func (s *Sharded) anyOpen() bool {
	for _, sh := range s.shards {
		if sh.eng.anyOpen() {
			return true
		}
	}
	return false
}

// Stats adds up the shards' counters (after Finish).
func (s *Sharded) Stats() Stats {
	var t Stats
	for _, sh := range s.shards {
		st := sh.eng.Stats()
		t.Records += st.Records
		t.Joined += st.Joined
		t.Evicted += st.Evicted
		t.SplitUnchecked += st.SplitUnchecked
		t.Untracked += st.Untracked
		t.LeftOpen += st.LeftOpen
		for i := range st.Findings {
			t.Findings[i] += st.Findings[i]
		}
		for i := range st.Outcomes {
			t.Outcomes[i] += st.Outcomes[i]
		}
	}
	return t
}

// respIDSet is a bounded, shared set of response_id hashes (FIFO
// forgetting), for e2a.response_id_dup across shards.
type respIDSet struct {
	mu   sync.Mutex
	m    map[uint64]struct{}
	ring []uint64
	pos  int
}

func newRespIDSet(n int) *respIDSet {
	if n < 1 {
		n = DefaultConfig().ResponseIDWindow
	}
	return &respIDSet{m: make(map[uint64]struct{}, 1024), ring: make([]uint64, n)}
}

// seen adds h and reports whether it was there already.
func (r *respIDSet) seen(h uint64) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.m[h]; ok {
		return true
	}
	if old := r.ring[r.pos]; old != 0 {
		delete(r.m, old)
	}
	r.ring[r.pos] = h
	r.pos = (r.pos + 1) % len(r.ring)
	r.m[h] = struct{}{}
	return false
}
