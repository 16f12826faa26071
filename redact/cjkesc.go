package redact

import (
	"fmt"
	"unicode/utf8"
)

// CJK labels spelled as JSON \uXXXX escapes: Python's json.dumps (its
// default, ensure_ascii) writes "数据库密码：<pw>" as
// "\u6570\u636e\u5e93\u5bc6\u7801\uff1a<pw>", and a tool's result that
// is such JSON text, held in a string of the record, still holds the
// escapes once the record is decoded (the ASCII value stays as it is).
// The pair is revealed at the first digit of the label's last escape (a
// digit anchor), before an ASCII ':' or '=' (also after the escaped quote
// that closes a JSON key) or the separator's escape ("\uff1a" '：',
// "\uff1d" '＝', a copula "\u662f" 是, "\u4e3a" 为, "\u70ba" 為, "\u306f"
// は). The value is judged as cjkPair judges it.

// cjkRunes are cjkLabels as runes; cjkLastRune marks their last runes.
var cjkRunes, cjkLastRune = func() (ls [][]rune, last map[rune]bool) {
	last = map[rune]bool{}
	for _, l := range cjkLabels {
		var rs []rune
		for b := l; len(b) > 0; {
			r, n := utf8.DecodeRune(b)
			rs = append(rs, r)
			b = b[n:]
		}
		ls = append(ls, rs)
		last[rs[len(rs)-1]] = true
	}
	return ls, last
}()

// escSep says whether r is a separator after a CJK label, and whether it
// is a copula.
func escSep(r rune) (sep, copula bool) {
	switch r {
	case '：', '＝':
		return true, false
	case '是', '为', '為', 'は':
		return true, true
	}
	return false, false
}

// cjkEscNeedles are the last escapes of cjkLabels ("u7801" of 码, lower-
// and upper-case hex), for MayHoldCredential: a raw record that holds
// them escaped (once or twice) holds none of cjkNeedles.
func cjkEscNeedles() []string {
	var out []string
	for _, l := range cjkRunes {
		r := l[len(l)-1]
		out = append(out, fmt.Sprintf("u%04x", r), fmt.Sprintf("u%04X", r))
	}
	return out
}

// escFirstDigit returns the first backslash of the escape "\uXXXX" whose
// first digit is s[i] (the hex before it in the escape are letters): each
// escape is judged once, at one of its digits.
func escFirstDigit(s []byte, from, i int) (int, bool) {
	u := i - 1
	for u > from && i-u <= 3 && (s[u]|0x20 >= 'a' && s[u]|0x20 <= 'f') {
		u--
	}
	if u-1 < from || s[u] != 'u' || s[u-1] != '\\' || u+5 > len(s) {
		return 0, false
	}
	p := u - 1
	for p > from && s[p-1] == '\\' {
		p--
	}
	return p, true
}

// escRuneAt decodes the escape whose 'u' is s[u]: its rune and end.
func escRuneAt(s []byte, u int) (rune, int, bool) {
	if u+5 > len(s) {
		return 0, 0, false
	}
	var r rune
	for _, c := range s[u+1 : u+5] {
		h := hexVal(c)
		if h < 0 {
			return 0, 0, false
		}
		r = r<<4 | rune(h)
	}
	return r, u + 5, true
}

// escLabelBefore reports whether the escapes that end at s[e] spell one
// of cjkLabels.
func escLabelBefore(s []byte, from, e int) bool {
	for _, l := range cjkRunes {
		p, k := e, len(l)-1
		for ; k >= 0; k-- {
			u := p - 5
			if u-1 < from || s[u] != 'u' || s[u-1] != '\\' {
				break
			}
			if r, _, ok := escRuneAt(s, u); !ok || r != l[k] {
				break
			}
			for p = u - 1; p > from && s[p-1] == '\\'; p-- {
			}
		}
		if k < 0 {
			return true
		}
	}
	return false
}

// escCJKPair matches the value of a CJK-labelled credential spelled with
// escapes, at the digit s[i] (see above).
func escCJKPair(s []byte, from, i int) (Match, bool) {
	p, ok := escFirstDigit(s, from, i)
	if !ok {
		return Match{}, false
	}
	u := p
	for s[u] == '\\' {
		u++
	}
	r, e, ok := escRuneAt(s, u)
	if !ok {
		return Match{}, false
	}
	se := 0
	sep, copula := escSep(r)
	switch {
	case sep:
		le := p
		for k := 0; k < 3 && le > from && s[le-1] == ' '; k++ {
			le--
		}
		se = e
		if !escLabelBefore(s, from, le) && (copula || !escLabelBefore(s, from, escCopulaBefore(s, from, le))) {
			// An ASCII key before the escape, as cjkKey reads one in
			// UTF-8: a credential key before a copula and a colon
			// ("api_key\u4e3a\uff1a<v>", "API Key\u662f: <v>"), a
			// password word before a copula ("password\u662f<pw>").
			if !copula {
				// "API Key\uff1a<v>", "token\uff1d<v>" (at the '1' of
				// the escape: mayEscCJK).
				if !asciiCredKey(s, from, le) {
					return Match{}, false
				}
			} else if ce, ok := escColonAfter(s, e); ok && asciiCredKey(s, from, le) {
				se, copula = ce, false
			} else if !asciiPassWord(s, from, le, e) {
				return Match{}, false
			}
		}
	case cjkLastRune[r]:
		if !escLabelBefore(s, from, e) {
			return Match{}, false
		}
		q := e
		if q < len(s) && s[q] == '"' {
			q++ // the quote that closes a key
		} else if q < len(s) && s[q] == '\\' {
			b := q
			for b < len(s) && b-q < 8 && s[b] == '\\' {
				b++
			}
			if b < len(s) && s[b] == '"' {
				q = b + 1 // escaped, in JSON text held in a string
			}
		}
		for k := 0; k < 3 && q < len(s) && s[q] == ' '; k++ {
			q++
		}
		switch {
		case q >= len(s):
			return Match{}, false
		case s[q] == ':' || s[q] == '=':
			se = q + 1
		case s[q] == '\\':
			// The separator's escape ("\uff1a", a copula's "\u662f").
			u := q
			for u < len(s) && u-q < 8 && s[u] == '\\' {
				u++
			}
			if u >= len(s) || s[u] != 'u' {
				return Match{}, false
			}
			r2, e2, ok := escRuneAt(s, u)
			sep, cop := escSep(r2)
			if !ok || !sep {
				return Match{}, false
			}
			se, copula = e2, cop
			if cop {
				// A colon after the copula ("\u5bc6\u7801\u4e3a\uff1a<pw>",
				// the password is: …): a key=value pair.
				if ce, ok := escColonAfter(s, e2); ok {
					se, copula = ce, false
				}
			}
		default:
			return Match{}, false
		}
	default:
		return Match{}, false
	}
	va, ve, ok := cjkValue(s, se)
	if !ok {
		return Match{}, false
	}
	return cjkJudge(s, va, ve, copula)
}

// escCopulaBefore is where the key ends before a separator at s[le] that
// follows a copula's escape ("\u5bc6\u7801\u4e3a\uff1a": past the
// \u4e3a and up to three spaces before it), or le where none is there.
func escCopulaBefore(s []byte, from, le int) int {
	u := le - 5
	if u-1 < from || s[u] != 'u' || s[u-1] != '\\' {
		return le
	}
	r, _, ok := escRuneAt(s, u)
	if _, copula := escSep(r); !ok || !copula {
		return le
	}
	b := u - 1
	for b > from && s[b-1] == '\\' {
		b--
	}
	for k := 0; k < 3 && b > from && s[b-1] == ' '; k++ {
		b--
	}
	return b
}

// escColonAfter reports an ASCII ':' or '=', or the escape of a
// full-width one, at s[p] past up to three spaces, and where it ends.
func escColonAfter(s []byte, p int) (int, bool) {
	for k := 0; k < 3 && p < len(s) && s[p] == ' '; k++ {
		p++
	}
	switch {
	case p >= len(s):
	case s[p] == ':' || s[p] == '=':
		return p + 1, true
	case s[p] == '\\':
		u := p
		for u < len(s) && u-p < 8 && s[u] == '\\' {
			u++
		}
		if u < len(s) && s[u] == 'u' {
			if r, e, ok := escRuneAt(s, u); ok {
				if sep, copula := escSep(r); sep && !copula {
					return e, true
				}
			}
		}
	}
	return 0, false
}

// mayEscCJK is escCJKPair's gate at the digit s[i]: the first digit of
// an escape of a label's last character, which is the escape's first hex
// digit ("\u7801", "\u30c9") or its second after a 'd' ("\ud638"), or
// the '1' of a full-width separator's ("\uff1a"). Its
// callers look at s[i-1] first, inline (a call at every digit of a base64
// run cost 3 % of the whole process's instructions, and a look at three
// bytes before each 1 %).
func mayEscCJK(s []byte, i int) bool {
	switch s[i-1] | 0x20 {
	case 'u':
		return s[i-1] == 'u' && i >= 2 && s[i-2] == '\\'
	case 'd':
		return i >= 3 && s[i-2] == 'u' && s[i-3] == '\\'
	}
	// The full-width colon's and equals sign's "\uff1a", "\uff1d", at
	// their '1': after an ASCII key, which no label's escape reveals.
	return s[i] == '1' && i >= 4 && s[i-1]|0x20 == 'f' && s[i-2]|0x20 == 'f' && s[i-3] == 'u' && s[i-4] == '\\'
}
