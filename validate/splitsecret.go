package validate

import (
	"encoding/binary"
	"unicode/utf8"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/redact"
)

// Rule e2a.secret across chunks: a credential split across two chunks of
// one stream, half of it in chunk n's body.delta and the rest in chunk
// n+1's, is neither half a shape on its own. The engine keeps the end of
// chunk n's delta, but only for the rare streams whose last delta ends in
// something that may start a credential (redact.MayStartCredential), in a
// side table: the per-stream state is unchanged, and a stream with nothing
// pending costs nothing. The next chunk's delta is scanned with it
// (redact.Straddle); a credential across the boundary (or a value in chunk
// n+1 whose key or scheme ends chunk n: "Authorization: Token " | token) is
// reported on chunk n+1 at body.delta with its kind, never its value, unless
// chunk n alone showed it (then chunk n was reported). Only for records
// read from a log (RULES.md: e2a.secret is for file sources), live and
// offline alike; a replayed record log says what the live run found.
//
// The table is bounded: a tail is at most splitTail bytes, all of them with
// their keys and bookkeeping (splitEntry) at most maxSplitBytes (past it a tail is not kept: the
// boundary is not checked, and counted in Stats.SplitUnchecked). A tail is
// replaced or dropped when its stream's next record comes, dropped when the
// stream ends and when its connection lost messages (the halves are no
// longer adjacent).

// splitPath is where a split secret is reported: the second chunk's delta.
const splitPath = "body.delta"

const (
	splitTail     = 256
	splitHead     = 1024
	maxSplitBytes = 1 << 20
	// splitEntry is what a kept tail costs on the heap besides its bytes
	// and its key's: the map's slot (a string and a pointer, at the map's
	// load), the slice header and the allocations' rounding. Counted in
	// maxSplitBytes, so that the bound is the heap's (without it, a
	// million streams whose deltas end in "tok" kept four times the
	// bound).
	splitEntry = 80
)

type splitTails struct {
	m      map[string]*[]byte // stream table key → the end of its last delta
	bytes  int
	key    []byte // scratch
	joined []byte // scratch of Straddle
	dec    []byte // scratch: the unescaped delta
	tdec   []byte // scratch: the unescaped end of a delta (unquoteTail)
	starts startMemo
}

// startMemo remembers short tails that MayStartCredential passed (false),
// direct-mapped by a hash of their bytes: a model's stream repeats its
// short deltas (" the", ",", "token 1 "), and comparing one costs less
// than checking it (the key word of "token 1 " sends it through every
// check). It only ever answers what MayStartCredential answered for the
// same bytes.
type startMemo [1 << startBits]struct {
	n uint8 // 0: empty
	b [startMax]byte
}

const (
	startBits = 6
	startMax  = 31
)

// mayStart is redact.MayStartCredential(tail).
func (m *startMemo) mayStart(tail []byte) bool {
	n := len(tail)
	if n == 0 || n > startMax {
		return redact.MayStartCredential(tail)
	}
	var h uint64
	if n >= 8 {
		h = binary.LittleEndian.Uint64(tail) ^ binary.LittleEndian.Uint64(tail[n-8:])*0x9e3779b97f4a7c15
	} else {
		for _, c := range tail {
			h = h<<8 | uint64(c)
		}
	}
	slot := &m[((h^uint64(n))*0xff51afd7ed558ccd)>>(64-startBits)]
	if int(slot.n) == n && string(slot.b[:n]) == string(tail) {
		return false
	}
	if redact.MayStartCredential(tail) {
		return true
	}
	slot.n = uint8(n)
	copy(slot.b[:], tail)
	return false
}

// splitSecret checks the response r (read from a log, data its bytes)
// against its stream's kept tail and keeps its own delta's tail when it
// may start a credential. It returns the kind of a credential split across
// the boundary, or "".
func (e *Engine) splitSecret(in *Input, r *e2a.Record) string {
	rid := r.Get(e2a.FRequestID)
	if rid.Type != e2a.String || len(rid.Str) == 0 {
		return ""
	}
	t := e.split
	if t == nil {
		t = &splitTails{}
		e.split = t
	}
	var raw []byte  // body.delta as written
	var text []byte // body.delta unescaped by Scan already (its pre-check), or nil
	esc, ok := false, false
	if r.Sub(e2a.SBodyDelta).Type == e2a.String { // presence only: Scan does not decode it
		raw, esc, ok = r.RawDelta()
		if !ok {
			raw, esc, ok = bodyDelta(in.Data) // a record ScanStd filled
		} else if esc {
			text, _ = r.DeltaText()
		}
	}
	// The delta is unescaped only when it is looked at: its tail when it
	// may start a credential (an escaped delta with no printable ASCII
	// byte, such as Python's \uXXXX text of a non-Latin script, cannot),
	// the whole of it against a kept tail; and not again when Scan
	// unescaped it for its own pre-check (a tool's JSON result, code).
	var delta []byte // body.delta unescaped, once t.unquote ran
	hasDelta := ok && len(raw) > 0
	final := r.Get(e2a.FIsFinal).Type == e2a.Bool && r.Get(e2a.FIsFinal).Bool
	var tail []byte
	if hasDelta && !final && (!esc || e2a.PrintableAfterUnescape(raw)) {
		if text != nil {
			tail = text[max(0, len(text)-splitTail):] // as unquoteTail makes it
		} else {
			tail = t.unquoteTail(raw, esc, splitTail)
		}
		if !t.starts.mayStart(tail) {
			tail = nil
		}
	}
	if tail == nil && len(t.m) == 0 {
		return "" // the common case: nothing kept, nothing pending
	}
	t.key = appendStreamKey(t.key[:0], in, protoE2A, rid.Str)
	kind := ""
	prev := t.m[string(t.key)]
	if prev != nil && hasDelta && !in.Gap {
		if delta = text; delta == nil {
			delta = t.unquote(raw, esc)
		}
		kind = t.straddle(*prev, delta)
	}
	switch {
	case tail != nil && prev != nil && t.bytes+len(tail)-len(*prev) <= maxSplitBytes:
		// The stream's next tail, in place (no allocation a chunk).
		t.bytes += len(tail) - len(*prev)
		*prev = append((*prev)[:0], tail...)
	case tail != nil && prev == nil && t.bytes+splitEntry+len(t.key)+len(tail) <= maxSplitBytes:
		if t.m == nil {
			t.m = make(map[string]*[]byte)
		}
		b := append([]byte(nil), tail...)
		t.m[string(t.key)] = &b
		t.bytes += splitEntry + len(t.key) + len(tail)
	default:
		if tail != nil {
			e.stats.SplitUnchecked++
		}
		if prev != nil {
			t.drop(t.key)
		}
	}
	return kind
}

// unquote returns the body raw of a JSON string unescaped (in t.dec when
// esc, else raw itself).
func (t *splitTails) unquote(raw []byte, esc bool) []byte {
	if !esc {
		return raw
	}
	if cap(t.dec) > 1<<20 {
		t.dec = nil // one huge delta does not stay held
	}
	t.dec = e2a.AppendUnquoted(t.dec[:0], raw)
	return t.dec
}

// unquoteTail is the last n bytes of raw unescaped (esc: raw has
// escapes), from a few times n bytes of its end, not the whole delta: a
// long escaped delta (code, JSON held in a string, Python's \uXXXX text)
// was unescaped whole a chunk to look at its last 256 bytes. The part
// unescaped starts at a byte that no escape can hold (escBoundary), so
// that its unescaping is the end of the whole one's.
func (t *splitTails) unquoteTail(raw []byte, esc bool, n int) []byte {
	if !esc {
		return raw[max(0, len(raw)-n):]
	}
	if cap(t.tdec) > 1<<20 {
		t.tdec = nil
	}
	if q := escBoundary(raw, len(raw)-3*n); q > 0 {
		t.tdec = e2a.AppendUnquoted(t.tdec[:0], raw[q:])
		if len(t.tdec) >= n {
			return t.tdec[len(t.tdec)-n:]
		}
	}
	t.tdec = e2a.AppendUnquoted(t.tdec[:0], raw)
	return t.tdec[max(0, len(t.tdec)-n):]
}

// escBoundary is the first index q >= p of raw (a JSON string's escaped
// content) where a character starts that is no part of an escape: an
// ASCII byte that is not a backslash, the byte after one or a hex
// digit (the digits of a "\uXXXX"), so neither an escape nor a surrogate
// pair is cut there. 0 when p <= 0 or there is none.
func escBoundary(raw []byte, p int) int {
	if p <= 0 {
		return 0
	}
	for q := p; q < len(raw); q++ {
		c := raw[q]
		if c < utf8.RuneSelf && c != '\\' && !isHexDigit(c) && raw[q-1] != '\\' {
			return q
		}
	}
	return 0
}

func isHexDigit(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }

// bodyDelta finds the string body.delta of a JSON object (valid JSON, as
// Scan accepted it): its raw content and whether it has escapes.
func bodyDelta(d []byte) (raw []byte, esc, ok bool) {
	i := jsonWS(d, 0)
	if i >= len(d) || d[i] != '{' {
		return nil, false, false
	}
	if i = memberOf(d, i, "body"); i < 0 || d[i] != '{' {
		return nil, false, false
	}
	if i = memberOf(d, i, "delta"); i < 0 || d[i] != '"' {
		return nil, false, false
	}
	e := jsonSkip(d, i)
	if e < 0 {
		return nil, false, false
	}
	raw = d[i+1 : e-1]
	for _, c := range raw {
		if c == '\\' {
			return raw, true, true
		}
	}
	return raw, false, true
}

// memberOf returns the index of the value of key in the object at d[i]
// ('{'), or -1. Keys are compared as written (an escaped key does not
// match: the scanner's look-up then differs only for a record that spells
// "body" or "delta" with escapes).
func memberOf(d []byte, i int, key string) int {
	i = jsonWS(d, i+1)
	for i < len(d) && d[i] == '"' {
		ke := jsonSkip(d, i)
		if ke < 0 {
			return -1
		}
		k := d[i+1 : ke-1]
		v := jsonWS(d, ke)
		if v >= len(d) || d[v] != ':' {
			return -1
		}
		v = jsonWS(d, v+1)
		if string(k) == key {
			return v
		}
		if i = jsonSkip(d, v); i < 0 {
			return -1
		}
		i = jsonWS(d, i)
		if i >= len(d) || d[i] != ',' {
			return -1
		}
		i = jsonWS(d, i+1)
	}
	return -1
}

func jsonWS(d []byte, i int) int {
	for i < len(d) && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r') {
		i++
	}
	return i
}

// jsonSkip returns the end of the JSON value at d[i], or -1.
func jsonSkip(d []byte, i int) int {
	if i >= len(d) {
		return -1
	}
	switch d[i] {
	case '"':
		for j := i + 1; j < len(d); j++ {
			switch d[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				e := jsonSkip(d, j)
				if e < 0 {
					return -1
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(d) && d[j] != ',' && d[j] != '}' && d[j] != ']' && d[j] != ' ' && d[j] != '\n' && d[j] != '\r' && d[j] != '\t' {
		j++
	}
	return j
}

// straddle returns the kind of a credential across prev|cur that prev
// alone did not show, or "".
func (t *splitTails) straddle(prev, cur []byte) string {
	var m redact.Match
	var ok bool
	t.joined, m, ok = redact.Straddle(t.joined, prev, cur[:min(len(cur), splitHead)])
	if !ok || !e2a.CredentialMatch(t.joined, m) {
		return "" // (a placeholder or code across the boundary: no finding, as in one chunk)
	}
	for from := 0; m.Start < len(prev) && from < len(prev); {
		x, ok := redact.Find(prev, from)
		if !ok || x.Start > m.Start {
			break
		}
		if x.Start == m.Start && x.Kind.Credential() {
			return "" // chunk n showed it alone: its own finding
		}
		from = max(x.End, from+1)
	}
	return m.Kind.String()
}

func (t *splitTails) drop(key []byte) {
	if prev := t.m[string(key)]; prev != nil {
		t.bytes -= splitEntry + len(key) + len(*prev)
		delete(t.m, string(key))
	}
}

// dropStream forgets the tail of the stream whose table key is key.
func (e *Engine) dropTail(key []byte) {
	if e.split != nil && len(e.split.m) > 0 {
		e.split.drop(key)
	}
}

// dropConnTails forgets the tails of the streams of one connection.
func (e *Engine) dropConnTails(in *Input) {
	if e.split == nil || len(e.split.m) == 0 {
		return
	}
	for k := range e.split.m {
		if tap, conn, _ := streamOf([]byte(k)); tap == in.Tap && conn == in.Conn {
			e.split.drop([]byte(k))
		}
	}
}
