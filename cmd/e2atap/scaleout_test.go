package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKafkaScaleOutSurvivesAKilledReplica (issue 10, item 4): three
// `e2atap run` replicas, the real process, in one Kafka consumer group over
// a 6-partition topic keyed by stream (kfake), with a fourth process alone
// in a group of its own as the reference, on the same traffic: about 1000
// E2A streams, hundreds open at any time, with planted violations. One
// replica that owns partitions is killed (SIGKILL) half-way, with streams
// open in its partitions; the group gives them to the others. The union of
// the replicas' findings must equal the single instance's (and the planted
// violations): no verdict lost with the dead replica (its last commit did
// not pass the oldest open stream's first record, so the new owners read
// those streams from their start), and no false finding around the
// rebalance (the partitions handed over or taken over mid-stream).
func TestKafkaScaleOutSurvivesAKilledReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	const topic, partitions = "mesh", 6
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	brokers := cluster.ListenAddrs()

	// The traffic, made up front: every message keyed by its stream.
	// Short streams, many with a lost chunk: with 100 streams open in the
	// killed replica's partitions, several lose a chunk right where a
	// takeover that resumes at what was read would join them.
	g := gen.New(gen.Config{Seed: 10, Concurrent: 300, MinChunks: 3, MaxChunks: 10, FaultRate: 0.35,
		Faults: []gen.Fault{gen.LostChunk}, KeepaliveRate: 0.02})
	var msgs []gen.Message
	planted := map[string]string{} // "rule stream"
	streams := map[string]bool{}
	for len(streams) < 1000 {
		m := g.Next()
		msgs = append(msgs, m)
		streams[m.Stream] = true
	}
	msgs = append(msgs, g.Drain()...)
	var recs []*kgo.Record
	for _, m := range msgs {
		if m.Stream == "" || m.Log {
			t.Fatalf("message %+v: want every message on the wire, keyed by a stream", m)
		}
		if m.Fault != "" {
			planted[m.Fault.Rule()+" "+m.Stream] = ""
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(m.Stream), Value: m.Data})
	}

	dir := t.TempDir()
	type proc struct {
		name, listen, findings string
		cmd                    *exec.Cmd
	}
	start := func(name, group string) *proc {
		p := &proc{name: name, listen: freeAddr(t), findings: filepath.Join(dir, name+".jsonl")}
		cfg := filepath.Join(dir, name+".yaml")
		os.WriteFile(cfg, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 10m, join_window: 30s}
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [%s], group: %s, start: earliest, session_timeout: 1s, commit_interval: 100ms}
outputs:
  findings: {path: %q}
`, p.listen, brokers[0], topic, group, p.findings)), 0o644)
		p.cmd = startProcess(t, cfg)
		return p
	}
	single := start("single", "e2atap-single")
	var replicas []*proc
	for i := range 3 {
		replicas = append(replicas, start(fmt.Sprintf("replica%d", i), "e2atap-scale"))
	}
	for _, p := range append([]*proc{single}, replicas...) {
		waitReady(t, p.listen)
	}

	prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	produce := func(rs []*kgo.Record) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	read := func(p *proc) float64 { return tapMessages(scrapeQuiet(p.listen), "mesh") }
	// settled waits for the group to be stable with n members, each
	// owning partitions.
	settled := func(what string, n int) {
		t.Helper()
		pollUntil(t, what, 60*time.Second, func() bool {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = []string{"e2atap-scale"}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := req.RequestWith(ctx, prod)
			if err != nil || len(resp.Groups) != 1 {
				return false
			}
			gr := resp.Groups[0]
			if gr.State != "Stable" || len(gr.Members) != n {
				return false
			}
			for _, m := range gr.Members {
				if len(m.MemberAssignment) == 0 {
					return false
				}
			}
			return true
		})
	}
	// Every replica owns partitions before the traffic starts.
	settled("the group of three replicas to settle", 3)

	third := len(recs) / 3
	produce(recs[:third])
	pollUntil(t, "every replica to read its partitions", 60*time.Second, func() bool {
		var sum float64
		for _, p := range replicas {
			n := read(p)
			if n == 0 {
				return false
			}
			sum += n
		}
		return sum >= float64(third)
	})
	// The victim has read its share and committed (commit_interval
	// 100ms) with streams open: then it dies, with no goodbye.
	victim := replicas[1]
	time.Sleep(time.Second)
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.cmd.Wait()
	produce(recs[third : 2*third])
	// The survivors take its partitions (after the session timeout);
	// then a new replica joins, and the survivors hand some partitions,
	// with streams open in them, over to it.
	settled("the two survivors to take the dead one's partitions", 2)
	survivorHandovers := func() float64 {
		var n float64
		for _, p := range []*proc{replicas[0], replicas[2]} {
			n += sumMetric(scrapeQuiet(p.listen), "e2atap_tap_dropped_total{", `reason="rebalance"`)
		}
		return n
	}
	before := survivorHandovers()
	replicas = append(replicas, start("replica3", "e2atap-scale"))
	waitReady(t, replicas[3].listen)
	settled("the group of three to settle again", 3)
	produce(recs[2*third:])

	// Wait until the single instance has judged everything and the
	// replicas' findings stop changing.
	pollUntil(t, "the single instance to judge every record", 90*time.Second, func() bool {
		m := scrapeQuiet(single.listen)
		return tapMessages(m, "mesh") == float64(len(recs)) && recordsJudged(m, "mesh") == float64(len(recs))
	})
	// Stopped, the single instance has written out every finding.
	stopProcess(t, single.cmd)
	want := findingSet(t, single.findings)
	union := func() map[string]int {
		u := map[string]int{}
		for _, p := range replicas {
			for k := range findingSet(t, p.findings) {
				u[k]++
			}
		}
		return u
	}
	// The survivors take the dead one's partitions over (after the
	// session timeout) and judge them; a broken hand-over never gets
	// there, and the comparison below says what is missing.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		u := union()
		missing := 0
		for k := range want {
			if u[k] == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(time.Second) // anything late (a false finding) is written out too
	// The survivors gave partitions up to the new replica, with open
	// streams: the hand-over path.
	handovers := survivorHandovers() - before
	for _, p := range []*proc{replicas[0], replicas[2], replicas[3]} {
		stopProcess(t, p.cmd)
	}
	if handovers == 0 {
		t.Error("no partition handed over by the survivors: the join of a new replica proved nothing")
	}

	got := union()
	var lost, falses []string
	dups := 0
	for k := range want {
		if got[k] == 0 {
			lost = append(lost, k)
		}
	}
	for k, n := range got {
		if !want[k] {
			falses = append(falses, k)
		}
		if n > 1 {
			dups++
		}
	}
	var unfound []string
	for k := range planted {
		if !want[k] {
			unfound = append(unfound, k)
		}
	}
	sort.Strings(lost)
	sort.Strings(falses)
	sort.Strings(unfound)
	if len(planted) < 150 {
		t.Fatalf("%d violations planted: too few for the test to prove anything", len(planted))
	}
	if len(unfound) > 0 {
		t.Errorf("the single instance missed %d of %d planted violations: %v", len(unfound), len(planted), unfound[:min(5, len(unfound))])
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d verdicts lost by the replicas (the single instance has them): %v", len(lost), len(want), lost[:min(5, len(lost))])
	}
	if len(falses) > 0 {
		t.Errorf("%d false findings by the replicas (the single instance has none of them): %v", len(falses), falses[:min(5, len(falses))])
	}
	victimFindings := len(findingSet(t, victim.findings))
	t.Logf("%d records, %d streams, %d violations planted; single instance %d findings; replicas' union %d (%d reported by two replicas around a handover; the killed one reported %d before it died; %.0f partitions handed over by the survivors)",
		len(recs), len(streams), len(planted), len(want), len(got), dups, victimFindings, handovers)
}

// findingSet reads a findings log as a set of "rule stream"; a torn last
// line (a process killed while writing) is not a finding.
func findingSet(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return map[string]bool{}
	}
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.LastIndexByte(string(b), '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	out := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f findingLine
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("%s: findings line %q: %v", path, sc.Text(), err)
		}
		out[f.Rule+" "+f.Stream] = true
	}
	return out
}
