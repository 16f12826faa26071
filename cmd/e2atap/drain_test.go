package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// heldUpstream is an AgentServer that answers each E2A request with the
// first chunk of its stream, and the rest (two chunks and the final) only
// once release is closed.
func heldUpstream(t *testing.T, release <-chan struct{}) string {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex                            // gorilla: one writer at a time (one lock for all connections will do)
	stop := make(chan struct{})                  // the test is over (released or not)
	t.Cleanup(func() { close(stop); wg.Wait() }) // after the server's close (cleanups run last first)
	return requestServer(t, func(c *websocket.Conn, id string, _ []byte) bool {
		msgs := e2aStream(id, 0, 3, false, true)
		mu.Lock()
		err := c.WriteMessage(websocket.TextMessage, []byte(msgs[0]))
		mu.Unlock()
		if err != nil {
			return false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-release:
			case <-stop:
				return
			}
			for _, m := range msgs[1:] {
				mu.Lock()
				err := c.WriteMessage(websocket.TextMessage, []byte(m))
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
		return true
	})
}

// readyzBody is /readyz's status and body.
func readyzBody(listen string) (int, string) {
	resp, err := http.Get("http://" + listen + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDrainRelaysOpenStreamsToTheirEnd: with drain_timeout, SIGTERM does
// not cut the Gateway's connections: the stream open at the signal is
// relayed to its final after it, /readyz says 503 "draining" meanwhile,
// and once the Gateway closes its connection e2atap stops (exit 0) well
// before the drain_timeout, with no finding. A second SIGTERM ends a drain
// at once: what is left gets 1001. Without drain_timeout (before it
// existed, and its default), the connection got 1001 at the signal and the
// stream never reached its end (TestTapCutStreamsAreNoMissingFinal).
func TestDrainRelaysOpenStreamsToTheirEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	release := make(chan struct{})
	upstream := heldUpstream(t, release)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q, drain_timeout: 20s}
outputs:
  findings: {path: %q}
`, listen, wsListen, upstream, findings)), 0o644)

	t.Run("peers close", func(t *testing.T) {
		cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
		waitReady(t, listen)
		c := dialWS(t, wsListen)
		openStream(t, c, "drained", false)
		if n := sumMetric(scrapeQuiet(listen), "e2atap_tap_connections{", `tap="agent-ws"`); n != 1 {
			t.Errorf("e2atap_tap_connections %v, want 1", n)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		pollUntil(t, "the drain to start", 20*time.Second, func() bool {
			return strings.Contains(stderr.String(), `"msg":"draining:`)
		})
		if code, body := readyzBody(listen); code != http.StatusServiceUnavailable || !strings.Contains(body, "draining") {
			t.Errorf("/readyz while draining: %d %q, want 503 draining", code, body)
		}
		// The rest of the stream, sent after the signal, reaches the
		// Gateway: the relay goes on.
		close(release)
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		for seq := 1; seq <= 3; seq++ {
			_, b, err := c.ReadMessage()
			if err != nil || !strings.Contains(string(b), fmt.Sprintf(`"sequence":%d`, seq)) {
				t.Fatalf("record %d of the stream after SIGTERM: %q, %v", seq, b, err)
			}
		}
		// The Gateway closes as it does when it is done: e2atap stops.
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(5*time.Second))
		if code := closedWith(t, c); code != websocket.CloseNormalClosure {
			t.Errorf("the close went back as %d, want the AgentServer's 1000", code)
		}
		c.Close()
		awaitExit(t, cmd)
		if !strings.Contains(stderr.String(), `"msg":"drained: every ws connection was closed by its peers"`) {
			t.Errorf("the drain did not end with the last connection: %s", tail([]byte(stderr.String()), 1500))
		}
		if fs := readFindings(t, findings); len(fs) > 0 {
			t.Errorf("findings %+v, want none: the stream was relayed whole", fs)
		}
	})

	t.Run("second signal", func(t *testing.T) {
		cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
		waitReady(t, listen)
		c := dialWS(t, wsListen)
		openStream(t, c, "second-signal", false)
		cmd.Process.Signal(syscall.SIGTERM)
		pollUntil(t, "the drain to start", 20*time.Second, func() bool {
			return strings.Contains(stderr.String(), `"msg":"draining:`)
		})
		cmd.Process.Signal(syscall.SIGTERM)
		if code := closedWith(t, c); code != websocket.CloseGoingAway {
			t.Errorf("after the second SIGTERM the Gateway got %d, want 1001", code)
		}
		c.Close()
		awaitExit(t, cmd)
		if !strings.Contains(stderr.String(), `"msg":"drain ended by a second signal`) {
			t.Errorf("no log of the drain ended by the second signal: %s", tail([]byte(stderr.String()), 1500))
		}
	})
}

// drain_timeout is checked with the file's line: not negative, and within
// shutdown_timeout (the drain is part of the stop).
func TestDrainTimeoutConfig(t *testing.T) {
	for _, c := range []struct {
		cfg, want string
	}{
		{"taps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: ws://127.0.0.1:2, drain_timeout: 10s}\n", ""},
		{"taps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: ws://127.0.0.1:2, drain_timeout: -1s}\n", "line 2: taps[0] (w): drain_timeout: -1s, want 0"},
		{"shutdown_timeout: 10s\ntaps:\n  - {name: w, type: ws, listen: 127.0.0.1:1, upstream: ws://127.0.0.1:2, drain_timeout: 10s}\n", "line 3: taps[0] (w): drain_timeout 10s must be shorter than shutdown_timeout 10s"},
		{"taps:\n  - {name: l, type: logdir, paths: [/tmp/x/*.jsonl], drain_timeout: 10s}\n", "drain_timeout"},
	} {
		var err error
		if _, probs := parseChecked([]byte(c.cfg), func(string) string { return "" }); len(probs.errors()) > 0 {
			err = probs.errors()
		}
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.cfg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: error %v, want one saying %q", c.cfg, err, c.want)
		}
	}
}
