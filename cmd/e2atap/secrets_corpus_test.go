package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
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

	"github.com/gorilla/websocket"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/internal/secretaudit"
)

// The planted-secret corpus of issue 9: every shape of the issue, in every
// place of requests and responses, through every output of the real
// binary. The shapes are one table; a shape that today's detector cannot
// see is named in expectAfterMerge (the detection work of branch
// h-sec-detect), and its leaks are reported as a log line instead of a
// failure. The plumbing (every output passes the one policy) is proven by
// the shapes that are detectable today: for them every output must have
// zero hits, and equal values must carry equal fingerprints everywhere.

// corpusShape is one credential or personal-data shape.
type corpusShape struct {
	name  string
	value string   // as planted
	cores []string // what must never appear in an output (the secret part of value)
}

// corpusFPKey is the fingerprint key of every process of the corpus tests
// (E2ATAP_FINGERPRINT_KEY), so that marks can be compared across them.
const corpusFPKey = "corpus-fingerprint-key-0123456789"

var corpusB64 = base64.StdEncoding.EncodeToString([]byte("sk-proj-CRPSb64inner0123456789"))

var corpusShapes = []corpusShape{
	// Detected today (exporters/jsonlog + e2a.FindCredential).
	{"bearer", "Bearer tokBRR7f3Kq9Zx2LmN8pQ4", []string{"tokBRR7f3Kq9Zx2LmN8pQ4"}},
	{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjb3JwdXMifQ.Q29ycHVzU2lnbmF0dXJl", []string{"eyJzdWIiOiJjb3JwdXMifQ", "Q29ycHVzU2lnbmF0dXJl"}},
	{"sk", "sk-proj-CRPS7a8b9c0d1e2f3g4h", []string{"CRPS7a8b9c0d1e2f3g4h"}},
	{"ghp", "ghp_CRPS0123456789abcdefghijKLMN", []string{"CRPS0123456789abcdefghijKLMN"}},
	{"glpat", "glpat-CRPSgl0123456789abcd", []string{"CRPSgl0123456789abcd"}},
	{"email", "corpus.leak@example.org", []string{"corpus.leak@example.org", "corpus.leak"}},
	{"cn_mobile", "13987654321", []string{"13987654321"}},
	{"intl_phone", "+8613987654322", []string{"8613987654322", "13987654322"}},
	{"basic_auth_url", "https://alice:CRPSpw77xq@example.com/path", []string{"CRPSpw77xq"}},
	// Shapes the issue lists that today's detector does not know.
	{"aws_access_key_id", "AKIACRPS7EXAMPLE4XYZ", []string{"AKIACRPS7EXAMPLE4XYZ"}},
	{"aws_secret", "aws_secret_access_key=CRPSwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", []string{"CRPSwJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"}},
	{"slack_bot", "xoxb-1234567890-1234567890123-CRPSabcdefghijklmnopqrst", []string{"CRPSabcdefghijklmnopqrst"}},
	{"slack_user", "xoxp-1234567890-1234567890123-CRPSzyxwvutsrqponmlkji", []string{"CRPSzyxwvutsrqponmlkji"}},
	{"stripe_live", "sk_live_CRPS51Hx8dA2b3c4d5e6f7g8h9", []string{"CRPS51Hx8dA2b3c4d5e6f7g8h9"}},
	{"stripe_test", "sk_test_CRPS4eC39HqLyjWDarjtT1zdp7dc", []string{"CRPS4eC39HqLyjWDarjtT1zdp7dc"}},
	{"stripe_restricted", "rk_live_CRPS9aB8cD7eF6gH5iJ4kL3mN2", []string{"CRPS9aB8cD7eF6gH5iJ4kL3mN2"}},
	{"google_api_key", "AIzaSyCRPS-1234567890abcdefghijklmnopqr", []string{"SyCRPS-1234567890abcdefghijklmnopqr"}},
	{"github_oauth", "gho_CRPSoauth56789abcdefghijklmnopqrstuv", []string{"CRPSoauth56789abcdefghijklmnopqrstuv"}},
	{"github_server", "ghs_CRPS9876543210abcdefghijklmnopqrstuv", []string{"CRPS9876543210abcdefghijklmnopqrstuv"}},
	{"github_user", "ghu_CRPS1357924680abcdefghijklmnopqrstuv", []string{"CRPS1357924680abcdefghijklmnopqrstuv"}},
	{"github_pat", "github_pat_11CRPS0123456789abcdef_ghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV", []string{"11CRPS0123456789abcdef_ghijklmnop"}},
	{"pem_private_key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpCRPSAIBAAKCAQEAx7YbQ2Lm\nN8pQ4tokBRRCRPSline2abcdef\n-----END RSA PRIVATE KEY-----", []string{"MIIEpCRPSAIBAAKCAQEAx7YbQ2Lm", "N8pQ4tokBRRCRPSline2abcdef"}},
	{"authorization_basic", "Authorization: Basic Q1JQUzp1c2VyOnBhc3N3b3Jk", []string{"Q1JQUzp1c2VyOnBhc3N3b3Jk"}},
	{"authorization_other", "Authorization: Token CRPStok9f8e7d6c5b4a3", []string{"CRPStok9f8e7d6c5b4a3"}},
	{"cookie", "Cookie: session=CRPScookie7a6b5c4d3e2f1", []string{"CRPScookie7a6b5c4d3e2f1"}},
	{"set_cookie", "Set-Cookie: sid=CRPSsetc9z8y7x6w5v4u; HttpOnly", []string{"CRPSsetc9z8y7x6w5v4u"}},
	{"private_key_pair", `private_key: "CRPSpriv0123456789abcdef"`, []string{"CRPSpriv0123456789abcdef"}},
	{"url_token", "https://api.example.net/v1?token=CRPSurltok1234567890", []string{"CRPSurltok1234567890"}},
	{"access_token", "access_token=CRPSacc0123456789abcd", []string{"CRPSacc0123456789abcd"}},
	{"url_api_key", "https://maps.example.net/api?api_key=CRPSapik0123456789", []string{"CRPSapik0123456789"}},
	{"password_pair", "password=CRPSpass-hunter2-9876", []string{"CRPSpass-hunter2-9876"}},
	{"api_key_pair", "api_key: CRPSapikc0123456789xyz", []string{"CRPSapikc0123456789xyz"}},
	{"bearer_colon", "Bearer: CRPSbcolon0123456789abc", []string{"CRPSbcolon0123456789abc"}},
	{"cn_id_number", "11010519491231002X", []string{"11010519491231002X"}},
	{"base64_token", corpusB64, []string{corpusB64}},
	{"sk_after_dash", "idsk-sk-proj-CRPSdash0123456789", []string{"CRPSdash0123456789"}},
	{"url_userinfo_nodot", "nats://natsuser:CRPSnatspw99@mesh:4222", []string{"CRPSnatspw99"}},
	// Shapes the first corpus did not have.
	{"npm", "npm_crpsabcdefghijklmnopqrstuvwxyz012345", []string{"crpsabcdefghijklmnopqrstuvwxyz012345"}},
	{"telegram", "bot 123456789:AACRPSTcvCH1vGWJxfSeofSAs0K5PALDsaw", []string{"AACRPSTcvCH1vGWJxfSeofSAs0K5PALDsaw"}},
	{"huggingface", "hf_CRPSabcdefghijklmnopqrstuvwxyzAB", []string{"CRPSabcdefghijklmnopqrstuvwxyzAB"}},
	{"twilio", "SKc0ffee0123456789abcdef0123456789", []string{"c0ffee0123456789abcdef0123456789"}},
	{"glued_ghp", "run1_ghp_CRPSglued456789abcdefghijKLMN", []string{"CRPSglued456789abcdefghijKLMN"}},
	{"url_encoded_pair", "q=password%3DCRPSencpw0123%26x%3D1", []string{"CRPSencpw0123"}},
	{"card", "4111 1111 1111 1111", []string{"4111 1111 1111 1111"}},
	// Values glued to a suffix, as ids made of them are ("<email>-842"):
	// found by the broker corpus in a Nats-Msg-Id logged on purpose.
	{"email_suffix", "corpus.sfx@example.org-842", []string{"corpus.sfx@example.org", "corpus.sfx"}},
	{"email_label_suffix", "corpus.dotx@example.org.x", []string{"corpus.dotx@example.org", "corpus.dotx"}},
	{"intl_phone_suffix", "+8613987654323-876", []string{"8613987654323", "13987654323"}},
	// A broker address with credentials and no scheme (Kafka, Redis).
	{"broker_userinfo", "bus:CRPSbrokerpw77@kafka-1:9092", []string{"CRPSbrokerpw77"}},
	// An AWS key id glued to more key characters: the whole run is masked.
	{"aws_glued", "AKIACRPS7EXAMPLE4XYZ1", []string{"AKIACRPS7EXAMPLE4XYZ1", "CRPS7EXAMPLE4XYZ1"}},
	// A credential-named key with a digit glued in front.
	{"digit_glued_key", "1private_key: CRPSdgtkeyhunterpw", []string{"CRPSdgtkeyhunterpw"}},
	// Its half split across two chunks is cut just before the ':' (the
	// second chunk, ":password@host:9092", is masked alone).
	{"broker_userinfo_cut", "corpusbrokeruserabcdefg:CRPSbkpw5@kafka-1:9092", []string{"CRPSbkpw5"}},
	{"twilio_glued", "sid-SKc0ffee0123456789abcdef0123456780-1437", []string{"c0ffee0123456789abcdef0123456780"}},
	// h-secrets3's shapes (sweep3 and the gaps it closed), also through
	// the ws, NATS and Kafka taps (record ids, Kafka keys, NATS headers)
	// and the spans.
	{"doppler", "dp.pt.CRPSdoppler0123456789abcdefghijKLMNOPQRSTu", []string{"CRPSdoppler0123456789abcdefghijKLMNOPQRSTu"}},
	{"dynatrace", "dt0c01.CRPS4XYZ0123456789ABCDEF.CRPSDYNA0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKL", []string{"CRPSDYNA0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKL"}},
	{"jfrog", "AKCpCRPSZqumpm08hsE8JNpjJOQGa2rb19FlY0mG1ylvuhfJXqIEnomef2mSJ5CMTIeg1ZTVnV", []string{"CRPSZqumpm08hsE8JNpjJOQGa2rb19FlY0mG1ylvuhfJXqIEnomef2mSJ5CMTIeg1ZTVnV"}},
	{"pgpass", "db.corpus.example:5432:orders:app:CRPSpgpass77x", []string{"CRPSpgpass77x"}},
	{"oracle", "scott/CRPSoracle77x@//db.example.com:1521/ORCLPDB1", []string{"CRPSoracle77x"}},
	{"fly", "FlyV1 fm2_CRPSfly0123456789abcdefghijKLMNOPQRSTuvwxyz0123456789abcdefghijKLMN==", []string{"CRPSfly0123456789abcdefghijKLMNOPQRSTuvwxyz0123456789abcdefghijKLMN"}},
	{"sqlcmd", "sqlcmd -S db -U sa -P CRPSsqlcmd77x -Q x", []string{"CRPSsqlcmd77x"}},
	{"render", "rnd_CRPSrender0123456789abcdefghijKL", []string{"CRPSrender0123456789abcdefghijKL"}},
	// h-secrets5's shapes (sweep5), also through the ws, NATS and Kafka
	// taps and the spans.
	{"honeycomb", "X-Honeycomb-Team: CRPShoney7Zq8pLm2Nw4Ab", []string{"CRPShoney7Zq8pLm2Nw4Ab"}},
	{"easypost", "EZAKCRPSNqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63XykWZeiNNC", []string{"CRPSNqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63XykWZeiNNC"}},
	{"scalingo", "tk-us-crpsiiaannkksum8nlmytbx0kjqevtavetwt4ul44ldqbwzb", []string{"crpsiiaannkksum8nlmytbx0kjqevtavetwt4ul44ldqbwzb"}},
	{"teams_webhook", "https://contoso.webhook.office.com/webhookb2/3f2a1b4c-1111-4222-8333-944455556666@7e3f795e-69df-4f5a-bcc9-aaa8b34ebd4e/IncomingWebhook/c0ffee0123456789abcdef0123456789/3f2a1b4c-1111-4222-8333-944455556666",
		[]string{"c0ffee0123456789abcdef0123456789"}},
	{"smbclient", "smbclient //fs01/share -U corp%CRPSsmbPw77x -c ls", []string{"CRPSsmbPw77x"}},
	{"htpasswd", "htpasswd -nb admin CRPShtpasswd77x", []string{"CRPShtpasswd77x"}},
	{"yaml_block", "password: |\n  CRPSyamlBlock77x\n", []string{"CRPSyamlBlock77x"}},
	{"kafka_jaas", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="svc" password="CRPSjaasPw77xQ";`, []string{"CRPSjaasPw77xQ"}},
}

// expectAfterMerge: the shapes of corpusShapes that the detector does not
// recognise yet (before h-sec-detect was merged: every shape from
// aws_access_key_id on). Every other shape has to pass with zero hits;
// take a shape out as soon as the detector knows it.
var expectAfterMerge = map[string]bool{
	// Every shape is detected (the last one, a base64-encoded token with
	// no key or prefix around it, by h-secrets).
}

// corpusStream is the records of one stream: its request (Gateway to
// AgentServer) and its responses, in order.
type corpusStream struct {
	id    string
	req   string
	resps []string
}

func jsonLine(m map[string]any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		panic(err)
	}
	return strings.TrimSpace(b.String())
}

// corpusStreams plants shape s in every place: stream "id" has it as its
// request_id and session_id (ids; a sequence gap gives a finding that names
// the stream), stream "<name>-places" in params, auth, metadata, channel
// context, a legacy blob, deltas (also split across two chunks), a result,
// an error's code and message, a response_id, status, response_kind and
// timestamp.
func corpusStreams(s corpusShape) []corpusStream {
	ts := "2026-03-29T12:00:00Z"
	resp := func(rid string, seq int, final bool, status, kind string, body map[string]any, extra map[string]any) string {
		tag := s.name
		if rid == s.value {
			tag += "-id"
		}
		m := map[string]any{"protocol_version": "1.0", "response_id": fmt.Sprintf("resp-%s-%d", tag, seq), "request_id": rid,
			"sequence": seq, "is_final": final, "status": status, "response_kind": kind, "timestamp": ts,
			"provenance": map[string]any{"source_protocol": "e2a"}, "body": body}
		for k, v := range extra {
			m[k] = v
		}
		return jsonLine(m)
	}
	text := func(d any) map[string]any { return map[string]any{"delta_kind": "text", "delta": d} }
	idStream := corpusStream{id: s.value,
		req: jsonLine(map[string]any{"protocol_version": "1.0", "request_id": s.value, "session_id": s.value, "channel": "web",
			"method": "chat.send", "params": map[string]any{"query": "hi"}, "timestamp": ts, "identity_origin": "user"}),
		resps: []string{
			resp(s.value, 0, false, "in_progress", "e2a.chunk", text("a"), map[string]any{"session_id": s.value}),
			resp(s.value, 2, false, "in_progress", "e2a.chunk", text("b"), nil), // gap: a finding on this stream
			resp(s.value, 3, true, "succeeded", "e2a.complete", map[string]any{"result": map[string]any{}}, nil),
		},
	}
	rid := s.name + "-places"
	half := len(s.value) / 2
	places := corpusStream{id: rid,
		req: jsonLine(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + s.name, "channel": "web",
			"method": "chat.send", "timestamp": ts, "identity_origin": "user",
			"params":          map[string]any{"query": "look at " + s.value, "note": s.value, "_meta": map[string]any{"hint": s.value}},
			"auth":            map[string]any{"bearer_token": s.value, "extra_headers": map[string]any{"X-Custom": s.value}},
			"metadata":        map[string]any{"note": s.value},
			"channel_context": map[string]any{"note": s.value}}),
		resps: []string{
			resp(rid, 0, false, "in_progress", "e2a.chunk", text("tok "+s.value), map[string]any{
				"metadata": map[string]any{"note": s.value, "_e2a_wire_legacy_agent_chunk": map[string]any{"payload": map[string]any{"note": s.value}}}}),
			resp(rid, 1, false, "in_progress", "e2a.chunk", text(s.value[:half]), nil), // split across two chunks
			resp(rid, 2, false, "in_progress", "e2a.chunk", text(s.value[half:]), nil),
			resp(rid, 3, false, s.value, "e2a.chunk", text("x"), nil),                                                                               // status
			resp(rid, 4, false, "in_progress", s.value, text("x"), nil),                                                                             // response_kind
			strings.Replace(resp(rid, 5, false, "in_progress", "e2a.chunk", text("x"), nil), ts, jsonStr(s.value), 1),                               // timestamp
			strings.Replace(resp(rid, 6, false, "in_progress", "e2a.chunk", text("x"), nil), fmt.Sprintf("resp-%s-6", s.name), jsonStr(s.value), 1), // response_id
			resp(rid, 7, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "custom", "delta": map[string]any{"note": s.value}}, nil),
			resp(rid, 8, true, "failed", "e2a.error", map[string]any{"code": s.value, "message": "upstream said: " + s.value,
				"result": map[string]any{"detail": s.value}}, nil),
		},
	}
	// The value spelled with JSON \u00XX escapes, as an id and in params:
	// what a reader unescapes must be masked as the plain value is.
	esc := uEscape(s.value)
	escID := "esc-" + s.name
	escaped := corpusStream{id: escID,
		req: `{"protocol_version":"1.0","request_id":"` + escID + `","session_id":"` + esc + `","method":"chat.send","timestamp":"` + ts +
			`","identity_origin":"user","params":{"note":"` + esc + `"},"metadata":{"note":"` + esc + `"}}`,
		resps: []string{
			strings.Replace(resp(escID, 0, false, "in_progress", "e2a.chunk", text("x"), nil), `"status":"in_progress"`, `"status":"`+esc+`"`, 1),
			resp(escID, 1, true, "succeeded", "e2a.complete", map[string]any{"result": map[string]any{}}, nil),
		},
	}
	return []corpusStream{idStream, places, escaped}
}

// uEscape writes every letter and digit of s as a JSON \u00XX escape, the
// rest as JSON string content.
func uEscape(s string) string {
	var b strings.Builder
	esc := false
	for _, c := range jsonStr(s) {
		if !esc && c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			fmt.Fprintf(&b, "\\u%04x", c)
		} else {
			b.WriteRune(c)
		}
		// (The letter of an escape, "\n", is left as it is: escaped, it
		// spelled a backslash and the text "u006e", another value.)
		esc = !esc && c == '\\'
	}
	return b.String()
}

// corpusFrames plants shape s in EventMesh frames: the sid (the stream key;
// a sequence gap gives a finding naming it), replyTo, conv, the prompt, the
// chunks' data (also split across two chunks), an err attribute, a meta
// JSON object, and an etype.
func corpusFrames(t *testing.T, s corpusShape) [][]byte {
	t.Helper()
	var out [][]byte
	add := func(b []byte, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	half := len(s.value) / 2
	meta := `{"note":` + strconvQuote(s.value) + `,"token":` + strconvQuote(s.value) + `}`
	add(frame.AppendStreamRequest(nil, &frame.StreamRequest{SessionID: s.value, ReplyTo: "cp#" + s.value, Conv: s.value, Prompt: []byte("prompt " + s.value)}))
	add(frame.AppendStreamChunk(nil, &frame.StreamChunk{SessionID: s.value, Seq: 0, EventType: "text", Data: []byte(s.value[:half])}))
	add(frame.AppendStreamChunk(nil, &frame.StreamChunk{SessionID: s.value, Seq: 1, EventType: "text", Data: []byte(s.value[half:])}))
	add(frame.AppendStreamChunk(nil, &frame.StreamChunk{SessionID: s.value, Seq: 3, EventType: s.value, Meta: meta, Data: []byte("x")}))
	add(frame.AppendStreamChunk(nil, &frame.StreamChunk{SessionID: s.value, Seq: 4, Done: true, Err: "failed: " + s.value}))
	return out
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func allCorpusFrames(t *testing.T) [][]byte {
	var out [][]byte
	for _, s := range corpusShapes {
		out = append(out, corpusFrames(t, s)...)
	}
	return out
}

// jsonStr is s as the inside of a JSON string.
func jsonStr(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

func allCorpusStreams() []corpusStream {
	var out []corpusStream
	for _, s := range corpusShapes {
		out = append(out, corpusStreams(s)...)
	}
	return out
}

// corpusLines is the corpus as one capture, stream by stream.
func corpusLines() []string {
	var lines []string
	for _, st := range allCorpusStreams() {
		lines = append(lines, st.req)
		lines = append(lines, st.resps...)
	}
	return lines
}

// needleForms are the forms in which a planted value could show: as is,
// JSON-escaped (with and without HTML escaping, with "\/", with every
// letter and digit as \u00XX), and each line of a multi-line value.
func needleForms(s string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(v string) {
		if len(v) >= 6 && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	add(s)
	html, _ := json.Marshal(s)
	add(string(html[1 : len(html)-1]))
	add(jsonStr(s))
	add(strings.ReplaceAll(jsonStr(s), "/", `\/`))
	add(uEscape(s))
	for _, l := range strings.Split(s, "\n") {
		add(l)
	}
	return out
}

// leakChecker searches named outputs for every shape's cores.
type leakChecker struct {
	t         *testing.T
	tolerated map[string][]string        // shape → outputs where it leaked (expectAfterMerge)
	known     map[string]map[string]bool // output → shapes known to leak there (a detector gap, reported)
	// plants are values a test planted besides the corpus shapes (outside
	// the records: a Kafka key, a header, a topic): searched the same way,
	// with no tolerance.
	plants []corpusShape
}

// shapes is every value the checker searches for.
func (lc *leakChecker) shapes() []corpusShape {
	return append(append([]corpusShape(nil), corpusShapes...), lc.plants...)
}

func newLeakChecker(t *testing.T) *leakChecker {
	return &leakChecker{t: t, tolerated: map[string][]string{}, known: map[string]map[string]bool{}}
}

func (lc *leakChecker) check(output string, data []byte) {
	lc.t.Helper()
	if len(data) == 0 && !strings.HasSuffix(output, "stderr") {
		lc.t.Errorf("output %s is empty: nothing was searched", output)
		return
	}
	leaked := lc.partial(output, data)
	for _, s := range lc.shapes() {
		if leaked[s.name] {
			continue
		}
		for _, core := range s.cores {
			for _, form := range needleForms(core) {
				if !bytes.Contains(data, []byte(form)) {
					continue
				}
				if expectAfterMerge[s.name] || lc.known[output][s.name] {
					lc.tolerated[s.name] = append(lc.tolerated[s.name], output)
				} else {
					i := bytes.Index(data, []byte(form))
					lo, hi := max(0, i-80), min(len(data), i+len(form)+80)
					lc.t.Errorf("shape %s (%q) is in the %s: …%s…", s.name, form, output, data[lo:hi])
				}
				break
			}
		}
	}
}

// partial reports, as check does, every shape of which a run of
// secretaudit.PartialRun characters of a core shows in data in any form
// (half a token, the start of a password), and returns their names.
func (lc *leakChecker) partial(output string, data []byte) map[string]bool {
	lc.t.Helper()
	var fams []secretaudit.Family
	for _, s := range lc.shapes() {
		fams = append(fams, secretaudit.Family{Name: s.name, Cores: s.cores})
	}
	leaked := map[string]bool{}
	for _, h := range secretaudit.NewPartial(fams).Find(data) {
		leaked[h.Family] = true
		if expectAfterMerge[h.Family] || lc.known[output][h.Family] {
			lc.tolerated[h.Family] = append(lc.tolerated[h.Family], output)
		} else {
			lc.t.Errorf("shape %s shows in the %s: …%s", h.Family, output, h.Context(data))
		}
	}
	return leaked
}

// strict is check with no tolerance: for outputs whose safety does not
// depend on detection (metric labels are bounded, finding messages quote
// no record value), every shape must be absent.
func (lc *leakChecker) strict(output string, data []byte) {
	lc.t.Helper()
	for _, s := range lc.shapes() {
		for _, core := range s.cores {
			for _, form := range needleForms(core) {
				if bytes.Contains(data, []byte(form)) {
					lc.t.Errorf("shape %s (%q) is in the %s", s.name, form, output)
				}
			}
		}
	}
}

func (lc *leakChecker) report() {
	names := make([]string, 0, len(lc.tolerated))
	for n := range lc.tolerated {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		lc.t.Logf("expectAfterMerge: shape %s still leaks (a detector gap) in: %s", n, strings.Join(dedup(lc.tolerated[n]), ", "))
	}
	for out, shapes := range lc.known {
		for n := range shapes {
			if !strings.Contains(strings.Join(lc.tolerated[n], ","), out) {
				lc.t.Logf("shape %s no longer leaks in the %s: take it out of the known gaps", n, out)
			}
		}
	}
	for n := range expectAfterMerge {
		if len(lc.tolerated[n]) == 0 {
			lc.t.Logf("expectAfterMerge: shape %s leaks nowhere now: take it out of the set", n)
		}
	}
}

func dedup(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// corpusMark is what the policy prints for value v with the corpus key.
func corpusMark(v string) string {
	return string(jsonlog.NewRedactor(jsonlog.ContentMask, 0, []byte(corpusFPKey)).MaskText(nil, []byte(v)))
}

// checkMarks: a stream id that is a credential or personal datum shows,
// in each named output, as the one mark the policy gives it.
func checkMarks(t *testing.T, outputs map[string][]byte) {
	t.Helper()
	for _, s := range corpusShapes {
		if expectAfterMerge[s.name] {
			continue
		}
		mark := corpusMark(s.value)
		if mark == s.value || !strings.Contains(mark, "(fp:") {
			t.Errorf("shape %s: the policy gives %q, no fingerprint", s.name, mark)
			continue
		}
		for name, out := range outputs {
			if !bytes.Contains(out, []byte(mark)) && !bytes.Contains(out, []byte(jsonStr(mark))) {
				t.Errorf("shape %s: the %s lacks its fingerprint %s (equal values, equal marks)", s.name, name, mark)
			}
		}
	}
}

// corpusProcess runs e2atap built without the race detector
// (plainE2atap: it computes on a corpus, and only what it prints is
// checked) with args and env.
func corpusProcess(t *testing.T, stdin []byte, env []string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	return binaryProcess(t, plainE2atap(t), stdin, env, args...)
}

// binaryProcess is corpusProcess with the program to run: os.Args[0] for
// the tests that run before plainE2atap's build is likely done and need
// no speed (a config check), so that they do not wait for it.
func binaryProcess(t *testing.T, bin string, stdin []byte, env []string, args ...string) (stdout, stderr []byte, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "E2ATAP_BE_MAIN=1", "E2ATAP_FINGERPRINT_KEY="+corpusFPKey), env...)
	var o, e bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(stdin), &o, &e
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.Bytes(), e.Bytes(), code
}

// TestCorpusOffline: validate (text and json) and decode of the corpus
// print none of the planted values, and the same mark for an id as the
// sidecar would.
func TestCorpusOffline(t *testing.T) {
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	capture := filepath.Join(dir, "corpus.jsonl")
	if err := os.WriteFile(capture, []byte(strings.Join(corpusLines(), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	frames := filepath.Join(dir, "corpus.frames")
	if err := os.WriteFile(frames, bytes.Join(allCorpusFrames(t), nil), 0o644); err != nil {
		t.Fatal(err)
	}
	lc := newLeakChecker(t)
	outs := map[string][]byte{}
	for _, c := range []struct {
		name string
		args []string
		code int
	}{
		{"validate text", []string{"validate", capture}, exitFindings},
		{"validate json", []string{"validate", "--output", "json", capture}, exitFindings},
		{"validate stdin", []string{"validate", "--output", "json", "-"}, exitFindings},
		{"decode", []string{"decode", capture}, exitOK},
		{"validate frames text", []string{"validate", frames}, exitFindings},
		{"validate frames json", []string{"validate", "--output", "json", frames}, exitFindings},
		{"decode frames", []string{"decode", frames}, exitOK},
	} {
		var in []byte
		if c.args[len(c.args)-1] == "-" {
			in, _ = os.ReadFile(capture)
		}
		stdout, stderr, code := corpusProcess(t, in, nil, c.args...)
		if code != c.code {
			t.Fatalf("%s: exit %d, want %d\n%s", c.name, code, c.code, stderr)
		}
		lc.check(c.name+" stdout", stdout)
		lc.check(c.name+" stderr", stderr)
		outs[c.name] = stdout
	}
	// The messages of findings quote no planted value of any shape, known
	// or not: that needs no detector.
	checkMessages(t, "validate json", outs["validate json"], 5*len(corpusShapes))
	checkMessages(t, "validate frames json", outs["validate frames json"], len(corpusShapes))
	checkSplitFindings(t, outs["validate json"])
	// --show-content is the explicit choice of a person on their own
	// machine: content shown, credentials still masked where found whole.
	if stdout, _, code := corpusProcess(t, nil, nil, "decode", "--show-content", frames); code != exitOK || !bytes.Contains(stdout, []byte(`"data":"prompt `)) {
		t.Errorf("decode --show-content: exit %d, content not shown", code)
	} else if bytes.Contains(stdout, []byte("CRPS7a8b9c0d1e2f3g4h")) {
		t.Error("decode --show-content shows a whole credential")
	}
	checkMarks(t, map[string][]byte{"validate text output": outs["validate text"], "validate json output": outs["validate json"], "decode output": outs["decode"],
		"validate frames output": outs["validate frames json"], "decode frames output": outs["decode frames"]})
	lc.report()
}

// checkSplitFindings: every credential shape split across two chunks of
// its "-places" stream, neither half a credential alone, is an e2a.secret
// finding of that stream saying so (the log is a file source).
func checkSplitFindings(t *testing.T, out []byte) {
	t.Helper()
	split := map[string]bool{}
	for _, l := range bytes.Split(out, []byte("\n")) {
		var f struct{ Rule, Stream, Message string }
		if json.Unmarshal(l, &f) == nil && f.Rule == "e2a.secret" && strings.Contains(f.Message, "at body.delta, split across") {
			split[f.Stream] = true
		}
	}
	n := 0
	for _, s := range corpusShapes {
		half := len(s.value) / 2
		_, _, _, whole := e2a.FindCredential([]byte(s.value))
		_, _, _, first := e2a.FindCredential([]byte(s.value[:half]))
		_, _, _, second := e2a.FindCredential([]byte(s.value[half:]))
		if !whole || first || second {
			continue
		}
		n++
		if !split[s.name+"-places"] {
			t.Errorf("shape %s split across two chunks: no e2a.secret finding says so", s.name)
		}
	}
	if n < 10 {
		t.Errorf("only %d shapes split into halves that are no credential alone", n)
	}
}

// checkMessages: no finding message of a JSON findings output carries a
// core of any shape (findings are messages the validator writes; record
// values reach them only masked).
func checkMessages(t *testing.T, what string, out []byte, minFindings int) {
	t.Helper()
	type needle struct{ shape, form string }
	var needles []needle // every finding is searched for all of them: made once
	for _, s := range corpusShapes {
		for _, core := range s.cores {
			for _, form := range needleForms(core) {
				needles = append(needles, needle{s.name, form})
			}
		}
	}
	n := 0
	for _, l := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var f struct{ Rule, Message string }
		if err := json.Unmarshal(l, &f); err != nil {
			t.Fatalf("%s: not a JSON finding: %s", what, l)
		}
		n++
		for _, nd := range needles {
			if strings.Contains(f.Message, nd.form) {
				t.Errorf("%s: a %s message quotes shape %s: %s", what, f.Rule, nd.shape, f.Message)
			}
		}
	}
	if n < minFindings {
		t.Errorf("%s: only %d findings: the corpus does not reach the rules", what, n)
	}
}

// otlpReceiver is an in-process OTLP/HTTP trace receiver: it keeps every
// request's bytes and the strings of every span (names, attributes, event
// attributes, status messages).
type otlpReceiver struct {
	mu    sync.Mutex
	raw   bytes.Buffer
	text  bytes.Buffer
	spans int
}

func (r *otlpReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	r.raw.Write(body)
	str := func(kvs []*commonpb.KeyValue) {
		for _, kv := range kvs {
			fmt.Fprintf(&r.text, "%s=%s\n", kv.GetKey(), kv.GetValue().GetStringValue())
		}
	}
	for _, rs := range msg.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans++
				fmt.Fprintf(&r.text, "span %s status %s\n", sp.GetName(), sp.GetStatus().GetMessage())
				str(sp.GetAttributes())
				for _, ev := range sp.GetEvents() {
					str(ev.GetAttributes())
				}
			}
		}
	}
	r.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// corpusAgentServer is a WebSocket AgentServer: for each request it
// receives it answers with the responses of that stream.
func corpusAgentServer(t *testing.T, streams []corpusStream) *httptest.Server {
	byID := map[string][]string{}
	for _, st := range streams {
		byID[st.id] = st.resps
	}
	return answeringAgentServer(t, byID)
}

// answeringAgentServer is a WebSocket AgentServer that answers each
// request with the responses byID holds for its request_id.
func answeringAgentServer(t *testing.T, byID map[string][]string) *httptest.Server {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			var req struct {
				RequestID string `json:"request_id"`
			}
			_ = json.Unmarshal(msg, &req)
			for _, resp := range byID[req.RequestID] {
				if err := c.WriteMessage(websocket.TextMessage, []byte(resp)); err != nil {
					return
				}
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestCorpusRun: the real binary with a ws tap between a real Gateway and
// AgentServer, a logdir tap and a nats tap (an in-process nats-server that
// requires the password the tap's URL carries, given by
// E2ATAP_TAP_MESH_URL), all fed the corpus. Every output is searched: the
// record log, the findings log, stderr (logs at debug level), /metrics and
// the spans an in-process OTLP receiver got.
func TestCorpusRun(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	// content mask (the default) masks deltas whole; keep keeps them and
	// masks only what the detector finds, secrets split across two chunks
	// included.
	for _, content := range []string{"mask", "keep"} {
		t.Run(content, func(t *testing.T) { corpusRun(t, content) })
	}
}

func corpusRun(t *testing.T, content string) {
	const (
		natsPass   = "CRPSnatsPassword42"
		fileSecret = "sk-proj-CRPSfilename0123456"
		// Places outside the records: the Gateway's upgrade request (its
		// query string and headers) and a NATS subject.
		wsQuery  = "CRPSwsquery0123456789"
		wsBearer = "CRPSwsbearer0123456789"
		wsCookie = "CRPSwscookie0123456789"
		wsAPIKey = "CRPSwsapikey0123456789"
		// Shapes found by their own bytes, under names that say nothing.
		wsNoteQuery  = "dp.pt.CRPSwsnoteq0123456789abcdefghijKLMNOPQRSTu"
		wsNoteHeader = "FlyV1 fm2_CRPSwsnoteh0123456789abcdefghijKLMNOPQRSTuvwxyz0123456789abcdefghijK=="
		subjectToken = "ghp_CRPSsubject456789abcdefghijKLMN"
	)
	streams := allCorpusStreams()
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	ns := startNATSWith(t, &server.Options{Host: "127.0.0.1", Port: server.RANDOM_PORT, NoLog: true, NoSigs: true,
		Username: "e2atap", Password: natsPass})
	natsAddr := strings.TrimPrefix(ns.ClientURL(), "nats://")

	rcv := &otlpReceiver{}
	otlp := httptest.NewServer(rcv)
	t.Cleanup(otlp.Close)
	agent := corpusAgentServer(t, streams)

	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings, records := filepath.Join(dir, "findings.jsonl"), filepath.Join(dir, "records.jsonl")
	cfg := fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s, idle_timeout: 1m}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %s}
  - {name: agent-logs, type: logdir, paths: [%q], positions: %q}
  - {name: mesh, type: nats, url: "nats://127.0.0.1:1", subjects: ["agent.>"]}
outputs:
  findings: {path: %q}
  log: {path: %q, content: %s}
`, listen, wsListen, "ws"+strings.TrimPrefix(agent.URL, "http"), filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings, records, content)
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(otlpEnv(otlp.URL), "E2ATAP_FINGERPRINT_KEY="+corpusFPKey, "E2ATAP_TAP_MESH_URL=nats://e2atap:"+natsPass+"@"+natsAddr)
	cmd, stderr := startE2atap(t, env, "run", "--log-level", "debug", "--config", cfgPath)
	waitReady(t, listen)

	// The ws tap: a Gateway sends every request, the AgentServer answers.
	gw, _, err := websocket.DefaultDialer.Dial("ws://"+wsListen+"/?token="+wsQuery+"&note="+wsNoteQuery, http.Header{
		"Authorization": {"Bearer " + wsBearer}, "Cookie": {"sid=" + wsCookie}, "X-Api-Key": {wsAPIKey}, "X-Note": {wsNoteHeader}})
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, st := range streams {
		if err := gw.WriteMessage(websocket.TextMessage, []byte(st.req)); err != nil {
			t.Fatal(err)
		}
		want += len(st.resps)
	}
	gw.SetReadDeadline(time.Now().Add(30 * time.Second))
	for got := 0; got < want; got++ {
		if _, _, err := gw.ReadMessage(); err != nil {
			t.Fatalf("gateway: %d of %d responses: %v", got, want, err)
		}
	}
	gw.Close()

	// The logdir tap.
	lines := corpusLines()
	// Its file name carries a credential: the tap logs the path (debug),
	// sources name it. The process's own log lines must mask it too.
	if err := os.WriteFile(filepath.Join(logs, "agent."+fileSecret+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The nats tap.
	nc, err := nats.Connect(ns.ClientURL(), nats.UserInfo("e2atap", natsPass))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if err := nc.Publish("agent.corpus", []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	fr := allCorpusFrames(t)
	for _, f := range fr {
		if err := nc.Publish("agent.frames", f); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range lines[:3] {
		if err := nc.Publish("agent."+subjectToken, []byte(l)); err != nil {
			t.Fatal(err)
		}
	}
	nc.Flush()
	nc.Close()

	total := 3*len(lines) + len(fr) // ws (requests and responses), logdir, nats
	pollUntil(t, "every record in the record log", 60*time.Second, func() bool {
		return fileLines(records) >= total
	})
	metricsBody := scrapeMetrics(t, listen)
	if !bytes.Contains(metricsBody, []byte("trace_id=")) {
		t.Error("no exemplar in the OpenMetrics exposition: the search misses them")
	}
	stopProcess(t, cmd) // exit 0; a hang is killed, not left to the cleanup's Wait

	recs, _ := os.ReadFile(records)
	finds, _ := os.ReadFile(findings)
	rcv.mu.Lock()
	spanRaw, spanText, nspans := append([]byte(nil), rcv.raw.Bytes()...), append([]byte(nil), rcv.text.Bytes()...), rcv.spans
	rcv.mu.Unlock()
	if nspans < len(streams) {
		t.Errorf("%d spans for %d streams on each of 3 taps", nspans, len(streams))
	}
	for _, tapName := range []string{"agent-ws", "agent-logs", "mesh"} {
		if !bytes.Contains(recs, []byte(`"tap":"`+tapName+`"`)) {
			t.Errorf("no record of tap %s in the record log", tapName)
		}
	}
	if m := `"source":"mesh:agent.` + corpusMark(subjectToken) + `"`; !bytes.Contains(recs, []byte(m)) {
		t.Errorf("no record of the subject that holds a token, with its source masked as %s", m)
	}
	lc := newLeakChecker(t)
	lc.check("record log", recs)
	lc.check("findings log", finds)
	lc.check("stderr", []byte(stderr.String()))
	lc.check("/metrics", metricsBody)
	lc.check("OTLP spans (protobuf)", spanRaw)
	lc.check("OTLP spans (strings)", spanText)
	for name, out := range map[string][]byte{"record log": recs, "findings log": finds, "stderr": []byte(stderr.String()), "/metrics": metricsBody, "spans": spanRaw} {
		if bytes.Contains(out, []byte(natsPass)) {
			t.Errorf("the nats password from E2ATAP_TAP_MESH_URL is in the %s", name)
		}
		if bytes.Contains(out, []byte(strings.TrimPrefix(fileSecret, "sk-proj-"))) {
			t.Errorf("the credential in the log file's name is in the %s", name)
		}
		for _, v := range []string{wsQuery, wsBearer, wsCookie, wsAPIKey, strings.TrimPrefix(subjectToken, "ghp_"),
			strings.TrimPrefix(wsNoteQuery, "dp.pt."), strings.TrimPrefix(strings.TrimSuffix(wsNoteHeader, "=="), "FlyV1 fm2_")} {
			if bytes.Contains(out, []byte(v)) {
				t.Errorf("%s (from the upgrade request or a NATS subject) is in the %s", v, name)
			}
		}
	}
	if m := corpusMark(fileSecret); !strings.Contains(stderr.String(), m) {
		t.Errorf("the process's log lines do not show the log file's name masked as %s", m)
	}
	checkMessages(t, "findings log", finds, 5*len(corpusShapes))
	checkSplitFindings(t, finds) // the logdir tap's records are read from a log
	lc.strict("/metrics", metricsBody)
	var spanMessages bytes.Buffer
	for _, l := range bytes.Split(spanText, []byte("\n")) {
		if bytes.HasPrefix(l, []byte("e2atap.message=")) || bytes.HasPrefix(l, []byte("span ")) {
			spanMessages.Write(l)
			spanMessages.WriteByte('\n')
		}
	}
	if !bytes.Contains(spanMessages.Bytes(), []byte("e2atap.message=")) {
		t.Error("no span carries a finding event")
	}
	lc.strict("span names, status and finding events", spanMessages.Bytes())
	checkMarks(t, map[string][]byte{"record log": recs, "findings log": finds, "spans": spanText})
	lc.report()
	if t.Failed() {
		return
	}
	// The record log replays offline to the same marks.
	stdout, _, _ := corpusProcess(t, nil, nil, "validate", "--output", "json", records)
	checkMarks(t, map[string][]byte{"replay of the record log": stdout})
}

// TestCorpusConfigErrors: a URL with credentials in the configuration
// file, in E2ATAP_TAP_<NAME>_URL, or a ws upstream with user:pass@, never
// reaches stderr, whether the URL is malformed or the tap refuses it.
func TestCorpusConfigErrors(t *testing.T) {
	const pass = "CRPScfgPassw0rd"
	dir := t.TempDir()
	write := func(name, tapLine string) string {
		p := filepath.Join(dir, name)
		cfg := fmt.Sprintf("listen: %s\ntaps:\n  - %s\n", freeAddr(t), tapLine)
		if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name, tap string
		env       []string
		want      string
	}{
		{"nats url in file", `{name: mesh, type: nats, url: "nats://u:` + pass + `@bad host:4222", subjects: ["a.>"]}`, nil, "is not a URL"},
		{"nats url from env", `{name: mesh, type: nats, url: "nats://127.0.0.1:4222", subjects: ["a.>"]}`,
			[]string{"E2ATAP_TAP_MESH_URL=nats://u:" + pass + "@bad host:4222"}, "is not a URL"},
		{"nats url list from env", `{name: mesh, type: nats, url: "nats://127.0.0.1:4222", subjects: ["a.>"]}`,
			[]string{"E2ATAP_TAP_MESH_URL=nats://u:" + pass + "@h1:4222,nats://u:" + pass + "@bad host:4222"}, "is not a URL"},
		// A '#' in the password (a URL parser takes it for a fragment).
		{"nats url with a # in its userinfo", `{name: mesh, type: nats, url: "nats://u:Zq9#` + pass + `@127.0.0.1:4222", subjects: ["a.>"]}`, nil, "is not a URL"},
		{"otlp endpoint with a # in its userinfo", `{name: logs, type: logdir, paths: ["/nonexistent/*.jsonl"], positions: "/nonexistent/pos.json"}`,
			[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://u:" + pass[:8] + "#" + pass[8:] + "@127.0.0.1:4318/v1/traces"}, "traces"},
		{"ws upstream with userinfo", `{name: agent-ws, type: ws, listen: "` + freeAddr(t) + `", upstream: "ws://user:` + pass + `@127.0.0.1:1"}`, nil, "only scheme, host, port and path"},
		{"otlp endpoint with userinfo", `{name: logs, type: logdir, paths: ["/nonexistent/*.jsonl"], positions: "/nonexistent/pos.json"}`,
			[]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=http://u:" + pass + "@bad host:4318/v1/traces"}, "traces"},
		// A Kafka broker is host:port: one written with credentials is
		// refused without printing them (user:pass@, a URL, a password alone).
		{"kafka broker with userinfo in file", `{name: bus, type: kafka, brokers: ["u:` + pass + `@127.0.0.1:9092"], topics: [t]}`, nil, "host:port"},
		{"kafka brokers from env", `{name: bus, type: kafka, brokers: ["127.0.0.1:9092"], topics: [t]}`,
			[]string{"E2ATAP_TAP_BUS_BROKERS=127.0.0.1:9092,u:" + pass + "@127.0.0.1:9093"}, "host:port"},
		{"kafka broker URL with userinfo", `{name: bus, type: kafka, brokers: ["sasl_ssl://u:` + pass + `@h:9092"], topics: [t]}`, nil, "host:port"},
		{"kafka broker with a password alone", `{name: bus, type: kafka, brokers: ["` + pass + `@127.0.0.1:9092"], topics: [t]}`, nil, "host:port"},
		{"ws upstream malformed", `{name: agent-ws, type: ws, listen: "` + freeAddr(t) + `", upstream: "ws://user:` + pass + `@bad host:1"}`, nil, "upstream"},
		// A secret written where its file's path goes, or inline where
		// a block of credentials goes: the error about it names the key
		// and line, never the value (tlsfiles.ShownPath, shownValue).
		{"nats password_file holding the password", `{name: mesh, type: nats, url: "nats://127.0.0.1:4222", subjects: ["a.>"], auth: {user: app, password_file: "` + pass + `"}}`, nil, "no such file"},
		{"kafka sasl password_file holding the password", `{name: bus, type: kafka, brokers: ["127.0.0.1:9092"], topics: [t], sasl: {mechanism: PLAIN, username: app, password_file: "` + pass + `"}}`, nil, "no such file"},
		{"nats tls key_file and nkey_file holding a secret", `{name: mesh, type: nats, url: "nats://127.0.0.1:4222", subjects: ["a.>"], tls: {ca_file: "` + pass + `"}, auth: {nkey_file: "` + pass + `"}}`, nil, "no such file"},
		{"nats auth written inline", `{name: mesh, type: nats, url: "nats://127.0.0.1:4222", subjects: ["a.>"], auth: "` + pass + `"}`, nil, "not shown"},
		// A tap name is a metric label and is printed everywhere: one that
		// holds a credential is refused, without printing it.
		{"tap name holding a token", `{name: sk-proj-` + pass + `, type: logdir, paths: ["/nonexistent/*.jsonl"], positions: "/nonexistent/pos.json"}`, nil, "metric label"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(c.name, " ", "_")+".yaml", c.tap)
			for _, args := range [][]string{{"run", "--check", "--config", p}, {"run", "--config", p}} {
				stdout, stderr, code := corpusProcess(t, nil, c.env, args...)
				out := string(stdout) + string(stderr)
				if code != exitUsage {
					t.Errorf("%v: exit %d, want %d: %s", args, code, exitUsage, out)
				}
				if !strings.Contains(out, c.want) {
					t.Errorf("%v: the error does not say %q: %s", args, c.want, out)
				}
				for _, leak := range []string{pass, pass[:8], "u:" + pass[:4], "user:"} {
					if strings.Contains(out, leak) {
						t.Errorf("%v: %q is printed: %s", args, leak, out)
					}
				}
			}
		})
	}
}

func tailText(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// scrapeMetrics returns listen's /metrics in both expositions, the text
// format and OpenMetrics (the latter with exemplars), one after the other.
func scrapeMetrics(t *testing.T, listen string) []byte {
	t.Helper()
	var body []byte
	for _, accept := range []string{"text/plain", "application/openmetrics-text"} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+listen+"/metrics", nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body = append(body, b...)
	}
	return body
}
