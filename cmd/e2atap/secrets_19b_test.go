package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// TestSecrets19bOffline: the shapes h-secrets19b fixed, through validate
// with a record log (content kept): PagerDuty's integration key as a JSON
// field's value; a password after an e-mail address cut in the address or
// at its end; a password whose shape a delta's last word starts ("user
// admin" | " / pass …", "<auth-u" | "ser-pass>…", "$ op read" | " op://…",
// "le mot" | " de passe est …"); "la contraseña es <pw>" URL-encoded.
// Every stream is an e2a.secret finding and no password shows in the
// findings, stderr or the record log; a date after "User: root /" is
// printed as it is, with no finding.
func TestSecrets19bOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	// A password per stream: no run of ten characters shared (the leak
	// check leaves shared runs out).
	pws := make([]string, 8)
	for n := range pws {
		pws[n] = fmt.Sprintf("Xq7vLm%02dR9tzK4", n)
	}
	pw := func(n int) string { return pws[n] }
	streams := []struct {
		name   string
		params map[string]any // a request's params, or
		deltas []string       // a response's deltas
	}{
		{name: "routing_key", params: map[string]any{"query": "page the on-call", "routing_key": "0123456789abcdef0123456789abcdef"}},
		{name: "address_cut", deltas: []string{"Password for bob@exam", "ple.com: " + pw(1) + " and more"}},
		{name: "address_end", deltas: []string{"Password for bob@example.com", ": " + pw(2)}},
		{name: "user_name", deltas: []string{"user admin", " / pass " + pw(3)}},
		{name: "openvpn", deltas: []string{"<auth-u", "ser-pass>\nalice\n" + pw(4) + "\n</auth-user-pass>"}},
		{name: "op_read", deltas: []string{"$ op read", " op://prod/postgres/password\n" + pw(5) + "\n"}},
		{name: "mot_de_passe", deltas: []string{"le mot", " de passe est " + pw(6)}},
		{name: "es_encoded", params: map[string]any{"query": "GET /search?q=la+contrase%C3%B1a+es+" + pw(7) + "&hl=es"}},
	}
	fams := make([]secretaudit.Family, len(streams))
	ts := "2026-12-07T00:00:00Z"
	var b bytes.Buffer
	line := func(v map[string]any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	for n, s := range streams {
		fams[n] = secretaudit.Family{Name: s.name, Value: pw(n), Cores: []string{pw(n)}}
		rid := fmt.Sprintf("s19b-%02d", n)
		if s.params != nil {
			if k, ok := s.params["routing_key"].(string); ok {
				fams[n].Cores = []string{k}
			}
			line(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
				"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": s.params})
			continue
		}
		resp := func(seq int, final bool, status, kind string, body map[string]any) map[string]any {
			return map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": seq, "is_final": final,
				"status": status, "response_kind": kind, "timestamp": ts, "provenance": map[string]any{"source_protocol": "e2a"}, "body": body}
		}
		for k, d := range s.deltas {
			line(resp(k, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": d}))
		}
		line(resp(len(s.deltas), true, "succeeded", "e2a.complete", map[string]any{"result": map[string]any{}}))
	}
	const date = "User: root / 2024-01-01 and Login: admin / 2024-01-01T10:00:00Z"
	line(map[string]any{"protocol_version": "1.0", "request_id": "s19b-date", "session_id": "sess-date", "channel": "web",
		"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": map[string]any{"query": date}})
	capture := filepath.Join(t.TempDir(), "s19b.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, recs := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, "s19b-%02d")
	if bytes.Contains(stdout, []byte(`"s19b-date"`)) {
		t.Errorf("a finding on the stream of dates:\n%s", stdout)
	}
	if q, _ := json.Marshal(date); !bytes.Contains(recs, q) {
		t.Errorf("the dates are not in the record log as they are")
	}
}
