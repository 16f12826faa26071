package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap/taptest"
	"github.com/gorilla/websocket"
)

// lockedBuffer collects a process's stderr while the test reads it.
type lockedBuffer struct{ taptest.LockedBuffer }

// proc is this test binary running as `e2atap run`, with its log.
type proc struct {
	cmd    *exec.Cmd
	log    *lockedBuffer
	addr   string // /metrics, /healthz, /readyz
	exited chan error
}

func startLogged(t *testing.T, cfgPath, addr string, extraEnv ...string) *proc {
	t.Helper()
	p := &proc{log: &lockedBuffer{}, addr: addr, exited: make(chan error, 1)}
	p.cmd = exec.Command(os.Args[0], "run", "--config", cfgPath, "--log-level", "info")
	p.cmd.Env = append(append(os.Environ(), "E2ATAP_BE_MAIN=1"), extraEnv...)
	p.cmd.Stderr = p.log
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.exited <- p.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("e2atap stderr:\n%s", p.log.String())
		}
	})
	return p
}

// alive fails the test if the process has exited.
func (p *proc) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.exited:
		p.exited <- err
		t.Fatalf("e2atap exited (%v): one tap's failure stopped the process", err)
	default:
	}
}

// stop sends SIGTERM and requires exit 0.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		p.exited <- err
		if err != nil {
			t.Fatalf("e2atap did not exit 0 on SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("e2atap did not stop within 20s of SIGTERM")
	}
}

func (p *proc) get(t *testing.T, path string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + p.addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sample reads one sample of the exposition ("" when absent).
func (p *proc) sample(t *testing.T, series string) string {
	t.Helper()
	code, body := p.get(t, "/metrics")
	if code != http.StatusOK {
		return ""
	}
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, series+" ") {
			return strings.TrimSpace(strings.TrimPrefix(line, series))
		}
	}
	return ""
}

// logLines are the JSON log lines whose msg is msg and whose tap is tap.
func (p *proc) logLines(t *testing.T, msg, tap string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(p.log.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == msg && (tap == "" || rec["tap"] == tap) {
			out = append(out, rec)
		}
	}
	return out
}

// relayRoundTrip sends n messages through the ws tap and requires each
// echo back byte-identical.
func relayRoundTrip(t *testing.T, wsAddr string, n int) {
	t.Helper()
	var c *websocket.Conn
	var err error
	deadline := time.Now().Add(15 * time.Second)
	for {
		c, _, err = websocket.DefaultDialer.Dial("ws://"+wsAddr+"/agent", nil)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("dial through the ws tap: %v", err)
	}
	defer c.Close()
	for i := 0; i < n; i++ {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":"chat.send","params":{"request_id":"r%d","content":"%s"}}`, i, i, strings.Repeat("x", i*37))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatalf("write through the tap: %v", err)
		}
		typ, got, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("read through the tap: %v", err)
		}
		if typ != websocket.TextMessage || string(got) != msg {
			t.Fatalf("message %d came back changed: %q", i, got)
		}
	}
}

// TestTapFailureIsolated (issue 8 c, process side): taps that cannot start
// (a logdir tap whose positions file cannot be read, one whose positions
// file is garbage) and a nats tap with no broker run beside a ws tap. The
// process keeps running, the ws tap relays byte-identical, /readyz is 200,
// the failed tap is down and counted in /metrics, described in /healthz,
// logged once when it starts failing (naming the tap, with the error) and
// once when it recovers after the cause is fixed.
func TestTapFailureIsolated(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upURL, _ := echoUpstream(t)
	addr, wsAddr := freeAddr(t), freeAddr(t)
	os.MkdirAll(filepath.Join(dir, "logs"), 0o755)
	os.WriteFile(filepath.Join(dir, "logs", "a.jsonl"), []byte(`{"x":1}`+"\n"), 0o644)
	// The positions file of "stuck" is under a regular file: unreadable
	// (ENOTDIR) until the test turns that file into a directory.
	blocker := filepath.Join(dir, "state")
	os.WriteFile(blocker, []byte("not a directory"), 0o644)
	corrupt := filepath.Join(dir, "corrupt-positions.json")
	os.WriteFile(corrupt, []byte("\x00garbage{"), 0o644)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
  - {name: stuck, type: logdir, paths: [%q], positions: %q}
  - {name: corrupt, type: logdir, paths: [%q], positions: %q}
  - {name: mesh, type: nats, url: "nats://e2atap:hunter2@%s", subjects: ["agent.>"]}
outputs:
  findings: {path: %q}
`, addr, wsAddr, upURL,
		filepath.Join(dir, "logs", "*.jsonl"), filepath.Join(blocker, "positions.json"),
		filepath.Join(dir, "logs", "*.jsonl"), corrupt,
		freeAddr(t), filepath.Join(dir, "findings.jsonl"))), 0o644)

	p := startLogged(t, cfgPath, addr)
	// The logdir tap retries an unreadable positions file itself (it never
	// returns from Run for what it can retry): down, counted, logged once.
	pollUntil(t, "the tap stuck to count its positions errors", 20*time.Second, func() bool {
		p.alive(t)
		n, _ := strconv.ParseFloat(p.sample(t, `e2atap_tap_errors_total{reason="positions",tap="stuck"}`), 64)
		return n >= 2 // failed at start and at its first retry
	})
	p.alive(t)
	relayRoundTrip(t, wsAddr, 20)
	if code, body := p.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz %d %q with a failed logdir tap and no NATS broker; want 200 (readiness is the ws listeners)", code, body)
	}
	if v := p.sample(t, `e2atap_tap_up{tap="stuck"}`); v != "0" {
		t.Errorf(`e2atap_tap_up{tap="stuck"} = %q, want 0`, v)
	}
	if v := p.sample(t, `e2atap_tap_up{tap="agent-ws"}`); v == "" {
		t.Error("no e2atap_tap_up for the ws tap")
	}
	code, body := p.get(t, "/healthz")
	if code != http.StatusOK || !regexp.MustCompile(`tap stuck \(logdir\): \w+; up=false`).MatchString(body) {
		t.Errorf("/healthz %d does not say the tap stuck is down:\n%s", code, body)
	}
	if !strings.Contains(body, "tap mesh (nats): ") || !strings.Contains(body, "upstream_up=false") {
		t.Errorf("/healthz does not say the nats tap's broker is down:\n%s", body)
	}
	if strings.Contains(body+p.log.String(), "hunter2") {
		t.Error("a password of a tap URL is in /healthz or the log")
	}
	failed := p.logLines(t, "reading positions failing; retrying", "stuck")
	if len(failed) != 1 {
		t.Errorf("%d 'failing' log lines for tap stuck after 2 failures; want exactly 1 (rate-limited)", len(failed))
	} else if err, _ := failed[0]["err"].(string); !strings.Contains(err, "not a directory") {
		t.Errorf("the failure log does not carry the error: %v", failed[0])
	}

	// The cause fixed, the tap comes back by itself.
	os.Remove(blocker)
	os.Mkdir(blocker, 0o755)
	pollUntil(t, "the tap stuck to recover", 60*time.Second, func() bool {
		p.alive(t)
		return p.sample(t, `e2atap_tap_up{tap="stuck"}`) == "1"
	})
	pollUntil(t, "the recovery to be logged", 10*time.Second, func() bool {
		return len(p.logLines(t, "reading positions works again", "stuck")) == 1
	})
	if n := len(p.logLines(t, "reading positions failing; retrying", "stuck")); n != 1 {
		t.Errorf("%d 'failing' log lines for tap stuck; want 1", n)
	}
	_, body = p.get(t, "/healthz")
	if !strings.Contains(body, "tap stuck (logdir): ok") {
		t.Errorf("/healthz after recovery:\n%s", body)
	}
	relayRoundTrip(t, wsAddr, 5)
	p.stop(t)
	if testing.Verbose() {
		t.Logf("e2atap's log:\n%s", p.log.String())
	}
}

// TestReadinessIgnoresUpstreams (issue 8 a): the ws tap's upstream is
// down (a client's dial through the tap fails) and the NATS broker is
// absent: /readyz stays 200, and /healthz (text and JSON) says why the
// taps are not healthy. A ws tap whose listen port is taken is the one
// thing that makes the sidecar not ready.
func TestReadinessIgnoresUpstreams(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	addr, wsAddr, deadUpstream := freeAddr(t), freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: "ws://%s"}
  - {name: mesh, type: nats, url: "nats://%s", subjects: ["agent.>"]}
outputs:
  findings: {path: "-"}
`, addr, wsAddr, deadUpstream, freeAddr(t))), 0o644)
	p := startLogged(t, cfgPath, addr)
	pollUntil(t, "/readyz to answer", 20*time.Second, func() bool {
		p.alive(t)
		code, _ := p.get(t, "/readyz")
		return code != 0
	})
	// A client comes and its upstream dial fails.
	for i := 0; i < 3; i++ {
		c, _, err := websocket.DefaultDialer.Dial("ws://"+wsAddr+"/agent", nil)
		if err == nil {
			// The tap may accept and close (1014) instead of refusing.
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			if _, _, err := c.ReadMessage(); err == nil {
				t.Fatal("a message came from a dead upstream")
			}
			c.Close()
		}
	}
	// Readiness must hold for a while, not only once.
	for i := 0; i < 10; i++ {
		if code, body := p.get(t, "/readyz"); code != http.StatusOK {
			t.Fatalf("/readyz %d %q with the ws upstream and the NATS broker down; want 200", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	code, body := p.get(t, "/healthz")
	if code != http.StatusOK {
		t.Fatalf("/healthz %d, want 200 while the process runs", code)
	}
	if !strings.Contains(body, "tap mesh (nats): upstream_down; up=true upstream_up=false") ||
		!strings.Contains(body, "tap agent-ws (ws): ") || !strings.Contains(body, "upstream_up=false") {
		t.Errorf("/healthz does not say the upstreams are down:\n%s", body)
	}
	code, body = p.get(t, "/healthz?format=json")
	var h health
	if err := json.Unmarshal([]byte(body), &h); err != nil || code != http.StatusOK {
		t.Fatalf("/healthz?format=json %d: %v\n%s", code, err, body)
	}
	if h.Status != "ok" || !h.Ready || len(h.Taps) != 2 || h.Budget.LimitBytes <= 0 {
		t.Errorf("/healthz JSON: %+v", h)
	}
	for _, tp := range h.Taps {
		if tp.UpstreamUp == nil || *tp.UpstreamUp {
			t.Errorf("/healthz JSON: tap %s upstream_up %v, want false", tp.Name, tp.UpstreamUp)
		}
	}
	p.stop(t)

	// The listen port of the ws tap is taken: the tap cannot accept, the
	// sidecar is not ready (and says so), the rest runs, and readiness
	// comes once the port is free.
	hold, err := netListen(wsAddr)
	if err != nil {
		t.Fatal(err)
	}
	// This run also has GOMEMLIMIT set: the budget is a quarter of it.
	p = startLogged(t, cfgPath, addr, "GOMEMLIMIT=400MiB")
	pollUntil(t, "/readyz 503 for a ws tap that cannot listen", 20*time.Second, func() bool {
		p.alive(t)
		code, body := p.get(t, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "agent-ws")
	})
	if v := p.sample(t, "e2atap_budget_bytes"); v != "1.048576e+08" {
		t.Errorf("e2atap_budget_bytes %q under GOMEMLIMIT=400MiB, want 100 MiB", v)
	}
	if l := p.logLines(t, "memory budget", ""); len(l) != 1 || l[0]["source"] != "1/4 of GOMEMLIMIT" || l[0]["go_memory_limit_source"] != "GOMEMLIMIT" {
		t.Errorf("the start log does not say where the budget came from: %v", l)
	} else if os.Getenv("GOGC") == "" && (l[0]["gc_heap_floor_bytes"] != float64(gcFloor) || l[0]["gc_source"] != "e2atap run's default (GOGC not set): GOGC 100 with a heap floor") {
		// Under the memory limit, the collector's pace is run's own.
		t.Errorf("the start log does not say the collector's heap floor (%d): %v", gcFloor, l)
	}
	if code, _ := p.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz %d with a ws tap down, want 200 (the process is alive)", code)
	}
	hold.Close()
	pollUntil(t, "/readyz 200 once the port is free", 60*time.Second, func() bool {
		p.alive(t)
		code, _ := p.get(t, "/readyz")
		return code == http.StatusOK
	})
	p.stop(t)

	// SIGTERM while a tap waits for its next retry: a clean, prompt exit.
	if hold, err = netListen(wsAddr); err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	p = startLogged(t, cfgPath, addr)
	pollUntil(t, "the ws tap to fail", 20*time.Second, func() bool {
		p.alive(t)
		return len(p.logLines(t, "tap failed; it is down and will be retried", "agent-ws")) == 1
	})
	start := time.Now()
	p.stop(t)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("SIGTERM with a tap in backoff took %s", d)
	}
}

func netListen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }
