package redact

import (
	"maps"
	"slices"
	"testing"
)

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

// TestCutTextsNoPanic: every prefix and every suffix of every credential
// example (a delta cut anywhere, a search that starts anywhere) goes
// through Find, MayHoldCredentialText and MayStartCredential without a
// panic: a detector that looks before its anchor must stop at the text's
// start (expectGlob did not: TestExpectGlobAtTextStart).
func TestCutTextsNoPanic(t *testing.T) {
	n := 0
	extra := []string{"expect \"*password*\"\nsend \"Kqz9pwmvtR\\r\"", "expect {\n  \"*Password:*\" { send \"Kqz9pwmvtR\\r\" }\n}"}
	for _, exs := range append(slices.Collect(maps.Values(credentialExamples)), extra) {
		for _, ex := range exs {
			for k := 0; k <= len(ex); k++ {
				for _, s := range []string{ex[k:], ex[:k]} {
					func() {
						defer func() {
							if v := recover(); v != nil {
								t.Errorf("%q: panic %v", s, v)
							}
						}()
						for from := 0; from < len(s); {
							m, ok := Find(s, from)
							if !ok {
								break
							}
							from = max(m.End, from+1)
						}
						MayHoldCredentialText(s)
						MayStartCredential(s)
					}()
					n++
				}
			}
		}
	}
	if n < 1000 {
		t.Fatalf("%d texts: the examples are gone", n)
	}
}
