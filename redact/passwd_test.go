package redact

import "testing"

// TestExpectGlobAtTextStart: "*password" with nothing before its '*'
// (a delta that starts there, a search from that '*') read s[-1] in
// expectGlob (a panic, found by FuzzMayProbe); it is no glob pattern.
func TestExpectGlobAtTextStart(t *testing.T) {
	for _, s := range []string{"*password", "*Password:", "*password*\"", "x*password", "\"*password"} {
		for from := 0; from < len(s); from++ {
			if m, ok := Find(s[from:], 0); ok && m.Kind.Credential() {
				t.Errorf("Find(%q) = %v %q", s[from:], m.Kind, s[from:][m.Start:m.End])
			}
			Find(s, from)
			MayHoldCredentialText(s[from:])
			MayStartCredential(s[from:])
		}
	}
}
