package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/validate"
)

func TestBackoffDelay(t *testing.T) {
	b := defaultBackoff
	for n, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute} {
		for i := 0; i < 50; i++ {
			got := b.delay(n)
			if got < want*8/10 || got > want*12/10 {
				t.Fatalf("delay(%d) = %s, want %s ± 20%%", n, got, want)
			}
		}
	}
	if d := b.delay(1000); d > time.Minute*12/10 {
		t.Errorf("delay(1000) = %s: the doubling overflows", d)
	}
}

func TestRedactSecrets(t *testing.T) {
	for in, want := range map[string]string{
		`dial nats://user:hunter2@10.0.0.1:4222: refused`:           `dial nats://******@10.0.0.1:4222: refused`,
		`nats: no servers (nats://s3cr3tToken@broker:4222)`:         `nats: no servers (nats://******@broker:4222)`,
		`GET "wss://up.example/agent?token=abc123&x=1" failed`:      `GET "wss://up.example/agent?token=******&x=1" failed`,
		`ws://host/p?api_key=k1;sig=zz`:                             `ws://host/p?api_key=******;sig=******`,
		`open /var/lib/e2atap/positions.json: not a directory`:      `open /var/lib/e2atap/positions.json: not a directory`,
		`kafka: seed broker 127.0.0.1:9092: dial: connection reset`: `kafka: seed broker 127.0.0.1:9092: dial: connection reset`,
	} {
		if got := redactSecrets(in); got != want {
			t.Errorf("redactSecrets(%q) = %q, want %q", in, got, want)
		}
	}
}

// blockingSink holds every shard in Record until opened: the engine stops
// taking input, and what the taps read piles up in front of it.
type blockingSink struct {
	open    chan struct{}
	once    sync.Once
	records atomic.Int64
}

func (b *blockingSink) Record(*validate.RecordInfo) {
	<-b.open
	b.records.Add(1)
}
func (b *blockingSink) Finding(*validate.Finding)        {}
func (b *blockingSink) StreamStart(*validate.StreamInfo) {}
func (b *blockingSink) StreamEnd(*validate.StreamInfo)   {}
func (b *blockingSink) release()                         { b.once.Do(func() { close(b.open) }) }

// TestEngineQueueBoundedInBytes (issue 8 b, the engine queue): with the
// engine stalled, what waits for it is bounded by the byte budget, not by
// the queue's message count: a tap that charges nothing itself is charged
// by emit, the charge is held until a shard has judged the input and then
// released, to the last byte.
func TestEngineQueueBoundedInBytes(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.MkdirAll(logs, 0o755)
	const lines, lineBytes = 8000, 1024
	var buf bytes.Buffer
	for i := 0; i < lines; i++ {
		l := fmt.Sprintf(`{"request_id":"r%d","pad":"`, i)
		buf.WriteString(l + strings.Repeat("p", lineBytes-len(l)-3) + "\"}\n")
	}
	os.WriteFile(filepath.Join(logs, "a.jsonl"), buf.Bytes(), 0o644)

	const budget = 1 << 20
	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Outputs.Findings.Path = ""
	cfg.Memory.BudgetBytes = budget
	cfg.Taps = []TapConfig{{Name: "logs", Type: "logdir", Paths: []string{filepath.Join(logs, "*.jsonl")}, Positions: filepath.Join(dir, "pos.json")}}
	sink := &blockingSink{open: make(chan struct{})}
	t.Cleanup(sink.release)
	sc, stop := startSidecar(t, cfg, sink)

	// Stalled: the budget fills up to its limit and no further.
	pollUntil(t, "the budget to fill while the engine is stalled", 20*time.Second, func() bool {
		return sc.budget.Used() > budget-2*lineBytes
	})
	for i := 0; i < 20; i++ {
		if u := sc.budget.Used(); u > budget {
			t.Fatalf("budget used %d over its %d bytes", u, budget)
		}
		time.Sleep(10 * time.Millisecond)
	}
	held := sc.budget.Used()
	if held/lineBytes >= int64(cfg.Streams.Queue) {
		t.Fatalf("%d bytes held: the count cap, not the budget, bounds the queue", held)
	}
	sink.release()
	pollUntil(t, "every line judged", 30*time.Second, func() bool { return sink.records.Load() >= lines })
	pollUntil(t, "every charge released", 10*time.Second, func() bool { return sc.budget.Used() == 0 })
	stop()
	t.Logf("engine stalled: %d bytes held (%d lines of %d bytes) under a %d-byte budget; all released after", held, held/lineBytes, lineBytes, budget)
}

// logCapture is a slog handler that keeps the records' messages and
// attributes.
type logCapture struct {
	mu   sync.Mutex
	recs []string
}

func (c *logCapture) Enabled(context.Context, slog.Level) bool { return true }
func (c *logCapture) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.String())
		return true
	})
	c.mu.Lock()
	c.recs = append(c.recs, b.String())
	c.mu.Unlock()
	return nil
}
func (c *logCapture) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *logCapture) WithGroup(string) slog.Handler      { return c }

func (c *logCapture) count(substr string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, r := range c.recs {
		if strings.Contains(r, substr) {
			n++
		}
	}
	return n
}

func (c *logCapture) all() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.recs, "\n")
}

// upSource is a source that is up while it runs.
type upSource struct{ stats *tap.Stats }

func (u upSource) Run(ctx context.Context, _ tap.EmitFunc) error {
	u.stats.Up.Store(true)
	<-ctx.Done()
	u.stats.Up.Store(false)
	return nil
}

var fastBackoff = backoff{Initial: 10 * time.Millisecond, Max: 40 * time.Millisecond, Settle: 100 * time.Millisecond, LogEvery: time.Hour}

// TestSupervisorFailRecoverAndUpstreamLogs: a tap that cannot be built is
// down, counted once per attempt, logged once (its URL's password masked),
// retried, and logged once when it recovers. Its upstream going down and
// coming back shows in /healthz; the supervisor does not log it (the tap
// logs its own outage, with the address and the error: one line, not two).
func TestSupervisorFailRecoverAndUpstreamLogs(t *testing.T) {
	stats := &tap.Stats{}
	logs := &logCapture{}
	var builds atomic.Int32
	s := &tapSupervisor{name: "mesh", typ: "nats", hasUpstream: true, stats: stats, log: slog.New(logs), policy: fastBackoff,
		build: func() (tap.Source, error) {
			if builds.Add(1) <= 3 {
				return nil, errors.New("connect nats://e2atap:hunter2@broker:4222: refused")
			}
			return upSource{stats}, nil
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src, err := s.build()
		s.run(ctx, src, err)
	}()
	defer func() { cancel(); <-done }()

	pollUntil(t, "the tap to recover", 10*time.Second, func() bool { return logs.count("tap recovered") == 1 })
	if n := stats.Errors[tap.ErrStart].Load(); n != 3 {
		t.Errorf("errors{start} = %d after 3 failed builds", n)
	}
	if n := logs.count("tap failed; it is down"); n != 1 {
		t.Errorf("%d failure logs for one run of failures, want 1", n)
	}
	if strings.Contains(logs.all(), "hunter2") || !strings.Contains(logs.all(), "nats://******@broker") {
		t.Errorf("the password is not masked in the log:\n%s", logs.all())
	}
	if h := s.health(); h.State != "upstream_down" || !h.Up || h.Failures != 0 || !strings.Contains(h.LastError, "******") {
		t.Errorf("health after recovery: %+v", h)
	}

	stats.UpstreamUp.Store(true)
	pollUntil(t, "healthy", 5*time.Second, func() bool { return s.health().State == "ok" })
	stats.UpstreamUp.Store(false)
	pollUntil(t, "upstream_down in /healthz", 5*time.Second, func() bool { return s.health().State == "upstream_down" })
	stats.UpstreamUp.Store(true)
	pollUntil(t, "healthy again", 5*time.Second, func() bool { return s.health().State == "ok" })
	time.Sleep(500 * time.Millisecond) // a few of the supervisor's 200 ms ticks
	if n := logs.count("upstream"); n != 0 {
		t.Errorf("the supervisor logged the upstream's changes (the tap logs them itself):\n%s", logs.all())
	}
}

// panicSource panics on its first Run, then runs.
type panicSource struct {
	stats *tap.Stats
	runs  *atomic.Int32
}

func (p panicSource) Run(ctx context.Context, emit tap.EmitFunc) error {
	if p.runs.Add(1) == 1 {
		panic("boom: a bug in a tap")
	}
	return upSource{p.stats}.Run(ctx, emit)
}

// TestSupervisorPanicIsATapFailure: a panic on a tap's Run goroutine makes
// that tap fail and be retried; the process (here: the test) goes on.
func TestSupervisorPanicIsATapFailure(t *testing.T) {
	stats := &tap.Stats{}
	logs := &logCapture{}
	var runs atomic.Int32
	s := &tapSupervisor{name: "logs", typ: "logdir", stats: stats, log: slog.New(logs), policy: fastBackoff,
		build: func() (tap.Source, error) { return panicSource{stats, &runs}, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		src, err := s.build()
		s.run(ctx, src, err)
	}()
	defer func() { cancel(); <-done }()
	pollUntil(t, "the tap to run again after its panic", 10*time.Second, func() bool { return runs.Load() >= 2 && stats.Up.Load() })
	if logs.count("tap panicked") != 1 || logs.count("tap failed; it is down") != 1 || stats.Errors[tap.ErrStart].Load() != 1 {
		t.Errorf("a panic was not reported as one tap failure:\n%s", logs.all())
	}
}
