package traces

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

// testTaps are the taps of the conventions test, one of each type.
func testTaps(name string) (Tap, bool) {
	switch name {
	case "agent-ws":
		return Tap{Type: "ws", Upstream: "wss://agent.internal/e2a"}, true
	case "bus":
		return Tap{Type: "nats"}, true
	case "mesh":
		return Tap{Type: "kafka"}, true
	case "logs":
		return Tap{Type: "logdir"}, true
	}
	return Tap{}, false
}

// frameRecord describes an EventMesh frame as the engine would.
func frameRecord(t *testing.T, tap, key string, at time.Time, req frame.StreamRequest) *validate.RecordInfo {
	t.Helper()
	b, err := frame.AppendStreamRequest(nil, &req)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := frame.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return &validate.RecordInfo{In: &validate.Input{Tap: tap, Time: at, Data: b}, Protocol: validate.ProtoEventMesh,
		Kind: "stream_req", Frame: &f, Stream: []byte(key)}
}

// TestSpanConventions plays one stream per case and checks the span's
// name, kind, status and attributes against the mapping of docs/traces.md.
// Every attribute of the span is compared: one the mapping does not name
// fails the case.
func TestSpanConventions(t *testing.T) {
	type want struct {
		name   string
		kind   tracepb.Span_SpanKind
		status tracepb.Status_StatusCode
		attrs  map[string]string
	}
	// The attributes every E2A case has, for a stream of 3 records.
	common := func(tap, typ, outcome, reason, errors string, extra map[string]string) map[string]string {
		m := map[string]string{"e2atap.outcome": outcome, "e2atap.reason": reason, "e2atap.records": "3",
			"e2atap.heartbeats": "0", "e2atap.errors": errors, "e2atap.tap": tap, "e2atap.protocol": "e2a"}
		if typ != "" {
			m["e2atap.tap.type"] = typ
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	const (
		chunk = `{"protocol_version":"1.0","request_id":"r","response_id":"r","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","body":{"delta_kind":"text","delta":"hi"}}`
		final = `{"protocol_version":"1.0","request_id":"r","response_id":"r","sequence":1,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","body":{"result":{}}}`
	)
	failed := func(code string) string {
		return `{"protocol_version":"1.0","request_id":"r","response_id":"r","sequence":1,"is_final":true,"status":"failed","response_kind":"e2a.error","body":{` + code + `"message":"no"}}`
	}
	cases := []struct {
		name     string
		tap      string
		request  string               // JSON request, "" for none
		frameReq *frame.StreamRequest // or an EventMesh STREAM_REQ
		records  []string             // responses
		findings []validate.Finding
		outcome  validate.Outcome
		reason   string
		want     want
	}{{
		name: "chat stream relayed by a ws tap", tap: "agent-ws",
		request: `{"request_id":"r","method":"chat.send","session_id":"s1","channel":"web","is_stream":true,
			"agent_ref":{"mode":"code","id":"coder"},"agent_id":"a-1","params":{"content":"x"}}`,
		records: []string{chunk, final},
		want: want{name: "invoke_agent coder", kind: tracepb.Span_SPAN_KIND_CLIENT,
			attrs: common("agent-ws", "ws", "succeeded", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "coder", "gen_ai.agent.id": "a-1",
				"gen_ai.conversation.id": "s1", "gen_ai.request.stream": "true", "gen_ai.response.id": "r",
				"gen_ai.response.time_to_first_chunk": "0.1",
				"network.protocol.name":               "websocket", "server.address": "agent.internal", "server.port": "443",
				"e2a.request_id": "r", "e2a.method": "chat.send", "e2a.channel": "web"})},
	}, {
		name: "agent id from source_agent_id, unary call on a nats tap", tap: "bus",
		request: `{"request_id":"r","method":"chat.send","is_stream":false,"source_agent_id":"planner","params":{}}`,
		records: []string{chunk, final},
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL,
			attrs: common("bus", "nats", "succeeded", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.id": "planner", "gen_ai.request.stream": "false",
				"gen_ai.response.id": "r", "gen_ai.response.time_to_first_chunk": "0.1",
				"network.protocol.name": "nats", "e2a.request_id": "r", "e2a.method": "chat.send"})},
	}, {
		name: "a call that is no agent invocation keeps its method as the name", tap: "logs",
		request: `{"request_id":"r","method":"history.get","session_id":"s1","params":{}}`,
		records: []string{final},
		want: want{name: "history.get", kind: tracepb.Span_SPAN_KIND_INTERNAL,
			attrs: common("logs", "logdir", "succeeded", "final", "0", map[string]string{
				"gen_ai.conversation.id": "s1", "gen_ai.response.id": "r",
				"e2a.request_id": "r", "e2a.method": "history.get"})},
	}, {
		name: "A2A projection", tap: "mesh",
		request: `{"protocol_version":"1.0","provenance":{"source_protocol":"a2a","converter":"x","details":{"kind":"a2a_send_message","abstract_operation":"SendMessage"}},
			"request_id":"r","task_id":"task-9","context_id":"ctx-3","session_id":null,"method":"session/prompt","params":{"message":{}}}`,
		records: []string{`{"protocol_version":"1.0","request_id":"r","response_id":"resp-1","sequence":0,"is_final":false,"status":"in_progress","response_kind":"a2a.stream_event","body":{"branch":"status_update","payload":{}}}`, final},
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL,
			attrs: common("mesh", "kafka", "succeeded", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.conversation.id": "ctx-3", "gen_ai.response.id": "resp-1",
				"gen_ai.response.time_to_first_chunk": "0.1",
				"a2a.method.name":                     "SendMessage", "a2a.task.id": "task-9", "e2a.source_protocol": "a2a",
				"network.protocol.name": "kafka", "e2a.request_id": "r", "e2a.method": "session/prompt"})},
	}, {
		name: "failed stream: error.type is the failed record's code", tap: "agent-ws",
		request: `{"request_id":"r","method":"chat.send","params":{}}`,
		records: []string{chunk, failed(`"code":"chat.error",`)}, outcome: validate.OutcomeFailed,
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_CLIENT, status: tracepb.Status_STATUS_CODE_ERROR,
			attrs: common("agent-ws", "ws", "failed", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": "r", "gen_ai.response.time_to_first_chunk": "0.1",
				"error.type": "chat.error", "network.protocol.name": "websocket", "server.address": "agent.internal", "server.port": "443",
				"e2a.request_id": "r", "e2a.method": "chat.send"})},
	}, {
		name: "failed stream with a credential for a code: _OTHER", tap: "x",
		request: `{"request_id":"r","method":"chat.send","params":{}}`,
		records: []string{failed(`"code":"sk-proj-Zq7XAbCdEfGhIjKlMnOp",`)}, outcome: validate.OutcomeFailed,
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL, status: tracepb.Status_STATUS_CODE_ERROR,
			attrs: common("x", "", "failed", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": "r",
				"error.type": "_OTHER", "e2a.request_id": "r", "e2a.method": "chat.send"})},
	}, {
		name: "failed stream without a code: _OTHER", tap: "x",
		request: `{"request_id":"r","method":"chat.send","params":{}}`,
		records: []string{failed(``)}, outcome: validate.OutcomeFailed,
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL, status: tracepb.Status_STATUS_CODE_ERROR,
			attrs: common("x", "", "failed", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": "r",
				"error.type": "_OTHER", "e2a.request_id": "r", "e2a.method": "chat.send"})},
	}, {
		name: "ACP JSON-RPC error: error.type is its code", tap: "x",
		request: `{"request_id":"r","method":"session/prompt","params":{}}`,
		records: []string{`{"protocol_version":"1.0","request_id":"r","response_id":"r","sequence":0,"is_final":true,"status":"failed","response_kind":"acp.jsonrpc_error","body":{"code":-32603,"message":"internal"}}`},
		outcome: validate.OutcomeFailed,
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL, status: tracepb.Status_STATUS_CODE_ERROR,
			attrs: common("x", "", "failed", "final", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": "r", "error.type": "-32603",
				"e2a.request_id": "r", "e2a.method": "session/prompt"})},
	}, {
		name: "a violation e2atap found: error.type is the rule", tap: "x",
		request: `{"request_id":"r","method":"chat.send","params":{}}`,
		records: []string{chunk, final},
		findings: []validate.Finding{
			{Rule: "e2a.timestamp_utc", Severity: validate.Warning, Message: "offset"},
			{Rule: "e2a.seq_gap", Severity: validate.Error, Message: "sequence 3 after 1"},
		},
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL, status: tracepb.Status_STATUS_CODE_ERROR,
			attrs: common("x", "", "succeeded", "final", "1", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": "r", "gen_ai.response.time_to_first_chunk": "0.1",
				"error.type": "e2a.seq_gap", "e2a.request_id": "r", "e2a.method": "chat.send"})},
	}, {
		name: "stream without its request, cut by a disconnect", tap: "x",
		records: []string{chunk}, outcome: validate.OutcomeMissingFinal, reason: validate.ReasonDisconnect,
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL,
			attrs: common("x", "", "missing_final", "disconnect", "0", map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.response.id": "r", "e2a.request_id": "r"})},
	}, {
		name: "EventMesh STREAM_REQ", tap: "mesh",
		frameReq: &frame.StreamRequest{SessionID: "r", Model: "qwen-max", Conv: "conv-1", Prompt: []byte("secret prompt")},
		want: want{name: "invoke_agent", kind: tracepb.Span_SPAN_KIND_INTERNAL,
			attrs: map[string]string{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "qwen-max", "gen_ai.conversation.id": "conv-1",
				"gen_ai.request.stream": "true", "gen_ai.response.time_to_first_chunk": "0.1",
				"eventmesh.sid": "r", "network.protocol.name": "kafka", "e2atap.tap.type": "kafka",
				"e2atap.outcome": "succeeded", "e2atap.reason": "final", "e2atap.records": "3", "e2atap.heartbeats": "0",
				"e2atap.errors": "0", "e2atap.tap": "mesh", "e2atap.protocol": "eventmesh"}},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rcv, endpoint := startGRPC(t)
			cfg := DefaultConfig()
			cfg.Protocol, cfg.Endpoint, cfg.Taps = ProtocolGRPC, endpoint, testTaps
			tr := newTracer(t, cfg)
			proto := validate.ProtoE2A
			switch {
			case c.frameReq != nil:
				proto = validate.ProtoEventMesh
				tr.Record(frameRecord(t, c.tap, "r", t0, *c.frameReq))
			case c.request != "":
				tr.Record(jsonRecord(t, c.tap, "r", t0, c.request))
			}
			tr.StreamStart(&validate.StreamInfo{Tap: c.tap, Protocol: proto, Key: "r", Start: t0, Request: c.request != "" || c.frameReq != nil})
			var first time.Time // the engine's first chunk: the first record that is not final
			if c.frameReq != nil {
				first = t0.Add(100 * time.Millisecond)
			}
			for i, r := range c.records {
				at := t0.Add(time.Duration(i+1) * 100 * time.Millisecond)
				if first.IsZero() && strings.Contains(r, `"is_final":false`) {
					first = at
				}
				tr.Record(jsonRecord(t, c.tap, "r", at, r))
			}
			errs := uint32(0)
			for _, f := range c.findings {
				f.Stream, f.Tap, f.Time = "r", c.tap, t0.Add(50*time.Millisecond)
				tr.Finding(&f)
				if f.Severity == validate.Error {
					errs++
				}
			}
			end := &validate.StreamInfo{Tap: c.tap, Protocol: proto, Key: "r", Outcome: c.outcome, Reason: c.reason,
				Start: t0, FirstChunk: first, End: t0.Add(time.Second), Records: 3, Errors: errs,
				Request: c.request != "" || c.frameReq != nil}
			tr.StreamEnd(end)
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			if len(rcv.spans) != 1 {
				t.Fatalf("%d spans, want 1", len(rcv.spans))
			}
			sp := rcv.spans[0]
			got := want{name: sp.GetName(), kind: sp.GetKind(), status: sp.GetStatus().GetCode(), attrs: attrs(sp.GetAttributes())}
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("span (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScanRequest: the bounded request scanner finds the fields wherever
// they are among the top-level keys, skips values of every JSON type, and
// leaves out what it cannot read plainly.
func TestScanRequest(t *testing.T) {
	cases := []struct {
		name, in string
		want     reqFields
	}{
		{"reference order", `{"protocol_version":"1.0","provenance":{"source_protocol":"a2a","converter":null,"details":{"kind":"k","abstract_operation":"SendMessage"}},"request_id":"r","task_id":"t","context_id":"c","agent_ref":{"mode":"code","id":"coder"},"source_agent_id":"s","agent_id":"a","params":{}}`,
			reqFields{agentID: []byte("a"), sourceAgentID: []byte("s"), agentRef: []byte("coder"), taskID: []byte("t"), contextID: []byte("c"),
				sourceProtocol: []byte("a2a"), abstractOp: []byte("SendMessage")}},
		{"after values of every type", `{"a":[1,{"b":"}\"]"},[],true],"n":-1.5e3,"t":true,"z":null,"o":{"x":{"agent_id":"inner"}}, "agent_id" : "a" }`,
			reqFields{agentID: []byte("a")}},
		{"agent_ref as a string", `{"agent_ref":"coder"}`, reqFields{agentRef: []byte("coder")}},
		{"escaped, empty, non-string and invalid UTF-8 values are left out", "{\"agent_id\":\"a\\u0041\",\"task_id\":\"\",\"context_id\":7,\"source_agent_id\":\"\xff\"}", reqFields{}},
		{"the last occurrence wins", `{"agent_id":"a","agent_id":"b"}`, reqFields{agentID: []byte("b")}},
		{"cut off: what came before is kept", `{"agent_id":"a","params":{"content":"xx`, reqFields{agentID: []byte("a")}},
		{"not an object", `["agent_id","a"]`, reqFields{}},
		{"broken", `{"agent_id" "a"}`, reqFields{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got reqFields
			scanRequest([]byte(c.in), &got)
			if diff := cmp.Diff(c.want, got, cmp.AllowUnexported(reqFields{}), cmp.Comparer(func(a, b []byte) bool { return string(a) == string(b) })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	// Beyond the bound nothing is read.
	big := `{"params":{"content":"` + string(make([]byte, maxReqScan)) + `"},"agent_id":"a"}`
	var got reqFields
	scanRequest([]byte(big), &got)
	if got.agentID != nil {
		t.Errorf("agent_id %q read beyond %d bytes", got.agentID, maxReqScan)
	}
}

// FuzzScanRequest: any input, the scanner never panics and only returns
// slices of its input.
func FuzzScanRequest(f *testing.F) {
	f.Add(`{"agent_ref":{"id":"x"},"provenance":{"details":{"abstract_operation":"GetTask"}}}`)
	f.Add(`{"a":[{"b":["\\"]}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		var got reqFields
		scanRequest([]byte(in), &got)
		for _, v := range [][]byte{got.agentID, got.sourceAgentID, got.agentRef, got.taskID, got.contextID, got.sourceProtocol, got.abstractOp} {
			if v != nil && !strings.Contains(in, string(v)) {
				t.Fatalf("%q is not in the input", v)
			}
		}
	})
}
