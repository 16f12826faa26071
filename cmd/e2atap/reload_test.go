package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// echoUpstream is a real WebSocket server that sends every message back;
// it counts the connections it accepted.
func echoUpstream(t *testing.T) (url string, conns *atomic.Int64) {
	t.Helper()
	conns = new(atomic.Int64)
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		conns.Add(1)
		defer c.Close()
		for {
			typ, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			if c.WriteMessage(typ, b) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), conns
}

// dialWS connects a client through the tap, retrying while it starts.
func dialWS(t *testing.T, addr string) *websocket.Conn {
	t.Helper()
	var c *websocket.Conn
	pollUntil(t, "the ws tap at "+addr+" to accept", 20*time.Second, func() bool {
		var err error
		c, _, err = websocket.DefaultDialer.Dial("ws://"+addr+"/", nil)
		return err == nil
	})
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip sends msg and requires it back unchanged (the relay relays).
func roundTrip(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatalf("send %q: %v", msg, err)
	}
	_, b, err := c.ReadMessage()
	if err != nil || string(b) != msg {
		t.Fatalf("relay of %q: got %q, %v", msg, b, err)
	}
}

// nthFinding waits for the n-th finding of rule on the tap agent-ws and
// returns its severity. An undecodable message relayed by the echo
// upstream gives two (one per direction): message k's are 2k-1 and 2k.
func nthFinding(t *testing.T, path, rule string, n int) string {
	t.Helper()
	var sev string
	pollUntil(t, fmt.Sprintf("finding %d of %s", n, rule), 20*time.Second, func() bool {
		b, _ := os.ReadFile(path)
		k := 0
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, `"rule":"`+rule+`"`) && strings.Contains(l, `"tap":"agent-ws"`) {
				k++
				if k == n {
					i := strings.Index(l, `"severity":"`)
					sev = l[i+len(`"severity":"`):]
					sev = sev[:strings.IndexByte(sev, '"')]
					return true
				}
			}
		}
		return false
	})
	return sev
}

// configLoadedAt is /healthz's config_loaded_at.
func configLoadedAt(t *testing.T, listen string) time.Time {
	t.Helper()
	resp, err := http.Get("http://" + listen + "/healthz?format=json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h struct {
		ConfigLoadedAt time.Time `json:"config_loaded_at"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatalf("/healthz: %v", err)
	}
	return h.ConfigLoadedAt
}

func metric(t *testing.T, listen, name string) string {
	t.Helper()
	resp, err := http.Get("http://" + listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+"{") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func reloadConfig(listen, wsListen, upstream, findings, severity string, extraTaps string) string {
	return fmt.Sprintf(`profile: jiuwenswarm
listen: %s
rules: {e2a.decode: %s}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
%soutputs:
  findings: {path: %q}
  log: {path: "-", content: mask}
`, listen, severity, wsListen, upstream, extraTaps, findings)
}

// TestReloadOnSIGHUP: with the real binary and real signals, a SIGHUP that
// changes a rule's severity is applied while a WebSocket connection
// through the ws tap stays up (the upstream sees one connection, the
// finding after it has the new severity); a SIGHUP with an invalid
// configuration is logged with every problem (no secret) and the running
// configuration kept, the relay still relaying; SIGTERM still drains.
func TestReloadOnSIGHUP(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, upConns := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	os.WriteFile(cfgPath, []byte(reloadConfig(listen, wsListen, upstream, findings, "warning", "")), 0o644)

	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	c := dialWS(t, wsListen)
	roundTrip(t, c, "not json 1")
	if sev := nthFinding(t, findings, "e2a.decode", 2); sev != "warning" {
		t.Fatalf("first finding: severity %s, want warning (the configuration)", sev)
	}
	hash1 := metric(t, listen, "e2atap_config_info")
	loaded1 := configLoadedAt(t, listen)

	os.WriteFile(cfgPath, []byte(reloadConfig(listen, wsListen, upstream, findings, "error", "")), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	pollUntil(t, "the reload to be logged", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"msg":"configuration reloaded"`)
	})
	roundTrip(t, c, "not json 2")
	if sev := nthFinding(t, findings, "e2a.decode", 4); sev != "error" {
		t.Fatalf("finding after the reload: severity %s, want error", sev)
	}
	if got := metric(t, listen, "e2atap_config_last_reload_successful"); !strings.HasSuffix(got, " 1") {
		t.Fatalf("after a good reload: %s", got)
	}
	if got := metric(t, listen, "e2atap_config_reloads_total"); !strings.Contains(got, `{result="success"} 1`) || !strings.Contains(got, `{result="failure"} 0`) {
		t.Fatalf("after a good reload: %s", got)
	}
	if hash2 := metric(t, listen, "e2atap_config_info"); hash2 == hash1 || !strings.Contains(hash2, `hash="`) {
		t.Fatalf("e2atap_config_info did not change with the configuration: %q then %q", hash1, hash2)
	}
	// /healthz (and /readyz) say when the running configuration was
	// loaded: the reload's time, not the start's.
	if loaded2 := configLoadedAt(t, listen); !loaded2.After(loaded1) {
		t.Fatalf("/healthz config_loaded_at %v after a reload, and %v before it", loaded2, loaded1)
	}

	// An invalid configuration: two problems and a password.
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: nope
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
  - {name: mesh, type: nats, url: "nats://user:hunter2@", subjects: [a]}
`, listen, wsListen, upstream)), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	pollUntil(t, "the rejection to be logged", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), "configuration rejected")
	})
	log := stderr.String()
	rejected := log[strings.LastIndex(log[:strings.Index(log, "configuration rejected")], "\n")+1:]
	t.Logf("rejection: %s", rejected[:strings.IndexByte(rejected, '\n')])
	if !strings.Contains(log, "profile:") || !strings.Contains(log, "taps[1] (mesh): url") {
		t.Errorf("the rejection does not name every problem:\n%s", log)
	}
	if strings.Contains(log, "hunter2") {
		t.Errorf("the log shows the password:\n%s", log)
	}
	if got := metric(t, listen, "e2atap_config_last_reload_successful"); !strings.HasSuffix(got, " 0") {
		t.Fatalf("after a rejected reload: %s", got)
	}
	if got := metric(t, listen, "e2atap_config_reloads_total"); !strings.Contains(got, `{result="success"} 1`) || !strings.Contains(got, `{result="failure"} 1`) {
		t.Fatalf("after a rejected reload: %s", got)
	}
	roundTrip(t, c, "not json 3") // still relaying, on the same connection
	if sev := nthFinding(t, findings, "e2a.decode", 6); sev != "error" {
		t.Fatalf("finding after a rejected reload: severity %s, want error (the running configuration)", sev)
	}
	if n := upConns.Load(); n != 1 {
		t.Fatalf("the upstream saw %d connections: the client's connection did not stay up across the reloads", n)
	}
	c.Close()
	stopProcess(t, cmd)
}

// TestReloadOnFileChange: without a signal, a configuration file rewritten
// in place, and then one swapped as Kubernetes swaps a mounted ConfigMap
// (a symlink to a new directory), is picked up: a severity change is
// applied, a new ws tap starts and a removed one stops, and the tap whose
// settings did not change keeps its connection.
func TestReloadOnFileChange(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, upConns := echoUpstream(t)
	listen, wsListen, ws2 := freeAddr(t), freeAddr(t), freeAddr(t)
	findings := filepath.Join(dir, "findings.jsonl")
	// The Kubernetes layout: e2atap.yaml → ..data/e2atap.yaml, ..data →
	// a timestamped directory.
	mount := filepath.Join(dir, "config")
	os.MkdirAll(filepath.Join(mount, "v1"), 0o755)
	os.WriteFile(filepath.Join(mount, "v1", "e2atap.yaml"), []byte(reloadConfig(listen, wsListen, upstream, findings, "warning", "")), 0o644)
	os.Symlink("v1", filepath.Join(mount, "..data"))
	cfgPath := filepath.Join(mount, "e2atap.yaml")
	os.Symlink(filepath.Join("..data", "e2atap.yaml"), cfgPath)

	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "200ms")
	c := dialWS(t, wsListen)
	roundTrip(t, c, "not json 1")
	if sev := nthFinding(t, findings, "e2a.decode", 2); sev != "warning" {
		t.Fatalf("first finding: severity %s, want warning", sev)
	}

	// In place: the file behind the link is rewritten; a second tap.
	second := fmt.Sprintf("  - {name: extra-ws, type: ws, listen: %s, upstream: %q}\n", ws2, upstream)
	os.WriteFile(filepath.Join(mount, "v1", "e2atap.yaml"), []byte(reloadConfig(listen, wsListen, upstream, findings, "error", second)), 0o644)
	c2 := dialWS(t, ws2) // the new tap came up
	roundTrip(t, c2, "hello through the new tap")
	c2Closed := make(chan error, 1)
	go func() {
		c2.SetReadDeadline(time.Time{})
		_, _, err := c2.ReadMessage()
		c2Closed <- err
	}()
	roundTrip(t, c, "not json 2")
	if sev := nthFinding(t, findings, "e2a.decode", 4); sev != "error" {
		t.Fatalf("finding after the file changed: severity %s, want error", sev)
	}
	if !strings.Contains(stderr.String(), `"trigger":"file changed"`) {
		t.Fatalf("the reload does not say the file changed")
	}

	// An invalid file is rejected once, not at every poll, and the
	// running configuration (error) kept.
	os.WriteFile(filepath.Join(mount, "v1", "e2atap.yaml"), []byte("profile: [\n"), 0o644)
	pollUntil(t, "the rejection", 20*time.Second, func() bool { return strings.Contains(stderr.String(), "configuration rejected") })
	time.Sleep(time.Second) // five polls
	if n := strings.Count(stderr.String(), "configuration rejected"); n != 1 {
		t.Fatalf("an invalid file was rejected %d times, want once", n)
	}
	roundTrip(t, c, "not json 2b")
	if sev := nthFinding(t, findings, "e2a.decode", 6); sev != "error" {
		t.Fatalf("finding after a rejected file: severity %s, want error (the running configuration)", sev)
	}

	// The file goes away (deleted, unmounted): said once, not at every
	// poll, the running configuration kept; said again when it is back.
	if err := os.Rename(filepath.Join(mount, "v1", "e2atap.yaml"), filepath.Join(mount, "v1", "away.yaml")); err != nil {
		t.Fatal(err)
	}
	const gone, back = "the configuration file cannot be read; running on the one loaded last, and reading it again at every poll", "the configuration file can be read again"
	pollUntil(t, "the missing file to be told", 20*time.Second, func() bool { return len(stderr.lines(gone)) > 0 })
	time.Sleep(600 * time.Millisecond) // three polls more
	if n := len(stderr.lines(gone)); n != 1 {
		t.Fatalf("the missing file was told %d times, want once", n)
	}
	roundTrip(t, c, "relayed while the file is away")
	if sev := nthFinding(t, findings, "e2a.decode", 8); sev != "error" {
		t.Fatalf("finding while the file is away: severity %s, want error (the running configuration)", sev)
	}
	if err := os.Rename(filepath.Join(mount, "v1", "away.yaml"), filepath.Join(mount, "v1", "e2atap.yaml")); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the file to be back", 20*time.Second, func() bool { return len(stderr.lines(back)) == 1 })

	// The ConfigMap way: a new directory, the ..data link swapped
	// atomically; the second tap is gone again.
	os.MkdirAll(filepath.Join(mount, "v2"), 0o755)
	os.WriteFile(filepath.Join(mount, "v2", "e2atap.yaml"), []byte(reloadConfig(listen, wsListen, upstream, findings, "warning", "")), 0o644)
	os.Symlink("v2", filepath.Join(mount, "..data_tmp"))
	if err := os.Rename(filepath.Join(mount, "..data_tmp"), filepath.Join(mount, "..data")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c2Closed:
		if !websocket.IsCloseError(err, websocket.CloseGoingAway) {
			t.Fatalf("the removed tap's connection ended with %v, want a close 1001 (going away)", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the removed tap did not stop")
	}
	roundTrip(t, c, "not json 3")
	if sev := nthFinding(t, findings, "e2a.decode", 10); sev != "warning" {
		t.Fatalf("finding after the ConfigMap swap: severity %s, want warning", sev)
	}
	if n := upConns.Load(); n != 2 {
		t.Fatalf("the upstream saw %d connections, want 2 (one per tap): the unchanged tap's connection did not stay up", n)
	}
	c.Close()
	stopProcess(t, cmd)
}

// TestReloadWaitsForAFileWrittenInPlace: a configuration file rewritten
// in place (truncated, then written in two parts with a pause, as an
// editor or `cat >` over a slow pipe does) was read by the poll between
// the parts: its first part, valid YAML with one tap fewer, was applied at
// once and stopped that tap, cutting off its Gateway (close 1001) until
// the next poll put it back. A changed content is now applied once it has
// held still for reloadSettle: the tap keeps its connection and the whole
// file is applied, once.
func TestReloadWaitsForAFileWrittenInPlace(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen, ws2 := freeAddr(t), freeAddr(t), freeAddr(t)
	findings := filepath.Join(dir, "findings.jsonl")
	second := fmt.Sprintf("  - {name: extra-ws, type: ws, listen: %s, upstream: %q}\n", ws2, upstream)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(reloadConfig(listen, wsListen, upstream, findings, "warning", second)), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "50ms")
	c := dialWS(t, wsListen)
	c2 := dialWS(t, ws2)
	roundTrip(t, c2, "through the second tap")

	next := reloadConfig(listen, wsListen, upstream, findings, "error", second)
	cut := strings.Index(next, "  - {name: extra-ws") // the first part: valid YAML, one tap
	f, err := os.OpenFile(cfgPath, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(next[:cut])
	start := time.Now()
	time.Sleep(300 * time.Millisecond) // six polls
	f.WriteString(next[cut:])
	paused := time.Since(start)
	f.Close()
	if paused > reloadSettle*8/10 {
		t.Skipf("the writer paused %v on a loaded machine, near reloadSettle (%v): this run cannot tell", paused, reloadSettle)
	}

	// The whole file is applied, once; its first part never was.
	pollUntil(t, "the whole file to be applied", 20*time.Second, func() bool {
		l := stderr.lines("configuration reloaded")
		return len(l) > 0 && l[len(l)-1]["taps"] == 2.0
	})
	for _, l := range stderr.lines("configuration reloaded") {
		if l["taps"] != 2.0 {
			t.Errorf("a reload applied %v taps, want 2 (the file's first part was applied)", l["taps"])
		}
	}
	if n := len(stderr.lines("configuration reloaded")); n != 1 {
		t.Errorf("%d reloads, want 1", n)
	}
	if strings.Contains(stderr.String(), "configuration rejected") {
		t.Error("a part of the file was rejected")
	}
	roundTrip(t, c2, "the second tap's Gateway, on the connection it had before")
	roundTrip(t, c, "not json")
	if sev := nthFinding(t, findings, "e2a.decode", 2); sev != "error" {
		t.Fatalf("finding after the reload: severity %s, want error", sev)
	}
	c.Close()
	c2.Close()
	stopProcess(t, cmd)
}

// TestReloadReopensOutputs: a reload that moves the findings and record
// logs writes what is judged after it to the new files, leaves the old
// ones whole, and leaves a tap whose settings did not change running.
func TestReloadReopensOutputs(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	src := filepath.Join(logs, "a.jsonl")
	os.WriteFile(src, nil, 0o644)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	write := func(n int) {
		os.WriteFile(cfgPath, []byte(fmt.Sprintf(`listen: 127.0.0.1:0
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "positions.json"), filepath.Join(dir, fmt.Sprintf("findings%d.jsonl", n)), filepath.Join(dir, fmt.Sprintf("records%d.jsonl", n)))), 0o644)
	}
	write(1)
	cfg, err := LoadConfig(cfgPath, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sc, err := newSidecar(context.Background(), cfg, logger, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(cfgPath)
	sc.watchConfig(cfgPath, configHash(raw), nil, 0) // reloaded by hand, from this goroutine only
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("sidecar stopped with: %v", err)
		}
	}
	defer cancel()
	pollUntil(t, "the tap to start", 20*time.Second, func() bool { _, ok := sc.ready.Load("logs"); return ok })
	appendLine := func(s string) {
		f, _ := os.OpenFile(src, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(s + "\n")
		f.Close()
	}
	// A leaked credential: masked with a fingerprint (the process's random
	// key: none is configured), which joins across the reload.
	const leak = `{"jsonrpc":"2.0","id":"r1","method":"chat.send","params":{"request_id":"r1","authorization":"Bearer tok-abcdefghijklmnopqrstuvwxyz0123"}}`
	appendLine(leak)
	pollUntil(t, "the first finding", 20*time.Second, func() bool { return fileLines(filepath.Join(dir, "findings1.jsonl")) == 1 })
	taps := sc.tapList()

	write(2)
	sc.reload(context.Background(), "test", nil)
	if sc.cfgHash == "" || sc.badHash != "" {
		t.Fatalf("reload not applied: hash %q, rejected %q", sc.cfgHash, sc.badHash)
	}
	if after := sc.tapList(); len(after) != 1 || after[0] != taps[0] {
		t.Fatal("the unchanged tap was restarted")
	}
	appendLine(strings.ReplaceAll(leak, "r1", "r2"))
	pollUntil(t, "the second finding in the new file", 20*time.Second, func() bool { return fileLines(filepath.Join(dir, "findings2.jsonl")) == 1 })
	pollUntil(t, "the second record in the new log", 20*time.Second, func() bool { return fileLines(filepath.Join(dir, "records2.jsonl")) == 1 })
	stop()
	if n := fileLines(filepath.Join(dir, "findings1.jsonl")); n != 1 {
		t.Fatalf("the old findings log has %d lines, want 1", n)
	}
	if n := wholeLines(t, filepath.Join(dir, "records1.jsonl")); n != 1 {
		t.Fatalf("the old record log has %d lines, want 1", n)
	}
	fp := func(path string) string {
		b, _ := os.ReadFile(path)
		i := strings.Index(string(b), "(fp:")
		if i < 0 {
			t.Fatalf("no fingerprint in %s: %s", filepath.Base(path), b)
		}
		return string(b[i : i+13])
	}
	if a, b := fp(filepath.Join(dir, "records1.jsonl")), fp(filepath.Join(dir, "records2.jsonl")); a != b {
		t.Fatalf("the credential's fingerprint changed at the reload (%s, then %s): logs no longer join", a, b)
	}
}
