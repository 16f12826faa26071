package redact

// A password in prose with no digit in it ("the password is
// correcthorsebattery."), which proseValue, revealed at a digit of the
// value, does not see: it is revealed at the 'w' of its key word (an
// anchor byte of Find, not a credential anchor); the value is masked, never a credential (rule e2a.secret: words may be a password
// or prose), and only where it is one word of 8 bytes or more that ends
// the sentence or the line and does not read as an English word (a
// suffix such as -ed, -ing, -ent, -ive: "the password is incorrect.",
// "the password is required.").

// prosePassword matches the value after "password is " or "passwd was
// " whose key word's 'w' is s[i].
func prosePassword(s []byte, from, i int) (Match, bool) {
	if s[i-1]|0x20 == 'p' {
		return prosePwd(s, from, i)
	}
	kw := i - 4
	if kw < from || s[i-1] != 's' || s[i-2] != 's' || s[i-3] != 'a' || s[kw]|0x20 != 'p' || !wordStart(s, kw) {
		return Match{}, false
	}
	ke := run(s, kw, cUpper|cLower)
	if !eqFoldAny(s[kw:ke], "password", "passwd") {
		return Match{}, false
	}
	va := ke
	switch {
	case atFold(s, va, " is "):
		va += 4
	case atFold(s, va, " was "):
		va += 5
	case va < len(s) && (s[va] == ' ' || s[va] == '\t') && netrcBefore(s, from, kw):
		return netrcPassword(s, va)
	case at(s, va, "  ") && (kw == 0 || s[kw-1] == '\n'):
		// A table's row, its columns padded with spaces (vault kv get's
		// "password    <pw>"): the value ends the line.
		for va < len(s) && s[va] == ' ' && va-ke < 40 {
			va++
		}
	case va < len(s) && (s[va] == '\n' || s[va] == '\r') && kw > from && s[kw-1] == '/':
		return opReadWord(s, from, va)
	default:
		return Match{}, false
	}
	return proseWordValue(s, va)
}

// opReadWord matches the output of "op read op://…/password" (1Password's
// CLI), the line after the command's, where it has no digit (proseValue
// takes one with a digit, namedLine): a word of 6 bytes or more on a line
// of its own, masked, never a credential, as prose passwords. s[eol] ends
// the command's line.
func opReadWord(s []byte, from, eol int) (Match, bool) {
	v := eol
	if s[v] == '\r' {
		v++
	}
	if v >= len(s) || s[v] != '\n' {
		return Match{}, false
	}
	v++
	if !namedLine(s, from, v) {
		return Match{}, false
	}
	e := v
	for e < len(s) && e-v < 256 && s[e] > ' ' && s[e] < 0x7f {
		e++
	}
	if e-v < 6 || e < len(s) && s[e] != '\n' && s[e] != '\r' {
		return Match{}, false
	}
	return proseDigitless(s, v, e)
}

// prosePwd matches the value after "pwd is " or "pwd was " whose 'w' is
// s[i] (a password's short name: "my pwd is <pw>"), judged as
// prosePassword's; a path is none (pwd, the shell's command, prints the
// working directory: proseWordValue takes no value with a '/').
func prosePwd(s []byte, from, i int) (Match, bool) {
	kw := i - 1
	if kw < from || i+5 >= len(s) || s[i+1]|0x20 != 'd' || !wordStart(s, kw) {
		return Match{}, false
	}
	va := i + 2
	switch {
	case atFold(s, va, " is "):
		va += 4
	case atFold(s, va, " was "):
		va += 5
	default:
		return Match{}, false
	}
	if pathValue(s, va) {
		return Match{}, false
	}
	return proseWordValue(s, va)
}

// proseWordValue judges the value that starts at s[va] (after "password
// is "): one word, ending a sentence or a line, with no digit.
func proseWordValue(s []byte, va int) (Match, bool) {
	var q byte
	if va < len(s) && (s[va] == '"' || s[va] == '\'' || s[va] == '`') {
		q, va = s[va], va+1
	}
	ve := va
	for ve < len(s) && !proseEndT[s[ve]] {
		ve++
	}
	e := ve
	for e > va && (s[e-1] == '.' || s[e-1] == ',' || s[e-1] == ';' || s[e-1] == '!' || s[e-1] == '?' || s[e-1] == ')') {
		e--
	}
	v := s[va:e]
	if len(v) < 8 || isMask(s, va) {
		return Match{}, false
	}
	// It ends the sentence or the line: punctuation, a closing quote, a
	// line end (also "\n" in JSON text) or the end of the text.
	switch {
	case q != 0:
		if ve >= len(s) || s[ve] != q {
			return Match{}, false
		}
	case ve == len(s), s[ve] == '\n', s[ve] == '\r', s[ve] == '\\' && ve+1 < len(s) && escLetterAfter(s, ve+1), s[ve] == '"':
	case e < ve && (s[ve] == ' ' || s[ve] == '\t'):
	default:
		return Match{}, false
	}
	for _, c := range v {
		if is(c, cDigit) || c == '/' || c == ':' || c == '=' || c == '@' {
			return Match{}, false // (a digit: proseValue's; a path, a URL, a pair: not a word)
		}
	}
	if englishWord(v) {
		return Match{}, false
	}
	return Match{va, e, KindHighEntropy}, true
}

// proseSuffixes end most English words that follow "the password is"
// (participles, adjectives, nouns of a state).
var proseSuffixes = []string{"ed", "ing", "ly", "ble", "ive", "al", "ent", "ant", "ous", "ful", "less", "ion", "ary", "ory",
	"ate", "ect", "ete", "ure", "ic", "ity", "ness", "ment", "ise", "ize", "where", "ever", "thing", "own"}

// englishWord reports a value of lower-case letters (a capital first, or
// words joined by '-') whose last word ends like an English word.
func englishWord(v []byte) bool {
	last := v
	for k := 0; k < len(v); k++ {
		c := v[k]
		switch {
		case c == '-':
			last = v[k+1:]
		case is(c, cLower), k == 0 && is(c, cUpper):
		default:
			return false
		}
	}
	for _, suf := range proseSuffixes {
		if len(last) > len(suf) && string(last[len(last)-len(suf):]) == suf {
			return true
		}
	}
	return false
}

// At the other aProse anchors (scanState): SQL's "PASSWORD '<word>'" at
// its 'w' or 'W', Redis's "requirepass <word>" at its 'q'. Their values
// with no digit are masked and never a credential, as prosePassword's (a
// value with a digit is proseValue's).

// sqlPasswordWord matches the quoted value of SQL's "PASSWORD '<pw>'"
// (CREATE ROLE … PASSWORD, ALTER USER … WITH PASSWORD) whose 'w' or 'W'
// is s[i]: a quoted value after one space, in a statement (the word is
// not the first of the text, and the value is followed by the end, ';',
// ')' or a space).
func sqlPasswordWord(s []byte, from, i int) (Match, bool) {
	kw := i - 4
	if kw <= from || i+5 >= len(s) || s[i-1]|0x20 != 's' || s[i+4] != ' ' || !atFold(s, kw, "password") || !wordStart(s, kw) || s[i+4] != ' ' || s[kw-1] != ' ' {
		return Match{}, false
	}
	if q := s[i+5]; q != '\'' && q != '"' && q != '\\' {
		return Match{}, false
	}
	st, end, ok := stmtValue(s, i+5, false)
	if !ok || st == i+5 || end-st < 6 {
		return Match{}, false
	}
	return proseDigitless(s, st, end)
}

// requirepassWord matches the value of Redis's "requirepass <pw>" (its
// config file, CONFIG SET requirepass <pw>) whose 'q' is s[i].
func requirepassWord(s []byte, from, i int) (Match, bool) {
	kw := i - 2
	if kw < from || i+10 >= len(s) || !at(s, kw, "requirepass") || !wordStart(s, kw) {
		return Match{}, false
	}
	v := kw + 11
	if s[v] != ' ' && s[v] != '\t' {
		return Match{}, false
	}
	for v < len(s) && v-kw < 16 && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	st, end, ok := stmtValue(s, v, false)
	if !ok || end-st < 6 || st == v && englishWord(s[st:end]) {
		return Match{}, false // ("the requirepass directive")
	}
	return proseDigitless(s, st, end)
}

// proseDigitless is the value s[st:end] as a word with no digit, masked
// as high_entropy; one with a digit is left to proseValue, which sees it
// at the digit (and judges whether it is a credential).
func proseDigitless(s []byte, st, end int) (Match, bool) {
	for _, c := range s[st:end] {
		if is(c, cDigit) {
			return Match{}, false
		}
	}
	if isMask(s, st) || sqlNonValue(s[st:end]) || eqFoldAny(s[st:end], "null", "password") {
		return Match{}, false
	}
	return Match{st, end, KindHighEntropy}, true
}

// A .netrc entry ("machine <host> login <user> password <pw>", on one line
// or on several; "default login <user> password <pw>"): its password with
// no digit, which neither a key=value check nor proseValue (at a digit)
// sees, is masked as prosePassword's are (a word may be a password or
// prose: never a credential). One with a digit is proseValue's.

// netrcBefore reports whether the word "password" at s[kw] follows "login
// <user>" after "machine <host>" or "default", separated by white space
// (also JSON text's "\n" and "\t", at any depth).
func netrcBefore(s []byte, from, kw int) bool {
	var w [4][2]int // the words before s[kw], the nearest first
	p := kw
	for n := range w {
		q := p
		for q > from && p-q < 16 {
			if c := s[q-1]; c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				q--
			} else if (c == 'n' || c == 't' || c == 'r') && q-2 > from && s[q-2] == '\\' {
				for q -= 2; q > from && s[q-1] == '\\'; q-- {
				} // "\n", "\\n" a level deeper
			} else {
				break
			}
		}
		if q == p || q == from {
			return false
		}
		e := q
		for q > from && e-q < 256 && !proseEndT[s[q-1]] && !(q-2 >= from && s[q-2] == '\\' && (s[q-1] == 'n' || s[q-1] == 't' || s[q-1] == 'r')) {
			q--
		}
		if q == e {
			return false
		}
		w[n], p = [2]int{q, e}, q
		if n == 2 && eqFold(s[q:e], "default") {
			return eqFold(s[w[1][0]:w[1][1]], "login")
		}
	}
	m := w[3]
	if m[1]-m[0] > 7 && !is(s[m[1]-8], cUpper|cLower) {
		m[0] = m[1] - 7 // "(machine", "`machine": a word of the text before it
	}
	return eqFold(s[w[1][0]:w[1][1]], "login") && eqFold(s[m[0]:m[1]], "machine")
}

// netrcPassword is the password after netrcBefore's "password" and the
// white space at s[va]: a word with no digit, not a variable or a
// placeholder ("$NETRC_PASSWORD", "<password>", "${PW}").
func netrcPassword(s []byte, va int) (Match, bool) {
	for va < len(s) && (s[va] == ' ' || s[va] == '\t') {
		va++
	}
	e := va
	for e < len(s) && !proseEndT[s[e]] {
		e++
	}
	if e-va < 6 || s[va] == '$' || s[va] == '{' || s[va] == '%' || englishWord(s[va:e]) || !netrcEnd(s, e) {
		return Match{}, false
	}
	return proseDigitless(s, va, e)
}

// netrcEnd reports whether the password that ends at s[e] ends its entry:
// the text's or the line's end (also JSON text's "\n", at any depth, and
// the string's closing quote), or the next token of a .netrc ("machine",
// "login", "account", "macdef", "default") after white space: not a word
// of prose ("password reset requested").
func netrcEnd(s []byte, e int) bool {
	for e < len(s) && (s[e] == ' ' || s[e] == '\t') {
		e++
	}
	if e == len(s) || s[e] == '\n' || s[e] == '\r' || s[e] == '"' {
		return true
	}
	if s[e] == '\\' {
		b := e
		for b < len(s) && s[b] == '\\' {
			b++
		}
		return b == len(s) || s[b] == 'n' || s[b] == 'r' || s[b] == '"'
	}
	w := run(s, e, cLower)
	return wordStart(s, e) && (w == len(s) || !is(s[w], word)) && eqFoldAny(s[e:w], "machine", "login", "account", "macdef", "default")
}

// passwordFor reports "password for <who>" (or "of", "passphrase",
// "passwd") ending at s[e] before proseValue's "is" or "was": <who> is one
// to three words on the line ("admin", "the admin account",
// "bob@example.com", URL-encoded "bob%40example.com"), sp between them
// (' ', or '+' URL-encoded). It
// returns the key word's bounds.
func passwordFor(s []byte, from, e int, sp byte) (k, ke int, ok bool) {
	w := e
	for n := 0; n < 3; n++ {
		b := w
		for b > from && w-b < 64 && (is(s[b-1], word) || s[b-1] == '@' || s[b-1] == '.' || s[b-1] == '-' || sp == '+' && s[b-1] == '%') {
			b--
		}
		if b == w || b-1 <= from || s[b-1] != sp {
			return 0, 0, false
		}
		for _, f := range [...]string{"for", "of"} {
			q := b - 1 - len(f)
			if q-1 > from && atFold(s, q, f) && s[q-1] == sp {
				ke = q - 1
				k = ke
				for k > from && ke-k < 12 && is(s[k-1], cUpper|cLower) {
					k--
				}
				if eqFoldAny(s[k:ke], "password", "passwd", "passphrase") && wordStart(s, k) {
					return k, ke, true
				}
			}
		}
		w = b - 1
	}
	return 0, 0, false
}

// passwordForColon reports "password for <who>" ending at s[e], before
// the colon at s[e] ("password for admin: <pw>", "Password for
// bob@example.com: <pw>"), and where its password word ends.
func passwordForColon(s []byte, from, e int, sp byte) (int, bool) {
	_, ke, ok := passwordFor(s, max(from-proseBack, 0), e, sp)
	return ke, ok
}

// passwordChangedTo reports a password word, then a verb that gives it a
// new value ("changed", "set", "reset", "updated"; up to two words such
// as "has been" between), ending at s[e] before " to <pw>", and where
// the password word ends.
func passwordChangedTo(s []byte, from, e int, sp byte) (int, bool) {
	w := e
	b := w
	for b > from && w-b < 12 && is(s[b-1], cUpper|cLower) && !escLetter(s, b-1) {
		b--
	}
	if !eqFoldAny(s[b:w], "changed", "set", "reset", "updated") {
		return 0, false
	}
	for n := 0; n < 3; n++ {
		if b-1 <= from || s[b-1] != sp {
			return 0, false
		}
		w = b - 1
		b = w
		for b > from && w-b < 12 && is(s[b-1], cUpper|cLower) && !escLetter(s, b-1) {
			b--
		}
		if eqFoldAny(s[b:w], "password", "passwd", "passphrase") && wordStart(s, b) {
			return w, true
		}
		if !eqFoldAny(s[b:w], "has", "have", "been", "was", "is", "successfully") {
			return 0, false
		}
	}
	return 0, false
}
