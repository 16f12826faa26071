package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/secretaudit"
	"github.com/e2atap/e2atap/redact"
)

// The audit corpus of redact (redact/testdata/audit/families.jsonl: a
// fake value of the documented shape of every credential family we know
// of, and near-misses) through the real binary: validate (findings, text
// and JSON, and its --log record log with content kept), decode
// --show-content, and run with a logdir tap (its record log, findings log
// and process log). No core of a planted credential may show in any
// output byte, as is, JSON- or URL-escaped, \u00XX-spelled or in base64.

// loadAuditFamilies is the corpus's credential families (not its
// near-misses).
func loadAuditFamilies(t *testing.T) []secretaudit.Family {
	t.Helper()
	all, err := secretaudit.Load(filepath.Join("..", "..", "redact", "testdata", "audit", "families.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []secretaudit.Family
	for _, a := range all {
		if !a.Near {
			out = append(out, a)
		}
	}
	if len(out) < 100 {
		t.Fatalf("only %d credential families in the audit corpus", len(out))
	}
	return out
}

// auditStrings are the decoded strings a family's value is planted as:
// the value, in prose, glued to punctuation, as JSON text held in a
// string (escaped, with "\/"), URL-encoded, a line of it in base64, after
// a newline.
func auditStrings(v string) []string {
	j := jsonStr(v)
	return []string{
		v,
		"upstream said: " + v + " (retrying)",
		"(" + v + "),",
		`{"note":"` + j + `"}`,
		`{"note":"` + strings.ReplaceAll(j, "/", `\/`) + `"}`,
		"https://app.example.com/cb?state=" + url.QueryEscape(v) + "&x=1",
		"blob " + base64.StdEncoding.EncodeToString([]byte("config line: "+v+"\n")) + " end",
		"first line\n" + v + "\nlast line",
	}
}

// auditStream is the records of family a's stream: the value in params
// (each of auditStrings, nested in an array and an object, and as a key),
// in auth and metadata, in deltas (also split across two), an error's
// message; a sequence gap gives a finding that names the stream. A
// request spells the value with \u00XX escapes, and a stream has the
// value as its id (its gap's finding names it, masked).
func auditStream(a secretaudit.Family, n int, split bool) []string {
	ts := "2026-12-02T00:00:00Z"
	rid := fmt.Sprintf("audit-%03d", n)
	params := map[string]any{"query": "look at " + a.Value, "note": a.Value, "positions": auditStrings(a.Value),
		"nested": map[string]any{"a": []any{map[string]any{"b": a.Value}}}, a.Value: true}
	req := jsonLine(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
		"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": params,
		"metadata": map[string]any{"note": a.Value}, "channel_context": map[string]any{"note": a.Value}})
	resp := func(seq int, final bool, status, kind string, body map[string]any) string {
		return jsonLine(map[string]any{"protocol_version": "1.0", "response_id": fmt.Sprintf("resp-%s-%d", rid, seq), "request_id": rid,
			"sequence": seq, "is_final": final, "status": status, "response_kind": kind, "timestamp": ts,
			"provenance": map[string]any{"source_protocol": "e2a"}, "body": body})
	}
	text := func(d string) map[string]any { return map[string]any{"delta_kind": "text", "delta": d} }
	erid := rid + "-esc"
	esc := `{"protocol_version":"1.0","request_id":"` + erid + `","session_id":"sess-` + erid + `","method":"chat.send","timestamp":"` + ts +
		`","identity_origin":"user","params":{"note":"` + secretaudit.UEscapeAll(a.Value) + `"}}`
	half := len(a.Value) / 2
	if !split {
		half = 0
	}
	return []string{req,
		resp(0, false, "in_progress", "e2a.chunk", text("tok "+a.Value)),
		resp(2, false, "in_progress", "e2a.chunk", text(auditStrings(a.Value)[3])),
		resp(3, false, "in_progress", "e2a.chunk", text("split "+a.Value[:half])), // across two chunks
		resp(4, false, "in_progress", "e2a.chunk", text(a.Value[half:]+" end")),
		resp(5, true, "failed", "e2a.error", map[string]any{"code": "upstream", "message": "upstream said: " + a.Value}),
		esc,
		// The value as a stream's id: its findings (a sequence gap) name
		// it, masked.
		jsonLine(map[string]any{"protocol_version": "1.0", "request_id": a.Value, "session_id": a.Value, "channel": "web",
			"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": map[string]any{"query": "hi"}}),
		strings.Replace(resp(0, false, "in_progress", "e2a.chunk", text("a")), `"request_id":"`+rid+`"`, `"request_id":`+strconvQuote(a.Value), 1),
		strings.Replace(resp(2, true, "succeeded", "e2a.complete", map[string]any{"result": map[string]any{}}), `"request_id":"`+rid+`"`, `"request_id":`+strconvQuote(a.Value), 1),
	}
}

// credentialIn reports a credential in s (redact.Find).
func credentialIn(s string) bool {
	_, ok := secretaudit.FirstCredential(s)
	return ok
}

// auditCheck reports every family of which a run of
// secretaudit.PartialRun characters of a core shows in out, in any of the
// forms of secretaudit.Forms (a whole core, and half a token or the first
// characters of a password as well). The message names the family and
// what comes before the leak, never the leaked run.
func auditCheck(t *testing.T, fams []secretaudit.Family, output string, out []byte) {
	t.Helper()
	if len(out) == 0 {
		t.Errorf("%s is empty: nothing was searched", output)
		return
	}
	for _, h := range partialIndex(fams).Find(out) {
		t.Errorf("%s: family %s shows: …%s", output, h.Family, h.Context(out))
	}
}

var partialIndexes sync.Map // *secretaudit.Family (the first of a corpus) → *secretaudit.Partial

// partialIndex is the index of the runs of fams's cores, built once per
// corpus.
func partialIndex(fams []secretaudit.Family) *secretaudit.Partial {
	if len(fams) == 0 {
		return secretaudit.NewPartial(nil)
	}
	if p, ok := partialIndexes.Load(&fams[0]); ok {
		return p.(*secretaudit.Partial)
	}
	p := secretaudit.NewPartial(fams)
	partialIndexes.Store(&fams[0], p)
	return p
}

// auditCapture is the streams of every family; split: each value also
// split across two chunks.
func auditCapture(t *testing.T, fams []secretaudit.Family, split bool) []byte {
	var b bytes.Buffer
	for n, a := range fams {
		for _, l := range auditStream(a, n, split) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// auditValidate writes fams as a capture split across chunks and as one of
// whole values, runs validate --output json with a record log (content
// kept) on the first, and checks its standard output and error and the
// record log for every family's cores. It returns both files and the
// findings.
func auditValidate(t *testing.T, fams []secretaudit.Family) (capture, whole string, stdout []byte) {
	t.Helper()
	dir := t.TempDir()
	capture, whole = filepath.Join(dir, "audit.jsonl"), filepath.Join(dir, "audit-whole.jsonl")
	if err := os.WriteFile(capture, auditCapture(t, fams, true), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(whole, auditCapture(t, fams, false), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ = validateKeep(t, fams, capture)
	return capture, whole, stdout
}

// validateKeep runs validate --output json with a record log (content
// kept) on capture, which has findings, and checks its standard output and
// error and the record log for every family's cores. It returns the
// findings and the record log.
func validateKeep(t *testing.T, fams []secretaudit.Family, capture string) (stdout, recs []byte) {
	t.Helper()
	records := filepath.Join(t.TempDir(), "records.jsonl")
	stdout, stderr, code := corpusProcess(t, nil, nil, "validate", "--output", "json", "--log", records, "--log-content", "keep", capture)
	if code != exitFindings {
		t.Fatalf("validate: exit %d\n%s", code, stderr)
	}
	auditCheck(t, fams, "validate json stdout", stdout)
	auditCheck(t, fams, "validate stderr", append(stderr, ' '))
	recs, err := os.ReadFile(records)
	if err != nil {
		t.Fatal(err)
	}
	auditCheck(t, fams, "validate --log record log", recs)
	return stdout, recs
}

// TestAuditOffline: validate (text, JSON, its record log with content
// kept: values split across two chunks included) and decode of the audit
// corpus print no core of any family; every family is an e2a.secret
// finding of its stream.
func TestAuditOffline(t *testing.T) {
	fams := loadAuditFamilies(t)
	capture, whole, stdout := auditValidate(t, fams)
	secret, split := map[string]bool{}, map[string]bool{}
	maskedIDs := 0
	for _, l := range bytes.Split(bytes.TrimSpace(stdout), []byte("\n")) {
		var f struct{ Rule, Stream, Message string }
		if err := json.Unmarshal(l, &f); err != nil {
			t.Fatalf("not a JSON finding: %s", l)
		}
		if strings.HasPrefix(f.Stream, redact.Mask+"(fp:") {
			maskedIDs++
		}
		if f.Rule == "e2a.secret" {
			secret[f.Stream] = true
			if strings.Contains(f.Message, "split across") {
				split[f.Stream] = true
			}
		}
	}
	if maskedIDs < len(fams) {
		t.Errorf("%d findings name a stream whose id is a credential (masked), want %d at least", maskedIDs, len(fams))
	}
	nsplit := 0
	for n, a := range fams {
		rid := fmt.Sprintf("audit-%03d", n)
		if !secret[rid] {
			t.Errorf("family %s: no e2a.secret finding on its stream %s", a.Name, rid)
		}
		half := len(a.Value) / 2
		if credentialIn("split "+a.Value[:half]) || credentialIn(a.Value[half:]+" end") {
			continue // a half is a credential alone: an e2a.secret finding of its own
		}
		if split[rid] {
			nsplit++
		} else {
			t.Errorf("family %s: its value split across two chunks, neither half a credential alone, is no e2a.secret finding", a.Name)
		}
	}
	t.Logf("%d families split across two chunks (neither half a credential alone) are e2a.secret findings", nsplit)
	// decode --show-content shows content, masking what it finds whole
	// (no carry across chunks: a person's explicit choice on their own
	// machine), so it reads the capture with no split values.
	runs := [][]string{{"decode", "--show-content", whole}}
	if !raceEnabled { // (each process is seconds under the race detector)
		runs = append(runs, []string{"validate", capture}, []string{"decode", capture})
	}
	for _, c := range runs {
		stdout, stderr, _ := corpusProcess(t, nil, nil, c...)
		auditCheck(t, fams, strings.Join(c[:len(c)-1], " ")+" stdout", stdout)
		auditCheck(t, fams, strings.Join(c[:len(c)-1], " ")+" stderr", append(stderr, ' '))
	}
}

// TestAuditRun: the logdir tap of e2atap run reads the audit corpus; its
// record log (content kept), findings log, debug log lines, what e2atap
// observe --records shows, /metrics and /healthz show no core of any
// family.
func TestAuditRun(t *testing.T) { auditRun(t, loadAuditFamilies(t)) }

// auditRun runs e2atap run with a logdir tap over the streams of fams and
// checks its record log, findings log and stderr.
func auditRun(t *testing.T, fams []secretaudit.Family) { auditRunWith(t, fams, nil) }

// auditRunWith is auditRun with more records (extra) after the streams of
// fams, and returns the findings log.
func auditRunWith(t *testing.T, fams []secretaudit.Family, extra []byte) []byte {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	listen := freeAddr(t)
	findings, records := filepath.Join(dir, "findings.jsonl"), filepath.Join(dir, "records.jsonl")
	cfg := fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s, idle_timeout: 1m}
taps:
  - {name: agent-logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q, content: keep}
`, listen, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings, records)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// Built without the race detector (plainE2atap): the sidecar reads a
	// corpus, and only what it prints is checked.
	cmd, stderr := startBinary(t, plainE2atap(t), []string{"E2ATAP_FINGERPRINT_KEY=" + corpusFPKey}, "run", "--log-level", "debug", "--config", cfgPath)
	waitReady(t, listen)
	// e2atap observe --records follows the sidecar while it reads.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var watched lockedBuffer
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		run(ctx, []string{"observe", "--addr", listen, "--records", "--last", "0", "--output", "json"}, strings.NewReader(""), &watched, io.Discard)
	}()
	pollUntil(t, "observe watching", 10*time.Second, func() bool {
		return bytes.Contains(scrapeMetrics(t, listen), []byte("e2atap_observe_watchers 1"))
	})
	capture := append(auditCapture(t, fams, true), extra...)
	if err := os.WriteFile(filepath.Join(logs, "agent.jsonl"), capture, 0o644); err != nil {
		t.Fatal(err)
	}
	want := bytes.Count(capture, []byte("\n"))
	pollUntil(t, "every record in the record log", 60*time.Second, func() bool { return fileLines(records) >= want })
	pollUntil(t, "observe shows records", 10*time.Second, func() bool { return strings.Contains(watched.String(), `"type":"record"`) })
	metrics := scrapeMetrics(t, listen)
	var health []byte
	if resp, err := http.Get("http://" + listen + "/healthz?format=json"); err == nil {
		health, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	cancel()
	<-watching
	stopProcess(t, cmd)
	recs, _ := os.ReadFile(records)
	finds, _ := os.ReadFile(findings)
	auditCheck(t, fams, "record log", recs)
	auditCheck(t, fams, "findings log", finds)
	auditCheck(t, fams, "stderr", []byte(stderr.String()))
	auditCheck(t, fams, "observe --records", []byte(watched.String()))
	auditCheck(t, fams, "/metrics", metrics)
	auditCheck(t, fams, "/healthz", health)
	if !bytes.Contains(finds, []byte(`"e2a.secret"`)) {
		t.Error("no e2a.secret finding in the findings log")
	}
	return finds
}
