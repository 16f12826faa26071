package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// findingSink collects findings for the tests.
type findingSink struct {
	mu sync.Mutex
	fs []validate.Finding
}

func (c *findingSink) Record(*validate.RecordInfo)      {}
func (c *findingSink) StreamStart(*validate.StreamInfo) {}
func (c *findingSink) StreamEnd(*validate.StreamInfo)   {}
func (c *findingSink) Finding(f *validate.Finding) {
	c.mu.Lock()
	c.fs = append(c.fs, *f)
	c.mu.Unlock()
}

func (c *findingSink) keys() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, f := range c.fs {
		out = append(out, f.Rule+" "+f.Stream)
	}
	sort.Strings(out)
	return out
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func pollUntil(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startSidecar runs the sidecar of cfg until the test ends (or stop).
func startSidecar(t *testing.T, cfg Config, extra ...validate.Sink) (sc *sidecar, stop func()) {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	sc, err := newSidecar(ctx, cfg, logger, io.Discard, extra...)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sc.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("sidecar stopped with: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return sc, stop
}

// python returns an interpreter with the websockets module (Debian's
// python3-websockets), or skips (fails under E2ATAP_REQUIRE_PACKAGES=1).
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import websockets").Run() == nil {
			return p
		}
	}
	msg := "python3-websockets is not installed (Debian package python3-websockets): no reference peers"
	if os.Getenv("E2ATAP_REQUIRE_PACKAGES") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// TestRunPythonPeersMatchValidate: a real python-websockets AgentServer
// and Gateway (permessage-deflate negotiated) talk through the sidecar's
// WebSocket tap. Every message arrives byte-identical, and the live
// findings equal those of `e2atap validate` on the same traffic.
func TestRunPythonPeersMatchValidate(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var lines []string
	for _, f := range []string{"../../testdata/faulty.jsonl", "../../testdata/clean.jsonl", "testdata/generated-clean.jsonl"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, strings.Split(strings.TrimSpace(string(b)), "\n")...)
	}
	capture := filepath.Join(dir, "capture.jsonl")
	os.WriteFile(capture, []byte(strings.Join(lines, "\n")+"\n"), 0o644)

	server := exec.Command(py, "testdata/agentserver.py", capture)
	out, _ := server.StdoutPipe()
	server.Stderr = os.Stderr
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	var port string
	if _, err := fmt.Fscanf(bufio.NewReader(out), "PORT %s\n", &port); err != nil {
		t.Fatalf("agentserver.py did not start: %v", err)
	}

	wsAddr := freeAddr(t)
	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Streams.JoinWindow = 0
	cfg.Outputs.Findings.Path = ""
	cfg.Taps = []TapConfig{{Name: "agent-ws", Type: "ws", Listen: wsAddr, Upstream: "ws://127.0.0.1:" + port}}
	live := &findingSink{}
	_, stop := startSidecar(t, cfg, live)

	received := filepath.Join(dir, "received.jsonl")
	gw := exec.Command(py, "testdata/gateway.py", "ws://"+wsAddr+"/", received)
	gw.Stderr = os.Stderr
	res, err := gw.Output()
	if err != nil {
		t.Fatalf("gateway.py: %v", err)
	}
	if !strings.Contains(string(res), "permessage-deflate") {
		t.Errorf("permessage-deflate not negotiated through the tap: %s", res)
	}
	got, _ := os.ReadFile(received)
	want := `{"type":"event","event":"connection.ack","payload":{"status":"ready"}}` + "\n" + strings.Join(lines, "\n") + "\n"
	if string(got) != want {
		t.Fatalf("the Gateway received other bytes than the AgentServer sent (%d vs %d bytes)", len(got), len(want))
	}
	// The connection closed: its open streams ended (missing_final).
	offline := &findingSink{}
	vc := validate.DefaultConfig()
	vc.IdleTimeout = 0
	e := validate.NewEngine(vc, offline)
	f, _ := os.Open(capture)
	validate.Read(f, "capture", validate.FormatJSONL, validate.ReadOptions{}, e)
	f.Close()
	e.Finish(validate.ReasonEOF, &validate.Input{})
	wantKeys := offline.keys()
	if len(wantKeys) == 0 {
		t.Fatal("the capture has no fault: the test proves nothing")
	}
	pollUntil(t, "live findings", 10*time.Second, func() bool { return len(live.keys()) >= len(wantKeys) })
	stop()
	if g, w := strings.Join(live.keys(), "\n"), strings.Join(wantKeys, "\n"); g != w {
		t.Errorf("live findings differ from validate's\nlive:\n%s\nvalidate:\n%s", g, w)
	}
}

// TestRunSecretsNeverLeak plants credentials in every place a record can
// carry them and checks that none reaches any output: the redacted log, the
// findings log, the metrics, the spans. Equal secrets get equal
// fingerprints.
func TestRunSecretsNeverLeak(t *testing.T) {
	secrets := map[string]string{
		"bearer":  "tok-bearer-9f8e7d6c5b4a39281706",
		"sk":      "sk-live0123456789abcdefXYZ",
		"ghp":     "ghp_0123456789abcdefghijABCDEFGHIJ",
		"glpat":   "glpat-0123456789abcdefghij",
		"jwt":     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJsZWFrIn0.c2lnbmF0dXJlLWxlYWs",
		"apikey":  "ak-3141592653589793",
		"pass":    "hunter2-correct-horse",
		"cookie":  "sessionid=abcdef0123456789",
		"email":   "alice.secret@example.com",
		"xheader": "xh-2718281828459045",
	}
	resp := func(id string, seq int, final bool, body string, extra string) string {
		kind, status := "e2a.chunk", "in_progress"
		if final {
			kind, status = "e2a.complete", "succeeded"
		}
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":%q,"request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":%s%s}`,
			id, id, seq, final, status, kind, body, extra)
	}
	lines := []string{
		`{"protocol_version":"1.0","request_id":"s1","session_id":"sess","method":"chat.send","params":{"query":"mail ` + secrets["email"] + `","_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},"auth":{"bearer_token":"` + secrets["bearer"] + `","api_key_ref":"vault://k","extra_headers":{"X-Api-Key":"` + secrets["xheader"] + `"}},"channel_context":{"authorization":"Bearer ` + secrets["bearer"] + `","cookie":"` + secrets["cookie"] + `"},"timestamp":"2026-03-29T12:00:00Z","identity_origin":"user"}`,
		resp("s1", 0, false, `{"delta_kind":"text","delta":"key `+secrets["sk"]+` and `+secrets["jwt"]+`"}`, `,"metadata":{"_e2a_wire_legacy_agent_chunk":{"payload":{"token":"`+secrets["ghp"]+`"}}}`),
		resp("s1", 1, false, `{"delta_kind":"custom","delta":{"password":"`+secrets["pass"]+`","api_key":"`+secrets["apikey"]+`"}}`, ""),
		resp("s1", 3, true, `{"result":{"content":"`+secrets["glpat"]+` Bearer `+secrets["bearer"]+`"}}`, ""),
	}
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)

	var spans bytes.Buffer
	var spanMu sync.Mutex
	otlp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		spanMu.Lock()
		spans.Write(b)
		spanMu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer otlp.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", otlp.URL+"/v1/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")

	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Streams.JoinWindow = 0
	cfg.Outputs.Findings.Path = filepath.Join(dir, "findings.jsonl")
	cfg.Outputs.Log.Path = filepath.Join(dir, "records.jsonl")
	cfg.Outputs.Log.FingerprintKey = []byte("test-fingerprint-key-0123")
	cfg.Taps = []TapConfig{{Name: "agent-logs", Type: "logdir", Paths: []string{filepath.Join(logs, "*.jsonl")}, Positions: filepath.Join(dir, "pos.json")}}
	live := &findingSink{}
	_, stop := startSidecar(t, cfg, live)
	os.WriteFile(filepath.Join(logs, "a.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	pollUntil(t, "findings", 10*time.Second, func() bool {
		for _, k := range live.keys() {
			if strings.HasPrefix(k, "e2a.seq_gap") {
				return true
			}
		}
		return false
	})
	resp2, err := http.Get("http://" + cfg.Listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsBody, _ := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	stop() // flushes the logs and the spans

	recs, _ := os.ReadFile(cfg.Outputs.Log.Path)
	finds, _ := os.ReadFile(cfg.Outputs.Findings.Path)
	spanMu.Lock()
	spanBytes := append([]byte(nil), spans.Bytes()...)
	spanMu.Unlock()
	if len(recs) == 0 || len(finds) == 0 || len(metricsBody) == 0 || len(spanBytes) == 0 {
		t.Fatalf("an output is empty: records %d, findings %d, metrics %d, spans %d bytes", len(recs), len(finds), len(metricsBody), len(spanBytes))
	}
	if !bytes.Contains(spanBytes, []byte("chat.send")) || !strings.Contains(string(finds), "e2a.secret") {
		t.Fatalf("the outputs do not show the stream (span chat.send) or the e2a.secret finding")
	}
	for what, out := range map[string][]byte{"records log": recs, "findings log": finds, "metrics": metricsBody, "spans": spanBytes} {
		for name, s := range secrets {
			if bytes.Contains(out, []byte(s)) {
				t.Errorf("secret %s appears in the %s", name, what)
			}
		}
	}
	// Equal secrets, equal fingerprints: the bearer token appears in
	// auth.bearer_token and in an Authorization header (its copy in a
	// result is model output, masked whole with its length).
	fps := map[string]int{}
	for _, l := range strings.Split(string(recs), "\n") {
		for _, part := range strings.Split(l, "(fp:")[1:] {
			if len(part) >= 8 {
				fps[part[:8]]++
			}
		}
	}
	maxSame := 0
	for _, n := range fps {
		maxSame = max(maxSame, n)
	}
	if maxSame < 2 {
		t.Errorf("the bearer token planted twice does not share one fingerprint: %v", fps)
	}
	var n int
	for _, l := range strings.Split(strings.TrimSpace(string(recs)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("records log line is not JSON: %v", err)
		}
		n++
	}
	if n != len(lines) {
		t.Errorf("%d lines in the records log, want %d", n, len(lines))
	}
}
