package redact

import (
	"math/rand"
	"testing"
)

// TestSepAt holds sepAt, eight bytes a step, to the loop a byte it stands
// for in twilioSID, on random texts dense and sparse in separators and
// from every start and end.
func TestSepAt(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	alpha := []string{"-_", "ab-", "aZ9+/_", "abcdefghijklmnopqrstuvwxyz0123456789", "\x00\xff-,\xad\xdf_"}
	for n := 0; n < 3000; n++ {
		a := alpha[n%len(alpha)]
		s := make([]byte, r.Intn(40))
		for i := range s {
			s[i] = a[r.Intn(len(a))]
		}
		for k := 0; k <= len(s); k++ {
			for e := k; e <= len(s); e++ {
				want := k
				for want < e && s[want] != '-' && s[want] != '_' {
					want++
				}
				if got := sepAt(s, k, e); got != want {
					t.Fatalf("sepAt(%q, %d, %d) = %d, want %d", s, k, e, got, want)
				}
			}
		}
	}
}

// FuzzSepAt: sepAt against the loop a byte, from every start and end.
func FuzzSepAt(f *testing.F) {
	f.Add([]byte("AC0123456789abcdef0123456789abcdef-x_y"))
	f.Add([]byte("iVBORw0KGgoAAAANSUhEUgAAA_-"))
	f.Fuzz(func(t *testing.T, s []byte) {
		if len(s) > 64 {
			s = s[:64]
		}
		for k := 0; k <= len(s); k++ {
			for e := k; e <= len(s); e++ {
				want := k
				for want < e && s[want] != '-' && s[want] != '_' {
					want++
				}
				if got := sepAt(s, k, e); got != want {
					t.Fatalf("sepAt(%q, %d, %d) = %d, want %d", s, k, e, got, want)
				}
			}
		}
	})
}
