package validate

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// pngB64 is an image's base64 with an AWS key id's shape in it (as by
// chance: "AKIA" and 16 capitals and digits between two '/'), which Find
// reports as a credential in any other text.
const pngB64 = "U8mNLGYmymjthMqdN/OK/NpaKO/Wab1yRyKkVfayzonjCcyU/AKIAIOSFODNN7EXAMPLE/dPveiXaqEMz4X8WzU8w8TtFoeZhQ6XLLHva+qw0"

// TestDataURLDeltas: a stream of images, each delta a PNG data: URL, is no
// finding and keeps no tail for the split check (its tail is inside the
// payload, where no credential starts); the same base64 as a delta of
// its own, and a credential cut across the next two deltas, still are.
func TestDataURLDeltas(t *testing.T) {
	img := "data:image/png;base64," + strings.Repeat(pngB64, 4)
	col := &collector{}
	e := NewEngine(DefaultConfig(), col)
	obs := func(rid string, seq int, delta string, fin bool) {
		l := resp(seq, "request_id", rid, "body.delta", delta)
		if fin {
			l = final(seq, "request_id", rid)
		}
		e.Observe(&Input{Tap: "logs", Data: []byte(l), FromLog: true, Time: time.Unix(100, 0)})
	}
	for seq := range 5 {
		obs("img", seq, img, false)
		if e.split != nil && len(e.split.m) != 0 {
			t.Fatalf("chunk %d: a tail is kept for an image's delta", seq)
		}
	}
	obs("img", 5, "", true)
	for _, f := range col.findings {
		t.Errorf("a stream of images: %s %s", f.Rule, f.Message)
	}
	// The premise: the same bytes are a finding where they are not an
	// image's, and a split credential after an image is found.
	obs("raw", 0, pngB64, false)
	obs("raw", 1, "the key: sk-proj-", false)
	obs("raw", 2, "CRPS7a8b9c0d1e2f3g4h ok", false)
	obs("raw", 3, "", true)
	n := 0
	for _, f := range col.findings {
		if f.Rule == "e2a.secret" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d e2a.secret findings for the raw base64 and the split key, want 2: %v", n, col.findings)
	}
}

// TestDataURLDeltasWrappedKey: a .env file in a data: URL streamed across
// two deltas, its GitHub token's encoded prefix in the first delta's kept
// tail, is found across the boundary: the tail holds an encoded token
// prefix, so it is kept (no inert tail).
func TestDataURLDeltasWrappedKey(t *testing.T) {
	const ghp = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	env := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("A=1\n", 100) + "GITHUB_TOKEN=" + ghp + "\n"))
	col := runCapture(t, ProfileJiuwenswarm, streamLines("env", []string{"data:text/plain;base64," + env[:len(env)-40], env[len(env)-40:]}), FormatJSONL)
	n := 0
	for _, f := range col.findings {
		if f.Rule == "e2a.secret" {
			n++
			if !strings.Contains(f.Message, "split across") {
				t.Errorf("not found across the boundary: %s", f.Message)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d e2a.secret findings, want 1: %v", n, col.findings)
	}
}
