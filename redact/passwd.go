package redact

import "bytes"

// Passwords given to the commands that set or hash one, as arguments or
// on their standard input, and passwords a tool prints on the line after
// the command that asks for it:
//
//   - echo -e '<pw>\n<pw>' | passwd <user>, printf '<pw>\n<pw>\n' |
//     passwd, echo <pw> | passwd --stdin <user> (pipeFeed, at the '|':
//     sep's anchor, which the pre-check runs too);
//   - usermod -p '<crypt hash>' <user>, useradd -p … (userHash, at the
//     '-' of the flag, prefixed's anchor, as shortFlag's);
//   - openssl passwd -6 <pw>, mkpasswd -m sha-512 <pw> (passwdArg, at the
//     '-' of the first flag after the command);
//   - argocd admin initial-password and its password on the next line,
//     kubectl get secret argocd-initial-admin-secret … | base64 -d and the
//     value it prints (initialPassword, at the '-' after "initial").
//
// A variable, a command's output, a placeholder or a mask is none
// (cmdValue); a value with no digit is taken as one with (the command
// says what it is).

// pipeFeed matches the password echoed or printed into passwd, whose
// pipe is s[i]: "… | passwd --stdin <user>" takes one value, "… | passwd
// [<user>]" one with a line break escape ("<pw>\n<pw>", the new password
// and its confirmation: both are masked).
func pipeFeed(s []byte, from, i int) (Match, bool) {
	p := i + 1
	for p < len(s) && p-i < 8 && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if at(s, p, "sudo ") {
		p += 5
	}
	if !at(s, p, "passwd") || p+6 < len(s) && is(s[p+6], word) {
		return Match{}, false
	}
	le := p + 6 // the rest of the command line
	for le < len(s) && le-p < 128 && s[le] != '\n' && s[le] != '\r' && s[le] != ';' && s[le] != '|' && s[le] != '&' && !escLetter(s, le) {
		le++
	}
	stdin := bytes.Contains(s[p+6:le], []byte("--stdin"))
	a, e, ok := fedArg(s, from, i)
	if !ok {
		return Match{}, false
	}
	first := s[a:e]
	if nl := bytes.Index(first, []byte(`\n`)); nl >= 0 {
		first = bytes.TrimRight(first[:nl], `\`)
	} else if !stdin {
		return Match{}, false // passwd reads the password twice
	}
	if len(first) < 4 || !cmdValue(first) || first[0] == '`' || printfVerb(first) || holdsMask(s[a:e]) {
		return Match{}, false // ($PW, $(cat f), printf '%s\n' …)
	}
	return Match{a, e, KindKeyValue}, true
}

// printfVerb reports a printf verb in v ("%s", "%b", "%d"): a format, not
// a password.
func printfVerb(v []byte) bool {
	for k := bytes.IndexByte(v, '%'); k >= 0 && k+1 < len(v); {
		if c := v[k+1]; c == 's' || c == 'b' || c == 'd' {
			return true
		}
		n := bytes.IndexByte(v[k+1:], '%')
		if n < 0 {
			break
		}
		k += 1 + n
	}
	return false
}

// fedArg is the argument of the echo or printf whose output is piped at
// s[i]: its one argument after its flags ("-e", "-n"), in quotes (also
// JSON text's escaped ones) or a word; the inside of the quotes.
func fedArg(s []byte, from, i int) (a, e int, ok bool) {
	e = i
	for e > from && i-e < 8 && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	if e-2 <= from {
		return 0, 0, false
	}
	var b int // where the argument starts, with its opening quote
	lo := max(from, e-160)
	switch q := s[e-1]; {
	case q == '"' && s[e-2] == '\\':
		x := e - 2 // \"…\" in JSON text, \\\"…\\\" in JSON text held in a string
		for x > lo && s[x-1] == '\\' {
			x--
		}
		o := bytes.LastIndex(s[lo:x], []byte(`\"`))
		if o < 0 {
			return 0, 0, false
		}
		b, a, e = lo+o, lo+o+2, x
		for b > lo && s[b-1] == '\\' {
			b--
		}
	case q == '"' || q == '\'':
		o := bytes.LastIndexByte(s[lo:e-1], q)
		if o < 0 {
			return 0, 0, false
		}
		b, a, e = lo+o, lo+o+1, e-1
	default:
		b = e
		for b > lo && s[b-1] != ' ' && s[b-1] != '\t' && !cmdBreak(s, from, b-1) {
			b--
		}
		a = b
	}
	if a >= e || bytes.IndexByte(s[a:e], '\n') >= 0 {
		return 0, 0, false
	}
	w := b
	for n := 0; n < 3; n++ {
		for w > from && b-w < 16 && (s[w-1] == ' ' || s[w-1] == '\t') {
			w--
		}
		ws := w
		for ws > from && w-ws < 8 && is(s[ws-1], cLower|cDash) && !escLetter(s, ws-1) {
			ws--
		}
		switch x := s[ws:w]; {
		case len(x) >= 2 && len(x) <= 3 && x[0] == '-':
			w = ws // a flag of echo
			continue
		case (eqFold(x, "echo") || eqFold(x, "printf")) && (ws == from || !is(s[ws-1], word|cKey) || escLetter(s, ws-1)):
			return a, e, ws < w && w < b
		}
		break
	}
	return 0, 0, false
}

// userHash matches the password of "usermod -p <pw>" and "useradd -p
// <pw>" (a crypt hash, "$6$<salt>$<hash>", as the manual asks, or a
// password given as it is), whose '-' is s[i], after a space (or a '+', a
// space in a URL-encoded form). A hash in double quotes or none is still
// one (the shell expands "$6", the text holds it); "$PW" is a variable.
func userHash(s []byte, from, i int) (Match, bool) {
	if i+3 >= len(s) || s[i+2] != ' ' && s[i+2] != '+' {
		return Match{}, false
	}
	form := s[i-1] == '+'
	if !lineNames(s, from, i, form, []string{"usermod", "useradd"}) {
		return Match{}, false
	}
	v := i + 3
	for v < len(s) && v-i < 8 && (s[v] == ' ' || form && s[v] == '+') {
		v++
	}
	esc := at(s, v, `\"`) // in JSON text: -p \"<hash>\"
	if esc {
		v++
	}
	a, end, ok := argSpan(s, v, form, !esc)
	if form && (at(s, v, "%27") || at(s, v, "%22")) {
		// URL-encoded in its quotes: "usermod+-p+%27<pw>%27+bob".
		a = v + 3
		c := bytes.Index(s[a:min(len(s), a+256)], s[v:v+3])
		end, ok = a+c, c > 0 && bytes.IndexByte(s[a:a+max(c, 0)], '+') < 0 && bytes.IndexByte(s[a:a+max(c, 0)], '&') < 0
	}
	if ok && esc && end > a && s[end-1] == '\\' {
		end--
	}
	if !ok || end-a < 6 || a < from || holdsMask(s[a:end]) {
		return Match{}, false
	}
	if val := s[a:end]; val[0] == '$' && !cryptHash(val) || val[0] != '$' && !cmdValue(val) {
		return Match{}, false
	}
	return Match{a, end, KindKeyValue}, true
}

// IsCryptHash reports whether v is a crypt(3) hash (cryptHash): a value
// that starts with '$' and is no variable.
func IsCryptHash[T Text](v T) bool { return cryptHash(view(v)) }

// cryptHash reports a crypt(3) hash: "$<id>$" (an id of 1 to 4 letters
// and digits: 1, 2b, 5, 6, y, sha1), then 16 bytes or more of its
// alphabet ("./", letters, digits, '$', and rounds' '=' and ',').
func cryptHash(v []byte) bool {
	if len(v) < 20 || v[0] != '$' {
		return false
	}
	k := run(v, 1, alnum)
	if k == 1 || k > 5 || k >= len(v) || v[k] != '$' {
		return false
	}
	for _, c := range v[k:] {
		if !is(c, alnum) && c != '.' && c != '/' && c != '$' && c != '=' && c != ',' {
			return false
		}
	}
	return true
}

// passwdArg matches the password "openssl passwd" and "mkpasswd" hash,
// their first argument that is no flag or a flag's value, whose first
// flag's '-' is s[i] right after "passwd " (or "passwd+" URL-encoded): a
// flag that reads it from standard input (-stdin, -s) leaves none.
func passwdArg(s []byte, from, i int) (Match, bool) {
	k := i - 7
	form := s[i-1] == '+'
	if !(k >= 8 && (at(s, k-8, "openssl ") || form && at(s, k-8, "openssl+")) && wordStart(s, k-8) || k >= 2 && at(s, k-2, "mk") && wordStart(s, k-2)) {
		return Match{}, false
	}
	return passwdArgs(s, from, i, form)
}

// passwdWord matches the password of "openssl passwd <pw>" and "mkpasswd
// <pw>" given with no flag before it, whose "passwd"'s 'w' is s[i] (an
// anchor of Find's prose and of the pre-check; a flag's '-' is
// passwdArg's): the command starts its line or command (cmdLead), so
// that prose about the tool ("run mkpasswd with …") is none.
func passwdWord(s []byte, from, i int) (Match, bool) {
	k := i - 4
	if k < 2 || i+2 >= len(s) || !at(s, k, "passwd") {
		return Match{}, false
	}
	form := s[i+2] == '+'
	if s[i+2] != ' ' && s[i+2] != '\t' && !form {
		return Match{}, false
	}
	switch {
	case k >= 8 && (at(s, k-8, "openssl ") || form && at(s, k-8, "openssl+")) && (wordStart(s, k-8) || form && afterPct(s, k-8)):
		k -= 8
	case at(s, k-2, "mk") && (wordStart(s, k-2) || form && afterPct(s, k-2)):
		k -= 2
	default:
		return Match{}, false
	}
	p := i + 2
	for p < len(s) && p-i < 16 && (s[p] == ' ' || s[p] == '\t' || form && s[p] == '+') {
		p++
	}
	if p >= len(s) || s[p] == '-' || k < from || !cmdLead(s, k, form) {
		return Match{}, false
	}
	return passwdArgs(s, from, p, form)
}

// afterPct reports a "%XX" escape right before s[p] (URL-encoded text's
// "%0Amkpasswd": a word starts after it).
func afterPct(s []byte, p int) bool {
	return p >= 3 && s[p-3] == '%' && hexVal(s[p-2]) >= 0 && hexVal(s[p-1]) >= 0
}

// cmdLead reports that the command whose name starts at s[k] starts its
// line or its command: after a line end (also JSON text's "\n"), a
// prompt ("$ ", "# "), a shell operator, a quote or a backtick, "sudo",
// or in a URL-encoded form a field's '=' or an encoded line end or '$'.
func cmdLead(s []byte, k int, form bool) bool {
	b := k
	for b > 0 && k-b < 16 && (s[b-1] == ' ' || s[b-1] == '\t' || form && s[b-1] == '+') {
		b--
	}
	if b >= 4 && at(s, b-4, "sudo") && (b == 4 || !is(s[b-5], word)) && b < k {
		for b -= 4; b > 0 && k-b < 24 && (s[b-1] == ' ' || s[b-1] == '\t' || form && s[b-1] == '+'); b-- {
		}
	}
	if b == 0 || escLetter(s, b-1) {
		return true
	}
	switch s[b-1] {
	case '\n', '\r', ';', '|', '&', '(', '`', '"', '\'', '$', '#', '{':
		return true
	case '=':
		return form
	}
	return form && b >= 3 && (atFold(s, b-3, "%24") || atFold(s, b-3, "%0a") || atFold(s, b-3, "%3b") || atFold(s, b-3, "%7c") || atFold(s, b-3, "%22") || atFold(s, b-3, "%60"))
}

// passwdArgs is passwdArg's and passwdWord's walk from s[p], the first
// argument after "passwd": flags and their values, then the password
// (in a URL-encoded form also in encoded quotes, "%27<pw>%27").
func passwdArgs(s []byte, from, p int, form bool) (Match, bool) {
	i := p
	sp := func(c byte) bool { return c == ' ' || c == '\t' || form && c == '+' }
	for n := 0; n < 8; n++ {
		for p < len(s) && p-i < 256 && sp(s[p]) {
			p++
		}
		if p >= len(s) || cmdBreak(s, from, p) || s[p] == '>' || s[p] == '<' || s[p] == '\\' {
			return Match{}, false
		}
		if s[p] != '-' {
			if form && (at(s, p, "%27") || at(s, p, "%22")) {
				// "%27<pw>%27": the inside of the encoded quotes.
				a := p + 3
				c := bytes.Index(s[a:min(len(s), a+256)], s[p:p+3])
				if c < 4 || a < from || bytes.IndexByte(s[a:a+c], '+') >= 0 || bytes.IndexByte(s[a:a+c], '&') >= 0 || !cmdValue(s[a:a+c]) || holdsMask(s[a:a+c]) {
					return Match{}, false
				}
				return Match{a, a + c, KindKeyValue}, true
			}
			a, end, ok := argSpan(s, p, form, true)
			if !ok || a < from || end-a < 4 || s[a] == '$' && s[p] != '\'' || !cmdValue(s[a:end]) || holdsMask(s[a:end]) {
				return Match{}, false
			}
			return Match{a, end, KindKeyValue}, true
		}
		fe := p
		for fe < len(s) && fe-p < 32 && !sp(s[fe]) && !cmdBreak(s, from, fe) && s[fe] != '"' && s[fe] != '\'' {
			fe++
		}
		switch f := s[p:fe]; {
		case eqFoldAny(f, "-stdin", "-s", "--stdin", "-in", "--password-fd"):
			return Match{}, false // the password is read, not given
		case eqFoldAny(f, "-salt", "-rand", "-writerand", "-provider", "-provider-path", "-propquery", "-m", "-S", "-R", "-P", "--method", "--salt", "--rounds"):
			for fe < len(s) && fe-p < 40 && sp(s[fe]) {
				fe++
			}
			_, x, ok := argSpan(s, fe, form, true)
			if !ok {
				return Match{}, false
			}
			fe = x
			if x < len(s) && (s[x] == '"' || s[x] == '\'') {
				fe++
			}
		}
		p = fe
	}
	return Match{}, false
}

// initialPassword matches the password a tool prints on the line after
// the command that asks for it, whose '-' after "initial" is s[i]: Argo
// CD's "argocd admin initial-password [-n <ns>]", and "kubectl get secret
// argocd-initial-admin-secret … | base64 -d" (its value decoded): the
// first word of the next line (also after JSON text's "\n"), where it
// reads as a generated password (strongValue, randomValue) of letters,
// digits, '-' and '_' ("FATA[0000]" of an error is none).
func initialPassword(s []byte, from, i int) (Match, bool) {
	switch {
	case at(s, i+1, "password") && i >= 20 && at(s, i-20, "argocd admin "):
	case at(s, i+1, "admin-secret") && i >= 14 && at(s, i-14, "argocd-"):
	default:
		return Match{}, false
	}
	e := i
	for e < len(s) && e-i < 256 && s[e] != '\n' && s[e] != '\r' && !escLetter(s, e) {
		e++
	}
	if i+1 < len(s) && s[i+1] == 'a' && !bytes.Contains(s[i:e], []byte("base64")) {
		return Match{}, false // (the secret's value is base64 until decoded)
	}
	if e >= len(s) {
		return Match{}, false
	}
	v := e + 1 // (at an escape's letter, e: JSON text's "\n")
	if s[e] == '\r' && v < len(s) && s[v] == '\n' || s[e] == 'r' && at(s, v, `\n`) {
		v += 1 + btoi(s[e] == 'r') // "\r\n", also escaped
	}
	m, ok := lineValue(s, from, v)
	if !ok || run(s, m.Start, word) != m.End || !strongValue(s[m.Start:m.End]) && !randomValue(s[m.Start:m.End]) {
		return Match{}, false
	}
	return m, true
}

// expectGlob matches what an expect script sends after a prompt given as
// a glob or a pattern with no ':' ("*assword*", "Password*", -re
// "assword"), whose "assword"'s 'w' is s[i]: expectSend's value on the
// next line (or after a ';'), also in expect's brace form ("expect {
// \"*assword*\" { send \"<pw>\\r\" } }", one line or several). A
// credential, as after "password:" (keyValue's prompt): the pre-check
// stops at this 'w' too (mayRevealCredential).
func expectGlob(s []byte, from, i int) (Match, bool) {
	k := i - 3
	if k-1 <= from || !at(s, k, "assword") {
		return Match{}, false
	}
	if s[k-1]|0x20 == 'p' {
		k--
	}
	if s[k-1] == '*' {
		k--
	}
	b := k - 1 // the opening quote
	if b < from || s[b] != '"' && s[b] != '{' {
		// (b < from: "*password" at the start, found by FuzzMayProbe.)
		return Match{}, false
	}
	if s[b] == '"' && b > from && s[b-1] == '\\' {
		b-- // in JSON text
	}
	w := b
	for w > from && b-w < 8 && s[w-1] == ' ' {
		w--
	}
	if w-4 > from && (at(s, w-3, "-re") || at(s, w-3, "-ex") || at(s, w-3, "-gl")) {
		for w -= 3; w > from && s[w-1] == ' '; w-- {
		}
	}
	brace := false
	for w0 := w; w > from && w0-w < 64 && (s[w-1] == ' ' || s[w-1] == '\t' || s[w-1] == '\n' || s[w-1] == '\r' || !brace && s[w-1] == '{' || escLetter(s, w-1)); w-- {
		// expect's brace form, "expect { \"*assword*\" { send … } }", its
		// patterns on lines of their own (also in JSON text, "\n").
		brace = brace || s[w-1] == '{'
		if escLetter(s, w-1) {
			w--
		}
	}
	if !brace {
		w = b
		for w > from && b-w < 8 && s[w-1] == ' ' {
			w--
		}
		if w-4 > from && (at(s, w-3, "-re") || at(s, w-3, "-ex") || at(s, w-3, "-gl")) {
			for w -= 3; w > from && s[w-1] == ' '; w-- {
			}
		}
	}
	if w-6 < from || !at(s, w-6, "expect") || !wordStart(s, w-6) {
		return Match{}, false
	}
	e := i + 4
	glob := s[k] == '*'
	for e < len(s) && e-i < 8 && (s[e] == '*' || s[e] == ':' || s[e] == ' ') {
		glob = glob || s[e] == '*'
		e++
	}
	if !glob && bytes.IndexByte(s[i:e], ':') >= 0 {
		return Match{}, false // "password:": keyValue's prompt, a credential
	}
	switch {
	case at(s, e, `\"`) && s[k-1] != '{':
		e += 2
	case e < len(s) && (s[e] == '"' && s[k-1] != '{' || s[e] == '}' && s[k-1] == '{'):
		e++
	default:
		return Match{}, false
	}
	m, ok := expectSend(s, e)
	if !ok || m.Start < from {
		return Match{}, false
	}
	return m, true
}

// passwdTailStart reports a tail that ends where one of this file's
// shapes takes its value, or inside it (the next text holds the rest;
// MayStartCredential keeps the tail): after "usermod -p '" (useradd),
// inside the argument of an echo or printf ("printf \"<pw…", "echo ",
// what a pipe to passwd may follow), inside expect's send after a
// password prompt ("expect \"password:\"; send \"<pw…"), after az
// keyvault secret set's "--value ". It reads the
// tail's last two words back from its end. (A tail after the line of
// Argo CD's initial-password or initial-admin-secret is kept by
// tailNeedles.)
func passwdTailStart(b []byte) bool {
	if userTailEncoded(b) {
		return true
	}
	n := len(b)
	e := n // the value in progress: its last word
	for e > 0 && n-e < 32 && !passwdTailT[b[e-1]] {
		e--
	}
	p, quoted := e, false
	if p > 0 && (b[p-1] == '"' || b[p-1] == '\'') {
		p, quoted = p-1, true
		for p > 0 && e-p < 4 && b[p-1] == '\\' {
			p-- // \" in JSON text
		}
	}
	s0 := p
	for p > 0 && s0-p < 4 && b[p-1] == ' ' {
		p--
	}
	if p == s0 || p == 0 {
		return false
	}
	w := p
	for w > 0 && p-w < 8 && (is(b[w-1], cLower) || b[w-1] == '-') {
		w--
	}
	switch x := b[w:p]; {
	case len(x) >= 2 && len(x) <= 3 && x[0] == '-':
		if quoted && eqFold(x, "-p") {
			return lineNames(b, 0, w, false, []string{"usermod", "useradd"})
		}
		// echo's flag: "echo -e '…"
		q := w
		for q > 0 && w-q < 4 && b[q-1] == ' ' {
			q--
		}
		return q >= 4 && q < w && at(b, q-4, "echo") && (q == 4 || !is(b[q-5], word))
	case eqFold(x, "echo") || eqFold(x, "printf"):
		return w == 0 || !is(b[w-1], word) || escLetter(b, w-1)
	case quoted && eqFold(x, "send"):
		return bytes.Contains(b[max(0, w-128):w], []byte("assword"))
	case eqFold(x, "--value"):
		return keyvaultSecretSet(b, 0, w) // az keyvault secret set … --value <secret…
	}
	return false
}

// passwdTailT marks the bytes that end a value's last word, read back from
// a tail's end (passwdTailStart).
var passwdTailT = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\"'") {
		t[c] = true
	}
	return t
}()

// tailNeedles are words MayStartCredential's tokenTable keeps a tail for
// (a value follows on a later line): Argo CD's "initial-password" and
// "initial-admin-secret" ("l-" pairs are rare in text).
var tailNeedles = []string{"l-password", "l-admin-secret"}

// userTailEncoded reports a tail that ends after usermod's or useradd's
// "-p" URL-encoded and an encoded quote, or inside the value after it
// (also after an escape of its own: "%27VerN%25eR" | "iCon…"), or inside
// that quote's escape, or after the command's name: "usermod+-p+%27",
// "usermod%2B-p%2B%2527Ver" (encoded twice), "usermod+-p+%2" | "7…",
// "sudo+usermod" | "+-p+%27…".
func userTailEncoded(b []byte) bool {
	// Back over the value in progress to the '%' of its encoded quote:
	// most tails (a base64 run, a word) stop at a byte no value holds or
	// run past 64 bytes.
	e := len(b)
	if k := e - 1; k >= 0 && (b[k] == '+' || b[k] == ' ') {
		e = k
	}
	if e >= 7 && (at(b, e-7, "usermod") || at(b, e-7, "useradd")) {
		return true // "sudo+usermod" | "+-p+%27…": its flag in the next text
	}
	if e >= 3 && b[e-2] == '-' && is(b[e-1], cLower) && (b[e-3] == '+' || b[e-3] == ' ') {
		// After another flag of the command: "useradd+-m" | "+-p+%27…".
		w := b[max(0, e-64):e]
		if bytes.IndexByte(w, '\n') < 0 && bytes.IndexByte(w, '&') < 0 && userCommandBefore(b, e) {
			return true
		}
	}
	e = len(b)
	if bytes.IndexByte(b[max(0, e-64):], '%') < 0 && !(e >= 3 && at(b, e-3, "-p+")) {
		return false
	}
	// An escape cut at the end: "%", "%2", "%25", "%252" (the quote's,
	// or one in the value).
	for k := e - 1; k >= max(0, e-4); k-- {
		if b[k] == '%' {
			if x := string(b[k:e]); e-k == 1 || e-k == 2 && hexVal(b[k+1]) >= 0 || x == "%25" || x == "%252" {
				e = k
			}
			break
		}
	}
	if e >= 3 && at(b, e-3, "-p+") || e >= 5 && atFold(b, e-5, "-p%2b") {
		return userCommandBefore(b, e) // "-p+" | "%27…"
	}
	if !bytes.Contains(b[max(0, e-72):e], []byte("-p")) {
		return false // (most tails with a '%': URL-encoded logs)
	}
	for n := len(b); e > 0 && n-e < 64; e-- {
		c := b[e-1]
		if c == '+' || c == '&' || c == ' ' || c == '\n' || c == '"' {
			return false
		}
		if c != '%' {
			continue
		}
		q := e - 1
		if q < 3 || !(at(b, q, "%27") || at(b, q, "%22") || at(b, q, "%2527") || at(b, q, "%2522")) {
			continue // an escape in the value ("%25", "%2F")
		}
		if at(b, q-3, "-p+") || q >= 5 && atFold(b, q-5, "-p%2b") {
			return userCommandBefore(b, q)
		}
	}
	return false
}

// userCommandBefore reports "usermod" or "useradd" in the 256 bytes
// before b[q].
func userCommandBefore(b []byte, q int) bool {
	w := b[max(0, q-256):q]
	return bytes.Contains(w, []byte("usermod")) || bytes.Contains(w, []byte("useradd"))
}

// twilioTailStart reports a tail that ends after a Twilio SID and the
// separator before its secret, or inside the secret ("Client('AC…', '" |
// "<token>')"): twilioSecretAfter's pair in progress.
func twilioTailStart(b []byte) bool {
	n := len(b)
	e := n
	for e > 0 && n-e < 64 && is(b[e-1], alnum) {
		e-- // the secret's part
	}
	k, sep := e, false
	for k > 0 && e-k < 8 && (b[k-1] == ' ' || b[k-1] == '"' || b[k-1] == '\'' || b[k-1] == '\\' || b[k-1] == ',' || b[k-1] == ':' || b[k-1] == '+') {
		sep = sep || b[k-1] == ',' || b[k-1] == ':'
		k--
	}
	return sep && k >= 34 && (at(b, k-34, "AC") || at(b, k-34, "SK")) && hexRun(b, k-32) == k
}

// pctCJKTailStart reports a tail that ends in a CJK label URL-encoded and
// its separator ("%E5%AF%86%E7%A0%81%3A", "…%EF%BC%9A", "…%3D+"), or in
// the first letters and digits of the value after it: formCJK's value is
// in the next text. It reads the tail back from its end: the last run of
// letters and digits (24 bytes at most) must end an escape's '%'.
func pctCJKTailStart(b []byte) bool {
	e := len(b)
	for e > 0 && b[e-1] == '+' {
		e--
	}
	x := e
	for x > 0 && e-x < 24 && is(b[x-1], alnum) {
		x--
	}
	if x == 0 || b[x-1] != '%' || e-x < 2 {
		return false
	}
	p := x - 1
	switch {
	case atFold(b, p, "%3a") || atFold(b, p, "%3d"):
		e = p
	case (atFold(b, p, "%9a") || atFold(b, p, "%9d")) && p >= 6 && atFold(b, p-6, "%ef%bc"):
		e = p - 6
	default:
		return false
	}
	for e > 0 && b[e-1] == '+' {
		e--
	}
	var d [16]byte
	n := len(d)
	for n > 0 && e >= 3 && b[e-3] == '%' && hexVal(b[e-2]) >= 0 && hexVal(b[e-1]) >= 0 {
		n--
		d[n] = byte(hexVal(b[e-2])<<4 | hexVal(b[e-1]))
		e -= 3
	}
	return cjkLabelAt(d[:], n, len(d))
}

// keyvaultSecretSet reports whether the line before the flag at s[i]
// holds "keyvault secret set " (Azure's CLI: "az keyvault secret set
// --vault-name <kv> --name <n> --value <secret>", also with '+' for a
// space), as ghSecretSet does for gh's --body.
func keyvaultSecretSet(s []byte, from, i int) bool {
	b := i
	for b > from && i-b < 256 && s[b-1] != '\n' && s[b-1] != '\r' && s[b-1] != ';' && s[b-1] != '|' && !escLetter(s, b-1) {
		b--
	}
	return bytes.Contains(s[b:i], []byte("keyvault secret set ")) || bytes.Contains(s[b:i], []byte("keyvault+secret+set+"))
}

// fromLiteral reports a key at s[j] given to kubectl's
// "--from-literal=<key>=<value>" (a Secret's entry; also URL-encoded,
// "--from-literal%3Dpass%3D…"): a bare "pass" key
// there names a password whatever its value reads as.
func fromLiteral(s []byte, from, j int) bool {
	return j-15 >= from && at(s, j-15, "--from-literal=") || j-17 >= from && atFold(s, j-17, "--from-literal%3d")
}

// mongoTools are MongoDB's shells and tools, whose "-p <pw>" follows
// "-u <user>" (shortFlag; "-p" alone prompts).
var mongoTools = []string{"mongosh", "mongo", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop", "mongofiles"}
