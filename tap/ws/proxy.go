package ws

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// Proxy is the WebSocket tap: it accepts the Gateway's connections, dials
// the upstream for each one, relays the bytes both ways and mirrors every
// data message to emit.
type Proxy struct {
	cfg   Config
	up    upstream
	stats *tap.Stats
	log   *slog.Logger
	ln    net.Listener
	// queue is the mirror queue: capacity cfg.QueueSize; a relay that finds
	// it full drops its copy (tap.DropQueueFull). One goroutine drains it
	// into emit.
	queue chan tap.Message

	started atomic.Bool
	ctx     context.Context // Run's; dials stop with it
	abort   chan struct{}   // closed CloseTimeout after Run's ctx ends: stop waiting for anyone

	mu      sync.Mutex
	closing bool
	conns   map[*conn]struct{}
	wg      sync.WaitGroup // every handler, from register to its ConnClosed

	upMu    sync.Mutex
	serving bool
	dialOK  bool

	dialErrors atomic.Uint64
}

var _ tap.Source = (*Proxy)(nil)
var _ http.Handler = (*Proxy)(nil)

// connSeq numbers connections: ids are unique per process, across proxies,
// so that two WebSocket taps feeding one engine never share a Conn.
var connSeq atomic.Uint64

// New validates cfg and binds the listener, so that a bad address fails
// before anything runs. stats may be nil (the proxy then keeps its own);
// logger may be nil (discarded). Run must be called once: it owns the
// listener.
func New(cfg Config, stats *tap.Stats, logger *slog.Logger) (*Proxy, error) {
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
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("ws: listen: %w", err)
	}
	return &Proxy{
		cfg:    cfg,
		up:     up,
		stats:  stats,
		log:    logger.With("tap", cfg.Name),
		ln:     ln,
		queue:  make(chan tap.Message, cfg.QueueSize),
		abort:  make(chan struct{}),
		conns:  make(map[*conn]struct{}),
		dialOK: true,
	}, nil
}

// Addr is the address the proxy listens on.
func (p *Proxy) Addr() net.Addr { return p.ln.Addr() }

// Stats is the proxy's health (the one given to New, or its own).
func (p *Proxy) Stats() *tap.Stats { return p.stats }

// DialErrors counts connections refused because the upstream could not be
// reached (each was closed with 1014 Bad Gateway).
func (p *Proxy) DialErrors() uint64 { return p.dialErrors.Load() }

// Run serves until ctx is done, then closes every connection with 1001
// (going away) on both sides, waits up to CloseTimeout for the closing
// handshakes and for the queue to drain into emit, and returns once every
// goroutine it started has ended. emit is called from one goroutine, with a
// context that ends CloseTimeout after ctx: it must honour it.
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

	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: p.cfg.DialTimeout,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
	}
	served := make(chan error, 1)
	p.setUp(func() { p.serving = true })
	go func() { served <- srv.Serve(p.ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-served:
		err = fmt.Errorf("ws: serve: %w", err)
		served <- nil
	}
	p.setUp(func() { p.serving = false })

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
	p.closing = true
	closeBy := time.Now().Add(p.cfg.CloseTimeout)
	for c := range p.conns {
		c.shutdown(closeBy)
	}
	p.mu.Unlock()

	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.cfg.CloseTimeout)
	_ = srv.Shutdown(shutCtx) // closes the listener; hijacked connections are ours (wg)
	cancel()
	<-served
	p.wg.Wait()
	close(p.queue)
	<-emitDone
	return err
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
		if err := emit(ctx, m); err != nil && ctx.Err() == nil {
			failures++
			if failures&(failures-1) == 0 { // 1, 2, 4, 8…: visible, never a flood
				p.log.Warn("ws: emit failed", "err", err, "failures", failures)
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
}

func (p *Proxy) setUp(f func()) {
	p.upMu.Lock()
	f()
	p.stats.Up.Store(p.serving && p.dialOK)
	p.upMu.Unlock()
}

// ServeHTTP handles one Gateway connection, from its opening handshake to
// its end.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isUpgrade(r) {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "e2atap: this port relays WebSocket connections only", http.StatusUpgradeRequired)
		return
	}
	c := p.register()
	if c == nil {
		http.Error(w, "e2atap: shutting down", http.StatusServiceUnavailable)
		return
	}
	defer p.unregister(c)
	c.serve(w, r)
}

func (p *Proxy) register() *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing {
		return nil
	}
	c := &conn{p: p}
	p.conns[c] = struct{}{}
	p.wg.Add(1)
	return c
}

func (p *Proxy) unregister(c *conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	p.wg.Done()
}

// enqueueClosed hands the ConnClosed control message to the engine. Unlike
// a mirror copy it waits for room (the connection's sockets are already
// closed, so no traffic waits with it): losing it would leave the
// connection's streams open until they time out. It gives up only when Run
// is aborting.
func (p *Proxy) enqueueClosed(c *conn) {
	m := tap.Message{
		Tap:        p.cfg.Name,
		Pos:        tap.Position{Kind: tap.PosConn, Name: c.id, Offset: c.seq.Load()},
		Conn:       c.id,
		Time:       time.Now(),
		ConnClosed: true,
	}
	select {
	case p.queue <- m:
	case <-p.abort:
		p.stats.Drop(tap.DropQueueFull)
	}
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

// dialed is the upstream after its opening handshake.
type dialed struct {
	nc   net.Conn
	br   *bufio.Reader // may already hold the first frames (connection.ack)
	raw  []byte        // the response head, byte for byte
	resp *http.Response
}

// maxResponseHead bounds the upstream's handshake response head.
const maxResponseHead = 64 << 10

// dial connects to the upstream and replays the client's opening handshake
// on it: the client's request target and every header (Authorization,
// Origin, Cookie, Sec-WebSocket-Key, -Protocol, -Extensions…) go as they
// came; only Host names the upstream.
func (p *Proxy) dial(r *http.Request) (*dialed, error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", p.up.addr)
	if err != nil {
		return nil, err
	}
	if p.up.tls {
		host, _, _ := net.SplitHostPort(p.up.addr)
		tc := tls.Client(nc, &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	dl, _ := ctx.Deadline()
	_ = nc.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Now()) })
	fail := func(err error) (*dialed, error) {
		stop()
		nc.Close()
		return nil, err
	}

	target := r.RequestURI
	if !strings.HasPrefix(target, "/") {
		target = r.URL.RequestURI()
	}
	var b bytes.Buffer
	b.WriteString("GET ")
	b.WriteString(p.up.prefix)
	b.WriteString(target)
	b.WriteString(" HTTP/1.1\r\nHost: ")
	b.WriteString(p.up.host)
	b.WriteString("\r\n")
	for k, vs := range r.Header {
		for _, v := range vs {
			b.WriteString(k)
			b.WriteString(": ")
			b.WriteString(v)
			b.WriteString("\r\n")
		}
	}
	b.WriteString("\r\n")
	if _, err := nc.Write(b.Bytes()); err != nil {
		return fail(err)
	}

	br := bufio.NewReaderSize(nc, 4096)
	raw, err := readHead(br)
	if err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), r)
	if err != nil {
		return fail(err)
	}
	if !stop() {
		return fail(ctx.Err())
	}
	return &dialed{nc: nc, br: br, raw: raw, resp: resp}, nil
}

// readHead reads an HTTP response head up to and including its empty line.
func readHead(br *bufio.Reader) ([]byte, error) {
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) && len(head) <= maxResponseHead {
				continue
			}
			return nil, fmt.Errorf("ws: upstream handshake: %w", err)
		}
		if len(head) > maxResponseHead {
			return nil, errors.New("ws: upstream handshake: response head too large")
		}
		if len(line) <= 2 && (string(line) == "\r\n" || string(line) == "\n") {
			return head, nil
		}
	}
}

// refuse answers a client whose upstream cannot be reached: the handshake
// completes so that the client learns why, through a close frame with 1014
// (Bad Gateway) rather than a bare HTTP error.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request) {
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "e2atap: upstream unavailable", http.StatusBadGateway)
		return
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(p.cfg.CloseTimeout))
	var b []byte
	b = append(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "...)
	b = append(b, acceptKey(r.Header.Get("Sec-WebSocket-Key"))...)
	b = append(b, "\r\n\r\n"...)
	b = append(b, closeFrame(closeBadGateway, "e2atap: upstream unavailable", false)...)
	if _, err := nc.Write(b); err != nil {
		return
	}
	// Wait for the client's close frame, then close first, as a server does.
	fp := newFrameParser(discard{}, 0, 0)
	buf := make([]byte, 512)
	for !fp.closeSeen && !fp.broken {
		n, err := brw.Read(buf)
		fp.feed(buf[:n], time.Time{})
		if err != nil {
			return
		}
	}
}

type discard struct{}

func (discard) message(parsedMessage) {}

// acceptKey is Sec-WebSocket-Accept for a client's Sec-WebSocket-Key.
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

// passResponse relays an upstream's refusal (any status but 101: 403 from
// an Origin check, 404…) to the client as it came.
func passResponse(w http.ResponseWriter, r *http.Request, d *dialed) {
	resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(bytes.NewReader(d.raw), d.br)), r)
	if err != nil {
		http.Error(w, "e2atap: bad upstream response", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, io.LimitReader(resp.Body, maxResponseHead))
}

func newConnID() string { return "c" + strconv.FormatUint(connSeq.Add(1), 10) }
