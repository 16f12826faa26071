package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestJetStreamCatchUpNoMissingFinal: as TestKafkaCatchUpNoMissingFinal,
// a JetStream stream read from its first message (start_seq, or a restart
// that reads on from its cursors) behind a backlog that takes longer to
// read than idle_timeout: a stream whose first and last messages are the
// backlog apart is not idle while the tap reads the messages between.
func TestJetStreamCatchUpNoMissingFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	if raceEnabled {
		t.Skip("a backlog that outlasts idle_timeout takes too long under -race")
	}
	n := 60000
	s := startNATSWith(t, &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()})
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "E2A", Subjects: []string{"agent.>"}}); err != nil {
		t.Fatal(err)
	}
	long := e2aStream("long", 0, 1, false, true)
	pub := func(l string) {
		if _, err := js.PublishAsync("agent.x", []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	pub(long[0])
	for i := range n {
		pub(e2aStream("s"+strconv.Itoa(i), 0, 0, false, true)[0])
		if i%1000 == 999 {
			// At most a thousand in flight: PublishAsync fails once 4,000
			// wait longer than its stall time (200 ms), as they may on a
			// busy machine (the test failed once in 0.5 s, under load).
			<-js.PublishAsyncComplete()
		}
	}
	pub(long[1])
	<-js.PublishAsyncComplete()
	dir := t.TempDir()
	listen := freeAddr(t)
	findings := filepath.Join(dir, "findings.jsonl")
	cfg := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: %s, join_window: 0s}
taps:
  - {name: mesh, type: nats, url: %q, jetstream: [{stream: E2A, start_seq: 1}]}
outputs:
  findings: {path: %q}
`, listen, "100ms", s.ClientURL(), findings)), 0o644)
	start := time.Now()
	cmd := startProcess(t, cfg)
	waitReady(t, listen)
	pollUntil(t, "all read", 60*time.Second, func() bool { return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(n+2) })
	t.Logf("read %d in %v", n+2, time.Since(start))
	time.Sleep(time.Second)
	stopProcess(t, cmd)
	got := findingSet(t, findings)
	t.Logf("findings: %v", got)
	if len(got) != 0 {
		t.Errorf("findings %v: the long stream's final was in the backlog, read later than idle_timeout after its first message", got)
	}
}
