package observe

import (
	"encoding/json"
	"testing"

	"github.com/e2atap/e2atap/redact"
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
