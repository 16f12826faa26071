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

// streamLen is how many records a stream of the rebalance test has; the
// last one ends it.
const streamLen = 9

// openModel is what the engine tells a tap's commit (Config.BeforeCommit),
// modelled: a stream is open from its first record (I = 0) until its
// last (I = streamLen-1); per partition, the tap may commit no further
// than the first offset of the oldest open stream. A handover (a Lost
// scoped to a partition) forgets that partition's streams, as the engine
// drops them.
type openModel struct {
	mu    sync.Mutex
	first map[tap.Position]map[int]int64 // partition (Offset 0) → stream → first offset
	all   []tap.Message
}

func newOpenModel() *openModel { return &openModel{first: map[tap.Position]map[int]int64{}} }

func (o *openModel) emit(_ context.Context, m tap.Message) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if m.Progress {
		return nil
	}
	o.all = append(o.all, m)
	part := tap.Position{Kind: tap.PosKafka, Name: m.Pos.Name, Partition: m.Pos.Partition}
	if m.Lost {
		delete(o.first, part)
		return nil
	}
	var r taptest.SeqRecord
	if m.Reconnected || json.Unmarshal(m.Data, &r) != nil {
		return nil
	}
	if o.first[part] == nil {
		o.first[part] = map[int]int64{}
	}
	if _, open := o.first[part][r.S]; !open {
		o.first[part][r.S] = m.Pos.Offset
	}
	if r.I == streamLen-1 {
		delete(o.first[part], r.S)
	}
	return nil
}

func (o *openModel) beforeCommit(context.Context) (OpenFirst, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	low := map[tap.Position]int64{}
	for part, streams := range o.first {
		for _, off := range streams {
			if cur, ok := low[part]; !ok || off < cur {
				low[part] = off
			}
		}
	}
	return func(topic string, partition int32) (int64, bool) {
		off, ok := low[tap.Position{Kind: tap.PosKafka, Name: topic, Partition: partition}]
		return off, ok
	}, nil
}

func (o *openModel) messages() []tap.Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]tap.Message(nil), o.all...)
}

// wholeStreams checks one tap's messages: after every handover of its
// partition, a stream is read again from its first record, and in between
// its sequence has no jump. It returns the problems, the streams read to
// their end and the records seen.
func wholeStreams(msgs []tap.Message) (problems []string, ended map[int]bool, records int) {
	last := map[int]int{} // stream → last sequence since its partition's handover
	part := map[int]int32{}
	ended = map[int]bool{}
	for _, m := range msgs {
		if m.Lost {
			if m.Pos.Kind != tap.PosKafka || m.LossReason != tap.DropRebalance {
				problems = append(problems, fmt.Sprintf("loss %+v: want a handover of one partition", m))
			}
			for s, p := range part {
				if p == m.Pos.Partition {
					delete(last, s)
				}
			}
			continue
		}
		var r taptest.SeqRecord
		if m.Reconnected || json.Unmarshal(m.Data, &r) != nil {
			continue
		}
		records++
		part[r.S] = m.Pos.Partition
		prev, seen := last[r.S]
		switch {
		case !seen && r.I != 0:
			problems = append(problems, fmt.Sprintf("stream %d read from the middle (first %d at %v)", r.S, r.I, m.Pos))
		case seen && r.I != prev+1:
			problems = append(problems, fmt.Sprintf("stream %d: %d after %d", r.S, r.I, prev))
		}
		last[r.S] = r.I
		if r.I == streamLen-1 && (seen || r.I == 0) {
			ended[r.S] = true
		}
	}
	return problems, ended, records
}

// Two taps in one group, with the commit policy: the second one's arrival
// takes partitions (and their open streams) from the first, its departure
// gives them back. The tap giving a partition up commits only up to the
// oldest open stream's first record and hands the partition's streams over
// (a Lost scoped to it, before anything read afterwards); the tap taking
// it reads every stream open there from its start, so neither judges a
// stream from the middle and every stream is read whole by some tap.
// With the old policy (commit what was read) the taker reads the open
// streams from the middle.
func TestRebalanceHandsStreamsOver(t *testing.T) {
	const topic = "eventmesh-stream"
	brokers := newCluster(t, 4, topic)
	prod := newClient(t, brokers)
	cfg := Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{topic}, Start: "earliest",
		HealthInterval: 100 * time.Millisecond, CommitInterval: 50 * time.Millisecond}
	next := make([]int, 20)

	a := newOpenModel()
	cfgA := cfg
	cfgA.BeforeCommit = a.beforeCommit
	statsA := runTap(t, cfgA, a.emit)
	produceRound(t, prod, topic, next, 3)
	waitFor(t, "tap A to read rounds 0-2", func() bool { _, _, n := wholeStreams(a.messages()); return n == 60 })

	b := newOpenModel()
	cfgB := cfg
	cfgB.BeforeCommit = b.beforeCommit
	stopB := runTapStop(t, cfgB, b.emit)
	waitFor(t, "tap A to hand partitions over", func() bool { return statsA.Drops[tap.DropRebalance].Load() >= 1 })
	waitFor(t, "tap B to read its partitions' streams from their start", func() bool {
		_, _, n := wholeStreams(b.messages())
		return n > 0 && n%3 == 0
	})
	produceRound(t, prod, topic, next, 3)
	waitFor(t, "rounds 3-5", func() bool {
		_, _, na := wholeStreams(a.messages())
		_, _, nb := wholeStreams(b.messages())
		return na+nb >= 120
	})
	if _, _, nb := wholeStreams(b.messages()); nb == 0 {
		t.Fatal("tap B got no partition: the test proves nothing")
	}
	ra0 := statsA.Drops[tap.DropRebalance].Load()
	stopB()
	produceRound(t, prod, topic, next, 3)
	waitFor(t, "every stream read to its end", func() bool {
		_, ea, _ := wholeStreams(a.messages())
		_, eb, _ := wholeStreams(b.messages())
		for s := range next {
			if !ea[s] && !eb[s] {
				return false
			}
		}
		return true
	})
	for name, o := range map[string]*openModel{"A": a, "B": b} {
		if problems, _, _ := wholeStreams(o.messages()); len(problems) > 0 {
			t.Errorf("tap %s: %d problems: %v", name, len(problems), problems[:min(5, len(problems))])
		}
	}
	if statsA.Drops[tap.DropRebalance].Load() != ra0 {
		t.Log("tap A handed over again when B left (an eager rebalance)")
	}
}

// runTap runs a tap with emit until the test ends; Run must return nil.
func runTap(t *testing.T, cfg Config, emit tap.EmitFunc) *tap.Stats {
	t.Helper()
	stats := new(tap.Stats)
	stop := runTapStats(t, cfg, stats, emit)
	_ = stop
	return stats
}

func runTapStop(t *testing.T, cfg Config, emit tap.EmitFunc) func() {
	t.Helper()
	return runTapStats(t, cfg, new(tap.Stats), emit)
}

func runTapStats(t *testing.T, cfg Config, stats *tap.Stats, emit tap.EmitFunc) func() {
	t.Helper()
	tp, err := New(cfg, stats, discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
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
		if m.Lost || m.Reconnected || m.Progress {
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

// A tap that stops (shutdown, a reload, its supervisor starting it again)
// hands its partitions over as it stops: the next run in the same group,
// feeding the same engine, reads the open streams again from the commit,
// and the engine must not see their start twice (or report them missing
// at shutdown).
func TestStopHandsStreamsOver(t *testing.T) {
	const topic = "eventmesh-stream"
	brokers := newCluster(t, 3, topic)
	prod := newClient(t, brokers)
	o := newOpenModel()
	cfg := Config{Name: "mesh-kafka", Brokers: brokers, Topics: []string{topic}, Start: "earliest",
		HealthInterval: 100 * time.Millisecond, CommitInterval: 50 * time.Millisecond, BeforeCommit: o.beforeCommit}
	next := make([]int, 12)
	stop := runTapStop(t, cfg, o.emit)
	produceRound(t, prod, topic, next, 4)
	waitFor(t, "the first run to read rounds 0-3", func() bool { _, _, n := wholeStreams(o.messages()); return n == 48 })
	stop()
	handovers := 0
	for _, m := range o.messages() {
		if m.Lost {
			handovers++
		}
	}
	if handovers != 3 {
		t.Fatalf("%d handovers as the tap stopped, want one per partition (3)", handovers)
	}
	// What the first run judged, per partition: the commit's judged mark.
	firstRun := o.messages()
	judged := map[int32]int64{}
	for _, m := range firstRun {
		if !m.Lost {
			judged[m.Pos.Partition] = max(judged[m.Pos.Partition], m.Pos.Offset+1)
		}
	}
	runTapStop(t, cfg, o.emit)
	produceRound(t, prod, topic, next, streamLen-4)
	waitFor(t, "every stream read to its end", func() bool {
		_, ended, _ := wholeStreams(o.messages())
		return len(ended) == len(next)
	})
	if problems, _, _ := wholeStreams(o.messages()); len(problems) > 0 {
		t.Errorf("%d problems: %v", len(problems), problems[:min(5, len(problems))])
	}
	// The second run reads the open streams again from the commit: what
	// the first one judged is marked Reread (judged for state only), the
	// rest is not.
	reread := 0
	for _, m := range o.messages()[len(firstRun):] {
		if m.Lost || m.Reconnected || len(m.Data) == 0 {
			continue
		}
		if want := m.Pos.Offset < judged[m.Pos.Partition]; m.Reread != want {
			t.Errorf("partition %d offset %d: Reread %v, want %v (the first run judged up to %d)", m.Pos.Partition, m.Pos.Offset, m.Reread, want, judged[m.Pos.Partition]-1)
		}
		if m.Reread {
			reread++
		}
	}
	if reread == 0 {
		t.Error("the second run read nothing again: the test proved nothing")
	}
}
