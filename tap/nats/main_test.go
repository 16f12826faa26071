package natstap

import (
	"context"
	"encoding/binary"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var discard = slog.New(slog.DiscardHandler)

// startServer starts an in-process nats-server with JetStream on 127.0.0.1.
// port 0 picks a free port; storeDir "" makes a temporary one.
func startServer(t testing.TB, port int, storeDir string) *server.Server {
	t.Helper()
	if port == 0 {
		port = -1
	}
	if storeDir == "" {
		storeDir = t.TempDir()
	}
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      port,
		JetStream: true,
		StoreDir:  storeDir,
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { stopServer(s) })
	return s
}

func stopServer(s *server.Server) {
	s.Shutdown()
	s.WaitForShutdown()
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// collector is an emit func that keeps what it gets; gate, when set,
// blocks emit until it is closed.
type collector struct {
	mu          sync.Mutex
	msgs        []tap.Message
	reconnected int // control messages with Reconnected, never reset
	lost        int // control messages with Lost, never reset
	progress    int // control messages with Progress, never reset
	gate        chan struct{}
}

func (c *collector) emit(ctx context.Context, m tap.Message) error {
	if c.gate != nil {
		select {
		case <-c.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	c.mu.Lock()
	if m.Progress && m.Pos.Kind == tap.PosConn {
		// The server gone or back (run.hold): the tap's streams held.
		if len(m.Data) != 0 || m.Tap == "" || m.Conn != "" {
			panic("bad hold message")
		}
		c.mu.Unlock()
		return nil
	}
	if m.Progress {
		// A JetStream stream behind or caught up: no message of the
		// stream; counted apart.
		if len(m.Data) != 0 || m.Tap == "" || m.Pos.Partition == 0 {
			panic("bad progress message")
		}
		c.progress++
		c.mu.Unlock()
		return nil
	}
	if m.Reconnected {
		if len(m.Data) != 0 || m.Tap == "" || m.Time.IsZero() {
			panic("bad control message")
		}
		c.reconnected++
	}
	if m.Lost {
		if len(m.Data) != 0 || m.Tap == "" || m.Time.IsZero() {
			panic("bad loss message")
		}
		c.lost++
	}
	c.msgs = append(c.msgs, m)
	c.mu.Unlock()
	return nil
}

// data returns the data messages (not control ones) since the last reset
// and how many control messages with Reconnected there were in all.
func (c *collector) data() (msgs []tap.Message, reconnected int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.msgs {
		if !m.Reconnected && !m.Lost {
			msgs = append(msgs, m)
		}
	}
	return msgs, c.reconnected
}

func (c *collector) reset() {
	c.mu.Lock()
	c.msgs = nil
	c.mu.Unlock()
}

// startTap runs a tap until the test ends and checks that Run returns nil.
func startTap(t testing.TB, cfg Config, c *collector) (*Tap, *tap.Stats) {
	t.Helper()
	stats := new(tap.Stats)
	return runTap(t, cfg, stats, discard, c), stats
}

// runTap runs a tap with its stats and logger until the test ends.
func runTap(t testing.TB, cfg Config, stats *tap.Stats, logger *slog.Logger, c *collector) *Tap {
	t.Helper()
	tp, err := New(cfg, stats, logger)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, c.emit) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after cancel")
		}
	})
	return tp
}

// waitSubscribed publishes probes on subject until the tap passes one on,
// then forgets what it collected.
func waitSubscribed(t testing.TB, nc *nats.Conn, subject string, c *collector) {
	t.Helper()
	waitFor(t, "subscription on "+subject, func() bool {
		if err := nc.Publish(subject, []byte(`{"probe":true}`)); err != nil {
			t.Fatal(err)
		}
		_ = nc.Flush()
		time.Sleep(10 * time.Millisecond)
		msgs, _ := c.data()
		return len(msgs) > 0
	})
	// Let probes in flight arrive before forgetting them.
	time.Sleep(50 * time.Millisecond)
	c.reset()
}

// testFrame encodes a small EventMeshFrame STREAM_CHUNK (reference §1).
func testFrame(sid string, seq int32, text string) []byte {
	b := []byte{0xEF, 1, 2, 0}
	b = binary.BigEndian.AppendUint32(b, uint32(seq))
	b = binary.BigEndian.AppendUint16(b, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(len(text)))
	b = binary.BigEndian.AppendUint16(b, 3)
	b = append(b, "sid"...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(sid)))
	b = append(b, sid...)
	return append(b, text...)
}
