package natstap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/taptest"
	"github.com/nats-io/nats.go"
)

func (c *collector) all() []tap.Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tap.Message(nil), c.msgs...)
}

// The client's own pending buffer is the only place core NATS loses
// messages: a blocked engine fills it, the client drops (slow consumer),
// and the tap says where, so that no stream is judged across the drops.
func TestCoreSlowConsumerIsALoss(t *testing.T) {
	s := startServer(t, 0, "")
	nc := connect(t, s.ClientURL())
	c := &collector{}
	_, stats := startTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}, PendingMsgs: 50}, c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	waitSubscribed(t, nc, "agent.probe", c)

	vz, err := s.Varz(nil)
	if err != nil {
		t.Fatal(err)
	}
	base := vz.OutMsgs
	c.mu.Lock()
	c.gate = make(chan struct{})
	c.mu.Unlock()
	const streams, n = 5, 2000
	for i := range n {
		b, _ := json.Marshal(taptest.SeqRecord{S: i % streams, I: i / streams})
		nc.Publish("agent.x", b)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	// The drops are counted, in order, at the next callback: wait until the
	// server has sent everything to the tap's client instead.
	waitFor(t, "the server to send everything", func() bool {
		vz, err := s.Varz(nil)
		return err == nil && vz.OutMsgs >= base+n
	})
	close(c.gate)
	// The streams go on, at a pace the tap keeps up with.
	const more = 1000
	for i := n; i < n+more; i++ {
		b, _ := json.Marshal(taptest.SeqRecord{S: i % streams, I: i / streams})
		nc.Publish("agent.x", b)
		if i%20 == 0 { // well under PendingMsgs in flight
			nc.Flush()
			time.Sleep(time.Millisecond)
		}
	}
	// A marker after them: on a busy machine the tap may fall behind these
	// too (more drops, counted) and drop the marker itself (a run under
	// load timed out waiting for it), so markers go out one by one until
	// one arrives. The first that arrives, j, tells that every message
	// before it was taken or dropped, markers 0..j-1 dropped, and its
	// callback counted those drops.
	isMarker := func(m tap.Message) bool { return bytes.HasPrefix(m.Data, []byte(`{"after":`)) }
	var j int
	for j = 0; ; j++ {
		if j == 20 {
			t.Fatal("timed out waiting for a message after the drops")
		}
		nc.Publish("agent.x", []byte(fmt.Sprintf(`{"after":%d}`, j)))
		nc.Flush()
		deadline := time.Now().Add(2 * time.Second)
		seen := false
		for !seen && time.Now().Before(deadline) {
			msgs, _ := c.data()
			seen = len(msgs) > 0 && isMarker(msgs[len(msgs)-1])
			time.Sleep(5 * time.Millisecond)
		}
		if seen {
			break
		}
	}
	all, _ := c.data()
	var msgs []tap.Message
	first := ""
	for _, m := range all {
		if !isMarker(m) {
			msgs = append(msgs, m)
		} else if first == "" {
			first = string(m.Data)
		}
	}
	if want := fmt.Sprintf(`{"after":%d}`, j); first != want {
		// j is the last one published: an earlier one that arrives
		// late (after the wait above) is first.
		fmt.Sscanf(first, `{"after":%d}`, &j)
	}
	drops := stats.Drops[tap.DropQueueFull].Load()
	if uint64(len(msgs))+drops != n+more+uint64(j) {
		t.Fatalf("emitted %d + dropped %d != published %d (+%d markers dropped)", len(msgs), drops, n+more, j)
	}
	if drops == 0 {
		t.Fatal("the client dropped nothing: the test proves nothing")
	}
	if stats.Errors[tap.ErrSlowConsumer].Load() == 0 {
		t.Error("no slow_consumer error counted")
	}
	if c.lost == 0 {
		t.Error("no Lost control message")
	}
	jumps, checked := taptest.UnjudgedJumps(c.all())
	if len(jumps) > 0 {
		t.Errorf("%d sequence jumps not covered by a loss (false seq_gap): %v", len(jumps), jumps[:min(5, len(jumps))])
	}
	if checked < more/2 {
		t.Errorf("only %d sequence steps judged: the loss window covers too much", checked)
	}
	t.Logf("%d dropped by the client, %d steps judged, %d Lost", drops, checked, c.lost)
}

// publisher keeps publishing {"s","i"} round-robin over streams open
// streams until stop; a publish that fails (disconnected, no reconnect
// buffer) is a message the server never had.
type publisher struct {
	stop      chan struct{}
	done      chan struct{}
	published atomic.Int64
	failed    atomic.Int64
}

func startPublisher(t *testing.T, url string, streams int) *publisher {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(10*time.Millisecond), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	p := &publisher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		defer nc.Close()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				nc.Flush()
				return
			default:
			}
			b, _ := json.Marshal(taptest.SeqRecord{S: i % streams, I: i / streams})
			if err := nc.Publish("mesh.traffic", b); err != nil {
				p.failed.Add(1)
				time.Sleep(time.Millisecond)
				continue
			}
			p.published.Add(1)
			if i%streams == streams-1 {
				time.Sleep(2 * time.Millisecond) // about 100 k msgs/s at most
			}
		}
	}()
	t.Cleanup(func() { p.halt() })
	return p
}

func (p *publisher) halt() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// The server is killed under 200 open streams while a publisher keeps
// publishing, and comes back on the same port: what was published
// meanwhile is gone, so the tap emits a loss (reason reconnect) at the
// reconnect and again before the first message after it, and no stream is
// judged across it.
func TestCoreReconnectIsALossInOrder(t *testing.T) {
	var logs bytes.Buffer
	var logMu sync.Mutex
	srv := startServer(t, 0, "")
	port := srv.Addr().(*net.TCPAddr).Port
	url := srv.ClientURL()
	c := &collector{}
	stats := new(tap.Stats)
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &logMu}, nil))
	runTap(t, Config{Name: "mesh", URL: url, Subjects: []string{"mesh.>"},
		ReconnectWait: 20 * time.Millisecond, ReconnectMaxWait: 100 * time.Millisecond}, stats, logger, c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	pub := startPublisher(t, url, 200)
	waitFor(t, "traffic", func() bool { msgs, _ := c.data(); return len(msgs) > 2000 })

	stopServer(srv)
	waitFor(t, "down", func() bool { return !stats.UpstreamUp.Load() })
	time.Sleep(500 * time.Millisecond)
	startServer(t, port, "")
	waitFor(t, "up again", stats.UpstreamUp.Load)
	before, _ := c.data()
	waitFor(t, "traffic after the reconnect", func() bool { msgs, _ := c.data(); return len(msgs) > len(before)+2000 })
	pub.halt()

	if pub.failed.Load() == 0 {
		t.Fatal("no publish failed during the outage: the test proves nothing")
	}
	jumps, checked := taptest.UnjudgedJumps(c.all())
	if len(jumps) > 0 {
		t.Errorf("%d sequence jumps not covered by a loss (false seq_gap): %v", len(jumps), jumps[:min(5, len(jumps))])
	}
	if checked < 2000 {
		t.Errorf("only %d sequence steps judged", checked)
	}
	if got := stats.Drops[tap.DropReconnect].Load(); got != 1 {
		t.Errorf("reconnect drops = %d, want 1", got)
	}
	if got := stats.Reconnects.Load(); got != 1 {
		t.Errorf("Reconnects = %d, want 1", got)
	}
	if got := stats.Errors[tap.ErrDisconnect].Load(); got != 1 {
		t.Errorf("disconnect errors = %d, want 1", got)
	}
	// One at the reconnect (a stream the outage cut whose rest never comes
	// is no missing_final), one in order before the first message after
	// it (messages still pending from before the disconnect are judged
	// before it).
	if c.lost != 2 {
		t.Errorf("%d Lost control messages, want 2", c.lost)
	}
	for _, m := range c.all() {
		if m.Lost && m.LossReason != tap.DropReconnect {
			t.Errorf("loss reason %d, want reconnect", m.LossReason)
		}
	}
	logMu.Lock()
	out := logs.String()
	logMu.Unlock()
	for _, want := range []string{`"msg":"nats server unreachable"`, `"msg":"nats server reachable again"`} {
		if strings.Count(out, want) != 1 {
			t.Errorf("log has %d lines %s, want 1:\n%s", strings.Count(out, want), want, out)
		}
	}
	t.Logf("%d published, %d failed while away, %d steps judged", pub.published.Load(), pub.failed.Load(), checked)
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logLines returns the JSON log lines with the given msg.
func logLines(buf *bytes.Buffer, mu *sync.Mutex, msg string) []map[string]any {
	mu.Lock()
	defer mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// The server is down when the tap starts: the tap comes up anyway, says
// once that the server is unreachable (naming it, credentials removed),
// keeps trying, says once that it is back (how long, how many attempts),
// and then passes messages on.
func TestServerDownAtStartIsLoggedOnceAndRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(&lockedWriter{w: &logs, mu: &mu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := &collector{}
	stats := new(tap.Stats)
	runTap(t, Config{Name: "mesh", URL: fmt.Sprintf("nats://e2atap:s3cret@127.0.0.1:%d", port), Subjects: []string{"agent.>"},
		ReconnectWait: 20 * time.Millisecond, ReconnectMaxWait: 200 * time.Millisecond}, stats, logger, c)
	waitFor(t, "the unreachable line", func() bool { return len(logLines(&logs, &mu, "nats server unreachable")) == 1 })
	waitFor(t, "a few failed attempts", func() bool { return stats.Errors[tap.ErrDial].Load() >= 3 })
	if !stats.Up.Load() || stats.UpstreamUp.Load() {
		t.Errorf("Up %v UpstreamUp %v while the server is down; want true, false", stats.Up.Load(), stats.UpstreamUp.Load())
	}
	time.Sleep(time.Second)

	srv := startServer(t, port, "")
	waitFor(t, "UpstreamUp", stats.UpstreamUp.Load)
	nc := connect(t, srv.ClientURL())
	waitSubscribed(t, nc, "agent.probe", c)
	if err := nc.Publish("agent.x", []byte(`{"after":"start"}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a message after the server came up", func() bool {
		msgs, _ := c.data()
		return len(msgs) == 1 && string(msgs[0].Data) == `{"after":"start"}`
	})
	down := logLines(&logs, &mu, "nats server unreachable")
	back := logLines(&logs, &mu, "nats server reachable again")
	if len(down) != 1 || len(back) != 1 {
		t.Fatalf("%d unreachable and %d reachable lines, want 1 each", len(down), len(back))
	}
	want := fmt.Sprintf("nats://127.0.0.1:%d", port)
	if down[0]["addr"] != want || down[0]["tap"] != "mesh" || down[0]["err"] == "" {
		t.Errorf("unreachable line %v: want addr %s, the tap, the error", down[0], want)
	}
	if n, _ := back[0]["failed_attempts"].(float64); n < 3 {
		t.Errorf("reachable line %v: failed_attempts < 3", back[0])
	}
	if s, _ := back[0]["outage_seconds"].(float64); s < 1 {
		t.Errorf("reachable line %v: outage_seconds < 1", back[0])
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("the log holds the URL's password:\n%s", logs.String())
	}
}

// A stalled engine and a spent budget: the core tap waits, the burst waits
// in the client's pending buffer (sized in bytes, here big enough for the
// whole burst, so that the test cannot flake), nothing is dropped, what
// waits for the engine never exceeds the budget, and everything arrives in
// order once the engine goes on.
func TestCoreBudgetWaitsWithoutLoss(t *testing.T) {
	s := startServer(t, 0, "")
	nc := connect(t, s.ClientURL())
	budget := tap.NewBudget(256 << 10)
	var mu sync.Mutex
	var held []tap.Message // charged messages the "engine" has not judged
	var maxUsed atomic.Int64
	var got atomic.Int64
	gate := make(chan struct{})
	var order []int
	emit := func(ctx context.Context, m tap.Message) error {
		if m.Reconnected || m.Lost || m.Progress {
			return nil
		}
		if u := budget.Used(); u > maxUsed.Load() {
			maxUsed.Store(u)
		}
		var p taptest.SeqRecord
		if json.Unmarshal(m.Data, &p) == nil && bytes.HasPrefix(m.Data, []byte(`{"s":`)) {
			if m.Charged != len(m.Data) {
				return fmt.Errorf("message charged %d bytes, holds %d", m.Charged, len(m.Data))
			}
			mu.Lock()
			held = append(held, m)
			order = append(order, p.I)
			mu.Unlock()
			got.Add(1)
		} else {
			budget.Release(m.Charged)
		}
		return nil
	}
	stats := new(tap.Stats)
	tp, err := New(Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}, Budget: budget, PendingBytes: 64 << 20}, stats, discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tp.Run(ctx, emit) }()
	t.Cleanup(func() { cancel(); <-done })
	waitFor(t, "up", stats.UpstreamUp.Load)
	// The "engine" judges (releases) only once the gate opens.
	go func() {
		<-gate
		for {
			mu.Lock()
			h := held
			held = nil
			mu.Unlock()
			for _, m := range h {
				budget.Release(m.Charged)
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	time.Sleep(100 * time.Millisecond) // the subscription reaches the server
	const n = 20000
	payload := bytes.Repeat([]byte("x"), 880)
	for i := range n {
		b, _ := json.Marshal(struct {
			S int    `json:"s"`
			I int    `json:"i"`
			P []byte `json:"p"`
		}{0, i, payload})
		if err := nc.Publish("agent.x", b); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tap to stall on the budget", func() bool {
		g := got.Load()
		time.Sleep(50 * time.Millisecond)
		return g > 0 && g == got.Load() && g < n
	})
	close(gate)
	waitFor(t, "every message", func() bool { return got.Load() == n })
	for i := range stats.Drops {
		if d := stats.Drops[i].Load(); d != 0 {
			t.Errorf("%s drops = %d", tap.DropReasonNames[i], d)
		}
	}
	if maxUsed.Load() > budget.Limit() {
		t.Errorf("%d bytes charged at most, over the budget of %d", maxUsed.Load(), budget.Limit())
	}
	mu.Lock()
	defer mu.Unlock()
	for i, v := range order {
		if v != i {
			t.Fatalf("message %d is %d: out of order", i, v)
		}
	}
}

func TestLossWindowsStaySortedAndDisjoint(t *testing.T) {
	cs := &coreSub{}
	cs.addWindow(lossWindow{from: 1000, to: 1002, reason: tap.DropReconnect}) // a disconnect behind a full buffer
	cs.addWindow(lossWindow{from: 10, to: 20, reason: tap.DropQueueFull})     // then a slow consumer, nearer
	cs.addWindow(lossWindow{from: 15, to: 30, reason: tap.DropQueueFull})
	for _, tt := range []struct {
		n  uint64
		in bool
	}{{9, false}, {10, true}, {30, true}, {31, false}, {999, false}, {1000, true}, {1002, true}, {1003, false}} {
		if in, _ := cs.window(tt.n); in != tt.in {
			t.Errorf("message %d: in a window %v, want %v", tt.n, in, tt.in)
		}
	}
}
