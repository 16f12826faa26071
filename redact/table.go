package redact

import "bytes"

// A credential in a row of a table that names it in the cell before it:
// a Markdown table in a model's answer ("| Password | <pw> |", "|
// **API key** | `<key>` |"), the AWS CLI's --output table ("|
// SecretAccessKey |  <key>  |"). The '|' that ends the key's cell is a
// separator (aSep); the key cell is the whole cell after the row's or the
// previous cell's '|', classified as keyValue classifies a key (also
// "API key", spacedKey's); the value is the whole next cell, one word
// without its Markdown emphasis. A value that reads as a password or a
// token (a letter and a digit, or strongValue, randomValue) is a
// credential; a longer word with no digit is masked as prose passwords
// are; a placeholder, a variable, a mask, a word or "-" is none.

// tableCell matches the value in the cell after the '|' at s[i].
func tableCell(s []byte, from, i int) (Match, bool) {
	if i-2 < from || i+2 >= len(s) || s[i-1] != ' ' || s[i+1] != ' ' {
		return Match{}, false
	}
	// The key cell, trimmed of spaces and emphasis.
	ke := i - 1
	for ke > from && i-ke < 32 && (s[ke-1] == ' ' || s[ke-1] == '*' || s[ke-1] == '`') {
		ke--
	}
	ks := ke
	for ks > from && ke-ks < 48 && s[ks-1] != '|' && s[ks-1] != '\n' && !(s[ks-1] == '*' || s[ks-1] == '`') {
		ks--
	}
	b := ks
	for b > from && ks-b < 4 && (s[b-1] == '*' || s[b-1] == '`' || s[b-1] == ' ') {
		b--
	}
	if b == from || s[b-1] != '|' || ke-ks < 3 || s[ks] == ' ' && ks+1 == ke {
		return Match{}, false
	}
	if !tableKey(s, from, ks, ke) {
		return Match{}, false
	}
	// The value cell.
	v := i + 1
	for v < len(s) && v-i < 32 && s[v] == ' ' {
		v++
	}
	for v < len(s) && v-i < 36 && (s[v] == '*' || s[v] == '`') {
		v++
	}
	e := v
	for e < len(s) && e-v < 256 && s[e] != ' ' && s[e] != '|' && s[e] != '`' && s[e] != '\n' && s[e] != '\r' && s[e] != '\\' {
		e++
	}
	ve := e
	for e < len(s) && e-ve < 36 && (s[e] == ' ' || s[e] == '*' || s[e] == '`') {
		e++
	}
	if v < from || ve-v < 4 || e >= len(s) || s[e] != '|' || !cmdValue(s[v:ve]) || holdsMask(s[v:ve]) || isMask(s, v) {
		return Match{}, false
	}
	val := s[v:ve]
	if strongValue(val) || randomValue(val) || hasDigitAndLetter(val) {
		return Match{v, ve, KindKeyValue}, true
	}
	if len(val) >= 8 && !englishWord(val) {
		for _, c := range val {
			if !is(c, cUpper|cLower) {
				return Match{}, false
			}
		}
		return Match{v, ve, KindHighEntropy}, true
	}
	return Match{}, false
}

// tableKey reports a key cell s[ks:ke] that names a credential: one key
// (classifyWords: "Password", "SecretAccessKey", "DB_PASSWORD", "Access
// token" by its last word) or "<label> key" (spacedKey).
func tableKey(s []byte, from, ks, ke int) bool {
	w := ke
	for w > ks && is(s[w-1], word|cKey) {
		w--
	}
	if w == ke {
		return false
	}
	if ke-w == 3 && spacedKey(s, max(from, ks), w) {
		return true
	}
	return classifyWords(s, w, ke).Credential()
}

// hasDigitAndLetter reports a letter and a digit in v.
func hasDigitAndLetter(v []byte) bool {
	var seen uint8
	for _, c := range v {
		seen |= class[c]
	}
	return seen&cDigit != 0 && seen&(cUpper|cLower) != 0
}

// formShapeT marks the bytes formShapes looks at (its caller asks).
var formShapeT = func() (t [256]bool) {
	for _, c := range []byte("|\\-=:w") {
		t[c] = true // ('w': "*assword*", expectGlob)
	}
	for c := range t {
		if anchor[c]&aCJK != 0 {
			t[c] = true // (formCJK)
		}
	}
	return t
}()

// formShapes are the shapes cmdArgForm looks for in URL-encoded text
// decoded, besides cmdArg's and colonArg's, at d[k]: a table's cell
// ("%7C+Password+%7C+<pw>+%7C"), a CJK label spelled with escapes
// ("%5Cu5bc6%5Cu7801%5Cuff1a<pw>"), and the command lines that
// echoStdinEncoded and setPasswordForEncoded see only with '+' for a
// space: "echo%20<pw>%20%7C%20sudo%20-S" (encodeURIComponent, Python's
// quote; also encoded twice, "%2520", which the masker decodes once) and
// "SET%20PASSWORD%20FOR%20…%20%3D%20'<pw>'".
func formShapes(d []byte, k int) (Match, bool) {
	switch c := d[k]; {
	case c == '|':
		if m, ok := tableCell(d, 0, k); ok {
			return m, true
		}
		return pipeFeed(d, 0, k) // echo+-e+%27<pw>%5Cn<pw>%27+%7C+passwd
	case c == '\\':
		// An escape: at its first digit that mayEscCJK takes.
		for j := k + 2; j < len(d) && j < k+5; j++ {
			if is(d[j], cDigit) {
				if d[k+1] == 'u' && mayEscCJK(d, j) {
					return escCJKPair(d, 0, j)
				}
				break
			}
		}
	case c == '-' && k >= 5 && k+1 < len(d) && d[k+1] == 'S' && d[k-1] == ' ' && (k+2 == len(d) || d[k+2] == ' ') && at(d, k-5, "sudo"):
		return echoStdin(d, 0, k)
	case c == '=' && k > 0 && d[k-1] == ' ':
		return setPasswordFor(d, 0, k)
	case c == '-' && k > 0 && k+2 < len(d):
		return formDash(d, k)
	case c >= 0x80 || k > 0 && d[k-1] >= 0x80 || k > 1 && d[k-1] == ' ' && d[k-2] >= 0x80:
		return formCJK(d, k)
	case c == 'w':
		// expect's glob prompt and the send after it ("%22%2Aassword%2A%22%0Asend+%22<pw>…"),
		// a credential as after "password:" below.
		if k >= 4 && d[k-1]|0x20 == 's' && d[k-2]|0x20 == 's' {
			return expectGlob(d, 0, k)
		}
	case c == ':' && k >= 9 && k+1 < len(d) && d[k+1] == '"' && d[k-9] == '"' && atFold(d, k-8, "password"):
		// expect "password:" and the send after it: keyValue's prompt
		// (expectSend), which the text URL-encoded does not show.
		return keyValue(d, 0, k, k+1, false)
	}
	return Match{}, false
}

// formCJK is a CJK label and its value in URL-encoded text decoded
// ("%E5%AF%86%E7%A0%81%3A<pw>", "%E3%83%91…%89%3D+<pw>", "%EB%B9%84…%B8%EF%BC%9A<pw>"):
// cjkPair at its separator's anchor, a full-width one's (aCJK) or an
// ASCII ':' or '=' after the label. cmdPctWord's gate holds for the
// escape of a label's last byte before an escape or a '+'.
func formCJK(d []byte, k int) (Match, bool) {
	if c := d[k]; anchor[c]&aCJK != 0 || (c == ':' || c == '=') && afterMultiByte(d, 0, k) {
		return cjkPair(d, 0, k)
	}
	return Match{}, false
}

// formDash is what prefixed reads at a '-' of the decoded text d:
// pctFlag's flags after a space, and passwd.go's shapes (usermod -p,
// openssl passwd, mkpasswd, Argo CD's initial password), URL-encoded
// with '+' or "%20" for a space ("sudo+usermod+-p+%27%246%24…%27").
func formDash(d []byte, k int) (Match, bool) {
	switch d[k-1] {
	case '+':
		// '+'-encoded text encoded again ("usermod%2B-p%2B%2527<pw>%2527"),
		// decoded once: userHash reads the '+' form.
		if d[k+1] == 'p' {
			return userHash(d, 0, k)
		}
	case ' ':
		if m, ok := pctFlag(d, k); ok {
			return m, true
		}
		if d[k+1] == 'p' {
			if m, ok := userHash(d, 0, k); ok {
				return m, true
			}
		}
		if k >= 7 && at(d, k-7, "passwd") {
			return passwdArg(d, 0, k)
		}
	case 'l':
		if k >= 14 && k+9 < len(d) && at(d, k-7, "initial") {
			return initialPassword(d, 0, k)
		}
	}
	return Match{}, false
}

// pctFlag is a command line's password flag in URL-encoded text with
// "%20" for a space, decoded (d[k] the flag's '-' after a space): the
// shapes prefixed reads at a '-' after a space or a '+' (flagValue's
// "--password <pw>" and "-u user:pw", shortFlag's "mysql -p<pw>",
// "sshpass -p <pw>", "docker login -p <pw>", "redis-cli -a <pw>",
// toolFlag's "htpasswd -b f u <pw>"). With '+' for a space they are read
// in the text as it is; with "%20" the flag followed no space there and
// the value, often with no digit, was printed.
func pctFlag(d []byte, k int) (Match, bool) {
	if d[k+1] == '-' || d[k+1] == 'u' {
		if m, ok := flagValue(d, 0, k); ok {
			return m, true
		}
	} else if d[k+1] == 'p' || d[k+1] == 'a' || d[k+1] == 'h' && d[k+2] == 'p' {
		if m, ok := shortFlag(d, 0, k); ok {
			return m, true
		}
	}
	switch d[k+1] {
	case 'w', 'P', 'p', 's', 'k', 'd', 'n', 'a', 'U', 'u', 'b', 'c', 'B', 'N':
		return toolFlag(d, 0, k)
	}
	return Match{}, false
}

// shapeTailStart reports a tail that ends where one of h-secrets12's
// shapes takes its value, or in a part of it: after a table's key cell
// ("| Password | " | "<pw> |"), elasticsearch's "New value: ", Jenkins'
// "to installation:" and its blank lines, a CJK label spelled with
// escapes and its separator, a Digest parameter's opening escaped quote,
// "the password for <who> is ":
// the next delta holds the value (MayStartCredential keeps the tail). It
// looks at the last word and the byte before it first: most tails end in
// prose, a letter before a space.
func shapeTailStart(b []byte) bool {
	n := len(b)
	if n >= 5 && (b[n-1] == '+' || b[n-1] == '0' || b[n-1] == '7' || b[n-1] == '2' || is(b[n-1], alnum)) && encodedEchoEnd(b) {
		return true
	}
	w := n // the last word: the part of a value in progress
	for w > 0 && n-w < 40 && b[w-1] != ' ' && b[w-1] != '\n' && b[w-1] != '|' && b[w-1] != '`' && b[w-1] != '"' {
		w--
	}
	p := w
	for p > 0 && w-p < 8 && (b[p-1] == ' ' || b[p-1] == '`' || b[p-1] == '*') {
		p--
	}
	if p == 0 {
		return false
	}
	switch c := b[p-1]; {
	case c == '|':
		_, _, ok := tableKeyBefore(b, p-1)
		return ok
	case c == ':':
		if p-1 >= 9 && atFold(b, p-10, "new value") {
			return bytes.Contains(b[max(0, p-170):p], []byte("reset"))
		}
		return escLabelBefore(b, 0, escKeyEnd(b, p-1)) || escSepBefore(b, p-1)
	case c == '=':
		return escLabelBefore(b, 0, escKeyEnd(b, p-1))
	case c == '"':
		// An escaped quote after a parameter's '=' (Digest in JSON
		// text), on a line that holds "Digest <name>=".
		q := p - 1
		for q > 0 && b[q-1] == '\\' {
			q--
		}
		if q == 0 || b[q-1] != '=' {
			// A value's opening quote after a key spelled with escapes
			// and its ':' or '=' ("{\"\u5bc6\u7801\": \"…").
			e := q
			for k := 0; k < 3 && e > 0 && b[e-1] == ' '; k++ {
				e--
			}
			return e > 0 && (b[e-1] == ':' || b[e-1] == '=') && escLabelBefore(b, 0, escKeyEnd(b, e-1))
		}
		if q == p-1 {
			return false // a quote after '=' not escaped: keyValue's
		}
		l := q
		for l > 0 && q-l < 512 && b[l-1] != '\n' {
			l--
		}
		k := bytes.Index(b[l:q], []byte("Digest "))
		return k >= 0 && paramAt(b, l+k+7) // "Digest username=…"
	case c == '\n' || c == 'n' && p >= 2 && b[p-2] == '\\':
		// Blank lines after "to installation:".
		e := p
		for e > 0 && p-e < 24 && (b[e-1] == '\n' || b[e-1] == '\r' || b[e-1] == '\\' || (b[e-1] == 'n' || b[e-1] == 'r') && e >= 2 && b[e-2] == '\\') {
			e--
		}
		return e >= 16 && at(b, e-16, "to installation:")
	}
	if c := b[p-1]; c == 's' && p >= 3 && b[p-2] == 'i' && b[p-3] == ' ' {
		_, _, ok := passwordFor(b, 0, p-3, ' ') // "the password for admin is " | "<pw>"
		return ok
	} else if c == 's' && p >= 4 && at(b, p-4, " was") {
		_, _, ok := passwordFor(b, 0, p-4, ' ')
		return ok
	}
	return escSepBefore(b, p)
}

// tableKeyBefore is tableCell's key cell before the '|' at b[i]: its
// bounds and whether it names a credential.
func tableKeyBefore(b []byte, i int) (ks, ke int, ok bool) {
	if i < 2 || b[i-1] != ' ' {
		return 0, 0, false
	}
	ke = i - 1
	for ke > 0 && i-ke < 32 && (b[ke-1] == ' ' || b[ke-1] == '*' || b[ke-1] == '`') {
		ke--
	}
	ks = ke
	for ks > 0 && ke-ks < 48 && b[ks-1] != '|' && b[ks-1] != '\n' && b[ks-1] != '*' && b[ks-1] != '`' {
		ks--
	}
	x := ks
	for x > 0 && ks-x < 4 && (b[x-1] == '*' || b[x-1] == '`' || b[x-1] == ' ') {
		x--
	}
	if x == 0 || b[x-1] != '|' || ke-ks < 3 {
		return 0, 0, false
	}
	return ks, ke, tableKey(b, 0, ks, ke)
}

// escKeyEnd is where a key spelled with escapes ends before the
// separator at b[i]: past up to three spaces and a closing quote (also
// escaped).
func escKeyEnd(b []byte, i int) int {
	e := i
	for k := 0; k < 3 && e > 0 && b[e-1] == ' '; k++ {
		e--
	}
	if e > 0 && b[e-1] == '"' {
		e--
		for e > 0 && b[e-1] == '\\' {
			e--
		}
	}
	return e
}

// escSepBefore reports a separator escape ('：', '＝', a copula) that
// ends at b[e] (past up to three spaces) after a label's escapes.
func escSepBefore(b []byte, e int) bool {
	for k := 0; k < 3 && e > 0 && b[e-1] == ' '; k++ {
		e--
	}
	u := e - 5
	if u < 1 || b[u] != 'u' || b[u-1] != '\\' {
		return false
	}
	r, _, ok := escRuneAt(b, u)
	if sep, _ := escSep(r); !ok || !sep {
		return false
	}
	p := u - 1
	for p > 0 && b[p-1] == '\\' {
		p--
	}
	for k := 0; k < 3 && p > 0 && b[p-1] == ' '; k++ {
		p--
	}
	return escLabelBefore(b, 0, p)
}

// paramAt reports an auth parameter's name and its '=' at b[v].
func paramAt(b []byte, v int) bool {
	e := run(b, v, cUpper|cLower|cUnder)
	return e > v && e < len(b) && b[e] == '='
}

// awsSecretAfter is the end of the secret access key right after an
// access key ID that ends at s[e], as an SDK's constructor, a CSV line or
// a command takes the pair: NewStaticCredentials("AKIA…", "<secret>", ""),
// new AWS.Credentials('AKIA…', '<secret>'), "AKIA…,<secret>", "AKIA…
// <secret>" (also URL-encoded: "%22%2C+%22", '/' as "%2F"): past the
// ID's closing quote (also escaped), a ',' or white space and the
// secret's opening quote, 40 bytes of the secret's alphabet with upper-
// and lower-case letters and a digit, ending there. The secret carries no
// name of its own there, and it was printed (a '/' or '+' in it leaves it
// no word long enough to read as random). Else e.
func awsSecretAfter(s []byte, e int) int {
	p := e
	skip := func(quotes, seps bool) int {
		n := 0
		for p < len(s) && n < 4 {
			switch c := s[p]; {
			case quotes && (c == '"' || c == '\'' || c == '\\'):
				p++
			case quotes && (atFold(s, p, "%22") || atFold(s, p, "%27") || atFold(s, p, "%5c")):
				p += 3
			case seps && (c == ',' || c == ' ' || c == '\t' || c == '+'):
				p++
			case seps && (atFold(s, p, "%2c") || atFold(s, p, "%20")):
				p += 3
			default:
				return n
			}
			n++
		}
		return n
	}
	skip(true, false)
	if skip(false, true) == 0 {
		return e
	}
	skip(true, false)
	var seen uint8
	n := 0 // the secret's bytes, decoded
	for p < len(s) && n <= 40 {
		if c := s[p]; is(c, alnum) || c == '/' {
			seen |= class[c]
			p++
		} else if atFold(s, p, "%2f") || atFold(s, p, "%2b") {
			p += 3
		} else if c == '+' && p+1 < len(s) && is(s[p+1], alnum|cSlash) && (p == 0 || is(s[p-1], alnum|cSlash)) {
			p++ // ('+' inside the run; one at its ends is a form's space)
		} else {
			break
		}
		n++
	}
	if n != 40 || seen&alnum != alnum || p < len(s) && (is(s[p], word) || s[p] == '=' || atFold(s, p, "%3d")) {
		return e
	}
	return p
}

// encodedEchoEnd reports a tail that ends in a URL-encoded "echo " and
// the opening quote of its argument, or in a part of the argument
// ("cmd=echo%20%27Kqz9" | "pw…%27%20%7C%20sudo%20-S"): echoStdin's value
// in progress.
func encodedEchoEnd(b []byte) bool {
	e := len(b)
	for e > 0 && len(b)-e < 40 && is(b[e-1], alnum) && !(e >= 3 && b[e-3] == '%') {
		e-- // (not into an escape's hex digits)
	}
	if e >= 3 && (atFold(b, e-3, "%27") || atFold(b, e-3, "%22")) {
		e -= 3
	}
	switch {
	case e >= 5 && b[e-1] == '+':
		e--
	case e >= 7 && at(b, e-3, "%20"):
		e -= 3
	default:
		return false
	}
	return atFold(b, e-4, "echo")
}
