package e2a

import (
	"encoding/json"
	"testing"
)

// TestForeignSepFinding: a generated password after a label beyond
// English and a dash ("пароль — <pw>"), after Portuguese's "a senha é",
// after "CONTRASEÑA ES" and after "la contraseña es" URL-encoded with
// "%20" is an e2a.secret finding, alone and in a record; the record's
// pre-check passes it. A date after "user <name> / pass" or after a
// label's dash is none.
func TestForeignSepFinding(t *testing.T) {
	for _, s := range []string{"a senha é Xq7vLm2pR9tz", "пароль — Xq7vLm2pR9tz", "Пароль - Xq7vLm2pR9tz", "CONTRASEÑA ES Xq7vLm2pR9tz",
		"GET /s?q=la%20contrase%C3%B1a%20es%20Xq7vLm2pR9tz&hl=es", "La password è Xq7vLm2pR9tz",
		"A senha do banco é Xq7vLm2pR9tz", "Пароль от почты — Xq7vLm2pR9tz", "Das Passwort für den Server ist Xq7vLm2pR9tz",
		"Пароль для входа: Xq7vLm2pR9tz"} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("%q: no finding", s)
		}
		q, _ := json.Marshal(s)
		rec := []byte(`{"params":{"query":` + string(q) + `}}`)
		if path, _, ok := ScanSecrets(rec); !ok || path != "params.query" {
			t.Errorf("ScanSecrets(%s) = %q %v, want params.query", rec, path, ok)
		}
		var r Record
		if err := Scan(rec, &r); err != nil || !r.MayHoldSecret() {
			t.Errorf("Scan(%s): MayHoldSecret false (%v)", rec, err)
		}
	}
	for _, s := range []string{"user admin / pass 2024-01-01T10:00:00Z", "пароль — 2024-01-01", "o café é 2024 bom", "a senha é banco2024"} {
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none", s, k)
		}
	}
}

// TestPEMInsideValueFinding: a PEM private key block is an e2a.secret
// finding as the value of SSH_KEY= (a key of no credential's name), and
// inside a service account's JSON that is a variable's value (the pair
// GOOGLE_CREDENTIALS='{…}' as a whole is no credential value: its
// inside is searched); a JSON value with a placeholder or no key inside
// is none.
func TestPEMInsideValueFinding(t *testing.T) {
	const block = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----\n"
	sa, _ := json.Marshal(map[string]string{"type": "service_account", "private_key": block, "client_email": "a@p.iam.gserviceaccount.com"})
	for _, s := range []string{"SSH_KEY=" + block, "export GOOGLE_CREDENTIALS='" + string(sa) + "'", "GOOGLE_CREDENTIALS=" + string(sa)} {
		if _, _, k, ok := FindCredential([]byte(s)); !ok || k != "private_key" && k != "key_value" {
			t.Errorf("%q: finding %q %v, want the private key", s, k, ok)
		}
		q, _ := json.Marshal(s)
		rec := []byte(`{"params":{"query":` + string(q) + `}}`)
		if path, _, ok := ScanSecrets(rec); !ok || path != "params.query" {
			t.Errorf("ScanSecrets(%s) = %q %v, want params.query", rec, path, ok)
		}
	}
	for _, s := range []string{`export GOOGLE_CREDENTIALS='{"type": "service_account", "project_id": "demo-1"}'`,
		`export DB_CONFIG='{"user": "app", "password": "${DB_PASSWORD}"}'`, "password=${DB_PASSWORD_FROM_VAULT_SECRET}"} {
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none", s, k)
		}
	}
}
