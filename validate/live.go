package validate

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"
)

// LiveConfig configures a live run.
type LiveConfig struct {
	Engine Config
	// Shards: engines run in parallel, streams sharded by key.
	Shards int
	// JoinWindow: a stream first seen this soon after its tap started or
	// reconnected may start mid-stream (no seq_start; counted as joined).
	JoinWindow time.Duration
	// Queue is the capacity of the queue from the taps to the engine; a
	// full queue blocks Submit (backpressure). Taps that must never block
	// keep their own bounded queue and drop when it is full.
	Queue int
	// ExpireEvery is the longest time between two looks for idle streams.
	// They are looked for as soon as the engines say one is due
	// (Engine.IdleDue), checked every SweepCheck.
	ExpireEvery time.Duration
	// SweepCheck is how often the engines' next idle time is checked
	// (cheap: no stream is looked at); 0: 100ms, at most ExpireEvery. An
	// idle stream is judged at most this late (plus what is queued ahead
	// of it: see Run).
	SweepCheck time.Duration
	// FinishOnShutdown ends open streams at shutdown as missing_final with
	// reason shutdown; otherwise they are dropped unreported (and an
	// OpenMarker sink is told, if one was open).
	FinishOnShutdown bool
	// Now is the clock (tests inject one).
	Now func() time.Time
	// Release returns the byte-budget charge of an input (Input.Charged)
	// once it has been judged; nil when the taps charge nothing.
	Release func(int)
	// Unordered: no sink depends on the order of calls across shards (no
	// record log is written), so a chat.interrupt waits for no shard
	// (Sharded.Unordered); SetOrdered changes it while running.
	Unordered bool
}

// DefaultLiveConfig: DESIGN.md's defaults.
func DefaultLiveConfig() LiveConfig {
	return LiveConfig{Engine: DefaultConfig(), Shards: 2, JoinWindow: 30 * time.Second, Queue: 4096, ExpireEvery: time.Second}
}

type liveKind uint8

const (
	liveObserve liveKind = iota
	liveConnClosed
	liveConnected
	liveDecodeError
	liveLost
	liveSync
	liveProfile
	liveHandover
	liveOrder
	liveBehind
	liveCaughtUp
)

type liveItem struct {
	kind  liveKind
	in    Input
	proto string
	msg   string
	done  chan struct{}             // liveSync, liveProfile, liveOrder: closed once applied
	prof  *Profile                  // liveProfile
	order bool                      // liveOrder: the sinks need the order across shards
	open  *map[KafkaPartition]int64 // liveSync of SyncOpen: filled at the barrier
	owner Recycler                  // liveObserve of SubmitOwned: in.Data's, recycled once handled
}

// Recycler takes back the memory of an input's Data (SubmitOwned).
type Recycler interface{ Recycle() }

// Live feeds a Sharded run from many taps: Submit may be called from any
// goroutine; Run is the one goroutine that owns the Sharded run.
type Live struct {
	cfg     LiveConfig
	q       liveQueue
	run     *Sharded
	started map[string]time.Time // tap → last (re)connect
	// last is the tap of the record handled last and its entry of
	// started (lastOK: it has one): a tap's records come in runs, and the
	// map's lookup, a hash of the tap's name, cost the engine's goroutine
	// some 150 instructions a record. Every write of started sets it.
	last      string
	lastStart time.Time
	lastOK    bool
	index     uint64
	latest    time.Time // newest capture time handed to the shards
	// Sweeps: how many were sent to the shards, and when the last was.
	sweeps    uint64
	lastSweep time.Time
	// lost: the scopes (tap, connection) with a loss since their last
	// record. Their next record carries Gap, so that the record log marks
	// it ("gap") and a replay of the log gaps the scope where the live run
	// did (without it, a replay judged across the loss: e2a.seq_gap where
	// the live run reported nothing). A connection's entry goes with its
	// end (marker); at most one entry per scope.
	lost   map[lostScope]struct{}
	marker LossMarker // the sink's, if it marks losses
	opener OpenMarker // the sink's, if it marks open streams left
}

// lostScope is the scope of a loss: a tap and a connection ("" for the
// streams of a tap without connections).
type lostScope struct{ tap, conn string }

// defaultSweepCheck is LiveConfig.SweepCheck's default.
const defaultSweepCheck = 100 * time.Millisecond

// NewLive prepares a live run reporting to sink.
func NewLive(cfg LiveConfig, sink Sink) *Live {
	d := DefaultLiveConfig()
	if cfg.Queue < 1 {
		cfg.Queue = d.Queue
	}
	if cfg.ExpireEvery <= 0 {
		cfg.ExpireEvery = d.ExpireEvery
	}
	if cfg.SweepCheck <= 0 {
		cfg.SweepCheck = defaultSweepCheck
	}
	cfg.SweepCheck = min(cfg.SweepCheck, cfg.ExpireEvery)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	l := &Live{cfg: cfg, q: newLiveQueue(cfg.Queue), run: NewSharded(cfg.Shards, cfg.Engine, sink), started: map[string]time.Time{}}
	l.marker, _ = sink.(LossMarker)
	l.opener, _ = sink.(OpenMarker)
	l.run.OnRelease(cfg.Release)
	l.run.unordered = cfg.Unordered
	// Run is also a shard: it judges the streams of shard 0's (smaller)
	// share itself and hands only the others over, so that fewer records
	// are copied and cross cores (Sharded.Inline). Not where the sinks
	// need interrupts in order across several shards (a record log): Run
	// would then wait at every interrupt for the other shards to empty
	// their queues, twice, while the shards that all run on goroutines of
	// their own meet at it without Run (rendezvous). On 2 CPUs with the
	// record log, logdir held 100 k lines/s inline and 150 k without.
	// (An order turned on later, by a reload, is kept by the barriers.)
	if cfg.Unordered || len(l.run.shards) == 1 {
		l.run.Inline()
	}
	return l
}

func (l *Live) submit(ctx context.Context, it liveItem) error { return l.q.push(ctx, &it) }

// liveQueue is the queue from the taps to Run: the taps append under a
// mutex and Run takes everything queued at once, so that a burst costs
// one wake-up of Run and no channel operation per message. It holds at
// most limit items; push waits while it is full (backpressure).
type liveQueue struct {
	mu    sync.Mutex
	items []liveItem
	limit int
	ready chan struct{} // a token: the queue became non-empty
	room  chan struct{} // a token: a full queue was taken
}

func newLiveQueue(limit int) liveQueue {
	return liveQueue{limit: limit, ready: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

// notify leaves a token in c unless one is there already.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (q *liveQueue) push(ctx context.Context, it *liveItem) error {
	woken, err := q.waitRoom(ctx)
	if err != nil {
		return err
	}
	q.items = append(q.items, *it)
	q.added(woken)
	return nil
}

// pushInput queues a record (liveObserve) written into the queue in
// place: no liveItem is built and copied on the way (Submit and push
// copied its Input twice more).
func (q *liveQueue) pushInput(ctx context.Context, in *Input, owner Recycler) error {
	woken, err := q.waitRoom(ctx)
	if err != nil {
		return err
	}
	q.items = append(q.items, liveItem{})
	it := &q.items[len(q.items)-1]
	it.kind, it.in, it.owner = liveObserve, *in, owner
	q.added(woken)
	return nil
}

// waitRoom waits until the queue has room for one more item and returns with
// q.mu held (woken: it waited for a token in q.room), or with ctx's error
// and q.mu not held.
func (q *liveQueue) waitRoom(ctx context.Context) (woken bool, err error) {
	q.mu.Lock()
	for len(q.items) >= q.limit {
		// Only take removes items, and it leaves a token in room when it
		// takes a full queue: a waiter cannot miss it.
		q.mu.Unlock()
		select {
		case <-q.room:
			woken = true
		case <-ctx.Done():
			return false, ctx.Err()
		}
		q.mu.Lock()
	}
	return woken, nil
}

// added ends a push: it lets go of q.mu and wakes Run for the first item
// and, if there is room left, the next producer waiting.
func (q *liveQueue) added(woken bool) {
	first, more := len(q.items) == 1, len(q.items) < q.limit
	q.mu.Unlock()
	if first {
		notify(q.ready)
	}
	if woken && more {
		notify(q.room) // the next waiter, if any
	}
}

// take returns everything queued, leaving spare (emptied) as the queue.
func (q *liveQueue) take(spare []liveItem) []liveItem {
	q.mu.Lock()
	got := q.items
	q.items = spare[:0]
	q.mu.Unlock()
	if len(got) >= q.limit {
		notify(q.room)
	}
	return got
}

func (q *liveQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Submit hands one message to the engine; it blocks while the queue is
// full (or until ctx is done). The Live owns in.Data afterwards.
func (l *Live) Submit(ctx context.Context, in Input) error {
	return l.q.pushInput(ctx, &in, nil)
}

// SubmitOwned is Submit for a record whose Data belongs to owner (a
// buffer its tap's client reuses): Run calls owner.Recycle once the record
// is handled (judged by the inline shard, or copied into another shard's
// batch: the engine keeps no Data past either), and nothing reads Data
// after that. Submit's error means the Live did not take it: owner is the
// caller's again.
func (l *Live) SubmitOwned(ctx context.Context, in Input, owner Recycler) error {
	return l.q.pushInput(ctx, &in, owner)
}

// ConnClosed ends the streams of a connection (reason disconnect).
func (l *Live) ConnClosed(ctx context.Context, tap, conn string, at time.Time) error {
	return l.submit(ctx, liveItem{kind: liveConnClosed, in: Input{Tap: tap, Conn: conn, Time: at}})
}

// Connected opens the join window of a tap (it started or reconnected).
func (l *Live) Connected(ctx context.Context, tap string, at time.Time) error {
	return l.submit(ctx, liveItem{kind: liveConnected, in: Input{Tap: tap, Time: at}})
}

// Lost reports a loss: the tap could not see some messages of the scope
// conn ("" for the streams of a tap without connections). Every open
// stream of that scope is gapped: no sequence rule for its next record and
// no missing_final for it. A loss is never a finding.
func (l *Live) Lost(ctx context.Context, tap, conn string, at time.Time) error {
	return l.submit(ctx, liveItem{kind: liveLost, in: Input{Tap: tap, Conn: conn, Time: at}})
}

// DecodeError reports input a tap could not hand over whole (an oversize
// log line, say): e2a.decode or frame.decode.
func (l *Live) DecodeError(ctx context.Context, in Input, proto, msg string) error {
	return l.submit(ctx, liveItem{kind: liveDecodeError, in: in, proto: proto, msg: msg})
}

// Sync returns once everything submitted before it has been judged and
// handed to the sinks (a barrier through the queue and every shard): a
// caller that then flushes the sinks has every verdict so far on disk, so
// that a tap may commit its position (DESIGN.md, "Durability order").
func (l *Live) Sync(ctx context.Context) error {
	return l.await(ctx, liveItem{kind: liveSync, done: make(chan struct{})})
}

// SyncOpen is Sync that also says what a Kafka tap may commit: per
// partition of tap with open streams, the offset of the oldest open
// stream's first record, as of the barrier (so that it and what Sync
// waited for describe the same point). A partition with no open stream is
// not in the map: everything read from it so far may be committed.
func (l *Live) SyncOpen(ctx context.Context, tap string) (map[KafkaPartition]int64, error) {
	var open map[KafkaPartition]int64
	it := liveItem{kind: liveSync, done: make(chan struct{}), in: Input{Tap: tap}, open: &open}
	if err := l.await(ctx, it); err != nil {
		return nil, err
	}
	return open, nil
}

// Handover drops, with no verdict, the streams of one Kafka partition
// that went to another consumer of the group (a rebalance): the next
// owner reads them from their start, since the commit waited for them
// (SyncOpen). Unlike Lost, no other stream of the tap is touched.
func (l *Live) Handover(ctx context.Context, tap, topic string, partition int32, at time.Time) error {
	return l.submit(ctx, liveItem{kind: liveHandover, in: Input{Tap: tap, Time: at, Pos: Position{Kind: PosKafka, Name: topic, Partition: partition}}})
}

// Behind says whether a Kafka partition of tap holds records the tap has
// not read yet (Engine.Hold): while it does, the streams opened on it do
// not go idle. It travels in order with the records: a partition caught up
// is told after the records read up to its end.
func (l *Live) Behind(ctx context.Context, tap, topic string, partition int32, behind bool, at time.Time) error {
	kind := liveCaughtUp
	if behind {
		kind = liveBehind
	}
	return l.submit(ctx, liveItem{kind: kind, in: Input{Tap: tap, Time: at, Pos: Position{Kind: PosKafka, Name: topic, Partition: partition}}})
}

// ConnBehind says whether the tap is behind on a connection (Engine.Hold):
// its relay is blocked writing to a peer that does not read, and what the
// other peer sent meanwhile is not read yet. While it is, the streams of
// the connection do not go idle; its end (ConnClosed) ends them as usual.
func (l *Live) ConnBehind(ctx context.Context, tap, conn string, behind bool, at time.Time) error {
	kind := liveCaughtUp
	if behind {
		kind = liveBehind
	}
	return l.submit(ctx, liveItem{kind: kind, in: Input{Tap: tap, Conn: conn, Time: at, Pos: Position{Kind: PosConn, Name: conn}}})
}

// SetProfile makes p the profile (rule severities) of everything submitted
// after it; what was submitted before is judged with the old one. Streams
// in flight keep their state. It returns once every shard uses p.
func (l *Live) SetProfile(ctx context.Context, p Profile) error {
	return l.await(ctx, liveItem{kind: liveProfile, done: make(chan struct{}), prof: &p})
}

// SetOrdered says whether a sink depends on the order of calls across
// shards from now on (a record log was opened: true; the last one was
// closed: false); see LiveConfig.Unordered. It returns once it applies:
// everything submitted before it has been judged and handed to the sinks,
// so that a record log opened after it sees interrupts in their order.
func (l *Live) SetOrdered(ctx context.Context, ordered bool) error {
	return l.await(ctx, liveItem{kind: liveOrder, done: make(chan struct{}), order: ordered})
}

func (l *Live) await(ctx context.Context, it liveItem) error {
	if err := l.submit(ctx, it); err != nil {
		return err
	}
	select {
	case <-it.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Untracked is Stats.Untracked so far: records of streams the engines
// could not track (their stream tables had no memory for them), a loss.
// Safe to call from any goroutine while Run runs.
func (l *Live) Untracked() uint64 {
	var n uint64
	for _, sh := range l.run.shards {
		n += sh.eng.untracked.Load()
	}
	return n
}

// Panics is how many messages were skipped for a panic while they were
// judged (Config.OnPanic). Safe to call from any goroutine.
func (l *Live) Panics() uint64 { return l.run.Panics() }

// handleAll handles items in order. With Config.OnPanic, a panic while
// one is handled (judged by the inline shard, or routed) skips that one
// (Sharded.survived) and the rest are handled: the recovery is set up once
// for the batch (handleFrom), not for each item.
func (l *Live) handleAll(items []liveItem) {
	if l.run.onPanic == nil {
		for i := range items {
			l.handle(&items[i])
			if o := items[i].owner; o != nil {
				o.Recycle()
			}
		}
		return
	}
	for i := 0; i < len(items); {
		i = l.handleFrom(items, i)
	}
}

// handleFrom handles items from i on and returns len(items), or, after
// a panic, the index after the item that panicked.
func (l *Live) handleFrom(items []liveItem, i int) (next int) {
	defer func() {
		if v := recover(); v != nil {
			in := &items[i].in
			if l.run.inline {
				l.run.survived(l.run.shards[0].eng, in, v)
			} else {
				// No engine runs here: its shard is told of the gap.
				l.run.survivedRouted(in, v)
			}
			// Its charge was to be released once judged (Sharded.judged).
			if in.Charged > 0 && l.run.release != nil {
				l.run.release(in.Charged)
			}
			next = i + 1
		}
	}()
	for ; i < len(items); i++ {
		l.handle(&items[i])
		// (One that panicked is not recycled: its buffer is left to
		// the collector, whatever the engine made of it.)
		if o := items[i].owner; o != nil {
			o.Recycle()
		}
	}
	return i
}

// Release returns a budget charge of input that is not submitted after
// all (a record the tap read again after a crash, say).
func (l *Live) Release(n int) {
	if n > 0 && l.cfg.Release != nil {
		l.cfg.Release(n)
	}
}

// Run processes submitted messages until ctx is done, then drains what was
// queued and stops the shards. It returns the final counters.
//
// Idle streams: every SweepCheck, Run asks the engines when their next
// stream goes idle and sends them an Expire once that time has come (or
// ExpireEvery has passed since the last), so that a stream is judged
// within SweepCheck of its idle time rather than up to a whole
// ExpireEvery later, and the streams are looked at only when one is due.
// While records wait in the queue, the time is that of the newest record
// handed to the shards, not the wall clock: a backlog must not make
// streams look idle whose records are queued, so under a backlog an idle
// stream is judged as late as the queue is long (in time).
func (l *Live) Run(ctx context.Context) Stats {
	tick := time.NewTicker(l.cfg.SweepCheck)
	defer tick.Stop()
	l.lastSweep = l.cfg.Now()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	lingered := false // since the last Flush
	var items []liveItem
	for {
		items = l.q.take(items)
		if len(items) > 0 {
			l.handleAll(items)
			clear(items) // no Data kept past its judgement
			// A steady load never leaves the queue empty: look at the
			// clock and ctx between two takes.
			select {
			case <-tick.C:
				l.sweep()
			case <-ctx.Done():
				return l.stop()
			default:
			}
			continue
		}
		// Idle: what is batched is judged now, so that a quiet link is
		// judged at once; but first, once, a short wait for more (a tap
		// delivers in bursts, one per read from its socket): batches
		// that span bursts wake the shards less often.
		if !lingered && l.batched() {
			lingered = true
			linger.Reset(liveLinger)
			select {
			case <-l.q.ready:
				linger.Stop()
				continue
			case <-linger.C:
			case <-ctx.Done():
				return l.stop()
			}
		}
		lingered = false
		l.run.Flush()
		select {
		case <-l.q.ready:
		case <-tick.C:
			l.sweep()
		case <-ctx.Done():
			return l.stop()
		}
	}
}

// liveLinger is how long an idle Run waits for more records before it
// hands partly filled batches to the shards, at most once between two
// hand-overs: a record is judged at most this much later than without it.
const liveLinger = 500 * time.Microsecond

// batched says whether a shard's batch holds something not handed over.
func (l *Live) batched() bool {
	for _, sh := range l.run.shards {
		if sh.cur != nil && len(sh.cur.items) > 0 {
			return true
		}
	}
	return false
}

// sweep sends the shards an Expire if one is due; while records are
// queued the time is that of the newest handed over (see Run).
func (l *Live) sweep() {
	now := l.cfg.Now()
	if l.q.len() > 0 && !l.latest.IsZero() && l.latest.Before(now) {
		now = l.latest
	}
	if !l.sweepDue(now) {
		return
	}
	l.sweeps++
	l.lastSweep = l.cfg.Now()
	l.run.Expire(&Input{Time: now})
}

// stop judges what was queued, then ends the shards.
func (l *Live) stop() Stats {
	var items []liveItem
	for {
		if items = l.q.take(items); len(items) == 0 {
			break
		}
		for i := range items {
			l.handle(&items[i])
			if o := items[i].owner; o != nil {
				o.Recycle()
			}
		}
		clear(items)
	}
	if l.cfg.FinishOnShutdown {
		now := l.cfg.Now()
		l.markLost(now)
		l.run.Finish(ReasonShutdown, &Input{Time: now})
	} else {
		l.run.Close()
		if l.opener != nil && l.run.anyOpen() {
			// Dropped unreported: the record log says so (OpenMarker).
			l.opener.OpenLeft()
		}
	}
	return l.run.Stats()
}

// markLost tells the sinks, before the streams open at the stop end, of
// the losses no record carried (lost) whose scope still holds an open
// stream, as a connection's end does: no record of the scope followed the
// loss, so the record log has no "gap" for it, and a replay that did not
// gap those streams ended them as missing_final at its end of input, where
// the live run (which gapped them) reports nothing. In a fixed order (by
// tap and connection), as the log is written.
func (l *Live) markLost(at time.Time) {
	if l.marker == nil || len(l.lost) == 0 {
		return
	}
	scopes := slices.SortedFunc(maps.Keys(l.lost), func(a, b lostScope) int {
		return cmp.Or(cmp.Compare(a.tap, b.tap), cmp.Compare(a.conn, b.conn))
	})
	clear(l.lost)
	l.run.barrier()
	for _, sc := range scopes {
		in := &Input{Tap: sc.tap, Conn: sc.conn, Time: at}
		if l.run.anyOpenIn(in) {
			l.marker.LossMark(in)
		}
	}
}

// sweepDue says whether to send the shards an Expire at now: none is
// still on its way (a sweep queued behind a backlog is not sent again),
// and a stream is due or ExpireEvery has passed.
func (l *Live) sweepDue(now time.Time) bool {
	due := false
	for _, sh := range l.run.shards {
		at, none, done := sh.eng.IdleDue()
		if done < l.sweeps {
			return false
		}
		due = due || (!none && !now.Before(at))
	}
	return due || l.cfg.Now().Sub(l.lastSweep) >= l.cfg.ExpireEvery
}

func (l *Live) handle(it *liveItem) {
	in := &it.in
	switch it.kind {
	case liveConnected:
		l.setStarted(in.Tap, in.Time)
		return
	case liveConnClosed:
		sc := lostScope{in.Tap, in.Conn}
		_, lost := l.lost[sc]
		delete(l.lost, sc)
		if lost && l.marker != nil {
			// No record of the connection will carry the loss: the
			// sinks are told, after its records and its streams' ends,
			// if it cut a stream still open (one that ended before,
			// at its idle timeout say, was judged: a replay that
			// gapped it would not report its missing_final).
			l.run.barrier()
			lost = l.run.anyOpenIn(in)
		}
		l.run.ConnClosed(in)
		if lost && l.marker != nil {
			l.run.barrier()
			l.marker.LossMark(in)
		}
		return
	case liveLost:
		l.run.Gap(in)
		if l.lost == nil {
			l.lost = make(map[lostScope]struct{})
		}
		l.lost[lostScope{in.Tap, in.Conn}] = struct{}{}
		return
	case liveHandover:
		l.run.Handover(in)
		return
	case liveBehind, liveCaughtUp:
		l.run.Hold(in, it.kind == liveBehind)
		return
	case liveSync:
		l.run.barrier()
		if it.open != nil {
			*it.open = l.run.openFirst(in.Tap)
		}
		close(it.done)
		return
	case liveProfile:
		l.setProfile(*it.prof)
		close(it.done)
		return
	case liveOrder:
		l.run.barrier()
		l.run.unordered = !it.order
		close(it.done)
		return
	}
	l.index++
	in.Index = l.index
	if in.Time.After(l.latest) {
		l.latest = in.Time
	}
	if in.Tap != l.last {
		l.last = in.Tap
		l.lastStart, l.lastOK = l.started[in.Tap]
	}
	if t, ok := l.lastStart, l.lastOK; !ok {
		// The first message of a tap opens its window: traffic was
		// already flowing when the tap came up.
		l.setStarted(in.Tap, in.Time)
		in.Joined = l.cfg.JoinWindow > 0
	} else if l.cfg.JoinWindow > 0 && in.Time.Sub(t) < l.cfg.JoinWindow {
		in.Joined = true
	}
	if len(l.lost) > 0 {
		sc := lostScope{in.Tap, in.Conn}
		if _, ok := l.lost[sc]; ok {
			delete(l.lost, sc)
			in.Gap = true
		}
	}
	if in.Gap {
		// The scope alone: every shard releases the charge of, and
		// moves its watermark to, what it is handed, and the record's
		// are its own item's (handed with the record itself, its charge
		// went back once per shard more: a negative budget after every
		// drop, which let the taps hold more than the budget).
		l.run.Gap(&Input{Tap: in.Tap, Conn: in.Conn, Time: in.Time})
	}
	if it.kind == liveDecodeError {
		l.run.DecodeError(in, it.proto, it.msg)
		return
	}
	l.run.Observe(in)
}

// setStarted opens tap's join window at t.
func (l *Live) setStarted(tap string, t time.Time) {
	l.started[tap] = t
	l.last, l.lastStart, l.lastOK = tap, t, true
}

// setProfile gives every shard's engine the profile p. The shards are
// idle during it (after a barrier, before the next batch): the channel
// sends order the change with what they judge next.
func (l *Live) setProfile(p Profile) {
	l.run.barrier()
	l.cfg.Engine.Profile = p
	var shared *respIDSet
	if p.Severity[RuleE2AResponseIDDup] != Off && len(l.run.shards) > 1 {
		// response_id uniqueness is global: one set for all shards, the
		// one they have if the rule was on before.
		shared = l.run.shards[0].eng.shared
		if shared == nil {
			shared = newRespIDSet(l.cfg.Engine.ResponseIDWindow)
		}
	}
	for _, sh := range l.run.shards {
		e := sh.eng
		e.prof, e.cfg.Profile = p, p
		if p.Severity[RuleE2AResponseIDDup] != Off && e.respIDs == nil {
			e.respIDs = newRespIDSet(l.cfg.Engine.ResponseIDWindow)
		}
		if shared != nil {
			e.shared = shared
		}
	}
}
