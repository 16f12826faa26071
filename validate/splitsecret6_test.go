package validate

import (
	"strings"
	"testing"
)

// TestSecretSplitPlaceholder: a placeholder or code under a credential
// key, or a flag that names where a password is read from, cut across two
// chunks at any offset is no e2a.secret finding, as it is in one chunk
// (the split check judges a match as rule e2a.secret does in one text).
// 37 split findings at these cuts without it.
func TestSecretSplitPlaceholder(t *testing.T) {
	for _, v := range []string{
		"'password' => env('DB_PASSWORD', ''),",
		"password=${DB_PASSWORD}",
		"cat pw.txt | docker login -u ci --password-stdin registry.example.com",
	} {
		for cut := 1; cut < len(v); cut++ {
			col := runCapture(t, ProfileSpec, []byte(splitLines("q1", v[:cut], v[cut:])), FormatJSONL)
			for _, f := range col.findings {
				// (A cut inside the value leaves the first chunk a
				// value of its own, "password': N", judged as it is:
				// its own finding, not a split one.)
				if f.Rule == "e2a.secret" && strings.Contains(f.Message, "split across") {
					t.Errorf("%q cut at %d: e2a.secret finding: %s", v, cut, f.Message)
				}
			}
		}
	}
}
