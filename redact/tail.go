package redact

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// MayStartCredential reports whether the end of a text (tail: a stream's
// last delta, or its last few hundred bytes) may hold the start of a
// credential that the stream's next text completes, so that a caller
// keeps the tail for Straddle only then: most deltas end in prose and
// keep nothing. It is true when
//
//   - the last tailWindow bytes hold a token needle (a token prefix, "://",
//     an encoded token prefix): a token in progress;
//   - they hold a credential key word or scheme (password, token, auth,
//     Bearer…; not the words of personal data) and a value after them
//     would be a credential (probed: "tokens" | "=x" is none, "token" |
//     "=x" is one): a key or scheme whose value comes next, or a value in
//     progress;
//   - they hold a credential key word and a "name" or "key" pair: a
//     "value" pair it names may come next ("name: DB_PASSWORD" |
//     "value: …");
//   - the tail holds "-----" (inside a PEM block, whose header may be further
//     back);
//   - the last word, from its start, from a '-', '_', ':' or '/' in it or
//     from a letter after a digit,
//     is a proper prefix of a token prefix ("s", "gh", "AKI", "xox",
//     "hvs", "nats:/"; exact case) or of a credential key word or scheme of three
//     letters or more ("pas", "Bea", "tok"; any case): a needle cut in two;
//   - the last word holds a ':' after a letter or digit ("bus:", "bus:pw"),
//     or the tail ends inside the host or port after its '@'
//     ("bus:pw@kafka-1:90"): a broker address with credentials and no
//     scheme in progress;
//   - the last word is "user/pass…" with a digit or capital after the
//     '/' (oracleUserStart): an Oracle connect string before its '@';
//   - the last word holds "%3A", "%2F" or "%40" after a letter or digit
//     (encodedSepStart): a URL-encoded userinfo, .pgpass line or Oracle
//     connect string in progress;
//   - the last word looks like a token or base64 (a digit or an inner
//     capital) and is tailLongWord bytes or longer, or ends with a proper
//     prefix of an encoded token prefix;
//   - the tail ends in "user <name> /" (and a start of "pass"), in a
//     label beyond English and a start of its copula ("das Passwort i",
//     "la contraseña es"), in such a label and its separator ("пароль: "),
//     inside such a label (four bytes or more, also in Cyrillic text with
//     no ASCII: "паро") or inside "password for <who>:"
//     (loginTailStart, labelTailStart);
//   - the last word is a login's name after its key ("user admin",
//     "Login: admin"), "<auth-user-pass>" cut after its fifth byte, "op
//     read" cut after its 'r' (up to "op read op:/"), or French's "mot"
//     after a determiner ("le mot") (wordTailStart).
//
// Not seen: a key word cut in its first two letters ("to|ken="; but
// "pa" | "ssword…" and "au" | "thorization…" are, the two letters a word
// of their own) or inside a longer word ("the|yJ…", a JWT glued to a
// word). It does not allocate.
//
// Every case above needs a printable ASCII byte (0x21-0x7E) in the tail:
// a tail without one (CJK text, white space; most deltas of a model that
// writes no Latin script) is passed over eight bytes at a time, and only
// its end is looked at: a CJK label, or a label and its separator
// (cjkTailStart).
func MayStartCredential[T Text](tail T) bool {
	b := view(tail)
	if !hasPrintableASCII(b) {
		// (A Cyrillic label cut in two, "паро" | "ль: <pw>".)
		return cjkTailStart(b) || len(b) >= 4 && (b[len(b)-1]&0xfe == 0xd0 || b[len(b)-2]&0xfe == 0xd0) && labelTailStart(b) || foreignSepTailStart(b)
	}
	return mayStartCredential(b) || cjkTailStart(b) || escCJKTailStart(b) || labelTailStart(b) || foreignSepTailStart(b) || derTail(b)
}

// foreignSepTailStart reports a tail that ends, before up to one space,
// where proseValue's foreignSepKey shapes take their value or may: after
// a label beyond English (or "senha") and a dash ("пароль — ", "пароль
// -"), Portuguese's "é" ("a senha é ") or Italian's "è" after "password"
// ("la password è "), after such a label and a space
// (its dash next: "пароль " | "— <pw>"), or after "contraseña" and a
// start of its copula in capitals ("CONTRASEÑA E" | "S <pw>";
// loginTailStart reads the lower case).
func foreignSepTailStart(b []byte) bool {
	e := len(b)
	if e > 0 && b[e-1] == ' ' {
		e--
	}
	if e < 6 {
		return false
	}
	c := b[e-1]
	if c == '-' || c == 0x94 || c == 0x93 || c == 0xa9 || c == 0x89 || c == 0xa8 || c == 0x88 {
		_, ok := foreignSepKey(b, 0, e)
		return ok
	}
	if c|0x20 == 'e' || c|0x20 == 's' {
		p := e - 2 // the space before the copula: "… E", "… ES"
		if c|0x20 == 's' {
			p--
		}
		if p > 2 && b[p] == ' ' && (c|0x20 == 'e' || b[e-2]|0x20 == 'e') && foreignCopulaKey(b, 0, p-1, p, ' ') {
			return true
		}
	}
	if e < len(b) && (c >= 0x80 || is(c, cUpper|cLower)) {
		// A label and a space: "пароль ", "senha ", "hasło ".
		if k := e - 5; eqFold(b[k:e], "senha") && wordStart(b, k) {
			return true
		}
		_, ok := foreignLabel(b, 0, e)
		return ok
	}
	return false
}

// escLabelMayFollow reports whether an escape of a CJK label's first
// character, or of a separator after an ASCII key, may start at the
// backslash b[k] (the tail's last one or two bytes): at the text's
// start, after a byte that is no letter or digit, after an escape
// ("\u6570\u636e\u5e93\" | "u5bc6…", a label inside a longer word), an
// escaped line end ("\n\" | "u5bc6…") or a credential key.
func escLabelMayFollow(b []byte, k int) bool {
	if k == 0 || !is(b[k-1], alnum) {
		return true
	}
	// After an escape, an escaped line end, or a credential key whose
	// separator may be an escape ("API Key\" | "uff1a<v>", "api_key\" |
	// "u4e3a\uff1a<v>", "password\" | "u662f<pw>").
	return k >= 6 && b[k-6] == '\\' && b[k-5] == 'u' || escLetter(b, k-1) || asciiCredKey(b, 0, k)
}

// escCJKTailStart reports a tail that ends inside a CJK label or its
// separator spelled as \uXXXX escapes (JSON text written by Python's
// json.dumps, held in a string): its last escapes, the last one whole or
// cut ("\u5bc6\u78" | "01\uff1a<pw>", "\u7801\" | "uff1a<pw>"), hold a
// character of a label or a separator (escCJKPair reads the pair in the
// text joined).
func escCJKTailStart(b []byte) bool {
	e := len(b)
	if e < 6 || b[e-1] != '\\' && b[e-2] != '\\' && b[e-3] != '\\' && b[e-4] != '\\' && b[e-5] != '\\' && b[e-6] != '\\' {
		return false
	}
	// A cut escape at the end: "\", "\u", "\u7", "\u78", "\u780".
	for k := e - 1; k >= e-5; k-- {
		if b[k] != '\\' {
			continue
		}
		cut := true
		var h [3]byte
		for j := k + 1; j < e; j++ {
			if j == k+1 && b[j] != 'u' || j > k+1 && hexVal(b[j]) < 0 {
				cut = false
			} else if j > k+1 {
				h[j-k-2] = lower(b[j])
			}
		}
		if !cut {
			break
		}
		if d := e - k - 2; d > 0 && cjkTailHex[string(h[:d])] {
			return true // the first digits of a label's character ("\u5b" | "c6…")
		} else if d <= 0 {
			// "\" or "\u": the next character is cut ("\" | "u5bc6\u7801：…"),
			// where a label may start: after a quote, a separator, white
			// space or another escape. After a word's letter or digit
			// ("C:\Users\bob\", JSON text cut inside "\n": "foo\" | "nbar")
			// none does, and the live view masked the delta's last word.
			return escLabelMayFollow(b, k)
		}
		e = k
		break
	}
	for n := 0; n < 8 && e >= 6 && b[e-6] == '\\' && b[e-5] == 'u'; n++ {
		r, _, ok := escRuneAt(b, e-5)
		if !ok {
			return false
		}
		if cjkTailRune[r] {
			return true
		}
		e -= 6
	}
	return false
}

// cjkTailRune marks the characters of cjkLabels and the separators after
// one (escSep); cjkTailHex the first one to three hex digits of their
// escapes (lower case).
var cjkTailRune, cjkTailHex = func() (map[rune]bool, map[string]bool) {
	m := map[rune]bool{'：': true, '＝': true, '是': true, '为': true, '為': true, 'は': true}
	for _, l := range cjkRunes {
		for _, r := range l {
			m[r] = true
		}
	}
	h := map[string]bool{}
	for r := range m {
		x := fmt.Sprintf("%04x", r)
		for n := 1; n < 4; n++ {
			h[x[:n]] = true
		}
	}
	return m, h
}()

// cjkTailStart reports a tail that ends in a CJK label, or in a label and
// its separator ("数据库密码：" | "<pw>"): the
// next text may hold its value (cjk.go). It looks at the tail's last
// bytes only.
func cjkTailStart(b []byte) bool {
	e := len(b)
	for e > 0 && (b[e-1] == ' ' || b[e-1] == '\t' || b[e-1] == '\n') {
		e--
	}
	if e < 6 {
		return false
	}
	switch c := b[e-1]; {
	case cjkLabelLast[c]:
		return cjkLabelAt(b, 0, e)
	case c != 0x9A && c != 0x9D && c != 0xAF && c != 0xBA && c != ':' && c != '=': // no separator's last byte
		return false
	}
	// A separator's anchor: the full-width one's first byte, a copula's
	// last.
	return e >= 3 && b[e-3] == 0xEF && cjkKeyed(b, e-3) || cjkKeyed(b, e-1)
}

// oracleUserStart reports a last word "user/pass…" of b (one '/', the
// user a word that starts with a letter, after white space, a quote or
// '=', and three bytes or more after the '/', a digit or a capital among
// them), also with the '@' after it ("user/pass@", "user/pass@/"): an
// Oracle connect string's user and password before its host
// ("scott/Tig3r" | "Pass@//db…", "scott/Tig3rPass@" | "//db…"). A path's
// last segment with a digit or a capital ("pkg/Http2") passes too.
func oracleUserStart(b []byte) bool {
	e := len(b)
	switch {
	case e >= 2 && b[e-2] == '@' && b[e-1] == '/':
		e -= 2
	case e >= 1 && b[e-1] == '@':
		e--
	}
	k := e
	for k > 0 && e-k < 64 && b[k-1] != '/' {
		if !is(b[k-1], word) {
			return false
		}
		k--
	}
	if k == 0 || e-k < 3 {
		return false
	}
	w := k - 1 // the '/'
	for w > 0 && k-1-w < 64 && is(b[w-1], word) {
		w--
	}
	if w == k-1 || !is(b[w], cUpper|cLower) || w > 0 && !(b[w-1] == ' ' || b[w-1] == '\t' || b[w-1] == '\n' || b[w-1] == '"' || b[w-1] == '\'' || b[w-1] == '=') {
		return false
	}
	for _, c := range b[k:e] {
		if is(c, cDigit|cUpper) {
			return true
		}
	}
	return false
}

// encodedSepStart reports an encoded ':', '/' or '@' ("%3A", "%2F",
// "%40") after a letter or digit in the last word of b (up to white
// space, a quote, '&' or '+'): a URL-encoded userinfo, .pgpass line or
// Oracle connect string in progress ("dsn=scott%2Fpw%40%2F%" |
// "2Fdb…", "localhost%3A5432%3Adb%3Aapp%3Apw" | "9Xq").
func encodedSepStart(b []byte) bool {
	for i := len(b) - 3; i >= 1 && len(b)-i < tailWindow; i-- {
		switch b[i] {
		case ' ', '\t', '\n', '\r', '"', '\'', '&', '+':
			return false
		case '%':
			if (atFold(b, i, "%3a") || atFold(b, i, "%2f") || atFold(b, i, "%40")) && is(b[i-1], alnum) {
				return true
			}
		}
	}
	return false
}

// hasPrintableASCII reports a byte 0x21-0x7E in b.
func hasPrintableASCII(b []byte) bool {
	for i := 0; i < len(b); {
		if i+8 <= len(b) && binary.LittleEndian.Uint64(b[i:])&highBits == highBits {
			i += 8
			continue
		}
		if b[i]-0x21 < 0x7f-0x21 {
			return true
		}
		i++
	}
	return false
}

// mayStartCredential is MayStartCredential past its pre-check.
func mayStartCredential(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if is(b[len(b)-1], word) && longTokenTail(b) {
		return true // (the cheapest case first: a base64 run's tail)
	}
	win := b[max(0, len(b)-tailWindow):]
	if anyWord(tokenTable, win) || HasPEMDash(b) {
		return true
	}
	if anyWord(keyTable, win) && (mayProbe(win) && probed(win) || namesEntry(win) || passinEnds(win) || phpDumpTail(win) || proseWordTail(win)) {
		return true
	}
	if digitTokenStart(b) || userinfoHostStart(b) || encodedSepStart(b) || oracleUserStart(b) || pgpassHostStart(b) || shapeTailStart(b) || passwdTailStart(b) ||
		twilioTailStart(b) || pctCJKTailStart(b) || loginTailStart(b) || wordTailStart(b) {
		return true
	}
	w := len(b)
	for w > 0 && len(b)-w < maxNeedle && (is(b[w-1], word) || b[w-1] == ':' || b[w-1] == '/') {
		w--
	}
	if w == len(b) {
		return false
	}
	last := b[w:]
	if len(last) == 2 && (eqFold(last, "pa") || eqFold(last, "au")) && (w == 0 || isTailSpace(b[w-1]) || b[w-1] == '"' || b[w-1] == '\'') {
		// "Pa" | "ssword for bob: <pw>", "Au" | "thorization: Token …":
		// the two letters a word of its own (rare in prose, unlike "to"
		// of "to" | "ken=", which is not kept).
		return true
	}
	for k := 1; k < len(last); k++ {
		if last[k] == ':' && is(last[k-1], word) && (k+1 == len(last) || last[k+1] != '/') {
			// "user:" or "user:pass…": the userinfo of a broker address
			// with no scheme ("user:password@host:9092") in progress.
			return true
		}
	}

	var low [maxNeedle]byte
	for k, c := range last {
		low[k] = lower(c)
	}
	tokenish := false
	for k, c := range last {
		if is(c, cDigit) || k > 0 && is(c, cUpper) {
			tokenish = true
		}
	}
	// (A long tokenish last word: longTokenTail, first.)
	for k := range last {
		if tokenish && b64Prefixes[string(last[k:])] {
			return true
		}
		if k > 0 && !isNeedlePunct(last[k-1]) && !isNeedlePunct(last[k]) && !(is(last[k-1], cDigit) && is(last[k], cUpper|cLower)) {
			continue // (a digit before a letter ends a word: "1pass", classifyWords)
		}
		if tokenPrefixStarts[string(last[k:])] || len(last)-k >= 3 && keyPrefixes[string(low[k:len(last)])] {
			return true
		}
	}
	return false
}

// proseWordTail reports a tail that ends inside a word after "password
// is ", "passwd was ", "pwd is " (prosePassword's and prosePwd's value,
// which a word of letters may be: "the pwd is correc" | "thorsebattery.").
// The probes, no word of letters, do not complete it. (After "passphrase
// is " a word is not masked at all: no anchor byte reveals it.)
func proseWordTail(win []byte) bool {
	e := len(win)
	k := e
	for k > 0 && e-k < 64 && is(win[k-1], cUpper|cLower) {
		k--
	}
	if k > 0 && k < e && (win[k-1] == '\'' || win[k-1] == '"' || win[k-1] == '`') {
		k-- // "the password is 'correc" | "thorse'"
	}
	if k == e || k < 5 || win[k-1] != ' ' {
		return false
	}
	c := k - 1 // the copula's end
	switch {
	case atFold(win, c-2, "is") && win[c-3] == ' ':
		c -= 3
	case c >= 4 && atFold(win, c-3, "was") && win[c-4] == ' ':
		c -= 4
	default:
		return false
	}
	w := c
	for w > 0 && c-w < 10 && is(win[w-1], cUpper|cLower) {
		w--
	}
	return wordStart(win, w) && eqFoldAny(win[w:c], "password", "passwd", "pwd")
}

// longTokenTail reports whether the last word of b (its last maxNeedle
// bytes at most, as mayStartCredential takes it) is word bytes only,
// tailLongWord or longer, and looks like a token or base64: a digit, or a
// capital after its first byte. Such a tail may start a credential
// whatever comes before it, and it is the tail of every delta of a base64
// run streamed across deltas, which the other checks (five probes of a
// key word such a run holds by chance: "pat", "Key", "SIG") cost many
// times more.
func longTokenTail(b []byte) bool {
	w := len(b)
	for w > 0 && len(b)-w < maxNeedle && (is(b[w-1], word) || b[w-1] == ':' || b[w-1] == '/') {
		w--
	}
	last := b[w:]
	if len(last) < tailLongWord || run(last, 0, word) != len(last) {
		return false
	}
	for k, c := range last {
		if is(c, cDigit) || k > 0 && is(c, cUpper) {
			return true
		}
	}
	return false
}

const (
	tailWindow   = 64 // a key's value starts within it
	tailLongWord = 12
	maxNeedle    = 24 // bounds the needles' lengths (the longest, an encoded "-----BEGIN ", is 16)
)

// credWords are the key words and schemes of credentials (specialWords
// without those of personal data).
var credWords = append([]string{"pass", "pw", "psk", "secret", "sig", "token", "auth", "key", "cookie", "cred", "bearer", "basic", "ref", "pat", "honeycomb"},
	passWordsForeign...)

// keyWordsWhole are credential key words that hold one of credWords: a
// tail ending in a proper prefix of one ("pass", "Authorizatio") may be a
// key cut in two.
var keyWordsWhole = []string{"password", "passwd", "passphrase", "requirepass", "identified", "rabbitmqctl", "authorization", "authorisation", "credential",
	"credentials", "apikey", "privatekey", "accesskey", "secretkey", "signingkey", "sessionkey",
	"api_key", "private_key", "access_key", "secret_key", "signing_key", "session_key", "account_key",
	// libpq's env, glued: a tail cut in it ("export PGPAS" | "SWORD=…") is kept
	"pgpassword",
	// PagerDuty's integration key ("routing_" | "key: <32 hex>")
	"routing_key", "routingkey", "integration_key", "integrationkey"}

// tokenTable finds the needles that start or hold a token (credNeedles but
// the schemes, and the encoded token prefixes); keyTable the key words.
// (They are in tables_gen.go.)

// probes are what the next text could start with: a separator and a
// value, or more of a value in progress. Letters only, long enough for a
// scheme's token: no digit sends the scan into the random-token checks.
var probes = []string{"=AbCdEfGhIjKlMnOpQrStUv", " AbCdEfGhIjKlMnOpQrStUv", "AbCdEfGhIjKlMnOpQrStUv",
	"%3DAbCdEfGhIjKlMnOpQrStUv", "3DAbCdEfGhIjKlMnOpQrStUv"} // and URL-encoded: "password%" | "3D…"

const probeWindow = 72 // a key is at most 64 bytes

// probed reports whether one of the probes after the end of win makes a
// credential that Straddle reports (win's key or scheme applies to it).
//
// A probe whose joined text MayHoldCredentialText turns away makes no
// credential (Straddle reports a match of Find on the joined text, and
// the pre-check is false only where Find reports no credential from any
// start): a window whose key words are only parts of plain keys ("path"
// holds "pat", a tool's file path in a code block) costs five pre-checks
// instead of five searches, which made such deltas ~5× the cost of prose.
func probed(win []byte) bool { return probedWith(win, true) }

// probedWith is probed, with the pre-check or (the tests' reference)
// without.
func probedWith(win []byte, precheck bool) bool {
	var buf [probeWindow + 32]byte
	win = win[max(0, len(win)-probeWindow):]
	for _, p := range probes {
		if precheck && !MayHoldCredentialText(append(append(buf[:0], win...), p...)) {
			continue
		}
		if _, m, ok := Straddle(buf[:0], win, []byte(p)); ok && m.Kind.Credential() {
			return true
		}
	}
	return false
}

// mayProbe is an exact gate of probed: false only where no probe can
// complete a credential, so that the three Straddles are run only for a
// tail that ends in a key, a separator, a quote or inside a word. It is
// false when win ends in white space or a closing '}' or ']' (a tool's
// JSON result, a code block), holds no separator (':', '=', or
// '%', which starts a URL-encoded one: "token%3D") whose key may be
// credential-named, nor one that may start a URL, a broker's userinfo or
// a .pgpass line, and the word before that white space (and a closing
// quote) holds no key word (nor, where that word is "is" or "was", the
// word before it: "the password is " | "x1…", proseValue). Then no
// credential crosses the end of win + probe (a '}' or ']' is white space
// here, but for the value of a key word and white space: no key, token,
// run or value of a scheme holds one, and the probe's '=' after one has
// no key):
//
//   - sep: a separator of win has a key keyValue calls plain (under every
//     suffix: keyBefore, namedBefore), and the probe's '=' takes as
//     its key the word run before at most three spaces and a closing
//     quote, which holds no key word (a credential-named key holds one of
//     credWords, as classifyWords' classes do: pass, pwd, secret, sig,
//     token, auth, key, cookie, cred, bearer);
//   - scheme: a "Bearer"/"Basic" in win with a token that reaches the end
//     of win would be that last word; its token is a b64token run, which
//     white space ends;
//   - token shapes, base64 runs, PEM (hasPEMDash, checked before): their
//     runs hold no white space, so one from win ends before the probe; the
//     probes start no token or run of their own (probe bytes are letters,
//     ' ' and '=', no digit, no 'J', '-' or '_', and no "bearer"/"basic").
//
// TestMayProbeExact compares it with probed over every cut of the
// detector's shapes and over fuzzed text (FuzzMayProbe).
func mayProbe(win []byte) bool {
	n := len(win)
	if n == 0 || !isTailEnd(win[n-1]) {
		return true
	}
	// The separators are gone to with IndexByte (the answer is an or over
	// them, in any order): a window's bytes one by one cost more than the
	// checks of its few separators.
	if bytes.IndexByte(win, '%') >= 0 {
		return true
	}
	hasAt := 0 // 0: not looked for yet, 1: no '@' in win, 2: one at least
	for i := bytes.IndexByte(win, '='); i >= 0; i = nextByte(win, i, '=') {
		if keyBefore(win, i) || namedBefore(win, i) || afterMultiByte(win, 0, i) && cjkKeyed(win, i) {
			return true
		}
	}
	// A CJK label's separator (cjk.go): the full-width '：', '＝' and the
	// copulas, found at their anchor bytes.
	for _, c := range [...]byte{0xEF, 0xAF, 0xBA} {
		for i := bytes.IndexByte(win, c); i >= 0; i = nextByte(win, i, c) {
			if cjkKeyed(win, i) {
				return true
			}
		}
	}
	for i := bytes.IndexByte(win, ':'); i >= 0; i = nextByte(win, i, ':') {
		// A separator in win whose value runs on into the probe: only
		// one whose key may credit a value as a credential (the
		// pre-check's gate of sep: keyBefore, namedBefore), or a URL,
		// a broker's userinfo or a .pgpass line it may be part of. A
		// plain key's ("path": "C:\\tmp" in a code block) is none.
		if keyBefore(win, i) || namedBefore(win, i) || afterMultiByte(win, 0, i) && cjkKeyed(win, i) {
			return true
		}
		if hasAt == 0 {
			hasAt = 1
			if bytes.IndexByte(win, '@') >= 0 {
				hasAt = 2
			}
		}
		if hasAt == 2 || at(win, i+1, "//") || at(win, i+1, `\/\/`) || mayPgpass(win, i) {
			return true
		}
	}
	if !isTailSpace(win[n-1]) {
		// A '}' or ']' ends no value of a key word and white space or
		// '+' ("password \"}" | "%3D…" is a value, as are
		// "passphrase+5}" and "passwd 0+}" | "%3D…"): the word before the
		// last white space, and before each '+' after it, is judged too.
		w := bytes.LastIndexAny(win, " \t\n\r")
		for p := n - 1; p > w; p-- {
			if win[p] == '+' && keyWordEnds(win[:p+1]) {
				return true
			}
		}
		if w >= 0 && keyWordEnds(win[:w+1]) {
			return true
		}
	}
	return keyWordEnds(win) || stmtProbeStart(win) || cmdProbeStart(win) || cjkLabelEnds(win)
}

// cjkLabelEnds reports whether win ends in a CJK label (past white space
// and closers): its separator and value may come next.
func cjkLabelEnds(win []byte) bool {
	e := len(win)
	for e > 0 && isTailEnd(win[e-1]) {
		e--
	}
	return cjkLabelAt(win, 0, e)
}

// cmdProbeStart is mayProbe's look at the commands of command.go: a probe
// after win is cmdArg's value (or the rest of one that win's last word
// starts: "auth 5 5}" | "x1…") only where the white space before it
// follows the words that name it ("auth ", "auth default ", "wandb
// login ").
func cmdProbeStart(win []byte) bool {
	if e := bytes.LastIndexAny(win, " \t"); e > 0 && cmdWords(win, 0, e+1) {
		return true
	}
	enc := false
	for _, c := range win {
		if c == '+' || c == '%' || c == '&' || c == '=' || c == '?' {
			enc = true
			break
		}
	}
	if !enc {
		return false
	}
	// URL-encoded ("Auth+0+" | "x1…", or a probe's "%3D…" after "=Auth
	// 0 "): as cmdArgForm reads it, decoded.
	var buf [tailWindow]byte
	n := 0
	for p := max(0, len(win)-len(buf)); p < len(win); n++ {
		switch c := win[p]; {
		case c == '+':
			buf[n], p = ' ', p+1
		case c == '&' || c == '=' || c == '?':
			buf[n], p = '\n', p+1
		case c == '%' && p+2 < len(win) && hexVal(win[p+1]) >= 0 && hexVal(win[p+2]) >= 0:
			buf[n], p = byte(hexVal(win[p+1])<<4|hexVal(win[p+2])), p+3
		default:
			buf[n], p = c, p+1
		}
	}
	d := buf[:n]
	e := bytes.LastIndexAny(d, " \t")
	return e > 0 && cmdWords(d, 0, e+1)
}

// keyWordEnds is mayProbe's look at the end of win: the word before its
// white space, '+', closers and a closing quote (or, where that word is
// "is" or "was", the word before it) holds a key word, or win ends in
// "Bearer:".
func keyWordEnds(win []byte) bool {
	e := len(win)
	for e > 0 && (isTailEnd(win[e-1]) || win[e-1] == '+') { // '+': a space, URL-encoded ("Cookie+" | "%3D…")
		e--
	}
	if e >= 7 && win[e-1] == ':' && atFold(win, e-7, "bearer") {
		return true // "Bearer: " | "…": scheme takes a colon after Bearer
	}
	// A closing quote after the key, escaped or not (`"token" ` | "=…",
	// `\"token\" ` | "=…"): keyValue skips it.
	if e > 0 && (win[e-1] == '"' || win[e-1] == '\'') {
		e--
		for e > 0 && win[e-1] == '\\' {
			e--
		}
	}
	k := e
	for k > 0 && is(win[k-1], word|cKey) {
		k--
	}
	if (e-k == 2 && eqFold(win[k:e], "is") || e-k == 3 && eqFold(win[k:e], "was")) && k > 0 && win[k-1] == ' ' {
		// "the password is " | "x1…" (proseValue): the word before.
		e = k - 1
		for k = e; k > 0 && is(win[k-1], word|cKey); k-- {
		}
	}
	return anyWord(keyTable, win[k:e])
}

// namesEntry reports a "name" or "key" pair in win (which holds a key
// word): its value may name a credential whose "value" pair comes next
// (namedCredential: "- name: DB_PASSWORD\n  v" | "alue: …").
func namesEntry(win []byte) bool {
	for _, sep := range [2]byte{':', '='} {
		for i := 3; i < len(win); i++ {
			k := bytes.IndexByte(win[i:], sep)
			if k < 0 {
				break
			}
			i += k
			j := i
			for j > 0 && i-j < 3 && (win[j-1] == '"' || win[j-1] == '\'' || win[j-1] == ' ') {
				j--
			}
			if j >= 4 && eqFold(win[j-4:j], "name") || j >= 3 && eqFold(win[j-3:j], "key") {
				return true
			}
		}
	}
	return false
}

// nextByte is the index of the next c in win after i, or -1.
func nextByte(win []byte, i int, c byte) int {
	if k := bytes.IndexByte(win[i+1:], c); k >= 0 {
		return i + 1 + k
	}
	return -1
}

func isTailSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isTailEnd: white space, or a '}' or ']' that closes a JSON object or
// array (a tool's result ends in one, most often after a plain key's
// value: "total_tokens": 1234, "status": "ok"}).
func isTailEnd(c byte) bool { return isTailSpace(c) || c == '}' || c == ']' }

// tokenPrefixStarts and b64Prefixes (exact case) and keyPrefixes (lower
// case) are the proper prefixes of the token prefixes and "://", of the
// credential key words, and of the encoded token prefixes.
var tokenPrefixStarts, keyPrefixes, b64Prefixes = func() (t, k, e map[string]bool) {
	t, k, e = map[string]bool{}, map[string]bool{}, map[string]bool{}
	add := func(m map[string]bool, words []string) {
		for _, w := range words {
			if len(w) >= maxNeedle {
				panic("redact: needle " + w + " longer than maxNeedle")
			}
			for n := 1; n < len(w); n++ {
				m[w[:n]] = true
			}
		}
	}
	add(t, append(append(append([]string(nil), tokenPrefixes...), "://", "SG.", "dapi", "oauth:", "hvs.", "hvb.", "hvr."), vendorPrefixStrings()...))
	add(k, append(append([]string(nil), credWords...), keyWordsWhole...))
	add(e, encodedNeedles)
	return t, k, e
}()

func isNeedlePunct(c byte) bool { return c == '-' || c == '_' || c == ':' || c == '/' }

// HasPEMDash reports "-----" (a PEM block's header or END line) in b.
// Five '-' in a row hold one byte at an
// index 4 mod 5: only those bytes are looked at, and the run around a '-'
// among them is measured (a log line's UUIDs and dates hold many a '-',
// each of which sent it to IndexByte).
func HasPEMDash(b []byte) bool {
	for i := 4; i < len(b); i += 5 {
		if b[i] != '-' {
			continue
		}
		l := i
		for l > 0 && i-l < 4 && b[l-1] == '-' {
			l--
		}
		r := i + 1
		for r < len(b) && r-l < 5 && b[r] == '-' {
			r++
		}
		if r-l >= 5 {
			return true
		}
	}
	return false
}

// vendorPrefixStrings are the KindVendorToken prefixes through their first
// separator, as they are spelled.
func vendorPrefixStrings() (w []string) {
	for _, byLen := range vendorPrefixes {
		for _, vs := range byLen {
			for _, v := range vs {
				w = append(w, v.p[:v.sep+1])
			}
		}
	}
	return w
}

// pgpassHostStart reports a tail that ends inside or at the end of
// "localhost" at the start of a line or word ("…\nloc" | "alhost:5432:db:user:<pw>"): the
// next text's host alone is no host a .pgpass line is read at (pgpass), so
// the line is only seen joined. (A dotted host cut after its last dot,
// "db.example." | "com:5432:…", is not kept: every file name would be.)
func pgpassHostStart(b []byte) bool {
	w := len(b)
	for w > 0 && len(b)-w < 10 && is(b[w-1], cLower) {
		w--
	}
	n := len(b) - w
	return n >= 2 && n <= 9 && (w == 0 || !is(b[w-1], word) && b[w-1] != '.') && string(b[w:]) == "localhost"[:n]
}

// userinfoHostStart reports a tail that ends inside the host or port of a
// broker address with credentials and no scheme, past its '@'
// ("bus:pw@kafka-1", "bus:pw@kafka-1:90"; hostUserinfo): the rest of the
// address, in the next text, makes it one.
func userinfoHostStart(b []byte) bool {
	j := len(b)
	for j > 0 && len(b)-j < 5 && is(b[j-1], cDigit) {
		j--
	}
	if j > 0 && b[j-1] == ':' {
		j--
	}
	for j > 0 && len(b)-j < 256 && (is(b[j-1], alnum|cDash) || b[j-1] == '.') {
		j--
	}
	if j < 2 || b[j-1] != '@' {
		return false
	}
	for k := j - 2; k >= 0 && j-k < 256; k-- {
		switch c := b[k]; {
		case c <= ' ' || c == '"' || c == '\'' || c == ',' || c == '/' || c == '\\' || c == '<' || c == '>' || c == '@':
			return false
		case c == ':' && k < j-2:
			return true // any user: a kept tail only costs its bytes
		}
	}
	return false
}

// digitTokenStart reports a tail ending in the start of a token shape that
// digitToken or telegram finds: Twilio's SK/AC and hex, a Discord token's
// first segment (base64 of a decimal id) and what follows it, a Telegram
// bot id of 8 to 10 digits and its ':' or ":A", a Terraform Cloud token's
// 14 letters and digits and a start of its ".atlasv1." (a bot id cut in
// its first eight digits is not seen, nor a shape cut after its first
// byte, nor a Terraform Cloud token cut in its first 14).
func digitTokenStart(b []byte) bool {
	w := len(b)
	for w > 0 && len(b)-w < 80 && (is(b[w-1], word) || b[w-1] == '.' || b[w-1] == ':') {
		w--
	}
	last := b[w:]
	if len(last) < 2 {
		return false
	}
	if at(last, 0, "SK") || at(last, 0, "AC") {
		return hexRun(last, 2) == len(last) && len(last) < 34
	}
	if c0, c1 := last[0], last[1]; c0 >= 'M' && c0 <= 'O' && (c1 == 'D' || c1 == 'T' || c1 == 'j' || c1 == 'z') {
		seg := last[:run(last, 0, word)]
		return len(seg) <= 28 && discordID(seg[:len(seg)/4*4])
	}
	if a := run(last, 0, alnum); a == 14 && len(last) > 14 && last[14] == '.' {
		// A Terraform Cloud token cut in its ".atlasv1." ("…Mn.atl" |
		// "asv1.<core>"; from its last '.' on, tokenTable's needle).
		return len(last) < 14+len(".atlasv1.") && at([]byte(".atlasv1."), 0, string(last[14:]))
	}
	d := run(last, 0, cDigit)
	return d >= 8 && d <= 10 && (d == len(last) || last[d] == ':' && (d+1 == len(last) || d+2 == len(last) && last[d+1] == 'A'))
}
