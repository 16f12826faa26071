package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// A fifth corpus (testdata/sweep5, its own generator and seed): token
// formats of vendors no corpus had, credential forms of config files,
// headers, cookies and admin commands, the spellings the fourth sweep left
// out, near-misses of each. Every output is held to the partial-leak
// checker (auditCheck: no run of 10 characters of a secret part, in any
// form), and the values also go to E2A fields the audit streams do not
// fill (sweep5Places): a request's auth, correlation_id and messages, a
// tool call's arguments (whole and split across two chunks), an error's
// code and details, a result, a response's metadata, an A2A event's
// payload.

type sweep5Family struct {
	secretaudit.Family
	Wire string `json:"wire"`
}

// loadSweep5 is the corpus's families (credentials) and near-misses, and
// the wire spellings of the families that have one.
func loadSweep5(t *testing.T) (fams, nears []secretaudit.Family, all []sweep5Family) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sweep5", "families.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var a sweep5Family
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Near {
			nears = append(nears, a.Family)
			continue
		}
		fams = append(fams, a.Family)
		all = append(all, a)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(fams) < 60 || len(nears) < 15 {
		t.Fatalf("only %d families and %d near-misses in the sweep5 corpus", len(fams), len(nears))
	}
	return fams, nears, all
}

// sweep5Places is stream place-<n> of every family: its value in the E2A
// fields the audit streams leave out. Stream near-<n> holds near-miss n
// in the same places.
func sweep5Places(fams []secretaudit.Family, id string) []byte {
	ts := "2026-12-07T00:00:00Z"
	var b bytes.Buffer
	line := func(m map[string]any) { b.WriteString(jsonLine(m)); b.WriteByte('\n') }
	for n, a := range fams {
		v := a.Value
		rid := fmt.Sprintf(id, n)
		resp := func(seq int, final bool, status, kind string, body map[string]any) map[string]any {
			return map[string]any{"protocol_version": "1.0", "response_id": fmt.Sprintf("r-%s-%d", rid, seq), "request_id": rid,
				"sequence": seq, "is_final": final, "status": status, "response_kind": kind, "timestamp": ts,
				"provenance": map[string]any{"source_protocol": "e2a"}, "body": body}
		}
		args, _ := json.Marshal(map[string]any{"command": v, "env": map[string]any{"CONFIG": v}})
		half := len(args) / 2
		line(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
			"method": "chat.send", "timestamp": ts, "identity_origin": "user", "correlation_id": v,
			"auth": map[string]any{"credential_ref": v},
			"params": map[string]any{"messages": []any{map[string]any{"role": "user", "content": "deploy with " + v}},
				"tools": []any{map[string]any{"name": "bash", "arguments": string(args)}}}})
		line(resp(0, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "tool",
			"delta": map[string]any{"tool_call_id": "call-1", "name": "bash", "arguments": string(args)}}))
		line(resp(1, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "tool", "delta": string(args[:half])}))
		line(resp(2, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "tool", "delta": string(args[half:])}))
		ev := resp(3, false, "in_progress", "a2a.stream_event", map[string]any{"branch": "artifact_update",
			"payload": map[string]any{"artifact": map[string]any{"parts": []any{map[string]any{"kind": "text", "text": v}}}}})
		ev["metadata"] = map[string]any{"legacy_chunk": v}
		line(ev)
		line(resp(4, false, "in_progress", "e2a.complete", map[string]any{"result": map[string]any{"content": v}}))
		line(resp(5, true, "failed", "e2a.error", map[string]any{"code": v, "message": "tool failed: " + v,
			"details": map[string]any{"stderr": v}}))
	}
	return b.Bytes()
}

// sweep5Wire is stream wire-<n> of every family with a wire spelling: its
// request's params and a delta hold the spelling as written.
func sweep5Wire(all []sweep5Family) []byte {
	var w []sweep4Family
	for _, a := range all {
		w = append(w, sweep4Family(a))
	}
	return sweep4Wire(w)
}

// sweep5Capture is the audit streams of fams, split across chunks when
// split, then the places, wire and near-miss streams.
func sweep5Capture(t *testing.T, fams, nears []secretaudit.Family, all []sweep5Family, split bool) []byte {
	b := auditCapture(t, fams, split)
	b = append(b, sweep5Places(fams, "place-%03d")...)
	b = append(b, sweep5Wire(all)...)
	return append(b, sweep5Places(nears, "near-%03d")...)
}

// sweep5Secret is the streams with an e2a.secret finding in findings (one
// JSON finding a line).
func sweep5Secret(findings []byte) map[string]bool {
	secret := map[string]bool{}
	for _, l := range bytes.Split(bytes.TrimSpace(findings), []byte("\n")) {
		var f struct{ Rule, Stream string }
		if json.Unmarshal(l, &f) == nil && f.Rule == "e2a.secret" {
			secret[f.Stream] = true
		}
	}
	return secret
}

// sweep5Findings checks that every family is an e2a.secret finding of its
// audit stream, its places stream and its wire stream, and that no
// near-miss is one.
func sweep5Findings(t *testing.T, what string, fams, nears []secretaudit.Family, all []sweep5Family, findings []byte) {
	t.Helper()
	secret := sweep5Secret(findings)
	for n, a := range fams {
		if a.Accept != "" {
			continue // masked, no finding: why is in its line
		}
		for _, rid := range []string{fmt.Sprintf("audit-%03d", n), fmt.Sprintf("place-%03d", n)} {
			if !secret[rid] {
				t.Errorf("%s: family %s: no e2a.secret finding on its stream %s", what, a.Name, rid)
			}
		}
		if rid := fmt.Sprintf("wire-%03d", n); all[n].Wire != "" && !secret[rid] {
			t.Errorf("%s: family %s: its wire spelling is no e2a.secret finding on its stream %s", what, a.Name, rid)
		}
	}
	for n, a := range nears {
		if rid := fmt.Sprintf("near-%03d", n); secret[rid] {
			t.Errorf("%s: near-miss %s is an e2a.secret finding (stream %s)", what, a.Name, rid)
		}
	}
}

// TestSweep5Offline: no run of 10 characters of a secret part of the
// sweep5 corpus shows in validate's findings, its record log (content
// kept) or decode --show-content; every family is an e2a.secret finding
// in every place, no near-miss is one.
func TestSweep5Offline(t *testing.T) {
	fams, nears, all := loadSweep5(t)
	dir := t.TempDir()
	capture, whole := filepath.Join(dir, "sweep5.jsonl"), filepath.Join(dir, "sweep5-whole.jsonl")
	if err := os.WriteFile(capture, sweep5Capture(t, fams, nears, all, true), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(whole, sweep5Capture(t, fams, nears, all, false), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := validateKeep(t, fams, capture)
	sweep5Findings(t, "validate", fams, nears, all, stdout)
	runs := [][]string{{"decode", "--show-content", whole}}
	if !raceEnabled {
		runs = append(runs, []string{"validate", capture})
	}
	for _, c := range runs {
		out, stderr, _ := corpusProcess(t, nil, nil, c...)
		name := strings.Join(c[:len(c)-1], " ")
		auditCheck(t, fams, name+" stdout", out)
		auditCheck(t, fams, name+" stderr", append(stderr, ' '))
	}
}

// TestSweep5Run: the logdir tap of e2atap run reads the sweep5 corpus (its
// places, wire and near-miss streams too); its record log, findings log,
// debug log lines, observe --records, /metrics and /healthz show no run of
// 10 characters of a secret part, and the findings log has the same
// e2a.secret findings as validate.
func TestSweep5Run(t *testing.T) {
	fams, nears, all := loadSweep5(t)
	extra := sweep5Places(fams, "place-%03d")
	extra = append(extra, sweep5Wire(all)...)
	extra = append(extra, sweep5Places(nears, "near-%03d")...)
	finds := auditRunWith(t, fams, extra)
	sweep5Findings(t, "run", fams, nears, all, finds)
}
