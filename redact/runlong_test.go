package redact

import (
	"math/rand"
	"testing"
)

// TestRunLong holds runLong to run, the loop a byte, from every start of
// random texts, for each class its callers use: runs of every length
// across the eight-byte steps and the bytes after them.
func TestRunLong(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	alpha := []string{"aZ9+/", "aZ9+/-_ .", "0123456789x", "ab=", "\x00\xff+-_a9"}
	for n := 0; n < 3000; n++ {
		a := alpha[n%len(alpha)]
		s := make([]byte, r.Intn(48))
		for i := range s {
			s[i] = a[r.Intn(len(a))]
		}
		for _, cl := range []uint8{b64alpha, word, cDigit, word | cKey} {
			for i := 0; i <= len(s); i++ {
				if got, want := runLong(s, i, cl), run(s, i, cl); got != want {
					t.Fatalf("runLong(%q, %d, %#x) = %d, want %d", s, i, cl, got, want)
				}
			}
		}
	}
}
