package ws

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// isReset reports whether err is a peer's reset of its connection (a TCP
// RST), seen on a read or on a write.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// resetBoth ends a connection one of whose peers reset its socket: the other
// peer is reset too, as it would have been directly and as a proxy that
// propagates resets does. Closed the usual way it saw a FIN, the orderly end
// of a stream: a peer reading an HTTP body delimited by the connection's end
// took a cut body for a whole one. What was relayed to the other peer is
// given up to wait to reach it first, since a reset discards what its socket
// still holds (a reset peer's socket holds nothing).
func resetBoth(a, b net.Conn, wait time.Duration) {
	for _, c := range []net.Conn{a, b} {
		if tc, ok := tcpOf(c); ok {
			_ = tc.SetLinger(0)
		}
	}
	deadline := time.Now().Add(wait)
	for _, c := range []net.Conn{a, b} {
		for unsent(c) > 0 && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
	}
	a.Close()
	b.Close()
}

// tcpOf is the TCP socket under c (a TLS connection's).
func tcpOf(c net.Conn) (*net.TCPConn, bool) {
	if nc, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = nc.NetConn()
	}
	tc, ok := c.(*net.TCPConn)
	return tc, ok
}
