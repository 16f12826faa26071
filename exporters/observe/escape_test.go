package observe

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/validate"
)

// TestKeysReachWatchersAsTheyAre: with the Redactor `e2atap run` gives the
// hub, a stream key holding a '"', a '\' or a control character reaches a
// watcher as itself (its line decodes to the key, and a stream= filter of
// the key selects it); it was JSON-escaped twice, once by the Redactor and
// once more by the line. A credential in a key is still masked.
func TestKeysReachWatchersAsTheyAre(t *testing.T) {
	red := jsonlog.NewRedactor(jsonlog.ContentMask, 1<<20, []byte("observe-escape-test-key"))
	const token = "ghp_" + "Zx9Kq2Lm4Np6Rs8Tv0Wy1Ab3Cd5Ef7Gh9Ij1K"
	for _, key := range []string{`a"b\c` + "\td", "q\u00e9-\u4e2d-\x01", `p\u0061ss`, "plain-6f1c2a4e"} {
		h := NewHub(red, Options{RingEvents: 16, RingBytes: 1 << 20, Now: func() time.Time { return t0 }})
		h.StreamEnd(&validate.StreamInfo{Tap: "t", Key: key, Outcome: validate.OutcomeSucceeded, Protocol: validate.ProtoE2A, Start: t0, End: t0.Add(time.Second), Records: 2})
		h.Finding(finding("e2a.seq_gap", validate.Error, key, 0))
		w, back := h.subscribe(Filter{Stream: key}, 100)
		h.unsubscribe(w)
		if len(back) != 2 {
			t.Errorf("stream=%q selects %d of 2 events", key, len(back))
		}
		for _, line := range back {
			var ev Event
			if err := json.Unmarshal(line, &ev); err != nil {
				t.Fatalf("%q: line %s: %v", key, line, err)
			}
			if ev.Stream != key {
				t.Errorf("stream %q reached the watcher as %q (%s)", key, ev.Stream, line)
			}
		}
	}
	h := NewHub(red, DefaultOptions())
	h.StreamEnd(&validate.StreamInfo{Tap: "t", Key: "k-" + token, Outcome: validate.OutcomeSucceeded, Start: t0, End: t0.Add(time.Second)})
	w, back := h.subscribe(Filter{}, 100)
	h.unsubscribe(w)
	if len(back) != 1 || strings.Contains(string(back[0]), token[4:]) || !strings.Contains(string(back[0]), "******") {
		t.Errorf("a key holding a token: %q", back)
	}
}
