package validate

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// liveKafka runs a Live for a test: submit sends one record of a Kafka
// partition, open reads what may be committed.
type liveKafka struct {
	t   *testing.T
	l   *Live
	col *collector
	ctx context.Context
}

func newLiveKafka(t *testing.T, shards int) *liveKafka {
	cfg := DefaultLiveConfig()
	cfg.Shards = shards
	cfg.JoinWindow = 0
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &liveKafka{t: t, l: l, col: col, ctx: ctx}
}

var kafkaBase = time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)

func (k *liveKafka) submit(part int32, off int64, line string) {
	k.t.Helper()
	in := Input{Tap: "mesh", Time: kafkaBase, Data: []byte(line), Pos: Position{Kind: PosKafka, Name: "t", Partition: part, Offset: off}}
	if err := k.l.Submit(k.ctx, in); err != nil {
		k.t.Fatal(err)
	}
}

func (k *liveKafka) open() map[int32]int64 {
	k.t.Helper()
	m, err := k.l.SyncOpen(k.ctx, "mesh")
	if err != nil {
		k.t.Fatal(err)
	}
	out := map[int32]int64{}
	for kp, off := range m {
		if kp.Tap != "mesh" || kp.Topic != "t" {
			k.t.Fatalf("open partition %+v: not the tap's topic", kp)
		}
		out[kp.Partition] = off
	}
	return out
}

// TestSyncOpenIsTheOldestOpenStream: per partition, what may be committed
// is the first offset of the oldest stream still open, on any shard; a
// stream that ends (final, idle) lets it move on, and a partition with no
// open stream is not named.
func TestSyncOpenIsTheOldestOpenStream(t *testing.T) {
	for _, shards := range []int{1, 3} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			k := newLiveKafka(t, shards)
			// Partition 0: a at 10, b at 11, c at 12; partition 1: d at 5.
			k.submit(0, 10, resp(0, "request_id", "a"))
			k.submit(0, 11, resp(0, "request_id", "b"))
			k.submit(1, 5, resp(0, "request_id", "d"))
			k.submit(0, 12, resp(0, "request_id", "c"))
			if got, want := k.open(), map[int32]int64{0: 10, 1: 5}; fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("open %v, want %v", got, want)
			}
			k.submit(0, 13, final(1, "request_id", "b")) // b ends: a is still the oldest
			if got := k.open()[0]; got != 10 {
				t.Fatalf("after b ended: partition 0 at %d, want 10", got)
			}
			k.submit(0, 14, final(1, "request_id", "a")) // a ends: c (b ended already)
			if got := k.open()[0]; got != 12 {
				t.Fatalf("after a ended: partition 0 at %d, want 12", got)
			}
			k.submit(1, 6, final(1, "request_id", "d"))
			k.submit(0, 15, final(1, "request_id", "c"))
			if got := k.open(); len(got) != 0 {
				t.Fatalf("every stream ended, open %v", got)
			}
			// Other taps' streams are no Kafka partition.
			if err := k.l.Submit(k.ctx, Input{Tap: "logs", Time: kafkaBase, Data: []byte(resp(0, "request_id", "x")), Pos: Position{Kind: PosLine, Name: "f"}}); err != nil {
				t.Fatal(err)
			}
			if got := k.open(); len(got) != 0 {
				t.Fatalf("a log's stream counted: %v", got)
			}
		})
	}
}

// TestHandoverDropsOnlyThePartition: a partition handed over drops its
// streams with no verdict (no missing_final at shutdown, no after_final
// when it is read again from the commit later), while the streams of the
// tap's other partitions are judged as before (a sequence gap across the
// handover is still found there).
func TestHandoverDropsOnlyThePartition(t *testing.T) {
	k := newLiveKafka(t, 2)
	k.submit(0, 1, resp(0, "request_id", "a")) // open at the handover
	k.submit(0, 2, resp(0, "request_id", "b"))
	k.submit(0, 3, final(1, "request_id", "b")) // ended after a began: read again by the next owner
	k.submit(1, 1, resp(0, "request_id", "kept"))
	if got := k.open()[0]; got != 1 {
		t.Fatalf("partition 0 at %d, want 1", got)
	}
	if err := k.l.Handover(k.ctx, "mesh", "t", 0, kafkaBase); err != nil {
		t.Fatal(err)
	}
	if got := k.open(); len(got) != 1 || got[1] != 1 {
		t.Fatalf("after the handover: open %v, want only partition 1 at 1", got)
	}
	k.submit(1, 2, resp(2, "request_id", "kept")) // a gap: still judged
	// The partition comes back and is read again from the commit (1).
	k.submit(0, 1, resp(0, "request_id", "a"))
	k.submit(0, 2, resp(0, "request_id", "b"))
	k.submit(0, 3, final(1, "request_id", "b"))
	k.submit(0, 4, final(1, "request_id", "a"))
	k.submit(1, 3, final(3, "request_id", "kept"))
	k.open()
	k.col.mu.Lock()
	defer k.col.mu.Unlock()
	var rules []string
	for _, f := range k.col.findings {
		rules = append(rules, f.Stream+":"+f.Rule)
	}
	if want := []string{"kept:" + RuleE2ASeqGap.String()}; fmt.Sprint(rules) != fmt.Sprint(want) {
		t.Fatalf("findings %v, want %v", rules, want)
	}
}

// TestOpenFromForgetsStreamsThatLeave: a stream that leaves the table
// without a final (idle timeout, eviction from a full table) no longer
// holds its partition's commit back, and nothing is kept for it.
func TestOpenFromForgetsStreamsThatLeave(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdleTimeout = time.Minute
	e := NewEngine(cfg, &collector{})
	for i := range 5 {
		e.Observe(&Input{Tap: "mesh", Time: kafkaBase, Data: []byte(resp(0, "request_id", fmt.Sprint("s", i))),
			Pos: Position{Kind: PosKafka, Name: "t", Partition: 0, Offset: int64(i)}})
	}
	open := map[KafkaPartition]int64{}
	e.opens.openFirst("mesh", open)
	if len(open) != 1 || open[KafkaPartition{"mesh", "t", 0}] != 0 {
		t.Fatalf("open %v, want partition 0 at 0", open)
	}
	e.Expire(kafkaBase.Add(2 * time.Minute))
	open = map[KafkaPartition]int64{}
	e.opens.openFirst("mesh", open)
	if len(open) != 0 || len(e.opens.streams) != 0 {
		t.Fatalf("after the idle timeout: open %v, %d streams kept", open, len(e.opens.streams))
	}

	cfg.MaxStreams = 2
	e = NewEngine(cfg, &collector{})
	for i := range 50 {
		e.Observe(&Input{Tap: "mesh", Time: kafkaBase.Add(time.Duration(i) * time.Millisecond), Data: []byte(resp(0, "request_id", fmt.Sprint("s", i))),
			Pos: Position{Kind: PosKafka, Name: "t", Partition: 0, Offset: int64(i)}})
	}
	if n := len(e.opens.streams); n > 2 {
		t.Fatalf("%d streams kept for a table of 2", n)
	}
	open = map[KafkaPartition]int64{}
	e.opens.openFirst("mesh", open)
	if off := open[KafkaPartition{"mesh", "t", 0}]; off < 40 {
		t.Fatalf("partition 0 held back at %d by evicted streams", off)
	}
}

// TestOpenFromStaysSmallBehindAStuckStream: one stream that never ends
// holds its partition's commit, but not the memory of every stream that
// opened and ended after it.
func TestOpenFromStaysSmallBehindAStuckStream(t *testing.T) {
	e := NewEngine(DefaultConfig(), &collector{})
	in := func(off int64, line string) *Input {
		return &Input{Tap: "mesh", Time: kafkaBase, Data: []byte(line), Pos: Position{Kind: PosKafka, Name: "t", Offset: off}}
	}
	e.Observe(in(0, resp(0, "request_id", "stuck")))
	for i := int64(1); i < 40_000; i += 2 {
		id := fmt.Sprint("s", i)
		e.Observe(in(i, resp(0, "request_id", id)))
		e.Observe(in(i+1, final(1, "request_id", id)))
	}
	q := e.opens.parts[KafkaPartition{"mesh", "t", 0}]
	if n := len(q.q) - q.head; n > 2*q.open+closedKept+1 {
		t.Fatalf("%d entries kept for %d open streams", n, q.open)
	}
	if off, ok := q.oldest(); !ok || off != 0 {
		t.Fatalf("oldest %d %v, want the stuck stream at 0", off, ok)
	}
}

// TestSilentInputsBuildStateOnly: records read again after a crash (in the
// record log already) are judged for their stream's state and report
// nothing, not even their own violations (reported before the crash); the
// records after them are judged against that state.
func TestSilentInputsBuildStateOnly(t *testing.T) {
	col := &collector{}
	e := NewEngine(DefaultConfig(), col)
	e.Observe(&Input{Tap: "mesh", Time: kafkaBase, Data: []byte(resp(0, "request_id", "a")), Silent: true})
	e.Observe(&Input{Tap: "mesh", Time: kafkaBase, Data: []byte(resp(2, "request_id", "a")), Silent: true}) // a gap, reported before
	e.Observe(&Input{Tap: "mesh", Time: kafkaBase, Data: []byte(resp(4, "request_id", "a"))})               // a gap after the state
	e.Observe(&Input{Tap: "mesh", Time: kafkaBase, Data: []byte(final(5, "request_id", "a"))})
	if len(col.records) != 2 || len(col.starts) != 0 {
		t.Errorf("%d records and %d stream starts reported, want 2 records (the loud ones) and no start (it was silent)", len(col.records), len(col.starts))
	}
	var rules []string
	for _, f := range col.findings {
		rules = append(rules, f.Rule)
	}
	if want := []string{RuleE2ASeqGap.String()}; fmt.Sprint(rules) != fmt.Sprint(want) {
		t.Fatalf("findings %v, want only the gap after the silent records %v", rules, want)
	}
}

// TestHoldKeepsAPartitionBehindFromIdling: while a partition's tap says it
// is behind (Hold), the streams opened on it do not go idle, those of other
// partitions do; once it has caught up they go idle at the next Expire, as
// due by their last record. A handover of a partition behind leaves none
// behind.
func TestHoldKeepsAPartitionBehindFromIdling(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdleTimeout = time.Minute
	col := &collector{}
	e := NewEngine(cfg, col)
	for p, id := range []string{"held", "free"} {
		e.Observe(&Input{Tap: "mesh", Time: kafkaBase, Data: []byte(resp(0, "request_id", id)),
			Pos: Position{Kind: PosKafka, Name: "t", Partition: int32(p), Offset: 1}})
	}
	part0 := &Input{Tap: "mesh", Pos: Position{Kind: PosKafka, Name: "t", Partition: 0}}
	e.Hold(part0, true)
	missing := func() (ids []string) {
		for _, f := range col.findings {
			if f.Rule == RuleE2AMissingFinal.String() {
				ids = append(ids, f.Stream)
			}
		}
		return ids
	}
	e.Expire(kafkaBase.Add(5 * time.Minute))
	if got := missing(); fmt.Sprint(got) != "[free]" {
		t.Fatalf("missing_final of %v while partition 0 is behind, want [free]", got)
	}
	at := kafkaBase.Add(6 * time.Minute)
	part0.Time = at
	e.Hold(part0, false)
	if due, none, _ := e.IdleDue(); none || due.After(at) {
		t.Fatalf("next idle at %v (none %v) after the catch-up at %v", due, none, at)
	}
	e.Expire(at)
	if got := missing(); fmt.Sprint(got) != "[free held]" {
		t.Fatalf("missing_final of %v once partition 0 caught up, want [free held]", got)
	}
	e.Hold(part0, true)
	e.Handover(part0)
	if e.opens.behind != 0 {
		t.Fatalf("%d partitions behind after the handover", e.opens.behind)
	}
}

// TestHoldKeepsAConnectionBehindFromIdling: the engine's side of a ws tap
// blocked writing to a peer that does not read (Hold with a PosConn): the
// held connection's stream does not idle (without the check in Expire,
// every stream was reported missing_final), the other connection's does;
// caught up, the held one is due an idle timeout later, not at once (what
// the peer sent may still come), and reported then; a connection closed
// while held is no longer held, and its stream ends by the
// end-of-connection rule.
func TestHoldKeepsAConnectionBehindFromIdling(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdleTimeout = time.Minute
	col := &collector{}
	e := NewEngine(cfg, col)
	for i, id := range []string{"held", "free", "closed"} {
		conn := []string{"c1", "c2", "c3"}[i]
		e.Observe(&Input{Tap: "agent-ws", Conn: conn, Time: kafkaBase, Data: []byte(resp(0, "request_id", id)),
			Pos: Position{Kind: PosConn, Name: conn}})
	}
	c1 := &Input{Tap: "agent-ws", Conn: "c1", Pos: Position{Kind: PosConn, Name: "c1"}}
	c3 := &Input{Tap: "agent-ws", Conn: "c3", Pos: Position{Kind: PosConn, Name: "c3"}}
	e.Hold(c1, true)
	e.Hold(c3, true)
	findings := func() (got []string) {
		for _, f := range col.findings {
			got = append(got, f.Rule+" "+f.Stream)
		}
		return got
	}
	e.Expire(kafkaBase.Add(5 * time.Minute))
	if got := fmt.Sprint(findings()); got != "[e2a.missing_final free]" {
		t.Fatalf("findings %v while c1 and c3 are behind, want [e2a.missing_final free]", got)
	}
	c3.Time = kafkaBase.Add(5 * time.Minute)
	e.ConnClosed(c3)
	if len(e.heldConns) != 1 {
		t.Fatalf("held connections %v after c3 closed, want c1 alone", e.heldConns)
	}
	at := kafkaBase.Add(6 * time.Minute)
	c1.Time = at
	e.Hold(c1, false)
	e.Expire(at.Add(cfg.IdleTimeout - time.Second))
	if got := fmt.Sprint(findings()); got != "[e2a.missing_final free e2a.missing_final closed]" {
		t.Fatalf("findings %v within an idle timeout of c1's catch-up, want free's and closed's (at its end)", got)
	}
	if due, none, _ := e.IdleDue(); none || !due.Equal(at.Add(cfg.IdleTimeout)) {
		t.Fatalf("next idle at %v (none %v), want an idle timeout after the catch-up at %v", due, none, at)
	}
	e.Expire(at.Add(cfg.IdleTimeout))
	if got := fmt.Sprint(findings()); got != "[e2a.missing_final free e2a.missing_final closed e2a.missing_final held]" {
		t.Fatalf("findings %v an idle timeout after c1 caught up, want held's too", got)
	}
	if len(e.heldConns) != 0 {
		t.Fatalf("held connections %v at the end", e.heldConns)
	}
}
