package validate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestLive(t *testing.T) {
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := base
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg := DefaultLiveConfig()
	cfg.Engine.IdleTimeout = time.Minute
	cfg.JoinWindow = 10 * time.Second
	cfg.ExpireEvery = 5 * time.Millisecond
	cfg.Now = clock
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() { done <- l.Run(ctx) }()

	submit := func(tap, conn string, at time.Duration, line string) {
		t.Helper()
		if err := l.Submit(ctx, Input{Tap: tap, Conn: conn, Time: base.Add(at), Data: []byte(line), Pos: Position{Kind: PosConn, Name: conn}}); err != nil {
			t.Fatal(err)
		}
	}
	// Joined mid-stream right after the tap came up: no seq_start.
	submit("ws", "c1", time.Second, resp(5, "request_id", "a"))
	// Outside the window, a new stream above 0 is seq_start.
	submit("ws", "c1", 20*time.Second, resp(3, "request_id", "b"))
	// c2 closes with an open stream: missing_final (disconnect).
	submit("ws", "c2", 21*time.Second, resp(0, "request_id", "c"))
	if err := l.ConnClosed(ctx, "ws", "c2", base.Add(22*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Same request_id on another tap is another stream.
	submit("logs", "", 23*time.Second, final(0, "request_id", "a"))
	// Stream a goes idle: the clock moves past the idle timeout.
	waitFor(t, func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.records) == 4 })
	mu.Lock()
	now = base.Add(5 * time.Minute)
	mu.Unlock()
	waitFor(t, func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.findings) >= 4 })
	cancel()
	st := <-done

	var got []string
	col.mu.Lock()
	for _, f := range col.findings {
		got = append(got, f.Rule+" "+f.Tap+" "+f.Stream)
	}
	col.mu.Unlock()
	sort.Strings(got)
	want := []string{"e2a.missing_final ws a", "e2a.missing_final ws b", "e2a.missing_final ws c", "e2a.seq_start ws b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("findings %q, want %q", got, want)
	}
	if st.Joined != 1 {
		t.Errorf("joined %d, want 1", st.Joined)
	}
	for _, e := range col.ends {
		if e.Key == "c" && e.Reason != ReasonDisconnect {
			t.Errorf("stream c ended with reason %q, want %q", e.Reason, ReasonDisconnect)
		}
		if e.Key == "a" && e.Tap == "ws" && e.Reason != ReasonIdle {
			t.Errorf("stream a ended with reason %q, want %q", e.Reason, ReasonIdle)
		}
	}
}

// TestLiveJoinWindowPerTap: each tap's join window is its own, opened by
// its first record or its (re)connect, whichever taps' records are
// interleaved (Live keeps the last tap's start at hand).
func TestLiveJoinWindowPerTap(t *testing.T) {
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	cfg := DefaultLiveConfig()
	cfg.Engine.IdleTimeout = time.Hour
	cfg.JoinWindow = 10 * time.Second
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() { done <- l.Run(ctx) }()
	n := 0
	submit := func(tap string, at time.Duration, id string) {
		t.Helper()
		n++
		if err := l.Submit(ctx, Input{Tap: tap, Time: base.Add(at), Data: []byte(resp(5, "request_id", id))}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Connected(ctx, "a", base); err != nil {
		t.Fatal(err)
	}
	submit("a", time.Second, "a1")    // a's window: joined
	submit("b", 15*time.Second, "b1") // b's first record opens b's: joined
	submit("a", 16*time.Second, "a2") // past a's: seq_start
	submit("b", 17*time.Second, "b2") // in b's: joined
	submit("b", 18*time.Second, "b3") // the same tap again: joined
	submit("a", 20*time.Second, "a3") // past a's: seq_start
	if err := l.Connected(ctx, "a", base.Add(30*time.Second)); err != nil {
		t.Fatal(err)
	}
	submit("a", 31*time.Second, "a4") // a reconnected: joined
	submit("b", 32*time.Second, "b4") // past b's: seq_start
	if err := l.Connected(ctx, "b", base.Add(34*time.Second)); err != nil {
		t.Fatal(err)
	}
	submit("b", 35*time.Second, "b5") // b reconnected: joined
	submit("a", 36*time.Second, "a5") // joined
	waitFor(t, func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.records) == n })
	cancel()
	st := <-done
	var got []string
	col.mu.Lock()
	for _, f := range col.findings {
		if f.Rule == "e2a.seq_start" {
			got = append(got, f.Tap+" "+f.Stream)
		}
	}
	col.mu.Unlock()
	sort.Strings(got)
	if want := []string{"a a2", "a a3", "b b4"}; !slices.Equal(got, want) {
		t.Errorf("seq_start of %q, want %q", got, want)
	}
	if st.Joined != 7 {
		t.Errorf("joined %d, want 7", st.Joined)
	}
}

// waitFor polls until cond holds (tests never sleep a fixed time). The
// deadline is a hang guard: under -race on a loaded machine 10000 queued
// records took more than 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 60s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestLiveBacklogIsNotIdle: records queued behind a slow sink are not
// idle: expiry measures against the newest record judged, not the wall
// clock, while the queue is not empty.
func TestLiveBacklogIsNotIdle(t *testing.T) {
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := base
	cfg := DefaultLiveConfig()
	cfg.Engine.IdleTimeout = time.Second
	cfg.JoinWindow = 0
	cfg.ExpireEvery = time.Millisecond
	cfg.Queue = 20000 // a backlog beyond the shards' own queues
	cfg.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	gate := make(chan struct{})
	col := &collector{}
	slow := &gatedSink{collector: col, gate: gate}
	l := NewLive(cfg, slow)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats)
	go func() { done <- l.Run(ctx) }()
	// Stream q: a chunk, then (much later in capture time than the wall
	// clock will show) more chunks and the final, all queued.
	const n = 10000
	for seq := 0; seq < n; seq++ {
		line := resp(seq, "request_id", "q")
		if seq == n-1 {
			line = final(seq, "request_id", "q")
		}
		if err := l.Submit(ctx, Input{Tap: "ws", Time: base.Add(time.Duration(seq) * time.Millisecond), Data: []byte(line)}); err != nil {
			t.Fatal(err)
		}
	}
	// The wall clock runs far ahead while the engine is stuck.
	mu.Lock()
	now = base.Add(time.Hour)
	mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	close(gate)
	waitFor(t, func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.ends) == 1 })
	cancel()
	<-done
	for _, f := range col.findings {
		t.Errorf("false finding under backlog: %s %s: %s", f.Rule, f.Stream, f.Message)
	}
	if col.ends[0].Outcome != OutcomeSucceeded {
		t.Errorf("stream ended %s, want succeeded", col.ends[0].Outcome)
	}
}

// gatedSink blocks the first record until gate is closed (a stalled sink).
type gatedSink struct {
	*collector
	gate chan struct{}
	once sync.Once
}

func (g *gatedSink) Record(r *RecordInfo) {
	g.once.Do(func() { <-g.gate })
	g.collector.Record(r)
}

// TestLiveLostGapsTheScopeAndReleasesCharges: a loss (reported by Lost,
// or a record a tap marked Gap, as the ws tap marks the copy after a drop)
// gaps its scope, and every charge goes back once: a record marked Gap
// was released once more per shard, and the budget went negative, letting
// the taps hold more than it after every drop.
func TestLiveLostGapsTheScopeAndReleasesCharges(t *testing.T) {
	for _, mode := range []string{"none", "lost", "gap"} {
		var released atomic.Int64
		col := &collector{}
		cfg := DefaultLiveConfig()
		cfg.Shards = 2
		cfg.JoinWindow = 0
		cfg.Release = func(n int) { released.Add(int64(n)) }
		l := NewLive(cfg, col)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan Stats, 1)
		go func() { done <- l.Run(ctx) }()
		at := time.Unix(1000, 0)
		var charged int64
		send := func(line string, gap bool) {
			t.Helper()
			charged += int64(len(line))
			if err := l.Submit(context.Background(), Input{Tap: "t", Time: at, Data: []byte(line), Charged: len(line), Gap: gap}); err != nil {
				t.Fatal(err)
			}
		}
		send(resp(0), false)
		if mode == "lost" {
			if err := l.Lost(context.Background(), "t", "", at); err != nil {
				t.Fatal(err)
			}
		}
		send(resp(5), mode == "gap")
		cancel()
		<-done
		var rules []string
		for _, f := range col.findings {
			rules = append(rules, f.Rule)
		}
		if mode != "none" && len(rules) > 0 {
			t.Errorf("%s: findings across a loss: %v", mode, rules)
		}
		if mode == "none" && !slices.Contains(rules, "e2a.seq_gap") {
			t.Errorf("without a loss, sequence 5 after 0 gave %v, want e2a.seq_gap", rules)
		}
		if released.Load() != charged {
			t.Errorf("%s: released %d bytes, charged %d", mode, released.Load(), charged)
		}
	}
}

// TestLiveQueueBlocksAndWakesEveryProducer: a full queue blocks Submit
// (until ctx is done) rather than dropping, and once Run takes it every
// waiting producer gets through: many taps on a queue of 3 hand over
// every record, in each tap's order, with none lost and none stuck.
func TestLiveQueueBlocksAndWakesEveryProducer(t *testing.T) {
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	cfg := DefaultLiveConfig()
	cfg.Queue = 3
	cfg.Engine.IdleTimeout = 0
	col := &collector{}
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := 0; i < 3; i++ {
		if err := l.Submit(ctx, Input{Tap: "t0", Time: base, Data: []byte(resp(i, "request_id", "q"))}); err != nil {
			t.Fatal(err)
		}
	}
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	err := l.Submit(short, Input{Tap: "t0", Time: base, Data: []byte(resp(3, "request_id", "q"))})
	stop()
	if err != context.DeadlineExceeded {
		t.Fatalf("Submit on a full queue returned %v, want it to wait until its ctx ended", err)
	}

	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	const taps, per = 8, 2000
	lines := make([][]byte, per) // resp and final are not safe for concurrent use
	for i := range lines {
		lines[i] = []byte(resp(i, "request_id", "s"))
		if i == per-1 {
			lines[i] = []byte(final(i, "request_id", "s"))
		}
	}
	var wg sync.WaitGroup
	for p := 0; p < taps; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tapName := "tap" + string(rune('a'+p))
			for i := 0; i < per; i++ {
				if err := l.Submit(ctx, Input{Tap: tapName, Time: base, Data: slices.Clone(lines[i])}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	submitted := make(chan struct{})
	go func() { wg.Wait(); close(submitted) }()
	select {
	case <-submitted:
	case <-time.After(60 * time.Second):
		t.Fatal("producers stuck on the queue")
	}
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	st := <-done
	if want := uint64(3 + taps*per); st.Records != want {
		t.Errorf("judged %d records, want %d", st.Records, want)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, f := range col.findings {
		if f.Tap != "t0" { // t0's stream q was cut short on purpose
			t.Errorf("finding on an ordered tap: %s %s %s", f.Rule, f.Tap, f.Message)
		}
	}
	if n := len(col.ends); n < taps {
		t.Errorf("%d streams ended, want the %d taps' streams", n, taps)
	}
}

// blockingSink records the stream of every Record in order and, while
// armed, holds the Record of stream hold until released.
type blockingSink struct {
	collector
	hold     string
	armed    atomic.Bool
	entered  chan struct{}
	release  chan struct{}
	orderMu  sync.Mutex
	streams  []string
	sawByKey map[string]bool
}

func (b *blockingSink) Record(r *RecordInfo) {
	key := string(r.Stream)
	b.orderMu.Lock()
	b.streams = append(b.streams, key)
	b.sawByKey[key] = true
	b.orderMu.Unlock()
	if key == b.hold && b.armed.CompareAndSwap(true, false) {
		b.entered <- struct{}{}
		<-b.release
	}
	b.collector.Record(r)
}

func (b *blockingSink) saw(key string) bool {
	b.orderMu.Lock()
	defer b.orderMu.Unlock()
	return b.sawByKey[key]
}

// countBefore is how many records of stream x came before the first of y.
func (b *blockingSink) countBefore(x, y string) int {
	b.orderMu.Lock()
	defer b.orderMu.Unlock()
	n := 0
	for _, k := range b.streams {
		if k == y {
			break
		}
		if k == x {
			n++
		}
	}
	return n
}

// TestLiveUnorderedInterrupts: with no sink needing the order across
// shards (LiveConfig.Unordered: no record log), a chat.interrupt waits for
// no shard: it is judged on its own shard while another shard is still
// busy with what came before it. SetOrdered(true) (a record log opened at
// a reload) brings the barrier back: the interrupt is judged only after
// every record before it; SetOrdered(false) removes it again.
func TestLiveUnorderedInterrupts(t *testing.T) {
	cfg := DefaultLiveConfig()
	cfg.Shards = 2
	cfg.JoinWindow = 0
	cfg.Unordered = true
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{}), sawByKey: map[string]bool{}}
	l := NewLive(cfg, sink)
	// The held stream on a shard of its own goroutine (not Run's: Run
	// judges shard 0's streams itself), the interrupts on another
	// (before Run starts: the reader's routing is the test's until then).
	held := "held"
	for i := 0; l.run.shardOf([]byte(held), false) == l.run.shards[0]; i++ {
		held = fmt.Sprintf("held%d", i)
	}
	sink.hold = held
	heldShard := l.run.shardOf([]byte(held), false)
	var ids []string
	for i := 0; len(ids) < 3; i++ {
		id := fmt.Sprintf("int%d", i)
		if l.run.shardOf([]byte(id), false) != heldShard {
			ids = append(ids, id)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	at := time.Now() // the sweeps read the wall clock: nothing goes idle
	submit := func(line string) {
		t.Helper()
		if err := l.Submit(ctx, Input{Tap: "t", Time: at, Data: []byte(line)}); err != nil {
			t.Fatal(err)
		}
	}
	interrupt := func(id string) string {
		return `{"request_id":"` + id + `","session_id":"s1","method":"chat.interrupt","params":{}}`
	}
	hold := func(seq int) {
		t.Helper()
		sink.armed.Store(true)
		submit(resp(seq, "request_id", held))
		select {
		case <-sink.entered:
		case <-time.After(30 * time.Second):
			t.Fatal("the held record never reached its shard")
		}
	}

	// Unordered: the interrupt is judged while the held shard is busy.
	hold(0)
	submit(interrupt(ids[0]))
	waitFor(t, func() bool { return sink.saw(ids[0]) })
	sink.release <- struct{}{}

	// Ordered: it waits for the held record.
	if err := l.SetOrdered(ctx, true); err != nil {
		t.Fatal(err)
	}
	hold(1)
	submit(interrupt(ids[1]))
	waitFor(t, func() bool { return l.q.len() == 0 }) // Run has it
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if sink.saw(ids[1]) {
			t.Fatal("ordered: the interrupt was judged before the record submitted ahead of it")
		}
	}
	sink.release <- struct{}{}
	waitFor(t, func() bool { return sink.saw(ids[1]) })
	if n := sink.countBefore(held, ids[1]); n != 2 { // seq 0 and the held seq 1
		t.Fatalf("ordered: %d records of the held stream before the interrupt, want 2", n)
	}

	// Unordered again.
	if err := l.SetOrdered(ctx, false); err != nil {
		t.Fatal(err)
	}
	hold(2)
	submit(interrupt(ids[2]))
	waitFor(t, func() bool { return sink.saw(ids[2]) })
	sink.release <- struct{}{}
	submit(final(3, "request_id", held))
	cancel()
	st := <-done
	if st.Records != 7 {
		t.Errorf("judged %d records, want 7", st.Records)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	for _, f := range sink.findings {
		t.Errorf("finding: %s %s %s", f.Rule, f.Stream, f.Message)
	}
}

// TestLiveUntracked: Live.Untracked, read while Run runs (the metric
// e2atap_records_untracked_total), counts the records of streams the
// tables had no memory for, as the final Stats do.
func TestLiveUntracked(t *testing.T) {
	cfg := DefaultLiveConfig()
	cfg.Shards = 2
	cfg.JoinWindow = 0
	l := NewLive(cfg, &collector{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	at := time.Now()
	open := func(from, n int) {
		t.Helper()
		for s := from; s < from+n; s++ {
			if err := l.Submit(ctx, Input{Tap: "t", Time: at, Data: streamRecord(nil, s, 0, false, longID)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	open(0, 2000)
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := l.Untracked(); n != 0 {
		t.Fatalf("untracked %d before any mapping failed", n)
	}
	failMaps.Store(true)
	defer failMaps.Store(false)
	fails := TableAllocFailures()
	open(10_000, 60_000)
	if err := l.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if TableAllocFailures() == fails {
		t.Fatal("no mapping was refused: the test does not test anything")
	}
	live := l.Untracked()
	cancel()
	st := <-done
	if live == 0 || live != st.Untracked {
		t.Fatalf("Untracked while running %d, final stats %d: want them equal and above 0", live, st.Untracked)
	}
}

// gapSink notes, for each record, its scope and whether it carried Gap.
type gapSink struct {
	collector
	gaps []string
}

func (g *gapSink) Record(r *RecordInfo) {
	g.mu.Lock()
	g.gaps = append(g.gaps, fmt.Sprintf("%s/%s:%v", r.In.Tap, r.In.Conn, r.In.Gap))
	g.mu.Unlock()
}

// TestLiveLossMarksTheScopesNextRecord: the record after a loss, and only
// it, carries Gap, in the loss's scope only, so that the record log marks
// it ("gap") and its replay gaps the streams the live run gapped; a
// connection's pending mark goes with its end.
func TestLiveLossMarksTheScopesNextRecord(t *testing.T) {
	col := &gapSink{}
	cfg := DefaultLiveConfig()
	cfg.Shards = 1 // the records' order is the sink's
	cfg.JoinWindow = 0
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	at := time.Unix(1000, 0)
	bg := context.Background()
	send := func(tap, conn string, seq int) {
		t.Helper()
		if err := l.Submit(bg, Input{Tap: tap, Conn: conn, Time: at, Data: []byte(resp(seq))}); err != nil {
			t.Fatal(err)
		}
	}
	send("t", "", 0)
	if err := l.Lost(bg, "t", "", at); err != nil {
		t.Fatal(err)
	}
	if err := l.Lost(bg, "t", "c1", at); err != nil {
		t.Fatal(err)
	}
	send("u", "", 0)
	send("t", "", 5)
	send("t", "", 6)
	if err := l.ConnClosed(bg, "t", "c1", at); err != nil {
		t.Fatal(err)
	}
	send("t", "c1", 0)
	cancel()
	<-done
	want := []string{"t/:false", "u/:false", "t/:true", "t/:false", "t/c1:false"}
	if !slices.Equal(col.gaps, want) {
		t.Errorf("records (scope:gap) %v, want %v", col.gaps, want)
	}
	if len(l.lost) != 0 {
		t.Errorf("pending losses left: %v", l.lost)
	}
	for _, f := range col.findings {
		if f.Rule == "e2a.seq_gap" {
			t.Errorf("judged across the loss: %+v", f)
		}
	}
}

// markSink is a gapSink that also marks losses (LossMarker).
type markSink struct {
	gapSink
	marks []string
}

func (m *markSink) LossMark(in *Input) {
	m.mu.Lock()
	m.marks = append(m.marks, in.Tap+"/"+in.Conn)
	m.mu.Unlock()
}

// TestLiveLossAtAConnectionsEnd: a loss that no record of its connection
// follows (the connection ended first: a copy dropped at its end, or the
// tap cutting it at shutdown) is told to a LossMarker sink once, after
// the connection's records, if a stream of the connection was still open;
// one that a record follows is that record's Gap, and not told.
func TestLiveLossAtAConnectionsEnd(t *testing.T) {
	col := &markSink{}
	cfg := DefaultLiveConfig()
	cfg.Shards = 2
	cfg.JoinWindow = 0
	l := NewLive(cfg, col)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Stats, 1)
	go func() { done <- l.Run(ctx) }()
	at := time.Unix(1000, 0)
	bg := context.Background()
	for _, c := range []string{"c1", "c2"} {
		if err := l.Submit(bg, Input{Tap: "t", Conn: c, Time: at, Data: []byte(resp(0))}); err != nil {
			t.Fatal(err)
		}
		if err := l.Lost(bg, "t", c, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Submit(bg, Input{Tap: "t", Conn: "c2", Time: at, Data: []byte(resp(3))}); err != nil {
		t.Fatal(err)
	}
	// c3's stream ended before its loss: nothing of it is cut.
	if err := l.Submit(bg, Input{Tap: "t", Conn: "c3", Time: at, Data: []byte(resp(0, "is_final", true, "status", "succeeded", "response_kind", "e2a.complete", "body", map[string]any{"result": map[string]any{}}))}); err != nil {
		t.Fatal(err)
	}
	if err := l.Lost(bg, "t", "c3", at); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c1", "c2", "c3"} {
		if err := l.ConnClosed(bg, "t", c, at); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Sync(bg); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	marks, records := slices.Clone(col.marks), len(col.gaps)
	col.mu.Unlock()
	cancel()
	<-done
	if !slices.Equal(marks, []string{"t/c1"}) || records != 4 {
		t.Errorf("marks %v after %d records, want t/c1 after 4", marks, records)
	}
	for _, f := range col.findings {
		t.Errorf("finding across a loss: %+v", f)
	}
}

// openSink counts OpenLeft calls, and the records before the first.
type openSink struct {
	gapSink
	left, before int
}

func (o *openSink) OpenLeft() {
	o.mu.Lock()
	if o.left == 0 {
		o.before = len(o.gaps)
	}
	o.left++
	o.mu.Unlock()
}

// TestLiveOpenLeftAtShutdown: a live run that does not finish its streams
// at shutdown (FinishOnShutdown false) tells an OpenMarker sink once, after
// every record, when it stops with a stream open, on any shard; not when
// every stream has ended, and not when it finishes them (they are then
// reported as missing_final, and a replay does the same).
func TestLiveOpenLeftAtShutdown(t *testing.T) {
	final := resp(1, "is_final", true, "status", "succeeded", "response_kind", "e2a.complete", "body", map[string]any{"result": map[string]any{}})
	for _, c := range []struct {
		name   string
		finish bool
		open   bool
		want   int
	}{
		{"open left", false, true, 1},
		{"all ended", false, false, 0},
		{"finished", true, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			col := &openSink{}
			cfg := DefaultLiveConfig()
			cfg.Shards, cfg.JoinWindow, cfg.FinishOnShutdown = 2, 0, c.finish
			l := NewLive(cfg, col)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan Stats, 1)
			go func() { done <- l.Run(ctx) }()
			at := time.Unix(1000, 0)
			bg := context.Background()
			n := 0
			for i := range 16 { // streams on both shards
				tap := fmt.Sprintf("t%d", i)
				recs := []string{resp(0), final}
				if c.open && i == 15 {
					recs = recs[:1]
				}
				for _, r := range recs {
					if err := l.Submit(bg, Input{Tap: tap, Time: at, Data: []byte(r)}); err != nil {
						t.Fatal(err)
					}
					n++
				}
			}
			cancel()
			<-done
			col.mu.Lock()
			defer col.mu.Unlock()
			if col.left != c.want || c.want > 0 && col.before != n {
				t.Errorf("OpenLeft told %d times (after %d of %d records), want %d", col.left, col.before, n, c.want)
			}
		})
	}
}
