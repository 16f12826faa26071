package redact

import (
	"bytes"
	"slices"
	"unicode/utf8"
)

// Credentials labelled in Chinese, Japanese or Korean: "数据库密码：<pw>",
// "API密钥=<key>", "访问令牌为 <token>", "パスワードは <pw>", "비밀번호: <pw>",
// and an ASCII credential key before a full-width colon ("password：<pw>",
// as an input method writes it). The label is one of cjkLabels, ending
// right before the separator (past up to three spaces): "密码学：" and
// "密码长度：12" name no password. The value is the ASCII run after the
// separator (or the text in its quotes, ASCII or CJK, holding an ASCII
// letter or digit); a value that starts with a CJK character
// ("密码：请输入") is none.
//
// Separators: ':', '=', the full-width '：' and '＝' (a key=value pair: a
// credential, KindKeyValue, as keyValue's) and the copulas 是, 为, 為 and
// は ("the password is": a credential where the value reads as generated,
// strongValue, else masked as KindHighEntropy, as proseValue's).
//
// Anchors (aCJK): the full-width separators' lead byte 0xEF and the last
// bytes of the copulas, 0xAF (是 E6 98 AF, は E3 81 AF) and 0xBA (为 E4 B8
// BA, 為 E7 82 BA); an ASCII ':' or '=' is sep's anchor, which calls
// cjkPair when a byte of a multi-byte character precedes it. In Chinese
// text about one byte in forty is one of them, each turned away by a look
// at the two bytes beside it.

// cjkLabels are the labels, in UTF-8: password (Simplified and
// Traditional Chinese, Japanese, Korean), passphrase, secret key, private
// key, token.
var cjkLabels = [][]byte{
	[]byte("密码"), []byte("密碼"), []byte("口令"), []byte("密钥"), []byte("秘钥"), []byte("私钥"),
	[]byte("密鑰"), []byte("金鑰"), []byte("私鑰"), []byte("令牌"), []byte("パスワード"), []byte("비밀번호"),
}

// cjkLabelLast marks the last bytes of cjkLabels: a text that ends in
// none of them (7 in 8 of CJK text) ends in no label.
var cjkLabelLast = func() (t [256]bool) {
	for _, l := range cjkLabels {
		t[l[len(l)-1]] = true
	}
	return t
}()

// cjkEnds are the last characters of cjkLabels and the separators after
// them.
var cjkEnds = func() (rs []rune) {
	for _, l := range cjkLabels {
		if r, _ := utf8.DecodeLastRune(l); !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	return append(rs, cjkSeps...)
}()

// cjkSeps are the separators cjkSep reads after a label, as runes: the
// full-width ':' and '=' and the copulas.
var cjkSeps = []rune{'：', '＝', '是', '为', '為', 'は'}

// IsCJKLabelEnd reports whether r is the last character of a CJK label
// (cjkLabels), one switch (TestIsCJKLabelEnd holds it to the labels).
func IsCJKLabelEnd(r rune) bool {
	switch r {
	case '码', '碼', '令', '钥', '鑰', '牌', 'ド', '호':
		return true
	}
	return false
}

// IsCJKSeparator reports whether r is a separator a CJK label's value
// follows (cjkSeps): the only characters at or above U+0080 whose UTF-8
// holds an anchor byte at which a credential can be revealed (cjkSep
// turns the others away), a copula only after a label (IsCJKLabelEnd). A
// \uXXXX escape of one where it may follow a label (Python's ensure_ascii
// "密码\uff1a…") must be unescaped before the pre-check; an escape of any
// other non-ASCII character cannot reveal one.
func IsCJKSeparator(r rune) bool {
	switch r {
	case '：', '＝', '是', '为', '為', 'は':
		return true
	}
	return false
}

// EndsCJKLabel reports whether r ends a CJK label or its separator: a
// text that ends in it may hold the label of a value the next text holds
// (the split check asks it of the last \uXXXX escape of Python's
// ensure_ascii text).
func EndsCJKLabel(r rune) bool { return slices.Contains(cjkEnds, r) }

// cjkNeedles are cjkLabels for MayHoldCredential (exact: no case).
func cjkNeedles() []string {
	out := make([]string, len(cjkLabels))
	for k, l := range cjkLabels {
		out[k] = string(l)
	}
	return out
}

// cjkPctNeedles are the last characters of cjkLabels URL-encoded
// ("%e7%a0%81" of 码; MayHoldCredential compares them in any case): a
// raw record that holds a label so (a query's "%E5%AF%86%E7%A0%81%3A…",
// formCJK's) holds none of cjkNeedles.
func cjkPctNeedles() []string {
	var out []string
	for _, l := range cjkLabels {
		_, n := utf8.DecodeLastRune(l)
		var b []byte
		for _, c := range l[len(l)-n:] {
			b = append(b, '%', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		if !slices.Contains(out, string(b)) {
			out = append(out, string(b))
		}
	}
	return out
}

// cjkSep returns the separator whose anchor byte is s[i]: [ss, se), and
// whether it is a copula (prose) rather than a key=value separator.
func cjkSep(s []byte, i int) (ss, se int, copula, ok bool) {
	switch s[i] {
	case 0xEF: // '：' EF BC 9A, '＝' EF BC 9D
		if i+2 < len(s) && s[i+1] == 0xBC && (s[i+2] == 0x9A || s[i+2] == 0x9D) {
			return i, i + 3, false, true
		}
	case 0xAF: // 是 E6 98 AF, は E3 81 AF
		if i >= 2 && (s[i-2] == 0xE6 && s[i-1] == 0x98 || s[i-2] == 0xE3 && s[i-1] == 0x81) {
			return i - 2, i + 1, true, true
		}
	case 0xBA: // 为 E4 B8 BA, 為 E7 82 BA
		if i >= 2 && (s[i-2] == 0xE4 && s[i-1] == 0xB8 || s[i-2] == 0xE7 && s[i-1] == 0x82) {
			return i - 2, i + 1, true, true
		}
	case ':', '=':
		return i, i + 1, false, true
	}
	return 0, 0, false, false
}

// cjkCopulaAt reports whether s[k:k+3] is one of the copulas (是 E6 98 AF,
// は E3 81 AF, 为 E4 B8 BA, 為 E7 82 BA), as cjkSep reads them.
func cjkCopulaAt(s []byte, k int) bool {
	if k < 0 || k+3 > len(s) {
		return false
	}
	_, _, copula, ok := cjkSep(s, k+2)
	return ok && copula
}

// afterMultiByte reports whether the byte before s[i], past up to three
// spaces and a closing quote (escaped or not), ends a multi-byte
// character: the gate of sep's call of cjkPair.
func afterMultiByte(s []byte, from, i int) bool {
	j := cjkKeyEnd(s, from, i, true)
	return j > from && s[j-1] >= 0x80
}

// cjkKeyEnd is where a key before s[j] ends: past up to three spaces and,
// if quoted may be, a closing quote ("数据库密码": "…", also in JSON text
// held in a string: \"数据库密码\":\"…\").
func cjkKeyEnd(s []byte, from, j int, quoted bool) int {
	for k := 0; k < 3 && j > from && s[j-1] == ' '; k++ {
		j--
	}
	if quoted && j > from && (s[j-1] == '"' || s[j-1] == '\'') {
		j--
		for n := 0; n < 7 && j > from && s[j-1] == '\\'; n++ {
			j--
		}
	}
	return j
}

// cjkKeyed is cjkPair's look before the separator whose anchor is s[i],
// without its value: mayProbe's gate for a tail whose value the next
// text may hold.
func cjkKeyed(s []byte, i int) bool {
	_, _, ok := cjkKey(s, 0, i)
	return ok
}

// cjkKey looks before the separator whose anchor byte is s[i] for a CJK
// label, or a credential key before a full-width separator, at or after
// from. se is where the separator ends.
func cjkKey(s []byte, from, i int) (se int, copula, ok bool) {
	ss, se, copula, ok := cjkSep(s, i)
	if !ok || ss < from {
		return 0, false, false
	}
	ke := cjkKeyEnd(s, from, ss, !copula)
	if !copula && ke-3 >= from && cjkCopulaAt(s, ke-3) {
		// A colon after the copula: "您的密码为：<pw>", "初始密码是: <pw>"
		// (the password is: …), a key=value pair as "密码：" is.
		// Also after an ASCII credential key: "Token为：<pw>", "api_key是: <pw>".
		if k := cjkKeyEnd(s, from, ke-3, false); cjkLabelAt(s, from, k) || asciiCredKey(s, from, k) {
			return se, false, true
		}
	}
	if cjkLabelAt(s, from, ke) {
		return se, copula, true
	}
	if copula && asciiPassWord(s, from, ke, se) {
		return se, true, true // "password是<pw>", "我的pwd为<pw>": prose
	}
	if copula || s[ss] != 0xEF {
		return 0, false, false // an ASCII key before ':' or '=' is keyValue's
	}
	return se, false, asciiCredKey(s, from, ke)
}

// asciiPassWord reports whether one of the words that name a password in
// English prose (proseValue's "password", "passwd", "passphrase", "pwd")
// ends at s[ke], before a CJK copula that ends at s[se]: "password是<pw>"
// is "the password is <pw>". After "pwd" a path is no value ("pwd是
// /home/x", the shell's command's output).
func asciiPassWord(s []byte, from, ke, se int) bool {
	ks := ke
	for ks > from && ke-ks < 11 && is(s[ks-1], cUpper|cLower) {
		ks--
	}
	esc := false
	for k := ks; k < ke && k-ks < 4; k++ {
		// After an escape ("\u7684pwd\u662f…", ensure_ascii's "的pwd是";
		// "\u4e3apwd": the escape's last hex letters in the run).
		if k-6 >= from && s[k-6] == '\\' && s[k-5] == 'u' && hexVal(s[k-4]) >= 0 && hexVal(s[k-3]) >= 0 && hexVal(s[k-2]) >= 0 && hexVal(s[k-1]) >= 0 {
			ks, esc = k, true
			break
		}
	}
	if ks == ke || !esc && !wordStart(s, ks) {
		return false
	}
	if eqFold(s[ks:ke], "pwd") {
		for se < len(s) && s[se] == ' ' {
			se++
		}
		return !pathValue(s, se)
	}
	return eqFoldAny(s[ks:ke], "password", "passwd", "passphrase")
}

// asciiCredKey reports whether an ASCII credential key ends at s[ke]
// (classifyWords of its word and '.' run, at or after from), also a
// label of two words whose last is "key" ("API Key：…", "Secret Key为：…",
// spacedKey's, as keyValue reads them before an ASCII ':').
func asciiCredKey(s []byte, from, ke int) bool {
	ks := ke
	for ks > from && ke-ks < 64 && is(s[ks-1], word|cKey) {
		ks--
	}
	if ks == ke {
		return false
	}
	kc := classifyWords(s, ks, ke)
	return kc.Credential() || kc == KeyPlain && ke-ks == 3 && spacedKey(s, from, ks)
}

// cjkPair matches the value of a CJK-labelled credential whose separator
// has its anchor byte at s[i] (see cjkLabels).
func cjkPair(s []byte, from, i int) (Match, bool) {
	se, copula, ok := cjkKey(s, from, i)
	if !ok {
		return Match{}, false
	}
	va, ve, ok := cjkValue(s, se)
	if !ok {
		return Match{}, false
	}
	return cjkJudge(s, va, ve, copula)
}

// cjkJudge judges the value s[va:ve] after a CJK label and its separator:
// none (too short, a mask, a placeholder, CJK words), a credential, or
// after a copula a word masked as prose is.
func cjkJudge(s []byte, va, ve int, copula bool) (Match, bool) {
	v := s[va:ve]
	least := 4
	if copula {
		least = 6
	}
	if len(v) < least || isMask(s, va) || holdsMask(v) || v[0] == '<' || !hasAlnum(v) {
		return Match{}, false
	}
	if copula && !strongValue(v) {
		return Match{va, ve, KindHighEntropy}, true
	}
	return Match{va, ve, KindKeyValue}, true
}

// hasAlnum reports whether v holds an ASCII letter or digit: a quoted
// value written in CJK characters ("密码：“未设置”", not set) is none.
func hasAlnum(v []byte) bool {
	for _, c := range v {
		if is(c, alnum) {
			return true
		}
	}
	return false
}

// cjkLabelAt reports whether one of cjkLabels ends at s[ke] (and starts at
// or after from).
func cjkLabelAt(s []byte, from, ke int) bool {
	if ke-from < 6 || !cjkLabelLast[s[ke-1]] {
		return false
	}
	for _, l := range cjkLabels {
		if ke-len(l) >= from && bytes.Equal(s[ke-len(l):ke], l) {
			return true
		}
	}
	return false
}

// cjkValue is the value after a separator that ends at s[p]: past up to
// three spaces, the text in quotes (ASCII, “…”, ‘…’, 「…」, 『…』; on one
// line, at most 256 bytes), or else the run of printable ASCII up to a
// space, a quote, a backslash (an escape in JSON text) or a multi-byte
// character, less a closing '.', ',', ';' or ')'.
func cjkValue(s []byte, p int) (va, ve int, ok bool) {
	n := len(s)
	for k := 0; k < 3 && p < n && (s[p] == ' ' || s[p] == '\t'); k++ {
		p++
	}
	if p >= n {
		return 0, 0, false
	}
	var closing []byte
	switch c := s[p]; {
	case c == '"' || c == '\'' || c == '`':
		closing = s[p : p+1]
		p++
	case c == '\\' && p+1 < n && s[p+1] == '"': // JSON text held in a string
		closing = s[p : p+2]
		p += 2
	case c == 0xE2 && p+2 < n && s[p+1] == 0x80 && (s[p+2] == 0x9C || s[p+2] == 0x98): // “ ‘
		closing = []byte{0xE2, 0x80, s[p+2] + 1}
		p += 3
	case c == 0xE3 && p+2 < n && s[p+1] == 0x80 && (s[p+2] == 0x8C || s[p+2] == 0x8E): // 「 『
		closing = []byte{0xE3, 0x80, s[p+2] + 1}
		p += 3
	}
	if closing != nil {
		k := bytes.Index(s[p:min(n, p+256)], closing)
		if k <= 0 || bytes.IndexByte(s[p:p+k], '\n') >= 0 {
			return 0, 0, false
		}
		return p, p + k, true
	}
	e := p
	for e < n && e-p < 256 && s[e] > ' ' && s[e] < 0x7f && s[e] != '"' && s[e] != '\'' && s[e] != '`' && s[e] != '\\' {
		e++
	}
	for e > p && (s[e-1] == '.' || s[e-1] == ',' || s[e-1] == ';' || s[e-1] == ')') {
		e--
	}
	return p, e, e > p
}
