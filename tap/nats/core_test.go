package natstap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func TestCoreWildcardsPassBytesUnchanged(t *testing.T) {
	s := startServer(t, 0, "")
	nc := connect(t, s.ClientURL())
	c := &collector{}
	_, stats := startTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>", "client.*"}}, c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	waitSubscribed(t, nc, "agent.probe", c)
	waitSubscribed(t, nc, "client.probe", c)
	base := *snapshot(stats)

	e2a := []byte(`{"jsonrpc":"2.0","id":"r1","method":"chat.send","params":{"session_id":"s1","text":"hi"}}`)
	frame := testFrame("agent-1:abc", 0, "hello")
	type pub struct {
		subject string
		data    []byte
		format  tap.Format
	}
	pubs := []pub{
		{"agent.a.b.c", e2a, tap.FormatJSON},
		{"client.gw", frame, tap.FormatFrame},
		{"agent.x", []byte("not json"), tap.FormatAuto},
		{"client.gw.deep", []byte(`{"ignored":"not matched by client.*"}`), 0},
		{"other", []byte(`{"ignored":true}`), 0},
	}
	for _, p := range pubs {
		if err := nc.Publish(p.subject, p.data); err != nil {
			t.Fatal(err)
		}
	}
	// A last marker on each subscription: after both, nothing else is coming.
	nc.Publish("agent.end", []byte("{}"))
	nc.Publish("client.end", []byte("{}"))
	waitFor(t, "both markers", func() bool {
		msgs, _ := c.data()
		n := 0
		for _, m := range msgs {
			if strings.HasSuffix(m.Pos.Name, ".end") {
				n++
			}
		}
		return n == 2
	})
	msgs, _ := c.data()
	var got []pub
	for _, m := range msgs {
		if strings.HasSuffix(m.Pos.Name, ".end") {
			continue
		}
		if m.Tap != "mesh" || m.Pos.Kind != tap.PosSubject || m.Time.IsZero() || m.Gap || m.Pos.Offset != 0 {
			t.Errorf("message %+v: wrong tap, position kind, time, gap or offset", m)
		}
		got = append(got, pub{m.Pos.Name, m.Data, m.Format})
	}
	// Per subscription, order is kept; across the two, it is not defined.
	sortBySubject := func(ps []pub) []pub {
		var a, b []pub
		for _, p := range ps {
			if strings.HasPrefix(p.subject, "agent.") {
				a = append(a, p)
			} else {
				b = append(b, p)
			}
		}
		return append(a, b...)
	}
	want := sortBySubject(pubs[:3])
	if diff := cmp.Diff(want, sortBySubject(got), cmp.AllowUnexported(pub{})); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if !bytes.Equal(got[0].data, e2a) && !bytes.Equal(got[1].data, e2a) {
		t.Error("E2A JSON not byte-identical")
	}
	st := snapshot(stats)
	if n := st.messages - base.messages; n != 5 {
		t.Errorf("Stats messages = %d, want 5", n)
	}
	if n := st.bytes - base.bytes; n != uint64(len(e2a)+len(frame)+len("not json")+4) {
		t.Errorf("Stats bytes = %d", n)
	}
	if st.drops != 0 {
		t.Errorf("drops = %d", st.drops)
	}
}

func TestCoreDoesNotStealFromQueueGroups(t *testing.T) {
	s := startServer(t, 0, "")
	nc := connect(t, s.ClientURL())
	var appGot [2]atomic.Int64
	for i := range appGot {
		app := connect(t, s.ClientURL())
		if _, err := app.QueueSubscribe("agent.>", "workers", func(*nats.Msg) { appGot[i].Add(1) }); err != nil {
			t.Fatal(err)
		}
		if err := app.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	c := &collector{}
	_, stats := startTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}}, c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	waitSubscribed(t, nc, "agent.probe", c)
	appGot[0].Store(0)
	appGot[1].Store(0)

	const n = 500
	for i := range n {
		if err := nc.Publish(fmt.Sprintf("agent.s%d", i%7), []byte(fmt.Sprintf(`{"i":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "all messages at the tap and the application", func() bool {
		msgs, _ := c.data()
		return len(msgs) == n && appGot[0].Load()+appGot[1].Load() == n
	})
	if appGot[0].Load() == 0 || appGot[1].Load() == 0 {
		t.Logf("queue group split %d/%d", appGot[0].Load(), appGot[1].Load())
	}
	msgs, _ := c.data()
	for i, m := range msgs {
		if want := fmt.Sprintf(`{"i":%d}`, i); string(m.Data) != want {
			t.Fatalf("message %d = %s, want %s (order within one subscription)", i, m.Data, want)
		}
	}
}

func TestCoreCloudEventsBinaryMode(t *testing.T) {
	s := startServer(t, 0, "")
	nc := connect(t, s.ClientURL())
	c := &collector{}
	_, stats := startTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}}, c)
	waitFor(t, "up", stats.UpstreamUp.Load)
	waitSubscribed(t, nc, "agent.probe", c)

	m := nats.NewMsg("agent.events")
	m.Header.Set("ce-specversion", "1.0")
	m.Header.Set("CE-ID", "e-1")
	m.Header.Set("ce-type", "stream.chunk")
	m.Header.Set("ce-source", "em://stream/s1")
	m.Header.Set("ce-emsessionid", "s1")
	m.Header.Set("ce-emseq", "3")
	m.Header.Set("Content-Type", "application/json")
	m.Data = []byte(`{"text": "hi"}`)
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the event", func() bool { msgs, _ := c.data(); return len(msgs) == 1 })
	msgs, _ := c.data()
	want := `{"specversion":"1.0","id":"e-1","source":"em://stream/s1","type":"stream.chunk",` +
		`"datacontenttype":"application/json","emseq":"3","emsessionid":"s1","data":{"text": "hi"}}`
	if got := string(msgs[0].Data); got != want {
		t.Errorf("structured event\n got %s\nwant %s", got, want)
	}
	if msgs[0].Format != tap.FormatJSON {
		t.Errorf("Format = %v, want FormatJSON", msgs[0].Format)
	}
}

func TestStructuredFromBinary(t *testing.T) {
	hdr := func(kv ...string) nats.Header {
		h := nats.Header{}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = []string{kv[i+1]}
		}
		return h
	}
	ce := []string{"ce-specversion", "1.0", "ce-id", "1", "ce-source", "/s", "ce-type", "t"}
	tests := []struct {
		name string
		h    nats.Header
		body []byte
		want map[string]any
	}{
		{"json body, no content type", hdr(ce...), []byte(`[1,2]`),
			map[string]any{"specversion": "1.0", "id": "1", "source": "/s", "type": "t", "data": []any{1.0, 2.0}}},
		{"text", hdr(append(ce, "Content-Type", "text/plain; charset=utf-8")...), []byte("he said \"hi\"\n"),
			map[string]any{"specversion": "1.0", "id": "1", "source": "/s", "type": "t", "datacontenttype": "text/plain; charset=utf-8", "data": "he said \"hi\"\n"}},
		{"frame body is binary", hdr(append(ce, "ce-datacontenttype", "application/octet-stream")...), testFrame("s", 1, "x"),
			map[string]any{"specversion": "1.0", "id": "1", "source": "/s", "type": "t", "datacontenttype": "application/octet-stream", "data_base64": "7wECAAAAAAEAAQAAAAEAA3NpZAAAAAFzeA=="}},
		{"no body, header named data ignored", hdr(append(ce, "ce-data", "x")...), nil,
			map[string]any{"specversion": "1.0", "id": "1", "source": "/s", "type": "t"}},
		{"control characters and bad utf-8 in attributes", hdr(append(ce, "ce-emmeta", "a\x01b\xffc")...), nil,
			map[string]any{"specversion": "1.0", "id": "1", "source": "/s", "type": "t", "emmeta": "a\x01b\uFFFDc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, format := payload(tt.h, tt.body)
			if format != tap.FormatJSON {
				t.Errorf("format = %v", format)
			}
			var got map[string]any
			if err := json.Unmarshal(data, &got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, data)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Without ce-specversion nothing is rewritten.
	body := []byte(`{"a":1}`)
	if data, format := payload(hdr("ce-id", "1"), body); &data[0] != &body[0] || format != tap.FormatJSON {
		t.Error("a message without ce-specversion was rewritten")
	}
}

func TestConfigValidate(t *testing.T) {
	bad := Config{
		Subjects:         []string{"a..b", "a.>.c", "a.b*", "ok", "ok", "sp ace"},
		Queue:            "a.b",
		Streams:          []StreamConfig{{}, {Stream: "S", FilterSubjects: []string{""}}, {Stream: "S"}},
		PendingBytes:     -1,
		ReconnectWait:    time.Second,
		ReconnectMaxWait: time.Millisecond,
		Heartbeat:        -1,
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"name is empty", `"a..b": empty token`, `"a.>.c": '>' must be the last`, `"a.b*": wildcards`,
		`"ok" listed twice`, `"sp ace": contains whitespace`, `queue "a.b"`, "streams[0]: stream name is empty",
		`filter subject "": empty`, `stream "S" listed twice`, "pending_bytes is negative", "heartbeat is negative", "heartbeat (-1ns) must be between",
		"reconnect_max_wait (1ms) is less than reconnect_wait (1s)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %q:\n%v", want, err)
		}
	}
	if err := (Config{Name: "x"}).Validate(); err == nil || !strings.Contains(err.Error(), "neither subjects nor streams") {
		t.Errorf("empty config: %v", err)
	}
	if err := (Config{Name: "x", Subjects: []string{"a.*.>"}}).Validate(); err != nil {
		t.Errorf("minimal config: %v", err)
	}
	if _, err := New(Config{Name: "x", Subjects: []string{"a"}}, nil, discard); err == nil {
		t.Error("New accepted nil stats")
	}
}

type statsSnap struct{ messages, bytes, drops uint64 }

func snapshot(s *tap.Stats) *statsSnap {
	var d uint64
	for i := range s.Drops {
		d += s.Drops[i].Load()
	}
	return &statsSnap{s.Messages[tap.DirNone].Load(), s.Bytes[tap.DirNone].Load(), d}
}

// A message with an empty body carries no record (a NATS status, a KV
// delete marker, an application's headers-only notice): the tap counts it
// and emits nothing, core and JetStream alike, while a CloudEvents
// binary-mode event with no data is still an event.
func TestEmptyBodyIsNoRecord(t *testing.T) {
	empties := []nats.Header{
		nil,
		{"Nats-Msg-Id": {"n1"}},
		{"Status": {"100"}, "Description": {"Idle Heartbeat"}},
		{"KV-Operation": {"DEL"}},
	}
	ce := nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"e1"}, "ce-source": {"/s"}, "ce-type": {"t"}}
	publish := func(t *testing.T, pub func(*nats.Msg)) {
		for _, h := range empties {
			pub(&nats.Msg{Subject: "agent.x", Header: h})
		}
		pub(&nats.Msg{Subject: "agent.x", Header: ce})
		pub(&nats.Msg{Subject: "agent.x", Data: []byte(`{"i":1}`)})
	}
	check := func(t *testing.T, c *collector, stats *tap.Stats, base, extra uint64) []tap.Message {
		t.Helper()
		waitFor(t, "the last record", func() bool {
			msgs, _ := c.data()
			return len(msgs) > 0 && string(msgs[len(msgs)-1].Data) == `{"i":1}`
		})
		waitFor(t, "every message counted", func() bool {
			return stats.Messages[tap.DirNone].Load()-base == uint64(len(empties)+2)+extra
		})
		msgs, _ := c.data()
		var got []string
		for _, m := range msgs {
			got = append(got, string(m.Data))
			if m.Gap {
				t.Errorf("message %s: gap", m.Data)
			}
		}
		want := []string{`{"specversion":"1.0","id":"e1","source":"/s","type":"t"}`, `{"i":1}`}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("emitted (-want +got):\n%s", diff)
		}
		return msgs
	}

	t.Run("core", func(t *testing.T) {
		s := startServer(t, 0, "")
		nc := connect(t, s.ClientURL())
		c := &collector{}
		_, stats := startTap(t, Config{Name: "mesh", URL: s.ClientURL(), Subjects: []string{"agent.>"}}, c)
		waitFor(t, "up", stats.UpstreamUp.Load)
		waitSubscribed(t, nc, "agent.probe", c)
		base := stats.Messages[tap.DirNone].Load()
		publish(t, func(m *nats.Msg) {
			if err := nc.PublishMsg(m); err != nil {
				t.Fatal(err)
			}
		})
		check(t, c, stats, base, 0)
	})

	t.Run("jetstream", func(t *testing.T) {
		s := startServer(t, 0, t.TempDir())
		nc := connect(t, s.ClientURL())
		js := newJS(t, nc)
		createStream(t, js, jetstream.StreamConfig{Name: "MESH", Subjects: []string{"agent.>"}})
		pub := func(m *nats.Msg) {
			if _, err := js.PublishMsg(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
		publish(t, pub)
		// Last in the backlog: reading it is catching up.
		pub(&nats.Msg{Subject: "agent.x", Header: nats.Header{"Nats-Msg-Id": {"n2"}}})
		c := &collector{}
		_, stats := startTap(t, Config{Name: "mesh", URL: s.ClientURL(), Streams: []StreamConfig{{Stream: "MESH", StartSeq: 1}}}, c)
		msgs := check(t, c, stats, 0, 1)
		waitFor(t, "behind, then caught up", func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.progress == 2
		})
		if n := len(msgs); n == 2 && (msgs[0].Pos.Offset != 5 || msgs[1].Pos.Offset != 6) {
			t.Errorf("stream sequences %d, %d, want 5, 6", msgs[0].Pos.Offset, msgs[1].Pos.Offset)
		}
	})
}

// A subscription's first message may reach its callback before Subscribe
// has returned to the tap (a publisher's steady traffic on the subject):
// the callback must not read the subscription before the tap has stored
// it (a data race the race detector reported in CI, through
// waitSubscribed's probes).
func TestCoreCallbackBeforeSubscribeReturns(t *testing.T) {
	s := startServer(t, 0, "")
	nc := connect(t, s.ClientURL())
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			_ = nc.Publish("agent.flood", []byte(`{"request_id":"f","sequence":0}`))
		}
	}()
	defer func() { close(stop); <-done }()
	// The tap is slow to store its subscription: the flood's messages reach
	// the callback first.
	afterSubscribe = func() { time.Sleep(50 * time.Millisecond) }
	defer func() { afterSubscribe = nil }()
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			c := &collector{}
			startTap(t, Config{Name: "flood", URL: s.ClientURL(), Subjects: []string{"agent.>"}}, c)
			waitFor(t, "a flood message", func() bool { msgs, _ := c.data(); return len(msgs) > 0 })
		})
	}
}
