package validate

import (
	"sync"
	"sync/atomic"

	"github.com/e2atap/e2atap/frame"
)

type itemKind uint8

const (
	itemObserve itemKind = iota
	itemDecodeError
	itemCancelOnly // a chat.interrupt owned by another shard: cancel only
	itemConnClosed
	itemGap
	itemExpire
	itemFinish
	itemBarrier
)

type item struct {
	kind    itemKind
	barrier *sync.WaitGroup
	in      Input
	off, n  int // Data within the batch buffer
	proto   string
	msg     string
}

type batch struct {
	items []item
	buf   []byte
}

// shardBatch bounds a batch: records and bytes.
const (
	shardBatchItems = 256
	shardBatchBytes = 256 << 10
	shardQueue      = 8 // batches queued per shard before the reader blocks
)

type shard struct {
	eng  *Engine
	ch   chan *batch
	cur  *batch
	done chan struct{}
	// processed is the highest Input.Index the shard has handled;
	// dispatched the highest it was given (both for Watermark).
	processed, dispatched atomic.Uint64
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
	parts  int // partitions of the stream state (partition.go)
	route  router
	pool   sync.Pool
	wg     sync.WaitGroup
	closed bool
	last   atomic.Uint64 // highest Input.Index handed to any shard
	// release returns an input's budget charge once its shard judged it.
	release func(int)
	// unordered: no sink depends on the order of Record calls across
	// shards, so an interrupt needs no barrier (Unordered).
	unordered bool
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
	s := &Sharded{parts: partitions(cfg.MaxStreams)}
	s.pool.New = func() any {
		return &batch{items: make([]item, 0, shardBatchItems), buf: make([]byte, 0, shardBatchBytes)}
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
	return s
}

func (s *Sharded) run(sh *shard) {
	defer s.wg.Done()
	for b := range sh.ch {
		for k := range b.items {
			it := &b.items[k]
			it.in.Data = b.buf[it.off : it.off+it.n]
			e := sh.eng
			switch it.kind {
			case itemObserve:
				e.Observe(&it.in)
			case itemDecodeError:
				e.DecodeError(&it.in, it.proto, it.msg)
			case itemCancelOnly:
				e.cancelFrom(&it.in)
			case itemConnClosed:
				e.ConnClosed(&it.in)
			case itemGap:
				e.Gap(&it.in)
			case itemExpire:
				e.Expire(it.in.Time)
			case itemFinish:
				e.Finish(it.msg, &it.in)
			case itemBarrier:
				it.barrier.Done()
			}
			if it.in.Index != 0 {
				sh.processed.Store(it.in.Index)
			}
			if it.in.Charged > 0 && s.release != nil {
				s.release(it.in.Charged)
			}
		}
		b.items, b.buf = b.items[:0], b.buf[:0]
		if cap(b.buf) > maxPooledBatch {
			b.buf = make([]byte, 0, shardBatchBytes)
		}
		s.pool.Put(b)
	}
}

// shardOf is the shard owning the partition of key.
func (s *Sharded) shardOf(key []byte) *shard {
	if len(s.shards) == 1 {
		return s.shards[0]
	}
	return s.shards[partitionOf(key, s.parts)%len(s.shards)]
}

func (s *Sharded) add(sh *shard, kind itemKind, in *Input, proto, msg string) {
	b := sh.cur
	it := item{kind: kind, in: *in, off: len(b.buf), n: len(in.Data), proto: proto, msg: msg}
	it.in.Data = nil
	b.buf = append(b.buf, in.Data...)
	b.items = append(b.items, it)
	if in.Index != 0 {
		sh.dispatched.Store(in.Index)
		s.last.Store(in.Index)
	}
	if len(b.items) >= shardBatchItems || len(b.buf) >= shardBatchBytes {
		s.flush(sh)
	}
}

func (s *Sharded) flush(sh *shard) {
	if len(sh.cur.items) == 0 {
		return
	}
	sh.ch <- sh.cur
	sh.cur = s.pool.Get().(*batch)
}

// Observe routes a message to the shard of its stream. A chat.interrupt
// also reaches every other shard, in order, to cancel streams of its
// session there.
func (s *Sharded) Observe(in *Input) {
	if len(s.shards) == 1 {
		// One shard: no routing at all (its engine reads what it needs).
		s.add(s.shards[0], itemObserve, in, "", "")
		return
	}
	if len(in.Data) > 0 && in.Data[0] == frame.Magic {
		var key []byte
		if f, _, err := frame.Decode(in.Data); err == nil {
			key = routeFrame(&f)
		}
		s.add(s.shardOf(key), itemObserve, in, "", "")
		return
	}
	key, interrupt := s.route.routeJSON(in.Data)
	owner := s.shardOf(key)
	if !interrupt {
		s.add(owner, itemObserve, in, "", "")
		return
	}
	// An interrupt is a point of global order: everything before it is
	// judged (and logged) on every shard before it, everything after it
	// only after it. Interrupts are rare (a user's action), so the wait is
	// cheap; without it a sink that logs from several shards could write
	// the interrupt before the request of a stream it cancels.
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

// barrier waits until every shard has processed everything queued so far.
func (s *Sharded) barrier() {
	var wg sync.WaitGroup
	wg.Add(len(s.shards))
	for _, sh := range s.shards {
		sh.cur.items = append(sh.cur.items, item{kind: itemBarrier, barrier: &wg, off: len(sh.cur.buf)})
		s.flush(sh)
	}
	wg.Wait()
}

// ObserveFrame routes a decoded frame (the shard decodes it again from
// in.Data, which is cheap and keeps the frame's memory in the batch).
func (s *Sharded) ObserveFrame(in *Input, f *frame.Frame) {
	if len(s.shards) == 1 {
		s.add(s.shards[0], itemObserve, in, "", "")
		return
	}
	s.add(s.shardOf(routeFrame(f)), itemObserve, in, "", "")
}

// DecodeError goes to the shard of the stream named by the head of the
// message (in.Data, possibly cut at a size limit), which the shard gaps.
func (s *Sharded) DecodeError(in *Input, proto, msg string) {
	var key []byte
	if proto == ProtoE2A && len(s.shards) > 1 {
		key, s.route.buf = headKey(lineHead(in.Data), &s.route.head, s.route.buf)
	}
	s.add(s.shardOf(key), itemDecodeError, in, proto, msg)
}

func (s *Sharded) broadcast(kind itemKind, in *Input, msg string) {
	for _, sh := range s.shards {
		s.add(sh, kind, in, "", msg)
		s.flush(sh)
	}
}

// ConnClosed ends the streams of a connection on every shard.
func (s *Sharded) ConnClosed(in *Input) { s.broadcast(itemConnClosed, in, "") }

// Gap marks a connection's open streams on every shard.
func (s *Sharded) Gap(in *Input) { s.broadcast(itemGap, in, "") }

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
	w := s.last.Load()
	for _, sh := range s.shards {
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
		s.flush(sh)
		close(sh.ch)
	}
	s.wg.Wait()
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
