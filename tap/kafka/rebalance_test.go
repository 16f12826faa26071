package kafkatap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/taptest"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// produceRound writes one record of each stream, rounds times, keyed by
// stream (so that a stream stays on one partition); next is each stream's
// next sequence.
func produceRound(t *testing.T, prod *kgo.Client, topic string, next []int, rounds int) {
	t.Helper()
	var recs []*kgo.Record
	for range rounds {
		for s := range next {
			b, _ := json.Marshal(taptest.SeqRecord{S: s, I: next[s]})
			next[s]++
			recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(fmt.Sprintf("stream-%d", s)), Value: b})
		}
	}
	produce(t, prod, recs...)
}

func (c *collector) snapshot() []tap.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tap.Message(nil), c.all...)
}

// Two taps in one group: the second one's arrival takes partitions (and
// their open streams) from the first, its departure gives them back. Each
// move is a loss for the tap that gave them up, emitted before anything it
// reads afterwards, so that neither tap judges a stream across the time it
// did not own it; the tap that receives partitions opens a join window.
func TestRebalanceIsALoss(t *testing.T) {
	const topic = "eventmesh-stream"
	brokers := newCluster(t, 4, topic)
	prod := newClient(t, brokers)
	cfg := Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{topic}, Start: "earliest", HealthInterval: 100 * time.Millisecond}
	next := make([]int, 20)

	a := &collector{}
	statsA, _ := startTap(t, cfg, a)
	produceRound(t, prod, topic, next, 3)
	waitFor(t, "tap A to read round 1", func() bool { msgs, _ := a.data(); return len(msgs) == 60 })

	b := &collector{}
	_, stopB := startTap(t, cfg, b)
	waitFor(t, "the rebalance", func() bool { rb, _ := b.counts(); return rb >= 1 })
	produceRound(t, prod, topic, next, 3)
	waitFor(t, "round 2 split over both taps", func() bool {
		ma, _ := a.data()
		mb, _ := b.data()
		return len(ma)+len(mb) == 120
	})
	if mb, _ := b.data(); len(mb) == 0 {
		t.Fatal("tap B got no partition: the test proves nothing")
	}
	stopB()
	ra0, _ := a.counts()
	waitFor(t, "tap A to get B's partitions", func() bool { ra, _ := a.counts(); return ra > ra0 })
	produceRound(t, prod, topic, next, 3)
	waitFor(t, "round 3 at tap A", func() bool { ma, _ := a.data(); mb, _ := b.data(); return len(ma)+len(mb) == 180 })

	for name, c := range map[string]*collector{"A": a, "B": b} {
		jumps, checked := taptest.UnjudgedJumps(c.snapshot())
		if len(jumps) > 0 {
			t.Errorf("tap %s: %d sequence jumps across a rebalance not covered by a loss: %v", name, len(jumps), jumps[:min(5, len(jumps))])
		}
		if checked == 0 {
			t.Errorf("tap %s judged nothing", name)
		}
	}
	if d := statsA.Drops[tap.DropRebalance].Load(); d == 0 {
		t.Error("no rebalance drop counted at tap A")
	}
	for _, m := range a.snapshot() {
		if m.Lost && (m.LossReason != tap.DropRebalance || m.Conn != "") {
			t.Errorf("loss %+v: want reason rebalance, scope the tap", m)
		}
	}
	seen := map[tap.Position]bool{}
	ma, _ := a.data()
	mb, _ := b.data()
	for _, m := range append(ma, mb...) {
		if seen[m.Pos] {
			t.Errorf("%v emitted twice", m.Pos)
		}
		seen[m.Pos] = true
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(msg string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(s.b.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// The broker is down when the tap starts: the tap comes up anyway, says
// once that the broker is unreachable (naming it, without credentials),
// keeps trying, says once that it is back (how long, how many attempts),
// and then reads.
func TestBrokerDownAtStartIsLoggedOnceAndRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()

	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := &collector{}
	stats, _ := startTapLog(t, Config{Name: "mesh-kafka", Brokers: []string{addr}, Topics: []string{"eventmesh-stream"},
		Start: "earliest", HealthInterval: 100 * time.Millisecond}, logger, c)
	waitFor(t, "the unreachable log line", func() bool { return len(logs.lines("kafka broker unreachable")) == 1 })
	waitFor(t, "a few failed attempts", func() bool { return stats.Errors[tap.ErrDial].Load() >= 3 })
	if !stats.Up.Load() || stats.UpstreamUp.Load() {
		t.Errorf("Up %v UpstreamUp %v while the broker is down; want true, false", stats.Up.Load(), stats.UpstreamUp.Load())
	}
	time.Sleep(time.Second)

	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(2, "eventmesh-stream"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	prod := newClient(t, cluster.ListenAddrs())
	produce(t, prod, records("eventmesh-stream", 10)...)
	waitFor(t, "records after the broker came up", func() bool { msgs, _ := c.data(); return len(msgs) == 10 })
	waitFor(t, "UpstreamUp", stats.UpstreamUp.Load)
	waitFor(t, "the reachable log line", func() bool { return len(logs.lines("kafka broker reachable again")) == 1 })

	down := logs.lines("kafka broker unreachable")
	back := logs.lines("kafka broker reachable again")
	if len(down) != 1 || len(back) != 1 {
		t.Fatalf("%d unreachable and %d reachable lines, want 1 each", len(down), len(back))
	}
	if down[0]["addr"] != addr || down[0]["tap"] != "mesh-kafka" || down[0]["err"] == "" {
		t.Errorf("unreachable line %v: want addr %s, the tap, the error", down[0], addr)
	}
	if n, _ := back[0]["failed_attempts"].(float64); n < 3 {
		t.Errorf("reachable line %v: failed_attempts < 3", back[0])
	}
	if s, _ := back[0]["outage_seconds"].(float64); s < 1 {
		t.Errorf("reachable line %v: outage_seconds < 1", back[0])
	}
}

// A spent budget makes the Kafka tap read slower, never drop: it waits
// until the engine gives charges back, and then reads on.
func TestBudgetSlowsReading(t *testing.T) {
	brokers := newCluster(t, 1, "eventmesh-stream")
	prod := newClient(t, brokers)
	recs := records("eventmesh-stream", 60)
	produce(t, prod, recs...)
	budget := tap.NewBudget(2048) // a few records' worth
	var mu sync.Mutex
	var held []tap.Message
	n := 0
	emit := func(_ context.Context, m tap.Message) error {
		if m.Lost || m.Reconnected {
			return nil
		}
		if m.Charged != len(m.Data) {
			return fmt.Errorf("record charged %d bytes, holds %d", m.Charged, len(m.Data))
		}
		if budget.Used() > budget.Limit() {
			return fmt.Errorf("%d bytes charged, budget %d", budget.Used(), budget.Limit())
		}
		mu.Lock()
		held = append(held, m)
		n++
		mu.Unlock()
		return nil
	}
	stats := new(tap.Stats)
	tp, err := New(Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{"eventmesh-stream"}, Start: "earliest", Budget: budget}, stats, discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	count := func() int { mu.Lock(); defer mu.Unlock(); return n }
	waitFor(t, "the tap to stall on the budget", func() bool {
		c := count()
		time.Sleep(100 * time.Millisecond)
		return c > 0 && c == count() && c < len(recs)
	})
	for count() < len(recs) {
		mu.Lock()
		h := held
		held = nil
		mu.Unlock()
		for _, m := range h {
			budget.Release(m.Charged)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for i := range stats.Drops {
		if d := stats.Drops[i].Load(); d != 0 {
			t.Errorf("%s drops = %d", tap.DropReasonNames[i], d)
		}
	}
}
