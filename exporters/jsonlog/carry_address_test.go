package jsonlog

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestSplitSecretAfterAddress: "Password for bob@example.com: <pw>" cut
// in the address or right after it: the address is masked in both lines
// and the password, which only the joined text makes one, in the second;
// an address before a word that is no value stays the only mask.
func TestSplitSecretAfterAddress(t *testing.T) {
	const text, pw = "Password for bob@example.com: Xq7vLm2pR9tz and more", "Xq7vLm2pR9tz"
	for k := strings.Index(text, "@") - 1; k <= strings.Index(text, ":"); k++ {
		var buf bytes.Buffer
		lines := runEngine(t, NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey)), &buf,
			chunk("q1", 0, text[:k], false), chunk("q1", 1, text[k:], false), chunk("q1", 2, "", true))
		all := strings.Join(lines, "\n")
		if strings.Contains(all, pw) || strings.Contains(all, "example") || strings.Contains(all, "bob@") {
			t.Errorf("%q | %q: in the log:\n%s", text[:k], text[k:], all)
		}
		if len(lines) != 3 || !strings.Contains(lines[1], " and more") {
			t.Errorf("%q | %q: lines:\n%s", text[:k], text[k:], all)
		}
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Errorf("invalid line %s", l)
			}
		}
	}
	var buf bytes.Buffer
	lines := runEngine(t, NewWriterTo(&buf, NewRedactor(ContentKeep, 65536, testKey)), &buf,
		chunk("q1", 0, "Mail bob@exam", false), chunk("q1", 1, "ple.com: today at 10", false), chunk("q1", 2, "", true))
	if all := strings.Join(lines, "\n"); len(lines) != 3 || !strings.Contains(lines[1], `): today at 10"`) {
		t.Errorf("an address before prose: lines:\n%s", all)
	}
}
