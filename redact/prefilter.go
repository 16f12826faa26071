package redact

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"sync/atomic"
)

// The credential pre-check of decoded text: rule e2a.secret calls Find on
// every string of every record, and almost none holds a credential. Find
// stops at every digit, '@' and '+' (phone numbers, ID numbers, e-mail,
// random tokens: personal data or masked-only kinds), which fill
// timestamps and ids; a credential is only ever revealed at one of a few
// bytes (for CJK labels, 0xEF, 0xAF and 0xBA: cjk.go).
// MayHoldCredentialText stops only there and runs the detector's own check (prefixed, scheme), or, for key=value pairs, the first gate
// of the key's classification, so that it cannot disagree with Find as
// the detectors change: a new token prefix is added to prefixed, a new
// credential key word to specialWords, and both are seen here. A new
// anchor byte or a new way to report a credential must be added to
// credAnchor and mayRevealCredential (TestMayHoldCredentialTextKinds fails
// for a Kind with no example that passes).

// credAnchor marks the bytes of anchor at which find can return a
// credential: aPrefix (token shapes, PEM), aScheme (Bearer, Basic), aSep
// (key=value, Authorization, Cookie, URL userinfo), and aDigit for one
// case only: a base64 run that holds an encoded token prefix is decoded at
// a digit or '+' inside it (b64state.check), and a token found in it is a
// credential of its kind; and aAt for an Oracle connect string
// (user/password@…); aCJK for a CJK label's separator (cjkPair); and of
// aProse the 'w' of "passwd" and "assword" (passwdWord, expectGlob).
// Otherwise aDigit and aAt reveal personal data and high-entropy tokens,
// which are not credentials.
var credAnchor = func() (t [256]uint8) {
	for c := range t {
		if anchor[c]&(aPrefix|aScheme|aSep|aDigit|aAt|aCJK) != 0 {
			t[c] = 1
		}
	}
	t['w'] = 1 // (passwdWord, expectGlob: a credential at aProse's 'w')
	return t
}()

// credAnchorBits[k][c] is credAnchor[c] << k: the eight look-ups of
// eight bytes make a bit mask of their anchors.
var credAnchorBits = shiftedBits(&credAnchor)

// shiftedBits is t's anchors as eight tables, bit k set in table k, so
// that the look-ups of eight bytes OR into a mask of their anchors.
func shiftedBits(t *[256]uint8) (b [8][256]uint8) {
	for k := range b {
		for c := range b[k] {
			if t[c] != 0 {
				b[k][c] = 1 << k
			}
		}
	}
	return b
}

// anchorCursor finds the anchors of a text in order (MayHoldCredentialText,
// scanAt): w, m are the anchors of the span bytes s[w:w+span], a bit each.
// Text dense with anchors (JSON, code, hashes, base64) has several in
// a window: the next one is found in m, not by looking at the bytes
// again from the byte after each anchor. Where 64 bytes are left and the
// kernel runs (vecRuns, set not nil: the anchors fit its tables), a
// window is 64 bytes (setMask64); else eight, by tb's look-ups.
type anchorCursor struct {
	tb   *[8][256]uint8
	set  *byteSet
	w    int
	m    uint64
	span int
}

// newAnchorCursor is a cursor over the anchors of tb and set (the same
// bytes) in a text of n bytes, from start on (the kernel only where 64
// bytes are left: a short text's looks stay those of tb).
func newAnchorCursor(tb *[8][256]uint8, set *byteSet, start, n int) anchorCursor {
	if !vecRuns || n-start < 64 {
		set = nil
	}
	return anchorCursor{tb: tb, set: set, w: start}
}

// next is the first anchor at or after s[i], or len(s). Its callers only
// ever move i forward.
func (c *anchorCursor) next(s []byte, i int) int {
	n := len(s)
	if d := i - c.w; d < c.span && c.m != 0 {
		if c.m>>d != 0 {
			return i + bits.TrailingZeros64(c.m>>d)
		}
		// The rest of the window holds no anchor: the look goes on after
		// it, not from i (a window from i read again the bytes known to
		// hold none; in base64, an anchor every four bytes, each byte was
		// looked up four times).
		i = c.w + c.span
	}
	if c.set != nil {
		for ; i+64 <= n; i += 64 {
			if m := setMask64(&s[i], c.set); m != 0 {
				c.w, c.m, c.span = i, m, 64
				return i + bits.TrailingZeros64(m)
			}
		}
	}
	tb := c.tb
	for ; i+8 <= n; i += 8 {
		w := s[i : i+8 : i+8] // (one bounds check for the eight bytes)
		if m := tb[0][w[0]] | tb[1][w[1]] | tb[2][w[2]] | tb[3][w[3]] | tb[4][w[4]] | tb[5][w[5]] | tb[6][w[6]] | tb[7][w[7]]; m != 0 {
			c.w, c.m, c.span = i, uint64(m), 8
			return i + bits.TrailingZeros8(m)
		}
	}
	// Fewer than eight bytes left: to the anchor a byte at a time.
	c.m = 0
	for ; i < n; i++ {
		if tb[0][s[i]] != 0 {
			return i
		}
	}
	return n
}

// IsCredentialAnchor reports whether Find can reveal a credential at the
// byte c: text without any of these bytes holds no credential.
func IsCredentialAnchor(c byte) bool { return credAnchor[c] != 0 }

// MayHoldCredentialText is a conservative pre-check on decoded text (a
// JSON string after unescaping, a header value): false means that no
// match Find reports in s, from any start, is a credential
// (Kind.Credential), so that a credential search of s can be skipped.
// True says nothing (a check passed at some byte; Find decides). It is one
// table look-up a byte, eight at a time, and never allocates.
func MayHoldCredentialText[T Text](s T) bool {
	b := view(s)
	n := len(b)
	if n >= len("2006-01-02T15:04:05Z") && n <= maxDateTime && b[4] == '-' && isDateTime(b) {
		return false
	}
	if n > len("data:;base64,") {
		if p, ok := inertB64(b); ok {
			// An image's or a file's bytes with no encoded token in them
			// (dataurl.go): only a data: URL's header is looked at.
			return p > 0 && MayHoldCredentialText(b[:p])
		}
	}
	b64End, wordEnd := 0, 0 // the runs checked already
	var prose proseState
	hasAt := 0   // 0: not looked for yet, 1: no '@' in b, 2: one at least
	cmdDone := 0 // cmdArg judged the value up to here
	var cmd cmdState
	c := newAnchorCursor(&credAnchorBits, credAnchorSet, 0, n)
	for i := 0; i < n; i++ {
		if i = c.next(b, i); i >= n {
			break
		}
		if anchor[b[i]]&aDigit != 0 {
			if i >= cmdDone && b[i] != '+' {
				if !cmd.may(b) {
					cmdDone = n // no digit of b is a command's value
				} else if m, ok, next := cmdArg(b, 0, i); ok && m.Kind.Credential() {
					return true
				} else {
					cmdDone = next
				}
			}
			if i >= 5 && b[i] != '+' && (i >= prose.done || b[i-1] == '%' || b[i-1] == 'u') {
				if m, ok := proseValue(b, 0, i, &prose); ok && m.Kind.Credential() {
					return true
				}
			}
			if mayDigitShape(b, i) {
				if _, _, ok := digitShape(b, 0, i); ok {
					return true
				}
			}
			// Only a base64 run long enough to be decoded, holding an
			// encoded token prefix; each run is looked at once.
			if i > 0 && b[i-1] == '%' && mayEncoded(b, i) {
				return true
			}
			if b[i] == '0' && i >= 2 && b[i-1] == 'u' && b[i-2] == '\\' && at(b, i+1, "03") && i+3 < n && (b[i+3]|0x20 == 'd' || b[i+3]|0x20 == 'a') && keyBefore(b, i-2) {
				return true // "password\u003d…"
			}
			short, hexRun := false, false
			if i >= b64End {
				// (An escape's first digit is the first of its run, "u7801":
				// a CJK label spelled with escapes is looked for once a run.)
				if i >= 2 && (b[i-1] == 'u' || b[i-1]|0x20 == 'd' || b[i-1]|0x20 == 'f' && b[i] == '1') && mayEscCJK(b, i) {
					if _, ok := escCJKPair(b, 0, i); ok {
						return true
					}
				}
				x, y, hex, ok := b64Candidate(b, i)
				if ok {
					return true
				}
				if _, ok := derAt(b, 0, x, b64End); ok {
					return true // a private key's base64 (der.go)
				}
				b64End = y
				if short = y-x < minDigitToken; short {
					wordEnd = y // its word runs are shorter still
				}
				hexRun = hex && !short && hexSkip && !(x > 0 && b[x-1] == '%' && pctHexPrefix(b, x))
				if !short && !hexRun && !runRestOff {
					// This digit's word as below, then the rest of the run
					// (mayRunRest): its anchors one by one, without the
					// looks for a run's start.
					var ok bool
					if i > wordEnd || i == wordEnd && is(b[i], word) {
						if wordEnd, ok = digitCandidate(b, i); ok {
							return true
						}
					}
					if cmdDone, wordEnd, ok = mayRunRest(b, max(i+1, run(b, i, cDigit)), b64End, cmdDone, wordEnd, &prose, &cmd); ok {
						return true
					}
					i = b64End - 1
					continue
				}
			}
			if short {
				// A run too short for a digit token: the rest of it matters
				// only from a prefix or scheme anchor that can start a token
				// (not a '-' or '_' after a digit: "2026-03-29", "req-000007").
				j := i + 1
				for ; j < b64End; j++ {
					c := b[j]
					if anchor[c]&(aPrefix|aScheme) != 0 && !(c == '-' || c == '_') || c == 'w' || anchor[c]&aDigit != 0 && mayDigitShape(b, j) ||
						j >= cmdDone && is(c, cDigit) || // a value cmdArg has not judged ("auth+Kqz9…}=…": its run began at the '+')
						(c == '-' || c == '_') && (!is(b[j-1], cDigit) || c == '_' && j >= 2 && is(b[j-2], cUpper|cLower) || c == '-' && j+1 < n && b[j+1] == '-') {
						break
					}
					// A digit skipped here is still one where proseValue
					// may take a value ("passwd AAAAAA+0": a prose key's
					// value, found at its digit): judged as the top of
					// the loop would. (Its escaped '>' cases, a digit
					// after "%" or "\u", cannot lie inside the run after
					// its first anchor: neither '%' nor '\' is in one.)
					if j >= prose.done && is(c, cDigit) && proseMay(b, &prose) {
						if m, ok := proseValue(b, 0, j, &prose); ok && m.Kind.Credential() {
							return true
						}
					}
				}
				if j == b64End {
					i = j - 1
					continue
				}
			}
			if i > wordEnd || i == wordEnd && is(b[i], word) {
				// (At wordEnd a '+': the word before it was judged whole by
				// the digitCandidate that ended it there; another call
				// would walk it back and judge it again.)
				var ok bool
				if wordEnd, ok = digitCandidate(b, i); ok {
					return true
				}
				if hexRun && wordEnd >= b64End && !proseMay(b, &prose) {
					// A run of hex digits and '-' (a UUID, a SHA-256),
					// judged whole at its first digit: the rest of it
					// holds no credential anchor but an 'A' (hexRunRest).
					i = hexRunRest(b, i, b64End) - 1
					continue
				}
			}
			// Only the digits are skipped: another anchor in the run may
			// start a token glued after them ("x1AKIA…", "a1-sk-…").
			i = max(i, run(b, i, cDigit)-1)
			continue
		}
		if b[i] == ':' {
			// A broker's userinfo with no scheme (hostUserinfo), from
			// i-1: the least that any start can leave of the user (from
			// i, an empty user is taken only where from i-1 takes it). Only
			// when the text holds an '@' (looked for once: timestamps are
			// full of ':').
			if hasAt == 0 {
				hasAt = 1
				if bytes.IndexByte(b, '@') >= 0 {
					hasAt = 2
				}
			}
			if hasAt == 2 {
				if _, ok := hostUserinfo(b, max(i-1, 0), i); ok {
					return true
				}
			}
		}
		if mayRevealCredential(b, i) {
			return true
		}
	}
	return false
}

// runRestOff turns mayRunRest off: the loop walks the rest of each run
// (TestMayRunRest and FuzzMayHoldCredentialText compare the two).
var runRestOff = false

// mayRunRest is MayHoldCredentialText's loop over s[j:y], the rest of a
// run of the base64 alphabets (minDigitToken long or more, not all hex)
// that b64Candidate judged at a digit before j: the checks the loop makes
// at each anchor of the run, in the same order with the same state
// (cmdDone, wordEnd, prose, cmd; returned or updated), without what it
// looks at for a run's start or for bytes no run holds (b64Candidate, the
// short run's walk, the escaped CJK label, ':'). In base64 (an anchor
// every four bytes, most of a base64 delta's) the loop's cursor and its
// tests for those cost more than the checks. A check added to the loop's
// digits or its prefix and scheme anchors must be added here too
// (TestMayRunRest and FuzzMayHoldCredentialText compare the two).
//
// Where 64 bytes are left and the kernel runs (vecRuns), the anchors are
// taken from a mask of the 64 bytes s[w:w+64] (m, those from j on), each
// by its lowest bit, not by a test of each byte: in base64 one byte in
// four is an anchor, at random, and that test's branch was mispredicted
// about once an anchor (cachegrind --branch-sim: 3.7 M of the 29 M of
// /tmp/b64-20.jsonl). The checks at an anchor are the same either way.
func mayRunRest(s []byte, j, y, cmdDone, wordEnd int, prose *proseState, cmd *cmdState) (int, int, bool) {
	w, m := j-64, uint64(0)
	for ; j < y; j++ {
		if d := uint(j - w); d < 64 {
			m &= ^uint64(0) << d // (the anchors before j were visited)
		} else if vecRuns && j+64 <= len(s) {
			w, m = j, setMask64(&s[j], &credAnchorMask)
		} else {
			if credAnchor[s[j]] == 0 {
				continue
			}
			goto anchor
		}
		if m == 0 {
			j = w + 63 // (the loop's j++: the next window)
			continue
		}
		if j = w + bits.TrailingZeros64(m); j >= y {
			break
		}
	anchor:
		c := s[j]
		if anchor[c]&aDigit == 0 {
			// A prefix's or a scheme's anchor ('A', 'J', '-', '_', 'b',
			// 'B'): no ':' is in a run. (mayRevealAway turns most of
			// those of a base64 run away without the call.)
			if mayRevealAway(s, j) {
				continue
			}
			if mayRevealCredential(s, j) {
				return cmdDone, wordEnd, true
			}
			continue
		}
		if c != '+' {
			if j >= cmdDone {
				if !cmd.may(s) {
					cmdDone = len(s)
				} else if m, ok, next := cmdArg(s, 0, j); ok && m.Kind.Credential() {
					return cmdDone, wordEnd, true
				} else {
					cmdDone = next
				}
			}
			if j >= 5 && (j >= prose.done || s[j-1] == '%' || s[j-1] == 'u') {
				if m, ok := proseValue(s, 0, j, prose); ok && m.Kind.Credential() {
					return cmdDone, wordEnd, true
				}
			}
		}
		if mayDigitShape(s, j) {
			if _, _, ok := digitShape(s, 0, j); ok {
				return cmdDone, wordEnd, true
			}
		}
		// (No '%' or "\u" is before a digit after the run's first: the
		// loop's checks of them, mayEncoded's and the escaped '=''s, find
		// nothing here.)
		if j > wordEnd || j == wordEnd && c != '+' {
			var ok bool
			if wordEnd, ok = digitCandidate(s, j); ok {
				return cmdDone, wordEnd, true
			}
		}
		// Only the digits are skipped, as the loop skips them.
		j = max(j, run(s, j, cDigit)-1)
	}
	return cmdDone, wordEnd, false
}

// mayRevealAway reports that mayRevealCredential(s, i) is false by the
// first test of its case for the byte s[i]: an 'A' that prefixed turns
// away by the byte after it (afterA), a 'b' or 'B' after a letter with no
// escape or "%3D" before it (no scheme there), a 'w' after no 's'. In a
// base64 run most 'A', 'b' and 'B' bytes are such, and the calls cost
// more than the tests (mayRunRest). TestMayRevealAway holds it to
// mayRevealCredential.
func mayRevealAway(s []byte, i int) bool {
	switch s[i] {
	case 'A':
		return i+1 >= len(s) || !afterA[s[i+1]]
	case 'b', 'B':
		return i >= 3 && is(s[i-1], cUpper|cLower) && s[i-2] != '\\' && s[i-3] != '%'
	case 'w':
		return i < 4 || s[i-1]|0x20 != 's'
	}
	return false
}

// b64Candidate is the gate of b64state.check for the digit or '+' at
// s[i]: the run of the base64 alphabets around it is long enough to be
// decoded and holds the encoding of a token prefix. end is the run's end.
// It implies nothing about find's other digit checks (phone numbers, ID
// numbers, high-entropy tokens), none of which is a credential. hex: the
// run is one of hex digits and '-' (looked at only in a run of minB64
// bytes or more).
func b64Candidate(s []byte, i int) (start, end int, hex, ok bool) {
	if !is(s[i], b64alpha) {
		return i, i + 1, false, false // '+' ends a run: the next byte starts one
	}
	x := i
	for x > 0 && is(s[x-1], b64alpha) {
		x--
	}
	y := runLong(s, i, b64alpha)
	if y-x < minB64 {
		return x, y, false, false
	}
	// (No upper bound: find, started later in a run too long to decode,
	// may see a part of it short enough.)
	if hex = allHex(s[x:y]); hex && hexFreeB64 {
		return x, y, true, false // a hash, a UUID, a hex id: no encoded prefix fits
	}
	return x, y, hex, anyB64Word(s[x:y]) && b64MayDecode(s[x:y])
}

// b64MayDecode is the gate of b64Candidate after anyB64Word: whether the
// run r of the base64 alphabets may hold an encoded token. A word of
// b64Table longer than three characters passes; one of three ("V5S",
// "leU", "NrL", "zay": "eyJ" and "sk-" one or two bytes into a group),
// which random base64 holds about once in 80 runs of 800 characters
// (194 of 16,444 base64 deltas, each then searched whole by Find, which
// decoded the run at its four alignments and scanned each), passes only
// where the run decoded around it, at one of the four alignments, holds a
// token prefix followed by b64Follow bytes of text (decodedPrefix). Every
// match of a tokenKind that b64state.check reports holds its prefix and
// goes on past it in such bytes (a JWT's header, a key's body, a PEM
// block's label), and its encoded prefix holds a word of b64Table at the
// group where the prefix starts or the next one; a decoding from a later
// start in the run (find from a later from) is a part of one of the four
// from a group's start on.
func b64MayDecode(r []byte) bool {
	t := b64Table
	for p := 0; p+1 < len(r); p++ {
		if !t.first[r[p]] {
			continue
		}
		g := t.pair[r[p]][r[p+1]]
		if g == 0 {
			continue
		}
		for _, w := range t.groups[g-1] {
			if w.exact && !at(r, p, w.w) || !w.exact && !atFold(r, p, w.w) {
				continue
			}
			if len(w.w) > 3 || b64DecodesAt(r, p) {
				return true
			}
		}
	}
	return false
}

// b64DecodesAt reports whether r, decoded at one of the four alignments
// from the group before the one that holds r[p] (or from that group when
// there is none before it), over b64Window characters or to the run's
// end, holds a token prefix followed by b64Follow bytes of text.
func b64DecodesAt(r []byte, p int) bool {
	var buf [maxB64 / 4 * 3]byte
	for g := p - 3; g <= p; g++ {
		if g < 0 {
			continue
		}
		x := g
		if g >= 4 {
			x = g - 4
		}
		n := decodeB64(&buf, r[x:min(len(r), x+b64Window)])
		if decodedPrefix(buf[:n]) {
			return true
		}
	}
	return false
}

// b64Window is how many characters b64DecodesAt decodes: a group before
// the needle's, and room for the longest token prefix and b64Follow
// bytes after it.
const b64Window = 32

// b64Follow is how many bytes after a token prefix b64MayDecode wants
// (printable ASCII or white space): every token shape has more than this
// after its prefix.
const b64Follow = 3

// decodedPrefix reports a token prefix in d followed by b64Follow bytes
// that are printable ASCII or white space.
func decodedPrefix(d []byte) bool {
	for i := 0; i+b64Follow < len(d); i++ {
		if !tokenPrefixFirst[d[i]] {
			continue
		}
		for _, p := range tokenPrefixes {
			if at(d, i, p) && i+len(p)+b64Follow <= len(d) && textBytes(d[i+len(p):i+len(p)+b64Follow]) {
				return true
			}
		}
	}
	return false
}

// textBytes reports whether b holds only printable ASCII and white space.
func textBytes(b []byte) bool {
	for _, c := range b {
		if !(c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' || c == '\r') {
			return false
		}
	}
	return true
}

// tokenPrefixFirst marks the first bytes of tokenPrefixes.
var tokenPrefixFirst = func() (t [256]bool) {
	for _, p := range tokenPrefixes {
		t[p[0]] = true
	}
	return t
}()

// hexRunRest is where MayHoldCredentialText goes on in the run s[x:y]
// of the base64 alphabets, made only of hex digits and '-', after the
// digit s[i] at which the run was judged (b64Candidate, no encoded
// prefix; digitCandidate, no token in its one word run), in a text where
// proseValue takes no value (proseMay): at the run's first 'A' after i
// (AKIA's kin, an all-hex "ACCA…", the 21 'A's of an X bearer token), or
// at its end. No other anchor inside it can reveal a credential, from any
// start (TestHexRunRest holds Find to it):
//   - a digit: its run was judged (b64End, wordEnd); digitShape wants a
//     '/', a 'Q' or "ya" before "29" (neither is a hex digit, and the run
//     is bounded by bytes outside the base64 alphabets); the '%' and
//     "\u" checks want a byte before it that is neither;
//   - 'b', 'B': "bearer" and "basic" hold a letter that is no hex digit
//     within their first four bytes, where the run cannot end;
//   - '-': after a digit it starts no prefix but a PEM's "-----BEGIN"
//     (a 'G'); after a hex digit or '-', the flags want a space or a quote
//     before them, sk-, glpat-, xox…- and xapp- a letter that is no hex
//     digit, and a vendor prefix with '-' made of hex digits before it
//     ("fc-") must start a word that no '-' or hex digit precedes but a
//     URL escape's, a run's start (vendorPrefix.bare; hexSkip, worked out
//     from the table; pctHexPrefix).
func hexRunRest(s []byte, i, y int) int {
	if k := bytes.IndexByte(s[i+1:y], 'A'); k >= 0 {
		return i + 1 + k
	}
	return y
}

// pctHexPrefix reports a bare vendor prefix made of hex digits (Firecrawl's
// "fc-") right after the URL escape that starts the run at s[x] (after
// its '%': "%3Dfc-…", "%22fc-…", encoded twice "%253Dfc-…"), where vendor
// takes it (pctSepEnd): such a run is not skipped (hexRunRest). The
// caller has seen the '%'.
func pctHexPrefix(s []byte, x int) bool {
	for _, p := range hexDashPrefixes {
		if at(s, x+2, p) || at(s, x+4, p) {
			return true
		}
	}
	return false
}

// hexDashPrefixes are the bare vendor prefixes made of hex digits before
// their first separator, a '-', through it ("fc-"): pctHexPrefix's.
var hexDashPrefixes = func() (ps []string) {
	for _, vs := range vendorPrefixes[1] {
		for _, v := range vs {
			if allHex([]byte(v.p[:v.sep])) && v.bare {
				ps = append(ps, v.p[:v.sep+1])
			}
		}
	}
	return ps
}()

// hexSkip: no vendor prefix whose first separator is '-' has only hex
// digits before it, unless it is bare (vendor would take such a prefix
// inside a UUID-like run); a new one that has turns hexRunRest's shortcut
// off.
var hexSkip = func() bool {
	for _, vs := range vendorPrefixes[1] {
		for _, v := range vs {
			if allHex([]byte(v.p[:v.sep])) && !v.bare {
				return false
			}
		}
	}
	return true
}()

// hexFreeB64: no word of b64Table is made only of hex digits and '-' (in
// any case), so a run made only of them holds none: the SHA-256 hashes,
// UUIDs and hex ids of tool results and logs are passed over without
// the word search. Worked out from the table, so that a new encoded
// prefix that is all hex turns the shortcut off instead of being missed
// (TestHexFreeB64 says which).
var hexFreeB64 = func() bool {
	for _, g := range b64Table.groups {
		for _, w := range g {
			if allHex([]byte(w.w)) {
				return false
			}
		}
	}
	return true
}()

// allHex reports whether b is made only of hex digits and '-', eight
// bytes a step (the tables' values and'ed: one test a step; a tool's
// SHA-256 hashes and a log's UUIDs are looked at whole at their first
// digit).
func allHex(b []byte) bool {
	if len(b) == 0 || hexOrDash[b[0]] == 0 {
		return len(b) == 0 // (most runs of base64 or of a word end here)
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := b[i : i+8 : i+8]
		if hexOrDash[w[0]]&hexOrDash[w[1]]&hexOrDash[w[2]]&hexOrDash[w[3]]&hexOrDash[w[4]]&hexOrDash[w[5]]&hexOrDash[w[6]]&hexOrDash[w[7]] == 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if hexOrDash[b[i]] == 0 {
			return false
		}
	}
	return true
}

// hexOrDash is 1 for the hex digits (either case) and '-', else 0.
var hexOrDash = func() (t [256]uint8) {
	for _, c := range []byte("0123456789abcdefABCDEF-") {
		t[c] = 1
	}
	return t
}()

// mayRevealCredential reports whether find, reaching the anchor s[i] from
// any from ≤ i, could return a credential there. It is implied by every
// detector that can: prefixed and scheme are run as find runs them (from
// = 0 only widens what they accept); for sep, a URL's "://" or a key
// before the separator that may be credential-named.
func mayRevealCredential(s []byte, i int) bool {
	a := anchor[s[i]]
	switch {
	case a&aPrefix != 0:
		_, ok := prefixed(s, 0, i)
		return ok
	case a&aScheme != 0:
		if i > 0 && is(s[i-1], cUpper|cLower) && !escLetter(s, i-1) && !encodedEqBefore(s, i) {
			return false
		}
		if i+1 < len(s) && s[i+1]|0x20 == 'y' {
			_, ok := identifiedBy(s, 0, i)
			return ok
		}
		_, ok := scheme(s, i)
		return ok
	case a&aCJK != 0:
		_, ok := cjkPair(s, 0, i)
		return ok
	case a&aSep != 0:
		if s[i] == '|' {
			if m, ok := tableCell(s, 0, i); ok {
				return m.Kind.Credential()
			}
			_, ok := pipeFeed(s, 0, i)
			return ok
		}
		if afterMultiByte(s, 0, i) {
			if _, ok := cjkPair(s, 0, i); ok {
				return true
			}
		}
		if s[i] == ':' {
			// A URL's "://" (also JSON's ":\/\/"): sep takes nothing
			// there but a webhook's path or the userinfo (neither looks
			// at from), so they are run as sep runs them. A URL without
			// either (most of them: a link in markdown, a stack trace's
			// request) holds nothing at this byte.
			if at(s, i+1, "//") {
				return urlCredential(s, i+3, "/", false)
			}
			if at(s, i+1, `\/\/`) {
				return urlCredential(s, i+5, `\/`, true)
			}
		}
		if s[i] == '=' && i > 0 && s[i-1] == ' ' && mayValueAfterEq(s, i) {
			if _, ok := setPasswordFor(s, 0, i); ok {
				return true
			}
		}
		return keyBefore(s, i) || namedBefore(s, i) || s[i] == '=' && i >= 6 && curlCookieBefore(s, i) || s[i] == '=' && i+1 < len(s) && s[i+1] == '>' && bracketKeyBefore(s, i) ||
			s[i] == ':' && (mayPgpass(s, i) && isPgpass(s, i) || i >= 5 && (s[i-5] == '/' || s[i-5]|0x20 == 'o') && mayPositional(s, i) ||
				i >= 11 && s[i-1] == ':' && mayAddMask(s, i) || mayColonArg(s, i) || mayLoginPair(s, i))
	case a&aAt != 0:
		_, ok := oracle(s, 0, i, true)
		return ok
	case s[i] == 'w':
		return i >= 4 && s[i-1]|0x20 == 's' && s[i-2]|0x20 == 's' && proseCredential(s, i)
	}
	return false
}

// proseCredential is mayRevealCredential at the 'w' of "passwd" or
// "assword" (aProse's anchor, s[i]): openssl passwd <pw>, mkpasswd <pw>
// (passwdWord), what expect sends after a glob prompt (expectGlob).
func proseCredential(s []byte, i int) bool {
	if _, ok := expectGlob(s, 0, i); ok {
		return true
	}
	_, ok := passwdWord(s, 0, i)
	return ok
}

// mayColonArg is colonArg for the pre-check (any start).
func mayColonArg(s []byte, i int) bool {
	_, ok := colonArg(s, 0, i)
	return ok
}

// mayLoginPair is loginPair for the pre-check (any start): "Login:
// admin / <pw>".
func mayLoginPair(s []byte, i int) bool {
	m, ok := loginPair(s, 0, i)
	return ok && m.Kind.Credential()
}

// mayAddMask is addMask for the pre-check (any start).
func mayAddMask(s []byte, i int) bool {
	_, ok := addMask(s, 0, i)
	return ok
}

// urlCredential is what sep returns for the authority of a URL at s[i]
// ("/" or JSON's "\/" its slash): a webhook's path or the userinfo.
func urlCredential(s []byte, i int, slash string, escaped bool) bool {
	if _, ok := webhook(s, i, slash); ok {
		return true
	}
	_, ok := userinfo(s, i, escaped)
	return ok
}

// keyBefore is the gate of sep's key=value branch: sep takes the key as
// the run of key bytes (at most 64) that ends before s[i], past up to
// three spaces and a closing quote; with a later from, the key it takes
// is a suffix of that run or empty. classifyWords calls a key plain unless
// it is at least three bytes long and holds one of the special words, and
// a suffix holds one only if the run does.
func keyBefore(s []byte, i int) bool {
	j := i
	for j > 0 && j > i-4 && (s[j-1] == ' ' || s[j-1] == '+') {
		j--
	}
	if j > 0 && (s[j-1] == '*' || s[j-1] == '`') {
		j-- // a Markdown emphasis or code span's close: "**Password**: " (keyValue's emphasisKeyEnd)
		if j > 0 && s[j-1] == s[j] {
			j--
		}
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		for n := 0; n < 7 && j > 0 && s[j-1] == '\\'; n++ {
			j--
		}
	} else if j >= 3 && (atFold(s, j-3, "%22") || atFold(s, j-3, "%27")) {
		j -= 3
		for n := 0; n < 7 && j >= 3 && atFold(s, j-3, "%5c"); n++ {
			j -= 3 // "%5C%22password%5C%22%3A…" (keyValue)
		}
	}
	ke := j
	for j > 0 && ke-j < 64 && is(s[j-1], word|cKey) {
		j--
	}
	if ke-j == 3 && s[j]|0x20 == 'k' && spacedKey(s, 0, j) {
		return true
	}
	if ke-j < 3 || !lettersInRow(s[j:ke], minSpecialLetters) {
		// "contraseña: <pw>", "пароль: <pw>", "has\u0142o: <pw>"
		// (keyValue; an empty run ends before a byte beyond ASCII)
		return j > 0 && foreignBefore[s[j-1]] && foreignKeyBefore(s, j, ke)
	}
	if s[i] != ':' && bareOrQueryKey(s, j, ke) {
		return true
	}
	k := s[j:ke]
	if ke-j >= 10 && k[ke-j-1]|0x20 == 'y' && pagerDutyName(k) && pagerDutyAfter(s, i) {
		return true // routing_key: <32 hex> (keyValue; the key is KeyNamedKey, masked only, elsewhere)
	}
	if plainKeys.has(k) {
		return false
	}
	if mayBeSpecial(k) && credentialSuffix(k) {
		return true
	}
	if j > 0 && (foreignBefore[s[j-1]] || ke-j == 5) && foreignKeyBefore(s, j, ke) {
		return true // "lösenord: <pw>", "mot de passe : <pw>" (keyValue)
	}
	if foreignTail(k) {
		return false // (not remembered: "lösenord" holds it, foreignKeyBefore)
	}
	plainKeys.add(k)
	return false
}

// foreignKeyBefore is keyBefore's look for a label of foreignLabels
// ending at s[ke], its ASCII key run s[j:ke] (keyValue's).
//
//go:noinline
func foreignKeyBefore(s []byte, j, ke int) bool {
	if !mayForeignKey(s, 0, j, ke) {
		return false
	}
	if _, ok := foreignLabel(s, 0, ke); ok {
		return true
	}
	_, ok := foreignQualified(s, 0, ke)
	return ok
}

// lettersInRow reports whether k holds n letters in a row (n <= 0: true).
// keyBefore looks for them once the key is found, from its start, not
// counting the longest run at each byte of its walk back: a tool's JSON
// and log lines hold a key before each ':' and '=', and the count was
// half of keyBefore's instructions there.
func lettersInRow(k []byte, n int) bool {
	if n <= 0 {
		return true
	}
	row := 0
	for _, c := range k {
		if !is(c, cUpper|cLower) {
			row = 0
		} else if row++; row >= n {
			return true
		}
	}
	return false
}

// bracketKeyBefore is keyBefore for a key in brackets before the "=>" at
// s[i], as keyValue skips them: PHP var_dump's ["password"]=> (white space
// and '+' before it too).
func bracketKeyBefore(s []byte, i int) bool {
	j := i
	for j > 0 && j > i-4 && (s[j-1] == ' ' || s[j-1] == '+') {
		j--
	}
	return j > 2 && s[j-1] == ']' && keyBefore(s[:j], j-1)
}

// credentialSuffix reports whether keyValue can take a key that credits
// its value as a credential from the run of key bytes k: a later from
// leaves a suffix of the run (keyStart's skips are suffixes too), so every
// suffix is classified as keyValue classifies it. A word that only holds a
// special word ("path" holds "pat", "keyboard" "key", "max_tokens"
// "token") passed mayBeSpecial alone and sent every record with a tool's
// file path through the whole search, ~8× the cost of a record without
// one.
func credentialSuffix(k []byte) bool {
	if n := len(k); n >= 4 && eqFold(k[n-4:], "pass") && (n == 4 || !is(k[n-5], alnum) || n >= 6 && hexVal(k[n-5]) >= 0 && hexVal(k[n-6]) >= 0) {
		return true // a bare "pass" (keyValue's barePass: a word, or after an escape's "%XX")
	}
	for x := 0; x <= len(k)-3; x++ {
		if !mayBeSpecial(k[x:]) {
			return false // nor does any shorter suffix hold a special word
		}
		switch classifySpecial(k[x:]) {
		case KeyPlain, KeyEmail, KeyPhone, KeyUserID, KeyNamedKey:
			// (KeyNamedKey's value is masked, never a credential: a suffix
			// of most "<word>_key" runs is one, "dempotency_key".)
		default:
			return true
		}
	}
	return false
}

// bareOrQueryKey: a separator other than ':' after the key run s[j:ke]
// may credit a plain key's value: a bare key= (a word of its own) or a
// URL's ?key=, &Signature= (keyValue's bareKey and queryKey).
func bareOrQueryKey(s []byte, j, ke int) bool {
	return ke-j >= 3 && atFold(s, ke-3, "key") && wordStart(s, ke-3) ||
		ke-j >= 9 && ke-9 > 0 && atFold(s, ke-9, "signature") && (s[ke-10] == '?' || s[ke-10] == '&')
}

// plainKeys remembers key runs that credit no value (credentialSuffix
// false), process-wide: a tool's results repeat their keys ("path",
// "total_tokens") in every record, and classifying each suffix of one
// cost more than the rest of the pre-check of its text. Two-way set
// associative (512 sets), each slot an immutable copy swapped atomically
// (the shards' goroutines share it); a hit compares the whole run, so it
// never answers for other bytes, and a run it does not hold is classified
// as before. Direct-mapped, two hot keys of a tool's records that the
// process's random seed sent to one slot evicted each other on every
// record: about one run in eight of the same log corpus cost 14 % more
// instructions (TestKeyMemoTwoWays).
var plainKeys keyMemo

type keyMemo struct {
	seed maphash.Seed
	sets [1 << 9][2]atomic.Pointer[string]
}

func init() { plainKeys.seed = maphash.MakeSeed() }

const keyMemoMax = 32 // longer runs are classified each time

// set returns k's two slots, and which of them add replaces when both
// are taken (a bit of the hash the set's index does not use).
func (m *keyMemo) set(k []byte) (w *[2]atomic.Pointer[string], evict int) {
	h := maphash.Bytes(m.seed, k)
	return &m.sets[h&(uint64(len(m.sets))-1)], int(h>>63) & 1
}

func (m *keyMemo) has(k []byte) bool {
	if len(k) > keyMemoMax {
		return false
	}
	w, _ := m.set(k)
	if p := w[0].Load(); p != nil && *p == string(k) {
		return true
	}
	p := w[1].Load()
	return p != nil && *p == string(k)
}

func (m *keyMemo) add(k []byte) {
	if len(k) > keyMemoMax {
		return
	}
	w, evict := m.set(k)
	s := string(k)
	switch {
	case w[0].Load() == nil:
		w[0].Store(&s)
	case w[1].Load() == nil:
		w[1].Store(&s)
	default:
		w[evict].Store(&s)
	}
}

// namedBefore is the gate of keyValue's named "value" (namedCredential):
// the key before s[i] is "value" and the pair before it names a
// credential.
func namedBefore(s []byte, i int) bool {
	j := i
	for j > 0 && j > i-4 && (s[j-1] == ' ' || s[j-1] == '"' || s[j-1] == '\'' || s[j-1] == '\\') {
		j--
	}
	return j >= 5 && atFold(s, j-5, "value") && (j == 5 || !is(s[j-6], word|cKey)) && namedCredential(s, 0, j-5)
}

// minSpecialLetters is the length of the shortest special word when every
// one is made of letters (so that a key holds one only if it has that many
// letters in a row), else 0. It spares the word search for the ':' of
// timestamps and the like.
var minSpecialLetters = func() int {
	n := 1 << 30
	for _, w := range specialWords {
		for i := 0; i < len(w); i++ {
			if !is(w[i], cUpper|cLower) {
				return 0
			}
		}
		n = min(n, len(w))
	}
	return n
}()

// mayEncoded is MayHoldCredentialText's check of the digit s[i] after a
// '%': an encoded separator (encodedSep), an encoded '%' ("%2540": a
// URL-encoded text encoded again, searched decoded once: Masker.Text), an
// Oracle connect string's "%40" ("scott%2Fpw%40%2F%2Fdb…").
func mayEncoded(s []byte, i int) bool {
	switch s[i] {
	case '3':
		return encodedSep(s, i)
	case '2':
		return encodedPercent(s, i-1)
	case '4':
		if i+1 < len(s) && s[i+1] == '0' {
			_, ok := oracleEncoded(s, 0, i, true)
			return ok
		}
	}
	return false
}

// encodedSep is keyBefore for a URL-encoded separator ("%3D", "%3A")
// whose '3' is s[i], or an encoded URL's "%3A%2F%2F" (also JSON text's
// "%3A%5C%2F%5C%2F"), or the first "%3A" of an encoded .pgpass line.
func encodedSep(s []byte, i int) bool {
	if i == 0 || s[i-1] != '%' || i+1 >= len(s) || s[i+1]|0x20 != 'd' && s[i+1]|0x20 != 'a' {
		return false
	}
	// "%3A%2F%2F": an encoded URL (userinfo, a webhook's path).
	if s[i+1]|0x20 == 'a' {
		if _, ok := pgpassEncoded(s, 0, i); ok {
			return true // "localhost%3A5432%3Adb%3Aapp%3Apw"
		}
		if _, ok := twitchOAuthAt(s, 0, i-1, i+2); ok {
			return true // "PASS+oauth%3A…"
		}
		if _, ok := netUseEncoded(s, 0, i); ok {
			return true
		}
		if _, ok := goDSNEncoded(s, 0, i); ok {
			return true
		}
	}
	if s[i+1]|0x20 == 'd' && i >= 2 && s[i-2] == '+' {
		if _, ok := setPasswordForEncoded(s, 0, i-1); ok {
			return true
		}
	}
	return s[i+1]|0x20 == 'a' && (atFold(s, i+2, "%2f%2f") || atFold(s, i+2, "%5c%2f%5c%2f")) || keyBefore(s, i-1) || namedBefore(s, i-1) ||
		atFold(s, i+2, "%3e") && encodedBracketKey(s, i-1) || pctSpaceKey(s, i-1)
}

// pctSpaceKey is keyBefore for a key spelled with "%20" for a space
// before the encoded separator at s[p] ('%'), as keyValue takes it:
// "API%20key%3A" (spacedKey), "password%20%3D".
func pctSpaceKey(s []byte, p int) bool {
	j := p
	if j >= 3 && at(s, j-3, "%20") {
		j -= 3
	}
	if j >= 6 && atFold(s, j-3, "key") && at(s, j-6, "%20") && spacedKey(s, 0, j-3) {
		return true
	}
	return j < p && keyBefore(s, j)
}

// encodedBracketKey is bracketKeyBefore URL-encoded, before the "%3D%3E"
// at s[p] (keyValue): PHP's var_dump, %5B%22password%22%5D%3D%3E.
func encodedBracketKey(s []byte, p int) bool {
	j := p
	for j > 0 && j > p-4 && (s[j-1] == ' ' || s[j-1] == '+') {
		j--
	}
	return j >= 3 && atFold(s, j-3, "%5d") && keyBefore(s, j-3)
}

// maxDateTime is the longest text isDateTime accepts: nanoseconds and a
// numeric offset.
const maxDateTime = len("2006-01-02T15:04:05.999999999+07:00")

// isDateTime reports whether b is exactly an RFC 3339 date-time
// ("2026-03-29T12:00:00.001000+00:00", "2026-03-29T12:00:17Z"): records
// carry one or two (timestamp, converted_at), a new one each record, and
// their dense anchors (digits, '-', ':', '+') make the byte loop of
// MayHoldCredentialText its slowest case. None of them can reveal a
// credential: a '-' after a digit is no token prefix (prefixed); the
// digit runs (at most 13 bytes of the base64 and word alphabets:
// "2026-03-29T12") are shorter than minB64 and minDigitToken, and no '%'
// precedes a '3' (encodedSep); '+' ends a run; a ':' has no "//" after
// it, no '@' in the text (hostUserinfo) and at most one letter in the key
// before it (keyBefore wants minSpecialLetters). TestDateTimeNoCredential
// holds Find to that on random date-times.
// IsDateTime reports whether b is an RFC 3339 date-time as producers
// write timestamps: "2006-01-02T15:04:05", a fraction of 1 to 9 digits,
// and "Z" or "±hh:mm".
func IsDateTime(b []byte) bool { return isDateTime(b) }

func isDateTime(b []byte) bool {
	const layout = "dddd-dd-ddTdd:dd:dd"
	n := len(b)
	if n < len(layout)+1 || n > maxDateTime {
		return false
	}
	// The layout eight bytes at a time: "dddd-dd-", "ddTdd:dd" and
	// "dd:dd:dd" (from byte 11).
	if !dateWords[0].match(binary.LittleEndian.Uint64(b)) ||
		!dateWords[1].match(binary.LittleEndian.Uint64(b[8:])) ||
		!dateWords[2].match(binary.LittleEndian.Uint64(b[11:])) {
		return false
	}
	i := len(layout)
	if b[i] == '.' {
		// The fraction's digits eight at a time (then a ninth), or one
		// at a time in a text too short for a word.
		j := i + 1
		if j+8 <= n {
			if nd := nonDigits(binary.LittleEndian.Uint64(b[j:])); nd != 0 {
				j += bits.TrailingZeros64(nd) / 8
			} else if j += 8; j < n && b[j] >= '0' && b[j] <= '9' {
				j++
			}
		} else {
			for j < n && b[j] >= '0' && b[j] <= '9' {
				j++
			}
		}
		if j == i+1 || j >= n {
			return false
		}
		i = j
	}
	switch b[i] {
	case 'Z':
		return i+1 == n
	case '+', '-':
		// "±dd:dd" ends the text: the last six of its last eight bytes.
		return i+6 == n && offsetWord.match(binary.LittleEndian.Uint64(b[n-8:]))
	}
	return false
}

// nonDigits has 0x80 in each byte of w (little-endian) that is not an
// ASCII digit, as dateWord.match computes it.
func nonDigits(w uint64) uint64 {
	x := w ^ 0x3030303030303030
	return ((x&0x7f7f7f7f7f7f7f7f + 0x7676767676767676) | x) & 0x8080808080808080
}

// offsetWord is "dd:dd" in the last five of eight bytes (a numeric
// offset's, after its sign), the first three any.
var offsetWord = dateWord{digits: 0x80<<24 | 0x80<<32 | 0x80<<48 | 0x80<<56, mask: 0xff << 40, sep: ':' << 40}

// dateWord is eight bytes of the date-time layout: digits has 0x80 in
// the bytes that are digits, mask 0xff in the others, which hold sep.
type dateWord struct{ digits, mask, sep uint64 }

var dateWords = [3]dateWord{newDateWord("dddd-dd-"), newDateWord("ddTdd:dd"), newDateWord("dd:dd:dd")}

func newDateWord(layout string) (d dateWord) {
	for k := 0; k < 8; k++ {
		if layout[k] == 'd' {
			d.digits |= 0x80 << (8 * k)
		} else {
			d.mask |= 0xff << (8 * k)
			d.sep |= uint64(layout[k]) << (8 * k)
		}
	}
	return d
}

// match reports whether the eight bytes of w (little-endian) follow the
// layout: x = w ^ '0' is below 10 in a byte exactly where that byte is a
// digit, and (x&0x7f)+0x76 cannot carry into the next byte.
func (d *dateWord) match(w uint64) bool {
	x := w ^ 0x3030303030303030
	return ((x&0x7f7f7f7f7f7f7f7f+0x7676767676767676)|x)&d.digits == 0 && w&d.mask == d.sep
}

// curlCookieBefore reports curl's -b before the key that ends at the '='
// s[i] (curlCookieKey: keyValue takes the value as a cookie's).
func curlCookieBefore(s []byte, i int) bool {
	j := i
	for j > 0 && i-j < 64 && is(s[j-1], word|cKey) {
		j--
	}
	return j < i && curlCookieKey(s, 0, j)
}
