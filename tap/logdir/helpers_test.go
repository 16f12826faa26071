package logdir

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/e2atap/e2atap/tap"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(fdChildEnv); dir != "" {
		os.Exit(fdChild(dir)) // the child of TestDescriptorLimit
	}
	goleak.VerifyTestMain(m)
}

// testConfig is a config with short intervals, so tests are quick.
func testConfig(dir string, patterns ...string) Config {
	cfg := DefaultConfig()
	cfg.Name = "logs"
	for _, p := range patterns {
		cfg.Paths = append(cfg.Paths, filepath.Join(dir, p))
	}
	cfg.Positions = filepath.Join(dir, "positions.json")
	cfg.PollInterval = 10 * time.Millisecond
	cfg.RescanInterval = 50 * time.Millisecond
	cfg.SaveInterval = 20 * time.Millisecond
	return cfg
}

// collector is an engine stand-in: it keeps every message it accepts.
// Like a real engine, it refuses messages once ctx is done.
type collector struct {
	mu   sync.Mutex
	msgs []tap.Message
	// ctrl are the control messages (Lost, Reconnected), each with the
	// number of lines accepted before it.
	ctrl []ctrlMsg
	// after, if set, runs after a message is accepted (count is the number
	// accepted so far), inside emit.
	after func(count int)
}

func (c *collector) emit(ctx context.Context, m tap.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	if m.Data == nil {
		c.ctrl = append(c.ctrl, ctrlMsg{m, len(c.msgs)})
		c.mu.Unlock()
		return nil
	}
	c.msgs = append(c.msgs, m)
	n := len(c.msgs)
	c.mu.Unlock()
	if c.after != nil {
		c.after(n)
	}
	return nil
}

type ctrlMsg struct {
	tap.Message
	after int // lines accepted before it
}

// losses returns the Lost control messages.
func (c *collector) losses() []ctrlMsg {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []ctrlMsg
	for _, m := range c.ctrl {
		if m.Lost {
			out = append(out, m)
		}
	}
	return out
}

func (c *collector) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

func (c *collector) snapshot() []tap.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tap.Message(nil), c.msgs...)
}

// running is a Tailer started in the background.
type running struct {
	t      *Tailer
	stats  *tap.Stats
	cancel context.CancelFunc
	done   chan error
}

func start(t testing.TB, cfg Config, emit tap.EmitFunc) *running {
	t.Helper()
	stats := new(tap.Stats)
	var logger *slog.Logger
	if os.Getenv("LOGDIR_DEBUG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	tl, err := New(cfg, stats, logger)
	if err != nil {
		t.Fatal(err)
	}
	return startTailer(t, tl, stats, emit)
}

func startTailer(t testing.TB, tl *Tailer, stats *tap.Stats, emit tap.EmitFunc) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: tl, stats: stats, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- tl.Run(ctx, emit) }()
	t.Cleanup(func() { r.stop(t) })
	return r
}

// stop cancels Run and waits for it; it may be called more than once.
func (r *running) stop(t testing.TB) {
	t.Helper()
	r.cancel()
	if r.done == nil {
		return
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	r.done = nil
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// numbered is the test line format: generation and line number, padded.
func numbered(gen, n int) string {
	return fmt.Sprintf(`{"gen":%d,"n":%d,"pad":"%s"}`, gen, n, "abcdefghijklmnopqrstuvwxyz0123456789")
}

func parseNumbered(t testing.TB, b []byte) (gen, n int) {
	t.Helper()
	var pad string
	if _, err := fmt.Sscanf(string(b), `{"gen":%d,"n":%d,"pad":%q}`, &gen, &n, &pad); err != nil {
		t.Fatalf("bad line %q: %v", b, err)
	}
	return gen, n
}

func appendFile(t testing.TB, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

var errStop = errors.New("stop")
