package main

import (
	"container/list"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// maxHTTPConns bounds the connections the HTTP listener (/metrics,
// /healthz, /readyz, /observe) holds open at once. Its clients are a few
// probes, a scraper or two and a few observe watchers; a client that
// opens connections and keeps them (a scraper that leaks them, a port
// scan) took a descriptor each until the process had none: the ws tap
// could then accept no Gateway, the relay was down and /readyz with it.
// Past the bound, a connection waits in the kernel's listen backlog,
// holding no descriptor of the process (but the one accepted, waiting
// for room: take).
const maxHTTPConns = 64

// Past maxHTTPConns, a connection with no request in progress (one that
// has not sent a complete head yet, or an idle keep-alive one) is closed,
// the one idle longest first, once it has been so for httpShedMinWait: a
// few hundred slowloris clients (a header a byte every few seconds) held
// all the slots for ReadHeaderTimeout each, again and again, so that
// /metrics and /healthz, queued behind them in the backlog, were not
// answered at all (the kubelet then restarts the sidecar). A client that
// sends its request at once, as a probe or a scraper does, is never closed
// for it; one in a handler (a scrape, an /observe stream) is only while
// its response waits for a client that does not read (httpShedWriteWait).
const httpShedMinWait = 250 * time.Millisecond

// httpShedReadWait: past maxHTTPConns, a connection with no request in
// progress whose read has waited for its client that long is closed for a
// new one, however recent. The connections waiting in the listen backlog
// are let in only as fast as slots are freed, and the one idle longest
// could be closed only httpShedMinWait after its accept: with 1000
// slowloris clients that reconnect at once, 64 slots let in 256 a second,
// a probe waited behind the backlog for some 4 s, and 2 probes in 6 (1 s
// timeout) went unanswered. A client that waited in the backlog has sent
// its request head by the time it is accepted (a probe, a scraper: the
// first read returns it whole); one whose server waits in a read has sent
// a part or nothing. So the backlog now moves at 64 per httpShedReadWait.
// A TLS client's handshake waits one round trip in such a read: well
// under this on a cluster's network, but a loaded machine's scheduler
// can make it longer: under TLS a read closes no connection before
// httpShedMinWait.
const httpShedReadWait = 20 * time.Millisecond

// httpShedWriteWait: past maxHTTPConns, a connection in a request whose
// response write has waited that long for its client to read is closed
// for a new one: 80 clients that each sent a few hundred requests for
// /metrics at once and read none of the answers (their receive windows
// closed) held every slot in a handler, blocked in a write for
// httpWriteTimeout (30 s), and no probe was answered. A client that reads
// its answers (a scraper, a probe, an /observe watcher) does not leave a
// write waiting that long while it is full.
const httpShedWriteWait = 50 * time.Millisecond

// maxScrapesInFlight bounds the /metrics requests answered at once; more
// get 503 at once. Gathering the metrics is the port's one costly answer:
// 80 clients that sent a few hundred requests each for /metrics at once
// (and read no answer) had 64 gathers run at once, again and again, on a
// machine's every core, and no /healthz probe was answered (117 goroutines
// runnable, the handlers in Gather, not in a write). A Prometheus, its HA
// twin and a person with curl need a few.
const maxScrapesInFlight = 4

// httpIdleTimeout closes a keep-alive connection with no request for
// that long (it was kept for ever: IdleTimeout falls back to ReadTimeout,
// which is unset), so that idle ones give their slot back.
const httpIdleTimeout = 30 * time.Second

// httpWriteTimeout bounds writing a response other than /observe's (a
// stream): a client that never reads held its handler and connection for
// ever.
const httpWriteTimeout = 30 * time.Second

// limitListener accepts at most n connections open at once, and retries
// a failed accept itself (descriptors run out: EMFILE, ENFILE), logged
// when it starts failing and when it accepts again: net/http logged every
// retry, a line a second or faster for as long as it lasted.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
	log   *slog.Logger

	// mu guards conns (the open connections, *limitConn, in the order
	// they last became idle), each one's busy and since, and the shed
	// counters.
	mu         sync.Mutex
	conns      list.List
	shedTotal  uint64
	shedLogged time.Time
}

func newLimitListener(l net.Listener, n int, logger *slog.Logger) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), log: logger}
}

// take waits for a slot for a connection just accepted: at once if one
// is free; else it closes one that waits for its client (idlest); while
// none does, until one does or ends. It ran before the accept and closed
// a connection whose request head was 20 ms late though no other was
// waiting; now a connection is closed only for one that is here (at most
// maxHTTPConns+1 descriptors: the one waiting for room).
func (l *limitListener) take() error {
	for {
		select {
		case l.slots <- struct{}{}:
			return nil
		case <-l.done:
			return net.ErrClosed
		default:
		}
		victim, wait := l.idlest(time.Now())
		if victim != nil {
			victim.Close() // gives its slot back
			continue
		}
		var (
			t       *time.Timer
			timeout <-chan time.Time
		)
		if wait > 0 {
			t = time.NewTimer(wait)
			timeout = t.C
		}
		var err error
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			err = net.ErrClosed
		case <-timeout:
			continue
		}
		if t != nil {
			t.Stop()
		}
		return err
	}
}

// idlest returns the connection to close for a new one (nil: none yet),
// or how long until one may be closed (0: none is idle: wait for a slot):
// the one idle longest, once it has been for httpShedMinWait, or else one
// whose read (no request in progress) has waited for its client for
// httpShedReadWait, or whose response write has for httpShedWriteWait.
func (l *limitListener) idlest(now time.Time) (*limitConn, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var next time.Duration // until one may be closed (0: none is idle)
	soonest := func(d time.Duration) {
		if next == 0 || d < next {
			next = d
		}
	}
	for e := l.conns.Front(); e != nil; e = e.Next() {
		c := e.Value.(*limitConn)
		var wait time.Duration
		switch w := c.writing.Load(); {
		case c.busy && w == 0:
			// In a handler: looked at again, it may come to wait
			// in a write.
			soonest(httpShedWriteWait)
			continue
		case c.busy:
			wait = time.Duration(w + int64(httpShedWriteWait) - now.UnixNano())
		default:
			wait = c.since.Add(httpShedMinWait).Sub(now)
			// (Not under TLS: its handshake's reads wait for the
			// client's round trips, not for a slow client.)
			if r := c.reading.Load(); r != 0 && !c.tls {
				wait = min(wait, time.Duration(r+int64(httpShedReadWait)-now.UnixNano()))
			}
		}
		if wait > 0 {
			soonest(wait)
			continue
		}
		l.conns.Remove(e)
		c.elem = nil
		l.shedTotal++
		if l.shedLogged.IsZero() || now.Sub(l.shedLogged) >= time.Minute {
			l.log.Warn("the HTTP listener is full: a connection waiting for its client closed (logged at most once a minute)",
				"closed", l.shedTotal, "max_conns", cap(l.slots), "min_wait", httpShedMinWait.String(),
				"read_wait", httpShedReadWait.String(), "write_wait", httpShedWriteWait.String())
			l.shedLogged, l.shedTotal = now, 0
		}
		return c, 0
	}
	return nil, next
}

// ConnState is the http.Server's hook: a connection in a request (its
// head read, or hijacked) is not closed for a new one; one that waits for
// a request goes to the back of the line.
func (l *limitListener) ConnState(nc net.Conn, st http.ConnState) {
	tc, isTLS := nc.(*tls.Conn)
	if isTLS {
		nc = tc.NetConn()
	}
	c, ok := nc.(*limitConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem == nil { // closed, or closed for a new one
		return
	}
	c.tls = c.tls || isTLS
	switch st {
	case http.StateActive, http.StateHijacked:
		c.busy = true
	case http.StateIdle:
		c.busy, c.since = false, time.Now()
		l.conns.MoveToBack(c.elem)
	}
}

// forget takes c out of the open connections (it is closed).
func (l *limitListener) forget(c *limitConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.elem != nil {
		l.conns.Remove(c.elem)
		c.elem = nil
	}
}

// maxAcceptDelay is the longest wait between two failed accepts (net/http's
// own).
const maxAcceptDelay = time.Second

func (l *limitListener) Accept() (net.Conn, error) {
	var (
		failures int
		since    time.Time
		delay    time.Duration
	)
	for {
		c, err := l.Listener.Accept()
		if err == nil {
			if failures > 0 {
				l.log.Info("the HTTP listener accepts again", "failed_accepts", failures, "for", time.Since(since).Round(time.Millisecond).String())
			}
			// Room for it once it is here: a connection is closed
			// only for one that exists (take).
			if err := l.take(); err != nil {
				c.Close()
				return nil, err
			}
			lc := &limitConn{Conn: c, since: time.Now()}
			lc.release = func() {
				l.forget(lc)
				<-l.slots
			}
			l.mu.Lock()
			lc.elem = l.conns.PushBack(lc)
			l.mu.Unlock()
			return lc, nil
		}
		select {
		case <-l.done:
			err = net.ErrClosed
		default:
		}
		if errors.Is(err, net.ErrClosed) || !retryAccept(err) {
			return nil, err
		}
		if failures++; failures == 1 {
			since = time.Now()
			l.log.Warn("the HTTP listener cannot accept; retrying with backoff, logged again when it accepts (its clients wait in the listen backlog)", "err", err)
		}
		delay = min(max(2*delay, 5*time.Millisecond), maxAcceptDelay)
		t := time.NewTimer(delay)
		select {
		case <-t.C:
		case <-l.done:
			t.Stop()
			return nil, net.ErrClosed
		}
	}
}

// retryAccept reports whether a failed accept is worth retrying: the
// process or the system is out of descriptors (or memory for a socket),
// or the client hung up before it was accepted. net/http retries the same
// ones (a net.Error that is Temporary).
func retryAccept(err error) bool {
	var ne interface{ Temporary() bool }
	return errors.As(err, &ne) && ne.Temporary()
}

// Close also ends an Accept waiting for a slot (the server's Shutdown
// closes the listener, then waits for Serve).
func (l *limitListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
	// Guarded by the listener's mu. elem: c's place among its open
	// connections (nil once closed); busy: in a request; since: when it
	// last began to wait for one; tls: served over TLS (seen by
	// ConnState before any read).
	elem  *list.Element
	busy  bool
	since time.Time
	tls   bool
	// reading and writing: when the read or write under way began (unix
	// ns; 0: none), the server waiting for the client.
	reading, writing atomic.Int64
}

func (c *limitConn) Write(b []byte) (int, error) {
	c.writing.Store(time.Now().UnixNano())
	n, err := c.Conn.Write(b)
	c.writing.Store(0)
	return n, err
}

func (c *limitConn) Read(b []byte) (int, error) {
	c.reading.Store(time.Now().UnixNano())
	n, err := c.Conn.Read(b)
	c.reading.Store(0)
	return n, err
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// writeDeadline gives a response other than a stream httpWriteTimeout to
// be written.
func writeDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(httpWriteTimeout))
		h.ServeHTTP(w, r)
	})
}

// closeWithBody closes the connection after a request that has a body
// (none of the port's endpoints reads one), without reading it: net/http
// read what was left of it before it answered, so that clients sending a declared body a byte
// every few seconds kept their connections in a request, never closed for
// a new one (limitListener), and /metrics and /healthz got no answer.
func closeWithBody(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength != 0 { // -1: chunked
			// Not even after the handler: the server reads the rest
			// of a body (up to 256 KiB) when it closes it.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now())
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}
