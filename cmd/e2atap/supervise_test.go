package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
