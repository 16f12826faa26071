package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaAbortedTransactionsAreNotJudged: a producer writes its streams
// in Kafka transactions, the exactly-once pattern, and retries a batch in a
// new transaction after aborting the first: the topic's log holds the
// aborted records, the retried ones, and the transactions' markers (control
// records, an offset each). A consumer of the topic sees only what was
// committed, once; so must the tap, or it reports violations that did not
// happen: the retried stream's records read twice (e2a.after_final on each
// of them after the aborted copy's final) and an aborted stream that was
// never committed reported e2a.missing_final. The markers and the offsets
// the aborted records leave out are no loss, and the markers no lag (one
// after a partition's last record was a lag of 1 for ever).
// isolation: read_uncommitted,
// for whoever wants to see aborted records too, judges them.
func TestKafkaAbortedTransactionsAreNotJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	h := newKafkaHarness(t)
	txn, err := kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.TransactionalID("agent-1"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(h.topic))
	if err != nil {
		t.Fatal(err)
	}
	defer txn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	recs := func(lines []string) []*kgo.Record {
		var rs []*kgo.Record
		for _, l := range lines {
			rs = append(rs, &kgo.Record{Partition: 0, Value: []byte(l)})
		}
		return rs
	}
	inTxn := func(commit kgo.TransactionEndTry, lines ...[]string) {
		t.Helper()
		if err := txn.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, ls := range lines {
			if err := txn.ProduceSync(ctx, recs(ls)...).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := txn.EndTransaction(ctx, commit); err != nil {
			t.Fatal(err)
		}
	}
	// retried: aborted whole, then sent again and committed. abandoned:
	// aborted and never sent again (the producer gave the request up).
	retried := e2aStream("txn-retried", 0, 3, false, true)
	inTxn(kgo.TryAbort, retried, e2aStream("txn-abandoned", 0, 2, false, false))
	inTxn(kgo.TryCommit, retried)
	// A planted gap after the transactions: the tap has read past them
	// once it is reported.
	inTxn(kgo.TryCommit, e2aStream("txn-gap", 0, 4, false, true, 2))

	// A compacted topic: a chunk written twice (a producer's retry) under
	// its key, the older copy compacted away; the offset it leaves out is
	// no loss, and what is left is a clean stream.
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "compacted", 1, 1
	policy := "compact"
	ct.Configs = []kmsg.CreateTopicsRequestTopicConfig{{Name: "cleanup.policy", Value: &policy}}
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, h.prod); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create the compacted topic: %v %+v", err, resp)
	}
	compacted := e2aStream("compacted", 0, 2, false, true)
	for i, j := range []int{0, 0, 1, 2} {
		rec := &kgo.Record{Topic: "compacted", Key: []byte(fmt.Sprintf("compacted/%d", i)), Value: []byte(compacted[j])}
		if i == 1 {
			rec.Key = []byte("compacted/0")
		}
		if err := h.prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	h.cluster.Compact()

	run := func(isolation string) (map[string]bool, string) {
		t.Helper()
		name := "committed"
		if isolation != "" {
			name = strings.ReplaceAll(isolation, "_", "-")
		}
		p := &kafkaProc{name: name, listen: freeAddr(t), findings: filepath.Join(h.dir, name+".jsonl"), config: filepath.Join(h.dir, name+".yaml")}
		iso := ""
		if isolation != "" {
			iso = ", isolation: " + isolation
		}
		os.WriteFile(p.config, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [%s, compacted], group: %s, start: earliest, commit_interval: 100ms%s}
outputs:
  findings: {path: %q}
`, p.listen, h.brokers[0], h.topic, "e2atap-"+name, iso, p.findings)), 0o644)
		p.cmd = startProcess(t, p.config)
		waitReady(t, p.listen)
		pollUntil(t, "the planted gap after the transactions to be found", 30*time.Second, func() bool {
			return findingSet(t, p.findings)["e2a.seq_gap txn-gap"]
		})
		var metrics string
		pollUntil(t, "no lag: nothing is left to read", 10*time.Second, func() bool {
			metrics = scrapeQuiet(p.listen)
			return containsLine(metrics, `e2atap_tap_lag_messages{tap="mesh"} 0`)
		})
		stopProcess(t, p.cmd)
		return findingSet(t, p.findings), metrics
	}
	keys := func(m map[string]bool) []string {
		var s []string
		for k := range m {
			s = append(s, k)
		}
		sort.Strings(s)
		return s
	}

	got, metrics := run("")
	if want := []string{"e2a.seq_gap txn-gap"}; fmt.Sprint(keys(got)) != fmt.Sprint(want) {
		t.Errorf("findings over committed transactions: %v, want %v", keys(got), want)
	}
	if n := sumMetric(metrics, "e2atap_tap_dropped_total{", `tap="mesh"`); n != 0 {
		t.Errorf("%v losses counted: transaction markers and aborted records' offsets are no loss", n)
	}
	// Committed: the retried stream once (4), the gap stream (4); the
	// compacted stream's three records left.
	if n := recordsJudged(metrics, "mesh"); n != 11 {
		t.Errorf("%v records judged, want the 8 committed and 3 compacted", n)
	}

	got, _ = run("read_uncommitted")
	if !got["e2a.after_final txn-retried"] {
		t.Errorf("isolation: read_uncommitted: findings %v, want the retried stream's records after its aborted final (e2a.after_final)", keys(got))
	}
}
