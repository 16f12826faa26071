package natstap

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go/jetstream"
)

// The server goes away and comes back on the same port with the same store:
// Up flips, a Reconnected control message is emitted, core subscriptions
// resume, and the JetStream consumer (in memory, so gone with the server) is
// recreated where the last one stopped: what was stored meanwhile is not lost.
func TestReconnectAfterServerRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, 0, dir)
	port := srv.Addr().(*net.TCPAddr).Port
	url := srv.ClientURL()
	nc := connect(t, url)
	js := newJS(t, nc)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}, Storage: jetstream.FileStorage})

	c := &collector{}
	_, stats := startTap(t, Config{
		Name:             "mesh",
		URL:              url,
		Subjects:         []string{"core.>"},
		Streams:          []StreamConfig{{Stream: "MESH"}},
		ReconnectWait:    20 * time.Millisecond,
		ReconnectMaxWait: 200 * time.Millisecond,
		Heartbeat:        500 * time.Millisecond,
	}, c)
	waitFor(t, "up and the first Reconnected", func() bool { _, r := c.data(); return stats.UpstreamUp.Load() && r == 1 })
	waitFor(t, "the tap's consumer", func() bool { return len(consumerNames(t, stream)) == 1 })
	waitSubscribed(t, nc, "core.probe", c)
	publishJS(t, js, "mesh.a", 1, 0)
	waitFor(t, "stream message 1", func() bool { msgs, _ := c.data(); return len(msgs) == 1 && msgs[0].Pos.Offset == 1 })

	stopServer(srv)
	waitFor(t, "down", func() bool { return !stats.UpstreamUp.Load() })

	srv2 := startServer(t, port, dir)
	waitFor(t, "up again", stats.UpstreamUp.Load)
	waitFor(t, "the second Reconnected", func() bool { _, r := c.data(); return r >= 2 })
	if got := stats.Reconnects.Load(); got != 1 {
		t.Errorf("Reconnects = %d, want 1", got)
	}
	if !nc.IsConnected() {
		waitFor(t, "test client reconnected", nc.IsConnected)
	}
	// Stored before the tap's consumer is back: still delivered.
	publishJS(t, js, "mesh.a", 2, 1)
	waitFor(t, "stream messages 2 and 3", func() bool {
		msgs, _ := c.data()
		var seqs []int64
		for _, m := range msgs {
			if m.Pos.Offset > 0 {
				seqs = append(seqs, m.Pos.Offset)
			}
		}
		return len(seqs) == 3 && seqs[1] == 2 && seqs[2] == 3
	})
	waitSubscribed(t, nc, "core.probe", c)
	if err := nc.Publish("core.x", []byte(`{"after":"restart"}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "core message after restart", func() bool {
		msgs, _ := c.data()
		return len(msgs) == 1 && string(msgs[0].Data) == `{"after":"restart"}`
	})
	ctx := context.Background()
	if _, err := js.Stream(ctx, "MESH"); err != nil {
		t.Fatal(err)
	}
	_ = srv2
	// Core NATS lost what was published meanwhile (one loss, reason
	// reconnect); JetStream lost nothing.
	if d := snapshot(stats).drops - stats.Drops[tap.DropReconnect].Load(); d != 0 {
		t.Errorf("drops other than reconnect = %d", d)
	}
	if d := stats.Drops[tap.DropReconnect].Load(); d != 1 {
		t.Errorf("reconnect drops = %d, want 1", d)
	}
}

// cutter forwards TCP connections to a server and can cut them all, as a
// network blip would: the server stays up and keeps the tap's consumer.
type cutter struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCutter(t *testing.T, target string) *cutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{ln: ln}
	t.Cleanup(func() { ln.Close(); c.cut() })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

func (c *cutter) url() string { return "nats://" + c.ln.Addr().String() }

func (c *cutter) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, nc := range c.conns {
		nc.Close()
	}
	c.conns = nil
}

// A network blip: the server never stopped, so nothing tells the tap's
// pull request it is gone. The reconnect itself must restart the reading,
// not two missed heartbeats (30 s here).
func TestJetStreamResumesRightAfterABlip(t *testing.T) {
	srv := startServer(t, 0, "")
	nc := connect(t, srv.ClientURL())
	js := newJS(t, nc)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}})
	cut := newCutter(t, srv.Addr().String())

	c := &collector{}
	_, stats := startTap(t, Config{
		Name:             "mesh",
		URL:              cut.url(),
		Streams:          []StreamConfig{{Stream: "MESH"}},
		ReconnectWait:    20 * time.Millisecond,
		ReconnectMaxWait: 100 * time.Millisecond,
		Heartbeat:        15 * time.Second,
	}, c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	waitFor(t, "the tap's consumer", func() bool { return len(consumerNames(t, stream)) == 1 })
	publishJS(t, js, "mesh.a", 1, 0)
	waitFor(t, "stream message 1", func() bool { msgs, _ := c.data(); return len(msgs) == 1 })

	cut.cut()
	waitFor(t, "reconnected", func() bool { return stats.Reconnects.Load() == 1 && stats.UpstreamUp.Load() })
	publishJS(t, js, "mesh.a", 2, 1)
	deadline := time.Now().Add(5 * time.Second)
	for msgs, _ := c.data(); len(msgs) < 3; msgs, _ = c.data() {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 3 stream messages 5 s after the reconnect", len(msgs))
		}
		time.Sleep(5 * time.Millisecond)
	}
	msgs, _ := c.data()
	for i, m := range msgs {
		if m.Pos.Offset != int64(i+1) {
			t.Errorf("message %d: stream seq %d", i, m.Pos.Offset)
		}
	}
	if d := stats.Drops[tap.DropUpstreamGap].Load(); d != 0 {
		t.Errorf("upstream_gap drops = %d", d)
	}
}
