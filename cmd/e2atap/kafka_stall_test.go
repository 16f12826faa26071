package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaStalledTransactionNoMissingFinal: a transactional producer
// begins a transaction on a partition, writes a record and neither commits
// nor aborts (it died; the broker aborts it only at
// transaction.timeout.ms, a minute by default). A read_committed consumer
// reads nothing past the transaction's first record meanwhile (the
// partition's last stable offset), so a stream whose end another producer
// wrote after it is not readable, though it is in the log. The stream is
// not idle: the tap is late. It must not be reported missing_final when
// the stall outlasts idle_timeout, nor its end, once read, after its
// final (e2a.after_final). Streams that did end without a final still are
// reported: one on another partition during the stall, one on the stalled
// partition once the tap has read past the transaction.
func TestKafkaStalledTransactionNoMissingFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	h := newKafkaHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	txn, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.TransactionalID("agent-dies"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(h.topic))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	plain, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(h.topic))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	produce := func(cl *kgo.Client, lines []string, partition ...int32) {
		t.Helper()
		for _, l := range lines {
			if err := cl.ProduceSync(ctx, &kgo.Record{Partition: append(partition, 0)[0], Value: []byte(l)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	stalled := e2aStream("stalled", 0, 4, false, true)
	p := &kafkaProc{name: "stall", listen: freeAddr(t), findings: filepath.Join(h.dir, "stall.jsonl"), config: filepath.Join(h.dir, "stall.yaml")}
	os.WriteFile(p.config, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 1s, join_window: 0s}
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [%s], group: e2atap-stall, start: earliest, commit_interval: 100ms}
outputs:
  findings: {path: %q}
`, p.listen, h.brokers[0], h.topic, p.findings)), 0o644)
	p.cmd = startProcess(t, p.config)
	waitReady(t, p.listen)
	// The first half read, then the transaction's record, then the rest.
	produce(plain, stalled[:2])
	produce(plain, e2aStream("cut-stalled", 0, 2, false, false))
	pollUntil(t, "the first half to be judged", 20*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(p.listen), "mesh") >= 4
	})
	if err := txn.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produce(txn, e2aStream("dead-producer", 0, 1, false, false))
	produce(plain, stalled[2:])
	produce(plain, e2aStream("cut-other", 0, 2, false, false), 1)
	pollUntil(t, "the stream cut on the partition read on to be reported", 20*time.Second, func() bool {
		return findingSet(t, p.findings)["e2a.missing_final cut-other"]
	})
	// Stalled for two idle timeouts at least.
	time.Sleep(time.Second)
	if err := txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		t.Fatal(err)
	}
	produce(plain, e2aStream("after", 0, 3, false, true, 1))
	pollUntil(t, "the planted gap after the stall to be found", 20*time.Second, func() bool {
		return findingSet(t, p.findings)["e2a.seq_gap after"]
	})
	// The stream cut on the stalled partition is reported an idle timeout
	// after the tap read past the transaction, not before: a stop before
	// then hands it over unjudged (seen on a machine at load 14).
	pollUntil(t, "the stream cut on the stalled partition to be reported", 20*time.Second, func() bool {
		return findingSet(t, p.findings)["e2a.missing_final cut-stalled"]
	})
	stopProcess(t, p.cmd)
	got := findingSet(t, p.findings)
	t.Logf("findings: %v", got)
	want := map[string]bool{"e2a.seq_gap after": true, "e2a.missing_final cut-other": true, "e2a.missing_final cut-stalled": true}
	for k := range want {
		if !got[k] {
			t.Errorf("finding %q missing", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("finding %q: the stream was whole in the log, only not readable behind an open transaction", k)
		}
	}
}
