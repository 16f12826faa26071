package redact

import (
	"strings"
	"testing"
)

// checkMayProbe fails when MayStartCredential with the gate of probed
// differs from it without: the ungated result is the gated one or the
// probes' own (every other check is the same and side-effect free).
func checkMayProbe(t *testing.T, s string) {
	t.Helper()
	for _, tail := range []string{s, s + " ", s + "  ", s + "\t", s + "\n", s + " x ", s + "5 "} {
		win := []byte(tail[max(0, len(tail)-tailWindow):])
		gated := MayStartCredential(tail)
		ungated := gated || anyWord(keyTable, win) && probed(win)
		if gated != ungated {
			t.Fatalf("MayStartCredential(%q) = %v with the gate, %v without", tail, gated, ungated)
		}
	}
}

// gateShapes are the texts whose every cut TestMayProbeExact looks at:
// every credential example, every token shape, keys and schemes followed
// by white space, and prose.
func gateShapes() []string {
	var ss []string
	for _, ex := range credentialExamples {
		ss = append(ss, ex...)
	}
	for s := range tokenShapes {
		ss = append(ss, s)
	}
	for _, w := range append(append([]string(nil), credWords...), keyWordsWhole...) {
		ss = append(ss, w, w+" ", strings.ToUpper(w[:1])+w[1:]+"  ", "my_"+w+"   ", w+" 5 ", "the "+w+" is ", w+"\t")
	}
	return append(ss, "Authorization: Token CRPStok9f8e7d6c5b4a3", "Bearer abc123def456 ", "header Bearer  ", "token 0 token 1 ",
		"-----BEGIN RSA ", "nats://u:pw@host ", "api key ", "the access token ", "x-api-key ", "Set-Cookie ",
		benchProse, "sk-proj- ", "ghp_ ", "eyJhbGciOi ", "AKIA ", "xoxb- ")
}

// TestMayProbeExact: the gate of probed never skips a window where a
// probe completes a credential, over every cut of every shape, alone and
// after prose; and it does skip the stream of "token N " deltas, whose
// key word has a number, not a value, after it.
func TestMayProbeExact(t *testing.T) {
	for _, sh := range gateShapes() {
		for cut := 0; cut <= len(sh); cut++ {
			checkMayProbe(t, sh[:cut])
			checkMayProbe(t, "the answer, then "+sh[:cut])
			checkMayProbe(t, sh[cut:])
		}
	}
	for _, s := range []string{"token 0 ", "token 17 ", "Bearer abc ", "a key fact \n"} {
		if mayProbe([]byte(s)) {
			t.Errorf("mayProbe(%q) = true", s)
		}
	}
	for _, s := range []string{"token ", "Bearer ", "password", "password = ", `"secret": "a b `, "api_key: x ", "token\t", "token 5"} {
		if !mayProbe([]byte(s)) {
			t.Errorf("mayProbe(%q) = false", s)
		}
	}
}

func FuzzMayProbe(f *testing.F) {
	for _, s := range gateShapes() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMayProbe(t, s)
	})
}
