package ws

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	gorillaws "github.com/gorilla/websocket"

	"github.com/e2atap/e2atap/tap"
)

// A Gateway that half-closes its connection (TCP FIN, no close frame) and
// goes on reading gets everything the AgentServer still sends, for longer
// than CloseTimeout, and then the AgentServer's own end, as directly; the
// mirror has every message, no loss, and the connection's ConnClosed
// last. Before, the tap cut the AgentServer's direction CloseTimeout after
// the FIN: the Gateway got 1006 with the stream half sent, the
// AgentServer a broken pipe, and the engine a missing_final that e2atap
// caused (with the real binary: 60 of 80 chunks, then 1006).
func TestHalfCloseWithoutCloseFrameRelaysOn(t *testing.T) {
	const n, every = 12, 100 * time.Millisecond
	addr := deadAddr(t)
	sent := make(chan error, 1)
	goServerAt(t, addr, func(r *http.Request, c *websocket.Conn) {
		ctx := r.Context()
		if _, _, err := c.Read(ctx); err != nil {
			sent <- err
			return
		}
		for i := range n {
			if err := c.Write(ctx, websocket.MessageText, fmt.Appendf(nil, `{"i":%d}`, i)); err != nil {
				sent <- fmt.Errorf("write %d: %w", i, err)
				return
			}
			time.Sleep(every)
		}
		sent <- nil
		// Returning closes the connection with no close frame (CloseNow).
	})
	h := startTap(t, "ws://"+addr, func(c *Config) { c.CloseTimeout = 300 * time.Millisecond }, nil)

	c, _, err := gorillaws.DefaultDialer.Dial(h.url("/"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteMessage(gorillaws.TextMessage, []byte(`{"req":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := c.UnderlyingConn().(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	var got int
	for {
		_, b, err := c.ReadMessage()
		if err != nil {
			// The AgentServer's end as it sent it: no close frame.
			if !errors.Is(err, io.ErrUnexpectedEOF) && !gorillaws.IsCloseError(err, gorillaws.CloseAbnormalClosure) {
				t.Errorf("read after %d messages: %v", got, err)
			}
			break
		}
		if want := fmt.Sprintf(`{"i":%d}`, got); string(b) != want {
			t.Fatalf("message %d = %s, want %s", got, b, want)
		}
		got++
	}
	if got != n {
		t.Errorf("the half-closed Gateway read %d of %d messages", got, n)
	}
	select {
	case err := <-sent:
		if err != nil {
			t.Errorf("AgentServer: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AgentServer did not finish")
	}
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	msgs := h.mirror()
	if len(msgs) != n+2 || !msgs[len(msgs)-1].ConnClosed {
		t.Fatalf("mirror has %d messages (want the request, %d answers, ConnClosed): %+v", len(msgs), n, msgs)
	}
	for i, m := range msgs[:n+1] {
		if m.Lost || m.ConnClosed || m.Gap {
			t.Errorf("mirror[%d] = %+v: a loss or end before the last", i, m)
		}
	}
	for reason := range tap.NumDropReasons {
		if d := h.stats.Drops[reason].Load(); d != 0 {
			t.Errorf("%d drops for reason %d", d, reason)
		}
	}
}
