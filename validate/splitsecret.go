package validate

import (
	"bytes"
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
// A model streams a few characters a chunk (its tokens), so a credential
// can span many chunks: while the text joined so far may start one, the
// kept tail is the end of the last few deltas joined (at most splitTail
// bytes), not of the last one only. A key's value that runs to the end of
// the text is judged once a later delta ends it (or the stream's final
// record comes), not while it may go on: "password=settings" is no
// credential once ".DB_PASSWORD" follows. Not seen: a key word or token
// prefix whose first piece is under three letters ("pa" | "ssw" | "ord").
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
	m      map[string]*keptTail // stream table key → the end of its text
	bytes  int
	key    []byte // scratch
	joined []byte // scratch of Straddle
	dec    []byte // scratch: the unescaped delta
	tdec   []byte // scratch: the unescaped end of a delta (unquoteTail)
	acc    []byte // scratch: the kept tail and the delta after it
	starts startMemo
}

// keptTail is the end of a stream's text, b: its last delta's end, or the
// end of its last few deltas joined while they may hold a credential in
// progress (b[last:] is the last delta's).
type keptTail struct {
	b    []byte
	last int
	open bool // a key's value runs to b's end, not judged yet (straddle)
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
	last := 0 // where in tail the delta's own bytes start
	keepOpen := false
	if hasDelta && !final && (!esc || e2a.PrintableAfterUnescape(raw) || escCJKEnd(raw)) {
		if text != nil {
			tail = text[max(0, len(text)-splitTail):] // as unquoteTail makes it
		} else {
			tail = t.unquoteTail(raw, esc, splitTail)
		}
		if redact.InertB64Tail(delta0(text, raw, esc), len(tail)) {
			tail = nil // inside an image's bytes: no credential starts there
		} else if !t.starts.mayStart(tail) {
			tail = nil
		}
	}
	if tail == nil && len(t.m) == 0 {
		return "" // the common case: nothing kept, nothing pending
	}
	t.key = appendStreamKey(t.key[:0], in, protoE2A, rid.Str)
	kind := ""
	prev := t.m[string(t.key)]
	open := false // a value left open at the end of the text (straddle)
	if prev != nil && !hasDelta && !in.Gap && prev.open {
		kind = t.judgeOpen(prev) // the text ended: a value left open ends with it
	}
	if prev != nil && hasDelta && !in.Gap {
		if delta = text; delta == nil {
			delta = t.unquote(raw, esc)
		}
		kind, open = t.straddle(prev, delta, final)
		if kind == "" && prev.last > 0 {
			// The last delta's end alone, as when only it was kept: a
			// credential that starts there right after another one (glued
			// to it in the joined text) is one of its own.
			last := keptTail{b: prev.b[prev.last:]}
			kind, _ = t.straddle(&last, delta, final)
		}
		if !final && len(delta) < splitTail {
			// The stream's text goes on from the kept tail: keep the end of
			// the two joined when it may start a credential, so that one a
			// model streams a few characters a chunk (its tokens: "sk" |
			// "-pro" | "j-Xq" | …) is followed across every boundary, not
			// only across one.
			t.acc = append(append(t.acc[:0], prev.b[max(0, len(prev.b)-(splitTail-len(delta))):]...), delta...)
			if open || redact.MayStartCredential(t.acc) { // (an open value is kept until judged)
				tail, last, keepOpen = t.acc, len(t.acc)-len(delta), open
			}
		}
	}
	switch {
	case tail != nil && prev != nil && t.bytes+len(tail)-len(prev.b) <= maxSplitBytes:
		// The stream's next tail, in place (no allocation a chunk).
		t.bytes += len(tail) - len(prev.b)
		prev.b, prev.last, prev.open = append(prev.b[:0], tail...), last, keepOpen
	case tail != nil && prev == nil && t.bytes+splitEntry+len(t.key)+len(tail) <= maxSplitBytes:
		if t.m == nil {
			t.m = make(map[string]*keptTail)
		}
		t.m[string(t.key)] = &keptTail{b: append([]byte(nil), tail...), last: last, open: keepOpen}
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

// delta0 is the delta unescaped where that costs nothing: text (Scan
// unescaped it), raw without escapes, or nil.
func delta0(text, raw []byte, esc bool) []byte {
	if text != nil || esc {
		return text
	}
	return raw
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

// straddle returns the kind of a credential across kept|cur that the kept
// text did not show, or "".
//
// A value whose end is not known yet is not judged: a key=value's that
// runs to the end of cur may go on in the next delta
// ("password=settings" | ".DB_PASSWORD", a model's tokens), and it is
// judged when a delta ends it or the stream's final record comes. A token
// shape (sk-…, ghp_…, AKIA…) is one as soon as it matches.
//
// open reports a value left open at the end of cur, judged with a later
// delta (keptTail.open).
func (t *splitTails) straddle(kept *keptTail, cur []byte, final bool) (kind string, open bool) {
	prev := kept.b
	var left redact.Match
	isOpen := false
	if kept.open {
		left, isOpen = openValue(kept)
	}
	var m redact.Match
	var ok bool
	head := cur[:min(len(cur), splitHead)]
	if !isOpen && len(prev) > 0 && b64Char(prev[len(prev)-1]) && b64Lead(head) {
		// A base64 run streamed across deltas (a tail kept because its
		// last word looks like a token) was searched whole at every
		// boundary. With no value left open, what is reported is a match
		// of Straddle's that is a credential (its kind, or a key's or a
		// header's value left open at the end): where the pre-check says
		// that no match Find reports in the joined text, from any start,
		// is one, there is none to report. (Only where the run goes on
		// across the boundary: elsewhere the pre-check mostly passes and
		// Straddle costs less.)
		t.joined = append(append(t.joined[:0], prev...), head...)
		if !redact.MayHoldCredentialText(t.joined) {
			return "", false
		}
	}
	t.joined, m, ok = redact.Straddle(t.joined, prev, head)
	if ok && m.Start < len(prev) && m.End > len(prev) && !m.Kind.Credential() {
		// An address cut in two after a password's label ("Password for
		// bob@exam" | "ple.com: <pw>"): the password comes after it.
		if j, x, found := redact.StraddleNext(t.joined, prev, head, m); found {
			t.joined, m = j, x
		}
	}
	if isOpen && endsValue(cur) && !(ok && m.Start == left.Start) && e2a.CredentialMatch(prev, left) {
		return left.Kind.String(), false // cur does not go on with it: it ended with the kept text
	}
	if !ok {
		return "", false
	}
	if !final && m.End == len(t.joined) && len(cur) < splitTail && openEnded(m.Kind, t.joined[m.Start:m.End]) {
		return "", true
	}
	if !e2a.CredentialMatch(t.joined, m) {
		return "", false // (a placeholder or code across the boundary: no finding, as in one chunk)
	}
	for from := 0; m.Start < len(prev) && from < len(prev); {
		x, ok := redact.Find(prev, from)
		if !ok || x.Start > m.Start {
			break
		}
		// Judged already: a match the kept text ends, or one it ends
		// with that was not left open (by the last delta alone, its own
		// finding, or across an earlier boundary); a value left open at
		// its end was not, unless the last delta alone showed it.
		if x.Start == m.Start && e2a.CredentialMatch(prev, x) &&
			(x.End < len(prev) || !openEnded(x.Kind, prev[x.Start:x.End]) || x.Start >= kept.last && shownAlone(prev[kept.last:], x.Start-kept.last)) {
			return "", false
		}
		from = max(x.End, from+1)
	}
	return m.Kind.String(), false
}

// b64Lead reports whether head starts with b64LeadLen bytes of the base64
// alphabets (standard or URL-safe): a run that goes on.
func b64Lead(head []byte) bool {
	if len(head) < b64LeadLen {
		return false
	}
	for _, c := range head[:b64LeadLen] {
		if !b64Char(c) {
			return false
		}
	}
	return true
}

const b64LeadLen = 32

func b64Char(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}

// shownAlone reports whether the last delta alone, text, shows a
// credential that starts at its byte at (its own finding).
func shownAlone(text []byte, at int) bool {
	for from := 0; from <= at && from < len(text); {
		x, ok := redact.Find(text, from)
		if !ok || x.Start > at {
			return false
		}
		if x.Start == at && e2a.CredentialMatch(text, x) {
			return true
		}
		from = max(x.End, from+1)
	}
	return false
}

// openValue returns the value left open at the end of the kept text: a
// match that runs to its end, of a kind that may go on (openEnded), and
// that started before the last delta (one wholly in it was that delta's
// own finding).
func openValue(kept *keptTail) (redact.Match, bool) {
	var last redact.Match
	found := false
	for from := 0; from < len(kept.b); {
		x, ok := redact.Find(kept.b, from)
		if !ok {
			break
		}
		last, found = x, true
		from = max(x.End, from+1)
	}
	return last, found && last.End == len(kept.b) && last.Start < kept.last && openEnded(last.Kind, kept.b[last.Start:last.End])
}

// endsValue reports whether cur, the text after a value left open, ends
// it: it starts with white space or a delimiter ("hunter2" | " in", |
// "\n", | ")"), not with what a value or a scheme's word goes on with
// ("Toke" | "n …").
func endsValue(cur []byte) bool {
	if len(cur) == 0 {
		return false
	}
	switch cur[0] {
	case ' ', '\t', '\n', '\r', ',', ';', ')', ']', '}', '"', '\'', '<', '>', '&', '|', '`':
		return true
	}
	return false
}

// judgeOpen returns the kind of a credential left open at the end of the
// kept text, now that the stream's text ended there, or "".
func (t *splitTails) judgeOpen(kept *keptTail) string {
	if m, ok := openValue(kept); ok && e2a.CredentialMatch(kept.b, m) {
		return m.Kind.String()
	}
	return ""
}

// openEnded reports whether v, a match of kind k that ends the text it was
// found in, may go on past it and be no credential once it does: a
// key=value's word ("password=settings" | ".DB_PASSWORD"), or a header's value
// that is still its scheme's word ("Authorization: Toke" | "n …"). A
// header's token is one from its first characters on.
func openEnded(k redact.Kind, v []byte) bool {
	switch k {
	case redact.KindKeyValue:
		// A word of letters (or a dotted path of them) may be a name code
		// goes on with ("settings" | ".DB_PASSWORD", "os" | ".getenv(",
		// "Optional" | "[str]"); a value with a digit or another sign in it
		// is judged as it stands.
		for _, c := range v {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '.' || c == '$') {
				return false
			}
		}
		return true
	case redact.KindAuthorization, redact.KindBearer, redact.KindBasic:
		for _, w := range []string{"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey"} {
			if len(v) < len(w) && bytes.EqualFold(v, []byte(w[:len(v)])) {
				return true
			}
		}
	}
	return false
}

func (t *splitTails) drop(key []byte) {
	if prev := t.m[string(key)]; prev != nil {
		t.bytes -= splitEntry + len(key) + len(prev.b)
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

// escCJKEnd reports an escaped delta with no printable ASCII (Python's
// ensure_ascii text of a CJK script) whose last character, past white
// space, ends a CJK label or its separator: "\u5bc6\u7801\uff1a"
// (密码：) | "<pw>", or may end a Cyrillic label or a dash after it
// (foreignLast). Its tail is then judged as a UTF-8 one would be.
func escCJKEnd(raw []byte) bool {
	e := len(raw)
	for e >= 1 && raw[e-1] == ' ' || e >= 2 && raw[e-2] == '\\' && (raw[e-1] == 'n' || raw[e-1] == 't') {
		if raw[e-1] == ' ' {
			e--
		} else {
			e -= 2
		}
	}
	if e < 6 || raw[e-6] != '\\' || raw[e-5] != 'u' {
		return false
	}
	r := 0
	for _, c := range raw[e-4 : e] {
		d := int(c|0x20) - '0'
		if d > 9 {
			d -= 'a' - '0' - 10
		}
		r = r<<4 | d&15
	}
	return redact.EndsCJKLabel(rune(r)) || foreignLast(rune(r))
}

// foreignLast reports a character that may end Cyrillic's "пароль" or
// "парола" cut after its fourth letter or whole, or the dash after such a
// label ("пароль —" | " <pw>"): a delta of Cyrillic text escaped with no
// printable ASCII whose tail MayStartCredential may keep.
func foreignLast(r rune) bool {
	switch r {
	case 'о', 'л', 'ь', 'а', 'О', 'Л', 'Ь', 'А', '\u2014', '\u2013':
		return true
	}
	return false
}
