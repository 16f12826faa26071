package e2a

import (
	"encoding/json"
	"testing"
)

// TestSecrets19Finding: the shapes h-secrets19 made redact read (a
// password after "for <e-mail>:", a login's "user / password", PagerDuty's
// routing_key, OpenVPN's <auth-user-pass>, vault kv get's and op read's
// outputs, labels beyond English before a copula) are e2a.secret
// findings, alone and in a record's text; a word or prose after the same
// labels is none.
func TestSecrets19Finding(t *testing.T) {
	for _, s := range []string{
		"Password for bob@example.com: Xq7vLm2pR9tz",
		"Login: admin / Xq7vLm2pR9tz",
		"user admin / pass Xq7vLm2pR9tz",
		"routing_key: 0123456789abcdef0123456789abcdef",
		"<auth-user-pass>\nalice\nXq7vLm2pR9tz\n</auth-user-pass>",
		"Key         Value\n---         -----\npassword    Xq7vLm2pR9tz\n",
		"$ op read op://prod/postgres/password\nXq7vLm2pR9tz\n",
		"das Passwort ist Xq7vLm2pR9tz",
		"le mot de passe est Xq7vLm2pR9tz",
		"la contraseña es Xq7vLm2pR9tz",
	} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("%q: no e2a.secret finding, want one", s)
		}
		rec, _ := json.Marshal(map[string]any{"type": "message", "body": map[string]string{"delta": s}})
		if path, _, ok := ScanSecrets(rec); !ok || path != "body.delta" {
			t.Errorf("ScanSecrets(%s) = %q %v, want body.delta", rec, path, ok)
		}
	}
	for _, s := range []string{
		"Login: Settings / Security", "login: admin / hunter2x", "user guide / pass rate 95%",
		"routing_key: orders.created", "das Passwort ist falsch.", "la contraseña es obligatoria",
		"password    correcthorse\n", "Password for bob@example.com: see below 2",
	} {
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none", s, k)
		}
	}
}
