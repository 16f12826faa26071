package natstap

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go"
)

// Queue capacities (see doc.go for their overflow policies).
const (
	ctlQueueSize = 16 // control messages; full: coalesce (drop the newest Reconnected)
	// rejoinEvery coalesces the join windows that losses open: one per
	// this much time is enough (the window is much longer).
	rejoinEvery = 100 * time.Millisecond
)

// ErrAlreadyRunning is returned by Run when the tap is already running.
var ErrAlreadyRunning = errors.New("nats tap: already running")

// Tap is a NATS source. Create it with New; Run it once at a time.
type Tap struct {
	cfg     Config
	stats   *tap.Stats
	log     *slog.Logger
	running atomic.Bool
}

var _ tap.Source = (*Tap)(nil)

// New checks cfg (zero fields take their defaults) and returns a tap that
// reports into stats. It does not connect: Run does.
func New(cfg Config, stats *tap.Stats, logger *slog.Logger) (*Tap, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if stats == nil {
		return nil, fmt.Errorf("nats tap %q: stats is nil", cfg.Name)
	}
	if logger == nil {
		return nil, fmt.Errorf("nats tap %q: logger is nil", cfg.Name)
	}
	return &Tap{cfg: cfg, stats: stats, log: logger.With("tap", cfg.Name)}, nil
}

// Config returns the tap's config with defaults applied.
func (t *Tap) Config() Config { return t.cfg }

// run is the state of one Run call.
type run struct {
	*Tap
	ctx context.Context
	nc  *nats.Conn
	// emitMu serializes emit: core callbacks call it themselves (no
	// hand-off: a burst waits in the client's pending buffer), Run's
	// goroutine calls it for control and JetStream messages.
	emitMu   sync.Mutex
	emitFn   tap.EmitFunc
	lastJoin time.Time // when a loss last opened the join window (under emitMu)
	failMu   sync.Mutex
	failErr  error        // emit's first error; Run returns it
	slowLog  atomic.Int64 // when a slow consumer was last logged (Unix ns)
	// refused: the server's refusal (credentials, TLS) was logged in this
	// outage; cleared on connect.
	refused atomic.Bool
	cancel  context.CancelFunc
	ctl     chan tap.Message // control: connection handlers → emit
	outage  *tap.Outage

	// reconn is closed at a reconnect (and replaced). A pull request sent
	// before may be gone (in a cluster it may wait on a server the client
	// no longer talks to; on a single server it survives a blip, see
	// TestJetStreamResumesRightAfterABlip), so the stream goroutines start
	// over from their cursor at once, never waiting for two missed
	// heartbeats.
	reconnMu sync.Mutex
	reconn   chan struct{}

	// cursors are the JetStream cursors saved by the last run
	// (Config.Positions); emitted, per stream, the sequence after the
	// last message emitted (what saver writes); saveFailing: a failed save
	// was logged (saver's goroutine only).
	cursors     cursors
	emitted     map[string]*atomic.Uint64
	saveFailing bool

	mu   sync.Mutex
	subs []*coreSub
}

// Run connects, subscribes and emits until ctx is done (then it returns
// nil) or emit fails (then it returns emit's error). Connection problems are
// never fatal: the client connects and reconnects by itself, even when the
// server is down at start, and Stats.UpstreamUp says whether it is
// connected.
func (t *Tap) Run(ctx context.Context, emit tap.EmitFunc) error {
	if !t.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer t.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	r := &run{
		Tap:    t,
		ctx:    ctx,
		emitFn: emit,
		cancel: cancel,
		ctl:    make(chan tap.Message, ctlQueueSize),
		reconn: make(chan struct{}),
		outage: tap.NewOutage(t.log, "nats server", redactURLs(t.cfg.URL)),
	}
	pendingBytes := t.cfg.PendingBytes
	if pendingBytes == 0 {
		pendingBytes = defaultPendingBytes(t.cfg.Budget, len(t.cfg.Subjects))
	}
	security, err := t.securityOptions()
	if err != nil {
		return fmt.Errorf("nats tap %q: %w", t.cfg.Name, err)
	}
	closed := make(chan struct{})
	nc, err := nats.Connect(t.cfg.URL, append(security,
		nats.Name("e2atap tap "+t.cfg.Name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			return backoff(attempts-1, t.cfg.ReconnectWait, t.cfg.ReconnectMaxWait)
		}),
		nats.ConnectHandler(func(c *nats.Conn) { r.connected(c, false) }),
		nats.ReconnectHandler(func(c *nats.Conn) { r.connected(c, true) }),
		nats.DisconnectErrHandler(func(c *nats.Conn, err error) { r.disconnected(c, err) }),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			// A failed connect or reconnect attempt (also at start, with
			// RetryOnFailedConnect): unreachable, or refused (credentials,
			// TLS).
			reason := connectErrorReason(err)
			t.stats.Error(reason)
			r.outage.Failed(err)
			if reason == tap.ErrHandshake {
				r.logRefused(err)
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrSlowConsumer) {
				// Counted and marked in order by the subscription's
				// callback; logged here, at most once a minute.
				if now := time.Now().UnixNano(); now-r.slowLog.Load() >= int64(tap.OutageEvery) {
					r.slowLog.Store(now)
					subject := ""
					if sub != nil {
						subject = sub.Subject
					}
					t.log.Warn("nats slow consumer: the client dropped messages past its pending limits (logged at most once a minute)",
						"subject", subject, "pending_bytes_limit", pendingBytes)
				}
				return
			}
			if sub == nil && connectErrorReason(err) == tap.ErrHandshake {
				// A reconnect refused (credentials rotated on the server,
				// expired): retried, counted, and logged as an outage,
				// rate-limited, not once per attempt.
				t.stats.Error(tap.ErrHandshake)
				r.outage.Failed(err)
				r.logRefused(err)
				return
			}
			t.log.Warn("nats async error", "err", err)
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
	)...)
	if err != nil {
		// With RetryOnFailedConnect only a bad option or URL gets here.
		return fmt.Errorf("nats tap %q: connect: %w", t.cfg.Name, tap.RedactErr(err))
	}
	r.nc = nc
	t.stats.Up.Store(true)

	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // stream goroutines delete their consumers while nc is open
		hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), finalSaveWait)
		r.handOverAll(hctx) // after the last save
		hcancel()
		nc.Close()
		<-closed
		t.stats.Up.Store(false)
		t.stats.UpstreamUp.Store(false)
	}()

	for _, subj := range t.cfg.Subjects {
		cs := &coreSub{run: r, ready: make(chan struct{})}
		var sub *nats.Subscription
		if t.cfg.Queue != "" {
			sub, err = nc.QueueSubscribe(subj, t.cfg.Queue, cs.onMsg)
		} else {
			sub, err = nc.Subscribe(subj, cs.onMsg)
		}
		if err != nil {
			return fmt.Errorf("nats tap %q: subscribe %q: %w", t.cfg.Name, subj, err)
		}
		if afterSubscribe != nil {
			afterSubscribe()
		}
		cs.sub = sub
		close(cs.ready)
		if err := sub.SetPendingLimits(t.cfg.PendingMsgs, pendingBytes); err != nil {
			return fmt.Errorf("nats tap %q: pending limits %q: %w", t.cfg.Name, subj, err)
		}
		r.mu.Lock()
		r.subs = append(r.subs, cs)
		r.mu.Unlock()
	}
	r.cursors = cursors{next: map[string]uint64{}, judged: map[string]uint64{}}
	r.emitted = map[string]*atomic.Uint64{}
	if t.cfg.Positions != "" && len(t.cfg.Streams) > 0 {
		if r.cursors, err = loadCursors(t.cfg.Positions); err != nil {
			// Read from StartSeq (or new) as without a file; the next
			// save writes a good one.
			t.stats.Error(tap.ErrPositions)
			t.log.Warn("jetstream cursors cannot be read: the streams are read from start_seq (or what is stored from now on)", "path", t.cfg.Positions, "err", err)
			r.cursors = cursors{next: map[string]uint64{}, judged: map[string]uint64{}}
		}
		for _, sc := range t.cfg.Streams {
			r.emitted[sc.Stream] = new(atomic.Uint64)
		}
	}
	var streams sync.WaitGroup
	for i, sc := range t.cfg.Streams {
		streams.Go(func() { r.watchStream(ctx, i, sc) })
	}
	wg.Go(streams.Wait)
	if len(r.emitted) > 0 {
		wg.Go(func() { r.saver(ctx, streams.Wait) })
	}

	for {
		var m tap.Message
		select {
		case <-ctx.Done():
			r.failMu.Lock()
			defer r.failMu.Unlock()
			if r.failErr != nil {
				return fmt.Errorf("nats tap %q: emit: %w", t.cfg.Name, r.failErr)
			}
			return nil
		case m = <-r.ctl:
		}
		r.emit(m)
	}
}

// emit hands one message to the engine, one at a time whoever calls; false
// when the tap is stopping (emit failed, or ctx is done). A message that
// was not handed over gives its charge back.
func (r *run) emit(m tap.Message) bool {
	r.emitMu.Lock()
	var err error
	if (m.Lost || m.Gap) && m.Time.Sub(r.lastJoin) >= rejoinEvery {
		// What was lost may hold the start of a stream first seen after
		// it: open the join window, as after a reconnect, so that such a
		// stream may start mid-stream.
		r.lastJoin = m.Time
		err = r.emitFn(r.ctx, tap.Message{Tap: r.cfg.Name, Time: m.Time, Reconnected: true})
	}
	if err == nil {
		err = r.emitFn(r.ctx, m)
	}
	r.emitMu.Unlock()
	if err == nil {
		return true
	}
	r.cfg.Budget.Release(m.Charged)
	if r.ctx.Err() == nil {
		r.failMu.Lock()
		if r.failErr == nil {
			r.failErr = err
		}
		r.failMu.Unlock()
		r.cancel()
	}
	return false
}

// defaultPendingBytes sizes the client's pending buffer of each core
// subscription: the budget split over the subscriptions (what waits in the
// client may be as much as what waits for the engine), or 64 MiB each
// without a budget.
func defaultPendingBytes(b *tap.Budget, subs int) int {
	const noBudget = 64 << 20
	if b.Limit() == 0 || subs == 0 {
		return noBudget
	}
	return int(max(b.Limit()/int64(subs), 1<<20))
}

// logRefused says once an outage that the server refuses the tap (the
// outage itself may have started as a plain disconnect, and its later
// lines come at most once a minute): the operator reads the cause at once.
func (r *run) logRefused(err error) {
	if r.refused.CompareAndSwap(false, true) {
		r.log.Warn("nats server refused the connection: check the tap's credentials and tls (retried with backoff)",
			"addr", redactURLs(r.cfg.URL), "err", tap.RedactErr(err))
	}
}

// connected runs on the client's callback goroutine after the first connect
// and after every reconnect.
func (r *run) connected(nc *nats.Conn, again bool) {
	r.stats.UpstreamUp.Store(true)
	r.refused.Store(false)
	r.outage.Reachable(redactURLs(nc.ConnectedUrl()))
	if again {
		r.stats.Reconnects.Add(1)
		r.reconnMu.Lock()
		close(r.reconn)
		r.reconn = make(chan struct{})
		r.reconnMu.Unlock()
	}
	select {
	case r.ctl <- tap.Message{Tap: r.cfg.Name, Time: time.Now(), Reconnected: true}:
	default: // a Reconnected is already queued: the join window opens anyway
	}
	r.mu.Lock()
	core := len(r.subs) > 0
	r.mu.Unlock()
	if again && core {
		// What was published while the tap was away is lost (core NATS
		// does not replay it). The loss is told again in order before the
		// first message after it (coreSub's windows); told now too, so that
		// a stream it cut whose rest never comes is no e2a.missing_final
		// when nothing at all is published after the reconnect. (Early, it
		// may come before messages still pending from before the
		// disconnect: their streams are not judged across it, which can
		// hide a finding, never make one.)
		select {
		case r.ctl <- tap.Message{Tap: r.cfg.Name, Time: time.Now(), Lost: true, LossReason: tap.DropReconnect}:
		case <-r.ctx.Done():
		}
	}
	// Back (or, at the first connect, a hold that an earlier run of this
	// tap left, stopped while its server was gone, is let go).
	r.hold(false)
}

// hold tells the engine that the tap's streams wait for a server that is
// gone (behind), or that it is back: while it is gone, what its publishers
// send is lost (core NATS) or waits in the server (JetStream), and a
// stream must not go idle for it: an outage longer than idle_timeout made
// every stream open across it e2a.missing_final, and the rest of each, read
// after the reconnect, e2a.after_final. Back, the streams are held one
// idle timeout more (Engine.Hold); the loss itself is told in order, before
// the first message after it (coreSub's windows).
func (r *run) hold(behind bool) {
	m := tap.Message{Tap: r.cfg.Name, Pos: tap.Position{Kind: tap.PosConn}, Time: time.Now(), Progress: true, Behind: behind}
	select {
	case r.ctl <- m:
	case <-r.ctx.Done():
	}
}

// disconnected runs on the client's callback goroutine when an established
// connection breaks. Core NATS does not replay what is published until the
// client is back: every subscription has lost messages from the point
// where its old connection ended.
func (r *run) disconnected(nc *nats.Conn, err error) {
	if r.ctx.Err() != nil || nc.IsClosed() {
		return // our own Close
	}
	r.stats.UpstreamUp.Store(false)
	r.stats.Error(tap.ErrDisconnect)
	r.stats.Drop(tap.DropReconnect)
	if err == nil {
		err = errors.New("connection closed")
	}
	r.outage.Failed(err)
	r.mu.Lock()
	subs := append([]*coreSub(nil), r.subs...)
	r.mu.Unlock()
	for _, cs := range subs {
		cs.markDisconnect(nc)
	}
	r.hold(true)
}

// reconnected returns a channel closed at the next reconnect.
func (r *run) reconnected() <-chan struct{} {
	r.reconnMu.Lock()
	defer r.reconnMu.Unlock()
	return r.reconn
}

// coreSub is one core subscription and where its losses are, counted in
// callbacks: the client hands a subscription's messages to its callback one
// at a time, in the order they arrived, so the n-th callback is the n-th
// message the subscription received.
type coreSub struct {
	*run
	// sub is set once Subscribe has returned, and ready closed then: the
	// client may start the callback before that (a message already on its
	// way, as a publisher's steady traffic is), and the callback waits for
	// ready before it reads sub.
	sub   *nats.Subscription
	ready chan struct{}

	// Written by the callback goroutine only.
	n        atomic.Uint64 // callbacks started
	dropped  int           // the client's drop count when last looked at
	gapNext  bool          // an oversize message was skipped: the next one carries Gap
	lostOpen bool          // inside a loss window: its first message was preceded by Lost

	mu      sync.Mutex
	windows []lossWindow // pending loss windows, in order
	nwin    atomic.Int32 // len(windows), read without the lock on the hot path
}

// afterSubscribe, when set (tests), runs between Subscribe's return and
// the tap's storing of the subscription.
var afterSubscribe func()

// lossWindow says that the first message after a loss is one of the
// messages numbered from..to (callback numbers): the first of them is
// preceded by a Lost control message and every other one carries Gap, so
// that no stream is judged across the loss, wherever in the window it is.
type lossWindow struct {
	from, to uint64
	reason   uint8
}

// addWindow adds a loss window, keeping the windows sorted and disjoint:
// a disconnect's window may lie far ahead (behind a full pending buffer)
// when a slow consumer's window nearer by is added.
func (cs *coreSub) addWindow(w lossWindow) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	ws := append(cs.windows, w)
	slices.SortFunc(ws, func(a, b lossWindow) int { return cmp.Compare(a.from, b.from) })
	out := ws[:1]
	for _, x := range ws[1:] {
		last := &out[len(out)-1]
		if x.from <= last.to+1 {
			last.to = max(last.to, x.to)
			continue
		}
		out = append(out, x)
	}
	cs.windows = out
	cs.nwin.Store(int32(len(cs.windows)))
}

// window reports whether message n is inside a loss window, and whether
// it is the window's first message that this callback sees.
func (cs *coreSub) window(n uint64) (in bool, reason uint8) {
	if cs.nwin.Load() == 0 {
		return false, 0
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for len(cs.windows) > 0 && cs.windows[0].to < n {
		cs.windows = cs.windows[1:]
	}
	cs.nwin.Store(int32(len(cs.windows)))
	if len(cs.windows) == 0 || cs.windows[0].from > n {
		return false, 0
	}
	return true, cs.windows[0].reason
}

// markDisconnect finds where the subscription's old connection ended: the
// messages received so far are those the callback has started plus those
// still pending in the client, give or take the one in the callback (the
// client counts a message out of pending only once its callback returned).
// It runs while the client is reconnecting, when nothing arrives; if the
// client is already back (this handler ran late), the window reaches back
// to what the callback had started.
func (cs *coreSub) markDisconnect(nc *nats.Conn) {
	for range 100 {
		c1 := cs.n.Load()
		p, _, err := cs.sub.Pending()
		if err != nil {
			return // closed
		}
		c2 := cs.n.Load()
		from, to := c1+uint64(p), c2+uint64(p)+1
		if st := nc.Status(); st != nats.RECONNECTING && st != nats.DISCONNECTED {
			from = c1
		}
		if c1 == c2 || from == c1 {
			cs.addWindow(lossWindow{from: max(from, 1), to: to, reason: tap.DropReconnect})
			return
		}
	}
	// The callback ran through a burst while we looked: cover the lot.
	c := cs.n.Load()
	p, _, _ := cs.sub.Pending()
	cs.addWindow(lossWindow{from: max(c, 1), to: c + uint64(max(p, 0)) + 1, reason: tap.DropReconnect})
}

// checkDropped looks for messages the client dropped (slow consumer) since
// the last callback. They were dropped after message n-1 was handed to the
// callback, while at most p+1 messages were pending (p: pending now, this
// one included), so the first message after them is numbered n to n+p+2.
func (cs *coreSub) checkDropped(n uint64) {
	d, err := cs.sub.Dropped()
	if err != nil || d <= cs.dropped {
		return
	}
	lost := d - cs.dropped
	cs.dropped = d
	p, _, _ := cs.sub.Pending()
	cs.stats.Drops[tap.DropQueueFull].Add(uint64(lost))
	cs.stats.Error(tap.ErrSlowConsumer)
	cs.addWindow(lossWindow{from: n, to: n + uint64(max(p, 0)) + 2, reason: tap.DropQueueFull})
}

// onMsg is the core subscription callback. It hands the message over and
// waits while the hand-off is full: the burst stays in the client's own
// pending buffer (Config.PendingBytes), and the client's slow-consumer
// drops past it are the only loss.
func (cs *coreSub) onMsg(m *nats.Msg) {
	<-cs.ready
	n := cs.n.Add(1)
	now := time.Now()
	cs.checkDropped(n)
	size := len(m.Data)
	cs.stats.Count(tap.DirNone, size)

	var lost tap.Message
	gap := false
	if in, reason := cs.window(n); in {
		if !cs.lostOpen {
			cs.lostOpen = true
			lost = tap.Message{Tap: cs.cfg.Name, Time: now, Lost: true, LossReason: reason}
		} else {
			gap = true
		}
	} else {
		cs.lostOpen = false
	}
	if size > cs.cfg.MaxMessageBytes {
		cs.stats.Drop(tap.DropOversize)
		cs.gapNext = true
		if lost.Lost {
			cs.send(lost)
		}
		return
	}
	if noRecord(m.Header, m.Data) {
		// Counted as a message, not judged; a gap it carried goes to the
		// next record.
		cs.gapNext = cs.gapNext || gap
		if lost.Lost {
			cs.send(lost)
		}
		return
	}
	msg := tap.Message{
		Tap:  cs.cfg.Name,
		Pos:  tap.Position{Kind: tap.PosSubject, Name: m.Subject},
		Time: now,
		Gap:  gap || cs.gapNext,
	}
	cs.gapNext = false
	msg.Data, msg.Format = payload(m.Header, m.Data)
	// Charged while it waits for the engine. Waiting for the budget keeps
	// the burst in the client's pending buffer, like a slow engine does.
	if err := cs.cfg.Budget.Acquire(cs.ctx, len(msg.Data)); err != nil {
		return // stopping
	}
	msg.Charged = len(msg.Data)
	if lost.Lost && !cs.send(lost) {
		cs.cfg.Budget.Release(msg.Charged)
		return
	}
	cs.send(msg) // a message not handed over gives its charge back
}

// send emits a message from the callback: while the engine is busy, the
// client buffers what follows.
func (cs *coreSub) send(m tap.Message) bool { return cs.emit(m) }

// backoff is the delay before retry number attempt (0 first): base doubled
// per attempt, capped, with ±20% jitter so that replicas do not retry in step.
func backoff(attempt int, base, limit time.Duration) time.Duration {
	d := base
	for i := 0; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return d - d/5 + rand.N(2*d/5+1)
}
