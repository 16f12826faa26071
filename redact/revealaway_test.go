package redact

import (
	"math/rand/v2"
	"testing"
)

// TestMayRevealAway holds mayRevealAway to mayRevealCredential: where it
// turns an anchor away, mayRevealCredential finds nothing there, on
// random text around 'A', 'b', 'B' and 'w' and on the shapes that start
// at them (AKIA…, Bearer, Basic, passwd, a JSON escape, "%3D").
func TestMayRevealAway(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	plants := []string{"AKIAIOSFODNN7EXAMPLE", "ASIAIOSFODNN7EXAMPLE", "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
		"Authorization: Basic dXNlcjpwYXNzd29yZA==", "\\nBearer abcdefghijklmnop1234", "x%3DBearer+abcdefghijklmnop1234", "openssl passwd hunter2xyz", "password: hunter2xyz", "xbBasic dXNlcjpwdw=="}
	const filler = "aZ09+/AbBwsS %\\=:\"x"
	away, kept := 0, 0
	for range 20000 {
		s := make([]byte, 8+r.IntN(80))
		for k := range s {
			s[k] = filler[r.IntN(len(filler))]
		}
		if p := plants[r.IntN(len(plants))]; len(p) <= len(s) {
			copy(s[r.IntN(len(s)-len(p)+1):], p)
		}
		for i, c := range s {
			if c != 'A' && c != 'b' && c != 'B' && c != 'w' {
				continue
			}
			if !mayRevealAway(s, i) {
				kept++
				continue
			}
			away++
			if mayRevealCredential(s, i) {
				t.Fatalf("mayRevealAway(%q, %d) turns away an anchor mayRevealCredential takes", s, i)
			}
		}
	}
	if away < 10000 || kept < 10000 {
		t.Fatalf("anchors turned away %d, kept %d: want 10000 each at least", away, kept)
	}
}
