package e2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func envFromJSON(t *testing.T, s string) (*Envelope, error) {
	t.Helper()
	return EnvelopeFromJSON([]byte(s))
}

func TestTimestampNormalization(t *testing.T) {
	tests := []struct {
		in      string // JSON value of "timestamp"
		want    string // JSON value out; "" means an error
		errType string
	}{
		{`1774524781.15`, `"2026-03-26T11:33:01.150000+00:00"`, ""},
		{`1711627200.1234567`, `"2024-03-28T12:00:00.123457+00:00"`, ""},
		{`1711627200.0`, `"2024-03-28T12:00:00+00:00"`, ""},
		{`0`, `"1970-01-01T00:00:00+00:00"`, ""},
		{`-1`, `"1969-12-31T23:59:59+00:00"`, ""},
		{`-1.5`, `"1969-12-31T23:59:58.500000+00:00"`, ""},
		{`0.0000005`, `"1970-01-01T00:00:00+00:00"`, ""}, // half to even: 0.5 µs → 0
		{`0.0000025`, `"1970-01-01T00:00:00.000002+00:00"`, ""},
		{`1e9`, `"2001-09-09T01:46:40+00:00"`, ""},
		{`true`, `"1970-01-01T00:00:01+00:00"`, ""},
		{`false`, `"1970-01-01T00:00:00+00:00"`, ""},
		{`null`, `null`, ""},
		{`"Z-less"`, `"Z-less"`, ""},
		{`""`, `""`, ""},
		{`[1, 2]`, `"[1, 2]"`, ""},
		{`[1.0, 1e16, 1e-5, null, true, "a'b"]`, `"[1.0, 1e+16, 1e-05, None, True, \"a'b\"]"`, ""},
		{`{"b": {"x": "y"}, "a": []}`, `"{'a': [], 'b': {'x': 'y'}}"`, ""},
		{`253402300799`, `"9999-12-31T23:59:59+00:00"`, ""},
		{`-62135596800`, `"0001-01-01T00:00:00+00:00"`, ""},
		{`253402300800`, "", "ValueError"},
		{`-62135596801`, "", "ValueError"},
		{`1e20`, "", "OverflowError"},
		{`1e400`, "", "OverflowError"},
		{`1` + strings.Repeat("0", 400), "", "OverflowError"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e, err := envFromJSON(t, `{"timestamp":`+tt.in+`}`)
			if tt.want == "" {
				var de *DictError
				if !errors.As(err, &de) || de.PyType != tt.errType || de.Key != "timestamp" {
					t.Fatalf("err = %v, want %s on timestamp", err, tt.errType)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, e.ToDict()["timestamp"]); got != tt.want {
				t.Errorf("timestamp = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestSequenceCoercion(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{`3`, 3, false},
		{`-1`, -1, false},
		{`"3"`, 3, false},
		{`" 7\n"`, 7, false},
		{`"+4"`, 4, false},
		{`"-4"`, -4, false},
		{`"1_000"`, 1000, false},
		{`"1__0"`, 0, false},
		{`"_1"`, 0, false},
		{`"1_"`, 0, false},
		{`"\u0663"`, 3, false}, // ARABIC-INDIC DIGIT THREE: int() accepts it
		{`"3.0"`, 0, false},
		{`"0x10"`, 0, false},
		{`""`, 0, false},
		{`"abc"`, 0, false},
		{`2.9`, 2, false},
		{`-2.9`, -2, false},
		{`1e2`, 100, false},
		{`true`, 1, false},
		{`false`, 0, false},
		{`null`, 0, false},
		{`[1]`, 0, false},
		{`{"a":1}`, 0, false},
		{`9223372036854775807`, 9223372036854775807, false},
		{`1e400`, 0, true},                  // int(inf) raises OverflowError in the reference too
		{`"99999999999999999999"`, 0, true}, // valid for Python, beyond this port's int64
		{`99999999999999999999`, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ResponseFromJSON([]byte(`{"sequence":` + tt.in + `}`))
			if tt.err {
				if err == nil {
					t.Fatalf("sequence %s: want error, got %d", tt.in, r.Sequence)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Sequence != tt.want {
				t.Errorf("sequence %s = %d, want %d", tt.in, r.Sequence, tt.want)
			}
		})
	}
}

func TestTruthiness(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`"false"`, true}, {`"0"`, true}, {`" "`, true}, {`""`, false},
		{`0`, false}, {`0.0`, false}, {`-0`, false}, {`1e-400`, false}, {`0.1`, true}, {`-1`, true},
		{`[]`, false}, {`[0]`, true}, {`{}`, false}, {`{"a":null}`, true},
		{`null`, false}, {`true`, true}, {`false`, false},
	}
	for _, tt := range tests {
		e, err := envFromJSON(t, `{"is_stream":`+tt.in+`}`)
		if err != nil {
			t.Fatal(err)
		}
		r, err := ResponseFromJSON([]byte(`{"is_final":` + tt.in + `}`))
		if err != nil {
			t.Fatal(err)
		}
		if e.IsStream != tt.want || r.IsFinal != tt.want {
			t.Errorf("%s: is_stream=%v is_final=%v, want %v", tt.in, e.IsStream, r.IsFinal, tt.want)
		}
	}
}

func TestPyFloatRepr(t *testing.T) {
	tests := map[float64]string{
		1e16: "1e+16", 1e15: "1000000000000000.0", 0.0001: "0.0001", 0.00001: "1e-05",
		1.5: "1.5", 0.1: "0.1", 123456789012345680: "1.2345678901234568e+17", 1e-7: "1e-07",
		-2.5: "-2.5", 1e100: "1e+100", 1774524781.15: "1774524781.15", 5e-324: "5e-324",
	}
	for f, want := range tests {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestPyRepr(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"plain", `'plain'`},
		{"a'b", `"a'b"`},
		{`a'b"c`, `'a\'b"c'`},
		{"tab\tnl\ncr\rbs\\", `'tab\tnl\ncr\rbs\\'`},
		{"\x01\x7f", `'\x01\x7f'`},
		{"é中", `'é中'`},
		{"\u200b\u00a0", `'\u200b\xa0'`},
		{"\U0001F600", `'😀'`},
		{"\U000E0001", `'\U000e0001'`},
		{json.Number("-0"), "0"},
		{json.Number("12345678901234567890123"), "12345678901234567890123"},
		{json.Number("1E2"), "100.0"},
		{[]any{}, "[]"},
		{map[string]any{}, "{}"},
	}
	for _, tt := range tests {
		if got := pyRepr(tt.in); got != tt.want {
			t.Errorf("pyRepr(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestEnvelopeFromDictRules(t *testing.T) {
	tests := []struct {
		name string
		in   string
		// want maps top-level keys to their expected JSON text.
		want map[string]string
	}{
		{"identity_origin null kept", `{"identity_origin":null}`, map[string]string{"identity_origin": `null`}},
		{"identity_origin non-string kept", `{"identity_origin":5}`, map[string]string{"identity_origin": `5`}},
		{"request_id number kept", `{"request_id":12345678901234567890}`, map[string]string{"request_id": `12345678901234567890`}},
		{"jsonrpc_id string", `{"jsonrpc_id":"7"}`, map[string]string{"jsonrpc_id": `"7"`}},
		{"source_protocol null is str(None)", `{"provenance":{"source_protocol":null}}`,
			map[string]string{"provenance": `{"source_protocol":"None","converter":null,"converted_at":null,"details":{}}`}},
		{"source_protocol number", `{"provenance":{"source_protocol":1.50}}`,
			map[string]string{"provenance": `{"source_protocol":"1.5","converter":null,"converted_at":null,"details":{}}`}},
		{"binding value null", `{"binding":{"value":null}}`,
			map[string]string{"provenance": `{"source_protocol":"e2a","converter":null,"converted_at":null,"details":{"migrated_from_binding":""}}`}},
		{"binding object without value", `{"binding":{"x":1}}`,
			map[string]string{"provenance": `{"source_protocol":"e2a","converter":null,"converted_at":null,"details":{"migrated_from_binding":"{'x': 1}"}}`}},
		{"binding when migrated_from_binding is null", `{"binding":"a2a","provenance":{"details":{"migrated_from_binding":null}}}`,
			map[string]string{"provenance": `{"source_protocol":"a2a","converter":null,"converted_at":null,"details":{"migrated_from_binding":"a2a"}}`}},
		{"binding hybrid", `{"binding":"hybrid"}`,
			map[string]string{"provenance": `{"source_protocol":"e2a","converter":null,"converted_at":null,"details":{"migrated_from_binding":"hybrid"}}`}},
		{"binding false migrates", `{"binding":false}`,
			map[string]string{"provenance": `{"source_protocol":"e2a","converter":null,"converted_at":null,"details":{"migrated_from_binding":"False"}}`}},
		{"params list of pairs", `{"params":[["a",1],"bc"]}`, map[string]string{"params": `{"a":1,"b":"c"}`}},
		{"params falsy values", `{"params":0}`, map[string]string{"params": `{}`}},
		{"payload keeps zero false empty string", `{"payload":{"a":0,"b":false,"c":"","d":null,"e":[],"f":{}}}`,
			map[string]string{"params": `{"a":0,"b":false,"c":""}`}},
		{"payload empty object ignored", `{"params":{"x":1},"payload":{}}`, map[string]string{"params": `{"x":1}`}},
		{"metadata merged when channel_context null", `{"channel_context":null,"metadata":{"k":"v"}}`,
			map[string]string{"channel_context": `{"k":"v"}`}},
		{"app_id falsy not copied", `{"app_id":0}`, map[string]string{"channel_context": `{}`}},
		{"app_id non-string kept raw", `{"app_id":7}`, map[string]string{"channel_context": `{"app_id":7}`}},
		{"app_id does not fill from metadata twice", `{"metadata":{"app_id":"m"},"app_id":"top"}`,
			map[string]string{"channel_context": `{"app_id":"m"}`}},
		{"channel absent channel_id null", `{"channel_id":null}`, map[string]string{"channel": `null`}},
		{"channel number kept", `{"channel":3,"channel_id":"web"}`, map[string]string{"channel": `3`}},
		{"req_method ignored when method set", `{"method":"a","req_method":"b"}`, map[string]string{"method": `"a"`}},
		{"req_method ignored when key absent", `{"method":null}`, map[string]string{"method": `null`}},
		{"method non-string kept", `{"method":["x"]}`, map[string]string{"method": `["x"]`}},
		{"expected_output_modes string is a list of characters", `{"expected_output_modes":"ab"}`,
			map[string]string{"expected_output_modes": `["a","b"]`}},
		{"expected_output_modes object gives its keys", `{"expected_output_modes":{"b":1,"a":2}}`,
			map[string]string{"expected_output_modes": `["a","b"]`}},
		{"agent_id non-string falls back", `{"agent_id":5,"source_agent_id":" s "}`,
			map[string]string{"agent_id": `"s"`, "source_agent_id": `" s "`}},
		{"agent_id blank falls back", `{"agent_id":"  ","source_agent_id":"\u3000x\u001c"}`, map[string]string{"agent_id": `"x"`}},
		{"workspace_key blank falls back to workspace_dir", `{"workspace_key":" ","workspace_dir":"d"}`,
			map[string]string{"workspace_key": `"d"`}},
		{"service_id non-string null", `{"service_id":1}`, map[string]string{"service_id": `null`}},
		{"auth extra_headers null", `{"auth":{"extra_headers":null,"_meta":[]}}`,
			map[string]string{"auth": `{"method_id":null,"bearer_token":null,"api_key_ref":null,"credential_ref":null,"extra_headers":{},"_meta":{}}`}},
		{"protocol_version null kept", `{"protocol_version":null}`, map[string]string{"protocol_version": `null`}},
		{"html kept unescaped", `{"params":{"q":"<a&b>"}}`, map[string]string{"params": `{"q":"<a&b>"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := envFromJSON(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			b, err := e.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			if len(top) != 29 {
				t.Errorf("envelope has %d keys, want 29", len(top))
			}
			for k, want := range tt.want {
				if got := string(top[k]); got != want {
					t.Errorf("%s = %s, want %s", k, got, want)
				}
			}
		})
	}
}

func TestFromDictErrors(t *testing.T) {
	tests := []struct {
		name, in, key, pyType string
		response              bool
	}{
		{"origin invalid", `{"identity_origin":"USER"}`, "identity_origin", "ValueError", false},
		{"origin empty string", `{"identity_origin":""}`, "identity_origin", "ValueError", false},
		{"auth string", `{"auth":"Bearer x"}`, "auth", "AttributeError", false},
		{"auth false", `{"auth":false}`, "auth", "AttributeError", false},
		{"params string", `{"params":"abc"}`, "params", "ValueError", false},
		{"params number", `{"params":5}`, "params", "TypeError", false},
		{"params true", `{"params":true}`, "params", "TypeError", false},
		{"params bad pair", `{"params":[["a"]]}`, "params", "ValueError", false},
		{"params pair not a sequence", `{"params":[1]}`, "params", "TypeError", false},
		{"params unhashable key", `{"params":[[["k"],1]]}`, "params", "TypeError", false},
		{"details list", `{"provenance":{"details":[1]}}`, "provenance", "TypeError", false},
		{"channel_context number", `{"channel_context":1}`, "channel_context", "TypeError", false},
		{"expected_output_modes number", `{"expected_output_modes":3}`, "expected_output_modes", "TypeError", false},
		{"acp_meta string", `{"acp_meta":"x"}`, "acp_meta", "ValueError", false},
		{"response origin invalid", `{"identity_origin":"bot"}`, "identity_origin", "ValueError", true},
		{"response body string", `{"body":"x"}`, "body", "ValueError", true},
		{"response metadata number", `{"metadata":2}`, "metadata", "TypeError", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.response {
				_, err = ResponseFromJSON([]byte(tt.in))
			} else {
				_, err = envFromJSON(t, tt.in)
			}
			var de *DictError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v, want *DictError", err)
			}
			if de.Key != tt.key || de.PyType != tt.pyType {
				t.Errorf("err = %s %s (%v), want %s %s", de.Key, de.PyType, err, tt.key, tt.pyType)
			}
		})
	}
	if _, err := EnvelopeFromJSON([]byte(`[1]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("array: err = %v, want ErrNotObject", err)
	}
	for _, in := range []string{`{} {}`, `{}}`, `{} x`} {
		if _, err := EnvelopeFromJSON([]byte(in)); !errors.Is(err, ErrTrailingData) {
			t.Errorf("%s: err = %v, want ErrTrailingData", in, err)
		}
	}
	if _, err := EnvelopeFromJSON([]byte(" {}\n\t")); err != nil {
		t.Errorf("whitespace around the object: %v", err)
	}
}

func TestResponseFromDictRules(t *testing.T) {
	tests := []struct {
		in           string
		status, kind string
	}{
		{`{"status":null}`, "None", ""},
		{`{"status":5}`, "5", ""},
		{`{"status":true}`, "True", ""},
		{`{"response_kind":0}`, "in_progress", ""},
		{`{"response_kind":false}`, "in_progress", ""},
		{`{"response_kind":[]}`, "in_progress", ""},
		{`{"response_kind":5}`, "in_progress", "5"},
		{`{"response_kind":true}`, "in_progress", "True"},
		{`{"response_kind":"  "}`, "in_progress", "  "},
	}
	for _, tt := range tests {
		r, err := ResponseFromJSON([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != tt.status || r.ResponseKind != tt.kind {
			t.Errorf("%s: status=%q kind=%q, want %q %q", tt.in, r.Status, r.ResponseKind, tt.status, tt.kind)
		}
	}
	r, err := ResponseFromJSON([]byte(`{"channel_id":"web","metadata":{"_jiuwenswarm_server_push":true},"binding":"acp","payload":{"a":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Channel.Is("web") || !r.IsServerPush() || r.Provenance.SourceProtocol != "e2a" || len(r.Body) != 0 {
		t.Errorf("response legacy handling wrong: %s", mustJSON(t, r))
	}
	if r.IdentityOrigin.String() != "agent" {
		t.Errorf("default identity_origin = %v", r.IdentityOrigin)
	}
}

// from_dict(to_dict(x)) is x: what ToDict writes, EnvelopeFromDict reads back
// unchanged. Checked on every vector output and by the fuzz targets.
func TestRoundTripVectors(t *testing.T) {
	for _, file := range []string{"envelope_from_dict", "envelope_from_acp_jsonrpc", "envelope_from_a2a_send_message"} {
		for _, c := range loadVectors(t, filepath.Join("testdata", "vectors", file+".jsonl")) {
			if bytes.HasPrefix(c.Output, []byte(`{"error"`)) {
				continue
			}
			e, err := EnvelopeFromJSON(c.Output)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			again, err := EnvelopeFromDict(e.ToDict())
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			if a, b := mustJSON(t, e), mustJSON(t, again); a != b {
				t.Errorf("%s: not a fixed point\n%s\n%s", c.Name, a, b)
			}
			if bytes.Contains(c.Output, []byte(nondetNow)) {
				continue // the placeholder is not a time; the fixed point above still holds
			}
			if p, ok := vectorEqual(decodeAny(t, c.Output), decodeAny(t, []byte(mustJSON(t, e))), "$"); !ok {
				t.Errorf("%s: to_dict output does not read back at %s", c.Name, p)
			}
		}
	}
	for _, c := range loadVectors(t, filepath.Join("testdata", "vectors", "response_from_dict.jsonl")) {
		if bytes.HasPrefix(c.Output, []byte(`{"error"`)) {
			continue
		}
		r, err := ResponseFromJSON(c.Output)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ResponseFromDict(r.ToDict())
		if err != nil {
			t.Fatal(err)
		}
		if p, ok := vectorEqual(decodeAny(t, c.Output), decodeAny(t, []byte(mustJSON(t, again))), "$"); !ok {
			t.Errorf("%s: mismatch at %s", c.Name, p)
		}
	}
}

func TestUnmarshalJSONUsesFromDict(t *testing.T) {
	var e Envelope
	if err := json.Unmarshal([]byte(`{"channel_id":"feishu","req_method":"chat.send","timestamp":0}`), &e); err != nil {
		t.Fatal(err)
	}
	if !e.Channel.Is("feishu") || !e.Method.Is("chat.send") || *e.Timestamp != "1970-01-01T00:00:00+00:00" {
		t.Errorf("got %s", mustJSON(t, &e))
	}
	var r Response
	if err := json.Unmarshal([]byte(`{"identity_origin":"nobody"}`), &r); err == nil {
		t.Error("invalid identity_origin accepted")
	}
}

func TestDefaults(t *testing.T) {
	e, err := EnvelopeFromDict(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, e), mustJSON(t, NewEnvelope()); a != b {
		t.Errorf("from_dict({}) != NewEnvelope()\n%s\n%s", a, b)
	}
	r, err := ResponseFromDict(map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, r), mustJSON(t, NewResponse()); a != b {
		t.Errorf("from_dict({}) != NewResponse()\n%s\n%s", a, b)
	}
	// The zero values still write every key; nil maps and slices are {} and [].
	if got := mustJSON(t, &Envelope{}); !strings.Contains(got, `"params":{}`) || !strings.Contains(got, `"expected_output_modes":[]`) {
		t.Errorf("zero envelope: %s", got)
	}
}

func TestGoNativeValues(t *testing.T) {
	// Callers may build the map by hand with Go numbers.
	e, err := EnvelopeFromDict(map[string]any{"timestamp": 1774524781, "is_stream": 1, "jsonrpc_id": int64(3), "params": map[string]any{"n": 2.5}})
	if err != nil {
		t.Fatal(err)
	}
	if *e.Timestamp != "2026-03-26T11:33:01+00:00" || !e.IsStream || e.JSONRPCID.String() != "3" {
		t.Errorf("got %s", mustJSON(t, e))
	}
	r, err := ResponseFromDict(map[string]any{"sequence": 2.9, "is_final": 0.0})
	if err != nil || r.Sequence != 2 || r.IsFinal {
		t.Errorf("got %+v, %v", r, err)
	}
}

func TestConstants(t *testing.T) {
	if len(E2AResponseKinds) != 13 || E2AResponseKinds[0] != KindE2AComplete || E2AResponseKinds[12] != KindExt {
		t.Errorf("E2AResponseKinds = %v", E2AResponseKinds)
	}
	for _, k := range E2AResponseKinds {
		if !IsResponseKind(k) {
			t.Errorf("IsResponseKind(%q) = false", k)
		}
	}
	for _, k := range []string{"", "E2A.CHUNK", "e2a.chunk ", "chat.delta", "a2a.status_update"} {
		if IsResponseKind(k) {
			t.Errorf("IsResponseKind(%q) = true", k)
		}
	}
	for _, k := range ACPSessionUpdateKinds {
		if !IsSessionUpdateKind(k) {
			t.Errorf("IsSessionUpdateKind(%q) = false", k)
		}
	}
	if IsSessionUpdateKind("agentMessageChunk") {
		t.Error("camelCase session update kind accepted")
	}
	b := []byte("plan.approval_required")
	if n := testing.AllocsPerRun(100, func() { _ = IsResponseKind(string(b)) || IsSessionUpdateKind(string(b)) }); n != 0 {
		t.Errorf("IsResponseKind allocates %v times", n)
	}
	for _, k := range []string{WireLegacyAgentResponseKey, WireLegacyAgentChunkKey, WireServerPushKey, InternalCancelSourceKey} {
		if !IsWireInternalMetadataKey(k) {
			t.Errorf("%s not internal", k)
		}
	}
	if IsWireInternalMetadataKey(InternalContextKey) {
		t.Error("_jiuwenswarm is a channel_context key, not a metadata key")
	}
}

func TestKindFinalAllowed(t *testing.T) {
	tests := []struct {
		kind           string
		final          bool
		allowed, known bool
	}{
		{KindE2AChunk, false, true, true},
		{KindE2AChunk, true, false, true},
		{KindE2AComplete, true, true, true},
		{KindE2AComplete, false, false, true},
		{KindE2AError, true, true, true},
		{KindE2AError, false, false, true},
		{KindCron, true, true, true},
		{KindCron, false, false, true},
		{KindPlanApprovalRequired, true, true, true},
		{KindACPOutputRequest, false, true, true},
		{KindACPOutputRequest, true, false, true},
		{KindACPSessionUpdate, false, false, false},
		{KindA2AStreamEvent, true, false, false},
		{"", true, false, false},
	}
	for _, tt := range tests {
		allowed, known := KindFinalAllowed(tt.kind, tt.final)
		if allowed != tt.allowed || known != tt.known {
			t.Errorf("KindFinalAllowed(%q, %v) = %v, %v; want %v, %v", tt.kind, tt.final, allowed, known, tt.allowed, tt.known)
		}
		// Agreement with the Gateway bridge on the pairs it rejects outright.
		r := NewResponse()
		r.ResponseKind, r.IsFinal = tt.kind, tt.final
		_, err := ResponseToAgentChunk(r)
		if (err == nil) != (tt.allowed || (tt.known && (tt.kind == KindCron || tt.kind == KindPlanApprovalRequired || tt.kind == KindACPOutputRequest))) {
			t.Errorf("bridge on (%q, %v): err = %v", tt.kind, tt.final, err)
		}
	}
}

const (
	secretToken  = "eyJhbGciOi.SECRET-TOKEN.sig"
	secretHeader = "sk-HEADERSECRET123"
	secretRef    = "vault://SECRET-REF"
	secretMeta   = "META-SECRET"
)

func secretEnvelope(t *testing.T) *Envelope {
	t.Helper()
	e, err := envFromJSON(t, `{"request_id":"r1","auth":{"method_id":"bearer","bearer_token":"`+secretToken+
		`","api_key_ref":"`+secretRef+`","credential_ref":"`+secretRef+`","extra_headers":{"X-Api-Key":"`+secretHeader+
		`"},"_meta":{"k":"`+secretMeta+`"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestAuthNeverPrints(t *testing.T) {
	e := secretEnvelope(t)
	a := *e.Auth
	var out bytes.Buffer
	fmt.Fprintf(&out, "%v %+v %#v %s %v %+v %#v %q|", a, a, a, a, e.Auth, e, e, a)
	fmt.Fprint(&out, a, e.Auth, *e, "|")
	fmt.Fprintln(&out, a.String())
	logger := slog.New(slog.NewJSONHandler(&out, nil))
	logger.Info("x", "auth", a, "authp", e.Auth, "env", e, "envv", *e)
	logger = slog.New(slog.NewTextHandler(&out, nil))
	logger.Info("x", "auth", a, "env", e)
	for _, s := range []string{secretToken, secretHeader, secretRef, secretMeta, "X-Api-Key"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("secret %q printed:\n%s", s, out.String())
		}
	}
	if !strings.Contains(out.String(), "bearer") || !strings.Contains(out.String(), secretMask) {
		t.Errorf("masked output lost method_id or mask:\n%s", out.String())
	}
	// The wire form does carry them: that is what the reference sends.
	if wire := mustJSON(t, e); !strings.Contains(wire, secretToken) || !strings.Contains(wire, secretHeader) {
		t.Errorf("wire form lost the credentials: %s", wire)
	}
	if v, p := mustJSON(t, *e), mustJSON(t, e); v != p {
		t.Errorf("value and pointer marshal differently:\n%s\n%s", v, p)
	}
	empty := Auth{}
	if s := empty.String(); strings.Contains(s, secretMask) {
		t.Errorf("absent secrets shown as masked: %s", s)
	}
}

func TestMergeParamsToACPPrompt(t *testing.T) {
	tests := []struct {
		name, env, want string
		err             bool
	}{
		{"prompt from query when text and content falsy", `{"method":"session/prompt","params":{"text":"","content":0,"query":"q"}}`,
			`{"content":0,"prompt":[{"text":"q","type":"text"}],"query":"q","text":""}`, false},
		{"non-string query gives no prompt", `{"method":"session/prompt","params":{"query":["q"]}}`, `{"query":["q"]}`, false},
		{"content_blocks not a list", `{"method":"session/prompt","params":{"content_blocks":"x","text":"t"}}`,
			`{"content_blocks":"x","prompt":[{"text":"t","type":"text"}],"text":"t"}`, false},
		{"session_id only when truthy", `{"method":"session/prompt","session_id":"","params":{}}`, `{}`, false},
		{"session_id number copied", `{"method":"session/prompt","session_id":7,"params":{}}`, `{"session_id":7}`, false},
		{"_meta null with acp_meta raises", `{"method":"session/prompt","acp_meta":{"a":1},"params":{"_meta":null}}`, "", true},
		{"_meta string without acp_meta ok", `{"method":"session/prompt","params":{"_meta":"x"}}`, `{"_meta":"x"}`, false},
		{"method ext untouched", `{"method":"ext","acp_meta":{"a":1},"params":{"text":"t"}}`, `{"text":"t"}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := envFromJSON(t, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			p, err := MergeParamsToACPPrompt(e)
			if tt.err {
				if err == nil {
					t.Fatalf("want error, got %s", mustJSON(t, p))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := mustJSON(t, p); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestAdaptersDoNotModifyInputs(t *testing.T) {
	in := `{"method":"session/prompt","session_id":"s","acp_meta":{"b":2},"params":{"_meta":{"a":1},"content_blocks":[{"type":"text","text":"x"}]}}`
	e, err := envFromJSON(t, in)
	if err != nil {
		t.Fatal(err)
	}
	before := mustJSON(t, e)
	if _, err := EnvelopeToACPJSONRPCCall(e); err != nil {
		t.Fatal(err)
	}
	if after := mustJSON(t, e); after != before {
		t.Errorf("envelope modified:\n%s\n%s", before, after)
	}

	r, err := ResponseFromJSON([]byte(`{"response_kind":"e2a.error","is_final":true,"request_id":"r","metadata":{"m":1},` +
		`"body":{"code":"c","details":{"event_type":"chat.error"}},"projections":{"acp":{"jsonrpc":"2.0","result":{}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	before = mustJSON(t, r)
	c, err := ResponseToAgentChunk(r)
	if err != nil {
		t.Fatal(err)
	}
	c.Payload["x"] = 1
	c.Metadata["y"] = 2
	out := ResponseToACPJSONRPCResponse(r)
	out["z"] = 3
	if after := mustJSON(t, r); after != before {
		t.Errorf("response modified:\n%s\n%s", before, after)
	}
}

func TestResponseToACPJSONRPCResponseEdges(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"response_kind":"e2a.error","body":{"code":1.0,"message":0}}`,
			`{"error":{"code":-32603,"data":{"e2a_code":1.0},"message":""},"id":null,"jsonrpc":"2.0"}`},
		{`{"response_kind":"e2a.error","body":{"code":null,"message":["m"]}}`,
			`{"error":{"code":-32603,"message":"['m']"},"id":null,"jsonrpc":"2.0"}`},
		{`{"response_kind":"e2a.error","jsonrpc_id":"a","body":{"code":-1,"external":{}}}`,
			`{"error":{"code":-1,"data":{"external":{}},"message":""},"id":"a","jsonrpc":"2.0"}`},
		{`{"response_kind":"e2a.error","projections":{"acp":{"jsonrpc":"1.0","result":{}}}}`,
			`{"error":{"code":-32603,"message":""},"id":null,"jsonrpc":"2.0"}`},
		{`{"response_kind":"e2a.complete","status":"failed"}`, `null`},
	}
	for _, tt := range tests {
		r, err := ResponseFromJSON([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		if got := mustJSON(t, nilMap(ResponseToACPJSONRPCResponse(r))); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestLegacyBridge(t *testing.T) {
	o := FrameOptions{ResponseID: "req", Sequence: KeepaliveSequence, Now: fixedNow}
	k := ResponseFromAgentChunk(KeepaliveChunk("req", "web"), true, o)
	if !k.IsKeepalive() || k.IsFinal || k.ResponseKind != KindE2AChunk || *k.Timestamp != "2026-03-29T12:00:00.123456+00:00" {
		t.Errorf("keepalive: %s", mustJSON(t, k))
	}
	if got, _ := k.Provenance.ConvertedAt.Text(); got != *k.Timestamp {
		t.Errorf("converted_at %q != timestamp %q", got, *k.Timestamp)
	}
	over := ResponseFromAgentChunk(OversizeChunk("req", "web", 7000000), true, FrameOptions{ResponseID: "req", Sequence: 7, Now: fixedNow})
	if !over.IsFinal || over.ResponseKind != KindE2AError || over.Body["code"] != CodeChatError || over.Sequence != 7 {
		t.Errorf("oversize: %s", mustJSON(t, over))
	}
	// {"is_complete": 1} == {"is_complete": True} in Python.
	c := &AgentChunk{RequestID: "r", IsComplete: true, Payload: map[string]any{"is_complete": json.Number("1")}}
	if r := ResponseFromAgentChunk(c, true, FrameOptions{}); mustJSON(t, r.Body) != `{"result":{}}` {
		t.Errorf("complete marker with 1: %s", mustJSON(t, r.Body))
	}
	// chat.delta without content: delta "" ; with content null: null.
	c = &AgentChunk{RequestID: "r", Payload: map[string]any{"event_type": "chat.delta"}}
	if r := ResponseFromAgentChunk(c, true, FrameOptions{}); mustJSON(t, r.Body) != `{"delta":"","delta_kind":"text","event_type":"chat.delta","source_chunk_type":null}` {
		t.Errorf("delta without content: %s", mustJSON(t, r.Body))
	}
	// Unary error message precedence: error (even null) over message.
	a := &AgentResponse{RequestID: "r", Payload: map[string]any{"error": nil, "message": "m"}}
	if r := ResponseFromAgentResponse(a, FrameOptions{}); r.Body["message"] != "None" || !r.Channel.IsNull() {
		t.Errorf("unary error: %s", mustJSON(t, r))
	}
	if r := ResponseFromAgentResponse(&AgentResponse{RequestID: "r", OK: true, ChannelID: "web"}, FrameOptions{}); !r.Channel.Is("web") || r.IsStream || !r.IsFinal {
		t.Errorf("unary ok: %s", mustJSON(t, r))
	}

	// Inverse unary reading.
	for _, tt := range []struct{ in, want string }{
		{`{"request_id":"r","response_kind":"e2a.complete","status":"succeeded","body":{"result":{"a":1}}}`,
			`{"request_id":"r","channel_id":"","ok":true,"payload":{"a":1},"metadata":null,"agent_ref":null}`},
		{`{"request_id":"r","response_kind":"e2a.chunk","status":"failed","body":{"message":"m","code":"c"}}`,
			`{"request_id":"r","channel_id":"","ok":false,"payload":{"code":"c","error":"m"},"metadata":null,"agent_ref":null}`},
		{`{"request_id":"r","response_kind":"e2a.complete","status":"in_progress"}`, ``},
	} {
		r, err := ResponseFromJSON([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ResponseToAgentResponse(r)
		if tt.want == "" {
			if err == nil {
				t.Errorf("%s: want error", tt.in)
			}
			continue
		}
		if err != nil || mustJSON(t, got) != tt.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tt.in, mustJSON(t, got), err, tt.want)
		}
	}

	// Deprecated shapes as the Gateway reads them.
	ch, err := AgentChunkFromDict(map[string]any{"request_id": json.Number("5"), "payload": nil, "is_complete": "no", "agent_ref": "dropped"})
	if err != nil || ch.RequestID != "5" || !ch.IsComplete || !ch.AgentRef.IsNull() {
		t.Errorf("AgentChunkFromDict: %+v %v", ch, err)
	}
	if _, err := AgentResponseFromDict(map[string]any{"ok": true}); err == nil {
		t.Error("AgentResponseFromDict without request_id accepted")
	}
	if ar, err := AgentResponseFromDict(map[string]any{"request_id": "r"}); err != nil || !ar.OK {
		t.Errorf("ok defaults to true: %+v %v", ar, err)
	}
}

func TestJSONParseErrorFrame(t *testing.T) {
	r := JSONParseErrorFrame("req", "", "bad", "", fixedNow)
	if !r.ResponseID.Is("req") || !r.RequestID.Is("req") || !r.Channel.IsNull() {
		t.Errorf("got %s", mustJSON(t, r))
	}
	r = JSONParseErrorFrame("", "web", "bad", "own", nil)
	if !r.ResponseID.Is("own") || !r.RequestID.IsNull() || !r.Channel.Is("web") {
		t.Errorf("got %s", mustJSON(t, r))
	}
	if _, err := time.Parse(time.RFC3339Nano, *r.Timestamp); err != nil {
		t.Errorf("timestamp %q: %v", *r.Timestamp, err)
	}
}

func TestFileRef(t *testing.T) {
	f, err := FileRefFromDict(map[string]any{"uri": "file:///a", "size": json.Number("3")})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, f); got != `{"uri":"file:///a","name":null,"mime_type":null,"size":3,"_meta":{}}` {
		t.Errorf("got %s", got)
	}
	if _, err := FileRefFromDict(map[string]any{"name": "x"}); err == nil {
		t.Error("file ref without uri accepted")
	}
}

func TestLogValueHidesContent(t *testing.T) {
	r, err := ResponseFromJSON([]byte(`{"request_id":"r","response_kind":"e2a.chunk","body":{"delta":"MODEL-OUTPUT"},"metadata":{"_e2a_wire_legacy_agent_chunk":{"x":"BLOB"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	e, err := envFromJSON(t, `{"request_id":"r","params":{"query":"USER-TEXT"},"channel_context":{"feishu_open_id":"ou_SECRET"}}`)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	slog.New(slog.NewJSONHandler(&out, nil)).Info("m", "resp", r, "env", e)
	for _, s := range []string{"MODEL-OUTPUT", "BLOB", "USER-TEXT", "ou_SECRET"} {
		if strings.Contains(out.String(), s) {
			t.Errorf("%s logged: %s", s, out.String())
		}
	}
	slog.New(slog.NewTextHandler(io.Discard, nil)).Info("m", "r", r)
}

// The fuzz targets check that decoding never panics on any JSON object, and
// that what ToDict writes reads back to itself (from_dict∘to_dict is a fixed
// point). Seeds: testdata/fuzz/<target>/ (the vector inputs and edge cases).

func FuzzEnvelopeFromDict(f *testing.F) {
	f.Add([]byte(`{"request_id":"r","timestamp":1774524781.15,"binding":{"value":"acp"},"payload":{"a":1},"metadata":{"k":"v"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeDict(data)
		if err != nil {
			return
		}
		e, err := EnvelopeFromDict(m)
		if err != nil {
			var de *DictError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a *DictError: %v", err)
			}
			return
		}
		first, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := EnvelopeFromJSON(first)
		if err != nil {
			t.Fatalf("to_dict output does not decode: %v\n%s", err, first)
		}
		if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
			t.Fatalf("not a fixed point:\n%s\n%s", first, second)
		}
		_, _ = MergeParamsToACPPrompt(e)
		_, _ = EnvelopeToACPJSONRPCCall(e)
		_ = fmt.Sprint(e.Auth, e)
	})
}

func FuzzResponseFromDict(f *testing.F) {
	f.Add([]byte(`{"response_kind":"e2a.chunk","sequence":"3","is_final":"false","body":{"delta_kind":"text"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeDict(data)
		if err != nil {
			return
		}
		r, err := ResponseFromDict(m)
		if err != nil {
			var de *DictError
			if !errors.As(err, &de) {
				t.Fatalf("error is not a *DictError: %v", err)
			}
			return
		}
		first, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		again, err := ResponseFromJSON(first)
		if err != nil {
			t.Fatalf("to_dict output does not decode: %v\n%s", err, first)
		}
		if second, _ := json.Marshal(again); !bytes.Equal(first, second) {
			t.Fatalf("not a fixed point:\n%s\n%s", first, second)
		}
		_ = ResponseToACPJSONRPCResponse(r)
		_ = ResponseToA2AStreamPayload(r)
		if c, err := ResponseToAgentChunk(r); err == nil {
			if _, err := json.Marshal(c); err != nil {
				t.Fatalf("marshal chunk: %v", err)
			}
		}
		_, _ = ResponseToAgentResponse(r)
	})
}
