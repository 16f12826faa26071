package redact

// A credential wrapped in base64 with nothing around it (a token in a
// header value someone encoded, "c2stcHJvai1…" for "sk-proj-…"): a run of
// the base64 alphabet (standard or URL-safe) at least minB64 long, around
// a digit or '+' that the scan meets anyway, that holds the encoding of a
// token prefix (b64Needles: one table look-up a byte of the run) is
// decoded, at each of the
// four alignments (the run may start with a few bytes that are not part
// of the encoding), into a buffer on the stack, and the decoded bytes are
// scanned (their own base64 runs are not decoded again). A token shape
// found there (KindSK, KindGitHub, KindJWT, KindAWS…: tokenKind) makes the
// run a credential of that kind; anything else found there (an e-mail, a
// password=… pair) masks the run as KindHighEntropy. Decoding costs only
// where such a run is, once a run; text without one pays nothing, and a
// long run of the alphabet (a path, an identifier, a hex digest) a look-up
// a byte.
//
// A run with neither digit nor '+' is not decoded (the scan has no anchor
// in it): about 1 in 60 random runs of 20 characters, shorter ones more.

const (
	minB64 = 16   // 12 decoded bytes: "sk-" and 8 is the shortest token
	maxB64 = 4096 // longer runs are not decoded (a PEM body is found as PEM)
)

// b64state is the base64 check's state during one scan.
type b64state struct {
	nested bool       // the text is decoded base64 already
	end    int        // the end of the last run checked: not checked again
	word   int        // the end of the last word highEntropy judged: not judged again
	prose  proseState // what proseValue judged already
	hint   runHint    // what the scan this one searches the rest of a run for knew of it
	cmd    cmdState   // whether cmdArg may take a value in the text
}

// judgeCmd works out b.cmd for s, the text (apart: the scan's loop does
// not carry its code).
//
//go:noinline
func (b *b64state) judgeCmd(s []byte) cmdState {
	b.cmd = cmdJudge(s)
	return b.cmd
}

// runHint is what a scan knew of a base64 run when b64Run searches the
// rest of it after a word (a search of the same text from the word's end):
// each word of a long run (a base64 image streamed across deltas, a key's
// value) searched and walked the rest again, work quadratic in the run's
// length. Each part is a fact about the text, kept only while it holds.
type runHint struct {
	// s[noWordX:noWordY] is a run of b64alpha that ends there and holds no
	// word of b64Table (anyB64Word false); 0, 0: none known.
	noWordX, noWordY int
	// b64Run walked s[fwdX:fwdY] in plain steps (b64alpha bytes, no
	// URL-encoded one) and stopped at fwdY; its last '+' and '/' (or -1).
	// fwdY 0: none known.
	fwdX, fwdY          int
	lastPlus, lastSlash int
}

// b64val maps both alphabets to 6-bit values: '+' and '-' are 62, '/' and
// '_' are 63; 0xff is not base64.
var b64val = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(std); i++ {
		t[std[i]] = byte(i)
	}
	t['-'], t['_'] = 62, 63
	return t
}()

// check looks at the base64 run around s[i] (a..i is the word before i);
// it returns the run as a Match when its decoding holds a credential or
// personal data.
func (b *b64state) check(s []byte, from, a, i int) (Match, bool) {
	if b.nested || i < b.end {
		return Match{}, false
	}
	if h := &b.hint; from >= h.noWordX && i >= from && i < h.noWordY {
		// Inside a run known to hold no encoded prefix from noWordX on:
		// the run around s[i] ends at noWordY, starts at from or after, and
		// holds none either.
		b.end = h.noWordY
		return Match{}, false
	}
	x := a
	for x > from && is(s[x-1], b64alpha) {
		x--
	}
	y := runLong(s, i, b64alpha)
	checked := b.end
	b.end = y
	if m, ok := derAt(s, from, x, checked); ok && !isMask(s, m.Start) {
		return m, true // a private key's DER or OpenSSH body (der.go)
	}
	if y-x < minB64 || y-x > maxB64 {
		return Match{}, false
	}
	if !anyB64Word(s[x:y]) {
		b.hint.noWordX, b.hint.noWordY = x, y
		return Match{}, false // no encoded token prefix: nothing to decode
	}
	e := y
	for e < len(s) && e-y < 2 && s[e] == '=' {
		e++
	}
	// Every alignment is decoded and the match starts where the earliest
	// find of any of them does: what is left before it holds nothing at
	// any alignment, so that masking the result again changes nothing (a
	// run holding two encoded tokens at different alignments was masked
	// from the one the first alignment found, and the part before it,
	// then a run of its own, was masked by a second pass).
	var buf [maxB64 / 4 * 3]byte
	m := Match{Start: -1}
	for k := 0; k < 4 && y-x-k >= minB64; k++ {
		if m.Start >= 0 && x+k >= m.Start {
			break // this alignment and the next start after the find
		}
		n := decodeB64(&buf, s[x+k:y])
		d, kind := decodedFind(buf[:n])
		if kind == KindNone {
			continue
		}
		// The run from the 4-character group that holds the start of
		// what was found.
		if st := x + k + d/3*4; m.Start < 0 || st < m.Start {
			m.Start = st
		}
		if m.Kind == KindNone || m.Kind == KindHighEntropy {
			m.Kind = kind
		}
	}
	if m.Start < 0 || isMask(s, m.Start) {
		return Match{}, false
	}
	m.End = e
	return m, true
}

// b64Table finds the encoded token prefixes in a run: a run without one
// is not decoded.
// (b64Table is in tables_gen.go.)

// encodedNeedles is b64Needles, built once for the tables that hold them
// (its capacity its length: an append to it copies).
// (It is in tables_gen.go, made by TestTablesGenerated from b64Needles.)

// decodeB64 decodes src (base64 characters only, no padding) into buf,
// a trailing partial group as far as it goes, and returns the length.
func decodeB64(buf *[maxB64 / 4 * 3]byte, src []byte) int {
	n := 0
	var acc uint32
	bits := 0
	for _, c := range src {
		acc = acc<<6 | uint32(b64val[c])
		bits += 6
		if bits >= 8 {
			bits -= 8
			buf[n] = byte(acc >> bits)
			n++
		}
	}
	return n
}

// decodedFind scans decoded bytes: it returns the start of the first
// match (a random-looking run of decoded bytes does not count) and the
// kind of the first token shape among them, else KindHighEntropy, else
// KindNone.
func decodedFind(d []byte) (int, Kind) {
	first, kind := -1, KindNone
	for from := 0; from < len(d); {
		m, ok := scan(d, from, true)
		if !ok {
			break
		}
		if tokenKind(m.Kind) || m.Kind != KindHighEntropy {
			if first < 0 {
				first = m.Start
			}
			if tokenKind(m.Kind) {
				return first, m.Kind
			}
			if m.Kind.Credential() {
				// A key's value that is a token ("GITHUB_TOKEN=ghp_…" in
				// an encoded .env file): the token's kind.
				if v, ok := scan(d[m.Start:m.End], 0, true); ok && tokenKind(v.Kind) {
					return first, v.Kind
				}
			}
			kind = KindHighEntropy
		}
		from = m.End
	}
	return max(first, 0), kind
}

// tokenKind reports the kinds that a token's own bytes make (a prefix, a
// PEM header), not a key or scheme around it: the kinds a base64 run is
// reported as. MayHoldCredential knows their encoded prefixes
// (b64Needles).
func tokenKind(k Kind) bool {
	switch k {
	case KindJWT, KindSK, KindGitHub, KindGitLab, KindAWS, KindSlack, KindStripe, KindGoogle, KindPrivateKey:
		return true
	}
	return false
}

// tokenPrefixes are the exact bytes every match of a tokenKind holds (the
// prefixes prefixed, jwt and pem look for).
var tokenPrefixes = []string{"AKIA", "ASIA", "ABIA", "ACCA", "AIza", "eyJ", "-----BEGIN ", "sk-", "sk_live_", "sk_test_",
	"rk_live_", "rk_test_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "github_pat_", "glpat-",
	"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xoxo-", "xoxe-", "xapp-"}

// b64Needles are, for every token prefix and each of the three byte
// alignments it can have in the encoded stream, the characters of its
// base64 encoding that the prefix alone decides, in both alphabets, and
// with '/' also as JSON's "\/". Every base64 run holding an encoded token
// shape holds one of them.
func b64Needles() []string {
	const std = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	// Every form of every alignment, in one buffer (two allocations, not
	// hundreds: this runs at every process start), then the distinct ones.
	sb := stringsBuf{buf: make([]byte, 0, 4096), ends: make([]int, 0, 256)}
	for _, p := range tokenPrefixes {
		for r := 0; r < 3; r++ {
			// The stream: r unknown bytes, p, unknown bytes; character j
			// covers bits [6j, 6j+6) and is decided by p when they lie in
			// [8r, 8(r+len(p))).
			var stream [32]byte
			copy(stream[r:], p)
			var enc [32]byte
			n := 0
			for j := 0; 6*j+6 <= 8*(r+len(p)); j++ {
				if 6*j < 8*r {
					continue
				}
				bit := 6 * j
				v := 0
				for b := 0; b < 6; b++ {
					byt, off := (bit+b)/8, 7-(bit+b)%8
					v = v<<1 | int(stream[byt]>>off&1)
				}
				enc[n] = std[v]
				n++
			}
			e := enc[:n]
			sb.buf = append(sb.buf, e...)
			sb.end()
			for _, c := range e { // URL-safe
				switch c {
				case '+':
					c = '-'
				case '/':
					c = '_'
				}
				sb.buf = append(sb.buf, c)
			}
			sb.end()
			for _, c := range e { // '/' as JSON's "\/"
				if c == '/' {
					sb.buf = append(sb.buf, '\\')
				}
				sb.buf = append(sb.buf, c)
			}
			sb.end()
		}
	}
	all := sb.strings()
	seen := make(map[string]bool, len(all))
	out := all[:0]
	for _, n := range all {
		if len(n) >= 2 && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// identifier reports whether a mixed-case token reads as a program's
// identifier rather than a random string: split into words at case and
// digit changes ("TestNATSSlowConsumer1724" is Test NATS Slow Consumer
// 1724), it has at most two groups of digits, and at most a quarter of
// its words are short (one or two letters: "No", "By", a lone capital)
// — a random token of upper, lower case and digits is mostly short
// words and many digit groups ("AbCdEf…", "c2stcHJvai1D…").
func identifier(s []byte) bool {
	words, short, digits := 0, 0, 0
	for i := 0; i < len(s); {
		c := s[i]
		j := i + 1
		switch {
		case is(c, cDigit):
			j = run(s, i, cDigit)
			digits++
			if digits > 2 {
				return false
			}
		case is(c, cUpper):
			u := run(s, i, cUpper)
			if u-i > 1 && u < len(s) && is(s[u], cLower) {
				j = u - 1 // an acronym; its last capital starts the next word
			} else {
				j = run(s, u, cLower)
			}
		case is(c, cLower):
			j = run(s, i, cLower)
		default: // '_', '-': separators
			i = j
			continue
		}
		words++
		if !is(c, cDigit) && j-i <= 2 {
			short++
		}
		i = j
	}
	return words > 0 && short*4 <= words
}
