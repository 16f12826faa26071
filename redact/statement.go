package redact

import "bytes"

// Passwords that a statement or a command names by a word, with no
// key=value separator: SQL's "IDENTIFIED BY '<pw>'" (MySQL, MariaDB,
// Oracle: CREATE USER, ALTER USER, GRANT), Redis's "AUTH [<user>] <pw>"
// and RabbitMQ's "rabbitmqctl add_user <user> <pw>" (change_password).
// Each is found at an anchor byte of Find that the statement holds: the
// 'B' of "BY" (scheme's), the 'A' of "AUTH" and the '_' of "add_user"
// (prefixed's), so that text without them costs nothing more; the
// pre-check runs them as Find does (mayRevealCredential). Also in JSON
// text (an escaped quote) and URL-encoded ('+' a space, "%27" a quote).

// stmtSpace is the width of the space at s[p] of a statement: ' ' or '\t'
// (1), or, in a URL-encoded form, '+' (1) or "%20" (3); 0 if none.
func stmtSpace(s []byte, p int, form bool) int {
	switch {
	case p >= len(s):
		return 0
	case s[p] == ' ' || s[p] == '\t':
		return 1
	case form && s[p] == '+':
		return 1
	case form && atFold(s, p, "%20"):
		return 3
	}
	return 0
}

// stmtWordBefore is the word of letters, digits and '_' that ends before
// the space that ends at s[e] (from on), as [w, e'): ok is false if there
// is no space or no word.
func stmtWordBefore(s []byte, from, e int, form bool) (w, we int, ok bool) {
	switch {
	case e-1 >= from && (s[e-1] == ' ' || s[e-1] == '\t' || form && s[e-1] == '+'):
		e--
	case form && e-3 >= from && atFold(s, e-3, "%20"):
		e -= 3
	default:
		return 0, 0, false
	}
	w = e
	for w > from && e-w < 32 && is(s[w-1], word) {
		w--
	}
	return w, e, w < e && wordStart(s, w)
}

// stmtValue is the argument that starts at s[v] (after a statement's
// word and space): quoted ('…', "…"), in escaped quotes (\"…\" in JSON
// text), in encoded quotes ("%27…%27", "%22…%22") or bare (to white
// space or a value end; '+' too in a URL-encoded form). A placeholder of
// a prepared statement or a variable ("?", ":pw", "$1", "@pw", "%s",
// "${…}", "<pw>") and a mask are no value.
func stmtValue(s []byte, v int, form bool) (st, end int, ok bool) {
	if v >= len(s) {
		return 0, 0, false
	}
	switch c := s[v]; {
	case c == '\\' && at(s, v+1, `"`):
		end = v + 2
		for end < len(s) && end-v < 1<<12 && s[end] != '\\' && s[end] != '\n' {
			end++
		}
		if end == v+2 || end < len(s) && !at(s, end, `\"`) || end == len(s) && !inProgress(s[v+2:end]) {
			return 0, 0, false // (unclosed at the text's end: in progress)
		}
		st = v + 2
	case c == '%' && (atFold(s, v, "%27") || atFold(s, v, "%22") || atFold(s, v, "%5c%22")):
		q := "%27"
		if atFold(s, v, "%22") {
			q = "%22"
		} else if atFold(s, v, "%5c%22") {
			q = "%5c%22" // JSON text URL-encoded: "%5C%22…%5C%22"
		}
		end = v + len(q)
		for end < len(s) && end-v < 1<<12 && !(s[end] == '%' && atFold(s, end, q)) && s[end] != '&' {
			end++
		}
		if end == v+len(q) || end < len(s) && s[end] != '%' || end == len(s) && !inProgress(s[v+len(q):end]) {
			return 0, 0, false // (unclosed at the text's end: in progress)
		}
		st = v + len(q)
	case c == '?' || c == ':' || c == '$' || c == '@' || c == '%' || c == '<' || c == '{' || c == '(':
		return 0, 0, false
	default:
		if st, end, ok = argSpan(s, v, form, true); !ok {
			return 0, 0, false
		}
	}
	if isMask(s, st) || end-st > 256 {
		return 0, 0, false
	}
	return st, end, true
}

// identifiedBy matches the password of SQL's "IDENTIFIED BY '<pw>'"
// (also "IDENTIFIED WITH <plugin> BY '<pw>'", and Oracle's unquoted
// "IDENTIFIED BY <pw>") whose 'B' or 'b' of "BY" is s[i] (a word start).
// "IDENTIFIED BY PASSWORD '*…'" (a hash), Oracle's "BY VALUES '…'" and
// MySQL's "BY RANDOM PASSWORD" are none.
func identifiedBy(s []byte, from, i int) (Match, bool) {
	if i+3 >= len(s) || s[i+1]|0x20 != 'y' || i-from < 11 {
		return Match{}, false
	}
	form := s[i+2] == '+' || s[i+2] == '%'
	n := stmtSpace(s, i+2, form)
	if n == 0 {
		return Match{}, false
	}
	w, we, ok := stmtWordBefore(s, from, i, form)
	if !ok {
		return Match{}, false
	}
	if !(we-w == 10 && atFold(s, w, "identified")) {
		// IDENTIFIED WITH <plugin> BY …
		w1, we1, ok := stmtWordBefore(s, from, w, form)
		if !ok || we1-w1 != 4 || !atFold(s, w1, "with") {
			return Match{}, false
		}
		w2, we2, ok := stmtWordBefore(s, from, w1, form)
		if !ok || we2-w2 != 10 || !atFold(s, w2, "identified") {
			return Match{}, false
		}
	}
	v := i + 2 + n
	st, end, ok := stmtValue(s, v, form)
	if !ok {
		return Match{}, false
	}
	if st == v && (eqFoldAny(s[st:end], "password", "values", "random")) {
		return Match{}, false
	}
	return Match{st, end, KindKeyValue}, true
}

// sqlNonValue reports a value after SQL's PASSWORD that is none: a
// column's type ("password VARCHAR(255)") or MySQL's password hash
// ("IDENTIFIED BY PASSWORD '*6BB4…'", '*' and 40 hex digits). proseValue
// still masks it, as before, but as no credential.
func sqlNonValue(v []byte) bool {
	if len(v) == 41 && v[0] == '*' && allHex(v[1:]) {
		return true
	}
	k := 0
	for k < len(v) && is(v[k], cUpper|cLower) {
		k++
	}
	if k < 3 || k+1 >= len(v) || v[k] != '(' {
		return false
	}
	for _, c := range v[k+1:] {
		if !is(c, cDigit) && c != ',' && c != ')' && c != ' ' {
			return false
		}
	}
	return true
}

// stmtArgs reads up to len(out) arguments from s[p] (after a command's
// word and its space), each as stmtValue takes it, into out; n is how
// many, end where the last one ends (after its closing quote).
func stmtArgs(s []byte, p int, form bool, out [][2]int) (n, end int) {
	end = p
	for n < len(out) {
		for p < len(s) && p-end < 8 && stmtSpace(s, p, form) > 0 {
			p += stmtSpace(s, p, form)
		}
		if n > 0 && p == end {
			break // no space after the last one
		}
		st, e, ok := stmtValue(s, p, form)
		if !ok {
			break
		}
		out[n] = [2]int{st, e}
		n++
		e += st - p // its closing quote, as long as the opening one
		end, p = e, e
	}
	return n, end
}

// redisAuth matches the password of Redis's "AUTH <password>" and "AUTH
// <user> <password>" (ACL) whose 'A' is s[i] (a word in capitals, as
// Redis's docs and clients print it; also after a prompt or in a
// sentence that quotes it): the second argument, else the first, that is
// not a word of one case ("AUTH failed", "AUTH OK": a reply; "Use AUTH to
// authenticate": prose).
func redisAuth(s []byte, from, i int) (Match, bool) {
	if i < from || !at(s, i, "AUTH") || !wordStart(s, i) && !(i >= 3 && s[i-3] == '%') {
		return Match{}, false
	}
	form := i+4 < len(s) && s[i+4] == '+'
	n := stmtSpace(s, i+4, form)
	if n == 0 {
		return Match{}, false
	}
	var args [2][2]int
	na, _ := stmtArgs(s, i+4+n, form, args[:])
	for k := na - 1; k >= 0; k-- {
		v := args[k]
		w := v[1]
		for w > v[0] && (s[w-1] == '.' || s[w-1] == ',' || s[w-1] == '!' || s[w-1] == '?' || s[w-1] == ':') {
			w-- // (judged without the sentence's end: "call AUTH first.")
		}
		if mixedValue(s[v[0]:w]) {
			return Match{v[0], v[1], KindKeyValue}, true
		}
	}
	return Match{}, false
}

// mixedValue reports a value that is not one word of one case (a digit,
// a symbol or both cases in it).
func mixedValue(v []byte) bool {
	var seen uint8
	for _, c := range v {
		if !is(c, cUpper|cLower) {
			return true
		}
		seen |= class[c]
	}
	return seen&(cUpper|cLower) == cUpper|cLower
}

// rabbitUser matches the password of "rabbitmqctl add_user <user>
// <password>" and "rabbitmqctl change_password <user> <password>" whose
// '_' is s[i]; "rabbitmqctl" is on the line before it.
func rabbitUser(s []byte, from, i int) (Match, bool) {
	var w int
	switch {
	case i-3 >= from && at(s, i-3, "add_user"):
		w, i = i-3, i+5
	case i-6 >= from && at(s, i-6, "change_password"):
		w, i = i-6, i+9
	default:
		return Match{}, false
	}
	if !wordStart(s, w) {
		return Match{}, false
	}
	form := i < len(s) && s[i] == '+'
	n := stmtSpace(s, i, form)
	if n == 0 {
		return Match{}, false
	}
	b := w
	for b > from && w-b < 256 && s[b-1] != '\n' && s[b-1] != '\r' && !escLetter(s, b-1) {
		b--
	}
	if !bytes.Contains(s[b:w], []byte("rabbitmqctl")) {
		return Match{}, false
	}
	var args [2][2]int
	na, _ := stmtArgs(s, i+n, form, args[:])
	if na != 2 || s[args[1][0]] == '-' {
		return Match{}, false
	}
	return Match{args[1][0], args[1][1], KindKeyValue}, true
}

// stmtWords reports a text that ends where a password comes next: after
// a password flag or keyword and its space or opening quote ("sshpass
// -p '", "-passin pass:", "IDENTIFIED BY '", "AUTH ", "AUTH default ",
// "add_user svc '"), or in one in progress. mayProbe asks it
// (stmtProbeStart): a probe after such a text is taken as the password.
func stmtWords(b []byte) bool {
	b = b[max(0, len(b)-stmtTail):]
	e := len(b)
	for k := 0; k < 6 && e > 0; k++ {
		c := b[e-1]
		if c == ' ' || c == '\t' || c == '+' || c == '\'' || c == '"' || c == '\\' {
			e--
		} else if e >= 3 && b[e-3] == '%' && (atFold(b, e-3, "%27") || atFold(b, e-3, "%22") || atFold(b, e-3, "%20") || atFold(b, e-3, "%5c")) {
			e -= 3
		} else {
			break
		}
	}
	// The last three words: a flag or keyword is one of the last two (the
	// password next, or in progress: "sshpass -p 'T6ja"), a command one
	// of the three ("AUTH default T6j", "add_user svc 'T6j"). Each word
	// is judged by its end (stmtEnd); only the last two are walked, in
	// the last stmtTail bytes (a longer word is no keyword, nor the start
	// of a password after one).
	if flag, cmd := stmtEnd(b, e); flag || cmd {
		return true
	}
	for words := 0; words < 2; words++ {
		w := e
		for w > 0 && !stmtSepT[b[w-1]] {
			w--
		}
		if w == 0 {
			return false
		}
		if words == 0 && stmtPartial(b[w:e]) {
			return true
		}
		for w > 0 && stmtSepT[b[w-1]] {
			w--
		}
		if e = w; e == 0 {
			return false
		}
		if flag, cmd := stmtEnd(b, e); cmd || flag && words == 0 {
			return true
		}
	}
	return false
}

// stmtPartial says whether tok, the last word of a tail, is a value in
// progress after "pass:" (openssl's -passin pass:<pw…>) or a cut
// keyword: "rabbitmq" | "ctl add_user …", "IDENTIFI" | "ED BY '…'".
func stmtPartial(tok []byte) bool {
	n := len(tok)
	if n == 0 {
		return false
	}
	if c := bytes.IndexByte(tok, ':'); c >= 4 && at(tok, c-4, "pass") {
		return true
	}
	switch tok[0] | 0x20 {
	case 'r':
		return n >= 6 && n < 11 && string(tok) == "rabbitmqctl"[:n]
	case 'i':
		return n >= 4 && n < 10 && eqFold(tok, "identified"[:n])
	}
	return false
}

// stmtEnd says whether the word that ends at b[e] is a password flag or
// keyword (flag: "-p", "--password", "BY", "requirepass"…) or a command
// whose argument is one (cmd: "AUTH", "add_user", "change_password"), by
// its last bytes and the word boundary before them.
func stmtEnd(b []byte, e int) (flag, cmd bool) {
	if e < 2 {
		return false, false
	}
	ends := func(p string, fold bool) bool {
		x := e - len(p)
		if x < 0 || fold && !atFold(b, x, p) || !fold && !at(b, x, p) {
			return false
		}
		return x == 0 || !is(b[x-1], cUpper|cLower) && (p[0] != '-' || stmtSepT[b[x-1]])
	}
	switch b[e-1] | 0x20 {
	case 'p':
		return ends("-p", false), false
	case 'a':
		return ends("-a", false), false
	case 'w':
		return ends("-w", false), false
	case 'n':
		return ends("-passin", false), false
	case 't':
		return ends("-passout", false), false
	case 'd':
		return ends("password", true) || ends("passwd", true), ends("change_password", false)
	case 's':
		return ends("requirepass", true) || ends("--pass", false), false
	case 'y':
		return ends("by", true), false
	case 'h':
		return false, ends("AUTH", false)
	case 'r':
		return false, ends("add_user", false)
	case 'l':
		return false, ends("rabbitmqctl", false)
	}
	return false, false
}

// stmtTail is how much of a text's end stmtWords looks at.
const stmtTail = 40

// stmtSepT marks the bytes that end a word for stmtWords: white space,
// '+' (a space, URL-encoded), quotes and '(' or '`' before a command.
var stmtSepT = func() (t [256]bool) {
	for _, c := range []byte(" \t+\n\r\"'(`") {
		t[c] = true
	}
	return t
}()

// stmtProbeStart is mayProbe's look at the statements of statement.go: a
// probe after win is the value of identifiedBy, redisAuth or rabbitUser
// only where win's last word (before white space, '}' or ']') is "BY",
// or one of its last two "AUTH", "add_user" or "change_password".
func stmtProbeStart(win []byte) bool {
	e := len(win)
	for e > 0 && isTailEnd(win[e-1]) {
		e--
	}
	if e >= 2 && win[e-1]|0x20 == 'y' && win[e-2]|0x20 == 'b' && (e == 2 || !is(win[e-3], cUpper|cLower)) {
		return true
	}
	t := win[max(0, e-stmtTail):e] // (what stmtWords looks at)
	if !hasPair(t, 'T', 'H') && !hasUnderUP(t) {
		return false // no AUTH, add_user or change_password
	}
	return stmtWords(t)
}

// goEmptyField reports Go's %+v of a struct whose field s[j:] (a
// capitalized name, after '{' or a space) is empty: fmt prints
// "Name:value" glued and an empty string as nothing, so the word after
// its ": " is the next field's name and its ':' ("{Host:db User:app
// Password: PasswordFile:/run/secrets/db}"), no value.
func goEmptyField(s []byte, from, j, v int) bool {
	if j <= from || s[j-1] != '{' && s[j-1] != ' ' || !isUpper(s[j]) || v >= len(s) || !isUpper(s[v]) {
		return false
	}
	e := run(s, v, alnum|cUnder)
	return e-v >= 2 && e+1 < len(s) && s[e] == ':' && !at(s, e+1, "//")
}

// lineEndAt is the length of the line end at s[p], as written or escaped
// in JSON text ("\n", "\r\n", `\n`, `\r\n`); 0 when none is there.
func lineEndAt(s []byte, p int) int {
	switch {
	case at(s, p, "\n"):
		return 1
	case at(s, p, "\r\n"), at(s, p, `\n`):
		return 2
	case at(s, p, `\r\n`):
		return 4
	}
	return 0
}

// phpDumpValue is where the value of PHP's var_dump of an array entry
// starts, after its "=>" at s[v-2]: var_dump prints it on the next line
// with its type and length ("[\"password\"]=>\n  string(14) \"<pw>\"", also
// with the line end escaped in JSON text): at its opening quote. Else v.
func phpDumpValue(s []byte, v int) int {
	n := lineEndAt(s, v)
	if n == 0 {
		return v
	}
	p := v + n
	for p < len(s) && p-v < 16 && s[p] == ' ' {
		p++
	}
	if !at(s, p, "string(") {
		return v
	}
	e := run(s, p+7, cDigit)
	if e == p+7 || !at(s, e, ") ") {
		return v
	}
	return e + 2
}

// phpDumpEncoded is phpDumpValue URL-encoded: after "%3D%3E" at s[v-6],
// "%0A", '+' spaces and "string%28<n>%29+" before the value's "%22"
// (keyValue reads it as an encoded quote). Else v.
func phpDumpEncoded(s []byte, v int) int {
	p := v + 3
	if atFold(s, v, "%5cn") {
		p++ // in JSON text: "\n" URL-encoded
	}
	for p < len(s) && p-v < 16 && s[p] == '+' {
		p++
	}
	if !atFold(s, p, "string%28") {
		return v
	}
	e := run(s, p+9, cDigit)
	if e == p+9 || !atFold(s, e, "%29+%22") && !atFold(s, e, "%29+%5c%22") {
		return v
	}
	return e + 4 // (at the quote, or the backslash of an escaped one)
}

// phpDumpTail reports a text that ends inside the line after a var_dump
// entry's "=>" before its value: a line end, the indent and a prefix of
// `string(<n>) "` ("[\"password\"]=>\n  strin" | "g(14) \"<pw>\""), which
// no probe completes (MayStartCredential keeps such a tail).
func phpDumpTail(b []byte) bool {
	for t := b[max(0, len(b)-32):]; ; { // ("=>", the line end and indent, `string(<n>) "`)
		k := bytes.IndexByte(t, '>')
		if k < 0 {
			return false
		}
		if k > 0 && t[k-1] == '=' && phpDumpRest(t[k+1:]) {
			return true
		}
		t = t[k+1:]
	}
}

// phpDumpRest: r is a line end (also escaped in JSON text), an indent and
// a prefix of `string(<n>) "`.
func phpDumpRest(r []byte) bool {
	switch {
	case at(r, 0, "\n"):
		r = r[1:]
	case at(r, 0, "\r\n"), at(r, 0, `\n`):
		r = r[2:]
	case at(r, 0, `\r\n`):
		r = r[4:]
	default:
		return false
	}
	for len(r) > 0 && r[0] == ' ' {
		r = r[1:]
	}
	const w = "string("
	n := min(len(r), len(w))
	if string(r[:n]) != w[:n] {
		return false
	}
	r = r[n:]
	for len(r) > 0 && is(r[0], cDigit) {
		r = r[1:]
	}
	for _, c := range []byte(") ") {
		if len(r) == 0 {
			return true
		}
		if r[0] != c {
			return false
		}
		r = r[1:]
	}
	return len(r) == 0 || len(r) == 1 && r[0] == '"' || len(r) == 2 && r[0] == '\\' && r[1] == '"'
}

// xmlCredElement reports that the '>' at s[p] ends the opening tag of an
// element of a credential name with a namespace prefix or attributes
// (SOAP WS-Security's <wsse:Password Type="…#PasswordText">, <ns:password
// encrypted="false">): its '<' within 256 bytes before, no '>' between.
func xmlCredElement(s []byte, from, p int) bool {
	for lt := p - 1; lt >= from && p-lt < 256; lt-- {
		switch s[lt] {
		case '>':
			return false
		case '<':
			return xmlCredTag(s, lt+1, p)
		}
	}
	return false
}

// xmlCredTag reports that s[k:q] (after a tag's '<', before its '>',
// either also URL-encoded) is an opening tag of a credential name:
// [prefix:]name, then nothing or white space and attributes, not closed
// by "/".
func xmlCredTag(s []byte, k, q int) bool {
	ne := run(s, k, word)
	if ne == k || ne > q {
		return false
	}
	if ne < q {
		n := 0
		if s[ne] == ':' {
			n = 1
		} else if atFold(s, ne, "%3a") {
			n = 3
		}
		if n > 0 {
			k = ne + n
			if ne = run(s, k, word); ne == k || ne > q {
				return false
			}
		}
	}
	if ne < q && s[ne] != ' ' && s[ne] != '\t' && s[ne] != '+' && !atFold(s, ne, "%20") {
		return false
	}
	if s[q-1] == '/' || q-3 > k && atFold(s, q-3, "%2f") {
		return false // <password/>: an empty element
	}
	return classifyWords(s, k, ne).Credential()
}

// passinEnds reports a text that ends in openssl's "-passin " or
// "-passout " (a space or '+' after it): its "pass:<pw>" comes next,
// which no probe completes (MayStartCredential keeps such a tail).
func passinEnds(b []byte) bool {
	e := len(b)
	for e > 0 && len(b)-e < 4 && (b[e-1] == ' ' || b[e-1] == '+') {
		e--
	}
	return e < len(b) && (e >= 7 && at(b, e-7, "-passin") || e >= 8 && at(b, e-8, "-passout"))
}

// hasPair reports the bytes a and then b in t.
func hasPair(t []byte, a, b byte) bool {
	for {
		i := bytes.IndexByte(t, a)
		if i < 0 || i+1 >= len(t) {
			return false
		}
		if t[i+1] == b {
			return true
		}
		t = t[i+1:]
	}
}

// inProgress reports a quoted value left unclosed at the text's end that
// may be one in progress: a word with no white space ('+' too, a space
// URL-encoded), '}' or ']' (the end of a structure, not of a password).
func inProgress(v []byte) bool {
	for _, c := range v {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '+' || c == '}' || c == ']' {
			return false
		}
	}
	return true
}

// hasUnderUP reports "_u" or "_p" in t (add_user, change_password).
func hasUnderUP(t []byte) bool {
	for {
		i := bytes.IndexByte(t, '_')
		if i < 0 || i+1 >= len(t) {
			return false
		}
		if t[i+1] == 'u' || t[i+1] == 'p' {
			return true
		}
		t = t[i+1:]
	}
}

// awsConfigureSet matches the value of "aws configure set
// aws_secret_access_key <key>" (and aws_session_token; also under a
// profile, "set profile.ci.aws_secret_access_key …") whose '_' after
// "aws" is s[i]: the key names it and no separator follows it, only a
// space.
func awsConfigureSet(s []byte, from, i int) (Match, bool) {
	var e int
	switch {
	case at(s, i+1, "secret_access_key"):
		e = i + 18
	case at(s, i+1, "session_token"):
		e = i + 14
	default:
		return Match{}, false
	}
	k := i - 3
	for k > from && i-k < 96 && (is(s[k-1], word) || s[k-1] == '.') {
		k-- // a profile's "default." or "profile.ci."
	}
	form := e < len(s) && s[e] == '+'
	w, we, ok := stmtWordBefore(s, from, k, form)
	if !ok || we-w != 3 || !eqFold(s[w:we], "set") {
		return Match{}, false
	}
	if c, ce, ok := stmtWordBefore(s, from, w, form); !ok || !eqFold(s[c:ce], "configure") {
		return Match{}, false
	}
	n := stmtSpace(s, e, form)
	if n == 0 {
		return Match{}, false
	}
	var args [1][2]int
	if na, _ := stmtArgs(s, e+n, form, args[:]); na != 1 || s[args[0][0]] == '-' {
		return Match{}, false
	}
	return Match{args[0][0], args[0][1], KindKeyValue}, true
}

// ngrokAuthtoken matches the token of "ngrok config add-authtoken <tok>"
// (ngrok 3) whose '-' is s[i].
func ngrokAuthtoken(s []byte, from, i int) (Match, bool) {
	if i-3 < from || !at(s, i-3, "add") || !at(s, i+1, "authtoken") || !wordStart(s, i-3) {
		return Match{}, false
	}
	w, we, ok := stmtWordBefore(s, from, i-3, false)
	if !ok || !eqFold(s[w:we], "config") {
		return Match{}, false
	}
	n := stmtSpace(s, i+10, false)
	if n == 0 {
		return Match{}, false
	}
	var args [1][2]int
	if na, _ := stmtArgs(s, i+10+n, false, args[:]); na != 1 || s[args[0][0]] == '-' || args[0][1]-args[0][0] < 16 {
		return Match{}, false
	}
	return Match{args[0][0], args[0][1], KindVendorToken}, true
}

// mayValueAfterEq is setPasswordFor's gate for the " = " at s[i]: a
// quote, an escaped one or PASSWORD( after one space.
func mayValueAfterEq(s []byte, i int) bool {
	if i+2 >= len(s) || s[i+1] != ' ' {
		return false
	}
	c := s[i+2]
	return c == '\'' || c == '"' || c == '\\' || c|0x20 == 'p'
}

// setPasswordFor matches the password of MySQL's "SET PASSWORD FOR
// <user> = '<pw>'" (also the older "= PASSWORD('<pw>')") whose '=' is
// s[i], after a space. A placeholder or a variable is none (stmtValue).
func setPasswordFor(s []byte, from, i int) (Match, bool) {
	j := i - 1
	for j > from && i-j < 4 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	u := j // the user: 'bob'@'%', `bob`@localhost, bob
	for u > from && j-u < 96 && s[u-1] != ' ' && s[u-1] != '\t' && s[u-1] != '\n' {
		u--
	}
	if u == j || u-from < 13 || !atFold(s, u-4, "for ") {
		return Match{}, false
	}
	f, fe, ok := stmtWordBefore(s, from, u, false)
	if !ok || fe-f != 3 || !eqFold(s[f:fe], "for") {
		return Match{}, false
	}
	if p, pe, ok := stmtWordBefore(s, from, f, false); !ok || !eqFold(s[p:pe], "password") {
		return Match{}, false
	} else if w, we, ok := stmtWordBefore(s, from, p, false); !ok || !eqFold(s[w:we], "set") {
		return Match{}, false
	}
	v := i + 1
	for v < len(s) && v-i < 8 && (s[v] == ' ' || s[v] == '\t') {
		v++
	}
	if atFold(s, v, "password(") {
		v += len("password(")
	}
	st, end, ok := stmtValue(s, v, false)
	if !ok {
		return Match{}, false
	}
	return Match{st, end, KindKeyValue}, true
}

// setPasswordForEncoded is setPasswordFor URL-encoded ("SET+PASSWORD+FOR+
// %27bob%27%40%27%25%27+%3D+%27<pw>%27"), whose "%3D" starts at s[i].
func setPasswordForEncoded(s []byte, from, i int) (Match, bool) {
	j := i
	for j > from && i-j < 4 && s[j-1] == '+' {
		j--
	}
	if j == i {
		return Match{}, false
	}
	u := j
	for u > from && j-u < 128 && s[u-1] != '+' && s[u-1] != '&' && s[u-1] != '=' {
		u--
	}
	if u == j || u-from < 13 {
		return Match{}, false
	}
	f, fe, ok := stmtWordBefore(s, from, u, true)
	if !ok || fe-f != 3 || !eqFold(s[f:fe], "for") {
		return Match{}, false
	}
	if p, pe, ok := stmtWordBefore(s, from, f, true); !ok || !eqFold(s[p:pe], "password") {
		return Match{}, false
	} else if w, we, ok := stmtWordBefore(s, from, p, true); !ok || !eqFold(s[w:we], "set") {
		return Match{}, false
	}
	v := i + 3
	for v < len(s) && v-i < 8 && s[v] == '+' {
		v++
	}
	if atFold(s, v, "password%28") {
		v += len("password%28")
	}
	if !atFold(s, v, "%27") && !atFold(s, v, "%22") && !atFold(s, v, "%5c%22") {
		return Match{}, false // (quoted: encoded quotes)
	}
	st, end, ok := stmtValue(s, v, true)
	if !ok {
		return Match{}, false
	}
	return Match{st, end, KindKeyValue}, true
}

// codeExprT marks the bytes an expression codeExpr takes starts with: a
// letter, '_' or '$'.
var codeExprT = func() (t [256]bool) {
	for c := range t {
		t[c] = is(byte(c), cUpper|cLower|cUnder) || c == '$'
	}
	return t
}()

// codeExpr reports an unquoted value at s[v] that is code, not a
// literal: a call or an index of a name ("credentials.NewStaticCredentials(id,
// …)", "getpass.getpass()", "os.environ[\"PW\"]", "new AWS.Credentials(…)",
// "load_key(cfg)"), the right-hand side of an assignment in Go, Python or
// JavaScript whose variable a credential key names ("creds := …"). A name
// is code where it holds a '.' or a '_', follows "new " or "await ", or
// where its '(' or '[' is followed by a name, a quote, '&', '*' or the
// closing bracket: "Summer(2024)" and "abcDEF(12)" read as passwords still.
func codeExpr(s []byte, v int) bool {
	p, kw := v, false
	for _, w := range []string{"new ", "await "} {
		if at(s, p, w) {
			p, kw = p+len(w), true
			break
		}
	}
	b, dot := p, false
	for p < len(s) && p-b < 128 {
		c := s[p]
		switch {
		case is(c, alnum|cUnder) || c == '$':
			dot = dot || c == '_'
			p++
			continue
		case c == '.' && p > b && p+1 < len(s) && codeExprT[s[p+1]]:
			dot = true
			p++
			continue
		}
		break
	}
	if p == b || p+1 >= len(s) || s[p] != '(' && s[p] != '[' || !codeExprT[s[b]] {
		return false
	}
	if kw || dot {
		return true
	}
	switch c := s[p+1]; {
	case c == ')' || c == ']' || c == '"' || c == '\'' || c == '&' || c == '*' || codeExprT[c]:
		return true
	}
	return false
}
