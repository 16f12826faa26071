package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// secrets20Stream is one stream of a capture: a request's params or a
// response's deltas, and what must never show (the password, or cores).
type secrets20Stream struct {
	name   string
	params map[string]any
	deltas []string
	cores  []string
}

// secrets20Capture writes streams as a capture, each stream's id
// fmt.Sprintf(id, n), and the records of plain (a request's query each,
// ids "<id>-plain-<n>").
func secrets20Capture(t *testing.T, streams []secrets20Stream, id string, plain []string) string {
	t.Helper()
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
	req := func(rid string, params map[string]any) {
		line(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
			"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": params})
	}
	for n, s := range streams {
		rid := fmt.Sprintf(id, n)
		if s.params != nil {
			req(rid, s.params)
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
	for n, q := range plain {
		req(fmt.Sprintf("%s-plain-%d", id[:len(id)-len("-%02d")], n), map[string]any{"query": q})
	}
	capture := filepath.Join(t.TempDir(), "s20.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return capture
}

// secrets20Check runs validate with a record log (content kept) on the
// capture of streams and plain: every stream is an e2a.secret finding and
// none of its cores shows in the findings, stderr or the record log;
// every plain text is in the record log as it is, with no finding.
func secrets20Check(t *testing.T, streams []secrets20Stream, id string, plain []string) {
	t.Helper()
	fams := make([]secretaudit.Family, len(streams))
	for n, s := range streams {
		fams[n] = secretaudit.Family{Name: s.name, Value: s.cores[0], Cores: s.cores}
	}
	capture := secrets20Capture(t, streams, id, plain)
	stdout, recs := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, id)
	for n, q := range plain {
		if rid := fmt.Sprintf("%s-plain-%d", id[:len(id)-len("-%02d")], n); bytes.Contains(stdout, []byte(`"`+rid+`"`)) {
			t.Errorf("a finding on the plain stream %s (%q):\n%s", rid, q, stdout)
		}
		if j, _ := json.Marshal(q); !bytes.Contains(recs, j) {
			t.Errorf("%q is not in the record log as it is", q)
		}
	}
}

// TestSecrets20Offline: the forms h-secrets20 fixed, through validate with
// a record log: a password after a label beyond English and a dash, after
// Portuguese's "a senha é", after "CONTRASEÑA ES" and after "la
// contraseña es" URL-encoded with "%20"; "my pass" | "word for
// bob@example.com: <pw>" across two deltas, and the foreign forms cut
// after their label or separator ("Ваш пароль —" | " <pw>"), "Pa" |
// "ssword for bob: <pw>", Italian's "la password è <pw>" (also cut after
// the copula), a label, a preposition and words before the separator ("a
// senha do banco de dados é <pw>", "Пароль от почты — <pw>"). A date after
// "user admin / pass" is printed as it is, with no finding.
func TestSecrets20Offline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	pw := func(n int) string { return fmt.Sprintf("Xq7vLm%02dR9tzK4", n) }
	streams := []secrets20Stream{
		{name: "senha", params: map[string]any{"query": "a senha é " + pw(0) + " para o banco"}},
		{name: "parol_emdash", params: map[string]any{"query": "пароль — " + pw(1)}},
		{name: "parol_hyphen", deltas: []string{"Ваш логин - admin, пароль - " + pw(2)}},
		{name: "es_caps", params: map[string]any{"query": "LA CONTRASEÑA ES " + pw(3)}},
		{name: "es_pct20", params: map[string]any{"query": "GET /s?q=la%20contrase%C3%B1a%20es%20" + pw(4) + "&hl=es"}},
		{name: "pass_cut_address", deltas: []string{"my pass", "word for bob@example.com: " + pw(5) + " and more"}},
		{name: "parol_cut_dash", deltas: []string{"Ваш пароль —", " " + pw(6)}},
		{name: "senha_cut", deltas: []string{"a senha é ", pw(7) + " ok"}},
		{name: "es_caps_cut", deltas: []string{"CONTRASEÑA E", "S " + pw(8)}},
		{name: "pa_cut", deltas: []string{"Pa", "ssword for bob: " + pw(9)}},
		{name: "it_password", params: map[string]any{"query": "La password è " + pw(10) + ", non condividerla"}},
		{name: "it_password_cut", deltas: []string{"La password è", " " + pw(11)}},
		{name: "senha_do_banco", params: map[string]any{"query": "A senha do banco de dados é " + pw(12)}},
		{name: "parol_ot", deltas: []string{"Пароль от почты — " + pw(13)}},
		{name: "passwort_fuer", params: map[string]any{"query": "Das Passwort für den Server ist " + pw(14)}},
		{name: "parol_dlya_colon", params: map[string]any{"query": "Пароль для входа: " + pw(15)}},
	}
	for n := range streams {
		streams[n].cores = []string{pw(n)}
	}
	secrets20Check(t, streams, "s20-%02d", []string{"user admin / pass 2024-01-01", "пароль — 2024-01-01", "o café é 2024 bom",
		"la password è obbligatoria dal 2024", "o preço do café é 2024", "Der Preis für den Server ist 2024",
		"Ссылка для входа: https://example.com/login"})
}

// TestSecrets20KeysOffline: a private key block as the value of a key of
// no credential's name (SSH_KEY=) and inside a service account's JSON
// held in a variable (export GOOGLE_CREDENTIALS='{…}'), through validate
// with a record log: each an e2a.secret finding, the key printed nowhere;
// a path to a key file under such a key is printed as it is, no finding.
func TestSecrets20KeysOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	body := func(n int) string {
		return fmt.Sprintf("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC%02dXq7vLmR9tzK4", n)
	}
	block := func(n int) string { return "-----BEGIN PRIVATE KEY-----\n" + body(n) + "\n-----END PRIVATE KEY-----\n" }
	sa, err := json.Marshal(map[string]string{"type": "service_account", "project_id": "demo-1", "private_key": block(1),
		"client_email": "svc@demo-1.iam.gserviceaccount.com"})
	if err != nil {
		t.Fatal(err)
	}
	streams := []secrets20Stream{
		{name: "ssh_key_env", params: map[string]any{"query": "SSH_KEY=" + block(0)}},
		{name: "gcp_sa_export", deltas: []string{"Run this:\nexport GOOGLE_CREDENTIALS='" + string(sa) + "'\n"}},
	}
	for n := range streams {
		streams[n].cores = []string{body(n)}
	}
	secrets20Check(t, streams, "s20k-%02d", []string{"SSH_KEY=~/.ssh/id_ed25519", "TLS_KEY=/etc/ssl/private/server.key"})
}

// TestSecrets20TailsOffline: a HashiCorp Vault token cut in its prefix
// ("hv" | "s.…") and a Terraform Cloud token cut in its ".atlasv1." across
// two deltas, through validate with a record log: each an e2a.secret
// finding, the token printed nowhere.
func TestSecrets20TailsOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	core := func(n int) string {
		return fmt.Sprintf("Xq7vLm%02dR9tzK4Bn6Cd1EfGh7Jk0LmNpQrStUvWxYz012345AbCdEfGhIjKlMnOpQrSt", n)
	}
	streams := []secrets20Stream{
		{name: "vault_hvs", deltas: []string{"Done, the new one: hv", "s." + core(0) + " (keep it safe)"}},
		{name: "tfc_atlasv1", deltas: []string{"Saved AbCdEfGhIjKlMn.atl", "asv1." + core(1) + " to the file"}},
	}
	for n := range streams {
		streams[n].cores = []string{core(n)}
	}
	secrets20Check(t, streams, "s20t-%02d", []string{"MongoDB Atlas and vault are set up"})
}

// TestSecrets20CurlOffline: a session cookie given to curl's -b, and a
// Cookie header given as one quoted -H argument, through validate with a
// record log: each an e2a.secret finding, the cookie printed nowhere, the
// URL after the header printed as it is (it was masked with the cookie).
// A cookie with no session's value after -b, and JavaScript that builds
// an Authorization header in a template literal, are printed as they are.
func TestSecrets20CurlOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	core := func(n int) string { return fmt.Sprintf("VvVqE1Sk%02dHbn88HxjSI6bWHtP3fS2qHx6", n) }
	streams := []secrets20Stream{
		{name: "curl_b", params: map[string]any{"query": "curl -s -b 'session=" + core(0) + "' https://api.example.com/v1/me"}},
		{name: "curl_h_cookie", deltas: []string{"Run:\ncurl -H 'Cookie: sid=" + core(1) + "' https://api.example.com/v1/items?page=2\n"}},
	}
	for n := range streams {
		streams[n].cores = []string{core(n)}
	}
	secrets20Check(t, streams, "s20c-%02d", []string{"curl -b 'theme=dark; lang=en' https://x.example.com",
		"fetch(u, {headers: {Authorization: `Bearer ${token}`, 'Content-Type': 'application/json'}})"})
	// The URL after the quoted header: checked on its own capture's log.
	fams := []secretaudit.Family{{Name: "curl_h_cookie", Value: core(1), Cores: []string{core(1)}}}
	_, recs := validateKeep(t, fams, secrets20Capture(t, streams[1:], "s20u-%02d", nil))
	if !bytes.Contains(recs, []byte("' https://api.example.com/v1/items?page=2")) {
		t.Errorf("the URL after the Cookie header is not in the record log as it is:\n%s", recs)
	}
}

// TestSecrets20EncodedRunOffline: a random run URL-encoded with a '/' in
// it (an AWS secret as a query's value) is masked from its start in the
// record log: its first characters and the escape's '%' were printed
// before the mask. (Masked, no finding: a random run with no key or
// prefix is high_entropy; the capture holds a finding so that validate
// exits with findings.)
func TestSecrets20EncodedRunOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	const secret = "2qYDx2o/abc7Xk9Lm3Qp8Rt5Vw2Yz4Bn6Cd1EfGh"
	enc := strings.ReplaceAll(secret, "/", "%2F")
	streams := []secrets20Stream{
		{name: "ssh_key_env", params: map[string]any{"query": "SSH_KEY=-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC77Xq7vLmR9tzK4\n-----END PRIVATE KEY-----\n"}},
		{name: "aws_encoded", params: map[string]any{"query": "GET https://api.example.com/v1/x?a=1&x=" + enc + "&b=2"}},
	}
	fams := []secretaudit.Family{{Name: "ssh", Value: "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC77Xq7vLmR9tzK4", Cores: []string{"MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC77Xq7vLmR9tzK4"}},
		{Name: "aws", Value: enc, Cores: []string{enc, secret}}}
	_, recs := validateKeep(t, fams, secrets20Capture(t, streams, "s20e-%02d", nil))
	for _, part := range []string{secret[:7], secret[8:20]} {
		if bytes.Contains(recs, []byte(part)) {
			t.Errorf("the record log shows %q of the encoded secret:\n%s", part, recs)
		}
	}
	if !bytes.Contains(recs, []byte("GET https://api.example.com/v1/x?a=1&x=")) {
		t.Errorf("the URL before the value is not in the record log as it is")
	}
}
