package main

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// maxHTTPConns bounds the connections the HTTP listener (/metrics,
// /healthz, /readyz, /observe) holds open at once. Its clients are a few
// probes, a scraper or two and a few observe watchers; a client that
// opens connections and keeps them (a scraper that leaks them, a port
// scan) took a descriptor each until the process had none: the ws tap
// could then accept no Gateway, the relay was down and /readyz with it.
// Past the bound, a connection waits in the kernel's listen backlog,
// holding no descriptor of the process.
const maxHTTPConns = 64

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
}

func newLimitListener(l net.Listener, n int, logger *slog.Logger) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{}), log: logger}
}

// maxAcceptDelay is the longest wait between two failed accepts (net/http's
// own).
const maxAcceptDelay = time.Second

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
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
			return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
		}
		select {
		case <-l.done:
			err = net.ErrClosed
		default:
		}
		if errors.Is(err, net.ErrClosed) || !retryAccept(err) {
			<-l.slots
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
			<-l.slots
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
