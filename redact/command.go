package redact

import (
	"bytes"
	"math/bits"
)

// Passwords and tokens that a command line or a call takes as a plain
// argument, named by the command or the call and not by a key: Redis's
// lower-case "auth [<user>] <pw>" (redis-cli, RESP inline), an LDAP
// client's "bindpw <pw>", "wandb login", "cargo login" and "vault login"
// with a token, nmcli's "wifi-sec.psk <psk>" and "... password <pw>",
// Windows' "setx NAME <v>" and fish's "set -gx NAME <v>" of a
// credential-named variable, "dotnet user-secrets set <key> <v>", the
// secret key of MinIO's "mc alias set NAME URL ACCESSKEY SECRETKEY" (a
// URL that ends in a port, '/' or ".com"), and the password argument of
// smtplib's and ftplib's .login(user, pw), PHP's new PDO(dsn, user, pw)
// and mysqli(host, user, pw), JDBC's DriverManager.getConnection(url,
// user, pw), Go's smtp.PlainAuth("", user, pw, host), PHP's
// define('DB_PASSWORD', pw) and the one argument of a setter or a
// builder's method of a credential-named field (.setPassword(pw),
// .password(pw), .setApiKey(key): setterCall). Each is found at a digit of the value (an
// anchor of Find and of the pre-check: a value with no digit is left, as
// proseValue leaves one), and judged once a value (cmdArg's next); in
// URL-encoded text, decoded (cmdArgForm). A variable, a placeholder or a
// mask is none.
//
// At a ':' (sep): xfreerdp's /p:<pw>, the "Key Content : <psk>" line of
// netsh wlan show profile key=clear, a "user:password" line fed to
// chpasswd (echo 'bob:<pw>' | chpasswd, or the line after "chpasswd
// <<EOF") and a PuTTY key's Private-Lines block; these need no digit.

// cmdFolded and cmdExact are the words (any case; as spelled) one of
// which a text holds wherever cmdArg takes a value in it, unless it holds
// a "%XX" of a byte of one (a URL-encoded value is looked for decoded:
// cmdPctWord): "auth" (Redis, PlainAuth), "bindpw", ".psk", "login"
// (wandb, cargo, vault, .login(…)), "setx", "content" (netsh's "Key
// Content", when a run with a '+' and a '=' is read as URL-encoded);
// nmcli's "nmcli" (its "password" is taken only on a line with it),
// fish's "set", "user-secrets", mc's "alias" and "config", "define",
// "PDO", "mysqli", "getConnection", "xfreerdp", "Private-Lines",
// "chpasswd"; a builder's (setterCall) "rd(" (password) and "ey(" (key;
// "oken(" and "cret(" would have added "ke" and "re", which fill text; a
// setter's "set" is there); NetworkCredential's "kCredential",
// UsernamePasswordCredentials' "dCredentials" (the other calls of a user
// and a password hold "auth"). Each is given by a part of it whose first three bytes are
// rare in text (anyWordPairs compares words only where their first pairs
// are: "in", "on", "se", "de", "li" fill log lines and prose): "dpw" for
// bindpw, "ogin", "etx", "r-secrets", "lias", "nfig", "efine", "sqli",
// "tConnection", "e-Lines", "hpasswd". And passwd.go's, which cmdArgForm
// reads URL-encoded (formShapes): "mkpasswd", "openssl+passwd"'s
// "l+passwd" ("| passwd" has its "%7C", a "%20" space before a flag is
// cmdPctWord's), a crypt hash's "$6$" (usermod -p), "l-pass" of Argo CD's
// initial-password (its initial-admin-secret is piped: "%7C"). Both of a
// word's first two pairs are looked up (anyWordPairs): "kpasswd" or
// "l-admin" would have added "pa" and "-a", which fill log lines. A new command cmdArg or colonArg
// takes a value after adds its word here (TestCmdMay fails for an example
// without one).
var (
	cmdFolded = []string{"auth", "dpw", "psk", "ogin", "etx", "content"}
	cmdExact  = []string{"nmcli", "set", "r-secrets", "lias", "nfig", "efine", "PDO", "sqli", "tConnection", "xfreerdp", "e-Lines", "hpasswd",
		"mkpasswd", "l+passwd", "$1$", "$5$", "$6$", "$y$", "$2b$", "$2y$", "l-pass",
		"rd(", "ey(", "kCredential", "dCredentials",
		"hCredentials", `en("`, `en('`, `et("`, `et('`} // withCredentials(user, pw); .token("…"), .clientSecret("…")
)

// (cmdTable is in tables_gen.go.)

// cmdPairs are cmdTable's pairs (anyWordPairs).
var cmdPairs = wordPairs(cmdTable)

// cmdMay reports whether cmdArg may take a value anywhere in s (any from,
// any digit): s holds one of the words of cmdTable, or a "%XX" that may
// decode into one or into a byte cmdArgForm's shapes look at
// (cmdPctWord). Where it
// does not, the scans call cmdArg at no digit of s: a text dense with
// digits (log lines, a tool's JSON, base64) walked each digit's run and
// the words before it for a command it does not hold (a tenth of the
// whole process's instructions on log deltas).
func cmdMay(s []byte) bool {
	return anyWordPairs(cmdTable, cmdPairs, s) || cmdPctWord(s)
}

// cmdPctWord reports a "%XX" in s that decodes to a byte of a word of
// cmdTable (a letter, '.', '-'), as cmdArgForm decodes it: only such a
// byte, decoded, can make a word there that s does not hold (a query's
// "%3D", "%3A", "%2F" and "%20" make none).
func cmdPctWord(s []byte) bool {
	for k := 0; ; {
		j := bytes.IndexByte(s[k:], '%')
		if j < 0 {
			return false
		}
		if k += j + 1; k+1 < len(s) {
			if h, l := hexVal(s[k]), hexVal(s[k+1]); h >= 0 && l >= 0 {
				switch c := byte(h<<4 | l); {
				case cmdWordByte[c] || formPctByte[c]:
					return true
				case (c == '"' || c == '\'') && k >= 2 && s[k-2] == '(':
					return true // `.token("`'s quote (cmdExact)
				case c == '=' && (k >= 4 && s[k-4] == '%' && s[k-3] == '2' && s[k-2] == '0' || k >= 2 && s[k-2] == '+'):
					return true // setPasswordFor's " = " (formShapes)
				case c == ' ' && k+3 < len(s) && s[k+2] == '-' && is(s[k+3], cLower|cUpper|cDash):
					return true // a flag after an encoded space, "%20-p" (pctFlag)
				case (c == '"' || c == '*') && (atFold(s, k+2, "assword") || atFold(s, k+2, "password")):
					return true // expect's prompt, "%22%2Aassword%2A%22" (formShapes' 'w': expectGlob)
				case (c == ' ' || c == '+') && (atFold(s, k+2, "is%2") || atFold(s, k+2, "was%2")):
					// A copula between encoded spaces, "password%20is%20<pw>"
					// or encoded twice, "password%2Bis%2B<pw>" (proseValue,
					// in the text decoded: cmdArgForm).
					return true
				case c == ' ' && k >= 8 && s[k-2]|0x20 == 'a' && atFold(s, k+2, "es%2") && encodedEnye(s, k-8):
					// Spanish's copula after "contraseña", between
					// encoded spaces: "contrase%C3%B1a%20es%20<pw>".
					return true
				case cjkLabelLast[c] && k >= 4 && s[k-4] == '%' && k+2 < len(s) && (s[k+2] == '%' || s[k+2] == '+'):
					return true // a CJK label's last byte before its separator (formCJK)
				}
			}
		}
	}
}

// formPctByte marks the bytes, other than cmdWordByte's, that cmdArgForm
// looks at in the text it decodes: formShapes' '|' (a table's cell) and
// '\\' (a CJK label spelled with escapes), colonArg's ':' and the '@'
// before it (generatedPassword: "root%40localhost%3A+<pw>",
// "New+value%3A+<pw>"). A "%XX" of one of them may make a value
// cmdArgForm takes where the text holds no command's word. An encoded '='
// is one only after an encoded space (cmdPctWord): "%3D" ends every
// URL-encoded base64 value.
var formPctByte = func() (t [256]bool) {
	for _, c := range []byte("|\\:@") {
		t[c] = true
	}
	return t
}()

// cmdWordByte marks the bytes of the words of cmdTable, in either case.
var cmdWordByte = func() (t [256]bool) {
	for _, w := range append(append([]string(nil), cmdFolded...), cmdExact...) {
		for _, c := range []byte(w) {
			if c == '"' || c == '\'' {
				continue // (a quote after a '(': cmdPctWord; "%22" fills queries)
			}
			t[c], t[lower(c)] = true, true
			if c >= 'a' && c <= 'z' {
				t[c-'a'+'A'] = true
			}
		}
	}
	return t
}()

// cmdState is what a scan knows of cmdMay of its text, worked out once,
// at its first digit (cmdJudge): 0 not yet, 1 false, 2 true (or not
// looked for).
type cmdState int8

// cmdJudge is the cmdState of s: cmdArg is called in s where cmdMay(s)
// holds, or where s does not start as words do (no space in its first
// 64 bytes), where it is not worked out. cmdMay's pass costs about two
// instructions a byte; in a text of long runs (base64, ids, paths)
// cmdArg walks each run once (its next skips the run's other digits), at
// about that cost: on base64 deltas the pass saved no instruction, and
// looking for a space in all of the text cost more than it saved. In text
// with spaces cmdArg walks each word that holds a digit, back to its start
// and on to its end, and judges it.
func cmdJudge(s []byte) cmdState {
	if bytes.IndexByte(s[:min(len(s), 64)], ' ') >= 0 && !cmdMay(s) {
		return 1
	}
	return 2
}

// may reports whether cmdArg is to be called in s, the text of c
// (cmdJudge). Apart: with c a variable of MayHoldCredentialText's loop
// (or its cmdDone -1 until judged, as in scanState), the loop's other
// variables lost their registers: 0.1-0.2 % more instructions of the
// whole process on base64 deltas than this call.
//
//go:noinline
func (c *cmdState) may(s []byte) bool {
	if *c == 0 {
		*c = cmdJudge(s)
	}
	return *c == 2
}

// start is where a scan of a text of n bytes starts its cmdDone (the end
// of what cmdArg judged) with c known: n where cmdArg takes no value in
// it, 0 where it may, -1 where cmdJudge is yet to say which (at the first
// digit: a check the scans make there anyway, not one more; only in a scan
// from the text's start).
func (c cmdState) start(n int) int {
	switch c {
	case 1:
		return n
	case 2:
		return 0
	}
	return -1
}

// cmdArg matches the argument whose digit is s[i], as the package
// comment says. next is where the value ends: no later digit before it
// is a new argument.
func cmdArg(s []byte, from, i int) (m Match, ok bool, next int) {
	return cmdArgAt(s, from, i, true)
}

// cmdArgAt is cmdArg; form: a value in URL-encoded text is looked for in
// it decoded (cmdArgForm).
func cmdArgAt(s []byte, from, i int, form bool) (m Match, ok bool, next int) {
	// (A value's first digit is among its first 32 bytes: a random one
	// of 32 letters has none once in 300.)
	// The run is walked eight bytes at a time (cmdRun8), then to the byte
	// that ends it: a run of base64 (most of a base64 delta, walked once
	// each 224 bytes) cost 7 instructions a byte.
	va := i
	var enc uint8 // cmdRunT's bits of the run's bytes
	lo := max(from, i-32)
	for ; va-8 >= lo; va -= 8 {
		t := cmdRun8(s[va-8 : va : va])
		if t&1 != 0 {
			break
		}
		enc |= t
	}
	for ; va > lo; va-- {
		t := cmdRunT[s[va-1]]
		if t == 1 {
			break
		}
		enc |= t
	}
	ve := i + 1
	hi := min(len(s), va+256)
	// Where 64 bytes are left before hi, the kernel finds the run's end
	// and the bytes it or's into enc 64 at a time (a base64 run has
	// neither but its '+' bytes: each digit cmdArg is called at walked up
	// to 256 bytes of it at ~3 instructions a byte); the loops below go on
	// from where it stops, at once where it stopped at the run's end.
	for vecRuns && ve+64 <= hi {
		end, x := setMasks64(&s[ve], &cmdEndSet, &cmdEncSet)
		if end != 0 {
			x &= end&-end - 1 // (the bytes before the end)
		}
		for ; x != 0; x &= x - 1 {
			enc |= cmdRunT[s[ve+bits.TrailingZeros64(x)]]
		}
		if end != 0 {
			ve += bits.TrailingZeros64(end)
			break
		}
		ve += 64
	}
	for ; ve+8 <= hi; ve += 8 {
		t := cmdRun8(s[ve : ve+8 : ve+8])
		if t&1 != 0 {
			break
		}
		enc |= t
	}
	for ; ve < hi; ve++ {
		t := cmdRunT[s[ve]]
		if t == 1 {
			break
		}
		enc |= t
	}
	next = ve
	// (cmdArgForm looks for a value only in the text it decodes, which holds
	// a command's word only where the text does, or a '%': the tails
	// MayStartCredential probes, a base64 run with a '+' and a probe's '=',
	// were decoded and searched at each digit.)
	if form && cmdForm(enc) && cmdMay(s[max(0, va-cmdFormBack):max(ve, min(len(s), va+cmdFormWin-cmdFormBack-8))]) {
		if m, ok := cmdArgForm(s, from, va, ve); ok {
			return m, true, next
		}
	}
	if va <= from || va < 2 {
		return Match{}, false, next
	}
	if odd := s[va-1] != ' ' && s[va-1] != '\t' && (ve >= len(s) || s[ve] != s[va-1]); odd && cmdOddT[s[va-1]] || ve < len(s) && cmdOddT[s[ve]] && s[ve] != s[va-1] ||
		s[va-1] == '\\' && s[va] == 'u' {
		// The run is not the whole of a quoted argument: a value with
		// quotes' and brackets' kin in it (or a "\u003c" for a '<' in
		// JSON text), a WordPress salt in define('AUTH_KEY', '…').
		if m, ok := defineArg(s, from, va, ve); ok {
			return m, true, max(next, m.End)
		}
	}
	pre := va // where the argument starts, with its opening quote
	quoted := false
	switch c := s[va-1]; c {
	case ' ', '\t':
	case '\'', '"', '`':
		if ve >= len(s) || s[ve] != c && !(c == '"' && at(s, ve, `\"`)) {
			return Match{}, false, next
		}
		pre, quoted = va-1, true
		if c == '"' && s[va-2] == '\\' {
			if s[ve] != '\\' {
				return Match{}, false, next
			}
			pre-- // in JSON text: \"<pw>\"
		}
	default:
		return Match{}, false, next
	}
	e := ve
	if !quoted {
		for e > va && (s[e-1] == ';' || s[e-1] == ',' || s[e-1] == ')') {
			e--
		}
	}
	if e-va < 6 || !cmdValue(s[va:e]) || isMask(s, va) || innerEq(s[va:e]) {
		return Match{}, false, next
	}
	// The words or the call before the value are read before from too
	// (the value is after it): a user masked as an e-mail address, an
	// access key as an AWS one, ends a search there.
	b := pre
	for b > 0 && pre-b < 8 && (s[b-1] == ' ' || s[b-1] == '\t') {
		b--
	}
	if b == 0 {
		return Match{}, false, next
	}
	switch c := s[b-1]; {
	case c == ',' || c == '(':
		if quoted && callArg(s, 0, b-1) && !holdsMask(s[va:e]) {
			return Match{va, e, KindKeyValue}, true, next
		}
	case b < pre:
		if cmdWords(s, 0, b) && !holdsMask(s[va:e]) {
			k := KindKeyValue
			if e-va >= 26 && at(s, va, "s.") {
				k = KindVendorToken // a Vault service token (vault login s.…)
			}
			return Match{va, e, k}, true, next
		}
	}
	return Match{}, false, next
}

// cmdOddT marks the bytes that end a value's run (proseEndT) that may be
// inside a quoted value: its quotes and '`', '<', '>' and white space
// (a WordPress salt holds them all but its quote).
var cmdOddT = func() (t [256]bool) {
	for _, c := range []byte("'\"`<> ") {
		t[c] = true
	}
	return t
}()

// defineArg matches the value of PHP's define('<NAME>', '<value>') of a
// credential-named constant (callArg: WordPress's AUTH_KEY,
// SECURE_AUTH_SALT, DB_PASSWORD) whose run of a digit, s[va:ve], is not
// the whole of its quoted value: a salt holds '`', '<', '>' and spaces
// (but no quote). The value is from its opening quote (within 128 bytes
// before, on the line) to the closing one.
func defineArg(s []byte, from, va, ve int) (Match, bool) {
	q := va - 1
	for q >= from && va-q < 128 && s[q] != '\'' && s[q] != '"' && s[q] != '\n' {
		q--
	}
	if q < from+2 || va-q >= 128 || s[q] == '\n' {
		return Match{}, false
	}
	c := s[q]
	esc := s[q-1] == '\\' // in JSON text: define(\"LOGGED_IN_KEY\", \"…\")
	if esc && (c != '"' || q-2 < from || s[q-2] == '\\') {
		return Match{}, false
	}
	hi := min(len(s), q+256)
	if ve > hi {
		return Match{}, false
	}
	e := bytes.IndexByte(s[ve:hi], c)
	switch {
	case e >= 0:
		e += ve
		if esc {
			if s[e-1] != '\\' {
				return Match{}, false
			}
			e--
		}
	case hi == len(s):
		e = len(s) // the text ends inside the value (a delta cut in a salt)
	default:
		return Match{}, false
	}
	if e-q-1 < 8 || bytes.IndexByte(s[q+1:e], '\n') >= 0 || holdsMask(s[q+1:e]) {
		return Match{}, false
	}
	b := q - btoi(esc)
	for b > from && (s[b-1] == ' ' || s[b-1] == '\t') {
		b--
	}
	if b <= from || s[b-1] != ',' || !callArg(s, from, b-1) {
		return Match{}, false
	}
	return Match{q + 1, e, KindKeyValue}, true
}

// cmdRunT is proseEndT as cmdArgAt walks a value's run: 1 ends it, 2 is
// a '+', 4 a '=', '&' or '?', 8 a '%', 0 any other byte. A run is taken
// for URL-encoded text (cmdForm) only with a '%', or with a '+' and a
// query's '=', '&' or '?': a '+' alone is a base64 run's or a
// timestamp's ("+00:00"), and decoding each of them cost base64 deltas
// 2.8x and tool results 1.8x the instructions of the whole process.
var cmdRunT = func() (t [256]uint8) {
	for c := range t {
		if proseEndT[c] {
			t[c] = 1
		}
	}
	t['+'] = 2
	t['='], t['&'], t['?'] = 4, 4, 4
	t['%'] = 8
	return t
}()

// cmdRun8 is the cmdRunT bits of the eight bytes of b, or'd: bit 1 set
// where one of them ends a run.
func cmdRun8(b []byte) uint8 {
	_ = b[7]
	return cmdRunT[b[0]] | cmdRunT[b[1]] | cmdRunT[b[2]] | cmdRunT[b[3]] | cmdRunT[b[4]] | cmdRunT[b[5]] | cmdRunT[b[6]] | cmdRunT[b[7]]
}

// cmdForm reports whether a run whose cmdRunT bits are enc may be
// URL-encoded text (cmdRunT).
func cmdForm(enc uint8) bool { return enc&8 != 0 || enc&6 == 6 }

// cmdWordT says which bytes end a word for cmdWord walking back: 1 white
// space, '"', '(', '`', a line end or a shell operator; 2 a letter that
// ends one after a backslash (JSON text's "\\n": escLetter says).
var cmdWordT = func() (t [256]uint8) {
	for _, c := range []byte(" \t\"(`\n\r|;&") {
		t[c] = 1
	}
	for _, c := range []byte("ntrbf") {
		t[c] = 2
	}
	return t
}()

// cmdLastT marks the last bytes of the words cmdWords looks at before
// the last one: "login" (and wandb's flags after it), "auth", "setx",
// fish's set flags, "set", and a URL's port, '/' or ".com".
var cmdLastT = func() (t [256]bool) {
	for _, c := range []byte("nNhHxXgGuUlLtTmM/0123456789") {
		t[c] = true
	}
	return t
}()

// innerEq reports a '=' in v before its end's run of them (base64's
// padding): v is a key=value pair, keyValue's, not a command's argument
// ("user=u-5", "latency_ms=155" of a log line: each cost a walk back over
// the words before it, a third of the whole process's instructions on
// log deltas).
func innerEq(v []byte) bool {
	k := bytes.IndexByte(v, '=')
	if k < 0 {
		return false
	}
	for _, c := range v[k:] {
		if c != '=' {
			return true
		}
	}
	return false
}

// cmdValue reports an argument that may be a secret: not a variable, a
// placeholder, a flag or a number. (Nor one that holds a mask, masked
// already: "+******(fp:…)" is read again at a digit of its fingerprint;
// its callers ask holdsMask once the rest holds.)
func cmdValue(v []byte) bool {
	switch v[0] {
	case '$', '%', '{', '-', '*', '<', '@', '?', '}', ']', '[', '(', ')', ',', ';', ':', '=', '/':
		return false
	}
	for _, c := range v {
		if !is(c, cDigit) {
			return true
		}
	}
	return false
}

// cmdWord is the word (bytes other than white space) that ends at s[e]
// after white space, walking back from e: [w, we); ok is false at a line
// end, a shell operator or from. first says that the word starts its
// line (or its command: after '|', ';', '&', a JSON string's quote).
func cmdWord(s []byte, from, e int) (w, we int, first, ok bool) {
	for e > from && (s[e-1] == ' ' || s[e-1] == '\t') {
		e--
	}
	if e == from || cmdBreak(s, from, e-1) {
		return 0, 0, false, false
	}
	w = e
	if q := s[e-1]; q == '"' || q == '\'' {
		// A quoted word ("Stripe:SecretKey"): to its opening quote.
		k := e - 2
		for k >= from && e-k < 96 && s[k] != q && s[k] != '\n' {
			k--
		}
		if k >= from && s[k] == q && k < e-2 {
			if k > from && s[k-1] == '\\' {
				k-- // \"…\" in JSON text
			}
			return k, e, k == from || cmdBreak(s, from, k-1) || s[k-1] == '"' || s[k-1] == '(' || s[k-1] == '`', true
		}
	}
	for w > from && e-w < 96 {
		if t := cmdWordT[s[w-1]]; t == 1 || t == 2 && w-1 > from && escLetter(s, w-1) {
			break
		}
		w--
	}
	if w == e {
		return 0, 0, false, false
	}
	return w, e, w == from || cmdBreak(s, from, w-1) || s[w-1] == '"' || s[w-1] == '(' || s[w-1] == '`', true
}

// cmdBreak: s[p] ends a command's words (a line end, also escaped in JSON
// text, or a shell operator).
func cmdBreak(s []byte, from, p int) bool {
	switch s[p] {
	case '\n', '\r', '|', ';', '&':
		return true
	}
	return p > from && s[p-1] == '\\' && escLetterAfter(s, p)
}

// cmdWords reports that the words before s[b] (the argument's start
// after white space) name it a secret.
func cmdWords(s []byte, from, b int) bool {
	w0, e0, first0, ok := cmdWord(s, from, b)
	if !ok {
		return false
	}
	switch s[e0-1] | 0x20 {
	case 'h': // auth <pw>, after a prompt ("127.0.0.1:6379> auth …") or first
		if e0-w0 == 4 && eqFold(s[w0:e0], "auth") {
			return first0 || redisPrompt(s, from, w0)
		}
	case 'w': // bindpw <pw>
		if e0-w0 >= 6 && eqFold(s[e0-6:e0], "bindpw") && (e0-w0 == 6 || s[e0-7] == '-') {
			return true
		}
	case 'k': // nmcli … wifi-sec.psk <psk>
		if e0-w0 > 4 && eqFold(s[e0-4:e0], ".psk") {
			return true
		}
	case 'd': // nmcli dev wifi connect <ssid> password <pw>
		if e0-w0 == 8 && eqFold(s[w0:e0], "password") {
			return lineHolds(s, from, w0, "nmcli")
		}
	}
	// The word before the last: "login" before a token (after flags),
	// "auth" before a user, setx's or set's variable, user-secrets' key,
	// mc's URL (one that ends in a port, '/' or ".com"). Only where its
	// last byte may end one of them (after "login", any).
	l := w0
	for l > from && w0-l < 8 && (s[l-1] == ' ' || s[l-1] == '\t') {
		l--
	}
	if l == w0 || l == from || !cmdLastT[s[l-1]] && !(e0-w0 == 5 && eqFold(s[w0:e0], "login")) {
		return false
	}
	w1, e1, first1, ok := cmdWord(s, from, w0)
	if !ok {
		return false
	}
	// (wandb login --relogin <key>)
	if s[w0] == '-' && e1-w1 == 5 && eqFold(s[w1:e1], "login") {
		w0, e0, first0 = w1, e1, first1
		if w1, e1, first1, ok = cmdWord(s, from, w0); !ok {
			return false
		}
	}
	switch {
	case e0-w0 == 5 && eqFold(s[w0:e0], "login"):
		return eqFoldAny(s[w1:e1], "wandb", "cargo", "vault")
	case e1-w1 == 4 && eqFold(s[w1:e1], "auth"):
		return is(s[w0], word) && (first1 || redisPrompt(s, from, w1))
	}
	switch s[e1-1] | 0x20 {
	case 'x', 'g', 'u', 'l', 't':
	default:
		return e1-w1 > 8 && mcAlias(s, from, w1, e1)
	}
	if e1-w1 == 4 && eqFold(s[w1:e1], "setx") || s[w1] == '-' && fishSetFlag(s[w1:e1]) {
		if e0-w0 >= 2 && (s[w0] == '"' || s[w0] == '\'') && s[e0-1] == s[w0] {
			w0, e0 = w0+1, e0-1
		}
		if !classifyWords(s, w0, e0).Credential() {
			return false
		}
		if s[w1] != '-' {
			return true
		}
		// set [-flags…] NAME <value>
		for k := 0; k < 3; k++ {
			w2, e2, _, ok := cmdWord(s, from, w1)
			if !ok {
				return false
			}
			if e2-w2 == 3 && at(s, w2, "set") {
				return true
			}
			if s[w2] != '-' || !fishSetFlag(s[w2:e2]) {
				return false
			}
			w1 = w2
		}
		return false
	}
	if e1-w1 == 3 && eqFold(s[w1:e1], "set") {
		w2, e2, _, ok := cmdWord(s, from, w1)
		return ok && e2-w2 == 12 && at(s, w2, "user-secrets")
	}
	return false
}

// mcAlias: s[w1:e1] is the URL of MinIO's "mc alias set NAME URL
// ACCESSKEY SECRETKEY" (or the older "mc config host add …"), the
// argument after the access key its secret key.
func mcAlias(s []byte, from, w1, e1 int) bool {
	if !bytes.Contains(s[w1:e1], []byte("://")) {
		return false
	}
	var w [4][2]int // NAME, set/add, alias/host, mc/config
	p := w1
	for k := range w {
		a, e, _, ok := cmdWord(s, from, p)
		if !ok {
			return false
		}
		w[k], p = [2]int{a, e}, a
	}
	word := func(k int) []byte { return s[w[k][0]:w[k][1]] }
	switch {
	case string(word(1)) == "set" && string(word(2)) == "alias":
		return string(word(3)) == "mc" || bytes.HasSuffix(word(3), []byte("/mc"))
	case string(word(1)) == "add" && string(word(2)) == "host" && string(word(3)) == "config":
		return true
	}
	return false
}

// fishSetFlag: f is a flag of fish's set that makes a variable global,
// universal or exported (-gx, -Ux, -x, --export, --global, --universal).
func fishSetFlag(f []byte) bool {
	if len(f) >= 3 && f[1] == '-' {
		return eqFoldAny(f, "--export", "--global", "--universal")
	}
	if len(f) < 2 || len(f) > 4 {
		return false
	}
	for _, c := range f[1:] {
		switch c {
		case 'g', 'U', 'x', 'u', 'l':
		default:
			return false
		}
	}
	return true
}

// redisPrompt: the word before s[w] is redis-cli's prompt ("127.0.0.1:6379>",
// "redis:6379[2]>").
func redisPrompt(s []byte, from, w int) bool {
	p, pe, first, ok := cmdWord(s, from, w)
	return ok && s[pe-1] == '>' && (pe-p >= 2 && s[pe-2] != '-' && s[pe-2] != '=' || pe-p == 1 && first)
}

// lineHolds: the line of s[w] holds the word cmd before w (within 256
// bytes).
func lineHolds(s []byte, from, w int, cmd string) bool {
	b := w
	for b > from && w-b < 256 && s[b-1] != '\n' && s[b-1] != '\r' && !escLetter(s, b-1) {
		b--
	}
	for k := b; k+len(cmd) <= w; k++ {
		if s[k] == cmd[0] && at(s, k, cmd) && (k == b || !is(s[k-1], word)) && (k+len(cmd) == w || !is(s[k+len(cmd)], word)) {
			return true
		}
	}
	return false
}

// callArg reports that the ',' or '(' at s[p] (before a quoted argument)
// makes it the password argument of a call that takes one: .login(user,
// pw), new PDO(dsn, user, pw), mysqli_connect / new mysqli(host, user, pw),
// DriverManager.getConnection(url, user, pw), smtp.PlainAuth(id, user, pw,
// host), define('DB_PASSWORD', pw), HTTPBasicAuth(user, pw) and its kin
// (NetworkCredential, PasswordAuthentication, UsernamePassword…); or its one argument, of a setter or a
// builder's method of a credential-named field (setterCall).
func callArg(s []byte, from, p int) bool {
	n := 1 // the argument's place
	first := -1
	for s[p] == ',' {
		// Back over the argument before: a quoted string or an
		// expression with no ',' or parentheses.
		q := p
		for q > from && (s[q-1] == ' ' || s[q-1] == '\t') {
			q--
		}
		if q == from {
			return false
		}
		if c := s[q-1]; c == '\'' || c == '"' {
			k := q - 2
			for k >= from && q-k < 256 && s[k] != c && s[k] != '\n' {
				k--
			}
			if k < from || s[k] != c {
				return false
			}
			if k > from && s[k-1] == '\\' {
				k-- // \"…\" in JSON text
			}
			first, q = k, k
		} else {
			k := q
			for k > from && q-k < 128 && s[k-1] != ',' && s[k-1] != '(' && s[k-1] != ')' && s[k-1] != '\n' && s[k-1] != ';' {
				k--
			}
			if k == q {
				return false
			}
			first, q = -1, k
		}
		for q > from && (s[q-1] == ' ' || s[q-1] == '\t') {
			q--
		}
		if q == from {
			return false
		}
		p = q - 1
		if n++; n > 4 {
			return false
		}
	}
	if s[p] != '(' {
		return false
	}
	ne := p
	nb := ne
	for nb > from && ne-nb < 64 && (is(s[nb-1], word) || s[nb-1] == '.') {
		nb--
	}
	if nb < ne && escLetter(s, nb) {
		nb++ // the letter of an escape before the name: "\\ndefine(" in JSON text
	}
	name := s[nb:ne]
	has := func(suffix string) bool {
		return len(name) >= len(suffix) && string(name[len(name)-len(suffix):]) == suffix &&
			(len(name) == len(suffix) || name[len(name)-len(suffix)-1] == '.' || name[len(name)-len(suffix)-1] == '_')
	}
	switch n {
	case 1:
		return setterCall(name)
	case 2:
		switch {
		case has("login"):
			return len(name) > 5 // a method: server.login(user, pw)
		case has("HTTPBasicAuth"), has("HTTPDigestAuth"), has("BasicAuth"), has("NetworkCredential"), has("PasswordAuthentication"), has("withCredentials"),
			has("UsernamePasswordCredentials"), has("UsernamePasswordAuthenticationToken"):
			// A user and its password: requests' HTTPBasicAuth(user, pw),
			// aiohttp's BasicAuth, .NET's NetworkCredential, JavaMail's
			// PasswordAuthentication, Apache HttpClient's and Spring
			// Security's UsernamePassword….
			return true
		case string(name) == "define":
			if first < 0 {
				return false
			}
			k := first + 1
			if s[first] == '\\' {
				k++
			}
			ke := run(s, k, word)
			return ke > k && (classifyWords(s, k, ke).Credential() || wpSalt(s[k:ke]))
		}
	case 3:
		switch {
		case string(name) == "PDO", string(name) == "mysqli":
			return nb-from >= 4 && at(s, nb-4, "new ")
		case has("getConnection"), has("PlainAuth"), has("mysqli_connect"):
			return true
		}
	}
	return false
}

// wpSalt reports one of WordPress's eight keys and salts of wp-config.php
// (AUTH_KEY, SECURE_AUTH_KEY, LOGGED_IN_KEY, NONCE_KEY and their _SALT):
// secrets its cookies are signed with, not all named as credentials are.
func wpSalt(name []byte) bool {
	n := string(name)
	for _, p := range [...]string{"AUTH_", "SECURE_AUTH_", "LOGGED_IN_", "NONCE_"} {
		if len(n) > len(p) && n[:len(p)] == p && (n[len(p):] == "KEY" || n[len(p):] == "SALT") {
			return true
		}
	}
	return false
}

// setterCall reports that name, a call's name before its one quoted
// argument, sets a credential: a setter or a builder's method of a
// credential-named field, config.setPassword("<pw>"), .setApiKey(…),
// .withPassword(…), DataSourceBuilder's .password(…), Kotlin's
// .clientSecret(…). A method that reads, looks up or checks a credential
// (getSecret("prod-db-1"), verifyPassword(…)) takes a name or an input,
// not the secret it holds: none.
func setterCall(name []byte) bool {
	d := bytes.LastIndexByte(name, '.')
	seg := name[d+1:]
	set, setter := false, false
	for _, p := range [...]string{"set", "with", "use"} {
		if len(seg) > len(p)+1 && string(seg[:len(p)]) == p && (isUpper(seg[len(p)]) || seg[len(p)] == '_') {
			seg, set, setter = seg[len(p):], true, p == "set"
			if seg[0] == '_' {
				seg = seg[1:]
			}
			break
		}
	}
	if !set && d < 0 {
		return false // a function of its own name: hash_password("…"), input("Password: ")
	}
	if !setter && !bytes.HasSuffix(seg, []byte("rd")) && !bytes.HasSuffix(seg, []byte("ey")) &&
		!bytes.HasSuffix(seg, []byte("oken")) && !(len(seg) > 6 && bytes.HasSuffix(seg, []byte("Secret"))) {
		// A builder's or a with/use method other than a password's, a
		// key's, a token's or a client's secret (.token("…"),
		// .clientSecret("…"); .withSecret("…") names a stored secret):
		// cmdMay's words are "set", "rd(", "ey(", "oken(" and "cret(".
		return false
	}
	if len(seg) < 3 || !isLowerByte(seg[0]) && !set {
		return false // a class: .Secret("…") (a type's constructor), Password("…")
	}
	w := 0
	for w < len(seg) && (isLowerByte(seg[w]) || w == 0 && isUpper(seg[w])) {
		w++
	}
	if w < len(seg) && eqFoldAny(seg[:w], "get", "fetch", "read", "load", "find", "lookup", "delete", "remove", "has", "is",
		"check", "verify", "validate", "compare", "create", "generate", "rotate", "revoke", "describe", "list", "hash", "reset", "encode", "decode") {
		return false
	}
	return classifyWords(seg, 0, len(seg)).Credential()
}

// colonArg matches the value after the ':' at s[i] of xfreerdp's /p:,
// netsh's "Key Content : …" and a chpasswd line's "user:password".
func colonArg(s []byte, from, i int) (Match, bool) {
	if i < 1 || i+1 >= len(s) {
		return Match{}, false
	}
	switch c := s[i-1]; {
	case c == 'p' || c == 'P':
		if i >= 3 && s[i-2] == '/' && (s[i-3] == ' ' || s[i-3] == '\t' || s[i-3] == '\'' || s[i-3] == '"' || s[i-3] == '\\') && lineHolds(s, 0, i-2, "xfreerdp") {
			return argAfter(s, from, i+1)
		}
	case c == 's':
		if i >= 13 && at(s, i-13, "Private-Lines") {
			return ppkPrivate(s, from, i)
		}
	case c == ' ' || c == '\t':
		j := i - 1
		for j > 0 && i-j < 40 && (s[j-1] == ' ' || s[j-1] == '\t') {
			j--
		}
		if j >= 11 && atFold(s, j-11, "key content") && (j == 11 || !is(s[j-12], word)) {
			v := i + 1
			for v < len(s) && v-i < 8 && s[v] == ' ' {
				v++
			}
			e := v
			for e < len(s) && e-v < 64 && s[e] != '\n' && s[e] != '\r' && s[e] != '"' && !(s[e] == '\\' && e+1 < len(s) && (s[e+1] == 'n' || s[e+1] == 'r' || s[e+1] == '"')) {
				e++
			}
			for e > v && s[e-1] == ' ' {
				e--
			}
			if v >= from && e-v >= 8 && cmdValue(s[v:e]) && !holdsMask(s[v:e]) {
				return Match{v, e, KindKeyValue}, true
			}
		}
	case is(c, cLower|cDigit|cUnder):
		if m, ok := chpasswdLine(s, from, i); ok {
			return m, true
		}
		if c == 'e' || c == 't' || c == 'n' {
			return generatedPassword(s, from, i) // "New value:", "root@localhost:", "to installation:"
		}
	}
	return Match{}, false
}

// argAfter is the argument that starts at s[v] (bare, to white space or a
// quote; or quoted), as a credential.
func argAfter(s []byte, from, v int) (Match, bool) {
	if v < from || v >= len(s) {
		return Match{}, false
	}
	var q byte
	if s[v] == '"' || s[v] == '\'' {
		q, v = s[v], v+1
	}
	e := v
	for e < len(s) && e-v < 256 && s[e] != '\n' && s[e] != '\r' && s[e] != '\\' && (q != 0 && s[e] != q || q == 0 && s[e] != ' ' && s[e] != '\t' && s[e] != '"' && s[e] != '\'') {
		e++
	}
	if e-v < 4 || !cmdValue(s[v:e]) || holdsMask(s[v:e]) {
		return Match{}, false
	}
	return Match{v, e, KindKeyValue}, true
}

// chpasswdLine matches the password of a "user:password" line fed to
// chpasswd, whose ':' is s[i]: on the line of an "echo '<user>:<pw>' |
// [sudo] chpasswd", or the line after "chpasswd <<EOF".
func chpasswdLine(s []byte, from, i int) (Match, bool) {
	u := i - 1
	for u > 0 && i-u < 32 && is(s[u-1], cLower|cDigit|cUnder|cDash) && !escLetter(s, u-1) {
		u--
	}
	if !is(s[u], cLower|cUnder) || i+1 >= len(s) || u > 0 && s[u-1] != '\'' && s[u-1] != '"' && s[u-1] != ' ' && s[u-1] != '\n' && !escLetter(s, u-1) {
		return Match{}, false // (the user starts a line or a quoted or echoed word)
	}
	v := i + 1
	e := v
	for hi := min(len(s), v+128); e < hi && !chpasswdEndT[s[e]]; e++ {
	}
	if e-v < 4 || v < from || !cmdValue(s[v:e]) || holdsMask(s[v:e]) {
		return Match{}, false
	}
	ok := false
	switch {
	case u == 0 || s[u-1] == '\'' || s[u-1] == '"' || s[u-1] == ' ':
		// echo 'bob:<pw>' | chpasswd
		p := e
		if p < len(s) && (s[p] == '\'' || s[p] == '"') {
			p++
		} else if at(s, p, `\"`) {
			p += 2
		}
		for p < len(s) && s[p] == ' ' {
			p++
		}
		if p < len(s) && s[p] == '|' {
			k := p + 1
			for k < len(s) && k-p < 64 && s[k] != '\n' && s[k] != '|' && s[k] != ';' {
				if s[k] == 'c' && at(s, k, "chpasswd") {
					ok = true
					break
				}
				k++
			}
		}
	case s[u-1] == '\n' || escLetter(s, u-1) && s[u-1] == 'n':
		// chpasswd <<EOF, then the line.
		b := u - 1
		if s[u-1] == 'n' {
			b = u - 2
		}
		ok = lineHolds(s, 0, b, "chpasswd")
	}
	if !ok {
		return Match{}, false
	}
	return Match{v, e, KindKeyValue}, true
}

// chpasswdEndT marks the bytes that end a chpasswd line's password: white
// space, a quote, a backslash.
var chpasswdEndT = func() (t [256]bool) {
	for _, c := range []byte(" \t\n\r'\"\\") {
		t[c] = true
	}
	return t
}()

// ppkPrivate matches the private lines of a PuTTY key file (.ppk) whose
// "Private-Lines:" ':' is s[i]: the count's lines after it, base64, as a
// private key (up to the text's end when it ends inside them).
func ppkPrivate(s []byte, from, i int) (Match, bool) {
	p := i + 1
	if p < len(s) && s[p] == ' ' {
		p++
	}
	ne := run(s, p, cDigit)
	if ne == p || ne-p > 3 {
		return Match{}, false
	}
	n := 0
	for _, c := range s[p:ne] {
		n = n*10 + int(c-'0')
	}
	st := ne + lineEndAt(s, ne)
	if st == ne || st < from || st >= len(s) || n == 0 {
		return Match{}, false
	}
	e := st
	for k := 0; k < n && e < len(s); k++ {
		x := run(s, e, b64alpha)
		for x < len(s) && s[x] == '=' {
			x++
		}
		if x == e {
			break
		}
		e = x
		if k+1 < n {
			l := lineEndAt(s, e)
			if l == 0 || !is(s[min(e+l, len(s)-1)], b64alpha) {
				break
			}
			e += l
		}
	}
	if e-st < 16 {
		return Match{}, false
	}
	return Match{st, e, KindPrivateKey}, true
}

// echoStdinEncoded is echoStdin URL-encoded ("echo+<pw>+%7C+sudo+-S+…",
// '+' or "%20" a space, "%27"/"%22" quotes), whose '-' is s[i].
func echoStdinEncoded(s []byte, from, i int) (Match, bool) {
	p := i
	for p-3 >= from && i-p < 256 && !atFold(s, p-3, "%7c") && s[p-1] != '&' && s[p-1] != '=' && !atFold(s, p-3, "%0a") && !atFold(s, p-3, "%3b") {
		p--
	}
	if p-3 < from || !atFold(s, p-3, "%7c") {
		return Match{}, false
	}
	e := p - 3
	for e > from && s[e-1] == '+' {
		e--
	}
	b := -1
	for q := e - 5; q >= from && e-q < 256 && s[q] != '&' && s[q] != '='; q-- {
		if atFold(s, q, "echo+") && (q == from || s[q-1] == '+' || s[q-1] == '=' || s[q-1] == '%' || q >= 3 && atFold(s, q-3, "%22")) {
			b = q
			break
		}
	}
	if b < 0 {
		return Match{}, false
	}
	args, na := lastArgs(b+5, e, func(p int) int {
		if s[p] == '+' {
			return 1
		}
		return 0
	})
	if na == 0 {
		return Match{}, false
	}
	a := args[na-1]
	if na >= 2 && s[args[na-2][0]] != '-' || a[1]-a[0] < 2 {
		return Match{}, false // more than one word: prose
	}
	if a[1]-a[0] > 6 && (atFold(s, a[0], "%27") || atFold(s, a[0], "%22")) && atFold(s, a[1]-3, string(s[a[0]:a[0]+3])) {
		a = [2]int{a[0] + 3, a[1] - 3}
	}
	if s[a[0]] == '-' || atFold(s, a[0], "%24") || atFold(s, a[0], "%60") || isMask(s, a[0]) || a[0] < from {
		return Match{}, false
	}
	return Match{a[0], a[1], KindKeyValue}, true
}

// cmdFormBack and cmdFormWin bound the URL-encoded text cmdArgForm decodes:
// from cmdFormBack bytes before the value's run to its end (at most
// cmdFormWin-cmdFormBack-8 bytes after the run's start; cmdArgAt asks
// cmdMay of that text before it).
const (
	cmdFormBack = 256
	cmdFormWin  = cmdFormBack + 384
)

// cmdArgForm looks for cmdArg's and colonArg's values in the run s[va:ve]
// of URL-encoded text ("state=127.0.0.1%3A6379%3E+auth+<pw>"), decoded
// ('+' a space, "%XX" its byte, a raw '&', '=' or '?' a line end) with
// what comes before it: the first one
// at or after from, in s's coordinates.
func cmdArgForm(s []byte, from, va, ve int) (Match, bool) {
	var buf [cmdFormWin]byte
	var pos [cmdFormWin + 1]int32
	ve0 := ve // a value found starts in the run cmdArg judged
	for ve < len(s) && ve-va < cmdFormWin-cmdFormBack-8 && !proseEndT[s[ve]] {
		ve++ // (and may run on past it)
	}
	n := 0
	for p := max(0, va-cmdFormBack); p < ve && n < len(buf); {
		pos[n] = int32(p)
		switch c := s[p]; {
		case c == '+':
			buf[n], p = ' ', p+1
		case c == '&' || c == '=' || c == '?':
			buf[n], p = '\n', p+1 // (a pair's bounds: the value is a text of its own)
		case c == '%' && p+2 < len(s) && hexVal(s[p+1]) >= 0 && hexVal(s[p+2]) >= 0:
			buf[n], p = byte(hexVal(s[p+1])<<4|hexVal(s[p+2])), p+3
		default:
			buf[n], p = c, p+1
		}
		n++
	}
	if n == len(buf) {
		return Match{}, false
	}
	pos[n] = int32(ve)
	d := buf[:n]
	done := 0
	var prose proseState
	for k := 0; k < n; k++ {
		if formShapeT[d[k]] {
			if m, ok := formShapes(d, k); ok && int(pos[m.Start]) >= from && int(pos[m.Start]) >= va && int(pos[m.Start]) < ve0 {
				return Match{int(pos[m.Start]), int(pos[m.End]), m.Kind}, true
			}
		}
		var m Match
		var ok bool
		switch c := d[k]; {
		case c >= '0' && c <= '9' && (k >= done || k >= prose.done && k >= 5):
			if k >= done {
				m, ok, done = cmdArgAt(d, 0, k, false)
			}
			if !ok && k >= prose.done && k >= 5 {
				// Prose whose spaces were encoded: "the%20password%20is%20<pw>",
				// "the%2Bpassword%2Bis%2B<pw>" (a '+'-encoded text encoded
				// again), "the password is <pw>" or "the+password+is+<pw>" here.
				m, ok = proseValue(d, 0, k, &prose)
			}
		case c == ':' && int(pos[k]) >= va:
			m, ok = colonArg(d, 0, k)
		default:
			continue
		}
		if ok && int(pos[m.Start]) >= from && int(pos[m.Start]) >= va && int(pos[m.Start]) < ve0 {
			return Match{int(pos[m.Start]), int(pos[m.End]), m.Kind}, true
		}
	}
	return Match{}, false
}
