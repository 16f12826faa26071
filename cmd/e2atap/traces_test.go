package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// spanCollector is an OTLP/HTTP receiver that keeps the spans whole.
type spanCollector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (c *spanCollector) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range msg.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			c.spans = append(c.spans, ss.GetSpans()...)
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// byKey returns the spans by their stream key (e2a.request_id).
func (c *spanCollector) byKey() map[string]*tracepb.Span {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]*tracepb.Span{}
	for _, s := range c.spans {
		for _, kv := range s.GetAttributes() {
			if kv.GetKey() == "e2a.request_id" {
				m[kv.GetValue().GetStringValue()] = s
			}
		}
	}
	return m
}

func spanAttr(s *tracepb.Span, key string) (string, bool) {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			if v, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_IntValue); ok {
				return fmt.Sprint(v.IntValue), true
			}
			return kv.GetValue().GetStringValue(), true
		}
	}
	return "", false
}

// TestTraceConventionsRun: the real binary wires its taps into the
// Tracer. A ws tap's spans are CLIENT spans naming the agent server it
// relays to (server.address, server.port, network.protocol.name
// websocket); a logdir tap's are INTERNAL with no network attributes; a
// failed stream says the failed record's code in error.type; a call that is
// no agent invocation keeps its method as the span name.
func TestTraceConventionsRun(t *testing.T) {
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	col := &spanCollector{}
	otlp := httptest.NewServer(col)
	t.Cleanup(otlp.Close)

	resp := func(id string, seq int, final bool, status, kind, body string) string {
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":%q,"request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-05-01T12:00:00.000000+00:00","provenance":{"source_protocol":"e2a","converter":null,"converted_at":null,"details":{}},"body":%s}`,
			id, id, seq, final, status, kind, body)
	}
	answers := map[string][]string{
		"r-ok": {resp("r-ok", 0, false, "in_progress", "e2a.chunk", `{"delta_kind":"text","delta":"hi"}`),
			resp("r-ok", 1, true, "succeeded", "e2a.complete", `{"result":{}}`)},
		"r-fail": {resp("r-fail", 0, true, "failed", "e2a.error", `{"code":"E2A.AGENT_ERROR","message":"boom"}`)},
	}
	agent := answeringAgentServer(t, answers)
	_, agentPort, _ := net.SplitHostPort(strings.TrimPrefix(agent.URL, "http://"))

	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	cfg := fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s, idle_timeout: 1m}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %s}
  - {name: agent-logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, wsListen, "ws"+strings.TrimPrefix(agent.URL, "http")+"/agent", filepath.Join(logs, "*.jsonl"),
		filepath.Join(dir, "pos.json"), filepath.Join(dir, "findings.jsonl"), filepath.Join(dir, "records.jsonl"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startE2atap(t, otlpEnv(otlp.URL), "run", "--config", cfgPath)
	waitReady(t, listen)

	gw, _, err := websocket.DefaultDialer.Dial("ws://"+wsListen+"/", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []string{
		`{"request_id":"r-ok","method":"chat.send","session_id":"s-1","is_stream":true,"agent_ref":{"mode":"code","id":"coder"},"params":{"content":"x"}}`,
		`{"request_id":"r-fail","method":"chat.send","session_id":"s-1","params":{"content":"y"}}`,
	} {
		if err := gw.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
			t.Fatal(err)
		}
	}
	gw.SetReadDeadline(time.Now().Add(30 * time.Second))
	for got := 0; got < 3; got++ {
		if _, _, err := gw.ReadMessage(); err != nil {
			t.Fatalf("gateway: %d of 3 responses: %v", got, err)
		}
	}
	gw.Close()
	lines := `{"request_id":"l-1","method":"history.get","session_id":"s-1","params":{}}` + "\n" +
		resp("l-1", 0, true, "succeeded", "e2a.complete", `{"result":{}}`) + "\n"
	if err := os.WriteFile(filepath.Join(logs, "agent.jsonl"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the three streams' spans", 30*time.Second, func() bool {
		m := col.byKey()
		return m["r-ok"] != nil && m["r-fail"] != nil && m["l-1"] != nil
	})
	stopProcess(t, cmd)

	spans := col.byKey()
	type want struct {
		name  string
		kind  tracepb.Span_SpanKind
		code  tracepb.Status_StatusCode
		attrs map[string]string // "" value: must be absent
	}
	for key, w := range map[string]want{
		"r-ok": {"invoke_agent coder", tracepb.Span_SPAN_KIND_CLIENT, tracepb.Status_STATUS_CODE_UNSET, map[string]string{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder", "gen_ai.conversation.id": "s-1",
			"network.protocol.name": "websocket", "server.address": "127.0.0.1", "server.port": agentPort,
			"e2atap.tap": "agent-ws", "e2atap.tap.type": "ws", "e2atap.outcome": "succeeded", "error.type": ""}},
		"r-fail": {"invoke_agent", tracepb.Span_SPAN_KIND_CLIENT, tracepb.Status_STATUS_CODE_ERROR, map[string]string{
			"error.type": "E2A.AGENT_ERROR", "e2atap.outcome": "failed", "server.address": "127.0.0.1"}},
		"l-1": {"history.get", tracepb.Span_SPAN_KIND_INTERNAL, tracepb.Status_STATUS_CODE_UNSET, map[string]string{
			"e2atap.tap": "agent-logs", "e2atap.tap.type": "logdir", "e2a.method": "history.get",
			"gen_ai.operation.name": "", "network.protocol.name": "", "server.address": ""}},
	} {
		s := spans[key]
		if s.GetName() != w.name || s.GetKind() != w.kind || s.GetStatus().GetCode() != w.code {
			t.Errorf("%s: span %q kind %v status %v, want %q %v %v", key, s.GetName(), s.GetKind(), s.GetStatus().GetCode(), w.name, w.kind, w.code)
		}
		for k, v := range w.attrs {
			got, ok := spanAttr(s, k)
			switch {
			case v == "" && ok:
				t.Errorf("%s: %s = %q, want none", key, k, got)
			case v != "" && got != v:
				t.Errorf("%s: %s = %q, want %q", key, k, got, v)
			}
		}
	}
}
