package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TestNATSOutageLongerThanIdleTimeout: e2atap run taps a nats-server that
// is shut down for three idle timeouts (6 s), while an E2A stream is open,
// and comes back on the same port; the stream's publisher goes on after
// it. Before, the stream went idle during the outage (e2a.missing_final)
// and each of its records read after the reconnect was e2a.after_final:
// four findings, none the stream's fault. The tap now holds its streams
// while the server is gone (Message.Progress, as a ws connection behind);
// the loss the outage is (core NATS does not replay) comes before the
// first message after it. The only finding is the planted gap of a stream
// published after the reconnect.
func TestNATSOutageLongerThanIdleTimeout(t *testing.T) {
	t.Parallel() // waits more than it computes: main_test.go
	// An idle timeout of 2 s, not less: the stream must not go idle
	// between its first records being judged and the broker's shutdown
	// (on a loaded machine the poll's scrape took more than 1 s).
	const idle = 2 * time.Second
	srv, port, url, listen, findings, cmd := natsOutageRun(t, idle)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	publish := func(lines []string) {
		t.Helper()
		for _, l := range lines {
			if err := nc.Publish("e2a.agent", []byte(l)); err != nil {
				t.Fatal(err)
			}
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	publish(e2aStream("across", 0, 2, true, false))
	pollUntil(t, "the stream's first records to be judged", 20*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= 3
	})
	srv.Shutdown()
	srv.WaitForShutdown()
	time.Sleep(3 * idle)
	srv = startNATS(t, port)
	pollUntil(t, "the tap's subscription again", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	pollUntil(t, "the publisher's reconnect", 20*time.Second, nc.IsConnected)
	publish(e2aStream("across", 2, 4, false, true))
	publish(e2aStream("after", 0, 4, true, true, 1)) // planted: sequence 1 missing
	pollUntil(t, "the planted gap", 20*time.Second, func() bool {
		return findingSet(t, findings)["e2a.seq_gap after"]
	})
	stopProcess(t, cmd)
	if got := findingSet(t, findings); len(got) != 1 {
		t.Errorf("findings %v, want only the planted e2a.seq_gap of after: an outage is a loss, not the stream's fault", got)
	}
}

// TestNATSHoldEndsWithTheRunThatHeld: a reload restarts the nats tap while
// its server is gone (the run that held the tap's streams stops before the
// reconnect that would let them go). The new run lets go of the hold at its
// first connect: a stream that then really ends without a final is
// e2a.missing_final at idle_timeout, not held for ever.
func TestNATSHoldEndsWithTheRunThatHeld(t *testing.T) {
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
	dir := t.TempDir()
	findings := filepath.Join(dir, "findings.jsonl")
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	config := func(pending int) []byte {
		return []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 1s, join_window: 0s}
taps:
  - {name: mesh, type: nats, url: %q, subjects: ["e2a.>"], pending_bytes: %d}
outputs:
  findings: {path: %q}
`, listen, url, pending, findings))
	}
	os.WriteFile(cfgPath, config(8<<20), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	pollUntil(t, "the tap's subscription", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	srv.Shutdown()
	srv.WaitForShutdown()
	pollUntil(t, "the outage to be seen", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), "nats server unreachable")
	})
	os.WriteFile(cfgPath, config(16<<20), 0o644) // the tap changes: it restarts
	cmd.Process.Signal(syscall.SIGHUP)
	pollUntil(t, "the reload", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"msg":"configuration reloaded"`)
	})
	srv = startNATS(t, port)
	pollUntil(t, "the new run's subscription", 30*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, l := range e2aStream("dies", 0, 2, true, false) {
		nc.Publish("e2a.agent", []byte(l))
	}
	nc.Flush()
	pollUntil(t, "the missing_final of the stream that ended without a final", 20*time.Second, func() bool {
		return findingSet(t, findings)["e2a.missing_final dies"]
	})
	stopProcess(t, cmd)
}

// TestNATSOutageThenSilenceIsNoMissingFinal: a stream open when the broker
// went away, whose rest was published during the outage (lost: core NATS
// does not replay it), and nothing at all published after the reconnect.
// The loss was told to the engine only before the next message, so with
// none the stream was e2a.missing_final one idle timeout after the
// reconnect: a stream touched by a loss gets no missing_final (RULES.md).
func TestNATSOutageThenSilenceIsNoMissingFinal(t *testing.T) {
	t.Parallel() // waits more than it computes: main_test.go
	// An idle timeout of 3 s: the stream must not go idle between its
	// records being judged and the broker's shutdown, which on a loaded
	// machine (the poll's scrape) took more than 1 s (the stream was then
	// rightly e2a.missing_final before any outage).
	const idle = 3 * time.Second
	srv, port, url, listen, findings, cmd := natsOutageRun(t, idle)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range e2aStream("cut", 0, 2, true, false) {
		if err := nc.Publish("e2a.agent", []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	pollUntil(t, "the stream's first records to be judged", 20*time.Second, func() bool {
		return recordsJudged(scrapeQuiet(listen), "mesh") >= 3
	})
	srv.Shutdown()
	srv.WaitForShutdown()
	srv = startNATS(t, port)
	pollUntil(t, "the tap's subscription again", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	time.Sleep(2*idle + 2*time.Second) // idle_timeout after the hold's extra one, and more
	stopProcess(t, cmd)
	if got := findingSet(t, findings); len(got) != 0 {
		t.Errorf("findings %v, want none: the stream's rest was lost in the outage", got)
	}
}

// natsOutageRun starts a nats-server on a port it can be started on again
// and e2atap run tapping it (idle_timeout idle, no join window), and waits
// for the tap's subscription.
func natsOutageRun(t *testing.T, idle time.Duration) (srv *server.Server, port int, url, listen, findings string, cmd *exec.Cmd) {
	t.Helper()
	if testing.Short() {
		t.Skip("process-level test")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	srv = startNATS(t, port)
	url = srv.ClientURL()
	dir := t.TempDir()
	findings = filepath.Join(dir, "findings.jsonl")
	listen = freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: %s, join_window: 0s}
taps:
  - {name: mesh, type: nats, url: %q, subjects: ["e2a.>"]}
outputs:
  findings: {path: %q}
`, listen, idle, url, findings)), 0o644)
	cmd = startProcess(t, cfgPath)
	waitReady(t, listen)
	pollUntil(t, "the tap's subscription", 20*time.Second, func() bool { return subscribed(srv, "e2a.>") })
	return srv, port, url, listen, findings, cmd
}
