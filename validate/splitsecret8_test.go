package validate

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/e2a"
)

// TestSecretSplitInBase64Stream: a token encoded in a base64 run that a
// stream sends across its deltas (an image, a file, a key's value) is
// found across every boundary inside its encoding, as in one chunk: the
// split check's shortcut for a run that goes on across the boundary
// (b64Lead, the pre-check on the joined text) passes it on to Straddle.
func TestSecretSplitInBase64Stream(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	random := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	tokens := []struct{ raw, kind string }{
		{"sk-proj-CRPSb64stream0123456789", "sk"},
		{"ghp_CRPS0123456789abcdefghijKLMN", "ghp"},
		{"AKIACRPS7EXAMPLE4XYZ", "aws"},
	}
	for _, tk := range tokens {
		enc := base64.StdEncoding.EncodeToString([]byte(tk.raw))
		enc = strings.TrimRight(enc, "=")
		lead, rest := random(200), random(120) // lead: a multiple of 4
		run := lead + enc + rest
		for cut := len(lead) + 1; cut < len(lead)+len(enc); cut++ {
			halves := [2]string{run[:cut], run[cut:]}
			data := strings.Join([]string{
				resp(0, "request_id", "q1", "body.delta", halves[0]),
				resp(1, "request_id", "q1", "body.delta", halves[1]),
				final(2, "request_id", "q1"),
			}, "\n") + "\n"
			col := runCapture(t, ProfileSpec, []byte(data), FormatJSONL)
			var got []Finding
			for _, f := range col.findings {
				if f.Rule == "e2a.secret" {
					got = append(got, f)
				}
			}
			_, _, _, alone := e2a.FindCredential([]byte(halves[0]))
			want := "credential (" + tk.kind + ") in a logged record at body.delta, split across chunks of its stream, up to this one"
			switch {
			case alone && (len(got) != 1 || got[0].Index != 1):
				t.Errorf("%s cut %d: shown by the first chunk, findings %v", tk.kind, cut, got)
			case !alone && (len(got) != 1 || got[0].Index != 2 || got[0].Message != want):
				t.Errorf("%s cut %d: findings %v, want one on the second chunk: %q", tk.kind, cut, got, want)
			}
		}
	}
}
