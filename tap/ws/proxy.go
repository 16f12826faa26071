package ws

import (
	"cmp"
	"container/list"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// Proxy is the WebSocket tap: it accepts the Gateway's connections, dials
// the upstream for each one, relays the bytes both ways and mirrors every
// data message to emit. What is not a WebSocket upgrade is passed through
// to the upstream as it is, byte for byte, and not mirrored.
type Proxy struct {
	cfg    Config
	up     upstream
	stats  *tap.Stats
	log    *slog.Logger
	ln     net.Listener
	raw    net.Listener // ln before its TLS (what a successor inherits)
	health *health
	// queue is the mirror queue: at most cfg.QueueSize copies, whose bytes
	// are charged to cfg.Budget; a relay that finds it full drops its copy
	// (tap.DropQueueFull). One goroutine drains it into emit.
	queue chan tap.Message

	started atomic.Bool
	ctx     context.Context // Run's; dials stop with it
	abort   chan struct{}   // closed CloseTimeout after Run's ctx ends: stop waiting for anyone
	// retire is closed by StopAccepting; idle once, after it, the last
	// connection has ended (Idle).
	retire, idle chan struct{}
	retireOnce   sync.Once

	mu      sync.Mutex
	closing bool
	// retired: closing because of StopAccepting, not Run's end. A
	// connection Accept had taken from the kernel when the listener
	// closed is then still served (register): the successor never saw
	// it, and its client dialled an address that never stopped accepting.
	retired bool
	conns   map[*conn]struct{}
	wg      sync.WaitGroup // every connection, from register to its ConnClosed
	// late: the Lost and ConnClosed controls that found the queue full
	// after the abort, or that emit did not take once its context ended,
	// in their order; drain hands them over last (lateControls). At most
	// two a connection.
	late []tap.Message
	// heads: the connections waiting for their request head, oldest
	// first (*headWait; admit bounds them). shedTotal and shedLogged: the
	// ones admit closed since it last logged, and when.
	heads      list.List
	shedTotal  uint64
	shedLogged time.Time

	exhaustedLog atomic.Int64 // when exhaustedNow last logged (unix ns)
}

var _ tap.Source = (*Proxy)(nil)

// connSeq numbers connections: ids are unique per process, across proxies,
// so that two WebSocket taps feeding one engine never share a Conn.
var connSeq atomic.Uint64

// New validates cfg and binds the listener, so that a bad address fails
// before anything runs. stats may be nil (the proxy then keeps its own);
// logger may be nil (discarded). Run must be called once: it owns the
// listener.
func New(cfg Config, stats *tap.Stats, logger *slog.Logger) (*Proxy, error) {
	return NewOn(cfg, nil, stats, logger)
}

// NewOn is New on a listener already bound (nil: New binds cfg.Listen):
// a reload's successor takes over its predecessor's socket (Inherit), so
// that the address never refuses a connection in between. The proxy owns
// ln from then on, also when NewOn fails.
func NewOn(cfg Config, ln net.Listener, stats *tap.Stats, logger *slog.Logger) (*Proxy, error) {
	p, err := newProxy(cfg, ln, stats, logger)
	if err != nil && ln != nil {
		ln.Close()
	}
	return p, err
}

func newProxy(cfg Config, ln net.Listener, stats *tap.Stats, logger *slog.Logger) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	up, _ := parseUpstream(cfg.Upstream) // checked by Validate
	if stats == nil {
		stats = new(tap.Stats)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	log := logger.With("tap", cfg.Name)
	var tlsConf *tls.Config
	if cfg.TLS.Enabled() {
		r, err := tlsfiles.New(cfg.TLS)
		if err != nil {
			return nil, fmt.Errorf("ws: tls: %w", err)
		}
		r.OnError = func(err error) { log.Warn("ws: cannot reload the certificate; serving the previous one", "err", err) }
		r.OnReload = func() { log.Info("ws: certificate reloaded", "cert_file", cfg.TLS.CertFile) }
		if tlsConf, err = r.Config(); err != nil {
			return nil, fmt.Errorf("ws: tls: %w", err)
		}
	}
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("ws: listen: %w", err)
		}
	}
	raw := ln
	if tlsConf != nil {
		// The relay reads and writes the decrypted stream; the handshake
		// happens on the first read, in the connection's own goroutine.
		ln = tls.NewListener(ln, tlsConf)
	}
	return &Proxy{
		cfg:    cfg,
		up:     up,
		stats:  stats,
		log:    log,
		ln:     ln,
		raw:    raw,
		health: newHealth(stats, log, up, cfg),
		queue:  make(chan tap.Message, cfg.QueueSize),
		abort:  make(chan struct{}),
		retire: make(chan struct{}),
		idle:   make(chan struct{}),
		conns:  make(map[*conn]struct{}),
	}, nil
}

// Inherit is a listener on the proxy's own socket, for a successor (a
// reload that changes the tap's other settings, NewOn): both accept from
// the one backlog until this proxy's StopAccepting, so that no client is
// refused or reset in between. The socket stays open until both are
// closed.
func (p *Proxy) Inherit() (net.Listener, error) {
	fl, ok := p.raw.(interface{ File() (*os.File, error) })
	if !ok {
		return nil, fmt.Errorf("ws: a listener of type %T cannot be handed over", p.raw)
	}
	f, err := fl.File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return net.FileListener(f)
}

// Discard closes the listener of a proxy whose Run was never called (a
// reload that built it and was then rejected).
func (p *Proxy) Discard() {
	if !p.started.Load() {
		p.ln.Close()
	}
}

// StopAccepting is how a reload retires the proxy (its successor is
// accepting by then, on another address or on this socket, Inherit): the
// listener closes and the connections open go on relaying and being
// mirrored to their natural end, or until Run's ctx ends (then closed
// with 1001, as at any stop). Stats.Up, shared with the successor, is
// left to it. Idle is closed once the last connection has ended.
func (p *Proxy) StopAccepting() { p.retireOnce.Do(func() { close(p.retire) }) }

// Idle is closed once StopAccepting was called and every connection
// accepted before has ended.
func (p *Proxy) Idle() <-chan struct{} { return p.idle }

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Stats is the proxy's health (the one given to New, or its own).
func (p *Proxy) Stats() *tap.Stats { return p.stats }

// Run serves until ctx is done, then closes every connection with 1001
// (going away) on both sides, waits up to CloseTimeout for the closing
// handshakes and for the queue to drain into emit, and returns once every
// goroutine it started has ended. emit is called from one goroutine, with a
// context that ends CloseTimeout after ctx: it must honour it. Controls
// (Lost, ConnClosed) that the abort caught with the queue full are handed
// over after it, with a context of CloseTimeout more (lateControls). Stats.Up is
// true while the listener accepts, whatever the upstream does.
func (p *Proxy) Run(ctx context.Context, emit tap.EmitFunc) error {
	if !p.started.CompareAndSwap(false, true) {
		return errors.New("ws: Run called twice")
	}
	p.ctx = ctx
	emitCtx, emitCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer emitCancel()
	emitDone := make(chan struct{})
	go func() {
		defer close(emitDone)
		p.drain(emitCtx, emit)
	}()
	healthCtx, healthCancel := context.WithCancel(ctx)
	healthDone := make(chan struct{})
	go func() {
		defer close(healthDone)
		p.health.run(healthCtx)
	}()
	defer func() {
		healthCancel()
		<-healthDone
	}()

	watchCtx, watchCancel := context.WithCancel(context.WithoutCancel(ctx))
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		p.watchBehind(watchCtx)
	}()
	stopWatch := func() {
		watchCancel()
		<-watchDone
	}
	defer stopWatch() // a no-op after the one below: p.queue is closed after it

	accepted := make(chan error, 1)
	p.stats.Up.Store(true)
	go func() { accepted <- p.accept() }()
	var err error
	retired := false
	select {
	case <-ctx.Done():
	case <-p.retire:
		retired = true
	case err = <-accepted:
		err = fmt.Errorf("ws: accept: %w", err)
		accepted <- nil
	}
	if !retired {
		p.stats.Up.Store(false)
	}
	p.mu.Lock()
	p.closing, p.retired = true, retired
	p.mu.Unlock()
	p.ln.Close()
	<-accepted
	if retired {
		// The successor probes the upstream and says whether it is up.
		healthCancel()
		go func() {
			p.wg.Wait()
			close(p.idle)
		}()
		<-ctx.Done()
	}

	abortTimer := time.AfterFunc(p.cfg.CloseTimeout, func() {
		close(p.abort)
		emitCancel()
		p.mu.Lock()
		for c := range p.conns {
			c.kill()
		}
		p.mu.Unlock()
	})
	defer abortTimer.Stop()
	p.mu.Lock()
	closeBy := time.Now().Add(p.cfg.CloseTimeout)
	for c := range p.conns {
		c.shutdown(closeBy)
	}
	p.mu.Unlock()
	p.wg.Wait()
	stopWatch() // its last send before the close
	close(p.queue)
	<-emitDone
	return err
}

// exhaustedNow counts a dial that failed for want of descriptors here, and
// logs it at most once a minute.
func (p *Proxy) exhaustedNow(err error) {
	p.stats.Error(tap.ErrOther)
	now := time.Now().UnixNano()
	last := p.exhaustedLog.Load()
	if (last == 0 || now-last >= int64(time.Minute)) && p.exhaustedLog.CompareAndSwap(last, now) {
		p.log.Warn("ws: out of file descriptors: clients get 503 (logged at most once a minute)", "err", err)
	}
}

// accept takes the listener's connections until it is closed. A failed
// accept (EMFILE, a connection reset in the backlog) is waited out with
// backoff, as net/http does; a streak of failures is logged when it
// begins and when it ends, at most once a minute.
func (p *Proxy) accept() error {
	var delay time.Duration
	var failures uint64
	logged := false // this streak's start was logged (not within a minute of the last)
	var lastLog time.Time
	for {
		if wait := p.admit(time.Now()); wait > 0 {
			// Too many connections wait for their head, none for long:
			// new ones wait in the backlog until one is old enough to go.
			p.mu.Lock()
			closing := p.closing
			p.mu.Unlock()
			if closing {
				return net.ErrClosed
			}
			time.Sleep(min(wait, 50*time.Millisecond))
			continue
		}
		nc, err := p.ln.Accept()
		if err != nil {
			p.mu.Lock()
			closing := p.closing
			p.mu.Unlock()
			if closing || errors.Is(err, net.ErrClosed) {
				return err
			}
			p.stats.Error(tap.ErrOther)
			if failures++; failures == 1 && time.Since(lastLog) >= time.Minute {
				p.log.Warn("ws: accept failed; retrying with backoff (waiting clients stay in the listen backlog)", "err", err)
				logged, lastLog = true, time.Now()
			}
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			time.Sleep(delay)
			continue
		}
		if failures > 0 {
			if logged {
				p.log.Info("ws: accepting again", "failed_accepts", failures)
			}
			failures, delay, logged = 0, 0, false
		}
		c := p.register(nc)
		if c == nil {
			nc.Close()
			continue
		}
		go func() {
			defer p.unregister(c)
			c.serve()
		}()
	}
}

// drainPause and drainIdlePolls pace the reader of the mirror queue. A
// relay's send into the queue while its reader is parked wakes that reader:
// a thread hand-off for every message, which cost a tenth of the relay's
// throughput (BenchmarkEchoThroughput, tap process apart from its peers).
// So once a burst has begun, the reader polls: it empties the queue, then
// pauses, and parks only after drainIdlePolls pauses found nothing. A
// burst then costs one wake-up per pause, and an idle tap none. The copies
// carry their capture time, so the pause delays no verdict's timing.
const (
	drainPause     = 200 * time.Microsecond
	drainIdlePolls = 4
)

// drain is the only caller of emit. A slow emit fills the queue and costs
// mirror copies, never relay time.
func (p *Proxy) drain(ctx context.Context, emit tap.EmitFunc) {
	var failures uint64
	one := func(m tap.Message) {
		if isControl(&m) && ctx.Err() != nil && p.aside() {
			p.setAside(m) // behind the controls set aside before it
			return
		}
		if err := emit(ctx, m); err != nil {
			if isControl(&m) && ctx.Err() != nil {
				// Not taken since the abort: handed over last.
				p.setAside(m)
				return
			}
			// The engine did not take the copy: its charge is ours to return.
			p.cfg.Budget.Release(m.Charged)
			if ctx.Err() == nil {
				failures++
				if failures&(failures-1) == 0 { // 1, 2, 4, 8…: visible, never a flood
					p.log.Warn("ws: emit failed", "err", err, "failures", failures)
				}
			}
		}
		// Lag: mirror copies waiting for the engine.
		p.stats.Lag.Store(int64(len(p.queue)))
	}
	for m := range p.queue {
		one(m)
		for idle := 0; idle < drainIdlePolls; {
			select {
			case m, ok := <-p.queue:
				if !ok {
					p.lateControls(emit)
					return
				}
				one(m)
				idle = 0
			default:
				time.Sleep(drainPause)
				idle++
			}
		}
	}
	p.lateControls(emit)
}

// isControl reports whether m is a Lost or ConnClosed: the end of a
// connection's streams, which the engine must see (a dropped ConnClosed
// leaves them open until the idle timeout, a ConnClosed without its Lost
// ends them as missing_final: a violation their peers did not commit).
func isControl(m *tap.Message) bool { return m.Lost || m.ConnClosed }

// lateControls hands over the controls set aside at the abort (p.late),
// once every copy is through: the queue to the engine was full then (the
// engine behind), not for ever. It waits up to CloseTimeout for the engine
// to take them: the connections are closed, so nothing waits with them
// but Run's return. What it cannot hand over is a drop (queue_full),
// logged once.
func (p *Proxy) lateControls(emit tap.EmitFunc) {
	p.mu.Lock()
	late := p.late
	p.late = nil
	p.mu.Unlock()
	if len(late) == 0 {
		return
	}
	// Every Lost before every ConnClosed: a connection's Lost may have
	// been set aside after its ConnClosed (emit refused the one taken
	// from the queue), and a ConnClosed ends the connection's streams.
	slices.SortStableFunc(late, func(a, b tap.Message) int {
		return cmp.Compare(boolInt(a.ConnClosed), boolInt(b.ConnClosed))
	})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.ctx), p.cfg.CloseTimeout)
	defer cancel()
	for i, m := range late {
		if err := emit(ctx, m); err != nil {
			for range late[i:] {
				p.stats.Drop(tap.DropQueueFull)
			}
			p.log.Warn("ws: the engine did not take the ends of the closed connections in time; their streams stay open until the idle timeout", "err", err, "controls", len(late)-i)
			return
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// setAside appends m to p.late (at the abort, behind anything there).
func (p *Proxy) setAside(m tap.Message) {
	p.mu.Lock()
	p.late = append(p.late, m)
	p.mu.Unlock()
}

// aside reports whether controls were set aside: later ones follow them
// there, so that a connection's Lost stays before its ConnClosed.
func (p *Proxy) aside() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.late) > 0
}

func (p *Proxy) register(nc net.Conn) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing && !p.retired {
		return nil
	}
	c := &conn{p: p, client: nc}
	p.conns[c] = struct{}{}
	p.waitHead(c, time.Now())
	p.stats.Conns.Add(1)
	p.wg.Add(1)
	return c
}

func (p *Proxy) unregister(c *conn) {
	p.headDone(c)
	p.mu.Lock()
	delete(p.conns, c)
	p.stats.Conns.Add(-1)
	p.mu.Unlock()
	p.wg.Done()
}

// enqueueClosed hands the ConnClosed control message to the engine. Unlike
// a mirror copy it waits for room (the connection's sockets are already
// closed, so no traffic waits with it): losing it would leave the
// connection's streams open until they time out. When Run is aborting it
// sets the control aside for drain (setAside), never drops it.
func (p *Proxy) enqueueClosed(c *conn) {
	c.behindMu.Lock()
	c.ended = true // the engine lets go of a connection behind at its end
	if c.behind {
		p.stats.ConnsBehind.Add(-1)
		c.behind = false
	}
	c.behindMu.Unlock()
	gap, cut := c.gap.Load(), c.closing.Load()
	if gap || cut {
		// A copy was lost after the last one queued, or the tap itself
		// ended the connection (Run stopping: shutdown, or a reload that
		// stops this tap) and its streams will never be seen to their
		// end: without this, the streams would end as missing_final, a
		// violation their peers did not commit.
		reason := c.gapReason()
		if !gap {
			// Not a dropped copy (nothing is counted): what the streams
			// had left to send went unseen with the connection.
			reason = tap.DropReconnect
		}
		p.enqueueControl(tap.Message{
			Tap:        p.cfg.Name,
			Pos:        tap.Position{Kind: tap.PosConn, Name: c.id, Offset: c.seq.Load()},
			Conn:       c.id,
			Time:       time.Now(),
			Lost:       true,
			LossReason: reason,
		})
	}
	p.enqueueControl(tap.Message{
		Tap:        p.cfg.Name,
		Pos:        tap.Position{Kind: tap.PosConn, Name: c.id, Offset: c.seq.Load()},
		Conn:       c.id,
		Time:       time.Now(),
		ConnClosed: true,
	})
}

func (p *Proxy) enqueueControl(m tap.Message) {
	// Room in the queue first: once Run aborts, a select of both would
	// drop at random one message of a Lost and ConnClosed pair, and a
	// ConnClosed without its Lost ends the streams as missing_final.
	if !p.aside() {
		select {
		case p.queue <- m:
			return
		default:
		}
	}
	select {
	case <-p.abort:
		// The queue stays full past the abort: drain hands m over once
		// the copies are through (lateControls), not never.
		p.setAside(m)
		return
	default:
	}
	select {
	case p.queue <- m:
	case <-p.abort:
		p.setAside(m)
	}
}

// watchBehind tells the engine, in order with the copies, which
// connections the tap is behind on: a relay blocked writing to a peer that
// does not read (a paused Gateway, or an AgentServer that stops reading
// requests: the TCP window closes) reads nothing more from the other peer,
// whose messages wait in the sockets. Their streams are not idle, the tap
// is late: while behind, the engine does not expire them (Engine.Hold);
// the end of the connection ends them as usual.
//
// It looks every BehindAfter/2. A connection is behind from a write
// blocked BehindAfter, so it is told behind within 1.5 × BehindAfter of
// that write's start (the sidecar's BehindAfter is a quarter of
// idle_timeout). It has caught up once the relay has kept up for
// settleLooks looks in a row: at each, no write under way and no read
// since the last that filled its buffer. A short read alone does not say
// the peer has nothing more: while the relay catches up, the peer's own
// buffer refills the socket; a peer that reads again, slowly, keeps the
// relay's writes under way; and after a long zero window the peer's
// kernel may send again only at its next window probe, which backs off to
// seconds: the relay may sit in a read, its sockets empty, while the
// peer still holds what it sent. So the engine, told caught up, still
// holds the connection's streams one idle timeout (Engine.Hold).
//
// The news is queued as the copies are, never waiting (a full queue: told
// at the next look); copies queued earlier are judged before it.
func (p *Proxy) watchBehind(ctx context.Context) {
	after := p.cfg.BehindAfter
	if after <= 0 {
		after = time.Second
	}
	tick := time.NewTicker(after / 2)
	defer tick.Stop()
	var conns []*conn
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		conns = conns[:0]
		p.mu.Lock()
		for c := range p.conns {
			conns = append(conns, c)
		}
		p.mu.Unlock()
		now := time.Now()
		for _, c := range conns {
			p.tellBehind(c, now, after)
		}
		clear(conns)
	}
}

// settleLooks is how many looks in a row a connection behind must keep up
// (no write under way, no read filling its buffer) to be caught up while
// its traffic goes on: 2 × BehindAfter, half of the sidecar's
// idle_timeout.
const settleLooks = 4

// tellBehind queues c's Progress when it has fallen behind or caught up
// since the engine was last told.
func (p *Proxy) tellBehind(c *conn, now time.Time, after time.Duration) {
	blocked, writing, full := false, false, false
	for i := range c.io {
		w := c.io[i].writing.Load()
		blocked = blocked || (w != 0 && now.UnixNano()-w >= int64(after))
		writing = writing || w != 0
		full = c.io[i].full.Swap(false) || full
	}
	c.behindMu.Lock()
	defer c.behindMu.Unlock()
	if c.ended {
		return
	}
	tell := blocked && !c.behind
	if c.behind && !blocked {
		if writing || full {
			c.settled = 0
		} else {
			c.settled++
		}
		tell = c.settled >= settleLooks
	}
	if !tell {
		return
	}
	m := tap.Message{
		Tap:      p.cfg.Name,
		Pos:      tap.Position{Kind: tap.PosConn, Name: c.id, Offset: c.seq.Load()},
		Conn:     c.id,
		Time:     now,
		Progress: true,
		Behind:   blocked,
	}
	select {
	case p.queue <- m:
		if blocked != c.behind {
			p.stats.ConnsBehind.Add(boolDelta(blocked))
		}
		c.behind, c.settled = blocked, 0
	default:
	}
}

// boolDelta is +1 for true, -1 for false.
func boolDelta(b bool) int64 {
	if b {
		return 1
	}
	return -1
}

// isUpgrade reports whether r opens a WebSocket (RFC 6455 §4.2.1). The rest
// of the handshake (version, extensions, subprotocols) is the upstream's
// business.
func isUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		headerHasToken(r.Header, "Connection", "upgrade") &&
		headerHasToken(r.Header, "Upgrade", "websocket") &&
		r.Header.Get("Sec-WebSocket-Key") != ""
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func newConnID() string { return "c" + strconv.FormatUint(connSeq.Add(1), 10) }
