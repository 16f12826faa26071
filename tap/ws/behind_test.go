//go:build unix

package ws

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/e2atap/e2atap/tap"
)

// TestBlockedWriteTellsBehind: a client that stops reading (its receive
// window small and full) blocks the relay's write to it, and the messages
// the upstream sends meanwhile wait unread. The tap tells the connection
// behind (Progress, Behind) after the copies queued before it, and caught
// up (Progress) once the client reads again and the relay has emptied the
// socket; every message arrives, byte for byte, and is mirrored.
func TestBlockedWriteTellsBehind(t *testing.T) {
	const n, size = 96, 64 << 10
	msg := func(i int) []byte { return append([]byte(fmt.Sprintf("%03d", i)), bytes.Repeat([]byte{'x'}, size)...) }
	up := goServer(t, nil, func(_ *http.Request, c *websocket.Conn) {
		for i := range n {
			if c.Write(context.Background(), websocket.MessageText, msg(i)) != nil {
				return
			}
		}
		c.Read(context.Background()) // until the client closes
	})
	h := startTap(t, up, func(c *Config) { c.BehindAfter = 50 * time.Millisecond }, nil)
	small := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 64<<10) })
	}}).DialContext}}
	c := dial(t, h.url("/"), &websocket.DialOptions{HTTPClient: small})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, b, err := c.Read(ctx); err != nil || !bytes.Equal(b, msg(0)) {
		t.Fatalf("message 0: %.10q, %v", b, err)
	}
	behind := func() (told []bool) {
		for _, m := range h.mirror() {
			if m.Progress {
				told = append(told, m.Behind)
			}
		}
		return told
	}
	eventually(t, "the connection told behind", func() bool { return len(behind()) == 1 })
	for i := 1; i < n; i++ {
		if _, b, err := c.Read(ctx); err != nil || !bytes.Equal(b, msg(i)) {
			t.Fatalf("message %d: %.10q, %v", i, b, err)
		}
	}
	eventually(t, "the connection told caught up", func() bool { return len(behind()) == 2 })
	var copies, before int
	for _, m := range h.mirror() {
		switch {
		case m.Progress && m.Behind:
			before = copies
		case m.Progress:
			if copies != n {
				t.Errorf("caught up told after %d copies, want all %d", copies, n)
			}
		case m.Dir == tap.DirDownstream:
			if !bytes.Equal(m.Data, msg(copies)) {
				t.Fatalf("copy %d: %.10q", copies, m.Data)
			}
			copies++
		}
	}
	if got := behind(); got[0] != true || got[1] != false {
		t.Fatalf("told %v, want [true false]", got)
	}
	if before == 0 || before == n {
		t.Fatalf("behind told after %d copies of %d: want after those read before the write blocked, before the rest", before, n)
	}
}
