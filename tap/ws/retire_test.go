package ws

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/e2atap/e2atap/tap"
)

// TestStopAcceptingDrainsAndInheritHandsOver: a proxy retired by a reload
// (StopAccepting) stops accepting but its open connection goes on
// relaying and being mirrored, and Idle closes once its peers have closed
// it, with no 1001 from the tap. A successor built on Inherit's listener
// accepts on the same address before, during and after the retirement;
// Stats.Up, shared, stays true. Before StopAccepting existed, the only
// way to stop a proxy was its Run's end, which closes every connection.
func TestStopAcceptingDrainsAndInheritHandsOver(t *testing.T) {
	up := goServer(t, nil, echo)
	h := startTap(t, up, nil, nil)
	old := dial(t, h.url("/old"), nil)
	ctx := context.Background()
	roundTrip := func(c *websocket.Conn, msg string) {
		t.Helper()
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := c.Write(rctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatalf("write %q: %v", msg, err)
		}
		if _, b, err := c.Read(rctx); err != nil || string(b) != msg {
			t.Fatalf("relay of %q: %q, %v", msg, b, err)
		}
	}
	roundTrip(old, "before")

	ln, err := h.p.Inherit()
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.p.cfg
	next, err := NewOn(cfg, ln, h.stats, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if next.Addr().String() != h.p.Addr().String() {
		t.Fatalf("the successor listens on %s, want its predecessor's %s", next.Addr(), h.p.Addr())
	}
	nextCtx, stopNext := context.WithCancel(ctx)
	nextDone := make(chan error, 1)
	go func() {
		nextDone <- next.Run(nextCtx, func(context.Context, tap.Message) error { return nil })
	}()
	defer func() {
		stopNext()
		if err := <-nextDone; err != nil {
			t.Errorf("successor's Run: %v", err)
		}
	}()

	h.p.StopAccepting()
	select {
	case <-h.p.Idle():
		t.Fatal("Idle with a connection open")
	case <-time.After(100 * time.Millisecond):
	}
	// The old connection relays on, mirrored by the old proxy.
	roundTrip(old, "after")
	eventually(t, "the old proxy to mirror what its connection relayed after StopAccepting", func() bool {
		for _, m := range h.mirror() {
			if string(m.Data) == "after" {
				return true
			}
		}
		return false
	})
	// New connections reach the successor, on the same address.
	for range 3 {
		c := dial(t, h.url("/new"), nil)
		roundTrip(c, "new")
		c.Close(websocket.StatusNormalClosure, "")
	}
	if !h.stats.Up.Load() {
		t.Error("Stats.Up false after the retirement: the successor accepts")
	}
	h.p.mu.Lock()
	n := len(h.p.conns)
	h.p.mu.Unlock()
	if n != 1 {
		t.Errorf("the retired proxy holds %d connections, want its 1 (new ones go to the successor)", n)
	}

	if err := old.Close(websocket.StatusNormalClosure, "done"); err != nil {
		t.Errorf("the old connection's close: %v (want the upstream's 1000, not the tap's 1001)", err)
	}
	select {
	case <-h.p.Idle():
	case <-time.After(10 * time.Second):
		t.Fatal("Idle not closed after the last connection ended")
	}
	h.stop(t)
	if !h.stats.Up.Load() {
		t.Error("Stats.Up false after the retired proxy's Run returned: it is the successor's")
	}
	for _, m := range h.mirror() {
		if m.Lost {
			t.Errorf("a loss mirrored for a connection its peers closed: %+v", m)
		}
	}
	// The successor still accepts once the old proxy is gone.
	c := dial(t, h.url("/last"), nil)
	roundTrip(c, "last")
	c.Close(websocket.StatusNormalClosure, "")
	nc, err := net.Dial("tcp", h.p.Addr().String())
	if err != nil {
		t.Fatalf("the address refuses with the successor running: %v", err)
	}
	nc.Close()
}

// heldAccept is a listener whose Accept, once it has a connection from the
// kernel, holds it until release is closed, whatever Close does meanwhile:
// the moment a reload's StopAccepting can land in, between the kernel's
// accept and the proxy's registration of the connection.
type heldAccept struct {
	net.Listener
	taken, closed, release chan struct{}
}

func (l *heldAccept) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	close(l.taken)
	<-l.release
	return nc, nil
}

func (l *heldAccept) Close() error {
	err := l.Listener.Close()
	close(l.closed)
	return err
}

// TestStopAcceptingServesTheConnectionAlreadyTaken: a connection the
// listener took from the kernel just before a reload retired the proxy is
// served by it to its end. Before, the proxy, closing by then, closed it
// unserved: a Gateway dialling an address that never stopped accepting
// got its connection reset (1 dial in 14 across a same-address reload,
// TestReloadDrainsTheReplacedListener in CI).
func TestStopAcceptingServesTheConnectionAlreadyTaken(t *testing.T) {
	up := goServer(t, nil, echo)
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &heldAccept{Listener: raw, taken: make(chan struct{}), closed: make(chan struct{}), release: make(chan struct{})}
	cfg := DefaultConfig()
	cfg.Name = "test-ws"
	cfg.Listen = raw.Addr().String()
	cfg.Upstream = up
	cfg.CloseTimeout = 2 * time.Second
	p, err := NewOn(cfg, ln, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, func(context.Context, tap.Message) error { return nil }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}()

	type dialed struct {
		c   *websocket.Conn
		err error
	}
	got := make(chan dialed, 1)
	go func() {
		dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
		defer dcancel()
		c, _, err := websocket.Dial(dctx, "ws://"+cfg.Listen+"/held", nil)
		got <- dialed{c, err}
	}()
	select {
	case <-ln.taken:
	case <-time.After(10 * time.Second):
		t.Fatal("the dial never reached Accept")
	}
	p.StopAccepting()
	select {
	case <-ln.closed:
	case <-time.After(10 * time.Second):
		t.Fatal("StopAccepting did not close the listener")
	}
	close(ln.release)
	d := <-got
	if d.err != nil {
		t.Fatalf("the connection taken before the retirement: %v (want it served by the retired proxy)", d.err)
	}
	rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
	defer rcancel()
	if err := d.c.Write(rctx, websocket.MessageText, []byte("held")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := d.c.Read(rctx); err != nil || string(b) != "held" {
		t.Fatalf("relay through the retired proxy: %q, %v", b, err)
	}
	select {
	case <-p.Idle():
		t.Fatal("Idle with the connection open")
	default:
	}
	d.c.Close(websocket.StatusNormalClosure, "")
	select {
	case <-p.Idle():
	case <-time.After(10 * time.Second):
		t.Fatal("Idle not closed after the connection ended")
	}
}
