package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestOutputsThatFail: the real binary relays while its outputs fail under
// it, and the relay goes on, the failure is counted and logged once, and
// each output works again where it can:
//   - findings on stdout, a pipe whose reader is gone: a write to it
//     raised SIGPIPE, whose default action ended the process and reset
//     every connection it relayed; now the write fails (EPIPE), its lines
//     are counted in e2atap_output_lines_failed_total and the failure is
//     logged once (a full disk was logged every second);
//   - the record log renamed (logrotate without copytruncate), then
//     removed: e2atap went on writing into the renamed file, then into a
//     deleted one, for ever; now it opens a new file at its path;
//   - the record log cut to nothing (copytruncate): appended to where it
//     ends now;
//   - the OTLP collector refusing connections: its spans are counted in
//     e2atap_trace_spans_failed_total and the failure logged once (it was
//     logged for every batch, several a second, and not counted).
//
// /readyz stays 200 throughout: outputs are not readiness (DESIGN.md).
func TestOutputsThatFail(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	records := filepath.Join(dir, "records.jsonl")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
outputs:
  findings: {path: "-"}
  log: {path: %q}
`, listen, wsListen, upstream, records)), 0o644)

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// The OTLP collector refuses connections throughout.
	p := startRunToPipe(t, cfgPath, pw, otlpEnv("http://"+freeAddr(t))...)
	cmd, exited, stderr := p.cmd, p.exited, p.stderr
	pr.Close() // the reader is gone before the first line
	alive := func() {
		t.Helper()
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("e2atap ended (%v) with a failed output", err)
		default:
		}
	}
	waitReady(t, listen)
	c := dialWS(t, wsListen)
	n := 0
	// A stream that starts at sequence 1: a finding every round trip.
	relay := func() {
		t.Helper()
		alive()
		n++
		roundTrip(t, c, e2aStream(fmt.Sprintf("s-%d", n), 1, 1, false, true)[0])
	}
	failed := func(output string) float64 {
		return sumMetric(scrape(t, listen), "e2atap_output_lines_failed_total{", `output="`+output+`"`)
	}
	pollUntil(t, "findings lines counted as failed", 20*time.Second, func() bool {
		relay()
		return failed("findings") > 0
	})
	// More flushes fail (one a second): still relayed, logged once.
	for end := time.Now().Add(2500 * time.Millisecond); time.Now().Before(end); {
		relay()
		time.Sleep(10 * time.Millisecond)
	}
	if got := strings.Count(stderr.String(), "writing the logs out failed"); got != 1 {
		t.Fatalf("the failed output logged %d times, want once", got)
	}
	if got := strings.Count(stderr.String(), "trace export failed"); got != 1 || sumMetric(scrape(t, listen), "e2atap_trace_spans_failed_total", "") == 0 {
		t.Fatalf("the failed trace export logged %d times, want once, and counted", got)
	}
	lines := func() int {
		b, _ := os.ReadFile(records)
		if len(b) > 0 && b[0] != '{' {
			t.Fatalf("the record log starts with %q", b[:min(len(b), 20)])
		}
		return bytes.Count(b, []byte("\n"))
	}
	pollUntil(t, "the record log written", 20*time.Second, func() bool { relay(); return lines() > 0 })

	// logrotate without copytruncate: renamed, then (next rotation) removed.
	for _, rotate := range []func() error{
		func() error { return os.Rename(records, records+".1") },
		func() error { return os.Remove(records) },
		func() error { return os.Truncate(records, 0) },
	} {
		if err := rotate(); err != nil {
			t.Fatal(err)
		}
		pollUntil(t, "new lines in the record log at its path", 20*time.Second, func() bool { relay(); return lines() > 0 })
	}
	if failed("records") != 0 {
		t.Fatalf("record lines counted as failed: %v", failed("records"))
	}
	resp, err := http.Get("http://" + listen + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz %d with a failed output, want 200 (outputs are not readiness)", resp.StatusCode)
	}
	c.Close()

	cmd.Process.Signal(syscall.SIGTERM)
	// The last findings lines fail at the close too: exit status 1,
	// never death by a signal.
	var ee *exec.ExitError
	if err := p.wait(t); err != nil && (!errors.As(err, &ee) || !ee.Exited()) {
		t.Fatalf("e2atap on SIGTERM: %v", err)
	}
	t.Logf("%d round trips relayed", n)
}

// TestStopBoundedWithStdoutNobodyReads: the findings go to a standard
// output whose reader is alive but never reads (a stuck log shipper). The
// relay goes on (copies to the engine are dropped, counted), and SIGTERM
// stops the process within shutdown_timeout, exit status 1 and a log line
// that says why; before, the last flush waited on the pipe for ever and
// only SIGKILL ended the process.
func TestStopBoundedWithStdoutNobodyReads(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
shutdown_timeout: 2s
streams: {queue: 64}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q, queue_size: 64}
outputs:
  findings: {path: "-"}
`, listen, wsListen, upstream)), 0o644)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close() // held open, never read
	p := startRunToPipe(t, cfgPath, pw)
	waitReady(t, listen)
	c := dialWS(t, wsListen)
	n := 0
	// A finding a round trip, until the pipe is full and the engine
	// behind it: the tap drops its copies (queue_full). Both are asked:
	// on a loaded machine a starved engine drops copies before the pipe
	// is full, and the drain at SIGTERM then ends in time (seen with a
	// machine at load 12).
	var last string // what the last poll saw, shown if the wait times out
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("after %d round trips the last poll saw: %s", n, last)
		}
	})
	pollUntil(t, "the engine stuck behind the full pipe", 180*time.Second, func() bool {
		for range 50 {
			n++
			roundTrip(t, c, e2aStream(fmt.Sprintf("s-%d", n), 1, 1, false, true)[0])
		}
		m := scrape(t, listen)
		full := pipeNearlyFull(pr)
		last = fmt.Sprintf("pipe nearly full %t (%s); %s", full, pipeState(pr), metricLines(m, "dropped", "queue", "output_lines", "findings_total", "records_total"))
		return full && sumMetric(m, "e2atap_tap_dropped_total{", `reason="queue_full"`) > 0
	})
	c.Close()
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	var ee *exec.ExitError
	if err := p.wait(t); !errors.As(err, &ee) || ee.ExitCode() != exitFindings {
		t.Fatalf("e2atap on SIGTERM with its stdout full: %v, want exit status %d", err, exitFindings)
	}
	if !strings.Contains(p.stderr.String(), "stopping took longer than shutdown_timeout") {
		t.Error("no log line says why the drain was cut short")
	}
	t.Logf("%d round trips relayed; stopped %s after SIGTERM", n, time.Since(start).Round(time.Millisecond))
}

// TestAbortedDrainKeepsConnectionEnds: at SIGTERM e2atap closes its ws
// connections; Gateways that never answer its close hold the drain to its
// abort (CloseTimeout), when the tap hands over each connection's Lost and
// ConnClosed. Here the engine is behind at that moment (its findings go to
// a stdout nobody reads for a while), so the queues to it are full: the
// Lost and ConnClosed of every connection were dropped (a full queue at
// the abort, or emit refusing them once its context had ended), the cut
// streams stayed open and finish_on_shutdown reported each a
// missing_final, a violation their peers did not commit. Now they are
// handed over once the copies are through, and no stream e2atap cut is a
// finding.
func TestAbortedDrainKeepsConnectionEnds(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream := streamUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s, finish_on_shutdown: true, shards: 1, queue: 8}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q, queue_size: 2}
outputs:
  findings: {path: "-"}
`, listen, wsListen, upstream)), 0o644)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	p := startRunToPipe(t, cfgPath, pw)
	cmd := p.cmd
	waitReady(t, listen)
	const silent = 8
	var gateways []*websocket.Conn
	for i := range silent {
		c := dialWS(t, wsListen)
		openStream(t, c, fmt.Sprintf("cut-%d", i), false)
		gateways = append(gateways, c)
	}
	// Findings nobody reads: the pipe fills, the flush blocks on it, then
	// the engine at its next finding; the queues fill behind it and the
	// tap drops copies.
	flood := dialWS(t, wsListen)
	pollUntil(t, "the tap to drop copies for a full queue", 30*time.Second, func() bool {
		for i := range 200 {
			flood.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := flood.WriteMessage(websocket.TextMessage, []byte(fmt.Sprintf("not json %d", i))); err != nil {
				t.Fatal(err)
			}
		}
		return sumMetric(scrape(t, listen), "e2atap_tap_dropped_total{", `reason="queue_full"`) > 0
	})
	cmd.Process.Signal(syscall.SIGTERM)
	// The Gateways get 1001 and never answer; the abort closes their
	// sockets. Then the engine may go on: stdout is read from here.
	if code := closedWith(t, gateways[0]); code != 1001 {
		t.Fatalf("at SIGTERM the Gateway got close %d, want 1001", code)
	}
	gateways[0].SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, _, err := gateways[0].ReadMessage(); err == nil {
		t.Fatal("a message after the close")
	}
	var out bytes.Buffer
	copied := make(chan error, 1)
	go func() { _, err := io.Copy(&out, pr); copied <- err }()
	if err := p.wait(t); err != nil {
		t.Fatalf("e2atap did not exit 0 on SIGTERM: %v", err)
	}
	<-copied
	var cut []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, `"e2a.missing_final"`) {
			cut = append(cut, l)
		}
	}
	if len(cut) > 0 {
		t.Fatalf("%d streams e2atap cut reported: %s", len(cut), strings.Join(cut, "\n"))
	}
}

// runProc is an `e2atap run` child whose standard output is a pipe the
// test holds: exited receives cmd.Wait's result (once; alive checks put it
// back), stderr holds its log.
type runProc struct {
	cmd    *exec.Cmd
	exited chan error
	stderr *lockedBuffer
}

// startRunToPipe starts `e2atap run --config cfgPath` with env added and
// standard output pw, which it closes once the child holds it. The child
// is killed at the test's end if still running, and its log shown when
// the test failed.
func startRunToPipe(t *testing.T, cfgPath string, pw *os.File, env ...string) *runProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--config", cfgPath, "--reload-interval", "0")
	cmd.Env = append(append(os.Environ(), "E2ATAP_BE_MAIN=1"), env...)
	p := &runProc{cmd: cmd, exited: make(chan error, 1), stderr: &lockedBuffer{}}
	cmd.Stdout, cmd.Stderr = pw, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("e2atap stderr (tail):\n%s", tailText(p.stderr.String(), 8000))
		}
	})
	return p
}

// wait is what the child's Wait returned, once it has exited; a child
// still running 60 s later (a hang guard: under -race on a loaded machine
// a drain took 20 s) fails the test.
func (p *runProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("e2atap still running 60s after SIGTERM")
		return nil
	}
}

// TestSilentCollectorLosesSpansCounted: the OTLP collector accepts TCP
// connections and never answers. The SDK's queue (OTEL_BSP_MAX_QUEUE_SIZE
// 4) fills behind the export that hangs: the spans it has no room for are
// dropped and counted (e2atap_trace_spans_dropped_total; the SDK dropped
// them silently). SIGTERM then waits for the last export only as long as
// shutdown_timeout leaves: the spans still queued are counted as failed,
// and the stop is clean (exit 0). Before: the stop waited 10 s for the
// collector and exited 1 ("context deadline exceeded"), or was cut by
// shutdown_timeout first, exit 1 too.
func TestSilentCollectorLosesSpansCounted(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn // kept open, never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
			go io.Copy(io.Discard, c)
		}
	}()
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
shutdown_timeout: 3s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
`, listen, wsListen, upstream)), 0o644)
	const queue, streams = 4, 20
	cmd, stderr := startE2atap(t, append(otlpEnv("http://"+silent.Addr().String()), fmt.Sprintf("OTEL_BSP_MAX_QUEUE_SIZE=%d", queue)),
		"run", "--config", cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	c := dialWS(t, wsListen)
	for i := range streams {
		roundTrip(t, c, e2aStream(fmt.Sprintf("s-%d", i), 0, 0, false, true)[0])
	}
	// The first export hangs with at most queue spans; the rest find no
	// room (an export gives up only after 10 s, OTEL_EXPORTER_OTLP_TIMEOUT).
	pollUntil(t, "the spans past the queue counted as dropped", 20*time.Second, func() bool {
		return sumMetric(scrape(t, listen), "e2atap_trace_spans_dropped_total", "") >= streams-queue
	})
	c.Close()
	cmd.Process.Signal(syscall.SIGTERM)
	awaitExit(t, cmd) // exit 0
	stopped := stderr.lines("e2atap stopped")
	if len(stopped) != 1 {
		t.Fatalf("%d \"e2atap stopped\" lines", len(stopped))
	}
	got := func(k string) float64 { n, _ := stopped[0][k].(float64); return n }
	if got("trace_spans") != streams || got("trace_spans_dropped") != streams-queue || got("trace_spans_failed") != queue {
		t.Errorf("stopped with %v spans, %v dropped, %v failed; want %d, %d (past the queue), %d (queued when the stop gave up)",
			got("trace_spans"), got("trace_spans_dropped"), got("trace_spans_failed"), streams, streams-queue, queue)
	}
	if cut := stderr.lines("trace export cut short by the stop: the spans not exported yet are lost"); len(cut) != 1 {
		t.Errorf("%d log lines of the spans lost at the stop, want 1", len(cut))
	}
}

// metricLines is the samples of metrics whose line holds one of words.
func metricLines(metrics string, words ...string) string {
	var out []string
	for _, l := range strings.Split(metrics, "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "; ")
}
