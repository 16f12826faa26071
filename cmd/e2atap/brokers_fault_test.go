package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func startNATS(t *testing.T, port int) *server.Server {
	t.Helper()
	return startNATSWith(t, &server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true})
}

// startNATSWith starts an in-process nats-server with opts, ready for
// connections, shut down when the test ends.
func startNATSWith(t *testing.T, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server not ready")
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// subscribed reports whether a client of s subscribes to subject.
func subscribed(s *server.Server, subject string) bool {
	cz, err := s.Connz(&server.ConnzOptions{Subscriptions: true})
	if err != nil {
		return false
	}
	for _, c := range cz.Conns {
		for _, sub := range c.Subs {
			if sub == subject {
				return true
			}
		}
	}
	return false
}

type findingLine struct {
	Rule   string `json:"rule"`
	Stream string `json:"stream"`
}

func readFindings(t *testing.T, path string) []findingLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []findingLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var fl findingLine
		if err := json.Unmarshal(sc.Bytes(), &fl); err != nil {
			t.Fatalf("findings line %q: %v", sc.Text(), err)
		}
		out = append(out, fl)
	}
	return out
}

// TestNATSServerRestartUnderOpenStreams (issue 8, fault d): e2atap run, the
// real process, taps a nats-server that is killed for 3 s under 200 open
// E2A streams while the publisher goes on, and comes back on the same
// port. Core NATS does not replay what was published meanwhile: the tap
// says so (a loss, reason reconnect) and no stream is judged across it, so
// there is no false finding; the violations planted in streams that start
// after the reconnect are all found.
func TestNATSServerRestartUnderOpenStreams(t *testing.T) {
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
	srv := startNATS(t, port)
	url := srv.ClientURL()

	proc, findings, listen := startNATSSidecar(t, url, 536870912)
	pollUntil(t, "the tap's subscription", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })

	pub, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(20*time.Millisecond), nats.ReconnectBufSize(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	g := gen.New(gen.Config{Seed: 8, Concurrent: 200, MinChunks: 10, MaxChunks: 1200, FaultRate: 0.25,
		Faults: []gen.Fault{gen.LostChunk, gen.DoubleFinal, gen.FailedWrongKind}, KeepaliveRate: 0.02, UnaryRate: 0.1, Sessions: 50})

	const (
		before = iota
		during
		after
	)
	phase := before
	firstPhase := map[string]int{}    // stream → phase of its first message
	planted := map[string]gen.Fault{} // stream → fault whose message was delivered to the server
	failed := 0
	send := func(m gen.Message) {
		if m.Log {
			if m.Wire == nil {
				return
			}
			m.Data = m.Wire
		}
		if _, ok := firstPhase[m.Stream]; !ok && m.Stream != "" {
			firstPhase[m.Stream] = phase
		}
		if err := pub.Publish("e2a.traffic", m.Data); err != nil {
			failed++
			return
		}
		if m.Fault != "" && m.Fault != gen.LeakedToken {
			planted[m.Stream] = m.Fault
		}
	}
	publishFor := func(d time.Duration) {
		end := time.Now().Add(d)
		for i := 0; time.Now().Before(end); i++ {
			send(g.Next())
			if i%50 == 49 {
				time.Sleep(2 * time.Millisecond) // about 20 k msgs/s
			}
		}
	}
	publishFor(1500 * time.Millisecond)
	srv.Shutdown()
	srv.WaitForShutdown()
	phase = during
	publishFor(3 * time.Second)
	srv2 := startNATS(t, port)
	pollUntil(t, "the tap to resubscribe", 20*time.Second, func() bool { return subscribed(srv2, "e2a.>") })
	pollUntil(t, "the publisher to reconnect", 20*time.Second, pub.IsConnected)
	phase = after
	// 2.5 s of traffic, and on until violations were planted in streams
	// begun after the reconnect (a publisher starved of CPU by a loaded
	// machine sends few streams in 2.5 s: seen at load 14).
	plantedAfter := func() (n int) {
		for s := range planted {
			if firstPhase[s] == after {
				n++
			}
		}
		return n
	}
	publishFor(2500 * time.Millisecond)
	for deadline := time.Now().Add(30 * time.Second); plantedAfter() < 5 && time.Now().Before(deadline); {
		publishFor(500 * time.Millisecond)
	}
	for _, m := range g.Drain() {
		send(m)
	}
	if err := pub.Flush(); err != nil {
		t.Fatal(err)
	}
	if failed == 0 {
		t.Fatal("nothing was lost during the outage: the test proves nothing")
	}
	// Wait until the tap has read everything and the engine judged it
	// (a slow machine, or a -race build, lags behind the publisher).
	var metrics string
	prev := -1.0
	pollUntil(t, "the engine to catch up", 120*time.Second, func() bool {
		time.Sleep(500 * time.Millisecond)
		metrics = scrape(t, listen)
		seen, judged := tapMessages(metrics, "mesh"), recordsJudged(metrics, "mesh")
		done := seen > 0 && seen == judged && seen == prev
		prev = seen
		return done
	})
	stopProcess(t, proc)

	got := readFindings(t, findings)
	var falses []string
	found := map[string]bool{}
	for _, f := range got {
		fault, ok := planted[f.Stream]
		if !ok || fault.Rule() != f.Rule {
			falses = append(falses, f.Rule+" "+f.Stream)
			continue
		}
		found[f.Stream] = true
	}
	var missed []string
	afterPlanted := 0
	for s, fault := range planted {
		if firstPhase[s] != after {
			continue
		}
		afterPlanted++
		if !found[s] {
			missed = append(missed, string(fault)+" "+s)
		}
	}
	sort.Strings(falses)
	sort.Strings(missed)
	if len(falses) > 0 {
		t.Errorf("%d false findings (first %v)", len(falses), falses[:min(5, len(falses))])
	}
	if afterPlanted == 0 {
		t.Fatal("no violation planted after the reconnect: the test proves nothing")
	}
	if len(missed) > 0 {
		t.Errorf("%d of %d violations planted after the reconnect not found: %v", len(missed), afterPlanted, missed[:min(5, len(missed))])
	}
	for _, want := range []string{
		`e2atap_tap_dropped_total{reason="reconnect",tap="mesh"} 1`,
		`e2atap_tap_dropped_total{reason="queue_full",tap="mesh"} 0`,
	} {
		if !containsLine(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	t.Logf("%d findings, %d publishes failed during the outage, %d violations planted after the reconnect, all found", len(got), failed, afterPlanted)
}

// scrape returns the /metrics exposition of the sidecar at addr.
func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

// tapMessages is e2atap_tap_messages_total{direction="none",tap=tap}.
func tapMessages(metrics, tap string) float64 {
	return sumMetric(metrics, "e2atap_tap_messages_total{", `tap="`+tap+`"`)
}

// recordsJudged is the sum of e2atap_records_total{tap=tap}.
func recordsJudged(metrics, tap string) float64 {
	return sumMetric(metrics, "e2atap_records_total{", `tap="`+tap+`"`)
}

func sumMetric(metrics, prefix, label string) float64 {
	var sum float64
	for _, l := range strings.Split(metrics, "\n") {
		if !strings.HasPrefix(l, prefix) || !strings.Contains(l, label) {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(l[strings.LastIndexByte(l, ' ')+1:], &v); err == nil {
			sum += v
		}
	}
	return sum
}

// TestNATSSlowConsumerGivesNoFalseFinding: e2atap run behind a small
// client buffer (pending_bytes 1 MiB) gets bursts faster than it judges:
// the NATS client drops (slow consumer), the tap says where, and no stream
// is judged across the drops: every finding is a planted violation.
func TestNATSSlowConsumerGivesNoFalseFinding(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	srv := startNATS(t, -1)
	proc, findings, listen := startNATSSidecar(t, srv.ClientURL(), 1048576)
	pollUntil(t, "the tap's subscription", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })

	pub, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close()
	g := gen.New(gen.Config{Seed: 11, Concurrent: 200, MinChunks: 10, MaxChunks: 400, FaultRate: 0.25,
		Faults: []gen.Fault{gen.LostChunk, gen.DoubleFinal, gen.FailedWrongKind}, KeepaliveRate: 0.02, UnaryRate: 0.1, Sessions: 50})
	planted := map[string]gen.Fault{}
	send := func(m gen.Message) {
		if m.Log {
			if m.Wire == nil {
				return
			}
			m.Data = m.Wire
		}
		if err := pub.Publish("e2a.traffic", m.Data); err != nil {
			t.Fatal(err)
		}
		if m.Fault != "" && m.Fault != gen.LeakedToken {
			planted[m.Stream] = m.Fault
		}
	}
	for burst := range 4 {
		for range 40_000 {
			send(g.Next())
		}
		pub.Flush()
		if burst < 3 {
			time.Sleep(300 * time.Millisecond)
		}
	}
	for _, m := range g.Drain() {
		send(m)
	}
	pub.Flush()
	var metrics string
	prev := -1.0
	pollUntil(t, "the engine to catch up", 120*time.Second, func() bool {
		time.Sleep(500 * time.Millisecond)
		metrics = scrape(t, listen)
		seen, judged := tapMessages(metrics, "mesh"), recordsJudged(metrics, "mesh")
		done := seen > 0 && seen == judged && seen == prev
		prev = seen
		return done
	})
	stopProcess(t, proc)
	dropped := sumMetric(metrics, "e2atap_tap_dropped_total{", `reason="queue_full"`)
	if dropped == 0 {
		t.Skip("the engine kept up with every burst: no slow consumer to test on this machine")
	}
	var falses []string
	got := readFindings(t, findings)
	for _, f := range got {
		if fault, ok := planted[f.Stream]; !ok || fault.Rule() != f.Rule {
			falses = append(falses, f.Rule+" "+f.Stream)
		}
	}
	if len(falses) > 0 {
		sort.Strings(falses)
		t.Errorf("%d false findings (first %v)", len(falses), falses[:min(5, len(falses))])
	}
	t.Logf("%.0f messages dropped by the client, %d findings, none false", dropped, len(got))
}

// startNATSSidecar runs e2atap with one nats tap on subjects e2a.> of url
// (the NATS client's pending buffer pendingBytes) and a findings log; it
// returns the process, the findings log's path and the HTTP listener.
func startNATSSidecar(t *testing.T, url string, pendingBytes int) (proc *exec.Cmd, findings, listen string) {
	t.Helper()
	dir := t.TempDir()
	findings = filepath.Join(dir, "findings.jsonl")
	listen = freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 10m, join_window: 5s}
taps:
  - {name: mesh, type: nats, url: %q, subjects: ["e2a.>"], pending_bytes: %d}
outputs:
  findings: {path: %q}
`, listen, url, pendingBytes, findings)), 0o644)
	return startProcess(t, cfgPath), findings, listen
}

// TestJetStreamCrashReadsOnFromItsCursor: e2atap run reads a JetStream
// stream and is killed (SIGKILL) with streams open while the publisher goes
// on; started again, it reads on from its cursors file (positions), saved
// only once what it read was judged and in the record log: what was stored
// while it was down is read, and what it had read again after its last save
// is recognised in its record log and judged silently. Its findings are the
// planted violations, none missing, none else and none twice. Before (no
// cursors): it read only what was stored after its start, and the messages
// stored while it was down were skipped with no loss counted, their
// violations never found.
//
// Without a record log, the cursors file's judged mark recognises what the
// crashed run judged: before it (the cursor held back at the oldest open
// stream's start, every message from there judged again), 11 of the 34
// planted violations were reported twice.
func TestJetStreamCrashReadsOnFromItsCursor(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	t.Run("record log", func(t *testing.T) { testJetStreamCrash(t, true) })
	t.Run("no record log", func(t *testing.T) { testJetStreamCrash(t, false) })
}

// savedThrough is, from a nats tap's cursors file, the sequence after the
// last message of stream judged and written out at its last save: its
// judged mark, or its cursor when no open stream holds that back (0: no
// file yet, or not one).
func savedThrough(path, stream string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var d struct {
		Streams map[string]uint64 `json:"streams"`
		Judged  map[string]uint64 `json:"judged"`
	}
	if json.Unmarshal(b, &d) != nil {
		return 0
	}
	return max(d.Streams[stream], d.Judged[stream])
}

func testJetStreamCrash(t *testing.T, recordLog bool) {
	port := freePort(t)
	startNATSWith(t, &server.Options{Host: "127.0.0.1", Port: port, NoLog: true, NoSigs: true, JetStream: true, StoreDir: t.TempDir()})
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "E2A", Subjects: []string{"agent.>"}}); err != nil {
		t.Fatal(err)
	}
	g := gen.New(gen.Config{Seed: 7, Concurrent: 30, MinChunks: 3, MaxChunks: 8, FaultRate: 0.3, Faults: []gen.Fault{gen.LostChunk}})
	var msgs []gen.Message
	for seen := map[string]bool{}; len(seen) < 120; {
		m := g.Next()
		msgs = append(msgs, m)
		seen[m.Stream] = true
	}
	msgs = append(msgs, g.Drain()...)
	planted := map[string]bool{}
	for _, m := range msgs {
		if m.Fault != "" {
			planted[m.Fault.Rule()+" "+m.Stream] = true
		}
	}
	publish := func(ms []gen.Message) {
		t.Helper()
		for _, m := range ms {
			if _, err := js.Publish(ctx, "agent."+m.Stream, m.Data); err != nil {
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
taps:
  - {name: mesh, type: nats, url: %q, jetstream: [{stream: E2A}], positions: %q}
outputs:
  findings: {path: %q}
`, listen, url, filepath.Join(dir, "cursors.json"), findings)), 0o644)
	if recordLog {
		f, _ := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
		fmt.Fprintf(f, "  log: {path: %q}\n", filepath.Join(dir, "records.jsonl"))
		f.Close()
	}

	cmd := startProcess(t, cfg)
	waitReady(t, listen)
	pollUntil(t, "the tap's consumer", 10*time.Second, func() bool {
		return sumMetric(scrapeQuiet(listen), "e2atap_tap_up{", `tap="mesh"`) == 1 && sumMetric(scrapeQuiet(listen), "e2atap_tap_upstream_up{", `tap="mesh"`) == 1
	})
	time.Sleep(300 * time.Millisecond) // the consumer is created after the connection
	half := len(msgs) / 2
	publish(msgs[:half])
	pollUntil(t, "the first half judged", 30*time.Second, func() bool { return recordsJudged(scrapeQuiet(listen), "mesh") >= float64(half) })
	// Killed once the cursors file says the first half is judged and
	// written out (its cursor, or its judged mark when open streams hold
	// the cursor back): what a crash loses is then only what no test can
	// tell from a restart's re-reading. A fixed pause for the save (1 s)
	// was too short on a loaded machine (the Kafka twin failed so).
	cursors := filepath.Join(dir, "cursors.json")
	pollUntil(t, "the cursors file to cover the first half", 30*time.Second, func() bool {
		return savedThrough(cursors, "E2A") > uint64(half)
	})
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	down := half + len(msgs)/5
	publish(msgs[half:down]) // stored while the sidecar is down
	cmd, stderr := startProcessArgs(t, cfg)
	waitReady(t, listen)
	publish(msgs[down:])
	pollUntil(t, "every message read", 30*time.Second, func() bool {
		return tapMessages(scrapeQuiet(listen), "mesh") >= float64(len(msgs)-half)
	})
	time.Sleep(time.Second)
	stopProcess(t, cmd)

	got := findingSet(t, findings)
	if b, err := os.ReadFile(findings); err == nil {
		if n := bytes.Count(b, []byte{'\n'}); n != len(got) {
			t.Errorf("%d findings for %d distinct (rule, stream): %d reported twice", n, len(got), n-len(got))
		}
	}
	var falses, missed []string
	for k := range got {
		if !planted[k] {
			falses = append(falses, k)
		}
	}
	for k := range planted {
		if !got[k] {
			missed = append(missed, k)
		}
	}
	sort.Strings(falses)
	sort.Strings(missed)
	if len(missed) > 0 {
		t.Errorf("%d of %d planted violations not found: %v", len(missed), len(planted), missed[:min(5, len(missed))])
	}
	if len(falses) > 0 {
		t.Errorf("%d false findings: %v", len(falses), falses[:min(5, len(falses))])
	}
	if resumed := stderr.lines("jetstream stream read on from its saved cursor"); len(resumed) != 1 {
		t.Errorf("%d lines of a resume from the saved cursor, want 1", len(resumed))
	}
	reread := 0.0
	if stopped := stderr.lines("e2atap stopped"); len(stopped) == 1 {
		reread, _ = stopped[0]["reread_skipped"].(float64)
	}
	if reread == 0 {
		t.Error("the restarted run recognised no record read again: it did not read the streams open at the crash again")
	}
	if !t.Failed() {
		t.Logf("%d messages, %d planted violations, all found; %d stored while the sidecar was down, %.0f read again silently", len(msgs), len(planted), down-half, reread)
	}
}
