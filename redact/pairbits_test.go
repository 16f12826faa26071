package redact

import (
	"math/rand/v2"
	"testing"
)

// checkWordPairs fails when anyWordPairs differs from anyWord on s, for
// each table whose words are three bytes or more.
func checkWordPairs(t *testing.T, s []byte) {
	t.Helper()
	for _, tp := range tablePairs {
		if got, want := anyWordPairs(tp.t, tp.bits, s), anyWord(tp.t, s); got != want {
			t.Fatalf("%s: anyWordPairs(%q) = %v, anyWord %v", tp.name, s, got, want)
		}
	}
	if got, want := anyB64Word(s), anyWord(b64Table, s); got != want {
		t.Fatalf("anyB64Word(%q) = %v, anyWord %v", s, got, want)
	}
}

// tablePairs are the tables whose words are three bytes or more, with
// their pairs.
var tablePairs = func() (tp []struct {
	name string
	t    *pairTable
	bits *pairBits
}) {
	for name, pt := range map[string]*pairTable{"b64": b64Table, "special": specialTable, "needle": needleTable, "token": tokenTable, "key": keyTable} {
		if bits := wordPairs(pt); bits != nil {
			tp = append(tp, struct {
				name string
				t    *pairTable
				bits *pairBits
			}{name, pt, bits})
		}
	}
	return tp
}()

// TestAnyWordPairs: every word of b64Table (and of each table of words of
// three bytes or more) at every offset of base64 text, alone, cut at its
// end and in every case, is found as anyWord finds it.
func TestAnyWordPairs(t *testing.T) {
	if wordPairs(b64Table) == nil {
		t.Fatal("b64Table has a word shorter than three bytes")
	}
	r := rand.New(rand.NewPCG(1, 2))
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
	for _, pt := range []*pairTable{b64Table, tokenTable, needleTable, specialTable, keyTable} {
		for _, g := range pt.groups {
			for _, w := range g {
				for off := 0; off < 11; off++ {
					for _, tail := range []int{0, 1, 2, 5, 9} {
						b := make([]byte, off+len(w.w)+tail)
						for k := range b {
							b[k] = alpha[r.IntN(len(alpha))]
						}
						copy(b[off:], w.w)
						checkWordPairs(t, b)
						checkWordPairs(t, b[:off+len(w.w)])
						checkWordPairs(t, b[:off+len(w.w)-1])
						for k := off; k < off+len(w.w); k++ {
							b[k] ^= 0x20 * byte(r.IntN(2))
						}
						checkWordPairs(t, b)
					}
				}
			}
		}
	}
	for n := 0; n < 20000; n++ {
		b := make([]byte, r.IntN(200))
		for k := range b {
			b[k] = alpha[r.IntN(len(alpha))]
		}
		checkWordPairs(t, b)
	}
}

func FuzzAnyWordPairs(f *testing.F) {
	for _, w := range encodedNeedles {
		f.Add("x" + w)
		f.Add(w + "Zz")
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkWordPairs(t, []byte(s))
	})
}
