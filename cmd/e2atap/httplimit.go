package main

import (
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

// limitListener accepts at most n connections open at once.
type limitListener struct {
	net.Listener
	slots chan struct{}
	done  chan struct{}
	once  sync.Once
}

func newLimitListener(l net.Listener, n int) *limitListener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
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
