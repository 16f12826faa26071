package redact

import (
	"strings"
	"testing"
)

// TestOktaInBase64: a run of an Okta token's shape ("00" and 40) inside a
// base64 image is no vendor token, whole or split across two chunks (a
// chunk's run ended by the next chunk's "data:image/…"); a true token
// stays one, whole, URL-encoded and split.
func TestOktaInBase64(t *testing.T) {
	const tok = "00nRpq01VOL7XNjs2ofW6HhoV5uLihRWo3L5SlkQ7d" // 42
	const img = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4"
	for _, s := range []string{
		"data:image/png;base64," + img + "/" + tok + "+Zq9",
		"data:image/png;base64," + img + "+" + tok + "+Zq9",
		"data:image/png;base64," + img + "+" + tok + "/Zq9",
		"data:image/png;base64," + img + tok + "==",
	} {
		if k, ok := credentialKind(s); ok {
			t.Errorf("an Okta-shaped run in a base64 image is a credential (%v): %s", k, mask6(s, tok))
		}
	}
	for _, s := range []string{"Authorization: SSWS " + tok, "Authorization%3A+SSWS+" + tok + "+and", "okta " + tok, "okta=" + tok + "+and"} {
		if k, ok := credentialKind(s); !ok {
			t.Errorf("an Okta token is not a vendor token (%v %v): %s", k, ok, mask6(s, tok))
		}
	}
	tail := "data:image/png;base64," + img + "/" + tok[:38]
	head := "data:image/png;base64," + img
	if _, m, ok := Straddle(nil, []byte(tail), []byte(head)); ok && m.Kind.Credential() {
		t.Errorf("a base64 run cut at a chunk's end and the next chunk's data URI are a split %v", m.Kind)
	}
	if _, m, ok := Straddle(nil, []byte("Authorization: SSWS "+tok[:20]), []byte(tok[20:]+" ok")); !ok || !m.Kind.Credential() {
		t.Errorf("an Okta token split across two chunks is no split credential (%v %v)", m.Kind, ok)
	}
}

// mask6 prints s with v's characters masked (a test failure names no
// real-looking secret).
func mask6(s, v string) string {
	return strings.ReplaceAll(s, v, v[:2]+"…")
}
