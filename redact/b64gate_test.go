package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestB64MayDecodeRandom: random base64 that holds a three-character
// encoded prefix ("V5S", "leU", "NrL", "zay") by chance, and whose
// decoding holds no token, is passed over by the pre-check (b64MayDecode
// after anyB64Word): before it, every such run sent its text to Find. Of
// the runs where Find reports no credential, the pre-check must turn
// most away (the other checks may still pass a few: a digit token's
// shape by chance).
func TestB64MayDecodeRandom(t *testing.T) {
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	rng := rand.New(rand.NewPCG(15, 15))
	none, passed := 0, 0
	for i := 0; i < 400; i++ {
		b := make([]byte, 780)
		for k := range b {
			b[k] = alpha[rng.IntN(64)]
		}
		needle := []string{"V5S", "leU", "NrL", "zay"}[i%4]
		copy(b[100+rng.IntN(500):], needle)
		if !anyB64Word(b) {
			t.Fatalf("anyB64Word(%q) = false, with %q in it", b, needle)
		}
		if _, ok := firstCredential(b); ok {
			continue
		}
		none++
		if MayHoldCredentialText(b) {
			passed++
		}
	}
	if none < 300 || passed > none/10 {
		t.Fatalf("of %d random base64 runs with an encoded prefix and no credential, the pre-check passed %d", none, passed)
	}
}

// TestB64MayDecodeTokens holds b64MayDecode to Find: every token shape
// encoded in base64 (both alphabets), after zero to five bytes of any
// value and before a few more, alone and inside random base64, is a
// credential that the pre-check passes.
func TestB64MayDecodeTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	checked := 0
	for _, k := range []Kind{KindJWT, KindSK, KindGitHub, KindGitLab, KindAWS, KindSlack, KindStripe, KindGoogle, KindPrivateKey} {
		for _, tok := range credentialExamples[k] {
			for lead := 0; lead < 6; lead++ {
				for trial := 0; trial < 4; trial++ {
					raw := make([]byte, 0, lead+len(tok)+8)
					for range lead {
						raw = append(raw, byte(rng.IntN(256)))
					}
					raw = append(raw, tok...)
					for range rng.IntN(5) {
						raw = append(raw, byte(rng.IntN(256)))
					}
					for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
						e := enc.EncodeToString(raw)
						var pad strings.Builder
						for range rng.IntN(9) {
							pad.WriteByte(alpha[rng.IntN(64)])
						}
						for _, s := range []string{e, "x " + e + " y", pad.String() + e} {
							m, ok := firstCredential([]byte(s))
							if !ok {
								continue
							}
							checked++
							if !MayHoldCredentialText(s) {
								t.Fatalf("MayHoldCredentialText(%q) = false (%q encoded), Find reports %v at %d:%d", s, raw, m.Kind, m.Start, m.End)
							}
						}
					}
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d encoded credentials checked", checked)
	}
}
