package validate

import (
	"strings"
	"testing"
)

// TestSecretSplitAfterAddress: "Password for bob@example.com: <pw>" cut
// in the address or at its end is one e2a.secret finding (Straddle met
// the address first, and stopped at its end); an address before prose is
// none.
func TestSecretSplitAfterAddress(t *testing.T) {
	const text = "Password for bob@example.com: Xq7vLm2pR9tz and more"
	count := func(first, second string) (n int) {
		col := runCapture(t, ProfileSpec, streamLines("q1", []string{first, second}), FormatJSONL)
		for _, f := range col.findings {
			if f.Rule == "e2a.secret" {
				if strings.Contains(f.Message, "Xq7vLm") {
					t.Errorf("%q | %q: a finding quotes the password: %s", first, second, f.Message)
				}
				n++
			}
		}
		return n
	}
	for k := strings.Index(text, "@") - 1; k <= strings.Index(text, ":"); k++ {
		if n := count(text[:k], text[k:]); n != 1 {
			t.Errorf("%q | %q: %d e2a.secret findings, want 1", text[:k], text[k:], n)
		}
	}
	if n := count("Mail bob@exam", "ple.com: today at 10"); n != 0 {
		t.Errorf("an address before prose: %d e2a.secret findings, want 0", n)
	}
}

// TestSecretSplitWordTail: a password whose shape a delta's last word
// starts ("user admin" | " / pass <pw>", "<auth-u" | "ser-pass>…", "$ op
// read" | " op://…", "le mot" | " de passe est <pw>") is one e2a.secret
// finding: the tail was dropped, and the next delta alone shows none.
func TestSecretSplitWordTail(t *testing.T) {
	const pw = "Xq7vLm2pR9tz"
	for _, c := range [][2]string{
		{"user admin", " / pass " + pw + " ok"},
		{"Login: admin", " / " + pw + " ok"},
		{"<auth-u", "ser-pass>\nalice\n" + pw + "\n</auth-user-pass>"},
		{"$ op read", " op://prod/postgres/password\n" + pw + "\n"},
		{"le mot", " de passe est " + pw},
	} {
		col := runCapture(t, ProfileSpec, streamLines("q1", []string{c[0], c[1]}), FormatJSONL)
		n := 0
		for _, f := range col.findings {
			if f.Rule == "e2a.secret" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q | %q: %d e2a.secret findings, want 1", c[0], c[1], n)
		}
	}
}
