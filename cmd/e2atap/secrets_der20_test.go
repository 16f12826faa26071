package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// TestDERKeyOffline: private keys as base64 with no PEM armor, through
// validate with a record log (content kept): a PKCS#8 RSA key in a
// model's delta, the same split after its third character and after its
// hundredth, a SEC1 EC key as a JSON field's value under a name that is
// no credential's, a PKCS#1 key URL-encoded in a query, and a PKCS#8 EC
// key wrapped in lines of 64. Every stream is an e2a.secret finding and
// no run of any key shows in the findings, stderr or the record log; a
// public key's base64 is no finding (the record log masks it as
// high_entropy, as before).
func TestDERKeyOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ek2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	b64 := base64.StdEncoding.EncodeToString
	p8, _ := x509.MarshalPKCS8PrivateKey(rk)
	sec1, _ := x509.MarshalECPrivateKey(ek)
	ecp8, _ := x509.MarshalPKCS8PrivateKey(ek2)
	spki, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	var wrapped strings.Builder
	for s := b64(ecp8); len(s) > 0; s = s[min(64, len(s)):] {
		wrapped.WriteString(s[:min(64, len(s))] + "\n")
	}
	keys := []string{b64(p8), b64(p8), b64(p8), b64(sec1), b64(x509.MarshalPKCS1PrivateKey(rk)), b64(ecp8)}
	streams := []struct {
		name   string
		params map[string]any // a request's params, or
		deltas []string       // a response's deltas
	}{
		{name: "delta", deltas: []string{"Generated one for you:\n" + keys[0] + "\nStore it safely."}},
		{name: "split_3", deltas: []string{"Here it is: " + keys[1][:3], keys[1][3:] + " (done)"}},
		{name: "split_100", deltas: []string{"Here it is: " + keys[2][:100], keys[2][100:] + " (done)"}},
		{name: "json_field", params: map[string]any{"query": "deploy", "signer": map[string]any{"alg": "ES256", "der": keys[3]}}},
		{name: "url_encoded", params: map[string]any{"query": "POST /v1/import?format=der&blob=" + url.QueryEscape(keys[4])}},
		{name: "wrapped", deltas: []string{"```\n" + wrapped.String() + "```"}},
	}
	fams := make([]secretaudit.Family, len(streams))
	ts := "2026-12-08T00:00:00Z"
	var b bytes.Buffer
	line := func(v map[string]any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	request := func(rid string, params map[string]any) {
		line(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
			"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": params})
	}
	for n, s := range streams {
		fams[n] = secretaudit.Family{Name: s.name, Value: keys[n], Cores: []string{strings.ReplaceAll(keys[n], "\n", "")}}
		rid := fmt.Sprintf("der20-%02d", n)
		if s.params != nil {
			request(rid, s.params)
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
	public := "the server's public key: " + b64(spki)
	request("der20-public", map[string]any{"query": public})
	capture := filepath.Join(t.TempDir(), "der20.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, "der20-%02d")
	if bytes.Contains(stdout, []byte(`"der20-public"`)) {
		t.Errorf("a finding on the public key's stream:\n%s", stdout)
	}
}
