package jsonlog

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

var testKey = []byte("jsonlog-test-fingerprint-key")

// Planted secrets: none may appear in any output, in any form.
var (
	sSK        = "sk-PLANTEDsk0123456789abcd"
	sGHP       = "ghp_PLANTEDghp0123456789abcdefABCDEF01"
	sGLPAT     = "glpat-PLANTEDglpat0123456789"
	sJWT       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnUExBTlRFRGp3dA"
	sBearer    = "PLANTEDbearer0123456789abcdef"
	sPassword  = "PLANTED-password-value-42"
	sHeader    = "PLANTED-header-value-77"
	sMeta      = "PLANTED-auth-meta-99"
	sRef       = "vault://PLANTED/ref/1"
	sSecretKey = "PLANTED-client-secret-5"
	sEmail     = "planted.user@example.org"
	sPhoneCN   = "13912345678"
	sPhoneIntl = "+44 20 7946 0958"
	sData      = "iVBORw0KGgoPLANTEDdataURLpayload"
	sEscSK     = "sk-ESCAPEDplanted0123456"
)

var planted = []string{sSK, sGHP, sGLPAT, sJWT, sBearer, sPassword, sHeader, sMeta, sRef, sSecretKey,
	sEmail, sPhoneCN, sPhoneIntl, sData, sEscSK}

// secretRecords plant every secret in every place the policy names.
func secretRecords() []string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return []string{
		// A request envelope: auth, params, channel_context, credential keys at depth.
		`{"protocol_version":"1.0","request_id":"req_1","session_id":"s1","method":"chat.send","params":{"text":` + q("hi "+sSK) +
			`,"prompt":` + q("use "+sJWT) + `,"query":` + q("mail "+sEmail) + `,"content_blocks":[{"type":"text","text":` + q(sGHP) +
			`},{"type":"image","data":` + q("data:image/png;base64,"+sData) + `}],"files":[{"uri":` + q("data:image/png;base64,"+sData) +
			`,"name":"x.png"}],"misc":` + q("call "+sPhoneCN+" or "+sPhoneIntl) + `,"nested":{"deeper":{"client_secret":` + q(sSecretKey) +
			`,"api-key":` + q(sSK) + `}},"escaped":"\u0073k-ESCAPEDplanted0123456"},"auth":{"method_id":"oauth","bearer_token":` + q(sBearer) +
			`,"api_key_ref":` + q(sRef) + `,"credential_ref":` + q(sRef) + `,"extra_headers":{"X-Api-Key":` + q(sHeader) +
			`,"Authorization":` + q("Bearer "+sBearer) + `},"_meta":{"note":` + q(sMeta) + `,"n":424242}},"channel_context":{"feishu_open_id":"ou_1","contact":` +
			q(sEmail) + `,"phone":` + q(sPhoneCN) + `,"password":` + q(sPassword) + `,"hdr":` + q("Authorization: Bearer "+sBearer) + `,"git":` + q("remote "+sGHP+" / "+sGLPAT) + `}}`,
		// A response chunk: secrets inside the delta, metadata legacy blobs, projections.
		`{"protocol_version":"1.0","response_id":"r1","request_id":"req_1","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00+00:00","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":` +
			q("token Bearer "+sBearer+" and "+sGLPAT+" "+sJWT) + `},"metadata":{"_e2a_wire_legacy_agent_chunk":{"content":` + q(sSK) +
			`,"token":` + q(sGHP) + `},"_e2a_wire_legacy_agent_response":` + q(`{"k":"`+sGLPAT+`"}`) + `,"user_note":` + q("reach me: "+sEmail) +
			`},"projections":{"acp":{"result":{"content":` + q(sSK) + `}}},"channel_context":{"deep":[{"x":{"secret":` + q(sSecretKey) + `}}]}}`,
		// A final response: result holds secrets, body.message too.
		`{"protocol_version":"1.0","response_id":"r2","request_id":"req_1","sequence":1,"is_final":true,"status":"failed","response_kind":"e2a.error","timestamp":"2026-03-29T12:00:01Z","provenance":{"source_protocol":"e2a"},"body":{"code":"E","message":` +
			q("upstream said "+sSK+" was rejected for "+sEmail) + `,"details":{"password":` + q(sPassword) + `,"hdr":` + q("bearer "+sBearer) + `}}}`,
		// Secrets in keys.
		`{"type":"event","event":"x","payload":{` + q(sEmail) + `:1,` + q(sSK) + `:{"a":1}}}`,
	}
}

// leaked reports which planted secrets appear in out: as they are, JSON
// escaped, base64 encoded, or in any decoded string or key of out.
func leaked(t *testing.T, out []byte) []string {
	t.Helper()
	var all bytes.Buffer
	all.Write(out)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			all.WriteString("\n" + v)
			// A string that is itself JSON (frame data, meta attribute).
			var inner any
			if json.Unmarshal([]byte(v), &inner) == nil {
				walk(inner)
			}
			if b, err := base64.StdEncoding.DecodeString(v); err == nil {
				all.WriteString("\n" + string(b))
			}
		case map[string]any:
			for k, x := range v {
				all.WriteString("\n" + k)
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("output line is not JSON: %v: %s", err, sc.Bytes())
		}
		walk(v)
	}
	hay := all.Bytes()
	var found []string
	for _, s := range planted {
		esc, _ := json.Marshal(s)
		forms := [][]byte{[]byte(s), esc[1 : len(esc)-1],
			[]byte(base64.StdEncoding.EncodeToString([]byte(s))),
			[]byte(base64.RawURLEncoding.EncodeToString([]byte(s)))}
		for _, f := range forms {
			if bytes.Contains(hay, f) {
				found = append(found, s)
				break
			}
		}
	}
	return found
}

func TestPlantedSecretsNeverSurvive(t *testing.T) {
	for _, c := range []Content{ContentMask, ContentKeep, ContentDrop} {
		t.Run(c.String(), func(t *testing.T) {
			r := NewRedactor(c, 65536, testKey)
			var buf bytes.Buffer
			w := NewWriterTo(&buf, r)
			for i, rec := range secretRecords() {
				if !json.Valid([]byte(rec)) {
					t.Fatalf("record %d is not JSON: %s", i, rec)
				}
				w.Record(jsonInfo([]byte(rec)))
				out, _, err := r.Redact(nil, []byte(rec))
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				buf.Write(append(out, '\n'))
			}
			w.Record(frameInfo(t, secretFrame(nil)))
			w.Record(frameInfo(t, secretFrame([]byte{0xff, 0xfe, ' '})))
			w.Record(frameInfo(t, secretFrame([]byte(`{"api_key":"`+sSK+`","body":{"delta":"`+sGHP+`"}}`))))
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got := leaked(t, buf.Bytes())
			if c == ContentKeep && len(got) == 1 && got[0] == sData {
				got = nil // "keep" keeps data: URLs: they are content
			}
			if len(got) > 0 {
				t.Errorf("secrets survived: %q\n%s", got, buf.Bytes())
			}
			red := w.Redactions()
			for _, rule := range []Rule{RuleBearer, RuleJWT, RuleSK, RuleGHP, RuleGLPAT, RuleCredentialKey, RuleAuth, RuleRef, RuleEmail, RulePhone} {
				if red[rule] == 0 {
					t.Errorf("rule %s never counted: %v", rule, red)
				}
			}
			if c != ContentKeep && (red[RuleContent] == 0 || red[RuleLegacyBlob] == 0 || red[RuleDataURL] == 0) {
				t.Errorf("content rules not counted under %s: %v", c, red)
			}
		})
	}
}

// secretFrame is a STREAM_CHUNK with secrets in attribute names, values,
// the meta attribute and the data; data nil means text data.
func secretFrame(data []byte) []byte {
	if data == nil {
		data = []byte("text " + sSK + " Bearer " + sBearer + " " + sEmail)
	} else if data[0] == 0xff {
		data = append(data, []byte(sSK+" "+sGHP)...)
	}
	b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, frame.FlagHasMeta, 3, []frame.Attr{
		{Name: "sid", Value: "stream-1"},
		{Name: "token", Value: sSecretKey},
		{Name: "meta", Value: `{"password":"` + sPassword + `","trace":"x"}`},
		{Name: "note", Value: "contact " + sPhoneIntl + " " + sJWT},
		{Name: sEmail, Value: "v"},
	}, data)
	if err != nil {
		panic(err)
	}
	return b
}

func jsonInfo(data []byte) *validate.RecordInfo {
	var rec e2a.Record
	class := e2a.ClassUnknown
	if e2a.ScanStd(data, &rec) == nil {
		class = e2a.Classify(&rec)
	}
	return &validate.RecordInfo{
		In:       &validate.Input{Tap: "t", Pos: validate.Position{Kind: validate.PosLine, Name: "cap.jsonl", Line: 7}, Dir: 2, Time: time.Date(2026, 3, 29, 12, 0, 0, 5, time.UTC), Data: data},
		Protocol: validate.ProtoE2A, Class: class, Kind: "x", JSON: &rec,
	}
}

func frameInfo(t *testing.T, b []byte) *validate.RecordInfo {
	t.Helper()
	f, _, err := frame.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return &validate.RecordInfo{In: &validate.Input{Tap: "mesh", Data: b}, Protocol: validate.ProtoEventMesh, Kind: "stream_chunk", Frame: &f}
}

func TestFingerprintsJoin(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	rec := `{"auth":{"bearer_token":"` + sBearer + `","extra_headers":{"Authorization":"Bearer ` + sBearer + `","Other":"Bearer ` + sBearer + `x"}},"channel_context":{"note":"header was Bearer ` + sBearer + ` ok"}}`
	out, _, err := r.Redact(nil, []byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	want := string(r.Fingerprint(nil, []byte(sBearer)))
	other := string(r.Fingerprint(nil, []byte(sBearer+"x")))
	if want == other {
		t.Fatalf("different secrets, same fingerprint %s", want)
	}
	if n := strings.Count(string(out), "******(fp:"+want+")"); n != 3 {
		t.Errorf("fingerprint %s appears %d times, want 3: %s", want, n, out)
	}
	if !strings.Contains(string(out), "******(fp:"+other+")") {
		t.Errorf("no fingerprint %s for the other secret: %s", other, out)
	}
	if !strings.Contains(string(out), `"Authorization":"Bearer ******(fp:`) {
		t.Errorf("Bearer scheme not kept: %s", out)
	}
	// Same key, another Redactor: same fingerprints; another key: different.
	if got := string(NewRedactor(ContentKeep, 0, testKey).Fingerprint(nil, []byte(sBearer))); got != want {
		t.Errorf("same key gave %s and %s", want, got)
	}
	if got := string(NewRedactor(ContentMask, 0, []byte("another-key-0123456789")).Fingerprint(nil, []byte(sBearer))); got == want {
		t.Errorf("different keys gave the same fingerprint %s", got)
	}
	// The per-process key is shared by Redactors made without a key.
	a, b := NewRedactor(ContentMask, 0, nil), NewRedactor(ContentMask, 0, nil)
	if x, y := a.Fingerprint(nil, []byte("v")), b.Fingerprint(nil, []byte("v")); !bytes.Equal(x, y) {
		t.Errorf("per-process key differs: %s %s", x, y)
	}
}

func TestKeyOrderAndNumbersPreserved(t *testing.T) {
	in := `{ "z": 1.50e+3, "a" : -0, "big": 123456789012345678901234567890, "exp": 1E400, "m": {"y": 0.1000, "b": [1, 2.0, -3e-2], "password": 7},
	"esc": "a\u00e9\n\"b", "sequence": 12, "text": "hello", "e": {}, "arr": [], "t": true, "f": false, "n": null }`
	r := NewRedactor(ContentMask, 0, testKey)
	out, _, err := r.Redact(nil, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"z":1.50e+3,"a":-0,"big":123456789012345678901234567890,"exp":1E400,"m":{"y":0.1000,"b":[1,2.0,-3e-2],"password":"******(fp:` +
		string(r.Fingerprint(nil, []byte("7"))) + `)"},"esc":"a\u00e9\n\"b","sequence":12,"text":"******(len:5)","e":{},"arr":[],"t":true,"f":false,"n":null}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
}

func TestPolicyDetails(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	cases := []struct{ in, want string }{
		// tokens counts are not secrets; a token string is.
		{`{"usage":{"input_tokens":5,"total_tokens":9,"max_token":4,"token_count":3,"tokenizer":"bpe"}}`, `{"usage":{"input_tokens":5,"total_tokens":9,"max_token":4,"token_count":3,"tokenizer":"bpe"}}`},
		{`{"access_token":"abc","idToken":"def","x":{"apiKey":"k1"}}`, `{"access_token":"******(fp:` + fp(r, "abc") + `)","idToken":"******(fp:` + fp(r, "def") + `)","x":{"apiKey":"******(fp:` + fp(r, "k1") + `)"}}`},
		// Booleans and nulls under credential keys carry nothing; empty strings stay empty.
		{`{"password":null,"secret":true,"api_key":""}`, `{"password":null,"secret":true,"api_key":""}`},
		// Masked values are not masked again.
		{`{"password":"******(fp:0123abcd)","body":{"delta":"******(len:12)"}}`, `{"password":"******(fp:0123abcd)","body":{"delta":"******(len:12)"}}`},
		// Object and array content keeps its type.
		{`{"body":{"delta":{"a":"b"},"result":[1,2]}}`, `{"body":{"delta":{"_masked":"******(len:9)"},"result":["******(len:5)"]}}`},
		// agent_ref is walked, a string *_ref is masked.
		{`{"agent_ref":{"mode":"code","id":"default"},"credential_ref":"c"}`, `{"agent_ref":{"mode":"code","id":"default"},"credential_ref":"******(fp:` + fp(r, "c") + `)"}`},
		// Phone numbers: not inside hex ids, timestamps or longer digit runs.
		{`{"t":"2026-03-29T12:00:00+08:00","id":"a13912345678b","n":"139123456789","s":"x 13912345678.","i":"(+86) 139-1234-5678","g":"tel 139 1234 5678;"}`, `{"t":"2026-03-29T12:00:00+08:00","id":"a13912345678b","n":"139123456789","s":"x ******.","i":"(******","g":"tel ******;"}`},
		// Personal data inside a rule-read id keeps a fingerprint (streams stay apart).
		{`{"request_id":"u13912345678","session_id":"a@b.com"}`, `{"request_id":"u13912345678","session_id":"******(fp:` + fp(r, "a@b.com") + `)"}`},
		{`{"request_id":"x-13912345678"}`, `{"request_id":"x-******(fp:` + fp(r, "13912345678") + `)"}`},
		// An incoming _e2atap object is replaced, not duplicated.
		{`{"a":1,"_e2atap":{"tap":"old"},"b":2}`, `{"a":1,"b":2}`},
		{`{"_e2atap":1}`, `{}`},
		// data: URLs keep their media type.
		{`{"u":"see data:image/png;base64,AAAA== here"}`, `{"u":"see data:image/png;base64,******(len:6) here"}`},
	}
	for _, c := range cases {
		out, _, err := r.Redact(nil, []byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if string(out) != c.want {
			t.Errorf("in   %s\ngot  %s\nwant %s", c.in, out, c.want)
		}
	}
	keep := NewRedactor(ContentKeep, 0, testKey)
	out, _, _ := keep.Redact(nil, []byte(`{"body":{"delta":"hello data:image/png;base64,AAAA"}}`))
	if string(out) != `{"body":{"delta":"hello data:image/png;base64,AAAA"}}` {
		t.Errorf("keep: %s", out)
	}
	drop := NewRedactor(ContentDrop, 0, testKey)
	out, _, _ = drop.Redact(nil, []byte(`{"body":{"delta":"hello","result":{"a":1},"payload":{"parts":[1]}}}`))
	if string(out) != `{"body":{"delta":"","result":{},"payload":{"parts":[]}}}` {
		t.Errorf("drop: %s", out)
	}
}

func fp(r *Redactor, v string) string { return string(r.Fingerprint(nil, []byte(v))) }

func TestPaths(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	_, paths, err := r.Redact(nil, []byte(`{"auth":{"bearer_token":"abcdefgh"},"params":{"content_blocks":[1],"files":[{"uri":"data:a/b,xyz"},{"uri":"data:a/b,xyz"}]},"we\"ird":"a@b.cn"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"auth.bearer_token", "params.content_blocks", "params.files[].uri", `we"ird`}
	if strings.Join(paths, "|") != strings.Join(want, "|") {
		t.Errorf("paths %q, want %q", paths, want)
	}
}

func TestMinimumKeysForResponses(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentMask, 0, testKey))
	rec := []byte(`{"protocol_version":"1.0","request_id":"q","status":"in_progress","response_kind":"e2a.chunk","body":{"delta_kind":"text","delta":"x"}}`)
	ri := jsonInfo(rec)
	w.Record(ri)
	// Not a response: nothing added.
	w.Record(jsonInfo([]byte(`{"method":"chat.send","request_id":"q","params":{}}`)))
	w.Flush()
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(lines[0], &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range minimumKeys {
		if _, ok := m[k]; !ok {
			t.Errorf("minimum key %s missing: %s", k, lines[0])
		}
	}
	if string(m["sequence"]) != "null" || string(m["request_id"]) != `"q"` {
		t.Errorf("got %s", lines[0])
	}
	// The added nulls keep the verdict: null is missing for e2a.required.
	var a, b e2a.Record
	_ = e2a.ScanStd(rec, &a)
	_ = e2a.ScanStd(lines[0], &b)
	if e2a.Classify(&a) != e2a.Classify(&b) {
		t.Errorf("class changed")
	}
	for _, f := range []e2a.Field{e2a.FSequence, e2a.FIsFinal, e2a.FTimestamp, e2a.FResponseID} {
		if a.Fields[f].Present() || b.Fields[f].Present() {
			t.Errorf("%s present", e2a.FieldKeys[f])
		}
	}
	if bytes.Contains(lines[1], []byte("null")) {
		t.Errorf("request got minimum keys: %s", lines[1])
	}
	if !bytes.Contains(lines[0], []byte(`"_e2atap":{"tap":"t","direction":"downstream","time":"2026-03-29T12:00:00.000000005Z","source":"t:cap.jsonl:7","kind":"x","redacted":["body.delta"]}`)) {
		t.Errorf("_e2atap: %s", lines[0])
	}
}

// ruleFields are the Record values the rules compare by value.
var ruleFields = []e2a.Field{e2a.FSequence, e2a.FIsFinal, e2a.FStatus, e2a.FResponseKind, e2a.FRequestID, e2a.FResponseID,
	e2a.FSessionID, e2a.FMethod, e2a.FJSONRPCID, e2a.FProtocolVersion, e2a.FTimestamp, e2a.FType, e2a.FEvent, e2a.FJSONRPC,
	e2a.FExtMethod, e2a.FIdentityOrigin, e2a.FID, e2a.FSpecVersion, e2a.FIsStream, e2a.FOk, e2a.FIsComplete, e2a.FReqMethod, e2a.FChannelID}

var ruleSubs = []e2a.Sub{e2a.SBodyDeltaKind, e2a.SBodyBranch, e2a.SBodySessionUpdate, e2a.SBodyEventType, e2a.SBodyCode,
	e2a.SBodyExtMethod, e2a.SMetaServerPush, e2a.SParamsIntent, e2a.SErrorCode, e2a.SErrorMessage, e2a.STraceparent}

// sameForRules compares what the rules read of two scans: every type (an
// added null for a missing minimum key counts as absent), the values of
// the fields and subs the rules compare, and FileWithoutURI.
func sameForRules(t *testing.T, name string, a, b *e2a.Record) {
	t.Helper()
	absentLike := func(v e2a.JSONType) e2a.JSONType {
		if v == e2a.Null {
			return e2a.Absent
		}
		return v
	}
	for f := range a.Fields {
		ta, tb := a.Fields[f].Type, b.Fields[f].Type
		if ta != tb && absentLike(ta) != absentLike(tb) {
			t.Errorf("%s: %s type %s -> %s", name, e2a.FieldKeys[f], ta, tb)
		}
	}
	for s := range a.Subs {
		if a.Subs[s].Type != b.Subs[s].Type {
			t.Errorf("%s: %s type %s -> %s", name, e2a.SubPaths[s], a.Subs[s].Type, b.Subs[s].Type)
		}
	}
	for _, f := range ruleFields {
		va, vb := a.Fields[f], b.Fields[f]
		if va.Present() && (string(va.Str) != string(vb.Str) || va.Bool != vb.Bool) {
			t.Errorf("%s: %s %q -> %q", name, e2a.FieldKeys[f], va.Str, vb.Str)
		}
	}
	for _, s := range ruleSubs {
		va, vb := a.Subs[s], b.Subs[s]
		if string(va.Str) != string(vb.Str) || va.Bool != vb.Bool {
			t.Errorf("%s: %s %q -> %q", name, e2a.SubPaths[s], va.Str, vb.Str)
		}
	}
	if a.FileWithoutURI != b.FileWithoutURI {
		t.Errorf("%s: FileWithoutURI %v -> %v", name, a.FileWithoutURI, b.FileWithoutURI)
	}
	if e2a.Classify(a) != e2a.Classify(b) {
		t.Errorf("%s: class %s -> %s", name, e2a.Classify(a), e2a.Classify(b))
	}
}

func replayLines(t *testing.T) (names []string, lines []string) {
	f, err := os.ReadFile("../../validate/testdata/vectors/e2a_streams.jsonl")
	if err != nil {
		t.Fatal("vectors:", err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(f), []byte("\n")) {
		var c struct {
			Name  string
			Lines []string
		}
		if err := json.Unmarshal(l, &c); err != nil {
			t.Fatal(err)
		}
		for i, x := range c.Lines {
			names = append(names, c.Name+"#"+strconv.Itoa(i+1))
			lines = append(lines, x)
		}
	}
	// The reference vectors' inputs: more shapes of requests and responses.
	more, _ := filepath.Glob("../../e2a/testdata/vectors/*.jsonl")
	for _, p := range more {
		b, _ := os.ReadFile(p)
		for i, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var c struct{ Input json.RawMessage }
			if json.Unmarshal(l, &c) == nil && len(c.Input) > 0 && c.Input[0] == '{' {
				names = append(names, filepath.Base(p)+"#"+strconv.Itoa(i+1))
				lines = append(lines, string(c.Input))
			}
		}
	}
	return names, lines
}

func TestReplayKeepsWhatRulesRead(t *testing.T) {
	names, lines := replayLines(t)
	if len(lines) < 100 {
		t.Fatalf("only %d vector lines", len(lines))
	}
	for _, c := range []Content{ContentMask, ContentDrop, ContentKeep} {
		for _, max := range []int{65536, 1024} {
			var buf bytes.Buffer
			w := NewWriterTo(&buf, NewRedactor(c, max, testKey))
			for _, l := range lines {
				w.Record(jsonInfo([]byte(l)))
			}
			w.Flush()
			out := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
			if len(out) != len(lines) {
				t.Fatalf("%d lines out for %d in", len(out), len(lines))
			}
			for i, l := range lines {
				var a, b e2a.Record
				errA, errB := e2a.ScanStd([]byte(l), &a), e2a.ScanStd(out[i], &b)
				if errA != nil {
					if !bytes.Contains(out[i], []byte(`"invalid":true`)) || bytes.Contains(out[i], []byte(l)) {
						t.Errorf("%s: undecodable line logged as %s", names[i], out[i])
					}
					continue
				}
				if errB != nil {
					t.Fatalf("%s: output not JSON: %v: %s", names[i], errB, out[i])
				}
				sameForRules(t, c.String()+"/"+names[i], &a, &b)
			}
		}
	}
}

func TestTruncation(t *testing.T) {
	big := strings.Repeat("x", 40000)
	rec := `{"protocol_version":"1.0","response_id":"r","request_id":"q","sequence":3,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a","details":{"blob":"` + big + `"}},"body":{"delta_kind":"text","delta":"` + big + `"},"metadata":{"_jiuwenswarm_server_push":false,"x":["` + big + `"]},"params":{"intent":"cancel","files":[{"uri":"u","name":"` + big + `"}]}}`
	r := NewRedactor(ContentKeep, 65536, testKey)
	var buf bytes.Buffer
	w := NewWriterTo(&buf, r)
	w.Record(jsonInfo([]byte(rec)))
	w.Flush()
	line := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	meta := m["_e2atap"]
	delete(m, "_e2atap")
	rest, _ := json.Marshal(m)
	if len(rest) > 65536 {
		t.Errorf("record is %d bytes after truncation", len(rest))
	}
	if !bytes.Contains(meta, []byte(`"truncated":true`)) {
		t.Errorf("no truncated marker: %s", meta)
	}
	var a, b e2a.Record
	_ = e2a.ScanStd([]byte(rec), &a)
	_ = e2a.ScanStd(line, &b)
	sameForRules(t, "truncated", &a, &b)
	if w.Redactions()[RuleTruncated] == 0 {
		t.Error("truncation not counted")
	}
	// Masking stops as soon as it fits: three of the four big values.
	if n := bytes.Count(line, []byte(big)); n != 1 {
		t.Errorf("%d big values kept, want 1", n)
	}
}

func TestInvalidInputIsNeverLogged(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentMask, 0, testKey))
	bad := []string{`{"password":"` + sPassword + `"`, `not json ` + sSK, `[1,"` + sSK + `"]`, `"` + sSK + `"`, ``}
	for _, b := range bad {
		w.Record(jsonInfo([]byte(b)))
	}
	w.Record(&validate.RecordInfo{In: &validate.Input{Data: []byte("\xef\x01" + sSK)}, Protocol: validate.ProtoEventMesh, Kind: "invalid"})
	w.Flush()
	if got := leaked(t, buf.Bytes()); len(got) > 0 {
		t.Errorf("leaked %q", got)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	for i, l := range lines {
		if !bytes.HasPrefix(l, []byte(`{"_e2atap":`)) || !bytes.Contains(l, []byte(`"invalid":true,"length":`)) {
			t.Errorf("line %d: %s", i, l)
		}
	}
	if !bytes.Contains(lines[2], []byte(`"reason":"not_object"`)) {
		t.Errorf("array not marked not_object: %s", lines[2])
	}
}

func TestRedactErrors(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	dst := []byte("keep")
	out, _, err := r.Redact(dst, []byte(`{"a":`))
	var se *SyntaxError
	if !errors.As(err, &se) || !errors.Is(err, ErrInvalidJSON) || string(out) != "keep" {
		t.Errorf("got %q %v", out, err)
	}
	if _, _, err := r.Redact(nil, []byte(` [1] `)); !errors.Is(err, e2a.ErrNotObject) {
		t.Errorf("array: %v", err)
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	if _, _, err := r.Redact(nil, []byte(`{"a":`+deep+`}`)); err == nil {
		t.Error("nesting over 10000 accepted")
	}
}

func TestFrames(t *testing.T) {
	for _, c := range []Content{ContentMask, ContentKeep} {
		var buf bytes.Buffer
		w := NewWriterTo(&buf, NewRedactor(c, 0, testKey))
		w.Record(frameInfo(t, secretFrame(nil)))
		w.Record(frameInfo(t, secretFrame([]byte{0xff, 0xfe, ' '})))
		w.Flush()
		lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
		var m struct {
			MsgType, Flags, Seq int
			Attrs               map[string]string
			Data                string
			DataEncoding        string         `json:"data_encoding"`
			E                   map[string]any `json:"_e2atap"`
		}
		if err := json.Unmarshal(lines[0], &m); err != nil {
			t.Fatal(err)
		}
		if m.MsgType != 2 || m.Flags != 4 || m.Seq != 3 || m.Attrs["sid"] != "stream-1" || m.E["format"] != "frame" {
			t.Errorf("%s: %s", c, lines[0])
		}
		if !strings.HasPrefix(m.Attrs["meta"], `{"password":"******(fp:`) {
			t.Errorf("meta not redacted as JSON: %q", m.Attrs["meta"])
		}
		if c == ContentMask && !strings.HasPrefix(m.Data, "******(len:") {
			t.Errorf("data not masked: %q", m.Data)
		}
		if c == ContentKeep {
			if !strings.HasPrefix(m.Data, "text ******(fp:") {
				t.Errorf("text data: %q", m.Data)
			}
			var b struct {
				Data string
				Enc  string `json:"data_encoding"`
			}
			_ = json.Unmarshal(lines[1], &b)
			raw, err := base64.StdEncoding.DecodeString(b.Data)
			if b.Enc != "base64" || err != nil || !bytes.HasPrefix(raw, []byte{0xff, 0xfe, ' '}) {
				t.Errorf("binary data: %s", lines[1])
			}
		}
		if got := leaked(t, buf.Bytes()); len(got) > 0 {
			t.Errorf("%s: leaked %q", c, got)
		}
	}
}

func TestFindingWriter(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFindingWriterTo(&buf, NewRedactor(ContentMask, 0, testKey))
	fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "u-" + sPhoneCN, Source: "cap.jsonl:3",
		Message: "value " + sSK + " from " + sEmail, Tap: "ws", Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	fw.Finding(&validate.Finding{Rule: "e2a.missing_final", Severity: validate.Warning, Stream: "q1", Source: "f:1", Message: "no final"})
	// A stream id that spells a token with a \u00XX escape, a message
	// with an Oracle connect string URL-encoded twice.
	fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: `xoxb\u002d12345678901-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx`,
		Source: "f:2", Message: "next=dsn%3Dscott%252FTiger9PwQx%2540%252F%252Fdb%253A1521%252FORCL"})
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := leaked(t, buf.Bytes()); len(got) > 0 {
		t.Errorf("leaked %q: %s", got, buf.Bytes())
	}
	for _, core := range []string{"AbCdEfGhIjKlMnOpQrStUvWx", "Tiger9PwQx"} {
		if bytes.Contains(buf.Bytes(), []byte(core)) {
			t.Errorf("%.4s… shows in the findings", core)
		}
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	want := `{"rule":"e2a.missing_final","severity":"warning","stream":"q1","source":"f:1","message":"no final"}`
	if string(lines[1]) != want {
		t.Errorf("got  %s\nwant %s", lines[1], want)
	}
	var f map[string]string
	if err := json.Unmarshal(lines[0], &f); err != nil {
		t.Fatal(err)
	}
	if f["severity"] != "error" || f["tap"] != "ws" || f["time"] != "2026-01-02T03:04:05Z" || !strings.HasPrefix(f["message"], "value ******(fp:") {
		t.Errorf("got %s", lines[0])
	}
}

func TestConcurrentWriters(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentMask, 0, testKey))
	recs := secretRecords()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				w.Record(jsonInfo([]byte(recs[(g+i)%len(recs)])))
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	if len(lines) != 800 || w.Lines() != 800 {
		t.Fatalf("%d lines, Lines()=%d", len(lines), w.Lines())
	}
	for _, l := range lines {
		if !json.Valid(l) {
			t.Fatalf("not JSON: %s", l)
		}
	}
	if got := leaked(t, buf.Bytes()); len(got) > 0 {
		t.Errorf("leaked %q", got)
	}
}

func TestRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	cfg := DefaultConfig()
	cfg.Path, cfg.RotateBytes, cfg.Keep = path, 2000, 2
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 60
	for i := 0; i < n; i++ {
		w.Record(jsonInfo([]byte(`{"request_id":"q","sequence":` + strconv.Itoa(i) + `,"body":{"delta":"0123456789"}}`)))
	}
	if err := w.Close(); err != nil || w.Err() != nil {
		t.Fatal(err, w.Err())
	}
	if _, err := os.Stat(path + ".3"); !os.IsNotExist(err) {
		t.Errorf("more than Keep files: %v", err)
	}
	var seqs []int
	for _, p := range []string{path + ".2", path + ".1", path} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 2000 {
			t.Errorf("%s is %d bytes", p, len(b))
		}
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var m struct{ Sequence int }
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			seqs = append(seqs, m.Sequence)
		}
	}
	// The newest lines, in order, none lost between the kept files.
	if seqs[len(seqs)-1] != n-1 {
		t.Errorf("last line %d", seqs[len(seqs)-1])
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("lines not contiguous: %v", seqs)
		}
	}
	// Reopening appends to the existing file.
	w2, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.Stat(path)
	w2.Record(jsonInfo([]byte(`{"x":1}`)))
	w2.Close()
	after, _ := os.Stat(path)
	if after.Size() <= before.Size() && after.Size() > 200 {
		t.Errorf("reopen did not append: %d -> %d", before.Size(), after.Size())
	}
	w2.Record(jsonInfo([]byte(`{"x":1}`)))
	if !errors.Is(w2.Err(), ErrClosed) || w2.Failed() != 1 {
		t.Errorf("write after close: %v %d", w2.Err(), w2.Failed())
	}
}

func TestConfig(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Config{Content: "shred", MaxRecordBytes: 10, RotateBytes: -1, Keep: -1, FingerprintKey: []byte("short")}
	err := bad.Validate()
	for _, want := range []string{"log.path", "log.content", "log.max_record_bytes", "log.rotate_bytes", "log.keep", "log.fingerprint_key"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate does not name %s: %v", want, err)
		}
	}
	c.FingerprintKey = []byte("a-very-secret-fingerprint-key")
	var b bytes.Buffer
	_ = json.NewEncoder(&b).Encode(c.LogValue().String())
	if strings.Contains(b.String(), "a-very-secret") {
		t.Errorf("LogValue shows the key: %s", b.String())
	}
}

func TestKeyClasses(t *testing.T) {
	cases := map[string]keyKind{
		"password": keyCredential, "db_password": keyCredential, "X-Api-Key": keyCredential, "apiKey": keyCredential,
		"APIKey": keyCredential, "client_secret": keyCredential, "Authorization": keyCredential, "private_key": keyCredential,
		"credentials": keyCredential, "Cookie": keyCredential,
		"token": keyToken, "access_token": keyToken, "accessToken": keyToken, "x-auth-token": keyToken, "refreshtoken": keyToken,
		"tokens": keyPlain, "max_tokens": keyPlain, "input_tokens": keyPlain, "token_count": keyPlain, "tokenizer": keyPlain,
		"secretary": keyPlain, "public_key": keyPlain, "key": keyPlain, "keyword": keyPlain,
		"api_key_ref": keyRef, "credential_ref": keyRef, "agent_ref": keyRef, "body_ref": keyRef,
		"email": keyEmail, "phone": keyPhone, "mobile": keyPhone, "phone_verified": keyPlain,
	}
	for k, want := range cases {
		if got := classifyKey([]byte(k)); got != want {
			t.Errorf("%s: %d, want %d", k, got, want)
		}
	}
}

// TestEmptyContentStaysEmpty: an empty object or array where content would
// be masked is left as it is (nothing to hide, nothing counted).
func TestEmptyContentStaysEmpty(t *testing.T) {
	r := NewRedactor(ContentMask, 65536, testKey)
	in := `{"protocol_version":"1.0","body":{"result":{}},"projections":{ },"params":{"content_blocks":[]}}`
	out, paths, err := r.Redact(nil, []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"protocol_version":"1.0","body":{"result":{}},"projections":{},"params":{"content_blocks":[]}}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if len(paths) != 0 {
		t.Errorf("redacted paths %v for empty content", paths)
	}
	out, _, _ = r.Redact(nil, []byte(`{"body":{"result":{"a":1}}}`))
	if !strings.Contains(string(out), `"result":{"_masked":"******(len:7)"}`) {
		t.Errorf("non-empty content not masked: %s", out)
	}
}

// A CloudEvent's data is its payload: text is content (a legacy stream
// chunk carries model output there), a JSON payload is walked with the
// usual policy; other records' "data" keys are left to the key rules.
func TestCloudEventDataIsContent(t *testing.T) {
	write := func(c Content, rec string) string {
		var buf bytes.Buffer
		w := NewWriterTo(&buf, NewRedactor(c, 65536, testKey))
		var r e2a.Record
		if err := e2a.Scan([]byte(rec), &r); err != nil {
			t.Fatal(err)
		}
		w.Record(&validate.RecordInfo{In: &validate.Input{Data: []byte(rec), Tap: "mesh"}, Protocol: validate.ProtoEventMesh, Class: e2a.Classify(&r), JSON: &r, Kind: "cloudevent"})
		w.Flush()
		return buf.String()
	}
	text := `{"specversion":"1.0","id":"e1","source":"/agent","type":"stream.chunk","datacontenttype":"text/plain","emsessionid":"s1","data":"the model says hello"}`
	if got := write(ContentMask, text); strings.Contains(got, "model says") || !strings.Contains(got, `"data":"******(len:20)"`) {
		t.Errorf("text data not masked: %s", got)
	}
	if got := write(ContentKeep, text); !strings.Contains(got, `"data":"the model says hello"`) {
		t.Errorf("text data not kept under keep: %s", got)
	}
	obj := `{"specversion":"1.0","id":"e2","source":"/agent","type":"x","datacontenttype":"application/json","data":{"delta":"plan","kind":"chunk","n":3}}`
	got := write(ContentMask, obj)
	if !strings.Contains(got, `"data":{"delta":"******(len:4)","kind":"chunk","n":3}`) {
		t.Errorf("JSON data not walked: %s", got)
	}
	// Not a CloudEvent: a "data" key is not content by itself.
	resp := `{"protocol_version":"1.0","response_id":"r","request_id":"q","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":"x"},"metadata":{"data":"kept"}}`
	var r e2a.Record
	_ = e2a.Scan([]byte(resp), &r)
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentMask, 65536, testKey))
	w.Record(jsonInfo([]byte(resp)))
	w.Flush()
	if !strings.Contains(buf.String(), `"data":"kept"`) {
		t.Errorf("a response's metadata.data was masked: %s", buf.String())
	}
}

// TestRedactSpelledShapes: a value or key that is JSON text spelling a
// shape with \u00XX escapes ("\u0041KIA…" once decoded), or a URL-encoded
// text encoded again ("%253A%252F%252F…%2540"), is written masked in its
// unescaped form, as redact.Masker.Text masks text; such a string with
// nothing to mask is written as it was.
func TestRedactSpelledShapes(t *testing.T) {
	r := NewRedactor(ContentKeep, 0, testKey)
	rec := `{"a":"aws key \\u0041KIAQZ3X7ERUWYPB5TD5","b":"next=redis%253A%252F%252F%253AyW0FAmkmTstzlu%2540cache%253A6379",` +
		`"p\\u0061ssword: Zq8pLm2NwQx":true,"c":"plain \\u00e9t\\u0061 100%2540"}`
	out, _, err := r.Redact(nil, []byte(rec))
	if err != nil {
		t.Fatal(err)
	}
	for _, core := range []string{"QZ3X7ERUWYPB5TD5", "yW0FAmkmTstzlu", "Zq8pLm2NwQx"} {
		if bytes.Contains(out, []byte(core)) {
			t.Errorf("%.4s… shows: %s", core, out)
		}
	}
	if !bytes.Contains(out, []byte(`"c":"plain \\u00e9t\\u0061 100%2540"`)) {
		t.Errorf("a string with nothing to mask was rewritten: %s", out)
	}
	if !json.Valid(out) {
		t.Errorf("invalid: %s", out)
	}
}

// TestFindingWriterSourceNum: the number at a finding's source's end
// (SourceNum: a Kafka offset, a line) is printed as it is; the text before
// it is redacted. Redacted whole, an eleven-digit offset was masked as a
// phone number.
func TestFindingWriterSourceNum(t *testing.T) {
	var buf bytes.Buffer
	fw := NewFindingWriterTo(&buf, NewRedactor(ContentMask, 0, testKey))
	fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "q1", Source: "mesh:agent.out/3/13800138000", SourceNum: 11, Message: "m"})
	fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "q1", Source: "mesh:u-" + sPhoneCN + "/3/7", SourceNum: 1, Message: "m"})
	fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "q1", Source: "mesh:agent.out/3/13800138000", Message: "m"})
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	var srcs []string
	for _, l := range lines {
		var f map[string]string
		if err := json.Unmarshal(l, &f); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		srcs = append(srcs, f["source"])
	}
	if srcs[0] != "mesh:agent.out/3/13800138000" {
		t.Errorf("the offset is not printed as it is: %q", srcs[0])
	}
	if strings.Contains(srcs[1], sPhoneCN) || !strings.HasSuffix(srcs[1], "/3/7") {
		t.Errorf("the text before the number is not redacted: %q", srcs[1])
	}
	if !strings.Contains(srcs[2], "******") {
		t.Errorf("premise: the whole source redacted masks the offset: %q", srcs[2])
	}
}
