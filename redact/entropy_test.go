package redact

import (
	"math"
	"math/rand"
	"testing"
)

// TestEntropyAsSummed holds entropy, which visits only the bytes a word
// holds, to the sum over all 128 counts in order, bit for bit (the
// threshold minEntropy is compared with the float it returns).
func TestEntropyAsSummed(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	alpha := []string{"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", "aZ9", "0123456789abcdef-", "\x00\x7fA"}
	for n := 0; n < 20000; n++ {
		a := alpha[n%len(alpha)]
		w := make([]byte, 1+r.Intn(300))
		for i := range w {
			w[i] = a[r.Intn(len(a))]
		}
		var counts [128]uint16
		var present [2]uint64
		for _, c := range w {
			counts[c]++
			present[c>>6&1] |= 1 << (c & 63)
		}
		want := 0.0
		for _, c := range counts {
			if c != 0 {
				p := float64(c) / float64(len(w))
				want -= p * math.Log2(p)
			}
		}
		if got := entropy(&counts, &present, len(w)); got != want {
			t.Fatalf("entropy(%q) = %v, want %v", w, got, want)
		}
	}
}
