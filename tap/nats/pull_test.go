package natstap

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/taptest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestAckMetadata(t *testing.T) {
	for _, c := range []struct {
		reply string
		want  ackMeta
		bad   bool
	}{
		{reply: "$JS.ACK.MESH.e2atap-x.1.42.7.1700000000000000000.3", want: ackMeta{stream: 42, consumer: 7, pending: 3}},
		{reply: "$JS.ACK.hub.ACCHASH.MESH.e2atap-x.1.42.7.1700000000000000000.3.rnd", want: ackMeta{stream: 42, consumer: 7, pending: 3}},
		{reply: "$JS.ACK.hub.ACCHASH.MESH.e2atap-x.1.42.7.1700000000000000000.3", want: ackMeta{stream: 42, consumer: 7, pending: 3}},
		{reply: "_INBOX.abc", bad: true},
		{reply: "$JS.ACK.MESH.c.1.x.7.1.3", bad: true},
		{reply: "$JS.ACK.MESH.c.1.42", bad: true},
		{reply: "", bad: true},
		{reply: "$JS.ACK.MESH.c.1.18446744073709551615.7.1.0", want: ackMeta{stream: 1<<64 - 1, consumer: 7}},
		{reply: "$JS.ACK.MESH.c.1.18446744073709551616.7.1.0", bad: true}, // overflows
		{reply: "$JS.ACK.MESH.c.1.+42.7.1.3", bad: true},
		{reply: "$JS.ACK.MESH.c.1.42..1.3", bad: true},
		{reply: "$JS.ACK.MESH.c.1.42.7.1.", bad: true},
		{reply: "$JS.ACKS.MESH.c.1.42.7.1.3", bad: true},
		{reply: "$JS.ACK.a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q", bad: true}, // many tokens, none a number
	} {
		got, err := ackMetadata(c.reply)
		if c.bad {
			if err == nil {
				t.Errorf("ackMetadata(%q) = %+v, want an error", c.reply, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ackMetadata(%q) = %+v, %v; want %+v", c.reply, got, err, c.want)
		}
	}
}

// ackSubjects are reply subjects of consumer "e2atap-x" on stream MESH,
// of the shape ackMetadataOf reads itself and of others it hands over.
var ackSubjects = []string{
	"$JS.ACK.MESH.e2atap-x.1.42.7.1700000000000000000.3",
	"$JS.ACK.MESH.e2atap-x.2.18446744073709551615.7.1.0",  // 20 digits: ackMetadata reads it
	"$JS.ACK.MESH.e2atap-x.1.18446744073709551616.7.1.0",  // overflows
	"$JS.ACK.MESH.e2atap-x.1.42.7.1.12345678901234567890", // 20 digits
	"$JS.ACK.MESH.e2atap-x.1.42.7.99999999999999999999.3", // the time overflows: ackMetadata reads no time
	"$JS.ACK.MESH.e2atap-x.x.42.7.1.3",                    // nor the delivery count
	"$JS.ACK.MESH.e2atap-x.1.42.7.1.3.extra",              // ten tokens
	"$JS.ACK.MESH.e2atap-x.1.42.7.1.3.",
	"$JS.ACK.MESH.e2atap-x.1.42.7.1",
	"$JS.ACK.MESH.e2atap-x.1.42..1.3",
	"$JS.ACK.MESH.e2atap-x.1.+42.7.1.3",
	"$JS.ACK.MESH.e2atap-x.",
	"$JS.ACK.MESH.e2atap-x",
	"$JS.ACK.MESH.e2atap-y.1.42.7.1.3",
	"$JS.ACK.hub.ACCHASH.MESH.e2atap-x.1.42.7.1700000000000000000.3.rnd",
	"$JS.ACK.MESH.e2atap-x.1.42.7.1.3.4.5.6", // thirteen tokens: read as the form with a domain
	"_INBOX.abc",
	"",
}

// TestAckMetadataOf: the one-pass read of a known consumer's subjects
// says what ackMetadata says of every subject, numbers and errors alike.
func TestAckMetadataOf(t *testing.T) {
	prefix := ackPrefix("MESH", "e2atap-x")
	if prefix != "$JS.ACK.MESH.e2atap-x." {
		t.Fatalf("ackPrefix = %q", prefix)
	}
	for _, bad := range [][2]string{{"ME.SH", "c"}, {"MESH", "c.d"}, {"", "c"}, {"MESH", ""}} {
		if p := ackPrefix(bad[0], bad[1]); p != "" {
			t.Errorf("ackPrefix(%q, %q) = %q, want none", bad[0], bad[1], p)
		}
	}
	fast := 0
	for _, reply := range ackSubjects {
		want, werr := ackMetadata(reply)
		got, err := ackMetadataOf(reply, prefix)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("ackMetadataOf(%q) = %+v, %v; ackMetadata: %+v, %v", reply, got, err, want, werr)
		}
		if strings.HasPrefix(reply, prefix) {
			if _, ok := ackNumbers(reply[len(prefix):]); ok {
				fast++
			}
		}
	}
	if fast != 3 {
		t.Errorf("%d subjects read in one pass, want 3", fast)
	}
}

func FuzzAckMetadataOf(f *testing.F) {
	for _, s := range ackSubjects {
		f.Add(strings.TrimPrefix(s, "$JS.ACK.MESH.e2atap-x."))
	}
	prefix := ackPrefix("MESH", "e2atap-x")
	f.Fuzz(func(t *testing.T, rest string) {
		reply := prefix + rest
		want, werr := ackMetadata(reply)
		got, err := ackMetadataOf(reply, prefix)
		if got != want || (err == nil) != (werr == nil) {
			t.Fatalf("ackMetadataOf(%q) = %+v, %v; ackMetadata: %+v, %v", reply, got, err, want, werr)
		}
	})
}

func TestPullStatus(t *testing.T) {
	status := func(code, desc string, pending string) *nats.Msg {
		h := nats.Header{"Status": {code}, "Description": {desc}}
		if pending != "" {
			h.Set("Nats-Pending-Messages", pending)
		}
		return &nats.Msg{Header: h}
	}
	for _, c := range []struct {
		msg  *nats.Msg
		done int
		bad  bool
	}{
		{msg: status("100", "Idle Heartbeat", "")},
		{msg: status("408", "Request Timeout", "1024"), done: 1024},
		{msg: status("409", "Message Size Exceeds MaxBytes", "990"), done: 990},
		{msg: status("409", "Batch Completed", "0")},
		{msg: status("408", "Requests Pending", ""), bad: true}, // ended, but how much of it?
		{msg: status("409", "Consumer Deleted", ""), bad: true},
		{msg: status("409", "Leadership Change", ""), bad: true},
		{msg: status("400", "Bad Request", ""), bad: true},
		{msg: status("408", "Request Timeout", "x"), bad: true},
	} {
		done, err := pullStatus(c.msg)
		if (err != nil) != c.bad || done != c.done {
			t.Errorf("pullStatus(%v %v) = %d, %v; want %d, error %v", c.msg.Header.Get("Status"), c.msg.Header.Get("Description"), done, err, c.done, c.bad)
		}
	}
}

// lockedBuffer is a log destination for a tap's goroutines.
type lockedBuffer = taptest.LockedBuffer

// readStream runs a tap on stream MESH from its start with emit wrapped
// by before (called ahead of every data message) until want messages came,
// and returns them and the tap's log.
func readStream(t *testing.T, srv interface{ ClientURL() string }, cfg Config, want int, before func(i int)) ([]tap.Message, string) {
	t.Helper()
	logs := &lockedBuffer{}
	cfg.Name, cfg.URL = "mesh", srv.ClientURL()
	cfg.Streams = []StreamConfig{{Stream: "MESH", StartSeq: 1}}
	tp, err := New(cfg, new(tap.Stats), slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var msgs []tap.Message
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- tp.Run(ctx, func(_ context.Context, m tap.Message) error {
			if m.Reconnected || m.Lost || m.Progress {
				return nil
			}
			mu.Lock()
			i := len(msgs)
			mu.Unlock()
			before(i)
			tp.cfg.Budget.Release(m.Charged)
			mu.Lock()
			msgs = append(msgs, m)
			mu.Unlock()
			return nil
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	}()
	waitFor(t, "every message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(msgs) >= want
	})
	mu.Lock()
	defer mu.Unlock()
	return append([]tap.Message(nil), msgs...), logs.String()
}

func checkInOrder(t *testing.T, msgs []tap.Message, log string) {
	t.Helper()
	for i, m := range msgs {
		if m.Pos.Offset != int64(i+1) || m.Gap {
			t.Fatalf("message %d: stream seq %d, gap %v", i, m.Pos.Offset, m.Gap)
		}
	}
	if strings.Contains(log, "recreating") {
		t.Errorf("the consumer was recreated:\n%s", log)
	}
}

// A pull request that reaches its byte limit ends with a status saying how
// many of its messages will not come; the tap asks for them again on the
// same consumer (no recreation), in order.
func TestJetStreamPullPastMaxBytes(t *testing.T) {
	srv := startServer(t, 0, "")
	nc := connect(t, srv.ClientURL())
	js := newJS(t, nc)
	createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}, Storage: jetstream.MemoryStorage})
	const n = 90
	big := bytes.Repeat([]byte("x"), 900<<10) // 90 × 900 KiB: three 32 MiB requests
	for range n {
		if _, err := js.Publish(context.Background(), "mesh.a", big); err != nil {
			t.Fatal(err)
		}
	}
	msgs, log := readStream(t, srv, Config{MaxMessageBytes: 1 << 20, Heartbeat: 15 * time.Second}, n, func(int) {})
	checkInOrder(t, msgs, log)
}

// An engine slower than two heartbeats is backpressure, not a dead
// consumer: what arrived meanwhile waits in the inbox, and the tap reads
// on from the same consumer.
func TestJetStreamSlowEmitIsNotAMissedHeartbeat(t *testing.T) {
	srv := startServer(t, 0, "")
	nc := connect(t, srv.ClientURL())
	js := newJS(t, nc)
	createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}, Storage: jetstream.MemoryStorage})
	const n = 40
	publishJS(t, js, "mesh.a", n, 0)
	const hb = 500 * time.Millisecond
	msgs, log := readStream(t, srv, Config{FetchBatch: 4, Heartbeat: hb}, n, func(i int) {
		if i < 3 {
			time.Sleep(2*hb + 300*time.Millisecond)
		}
	})
	checkInOrder(t, msgs, log)
}

// The tap's consumer deleted under it (an operator, the server's
// inactivity clean-up): the server ends its open pulls with 409 Consumer
// Deleted and the tap recreates the consumer from its cursor at once (not
// after missed heartbeats, 45 s here), reading on with nothing lost or read
// twice.
func TestJetStreamConsumerDeletedIsRecreatedFromTheCursor(t *testing.T) {
	srv := startServer(t, 0, "")
	nc := connect(t, srv.ClientURL())
	js := newJS(t, nc)
	stream := createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}, Storage: jetstream.MemoryStorage})
	publishJS(t, js, "mesh.a", 10, 0)
	c := &collector{}
	_, stats := startTap(t, Config{Name: "mesh", URL: srv.ClientURL(), Heartbeat: 15 * time.Second, ReconnectWait: 20 * time.Millisecond,
		Streams: []StreamConfig{{Stream: "MESH", StartSeq: 1}}}, c)
	waitFor(t, "the first 10 messages", func() bool { m, _ := c.data(); return len(m) == 10 })
	names := consumerNames(t, stream)
	if len(names) != 1 {
		t.Fatalf("consumers %v, want the tap's one", names)
	}
	if err := stream.DeleteConsumer(context.Background(), names[0]); err != nil {
		t.Fatal(err)
	}
	publishJS(t, js, "mesh.a", 10, 10)
	waitFor(t, "the next 10 messages", func() bool { m, _ := c.data(); return len(m) >= 20 })
	msgs, _ := c.data()
	if len(msgs) != 20 {
		t.Fatalf("got %d messages, want 20", len(msgs))
	}
	for i, m := range msgs {
		if m.Pos.Offset != int64(i+1) || m.Gap {
			t.Fatalf("message %d: stream seq %d, gap %v", i, m.Pos.Offset, m.Gap)
		}
	}
	if d := stats.Drops[tap.DropUpstreamGap].Load(); d != 0 {
		t.Errorf("upstream_gap drops = %d", d)
	}
}

// A message's capture time is read once per full select of the pull loop
// (a burst, or every drainLook messages), not per message: it is never
// before the tap started nor after the message was emitted, never goes
// back, and a slow engine (emit blocked for 300 ms) leaves at most
// drainLook messages stamped before the wait.
func TestJetStreamCaptureTime(t *testing.T) {
	srv := startServer(t, 0, "")
	nc := connect(t, srv.ClientURL())
	js := newJS(t, nc)
	createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"mesh.>"}, Storage: jetstream.MemoryStorage})
	const n, slow = 600, 10
	publishJS(t, js, "mesh.a", n, 0)
	start := time.Now()
	emitted := make([]time.Time, n+1)
	var resumed time.Time // when the slow emit returned
	msgs, log := readStream(t, srv, Config{}, n, func(i int) {
		if i == slow {
			time.Sleep(300 * time.Millisecond)
			resumed = time.Now()
		}
		if i < len(emitted) {
			emitted[i] = time.Now()
		}
	})
	checkInOrder(t, msgs, log)
	for i, m := range msgs[:n] {
		if m.Time.Before(start) || m.Time.After(emitted[i]) {
			t.Fatalf("message %d: time %v, want between the start %v and its emit %v", i, m.Time, start, emitted[i])
		}
		if i > 0 && m.Time.Before(msgs[i-1].Time) {
			t.Fatalf("message %d: time %v before message %d's %v", i, m.Time, i-1, msgs[i-1].Time)
		}
		if i > slow+drainLook && m.Time.Before(resumed) {
			t.Fatalf("message %d: time %v, before the slow emit ended (%v): the clock was not read again within %d messages", i, m.Time, resumed, drainLook)
		}
	}
}
