package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaBrokerRestartedEmpty: the broker a kafka tap reads goes away
// with a stream open, and a new one with the same topic, empty (a broker
// whose storage was lost, a test cluster redeployed), comes up on the
// same address. The tap reads the new topic from its start: every record
// judged once (none skipped for the old offsets), the planted gap found,
// no false finding, and the stream the old broker left open is no
// missing_final (a loss, not a violation).
func TestKafkaBrokerRestartedEmpty(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	startBroker := func() *kfake.Cluster {
		c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.Ports(port), kfake.SeedTopics(1, "mesh"), kfake.GroupMinSessionTimeout(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1 := startBroker()
	brokers := c1.ListenAddrs()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	produce := func(lines []string) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("mesh"))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
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
	cmd, _ := startProcessArgs(t, cfg, "--reload-interval", "0")
	waitReady(t, listen)

	var old []string
	for i := range 10 {
		old = append(old, e2aStream(fmt.Sprintf("old-%d", i), 0, 4, true, i != 9)...) // old-9 left open
	}
	produce(old)
	total := len(old)
	pollUntil(t, "the old broker's records to be judged", 30*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(total)
	})
	time.Sleep(300 * time.Millisecond) // a commit of the old offsets (commit_interval), not a bound
	c1.Close()
	c2 := startBroker()
	defer c2.Close()

	var fresh []string
	for i := range 15 {
		if i == 3 {
			fresh = append(fresh, e2aStream("new-3", 0, 4, true, true, 2)...) // planted: sequence 2 missing
		} else {
			fresh = append(fresh, e2aStream(fmt.Sprintf("new-%d", i), 0, 4, true, true)...)
		}
	}
	produce(fresh)
	total += len(fresh)
	pollUntil(t, "every record of the new broker to be judged", 60*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(total)
	})
	metrics := scrapeQuiet(listen)
	stopProcess(t, cmd)
	if got := recordsJudged(metrics, "mesh"); got != float64(total) {
		t.Errorf("%v records judged, %d produced", got, total)
	}
	got := findingSet(t, findings)
	if len(got) != 1 || !got["e2a.seq_gap new-3"] {
		t.Errorf("findings %v, want only the planted e2a.seq_gap of new-3", got)
	}
}
