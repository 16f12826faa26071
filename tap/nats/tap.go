package natstap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go"
)

// Queue capacities (see doc.go for their overflow policies).
const (
	ctlQueueSize = 16 // control messages; full: coalesce (drop the newest Reconnected)
	jsQueueSize  = 64 // JetStream messages; full: block (backpressure)
	// dropCheckEvery is how often the client's slow-consumer drop counters
	// are read, besides when the client reports a slow consumer.
	dropCheckEvery = time.Second
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
	nc   *nats.Conn
	data chan tap.Message // core NATS: callback → emit, non-blocking send
	ctl  chan tap.Message // control: connection handlers → emit
	jsq  chan tap.Message // JetStream: stream goroutines → emit, blocking send
	// gap is set when a core message was lost; the next one enqueued
	// carries Gap.
	gap atomic.Bool

	// reconn is closed at a reconnect (and replaced). A pull request sent
	// before may be gone (in a cluster it may wait on a server the client
	// no longer talks to; on a single server it survives a blip, see
	// TestJetStreamResumesRightAfterABlip), so the stream goroutines start
	// over from their cursor at once, never waiting for two missed
	// heartbeats.
	reconnMu sync.Mutex
	reconn   chan struct{}

	mu      sync.Mutex
	subs    []*nats.Subscription
	dropped map[*nats.Subscription]int // client drops already counted, per subscription
}

// Run connects, subscribes and emits until ctx is done (then it returns
// nil) or emit fails (then it returns emit's error). Connection problems are
// never fatal: the client reconnects by itself, and Stats.Up says whether
// it is connected.
func (t *Tap) Run(ctx context.Context, emit tap.EmitFunc) error {
	if !t.running.CompareAndSwap(false, true) {
		return ErrAlreadyRunning
	}
	defer t.running.Store(false)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	r := &run{
		Tap:     t,
		data:    make(chan tap.Message, t.cfg.QueueSize),
		ctl:     make(chan tap.Message, ctlQueueSize),
		jsq:     make(chan tap.Message, jsQueueSize),
		reconn:  make(chan struct{}),
		dropped: map[*nats.Subscription]int{},
	}
	closed := make(chan struct{})
	nc, err := nats.Connect(t.cfg.URL,
		nats.Name("e2atap tap "+t.cfg.Name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(func(attempts int) time.Duration {
			return backoff(attempts-1, t.cfg.ReconnectWait, t.cfg.ReconnectMaxWait)
		}),
		nats.ConnectHandler(func(*nats.Conn) { r.connected(false) }),
		nats.ReconnectHandler(func(*nats.Conn) { r.connected(true) }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			t.stats.Up.Store(false)
			if err != nil {
				t.log.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			if errors.Is(err, nats.ErrSlowConsumer) {
				r.countClientDrops()
				return
			}
			t.log.Warn("nats async error", "err", err)
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(closed) }),
	)
	if err != nil {
		// With RetryOnFailedConnect only a bad option or URL gets here.
		return fmt.Errorf("nats tap %q: connect: %w", t.cfg.Name, tap.RedactErr(err))
	}
	r.nc = nc

	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // stream goroutines delete their consumers while nc is open
		r.countClientDrops()
		nc.Close()
		<-closed
		t.stats.Up.Store(false)
	}()

	for _, subj := range t.cfg.Subjects {
		var sub *nats.Subscription
		if t.cfg.Queue != "" {
			sub, err = nc.QueueSubscribe(subj, t.cfg.Queue, r.onMsg)
		} else {
			sub, err = nc.Subscribe(subj, r.onMsg)
		}
		if err != nil {
			return fmt.Errorf("nats tap %q: subscribe %q: %w", t.cfg.Name, subj, err)
		}
		if err := sub.SetPendingLimits(t.cfg.PendingMsgs, t.cfg.PendingBytes); err != nil {
			return fmt.Errorf("nats tap %q: pending limits %q: %w", t.cfg.Name, subj, err)
		}
		r.mu.Lock()
		r.subs = append(r.subs, sub)
		r.mu.Unlock()
	}
	for _, sc := range t.cfg.Streams {
		wg.Go(func() { r.watchStream(ctx, sc) })
	}

	tick := time.NewTicker(dropCheckEvery)
	defer tick.Stop()
	for {
		var m tap.Message
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			r.countClientDrops()
			continue
		case m = <-r.ctl:
		case m = <-r.data:
		case m = <-r.jsq:
		}
		if err := emit(ctx, m); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("nats tap %q: emit: %w", t.cfg.Name, err)
		}
	}
}

// connected runs on the client's callback goroutine after the first connect
// and after every reconnect.
func (r *run) connected(again bool) {
	r.stats.Up.Store(true)
	if again {
		r.stats.Reconnects.Add(1)
		r.log.Info("nats reconnected", "url", r.nc.ConnectedUrlRedacted())
		r.reconnMu.Lock()
		close(r.reconn)
		r.reconn = make(chan struct{})
		r.reconnMu.Unlock()
	}
	select {
	case r.ctl <- tap.Message{Tap: r.cfg.Name, Time: time.Now(), Reconnected: true}:
	default: // a Reconnected is already queued: the join window opens anyway
	}
}

// reconnected returns a channel closed at the next reconnect.
func (r *run) reconnected() <-chan struct{} {
	r.reconnMu.Lock()
	defer r.reconnMu.Unlock()
	return r.reconn
}

// onMsg is the core subscription callback. It never blocks.
func (r *run) onMsg(m *nats.Msg) {
	now := time.Now()
	n := len(m.Data)
	r.stats.Count(tap.DirNone, n)
	if n > r.cfg.MaxMessageBytes {
		r.stats.Drop(tap.DropOversize)
		r.gap.Store(true)
		return
	}
	msg := tap.Message{
		Tap:  r.cfg.Name,
		Pos:  tap.Position{Kind: tap.PosSubject, Name: m.Subject},
		Time: now,
	}
	msg.Data, msg.Format = payload(m.Header, m.Data)
	msg.Gap = r.gap.Swap(false)
	select {
	case r.data <- msg:
	default:
		r.stats.Drop(tap.DropQueueFull)
		r.gap.Store(true)
	}
}

// countClientDrops adds what the client dropped (slow consumer) since the
// last call to the drop counters.
func (r *run) countClientDrops() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, sub := range r.subs {
		n, err := sub.Dropped()
		if err != nil { // closed subscription: its count is final
			continue
		}
		if d := n - r.dropped[sub]; d > 0 {
			r.stats.Drops[tap.DropQueueFull].Add(uint64(d))
			r.dropped[sub] = n
			r.gap.Store(true)
		}
	}
}

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
