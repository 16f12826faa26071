package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaRecreatedTopicIsReadOver: the topic a kafka tap reads is
// deleted and created again under the same name while e2atap runs (kfake).
// The client keeps the deleted topic's ID and never takes the new one by
// itself: every fetch failed with UNKNOWN_TOPIC_ID, logged once a minute,
// and the tap read nothing more of the topic for as long as it ran, none
// of the new records judged (the planted gap never found). Re-added, it
// read from the deleted topic's commit (offset 60 here) and skipped the
// new topic's first 60 records. The tap now reads the new topic from
// offset 0: every record judged once, the planted gap found, and the
// stream left open on the deleted topic is no missing_final.
func TestKafkaRecreatedTopicIsReadOver(t *testing.T) {
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
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	client := func() *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("mesh"))
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	produce := func(cl *kgo.Client, lines []string) {
		t.Helper()
		for _, l := range lines {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(l)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	listen := freeAddr(t)
	findings := filepath.Join(dir, "findings.jsonl")
	cfg := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 60s, join_window: 0s}
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [mesh], group: e2atap, start: earliest, commit_interval: 100ms}
outputs:
  findings: {path: %q}
`, listen, brokers[0], findings)), 0o644)
	cmd, stderr := startProcessArgs(t, cfg, "--reload-interval", "0")
	waitReady(t, listen)

	old := client()
	total := 0
	for i := range 10 {
		s := e2aStream(fmt.Sprintf("old-%d", i), 0, 4, true, i != 9) // old-9 left open
		total += len(s)
		produce(old, s)
	}
	old.Close()
	pollUntil(t, "the deleted topic's records to be judged", 20*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(total)
	})

	admin := client()
	defer admin.Close()
	del := kmsg.NewPtrDeleteTopicsRequest()
	del.TopicNames = []string{"mesh"}
	dt := kmsg.NewDeleteTopicsRequestTopic()
	dt.Topic = kmsg.StringPtr("mesh")
	del.Topics = append(del.Topics, dt)
	if _, err := del.RequestWith(ctx, admin); err != nil {
		t.Fatal(err)
	}
	create := kmsg.NewPtrCreateTopicsRequest()
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "mesh", 1, 1
	create.Topics = append(create.Topics, ct)
	if resp, err := create.RequestWith(ctx, admin); err != nil || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create the topic again: %v %v", err, resp)
	}

	recreated := client() // a producer of the new topic (the old one keeps the old ID)
	defer recreated.Close()
	for i := range 15 {
		var s []string
		if i == 3 {
			s = e2aStream("new-3", 0, 4, true, true, 2) // planted: sequence 2 missing
		} else {
			s = e2aStream(fmt.Sprintf("new-%d", i), 0, 4, true, true)
		}
		total += len(s)
		produce(recreated, s)
	}
	pollUntil(t, "every record of the new topic to be judged", 60*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(total)
	})
	stopProcess(t, cmd)
	got := findingSet(t, findings)
	if len(got) != 1 || !got["e2a.seq_gap new-3"] {
		t.Errorf("findings %v, want only the planted e2a.seq_gap of new-3", got)
	}
	if n := len(stderr.lines("kafka topic deleted and created again: reading it over (its open streams are not judged across)")); n != 1 {
		t.Errorf("the topic's recreation logged %d times, want once", n)
	}
}
