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
		s := make([]byte, r.Intn(48)+n%3*80) // (past 72 bytes the kernel runs)
		for i := range s {
			s[i] = a[r.Intn(len(a))]
		}
		for _, cl := range []uint8{b64alpha, b64std, word, cDigit, word | cKey} {
			for i := 0; i <= len(s); i++ {
				if got, want := runLong(s, i, cl), run(s, i, cl); got != want {
					t.Fatalf("runLong(%q, %d, %#x) = %d, want %d", s, i, cl, got, want)
				}
			}
		}
	}
}

// TestRunAfter holds runAfter to the walk a byte it replaced in b64Run,
// from every start whose two bytes before are no '%' (a word's end), on
// random texts of base64 bytes, URL-encoded '+' and '/' and bytes that
// end a run.
func TestRunAfter(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	parts := []string{"a", "Z", "9", "+", "/", "-", "_", "%2B", "%2b", "%2F", "%2f", "%", "%2", "b", "f", "=", " ", "%3D"}
	for n := 0; n < 5000; n++ {
		var s []byte
		for k := r.Intn(30); k > 0; k-- {
			s = append(s, parts[r.Intn(len(parts))]...)
		}
		for y0 := 2; y0 <= len(s); y0++ {
			if s[y0-1] == '%' || s[y0-2] == '%' {
				continue
			}
			// The walk as b64Run did it a byte at a time.
			y, lastPlus, lastSlash, plus, slash, plain := y0, -1, -1, false, false, true
			for y < len(s) {
				if c := s[y]; is(c, b64alpha) {
					if c == '+' {
						lastPlus = y
					} else if c == '/' {
						lastSlash = y
					}
					y++
				} else if atFold(s, y, "%2b") || atFold(s, y, "%2f") {
					y += 3
					plain = false
				} else {
					break
				}
				plus, slash = plus || s[y-1] == '+' || s[y-1]|0x20 == 'b' && s[y-3] == '%', slash || s[y-1] == '/' || s[y-1]|0x20 == 'f' && s[y-3] == '%'
			}
			e, lp, ls, p, sl, pl := runAfter(s, y0)
			if e != y || lp != lastPlus || ls != lastSlash || p != plus || sl != slash || pl != plain {
				t.Fatalf("runAfter(%q, %d) = %d %d %d %v %v %v, want %d %d %d %v %v %v", s, y0, e, lp, ls, p, sl, pl, y, lastPlus, lastSlash, plus, slash, plain)
			}
		}
	}
}
