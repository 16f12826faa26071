//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaRecordsRemovedBeforeReadAreALoss: e2atap reads a partition
// with a stream open and is held (SIGSTOP, a paused or starved sidecar);
// meanwhile the stream ends, another begins, and retention (DeleteRecords,
// kfake) removes the partition's records below the middle of the second
// one, above what the tap had read. Let go (SIGCONT), the tap's client
// finds its offset below the log start and resumes there: the records
// between were never read. That is a loss (RULES.md), not the second
// stream's fault: before, its first record read was reported
// e2a.seq_start (the partition's join window long over), and nothing was
// counted or logged. Now the tap tells a loss for the partition before
// its next record (a fetch's log start above the offset it read to): the
// open stream is let go with no verdict, the streams begun in the hole
// are joined, and the planted gap of a stream read after it is found.
func TestKafkaRecordsRemovedBeforeReadAreALoss(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "mesh"), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("mesh"))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	offset := int64(0)
	produce := func(lines []string) {
		t.Helper()
		for _, l := range lines {
			if err := prod.ProduceSync(ctx, &kgo.Record{Value: []byte(l)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
			offset++
		}
	}
	dir := t.TempDir()
	listen := freeAddr(t)
	findings := filepath.Join(dir, "findings.jsonl")
	cfg := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 60s, join_window: 1s}
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [mesh], group: e2atap, start: earliest, commit_interval: 100ms}
outputs:
  findings: {path: %q}
`, listen, brokers[0], findings)), 0o644)

	cmd, stderr := startProcessArgs(t, cfg)
	waitReady(t, listen)
	produce(e2aStream("open", 0, 2, true, false)) // request, 0, 1: offsets 0-2
	pollUntil(t, "the open stream's first records to be judged", 20*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= 3
	})
	time.Sleep(1500 * time.Millisecond) // the join window of the assignment is over
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	produce(e2aStream("open", 2, 4, false, true)) // 2, 3, final: offsets 3-5
	// The stopped client has a fetch in flight (a long poll): the broker
	// answers it into the socket with the first records produced. Give it
	// the time to answer with these alone, so that cut's first records are
	// not in it: the client reads them only after SIGCONT, and they are
	// gone then (a CI run where the answer also held offsets 6-7 read
	// everything: nothing was lost, so no loss was logged).
	time.Sleep(time.Second)
	produce(e2aStream("cut", 0, 3, true, true)) // request, 0, 1, 2, final: offsets 6-10
	del := kmsg.NewPtrDeleteRecordsRequest()
	dt := kmsg.NewDeleteRecordsRequestTopic()
	dt.Topic = "mesh"
	dp := kmsg.NewDeleteRecordsRequestTopicPartition()
	dp.Partition, dp.Offset = 0, 8 // cut's request and sequence 0 go
	dt.Partitions = append(dt.Partitions, dp)
	del.Topics = append(del.Topics, dt)
	del.TimeoutMillis = 5000
	resp, err := del.RequestWith(ctx, prod)
	if err != nil || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		cmd.Process.Signal(syscall.SIGCONT)
		t.Fatalf("delete records: %v %+v", err, resp)
	}
	produce(e2aStream("after", 0, 4, true, true, 1)) // planted: sequence 1 missing
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the planted gap after the loss", 20*time.Second, func() bool {
		return findingSet(t, findings)["e2a.seq_gap after"]
	})
	stopProcess(t, cmd)
	got := findingSet(t, findings)
	if len(got) != 1 {
		t.Errorf("findings %v, want only the planted e2a.seq_gap of after: the records removed before they were read are a loss", got)
	}
	if len(stderr.lines("kafka records removed before they were read (retention): their streams are not judged across them")) != 1 {
		t.Error("the loss was not logged once")
	}
}
