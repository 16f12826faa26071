package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaCatchUpNoMissingFinal: e2atap starts (or restarts) behind a
// backlog that takes longer to read than idle_timeout; a stream whose
// first record is at the backlog's start and whose final is at its end was
// whole when it was written, a moment apart. Read by arrival, it looked
// idle while the tap read the records between: the tap was late, not the
// stream.
func TestKafkaCatchUpNoMissingFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	if raceEnabled {
		// Under -race the tap and engine read a backlog of the size that
		// outlasts idle_timeout in tens of seconds.
		t.Skip("a backlog that outlasts idle_timeout takes too long under -race")
	}
	n := 150000
	h := newKafkaHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	long := e2aStream("long", 0, 1, false, true)
	var recs []*kgo.Record
	add := func(l string) { recs = append(recs, &kgo.Record{Topic: h.topic, Partition: 0, Value: []byte(l)}) }
	add(long[0])
	for i := range n {
		add(e2aStream("s"+strconv.Itoa(i), 0, 0, false, true)[0])
	}
	add(long[1])
	prod, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	idle := "100ms"
	p := &kafkaProc{name: "backlog", listen: freeAddr(t), findings: filepath.Join(h.dir, "backlog.jsonl"), config: filepath.Join(h.dir, "backlog.yaml")}
	os.WriteFile(p.config, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: %s, join_window: 0s}
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [%s], group: e2atap-backlog, start: earliest, commit_interval: 100ms}
outputs:
  findings: {path: %q}
`, p.listen, idle, h.brokers[0], h.topic, p.findings)), 0o644)
	start := time.Now()
	p.cmd = startProcess(t, p.config)
	waitReady(t, p.listen)
	pollUntil(t, "the backlog to be read", 40*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(p.listen), "mesh") >= float64(n+2)
	})
	t.Logf("backlog of %d records read in %v", n+2, time.Since(start))
	time.Sleep(time.Second)
	stopProcess(t, p.cmd)
	got := findingSet(t, p.findings)
	t.Logf("findings: %v", got)
	if got["e2a.missing_final long"] {
		t.Errorf("e2a.missing_final long: its final was in the backlog, read later than idle_timeout after its first record")
	}
}
