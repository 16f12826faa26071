package redact

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// A user and its password written as a pair with a slash between them,
// the way a chat answer or a ticket gives a login: "Login: admin /
// <pw>", "user admin / pass <pw>". The login's key is no credential's
// name, so the key=value check passes over it; only the password after
// the slash is one. A breadcrumb or a path reads the same ("Login:
// Settings / Security"): the password is taken only where it holds a
// digit, and is a credential only where it reads as generated
// (strongValue), masked with no finding otherwise, as prose passwords.

// loginKey reports a login's key word in s[j:ke]: "login", "logon",
// "user", "username".
func loginKey(s []byte, j, ke int) bool {
	return ke-j >= 4 && ke-j <= 8 && wordStart(s, j) && eqFoldAny(s[j:ke], "login", "logon", "user", "username")
}

// loginPair matches the password of "Login: <user> / <pw>" at the ':'
// s[i] after a login's key (loginKey, ending right before it): <user> is
// one word of a user name's bytes (no '@': an e-mail address is a match
// of its own, found before), then " / " (slashSep: also escaped in JSON
// text and URL-encoded).
func loginPair(s []byte, from, i int) (Match, bool) {
	if i < 4 || s[i] != ':' {
		return Match{}, false
	}
	if l := s[i-1] | 0x20; l != 'n' && l != 'r' && l != 'e' {
		return Match{}, false // (most colons: a timestamp's, a URL's)
	}
	j := i
	for j > from && i-j < 8 && is(s[j-1], cUpper|cLower) && !escLetter(s, j-1) {
		j--
	}
	if !loginKey(s, j, i) {
		return Match{}, false
	}
	u := i + 1
	for u < len(s) && u-i < 4 && s[u] == ' ' {
		u++
	}
	if u == i+1 {
		return Match{}, false
	}
	ue := u
	for ue < len(s) && ue-u < 64 && (is(s[ue], word) || s[ue] == '.' || s[ue] == '-') {
		ue++
	}
	if ue == u || isMask(s, u) {
		return Match{}, false
	}
	sl := slashSep(s, ue)
	if sl == 0 {
		return Match{}, false
	}
	return slashPassword(s, ue+sl, sl == 5)
}

// slashPassword is the password at s[v] after a login's slash: to white
// space, a quote or (URL-encoded) a '+', '&' or line end, without a
// sentence's last punctuation. It holds a digit; a credential where it
// reads as generated.
func slashPassword(s []byte, v int, encoded bool) (Match, bool) {
	e := v
	digit := false
	for e < len(s) && e-v < 256 && s[e] > ' ' && s[e] < 0x7f && s[e] != '"' && s[e] != '\'' && s[e] != '\\' && s[e] != '`' &&
		!(encoded && (s[e] == '+' || s[e] == '&' || atFold(s, e, "%0a") || atFold(s, e, "%0d"))) {
		digit = digit || is(s[e], cDigit)
		e++
	}
	for e > v && (s[e-1] == '.' || s[e-1] == ',' || s[e-1] == ';' || s[e-1] == ')') {
		e--
	}
	if e-v < 6 || !digit || !is(s[v], alnum) || holdsMask(s[v:e]) || inFingerprint(s, v) || dateLike(s[v:e]) {
		return Match{}, false
	}
	if strongValue(s[v:e]) {
		return Match{v, e, KindKeyValue}, true
	}
	return Match{v, e, KindHighEntropy}, true
}

// dateLike reports a value that is a date, a time or a date-time
// ("2024-01-01", "01/02/2024", "10:30:00", "2024-01-01T10:00:00Z"), or
// an address or version of numbers ("10.0.0.1", "1.22.3"): runs of one
// to four digits (a fraction after '.' up to nine) between two
// separators or more of "-/:.", a 'T' between a date and a
// time, a 'Z' or an offset at the end. A breadcrumb's date ("User: root
// / 2024-01-01") is no password.
func dateLike(v []byte) bool {
	seps, run := 0, 0
	for i, c := range v {
		switch {
		case is(c, cDigit):
			run++
			if run > 4 && !(run <= 9 && i-run >= 0 && v[i-run] == '.') {
				return false
			}
			continue
		case c == '-' || c == '/' || c == ':' || c == '.':
			seps++
		case c == 'T' && run > 0 && i+1 < len(v) && is(v[i+1], cDigit):
		case c == 'Z' && i == len(v)-1 && run > 0:
		case c == '+' && run > 0 && i+1 < len(v):
		default:
			return false
		}
		if run == 0 && c != 'Z' {
			return false // two separators together, or one first
		}
		run = 0
	}
	return seps >= 2 && (run > 0 || v[len(v)-1] == 'Z')
}

// userSlashPass reports "user <name> / " (or "login", "username")
// before the word "pass" at s[k] (proseValue's key word, before its
// value): "user admin / pass <pw>", sp the space (' ', or '+'
// URL-encoded).
func userSlashPass(s []byte, lo, k int, sp byte) bool {
	var sl int
	switch {
	case sp == ' ' && k-3 > lo && at(s, k-3, " / "):
		sl = 3
	case sp == ' ' && k-4 > lo && at(s, k-4, ` \/ `):
		sl = 4
	case sp == '+' && k-5 > lo && atFold(s, k-5, "+%2f+"):
		sl = 5
	default:
		return false
	}
	ue := k - sl
	u := ue
	for u > lo && ue-u < 64 && (is(s[u-1], word) || s[u-1] == '.' || s[u-1] == '-') {
		u--
	}
	if u == ue || u-1 <= lo || s[u-1] != sp {
		return false
	}
	ke := u - 1
	if s[ke-1] == ':' {
		ke-- // "user: admin / pass <pw>"
	}
	j := ke
	for j > lo && ke-j < 8 && is(s[j-1], cUpper|cLower) && !escLetter(s, j-1) {
		j--
	}
	return loginKey(s, j, ke)
}

// pagerDutyName reports a key run that ends in PagerDuty's name for its
// integration key: "routing_key" (the Events API v2's field) or
// "integration_key", any case, with '_', '-' or nothing between the
// words ("routingKey", "ROUTING_KEY").
func pagerDutyName(k []byte) bool {
	n := len(k)
	if n < 10 || k[n-1]|0x20 != 'y' || !atFold(k, n-3, "key") {
		return false
	}
	w := n - 3
	if k[w-1] == '_' || k[w-1] == '-' {
		w--
	}
	for _, p := range [...]string{"routing", "integration"} {
		if b := w - len(p); b >= 0 && atFold(k, b, p) && (b == 0 || !is(k[b-1], cLower) || is(k[b], cUpper)) {
			return true
		}
	}
	return false
}

// PagerDutyKeyName reports whether k, a JSON object's key, is PagerDuty's
// name for its integration key ("routing_key", "integrationKey") where
// Find reads it as one (KeyNamedKey: "pagerduty_routing_key" is a
// credential's key already, "order_routing_key" a broker's): its value is
// a credential where PagerDutyKeyValue says so, as keyValue reads
// "routing_key: <value>" in text.
func PagerDutyKeyName[T Text](k T) bool {
	b := view(k)
	return pagerDutyName(b) && ClassifyKey(b) == KeyNamedKey
}

// PagerDutyKeyValue reports whether v, the value of a key PagerDutyKeyName
// accepts, has the shape of PagerDuty's integration key (32 hex digits, a
// digit and a letter among them); a message broker's routing key
// ("orders.created") has not.
func PagerDutyKeyValue[T Text](v T) bool { return pagerDutyValue(view(v)) }

// pagerDutyValue reports a value with the shape of PagerDuty's
// integration key: 32 hex digits, a digit and a letter among them.
func pagerDutyValue(v []byte) bool {
	if len(v) != 32 {
		return false
	}
	var seen uint8
	for _, c := range v {
		if hexVal(c) < 0 {
			return false
		}
		seen |= class[c] & (cDigit | cUpper | cLower)
	}
	return seen&cDigit != 0 && seen != cDigit
}

// pagerDutyAfter is keyBefore's look at the value after a PagerDuty
// key's separator s[i]: past spaces and quotes (also escaped), 32 hex
// digits and no more of a word.
func pagerDutyAfter(s []byte, i int) bool {
	v := i + 1
	for v < len(s) && v-i < 12 && (s[v] == ' ' || s[v] == '"' || s[v] == '\'' || s[v] == '\\' || s[v] == '+') {
		v++
	}
	e := v
	for e < len(s) && e-v <= 32 && is(s[e], alnum) {
		e++
	}
	return pagerDutyValue(s[v:e])
}

// namedLine reports a password that is a whole line, at s[va], named by
// the lines before it (the line end s[va-1]): the second line of an
// OpenVPN inline <auth-user-pass> block (its first the user), or the
// output of 1Password's "op read op://<vault>/<item>/<field>" on the line
// after the command, where the field names a credential.
func namedLine(s []byte, lo, va int) bool {
	p := va - 1 // the '\n'
	if p > lo && s[p-1] == '\r' {
		p--
	}
	q := p // the line before: s[q:p]
	for q > lo && p-q < 256 && s[q-1] != '\n' {
		q--
	}
	if q == p {
		return false
	}
	if q > lo && s[q-1] == '\n' {
		// <auth-user-pass>, then the user's line.
		b := q - 1
		if b > lo && s[b-1] == '\r' {
			b--
		}
		const tag = "<auth-user-pass>"
		if b-len(tag) >= lo && atFold(s, b-len(tag), tag) {
			for x := q; x < p; x++ {
				if s[x] == ' ' || s[x] == '<' {
					return false
				}
			}
			return true
		}
	}
	// op read [flags] op://vault/item[/section]/field (quoted or not).
	x := bytes.Index(s[q:p], []byte("op read "))
	if x < 0 || x > 0 && s[q+x-1] != ' ' && s[q+x-1] != '$' {
		return false
	}
	r := bytes.Index(s[q:p], []byte("op://"))
	if r < x {
		return false
	}
	e := p
	for e > q+r && (s[e-1] == ' ' || s[e-1] == '"' || s[e-1] == '\'') {
		e--
	}
	f := e
	for f > q+r && s[f-1] != '/' {
		f--
	}
	return f < e && classifyWords(s, f, e).Credential()
}

// foreignCopulaKey reports the key word s[k:p] before German's "ist" or
// French's "est" (proseValue's foreignIs): "Passwort" ("das Passwort ist
// <pw>"), or "passe" of "mot de passe" ("le mot de passe est <pw>"), sp
// between the words; or "contraseña" before Spanish's "es". The first
// two hold "pass", so proseValue's gate (proseKeys) passes their texts as
// it passes English ones; labelCopula passes "ña es ".
func foreignCopulaKey(s []byte, lo, k, p int, sp byte) bool {
	switch {
	case p-k == 8 && eqFold(s[k:p], "passwort"):
		return true
	case p-k == 5 && eqFold(s[k:p], "passe") && k-7 >= lo:
		return s[k-1] == sp && s[k-4] == sp && atFold(s, k-3, "de") && atFold(s, k-7, "mot") && wordStart(s, k-7)
	case p-k == 1 && s[k]|0x20 == 'a' && k-2 >= lo && s[k-2] == 0xc3:
		// "contraseña" before Spanish's "es" (labelCopula passes it).
		_, ok := runesBefore(s, lo, p, foreignLabels[0])
		return ok && s[p] == sp
	case p-k == 1 && s[k]|0x20 == 'a' && sp == '+' && k-14 >= lo && encodedEnye(s, k-6):
		// URL-encoded ("la+contrase%C3%B1a+es+<pw>"; proseValue steps
		// k past the "%B1" as past a line end's escape).
		return atFold(s, k-14, "contrase") && (k-14 == lo || !is(s[k-15], word)) && s[p] == sp
	}
	return false
}

// foreignCopulaQualified reports foreignCopulaKey's label before a
// preposition and one to three words that end at s[p], before German's
// "ist" or French's "est": "das Passwort für den Server ist <pw>", "le mot
// de passe du serveur est <pw>" (qualifiedLabel).
func foreignCopulaQualified(s []byte, lo, p int) bool {
	_, ok := qualifiedLabel(s, lo, p, func(e int) (int, bool) {
		k := e
		for k > lo && e-k < 32 && is(s[k-1], cUpper|cLower) {
			k--
		}
		return k, k < e && foreignCopulaKey(s, lo, k, e, ' ')
	})
	return ok
}

// loginTailStart reports a tail that ends where h-secrets19's prose
// shapes take their value, or inside the word before it: after "user
// <name> /" (and a start of "pass": "user admin / pa" | "ss <pw>"), or
// after a password's label beyond English and a start of its copula
// ("das Passwort i" | "st <pw>", "le mot de passe est " | "<pw>", "la
// contraseña es" | " <pw>"). The next delta holds the value (proseValue
// reads it across the boundary); MayStartCredential keeps the tail.
func loginTailStart(b []byte) bool {
	e := len(b)
	if e < 6 {
		return false
	}
	// Past a start of the copula or of "pass", then white space.
	w := e
	for w > 0 && e-w < 4 && is(b[w-1], cLower) {
		w--
	}
	part := b[w:e]
	s := w
	for s > 0 && w-s < 2 && b[s-1] == ' ' {
		s--
	}
	if s == 0 {
		return false
	}
	if c := b[s-1]; c != '/' && (len(part) > 0 && part[0] != 'i' && part[0] != 'e' || len(part) == 0 && c != 't' && c != 's' && c|0x20 != 'a') {
		return false // (most tails: a word of prose, none of the endings below)
	}
	switch {
	case b[s-1] == '/' && (len(part) == 0 || len(part) < 4 && at([]byte("pass"), 0, string(part))):
		// "user <name> /", "user <name> / pa"
		if s < 2 || b[s-2] != ' ' {
			return false
		}
		u := s - 2
		x := u
		for x > 0 && u-x < 64 && (is(b[x-1], word) || b[x-1] == '.' || b[x-1] == '-') {
			x--
		}
		if x == u || x < 2 || b[x-1] != ' ' {
			return false
		}
		ke := x - 1
		if b[ke-1] == ':' {
			ke--
		}
		j := ke
		for j > 0 && ke-j < 8 && is(b[j-1], cUpper|cLower) {
			j--
		}
		return loginKey(b, j, ke)
	case s < w && len(part) > 0 && len(part) <= 3 && (at([]byte("ist"), 0, string(part)) || at([]byte("est"), 0, string(part))):
		// "Passwort i", "mot de passe es"
		return foreignCopulaKey(b, 0, wordBack(b, w-1), w-1, ' ')
	case s < w && len(part) > 0 && len(part) <= 2 && at([]byte("es"), 0, string(part)):
		return foreignCopulaKey(b, 0, wordBack(b, w-1), w-1, ' ')
	case s < e && len(part) == 0 && w-s == 1:
		// After the label and its copula, or the label alone: "Passwort
		// ist ", "contraseña " | "es <pw>".
		c := s
		for c > 0 && s-c < 3 && is(b[c-1], cLower) {
			c--
		}
		if c < s && c > 0 && b[c-1] == ' ' && (eqFold(b[c:s], "ist") || eqFold(b[c:s], "est") || eqFold(b[c:s], "es")) {
			return foreignCopulaKey(b, 0, wordBack(b, c-1), c-1, ' ')
		}
		return b[s-1]|0x20 == 'a' && foreignCopulaKey(b, 0, wordBack(b, s), s, ' ')
	}
	return false
}

// wordTailStart reports a tail that ends in a word of a shape whose
// value the next delta holds, a word that loginTailStart and
// labelTailStart cannot see yet: a login's name after its key ("user
// admin" | " / pass <pw>", "Login: admin" | " / <pw>"); OpenVPN's
// "<auth-user-pass>" from its fifth byte on ("<auth-u" | "ser-pass>…");
// op's "op read" from its 'r' on, up to its reference's scheme ("$ op
// read" | " op://…"); French's "mot" after a determiner ("le mot" | " de
// passe est <pw>"). One space may follow the word.
func wordTailStart(b []byte) bool {
	e := len(b)
	if e > 0 && b[e-1] == ' ' {
		e--
	}
	if e < 4 || !is(b[e-1], word) && b[e-1] != '.' {
		return false
	}
	if e == len(b) && authLast[b[e-1]] {
		// "<auth-u" (no space after it)
		if k := bytes.LastIndexByte(b[max(0, e-len(authUserPass)+1):e], '<'); k >= 0 {
			k += max(0, e-len(authUserPass)+1)
			if e-k >= 5 && string(b[k:e]) == authUserPass[:e-k] && (k == 0 || !is(b[k-1], word)) {
				return true
			}
		}
	}
	// The other cases end in a word after a space: found at once, its
	// bytes checked only where what is before it names a shape.
	lo := max(0, e-65)
	w := bytes.LastIndexByte(b[lo:e], ' ') + lo + 1
	if w == lo || w < 3 {
		return false
	}
	if n := e - w; n <= 4 && b[w-3] == 'o' && b[w-2] == 'p' && string(b[w:e]) == "read"[:n] {
		return w == 3 || !is(b[w-4], word) // "op r", "op read", "op read "
	}
	if n := e - w; n <= 2 && e == len(b) && w >= 8 && string(b[w:e]) == "op"[:n] && string(b[w-8:w]) == "op read " {
		return w == 8 || !is(b[w-9], word) // "op read o", "op read op"
	}
	ke := w - 1
	if b[ke-1] == ':' {
		ke--
	}
	if e-w == 3 && ke == w-1 && eqFold(b[w:e], "mot") {
		j := wordBack(b, ke)
		return eqFoldAny(b[j:ke], frenchDeterminers...) && wordStart(b, j) // "le mot"
	}
	if l := b[ke-1] | 0x20; l != 'r' && l != 'n' && l != 'e' || !loginKey(b, wordBack(b, ke), ke) {
		return false // (no login's key: user, username, login, logon)
	}
	for _, c := range b[w:e] {
		if !is(c, word) && c != '.' {
			return false
		}
	}
	return true // "user admin", "Login: admin"
}

// authLast marks the bytes "<auth-user-pass>" may be cut after (its
// fifth on).
var authLast = func() (t [256]bool) {
	for _, c := range []byte(authUserPass[4 : len(authUserPass)-1]) {
		t[c] = true
	}
	return t
}()

const (
	authUserPass = "<auth-user-pass>"
	opReadRef    = "op read op://"
)

// frenchDeterminers are the words before "mot de passe" that
// wordTailStart takes "mot" after.
var frenchDeterminers = []string{"le", "du", "un", "au", "ce", "mon", "ton", "son", "votre", "notre", "leur", "nouveau", "ancien"}

// wordBack is the start of the run of ASCII letters that ends at b[e].
func wordBack(b []byte, e int) int {
	k := e
	for k > 0 && e-k < 32 && is(b[k-1], cUpper|cLower) {
		k--
	}
	return k
}

// labelTailStart reports a tail that ends, before up to two spaces, in
// a label beyond English and its separator ("пароль: ", "contraseña=",
// "mot de passe : ", keyValue's foreignLabel) or in "password for
// <who>:" (proseValue's), or that ends inside such a label (its first
// four bytes or more: "contrase\xc3", "паро", "mot de p") or inside
// "password for <who>": the value comes next.
func labelTailStart(b []byte) bool {
	e := len(b)
	s := e
	for s > 0 && e-s < 2 && b[s-1] == ' ' {
		s--
	}
	if s < 5 {
		return false
	}
	if c := b[s-1]; c == ':' || c == '=' {
		ke := s - 1
		if b[ke-1] == ' ' {
			ke-- // "mot de passe : "
		}
		if _, ok := foreignLabel(b, 0, ke); ok {
			return true
		}
		if c == ':' && ke == s-1 && ke > 8 {
			if _, ok := passwordForColon(b, 0, ke, ' '); ok {
				return true
			}
		}
		return false
	}
	if s == e {
		// "password for adm" | "in: <pw>"
		if bytes.Contains(b[max(0, e-128):], []byte("ass")) {
			if _, _, ok := passwordFor(b, 0, e, ' '); ok {
				return true
			}
		}
	} else if s == e-1 && (at(b, s-3, "for") || at(b, s-2, "of")) {
		// "password for " | "admin: <pw>"
		f := s - 3 + btoi(b[s-1] == 'f')
		if f > 0 && b[f-1] == ' ' {
			k := wordBack(b, f-1)
			if eqFoldAny(b[k:f-1], "password", "passwd", "passphrase") && wordStart(b, k) {
				return true
			}
		}
	}
	if e < 4 || labelPairs[int(b[e-2])<<2|int(b[e-1])>>6]>>(b[e-1]&63)&1 == 0 {
		return false // (no label's prefix ends in these two bytes)
	}
	// The label starts a word: the last word's start, or (mot de passe)
	// one of the two before it, within labelPrefixMax bytes of the end;
	// its first byte is one a label starts with.
	for k, n := e, 0; k > 0 && e-k <= labelPrefixMax && n < 3; k-- {
		c := b[k-1]
		if c != ' ' && c != '\n' && c != '"' {
			continue
		}
		n++
		if e-k >= 4 && labelFirst[b[k]] && labelPrefixes[string(b[k:])] {
			return true
		}
	}
	return e <= labelPrefixMax && e >= 4 && labelFirst[b[0]] && labelPrefixes[string(b)]
}

// labelPrefixes are the prefixes, four characters or longer, of the
// labels beyond English (foreignLabels, each in lower case, with a
// capital first and in capitals), cut anywhere, also inside a character:
// a tail that ends in one may end in a label cut in two.
var labelPrefixes, labelPrefixMax, labelFirst, labelPairs = func() (map[string]bool, int, [256]bool, [1024]uint64) {
	m, max := map[string]bool{}, 0
	var first [256]bool
	var pairs [1024]uint64 // bit b1<<8|b2: a prefix ends in the bytes b1, b2
	for _, l := range foreignLabels {
		low := string(l)
		r, n := utf8.DecodeRuneInString(low)
		for _, v := range []string{low, strings.ToUpper(string(r)) + low[n:], strings.ToUpper(low)} {
			for k := len(string([]rune(v)[:4])); k <= len(v); k++ {
				m[v[:k]] = true
				pairs[int(v[k-2])<<2|int(v[k-1])>>6] |= 1 << (v[k-1] & 63)
			}
			first[v[0]] = true
			if len(v) > max {
				max = len(v)
			}
		}
	}
	return m, max, first, pairs
}()
