package observe

import (
	"encoding/json"
	"testing"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/redact"
	"github.com/e2atap/e2atap/validate"
)

// TestMaskDeltaLastWord: the live view masks a delta's last word when it
// may start a credential; a last word that only starts with a mask (the
// record's redaction masked half a JWT up to its first '.', or a PEM
// block up to its armor header) is masked whole, not left as it is.
func TestMaskDeltaLastWord(t *testing.T) {
	fp := redact.Mask + "(fp:0123456789abcdef)"
	for _, c := range []struct {
		name, delta, want string
	}{
		{"a word", "split eyJhbGciOi", "split " + redact.Mask + "(len:10)"},
		{"a mask then more", "split " + fp + ".eyJzdWIiOiIxMjM0", "split " + redact.Mask + "(len:44)"},
		{"a mask alone", "split " + fp, "split " + fp},
		{"a length mask alone", "split " + redact.Mask + "(len:12)", "split " + redact.Mask + "(len:12)"},
		{"white space at the end", "split it ", "split it "},
	} {
		rec, _ := json.Marshal(map[string]any{"body": map[string]any{"delta": c.delta}})
		out := maskDelta(rec, false)
		var got struct{ Body struct{ Delta string } }
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Body.Delta != c.want {
			t.Errorf("%s: the delta's last word is %q masked, want %q", c.name, got.Body.Delta[len("split "):], c.want[len("split "):])
		}
	}
}

// TestSplitKeyBlockLive: the live view masks whole every delta after a
// private key block's header until its END line, also when a delta starts
// at a line of the block (no base64 word cut across the boundary for
// Straddle to see), and not the prose after the block.
func TestSplitKeyBlockLive(t *testing.T) {
	line := "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7/x+Qz9Lm3Nv"
	deltas := []string{"Here is the key:\n-----BEGIN PRIVATE KEY-----\n" + line + "\n"}
	for range 6 {
		deltas = append(deltas, line+"\n"+line+"\n")
	}
	deltas = append(deltas, line+"\n-----END PRIV", "ATE KEY-----\n", "Keep it safe.")
	var tails splitTails
	for n, d := range deltas {
		data, _ := json.Marshal(map[string]any{"request_id": "k1", "sequence": n, "is_final": false, "body": map[string]any{"delta": d}})
		head, _ := tails.check(&validate.RecordInfo{In: &validate.Input{Tap: "ws", Data: data}, JSON: &e2a.Record{}, Stream: []byte("k1")})
		if want := n > 0 && n < len(deltas)-1; head != want {
			t.Errorf("delta %d (%.20q): masked whole %v, want %v", n, d, head, want)
		}
	}
}
