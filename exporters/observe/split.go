package observe

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/e2atap/e2atap/redact"
	"github.com/e2atap/e2atap/validate"
)

// A credential split across two chunks of a stream ("…xoxb-1234-" in
// chunk n's body.delta, the rest in chunk n+1's) is neither half a shape
// on its own, so redacting each record alone shows it. The record log
// holds chunk n's line until chunk n+1 comes and masks both halves; a live
// view does not hold lines, so it masks on suspicion instead: the last
// word of a delta that may start a credential (redact.MayStartCredential:
// "…SG.qBP1Ma-Qr-Ax" is masked whole), and the delta of chunk n+1 whenever
// a credential runs into it from chunk n's (or chunk n ends in the key or
// scheme of a value chunk n+1 holds: "Authorization: Token " | token).
// The end of a delta is kept only for those streams, and only while a
// watcher asks for records. A private key block streamed across deltas
// masks every delta after its header whole until its END line
// (redact.OpenKey): its base64 lines are named by nothing, and a cut at a
// line's end left the next delta's lines to the per-record redaction.

const (
	splitTail    = 256  // bytes of a delta kept
	splitHead    = 1024 // bytes of the next delta scanned with it
	maxSplitKept = 4096 // streams with a tail kept; past it a tail is not kept
)

// splitTails is the kept ends of the streams' last deltas.
type splitTails struct {
	mu sync.Mutex
	m  map[string]keptTail // tap, NUL, stream key → the end of its last delta
}

// keptTail is a stream's kept end, and whether a key block is open there.
type keptTail struct {
	end string
	key bool
}

// check reports whether r's body.delta holds the rest of a credential (or
// the value of a key) that the stream's last delta began (head), and
// whether its own end may start one (tail); it keeps the end of r's delta
// for the next record.
func (t *splitTails) check(r *validate.RecordInfo) (head, tail bool) {
	if r.JSON == nil || len(r.Stream) == 0 {
		return false, false
	}
	var d struct {
		Body struct {
			Delta json.RawMessage `json:"delta"`
		} `json:"body"`
		IsFinal bool `json:"is_final"`
	}
	var delta string
	if json.Unmarshal(r.In.Data, &d) != nil || len(d.Body.Delta) == 0 || json.Unmarshal(d.Body.Delta, &delta) != nil {
		delta = ""
	}
	key := r.In.Tap + "\x00" + string(r.Stream)
	t.mu.Lock()
	defer t.mu.Unlock()
	kept, had := t.m[key]
	prev := kept.end
	split, inKey := false, false
	if delta != "" && (kept.key || strings.Contains(delta, "-----")) {
		// (A header or END line cut across deltas: "-----" is in the
		// joined text, and a header's last dash in this delta.)
		j := []byte(prev[max(0, len(prev)-80):] + delta)
		to, open := redact.OpenKey(j, len(j)-len(delta), kept.key)
		split, inKey = to > len(j)-len(delta), open
	}
	if had && delta != "" && !split {
		head := delta[:min(len(delta), splitHead)]
		if _, m, ok := redact.Straddle(nil, []byte(prev), []byte(head)); ok && m.End > len(prev) {
			split = true
		} else if u := unescaped(prev); u != nil {
			// A key spelled with escapes of its own ("p\u0061ssword:" |
			// " <pw>"), as the record log reads it.
			_, m, ok := redact.Straddle(nil, u, []byte(head))
			split = ok && m.End > len(u)
		}
	}
	end := delta[max(0, len(delta)-splitTail):]
	starts := delta != "" && !d.IsFinal && (redact.MayStartCredential(end) || unescaped(end) != nil && redact.MayStartCredential(unescaped(end)))
	switch {
	case (starts || inKey) && (had || len(t.m) < maxSplitKept):
		if t.m == nil {
			t.m = make(map[string]keptTail)
		}
		t.m[key] = keptTail{end, inKey}
	case had:
		delete(t.m, key)
	}
	return split, starts
}

// unescaped is s with its JSON escapes of ASCII bytes decoded
// (redact.UnescapeASCII), or nil when it has none.
func unescaped(s string) []byte {
	if strings.IndexByte(s, '\\') < 0 && strings.IndexByte(s, '%') < 0 || !redact.HasASCIIEscape([]byte(s)) {
		return nil
	}
	return redact.UnescapeASCII(nil, []byte(s))
}

// end forgets a stream's tail.
func (t *splitTails) end(tap, key string) {
	t.mu.Lock()
	if len(t.m) > 0 {
		delete(t.m, tap+"\x00"+key)
	}
	t.mu.Unlock()
}

// maskDelta returns the redacted record out with its body.delta masked
// (whole, or its last word: after its last white space), the length of
// what is masked kept ("******(len:N)"), or nil when it cannot.
func maskDelta(out []byte, whole bool) []byte {
	var rec map[string]json.RawMessage
	if json.Unmarshal(out, &rec) != nil {
		return nil
	}
	var body map[string]json.RawMessage
	if json.Unmarshal(rec["body"], &body) != nil {
		return nil
	}
	var delta string
	if json.Unmarshal(body["delta"], &delta) != nil {
		return nil
	}
	keep := 0
	if !whole {
		keep = strings.LastIndexAny(delta, " \t\n\r") + 1
		if w := delta[keep:]; w == "" || strings.HasPrefix(w, redact.Mask+"(") && strings.IndexByte(w, ')') == len(w)-1 {
			// It ends in white space, or its last word is a mask and
			// nothing else; a word that only starts with one ("******(fp:…).<half a JWT's payload>",
			// a PEM block's next line) is masked whole.
			return out
		}
	}
	masked := delta[:keep] + redact.Mask + "(len:" + strconv.Itoa(len(delta)-keep) + ")"
	q, err := json.Marshal(masked)
	if err != nil {
		return nil
	}
	body["delta"] = q
	b, err := json.Marshal(body)
	if err != nil {
		return nil
	}
	rec["body"] = b
	if out, err = json.Marshal(rec); err != nil {
		return nil
	}
	return out
}
