package redact

import "testing"

// TestSecrets19HoldForeign: MayHoldCredential, the pre-check of a raw
// JSON text, turned away the labels beyond ASCII that h-secrets18 made
// Find read (it held no needle of them): each passes, in UTF-8, as JSON
// escapes and URL-encoded.
func TestSecrets19HoldForeign(t *testing.T) {
	for _, s := range []string{
		"contraseña: Xq7vLm2pR9tz", "CONTRASEÑA: Xq7vLm2pR9tz", `contrase\u00f1a: Xq7vLm2pR9tz`, "q=Contrase%C3%B1a%3A+Xq7vLm2pR9tz",
		"пароль: Xq7vLm2pR9tz", "Пароль: hunter2x", "ПАРОЛЬ: Xq7vLm2pR9tz", "парола: Xq7vLm2pR9tz",
		`{"\u043f\u0430\u0440\u043e\u043b\u044c": "Xq7vLm2pR9tz"}`, "q=%0A%D0%BF%D0%B0%D1%80%D0%BE%D0%BB%D1%8C%3A+Xq7vLm2pR9tz",
		"hasło=Xq7vLm2pR9tz", `has\u0142o: Xq7vLm2pR9tz`, "şifre: Xq7vLm2pR9tz", "ŞİFRE: Xq7vLm2pR9tz", `\u015fifre: Xq7vLm2pR9tz`,
		"Jelszó: Xq7vLm2pR9tz", "Lösenord: Xq7vLm2pR9tz",
	} {
		if _, ok := firstCredential([]byte(s)); !ok {
			t.Errorf("%q: Find reports no credential", s)
		}
		if !MayHoldCredential(s) {
			t.Errorf("MayHoldCredential(%q) = false, Find reports a credential", s)
		}
	}
}
