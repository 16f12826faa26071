package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
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
	h := newKafkaHarness(t)
	recs, planted, streams := kafkaTraffic(t, h.topic, 1000)
	type proc = kafkaProc
	start := func(name, group string, shards int) *proc { return h.start(name, group, false, shards) }
	single := start("single", "e2atap-single", 0)
	var replicas []*proc
	for i := range 3 {
		// One replica judges on two shards (the others on the default:
		// one on two CPUs), so that its handovers go to every shard.
		replicas = append(replicas, start(fmt.Sprintf("replica%d", i), "e2atap-scale", 1+i%2))
	}
	for _, p := range append([]*proc{single}, replicas...) {
		waitReady(t, p.listen)
	}
	prod, produce := h.prod, h.produce
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
	pollUntil(t, "the victim to judge what it read", 30*time.Second, func() bool {
		m := scrapeQuiet(victim.listen)
		return recordsJudged(m, "mesh") >= tapMessages(m, "mesh")
	})
	// And its commits (every 100ms) reach what every replica judged: a
	// fixed wait was a guess on a busy machine.
	pollUntil(t, "the group's commits to cover what it judged", 60*time.Second, func() bool {
		return h.committedThrough("e2atap-scale")
	})
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
	replicas = append(replicas, start("replica3", "e2atap-scale", 0))
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
	// twice counts the verdicts two replicas both reported: the records a
	// new owner reads again from the commit, below the judged mark the
	// last owner committed, are judged silently.
	twice := func(ps []*proc) int {
		u, n := map[string]int{}, 0
		for _, p := range ps {
			for k := range findingSet(t, p.findings) {
				if u[k]++; u[k] == 2 {
					n++
				}
			}
		}
		return n
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
	// The killed replica's last commit (every 100ms; it had judged what
	// it read and idled two seconds before it died) has every record it
	// judged below its mark, and so have the survivors' handovers to the
	// new replica: nothing may be reported twice. (Before the mark: 30
	// of the killed one's 30 verdicts were reported again by the
	// survivors that read its open streams again from its commit.)
	if n := twice(replicas); n > 0 {
		t.Errorf("%d verdicts reported by two replicas: the judged mark of the commits did not hold", n)
	}
	victimFindings := len(findingSet(t, victim.findings))
	if t.Failed() {
		return
	}
	t.Logf("%d records, %d streams, %d violations planted; single instance %d findings; replicas' union %d (%d reported by two replicas, the killed one included; it reported %d before it died; %.0f partitions handed over by the survivors)",
		len(recs), streams, len(planted), len(want), len(got), dups, victimFindings, handovers)
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

// kafkaHarness is a kfake cluster with a 6-partition topic, a producer and
// a directory for the e2atap processes of a test.
type kafkaHarness struct {
	t       *testing.T
	topic   string
	brokers []string
	dir     string
	prod    *kgo.Client
	cluster *kfake.Cluster
}

func newKafkaHarness(t *testing.T) *kafkaHarness {
	t.Helper()
	h := &kafkaHarness{t: t, topic: "mesh", dir: t.TempDir()}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(6, h.topic), kfake.GroupMinSessionTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	h.cluster, h.brokers = cluster, cluster.ListenAddrs()
	if h.prod, err = kgo.NewClient(kgo.SeedBrokers(h.brokers...), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.prod.Close)
	return h
}

func (h *kafkaHarness) produce(rs []*kgo.Record) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.prod.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		h.t.Fatal(err)
	}
}

// committedThrough reports whether group's commits reach the end of
// every partition of the topic that holds records: its committed offset,
// or the judged mark in the commit's metadata (e2atap's: "e2atap judged
// <offset>"), is the partition's end.
func (h *kafkaHarness) committedThrough(group string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lreq := kmsg.NewPtrListOffsetsRequest()
	lt := kmsg.NewListOffsetsRequestTopic()
	lt.Topic = h.topic
	for p := range int32(6) {
		lp := kmsg.NewListOffsetsRequestTopicPartition()
		lp.Partition, lp.Timestamp = p, -1 // the end
		lt.Partitions = append(lt.Partitions, lp)
	}
	lreq.Topics = append(lreq.Topics, lt)
	lresp, err := lreq.RequestWith(ctx, h.prod)
	if err != nil {
		return false
	}
	ends := map[int32]int64{}
	for _, t := range lresp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return false
			}
			ends[p.Partition] = p.Offset
		}
	}
	freq := kmsg.NewPtrOffsetFetchRequest()
	freq.Group = group
	ft := kmsg.NewOffsetFetchRequestTopic()
	ft.Topic = h.topic
	for p := range int32(6) {
		ft.Partitions = append(ft.Partitions, p)
	}
	freq.Topics = append(freq.Topics, ft)
	fresp, err := freq.RequestWith(ctx, h.prod)
	if err != nil || fresp.ErrorCode != 0 {
		return false
	}
	done := map[int32]int64{}
	for _, t := range fresp.Topics {
		for _, p := range t.Partitions {
			off := p.Offset
			if p.Metadata != nil {
				if j, err := strconv.ParseInt(strings.TrimPrefix(*p.Metadata, "e2atap judged "), 10, 64); err == nil && j > off {
					off = j
				}
			}
			done[p.Partition] = off
		}
	}
	for p, end := range ends {
		if end > 0 && done[p] < end {
			return false
		}
	}
	return true
}

// kafkaProc is one `e2atap run` reading the harness's topic.
type kafkaProc struct {
	name, listen, findings, config string
	cmd                            *exec.Cmd
}

// start runs e2atap with a kafka tap in group (and, with recordLog, a
// record log of its own), on shards shards (0: the default).
func (h *kafkaHarness) start(name, group string, recordLog bool, shards int) *kafkaProc {
	p := h.configure(name, group, recordLog, shards, "100ms")
	p.cmd = startProcess(h.t, p.config)
	return p
}

// configure writes the configuration of start's process, committing every
// commitInterval, and returns it not started.
func (h *kafkaHarness) configure(name, group string, recordLog bool, shards int, commitInterval string) *kafkaProc {
	p := &kafkaProc{name: name, listen: freeAddr(h.t), findings: filepath.Join(h.dir, name+".jsonl"), config: filepath.Join(h.dir, name+".yaml")}
	log := ""
	if recordLog {
		log = fmt.Sprintf("\n  log: {path: %q}", filepath.Join(h.dir, name+".records.jsonl"))
	}
	sh := ""
	if shards > 0 {
		sh = fmt.Sprintf(", shards: %d", shards)
	}
	os.WriteFile(p.config, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 10m, join_window: 30s%s}
taps:
  - {name: mesh, type: kafka, brokers: [%q], topics: [%s], group: %s, start: earliest, session_timeout: 1s, commit_interval: %s}
outputs:
  findings: {path: %q}%s
`, p.listen, sh, h.brokers[0], h.topic, group, commitInterval, p.findings, log)), 0o644)
	return p
}

// rereadSkipped is the records a run judged silently as read again, from
// its "e2atap stopped" line (0 when it logged none, or more than one).
func rereadSkipped(stderr *lockedBuffer) float64 {
	stopped := stderr.lines("e2atap stopped")
	if len(stopped) != 1 {
		return 0
	}
	n, _ := stopped[0]["reread_skipped"].(float64)
	return n
}

// kafkaTraffic makes E2A traffic of n streams up front, every message
// keyed by its stream: short streams, 300 open at any time, many with a
// lost chunk (a violation that a reader joining the stream in the middle
// cannot see). It returns the records and the planted "rule stream"s.
func kafkaTraffic(t *testing.T, topic string, n int) (recs []*kgo.Record, planted map[string]string, streams int) {
	t.Helper()
	g := gen.New(gen.Config{Seed: 10, Concurrent: 300, MinChunks: 3, MaxChunks: 10, FaultRate: 0.35,
		Faults: []gen.Fault{gen.LostChunk}, KeepaliveRate: 0.02})
	var msgs []gen.Message
	seen := map[string]bool{}
	for len(seen) < n {
		m := g.Next()
		msgs = append(msgs, m)
		seen[m.Stream] = true
	}
	msgs = append(msgs, g.Drain()...)
	planted = map[string]string{}
	for _, m := range msgs {
		if m.Stream == "" || m.Log {
			t.Fatalf("message %+v: want every message on the wire, keyed by a stream", m)
		}
		if m.Fault != "" {
			planted[m.Fault.Rule()+" "+m.Stream] = ""
		}
		recs = append(recs, &kgo.Record{Topic: topic, Key: []byte(m.Stream), Value: m.Data})
	}
	return recs, planted, len(seen)
}

// TestKafkaCrashRestartJudgesOpenStreamsWhole: one `e2atap run` reads a
// Kafka topic and is killed (SIGKILL) with streams open, then started
// again on the same files and group. It reads again from its commit, which
// did not pass the oldest open stream's first record; the records its
// record log holds already, or (without a record log) those below the
// judged mark of its commit's metadata, are judged silently (for their
// streams' state: nothing reported or logged twice), so the streams open
// at the crash are judged whole. Its findings, before and after the crash,
// equal a single uninterrupted instance's, none twice. Without the judged
// mark, the run with no record log reported 102 of its 215 findings twice.
func TestKafkaCrashRestartJudgesOpenStreamsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Run("record log", func(t *testing.T) { testKafkaCrashRestart(t, true) })
	t.Run("no record log", func(t *testing.T) { testKafkaCrashRestart(t, false) })
}

func testKafkaCrashRestart(t *testing.T, recordLog bool) {
	h := newKafkaHarness(t)
	recs, planted, streams := kafkaTraffic(t, h.topic, 600)
	single := h.start("single", "e2atap-single", false, 0)
	victim := h.start("victim", "e2atap-crash", recordLog, 0)
	waitReady(t, single.listen)
	waitReady(t, victim.listen)

	half := len(recs) / 2
	h.produce(recs[:half])
	pollUntil(t, "the victim to read the first half", 60*time.Second, func() bool {
		m := scrapeQuiet(victim.listen)
		return recordsJudged(m, "mesh") >= float64(half)
	})
	// Killed once its commits cover every record it judged (their offsets
	// or judged marks at the partitions' ends: commits every 100 ms,
	// findings written before each): a fixed 1.5 s was too short on a
	// loaded machine, and the findings written after the last commit were
	// reported again after the restart (the crash window, by design).
	pollUntil(t, "the victim's commits to cover what it judged", 60*time.Second, func() bool {
		return h.committedThrough("e2atap-crash")
	})
	victim.cmd.Process.Signal(syscall.SIGKILL)
	victim.cmd.Wait()
	h.produce(recs[half:])
	var stderr *lockedBuffer
	victim.cmd, stderr = startProcessArgs(t, victim.config)
	waitReady(t, victim.listen)

	pollUntil(t, "the single instance to judge every record", 60*time.Second, func() bool {
		m := scrapeQuiet(single.listen)
		return recordsJudged(m, "mesh") == float64(len(recs))
	})
	stopProcess(t, single.cmd)
	want := findingSet(t, single.findings)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		got := findingSet(t, victim.findings)
		missing := 0
		for k := range want {
			if !got[k] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(time.Second)
	stopProcess(t, victim.cmd)

	got := findingSet(t, victim.findings)
	if b, err := os.ReadFile(victim.findings); err == nil {
		if n := bytes.Count(b, []byte{'\n'}); n != len(got) {
			t.Errorf("%d findings for %d distinct (rule, stream): %d reported twice", n, len(got), n-len(got))
		}
	}
	var lost, falses []string
	for k := range want {
		if !got[k] {
			lost = append(lost, k)
		}
	}
	for k := range got {
		if !want[k] {
			falses = append(falses, k)
		}
	}
	sort.Strings(lost)
	sort.Strings(falses)
	if len(want) < len(planted) {
		t.Errorf("the single instance found %d of %d planted violations", len(want), len(planted))
	}
	if len(lost) > 0 {
		t.Errorf("%d of %d verdicts lost across the crash: %v", len(lost), len(want), lost[:min(5, len(lost))])
	}
	if len(falses) > 0 {
		t.Errorf("%d false findings across the crash: %v", len(falses), falses[:min(5, len(falses))])
	}
	reread := rereadSkipped(stderr)
	if reread == 0 {
		t.Error("the restarted run recognised no record read again: the silent path was not taken")
	}
	if !t.Failed() {
		t.Logf("%d records, %d streams, %d planted; the restarted instance judged %.0f records read again silently and found all %d of the single instance's findings, none else",
			len(recs), streams, len(planted), reread, len(want))
	}
}
