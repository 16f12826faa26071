package e2a

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The vectors were produced by running the reference Python code
// (testdata/vectors is a byte-identical copy of shared/vectors/e2a).

const nondetNow = "<nondeterministic:utc_now_iso>"

type vectorCase struct {
	Name     string          `json:"name"`
	Function string          `json:"function"`
	Input    json.RawMessage `json:"input"`
	Output   json.RawMessage `json:"output"`
}

// vectorResult is what the Go side produced: JSON text, or an error.
type vectorResult struct {
	out []byte
	err error
	// ordered says the output is a serialized dataclass (or a fixed-shape
	// dict) whose key order must match the vector's.
	ordered bool
}

var fixedNow = func() time.Time { return time.Date(2026, 3, 29, 12, 0, 0, 123456789, time.UTC) }

var vectorRunners = map[string]func(t *testing.T, in json.RawMessage) vectorResult{
	"E2AEnvelope.from_dict->to_dict": func(t *testing.T, in json.RawMessage) vectorResult {
		e, err := EnvelopeFromDict(mustDict(t, in))
		if err != nil {
			return vectorResult{err: err}
		}
		return marshalled(t, e, true)
	},
	"E2AResponse.from_dict->to_dict": func(t *testing.T, in json.RawMessage) vectorResult {
		r, err := ResponseFromDict(mustDict(t, in))
		if err != nil {
			return vectorResult{err: err}
		}
		return marshalled(t, r, true)
	},
	"merge_params_to_acp_prompt": func(t *testing.T, in json.RawMessage) vectorResult {
		p, err := MergeParamsToACPPrompt(mustEnvelope(t, in))
		if err != nil {
			return vectorResult{err: err}
		}
		return marshalled(t, p, false)
	},
	"envelope_to_acp_jsonrpc_call": func(t *testing.T, in json.RawMessage) vectorResult {
		c, err := EnvelopeToACPJSONRPCCall(mustEnvelope(t, in))
		if err != nil {
			return vectorResult{err: err}
		}
		return marshalled(t, c, true)
	},
	"envelope_from_acp_jsonrpc": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		kw, _ := m["kwargs"].(map[string]any)
		params, _ := m["params"].(map[string]any)
		ing := ACPIngress{
			JSONRPCID: LooseOf(kw["jsonrpc_id"]),
			SessionID: LooseOf(kw["session_id"]),
			Channel:   LooseOf(kw["channel"]),
			Now:       fixedNow,
		}
		ing.Converter, _ = kw["converter"].(string)
		ing.ExtraProvenanceDetails, _ = kw["extra_provenance_details"].(map[string]any)
		if o, ok := kw["identity_origin"].(string); ok {
			ing.IdentityOrigin = IdentityOrigin(o)
		}
		return marshalled(t, EnvelopeFromACPJSONRPC(m["method"].(string), params, ing), true)
	},
	"envelope_from_a2a_send_message": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		a := A2ASendMessage{
			TaskID:      LooseOf(m["task_id"]),
			ContextID:   LooseOf(m["context_id"]),
			MessageBody: m["message_body"],
			Channel:     LooseOf(m["channel"]),
			Now:         fixedNow,
		}
		a.Metadata, _ = m["metadata"].(map[string]any)
		a.Configuration, _ = m["configuration"].(map[string]any)
		return marshalled(t, EnvelopeFromA2ASendMessage(a), true)
	},
	"e2a_response_to_acp_jsonrpc_response": func(t *testing.T, in json.RawMessage) vectorResult {
		return marshalled(t, nilMap(ResponseToACPJSONRPCResponse(mustResponse(t, in))), false)
	},
	"e2a_response_to_a2a_stream_payload": func(t *testing.T, in json.RawMessage) vectorResult {
		return marshalled(t, nilMap(ResponseToA2AStreamPayload(mustResponse(t, in))), false)
	},
	"e2a_response_from_agent_chunk": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		isStream := true
		if v, ok := m["is_stream"].(bool); ok {
			isStream = v
		}
		return marshalled(t, ResponseFromAgentChunk(testChunk(t, m["chunk"]), isStream, frameOpts(t, m)), true)
	},
	"e2a_response_from_agent_response": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		return marshalled(t, ResponseFromAgentResponse(testAgentResponse(t, m["response"]), frameOpts(t, m)), true)
	},
	"e2a_response_to_agent_chunk": func(t *testing.T, in json.RawMessage) vectorResult {
		c, err := ResponseToAgentChunk(mustResponse(t, in))
		if err != nil {
			return vectorResult{err: err}
		}
		return marshalled(t, c, true)
	},
	"is_e2a_response_wire_dict": func(t *testing.T, in json.RawMessage) vectorResult {
		var r Record
		if err := ScanStd(in, &r); err != nil {
			t.Fatalf("ScanStd: %v", err)
		}
		return marshalled(t, IsResponseWireDict(&r), false)
	},
	"encode_json_parse_error_wire": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		s := func(k string) string { v, _ := m[k].(string); return v }
		return marshalled(t, JSONParseErrorFrame(s("request_id"), s("channel_id"), s("message"), s("response_id"), fixedNow), true)
	},
	"encode_agent_chunk_for_wire": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		o := frameOpts(t, m)
		o.Now = fixedNow
		return marshalled(t, ResponseFromAgentChunk(testChunk(t, m["chunk"]), true, o), true)
	},
	"encode_agent_response_for_wire": func(t *testing.T, in json.RawMessage) vectorResult {
		m := mustDict(t, in)
		o := frameOpts(t, m)
		o.Now = fixedNow
		return marshalled(t, ResponseFromAgentResponse(testAgentResponse(t, m["response"]), o), true)
	},
	"literal (AgentWebSocketServer._connection_handler)": func(t *testing.T, _ json.RawMessage) vectorResult {
		return marshalled(t, ConnectionAck(), true)
	},
}

func TestVectors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "vectors", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no vector files: %v", err)
	}
	total := 0
	for _, file := range files {
		cases := loadVectors(t, file)
		total += len(cases)
		t.Run(strings.TrimSuffix(filepath.Base(file), ".jsonl"), func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) {
					run, ok := vectorRunners[c.Function]
					if !ok {
						t.Fatalf("no runner for function %q", c.Function)
					}
					checkVector(t, c, run(t, c.Input))
				})
			}
		})
	}
	if total != 150 {
		t.Errorf("got %d vector cases, want 150", total)
	}
}

// TestVectorsIdentical guards the copy in testdata against drift from the
// shared folder, when that folder is there.
func TestVectorsIdentical(t *testing.T) {
	shared := filepath.Join("..", "..", "shared", "vectors", "e2a")
	if _, err := os.Stat(shared); err != nil {
		t.Skip("shared vectors not present")
	}
	files, _ := filepath.Glob(filepath.Join(shared, "*.jsonl"))
	for _, f := range files {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join("testdata", "vectors", filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: testdata copy differs from shared vectors", filepath.Base(f))
		}
	}
}

func checkVector(t *testing.T, c vectorCase, got vectorResult) {
	t.Helper()
	var wantErr struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(c.Output), []byte(`{"error"`)) && json.Unmarshal(c.Output, &wantErr) == nil && wantErr.Error != "" {
		if got.err == nil {
			t.Fatalf("want error %s(%q), got %s", wantErr.Error, wantErr.Message, got.out)
		}
		var de *DictError
		if !errors.As(got.err, &de) {
			t.Fatalf("want *DictError, got %T %v", got.err, got.err)
		}
		if de.PyType != wantErr.Error || de.Msg != wantErr.Message {
			t.Errorf("error = %s(%q), want %s(%q)", de.PyType, de.Msg, wantErr.Error, wantErr.Message)
		}
		return
	}
	if got.err != nil {
		t.Fatalf("unexpected error: %v", got.err)
	}
	want := decodeAny(t, c.Output)
	have := decodeAny(t, got.out)
	if path, ok := vectorEqual(want, have, "$"); !ok {
		t.Fatalf("mismatch at %s\n got: %s\nwant: %s", path, got.out, c.Output)
	}
	if got.ordered {
		for _, p := range orderedPaths(c.Output) {
			wk, gk := keysAt(t, c.Output, p), keysAt(t, got.out, p)
			if strings.Join(wk, ",") != strings.Join(gk, ",") {
				t.Errorf("key order at %q:\n got %v\nwant %v", p, gk, wk)
			}
		}
	}
}

// orderedPaths are the objects whose key order comes from a dataclass: the
// top level and the nested provenance and auth.
func orderedPaths(raw []byte) []string {
	paths := []string{""}
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) != nil {
		return nil
	}
	for _, k := range []string{"provenance", "auth"} {
		if v, ok := top[k]; ok && len(v) > 0 && v[0] == '{' {
			paths = append(paths, k)
		}
	}
	return paths
}

// keysAt returns the keys of the object at path ("" or one top-level key) in
// the order they appear in the text.
func keysAt(t *testing.T, raw []byte, path string) []string {
	t.Helper()
	if path != "" {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		raw = top[path]
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

var rfc3339UTC = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{6})?\+00:00$`)

// vectorEqual compares decoded JSON strictly (a bool is not a number, an int
// literal is not a float one) except that the nondeterministic placeholder
// matches any RFC 3339 UTC time in the reference's isoformat shape.
func vectorEqual(want, got any, path string) (string, bool) {
	switch w := want.(type) {
	case string:
		if w == nondetNow {
			s, ok := got.(string)
			if !ok || !rfc3339UTC.MatchString(s) {
				return path, false
			}
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				return path, false
			}
			return "", true
		}
		g, ok := got.(string)
		return path, ok && g == w
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return path, false
		}
		wn, _ := pyNum(w)
		gn, _ := pyNum(g)
		return path, wn.isInt == gn.isInt && pyEqual(w, g)
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := vectorEqual(wv, gv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := vectorEqual(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case bool:
		g, ok := got.(bool)
		return path, ok && g == w
	case nil:
		return path, got == nil
	}
	return path, false
}

func loadVectors(t *testing.T, file string) []vectorCase {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []vectorCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<22)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c vectorCase
		if err := json.Unmarshal(line, &c); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func decodeAny(t *testing.T, raw []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

func mustDict(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	m, err := DecodeDict(raw)
	if err != nil {
		t.Fatalf("input: %v", err)
	}
	return m
}

func mustEnvelope(t *testing.T, raw []byte) *Envelope {
	t.Helper()
	e, err := EnvelopeFromDict(mustDict(t, raw))
	if err != nil {
		t.Fatalf("EnvelopeFromDict: %v", err)
	}
	return e
}

func mustResponse(t *testing.T, raw []byte) *Response {
	t.Helper()
	r, err := ResponseFromDict(mustDict(t, raw))
	if err != nil {
		t.Fatalf("ResponseFromDict: %v", err)
	}
	return r
}

func marshalled(t *testing.T, v any, ordered bool) vectorResult {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return vectorResult{out: b, ordered: ordered}
}

// nilMap turns a nil map into an untyped nil so that it marshals as null.
func nilMap(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// testChunk builds the chunk the way the vector generator did
// (AgentResponseChunk(**d)), agent_ref and metadata included.
func testChunk(t *testing.T, v any) *AgentChunk {
	t.Helper()
	m := v.(map[string]any)
	c, err := AgentChunkFromDict(m)
	if err != nil {
		t.Fatalf("AgentChunkFromDict: %v", err)
	}
	c.AgentRef = LooseOf(m["agent_ref"])
	c.Metadata, _ = m["metadata"].(map[string]any)
	return c
}

func testAgentResponse(t *testing.T, v any) *AgentResponse {
	t.Helper()
	m := v.(map[string]any)
	a, err := AgentResponseFromDict(m)
	if err != nil {
		t.Fatalf("AgentResponseFromDict: %v", err)
	}
	a.AgentRef = LooseOf(m["agent_ref"])
	return a
}

func frameOpts(t *testing.T, m map[string]any) FrameOptions {
	t.Helper()
	o := FrameOptions{Now: fixedNow}
	o.ResponseID, _ = m["response_id"].(string)
	o.Timestamp, _ = m["timestamp"].(string)
	if n, ok := m["sequence"].(json.Number); ok {
		s, err := n.Int64()
		if err != nil {
			t.Fatal(err)
		}
		o.Sequence = s
	}
	return o
}
