package main

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestValidTapName holds validTapName to the regexp it replaced, on the
// edges (lengths 0, 1, 63, 64; each kind of byte first and later) and on
// random names over an alphabet that has every class and its neighbours.
func TestValidTapName(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)
	cases := []string{
		"", "a", "Z", "0", "_", ".", "-", "a_", "a.", "a-", "a b", "a\n", "\na", "a/b", "é", "aé",
		"agent-ws", "mesh.1", "A_b-C.d", strings.Repeat("a", 63), strings.Repeat("a", 64),
		"a" + strings.Repeat("-", 62), "a" + strings.Repeat("-", 63), "@", "[", "`", "{", ":", "/",
	}
	const alphabet = "azAZ09_.-@[`{:/ \x00\xff"
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rnd.IntN(70))
		for i := range b {
			b[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := validTapName(s), re.MatchString(s); got != want {
			t.Errorf("validTapName(%q) = %t, the regexp says %t", s, got, want)
		}
	}
}
