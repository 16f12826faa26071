package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// A fourth corpus (testdata/sweep4): families every corpus before it has,
// written in the encodings and places they take in agents' traffic: in
// part JSON-escaped on the wire, a JSON document held as an escaped
// string in another (twice, three times), URL-encoded DSNs, .pgpass lines
// and Oracle strings, Basic authorization in the spellings of curl,
// headers and code, PEM keys with escaped or CRLF line ends, a secret
// next to an escaped quote. Through the same outputs of the real binary
// as the audit corpus (whose positions add the value URL-encoded, as JSON
// text, in base64 and split across two chunks at its middle); the wire
// spelling of a family ("wire") is also written as is into a request's
// params and a delta. On the commit before the sweep, 25 of its 44
// families showed in an output.

type sweep4Family struct {
	secretaudit.Family
	Wire string `json:"wire"`
}

func loadSweep4(t *testing.T) ([]secretaudit.Family, []sweep4Family) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sweep4", "families.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var all []sweep4Family
	var fams []secretaudit.Family
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a sweep4Family
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		all = append(all, a)
		fams = append(fams, a.Family)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(fams) < 30 {
		t.Fatalf("only %d families in the sweep4 corpus", len(fams))
	}
	return fams, all
}

// sweep4Wire is stream wire-<n> of every family with a wire spelling: its
// request's params and a delta hold the spelling as written.
func sweep4Wire(all []sweep4Family) []byte {
	ts := "2026-12-06T00:00:00Z"
	var b bytes.Buffer
	for n, a := range all {
		if a.Wire == "" {
			continue
		}
		rid := fmt.Sprintf("wire-%03d", n)
		fmt.Fprintf(&b, `{"protocol_version":"1.0","request_id":%q,"session_id":"sess-%s","channel":"web","method":"chat.send","timestamp":%q,"identity_origin":"user","params":{"query":"%s"}}`+"\n",
			rid, rid, ts, a.Wire)
		fmt.Fprintf(&b, `{"protocol_version":"1.0","response_id":"r-%s","request_id":%q,"sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.chunk","timestamp":%q,"provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"%s"}}`+"\n",
			rid, rid, ts, a.Wire)
	}
	return b.Bytes()
}

// TestSweep4Offline: no core of the sweep4 corpus shows in validate's
// findings, its record log or decode --show-content, and every family is
// an e2a.secret finding of its stream (and of its wire stream).
func TestSweep4Offline(t *testing.T) {
	fams, all := loadSweep4(t)
	dir := t.TempDir()
	capture, whole := filepath.Join(dir, "sweep4.jsonl"), filepath.Join(dir, "sweep4-whole.jsonl")
	wire := sweep4Wire(all)
	if err := os.WriteFile(capture, append(auditCapture(t, fams, true), wire...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(whole, append(auditCapture(t, fams, false), wire...), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, "audit-%03d")
	secret := map[string]bool{}
	for _, l := range bytes.Split(bytes.TrimSpace(stdout), []byte("\n")) {
		var f struct{ Rule, Stream string }
		if json.Unmarshal(l, &f) == nil && f.Rule == "e2a.secret" {
			secret[f.Stream] = true
		}
	}
	for n, a := range all {
		if rid := fmt.Sprintf("wire-%03d", n); a.Wire != "" && !secret[rid] {
			t.Errorf("family %s: its wire spelling is no e2a.secret finding on its stream %s", a.Name, rid)
		}
	}
	out, stderr, _ := corpusProcess(t, nil, nil, "decode", "--show-content", whole)
	auditCheck(t, fams, "decode --show-content stdout", out)
	auditCheck(t, fams, "decode --show-content stderr", append(stderr, ' '))
}

// TestSweep4Run: the logdir tap of e2atap run reads the sweep4 corpus; its
// record log, findings log, debug log lines, observe --records, /metrics
// and /healthz show no core.
func TestSweep4Run(t *testing.T) {
	fams, _ := loadSweep4(t)
	auditRun(t, fams)
}
