package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestSecretSplitCyrillicEscaped: a password after Russian's "пароль"
// and a dash or a colon, cut inside or after the label or after the dash,
// with both deltas written as Python writes them (ensure_ascii: no
// printable ASCII byte in a delta of Cyrillic text), is an e2a.secret
// finding on the second chunk: the first delta's tail is kept though it
// holds no printable ASCII byte (escCJKEnd: foreignLast). Cyrillic text
// that ends in another letter keeps nothing.
func TestSecretSplitCyrillicEscaped(t *testing.T) {
	esc := func(s string) string {
		b, _ := json.Marshal(s)
		var out strings.Builder
		for _, r := range string(b) {
			if r >= 0x80 {
				fmt.Fprintf(&out, "\\u%04x", r)
			} else {
				out.WriteRune(r)
			}
		}
		return out.String()
	}
	const pw = "Xq7vLm2pR9tzK4"
	for _, c := range []struct{ first, second string }{
		{"Ваш пароль", " — " + pw}, {"Ваш пароль —", " " + pw}, {"Ваш пароль — ", pw}, {"Ваш пароль ", "- " + pw},
		{"Ваш паро", "ль: " + pw}, {"Ваш Пароль", " – " + pw},
	} {
		lines := strings.Join([]string{
			resp(0, "request_id", "q1", "body.delta", "FIRST"),
			resp(1, "request_id", "q1", "body.delta", "SECOND"),
			final(2, "request_id", "q1"),
		}, "\n") + "\n"
		lines = strings.Replace(lines, `"FIRST"`, esc(c.first), 1)
		lines = strings.Replace(lines, `"SECOND"`, esc(c.second), 1)
		col := runCapture(t, ProfileSpec, []byte(lines), FormatJSONL)
		found := false
		for _, f := range col.findings {
			if strings.Contains(f.Message+f.Stream, pw) {
				t.Errorf("%q | %q: a finding quotes the password: %s", c.first, c.second, f.Message)
			}
			found = found || f.Rule == "e2a.secret" && f.Index == 2
		}
		if !found {
			t.Errorf("%q | %q: no e2a.secret finding on the second chunk: %v", c.first, c.second, col.findings)
		}
	}
	if foreignLast('я') || foreignLast('д') || !foreignLast('ь') || !foreignLast('\u2014') {
		t.Errorf("foreignLast: wrong letters")
	}
}
