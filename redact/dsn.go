package redact

import "bytes"

// Credentials written in the shapes of their own tools, with no key=value
// separator and no URL: a .pgpass line, an Oracle connect string, an
// admin tool's password flag (toolFlag). Each masks the password alone,
// as a key=value pair's value (KindKeyValue: a credential, and rule
// e2a.secret's placeholder and code checks apply to it).

// pgpass matches the password of a .pgpass line around the ':' at s[i]
// that ends its host field: host:port:database:user:password, the port
// PostgreSQL's (5432-5439) or PgBouncer's (6432) or '*', the host '*',
// localhost or a name with a dot (a bare word before a port is as often a
// key of a cache: "orders:5432:…"), after any byte no host holds ("cp#"
// of a frame's replyTo included); the password runs to the end of the
// line or word (no unescaped ':').
//
// anyStart (the pre-check's) takes the line from any from: a host that a
// later start leaves (a suffix of it) would do.
func pgpass(s []byte, from, i int, anyStart bool) (Match, bool) {
	if !mayPgpass(s, i) {
		return Match{}, false
	}
	hs := i
	dot := false
	for hs > from && i-hs < 256 && (is(s[hs-1], alnum|cDash|cUnder) || s[hs-1] == '.' || s[hs-1] == '*') {
		if hs--; s[hs] == '.' {
			dot = true
		}
	}
	if hs < i && escLetter(s, hs) {
		hs++ // "\nlocalhost:…" in JSON text: the line starts after the escape
	}
	host := s[hs:i]
	switch {
	case len(host) == 0:
		return Match{}, false
	case anyStart:
		if !dot && host[len(host)-1] != '*' && !(len(host) >= 9 && eqFold(host[len(host)-9:], "localhost")) {
			return Match{}, false
		}
	case !(dot || string(host) == "*" || eqFold(host, "localhost")):
		return Match{}, false
	}
	// port, database, user: fields with no white space.
	f := i + 1
	for k := 0; k < 3; k++ {
		if isMask(s, f) {
			return Match{}, false // (a field is a mask: "…:******(fp:…)" masked once)
		}
		e := f
		for e < len(s) && s[e] != ':' && !proseEndT[s[e]] {
			e++
		}
		if e == f || e >= len(s) || s[e] != ':' || holdsMask(s[f:e]) {
			// (A field that holds a mask, "!******(fp:…)": the mask's
			// "(fp:" made the fifth field of a line of four, masked once.)
			return Match{}, false
		}
		f = e + 1
	}
	e := f
	for e < len(s) && !proseEndT[s[e]] {
		if s[e] == ':' {
			return Match{}, false // a sixth field: no .pgpass line
		}
		e++
	}
	if e < len(s) && s[e] == '\\' && e+1 < len(s) && (s[e+1] == ':' || s[e+1] == '\\') && !escapedQuote(s, e) {
		return Match{}, false // (an escaped ':' or '\': taken no further)
	}
	if hs > 0 && (s[hs-1] == '(' && s[e-1] == ')' || s[hs-1] == '[' && s[e-1] == ']') {
		e-- // "(localhost:*:*:app:pw)"
	}
	if e <= f || isMask(s, f) {
		return Match{}, false
	}
	if m, ok := find(s[:f-1], i+1); ok && m.Start < f-1 {
		// A match in the port, database or user field (an e-mail user,
		// "app@corp.com", as Azure's are written; a '+' and digits): the
		// password is masked with it, from its start. Masked alone, the
		// password made the line no .pgpass line at the next pass (a
		// field is a mask), which then masked the field: masking twice
		// changed the text, and the first pass printed the e-mail.
		return Match{m.Start, e, KindKeyValue}, true
	}
	return Match{f, e, KindKeyValue}, true
}

// escapedQuote reports a quote escaped once or more at s[e] ("\\\"",
// "\\\\\\\"": the end of a string in JSON text held in JSON text).
func escapedQuote(s []byte, e int) bool {
	b := e
	for b < len(s) && b-e < 8 && s[b] == '\\' {
		b++
	}
	return b < len(s) && s[b] == '"' && (b-e)%2 == 1
}

// mayPgpass is pgpass's gate at the ':' s[i]: a port of PostgreSQL's or
// '*', and the ':' after it.
func mayPgpass(s []byte, i int) bool {
	switch {
	case i+2 < len(s) && s[i+1] == '*':
		return s[i+2] == ':'
	case i+5 < len(s) && s[i+1] == '5':
		return s[i+2] == '4' && s[i+3] == '3' && is(s[i+4], cDigit) && s[i+5] == ':'
	case i+5 < len(s) && s[i+1] == '6':
		return at(s, i+2, "432:")
	}
	return false
}

// oracleNeedles (compared case-insensitively) and dsnNeedles (as they
// are spelled) are the needles of pgpass and oracle for MayHoldCredential
// and MayStartCredential: a command or JDBC's "thin:", "@//", a
// PostgreSQL port or '*' between ':'s, each also URL-encoded.
var (
	oracleNeedles = append(append([]string(nil), oracleCommands...), "sql> conn", "thin:", "%3a543", "%3a6432%3a", "%3a%2a%3a", "%40%2f%2f")
	dsnNeedles    = []string{":543", ":6432:", ":*:", "@//", `@\/\/`}
)

// oracleCommands are the Oracle tools whose first argument may be a
// connect string user/password@alias.
var oracleCommands = []string{"sqlplus", "rman", "expdp", "impdp", "sqlldr", "dgmgrl"}

// oracle matches the password of an Oracle connect string around the '@'
// at s[i]: user/password@//host[:port]/service (EZConnect, also with '/'
// escaped as in JSON text), or user/password@alias where a command that
// takes one (oracleCommands, with flags before it) or JDBC's "thin:" comes
// before it. A path or a module version ("a/b@v1.2") has neither.
//
// anyStart (the pre-check's) takes the user from any from: no boundary
// before it.
func oracle(s []byte, from, i int, anyStart bool) (Match, bool) {
	p := i
	for p > from && i-p < 128 && s[p-1] != '/' && !proseEndT[s[p-1]] {
		p--
	}
	if p == i || p-1 <= from || s[p-1] != '/' || isMask(s, p) {
		return Match{}, false
	}
	u := p - 1
	if s[u-1] == '\\' {
		u-- // scott\/tiger
	}
	us := u
	for us > from && u-us < 64 && (is(s[us-1], word) || s[us-1] == '$' || s[us-1] == '#') {
		us--
	}
	if us == u {
		return Match{}, false
	}
	m := Match{p, i, KindKeyValue}
	if at(s, i+1, "//") || at(s, i+1, `\/\/`) {
		if anyStart || us == from || proseEndT[s[us-1]] || s[us-1] == ':' || s[us-1] == '=' || s[us-1] == '(' {
			return m, true
		}
		return Match{}, false
	}
	if i+1 >= len(s) || !is(s[i+1], alnum) {
		return Match{}, false
	}
	if us >= from+5 && at(s, us-5, "thin:") {
		return m, true // jdbc:oracle:thin:user/pw@host:1521:SID
	}
	// Back over white space and flags to the command.
	c := us
	for n := 0; n < 4; n++ {
		for c > from && (s[c-1] == ' ' || s[c-1] == '+') {
			c--
		}
		w := c
		for w > from && c-w < 16 && (is(s[w-1], alnum|cDash|cUnder) || s[w-1] == '/' || s[w-1] == '.') {
			w--
		}
		if w < c && escLetter(s, w) {
			w++ // "\nsqlplus …" in JSON text
		}
		if w == c || c == us {
			return Match{}, false
		}
		if s[w] == '-' {
			c = w // a flag ("sqlplus -s -L user/pw@db")
			continue
		}
		word := s[w:c]
		for k := len(word) - 1; k >= 0; k-- {
			if word[k] == '/' {
				word = word[k+1:] // /opt/oracle/bin/sqlplus
				break
			}
		}
		for _, cmd := range oracleCommands {
			if eqFold(word, cmd) {
				return m, true
			}
		}
		if (eqFold(word, "conn") || eqFold(word, "connect")) && w-5 >= from && atFold(s, w-5, "sql> ") {
			return m, true // SQL*Plus's prompt: "SQL> conn scott/<pw>@orcl"
		}
		return Match{}, false
	}
	return Match{}, false
}

// isPgpass is pgpass for the pre-check (any start).
func isPgpass(s []byte, i int) bool {
	_, ok := pgpass(s, 0, i, true)
	return ok
}

// toolFlag matches the password of the command lines of admin tools that
// take it under a flag flagValue and shortFlag do not read: a single-dash
// long flag of a Java keystore ("keytool -storepass <pw>", -keypass,
// -srcstorepass, ...), OpenSSL's "-pass pass:<pw>" (-passin, -passout),
// and a short flag of a tool named on the line: "-w <pw>" of the OpenLDAP
// clients (ldapsearch, ldapmodify, ...), "-P <pw>" of sqlcmd, bcp, zip
// and unzip. s[i] is the '-', after a space (or a '+', a space in a
// URL-encoded form).
func toolFlag(s []byte, from, i int) (Match, bool) {
	form := s[i-1] == '+'
	k := i + 1
	e := run(s, k, alnum)
	if e == k || e >= len(s) || s[e] != ' ' && s[e] != '+' {
		return Match{}, false
	}
	name := s[k:e]
	if len(name) <= 3 && bytes.IndexByte(name, 'b') >= 0 && lineNames(s, from, i, form, []string{"htpasswd", "mosquitto_passwd"}) {
		return htpasswd(s, i, form)
	}
	v := e + 1
	for v < len(s) && v-e < 8 && (s[v] == ' ' || form && s[v] == '+') {
		v++
	}
	if v >= len(s) || s[v] == '-' {
		return Match{}, false
	}
	sepAt := byte(0) // the value is user<sep>password: the part after sep
	noRef := false   // a shell's "$VAR" (or "<pw>") is no value
	switch {
	case len(name) == 1:
		var tools []string
		switch name[0] {
		case 'w':
			tools = ldapTools
		case 'P':
			tools = []string{"sqlcmd", "bcp", "zip", "unzip", "ssh-keygen"}
		case 'N': // ssh-keygen's new passphrase (-P the old one)
			tools = []string{"ssh-keygen"}
		case 'a': // HTTPie's -a user:password
			tools, sepAt = []string{"http", "https", "httpie"}, ':'
		case 'U': // Samba's clients: -U [domain\\]user%password
			tools, sepAt = sambaTools, '%'
		case 'u': // lftp -u user,password
			tools, sepAt, noRef = []string{"lftp"}, ',', true
		case 'k': // openssl enc -k <pw> (the password the key is made from)
			tools, noRef = []string{"openssl"}, true
		default:
			return Match{}, false
		}
		if !lineNames(s, from, i, form, tools) {
			return Match{}, false
		}
	case eqFoldAny(name, "pass", "passin", "passout"):
		switch {
		case at(s, v, "pass:"):
			v += len("pass:")
		case form && atFold(s, v, "pass%3a"):
			v += len("pass%3a")
		default:
			return Match{}, false // env:VAR, file:path, fd:n, stdin
		}
	case eqFoldAny(name, "storepass", "keypass", "srcstorepass", "deststorepass", "srckeypass", "destkeypass", "new"):
		if eqFold(name, "new") && !lineNames(s, from, i, form, []string{"keytool"}) {
			return Match{}, false
		}
	default:
		return Match{}, false
	}
	if sepAt == '%' {
		// (A Windows user's domain is written with a '\\', which
		// argSpan ends a value at.)
		q := s[v]
		if q == '"' || q == '\'' {
			v++
		}
		end := v
		for end < len(s) && end-v < 256 && s[end] != ' ' && s[end] != '\t' && s[end] != '\n' && s[end] != '"' && s[end] != '\'' {
			end++
		}
		if form {
			for end > v && s[end-1] == '+' {
				end--
			}
			if p := indexFold(s[v:end], "%25"); p >= 0 && v+p+3 < end && !isMask(s, v+p+3) {
				return userPassword(s, v, v+p, v+p+3, end), true // "-U+corp%5Cbackup%25<pw>"
			}
			return Match{}, false
		}
		p := bytes.IndexByte(s[v:end], '%')
		if p < 0 || v+p+1 == end || isMask(s, v+p+1) {
			return Match{}, false
		}
		return userPassword(s, v, v+p, v+p+1, end), true
	}
	v, end, ok := argSpan(s, v, form, true)
	if !ok || noRef && sepAt == 0 && refArg(s, v, form) {
		return Match{}, false
	}
	if sepAt != 0 {
		if holdsMask(s[v:end]) {
			return Match{}, false // masked once: "admin:******(fp:…)"
		}
		p, n := bytes.IndexByte(s[v:end], sepAt), 1
		if p < 0 && form {
			p, n = indexFold(s[v:end], "%3a"), 3
			if sepAt == ',' {
				p = indexFold(s[v:end], "%2c")
			}
		}
		if p <= 0 || v+p+n >= end || isMask(s, v+p+n) || noRef && refArg(s, v+p+n, form) {
			return Match{}, false // no password in it: the tool asks for one
		}
		return userPassword(s, v, v+p, v+p+n, end), true
	}
	return Match{v, end, KindKeyValue}, true
}

// refArg reports a value at s[v] that names one: a shell's "$VAR" (also
// URL-encoded, "%24VAR"), a placeholder "<pw>".
func refArg(s []byte, v int, form bool) bool {
	return s[v] == '$' || s[v] == '<' || form && (atFold(s, v, "%24") || atFold(s, v, "%3c"))
}

// indexFold is the index of p (lower case) in b, case-insensitively, or -1.
func indexFold(b []byte, p string) int {
	for i := 0; i+len(p) <= len(b); i++ {
		if atFold(b, i, p) {
			return i
		}
	}
	return -1
}

// sambaTools take -U user%password.
var sambaTools = []string{"smbclient", "rpcclient", "smbcacls", "smbget", "smbtree", "smbmap"}

// htpasswd matches the password of Apache's htpasswd in batch mode (-b):
// "htpasswd -b[c] <file> <user> <password>", with -n no file. s[i] is the
// '-' of a flag holding 'b'; the flags after it are read too.
func htpasswd(s []byte, i int, form bool) (Match, bool) {
	sp := func(c byte) bool { return c == ' ' || c == '\t' || form && c == '+' }
	args, noFile := 0, false
	for p := i; p < len(s) && p-i < 1024; {
		for p < len(s) && sp(s[p]) {
			p++
		}
		if p >= len(s) || s[p] == '\n' || s[p] == ';' || s[p] == '|' || s[p] == '&' {
			return Match{}, false
		}
		if s[p] == '-' {
			e := run(s, p+1, alnum)
			noFile = noFile || bytes.IndexByte(s[p+1:e], 'n') >= 0
			if e == p+1 || e < len(s) && !sp(s[e]) {
				return Match{}, false
			}
			p = e
			continue
		}
		if args++; args == 3 || noFile && args == 2 {
			v, end, ok := argSpan(s, p, form, true)
			if !ok {
				return Match{}, false
			}
			return Match{v, end, KindKeyValue}, true
		}
		for p < len(s) && !sp(s[p]) && s[p] != '\n' { // a file or user ("\/etc\/…" in JSON text)
			p++
		}
	}
	return Match{}, false
}

// ldapTools are the OpenLDAP clients whose -w takes the bind password.
var ldapTools = []string{"ldapsearch", "ldapmodify", "ldapadd", "ldapdelete", "ldapwhoami", "ldappasswd", "ldapcompare", "ldapmodrdn", "ldapexop"}

// lineNames reports one of tools as a word (its last run of name bytes:
// /usr/bin/zip) of the line, or the part of a pipeline, before s[i].
func lineNames(s []byte, _, i int, form bool, tools []string) bool {
	// The line is read back from i whatever Find's start: a start after
	// an earlier match (inside a quoted argument: `zip -P "pw"x -P pw`)
	// must read the line as a start before it does, or masking a text
	// twice masks more (FuzzFind, 7bb9d4c209dd1b55).
	if i <= 0 {
		return false // no word before the flag ("--pass 0", FuzzFind)
	}
	// The line is read up to 256 bytes back, its quoted arguments
	// passed over whole within 4 KiB: a long one (a value masked once is
	// short) must not hide the tool's name in the first pass only, or
	// masking a text twice masks more (FuzzFind, 1c79351084c16a91).
	from := max(0, i-4096)
	b := i - 1
	quotedLen := 0 // bytes of the quoted arguments passed over
	for b > from && i-b-quotedLen < 256 {
		c := s[b-1]
		if c == '"' && b-2 > from && s[b-2] == '\\' {
			// An escaped quoted argument in JSON text (`\"mongodb://…\"`,
			// `\\\"…\\\"` in JSON text held in a string) is passed over
			// too: its opening escaped quote after white space.
			nb := 1
			for b-2-nb > from && s[b-2-nb] == '\\' {
				nb++
			}
			q := s[b-1-nb : b]
			if o := bytes.LastIndex(s[from:b-1-nb], q); o > 0 && (s[from+o-1] == ' ' || s[from+o-1] == '\t' || form && s[from+o-1] == '+') &&
				bytes.IndexByte(s[from+o:b-1-nb], '\n') < 0 && !bytes.Contains(s[from+o+len(q):b-1-nb], []byte(`\n`)) {
				quotedLen += b - (from + o)
				b = from + o
				continue
			}
		}
		if (c == '"' || c == '\'') && b-1 > from {
			// A quoted argument before the flag ("ldapsearch -D
			// 'cn=admin,dc=example,dc=com' -w …") is passed over: its
			// opening quote starts an argument (after white space). A
			// quote with none is where the text the line is in starts
			// (a JSON string, a shell's "…").
			if o := bytes.LastIndexByte(s[from:b-1], c); o > 0 && from+o > from && (s[from+o-1] == ' ' || s[from+o-1] == '\t' || form && s[from+o-1] == '+') &&
				bytes.IndexByte(s[from+o:b-1], '\n') < 0 {
				quotedLen += b - (from + o)
				b = from + o
				continue
			}
		}
		if c == '\n' || c == '\r' || c == ';' || c == '|' || c == '&' || c == '(' || c == '`' || c == '"' || c == '\'' || escLetter(s, b-1) {
			break
		}
		b--
	}
	for w := b; w < i; {
		for w < i && (s[w] == ' ' || s[w] == '\t' || form && s[w] == '+') {
			w++
		}
		we := w
		for we < i && !(s[we] == ' ' || s[we] == '\t' || form && s[we] == '+') {
			we++
		}
		c := we
		for c > w && (is(s[c-1], word) || s[c-1] == '.') {
			c--
		}
		if c < we && eqFoldAny(s[c:we], tools...) {
			return true
		}
		w = we
	}
	return false
}

// URL-encoded, a .pgpass line and an Oracle connect string are written
// with "%3A" for ':', "%2F" for '/', "%40" for '@' and "%2A" for '*'
// (a form's field, a query parameter: "line=localhost%3A5432%3Adb%3Aapp%3Apw",
// "dsn=scott%2Fpw%40%2F%2Fdb%3A1521%2FORCL", "cmd=sqlplus+system%2Fpw%40ORCL").

// encodedField is where the field of a URL-encoded text that starts at
// s[f] ends: at "%3A" (colon true) or at the end of a value (a delimiter
// or its encoding, encodedValueEnd), within 256 bytes.
func encodedField(s []byte, f int) (e int, colon bool) {
	for e = f; e < len(s) && e-f < 256; e++ {
		if s[e] == '%' && atFold(s, e, "%3a") {
			return e, true
		}
		if encodedValueEnd(s, e) {
			break
		}
	}
	return e, false
}

// pgpassEncoded is pgpass in a URL-encoded text: the ':' that ends the
// host is the "%3A" at s[i-1] (s[i] its '3'); the host is '*' ("%2A"),
// localhost or a name with a dot, the port PostgreSQL's, PgBouncer's or
// "%2A".
func pgpassEncoded(s []byte, from, i int) (Match, bool) {
	c := i + 2 // after "%3A"
	switch {
	case atFold(s, c, "%2a%3a"), atFold(s, c, "6432%3a"):
	case c+4 < len(s) && at(s, c, "543") && is(s[c+3], cDigit) && s[c+4] == '%':
	default:
		return Match{}, false
	}
	h := i - 1
	hs := h
	for hs > from && h-hs < 256 && (is(s[hs-1], alnum|cDash|cUnder) || s[hs-1] == '.') {
		hs--
	}
	star := false
	if hs > from && s[hs-1] == '%' && h-hs >= 2 {
		star = h-hs == 2 && atFold(s, hs-1, "%2a")
		hs += 2 // the hex digits of an escape before the host ("%0Alocalhost")
	}
	host := s[hs:h]
	switch {
	case star:
	case len(host) >= 9 && eqFold(host[len(host)-9:], "localhost"):
	case bytesHas(host, '.') && len(host) >= 3:
	default:
		return Match{}, false
	}
	// port, database, user: fields up to "%3A".
	f := c
	for k := 0; k < 3; k++ {
		e, colon := encodedField(s, f)
		if !colon || e == f || isMask(s, f) {
			return Match{}, false
		}
		f = e + 3
	}
	e, colon := encodedField(s, f)
	if colon || e == f || isMask(s, f) || holdsMask(s[f:e]) {
		// A sixth field, or none: no .pgpass line. (Nor a password that
		// holds a mask: a field masked in part by an earlier pass ends
		// at its mask's ')', where the line it was had a sixth field,
		// "…%3A!300000000000007%3A" its card number.)
		return Match{}, false
	}
	if m, ok := find(s[:f-3], c); ok && m.Start < f-3 {
		// A match in the port, database or user field: masked with the
		// password, as pgpass does (masked alone, the password made the
		// line no .pgpass line at the next pass, which then masked the
		// field: FuzzFind's seed da361663690126b6, a card number as the
		// user).
		return Match{m.Start, e, KindKeyValue}, true
	}
	return Match{f, e, KindKeyValue}, true
}

// bytesHas reports c in b.
func bytesHas(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// oracleEncoded is oracle in a URL-encoded text: the '@' is the "%40" at
// s[i-1] (s[i] its '4'), the password is after the "%2F" that ends the
// user; "%40%2F%2Fhost…" (EZConnect) after the start of a value, or an
// alias after an Oracle command (spaces '+' or "%20"). anyStart (the
// pre-check's): no boundary before the user.
func oracleEncoded(s []byte, from, i int, anyStart bool) (Match, bool) {
	at0 := i - 1
	p := at0
	for p > from && at0-p < 128 && !(p-3 >= from && atFold(s, p-3, "%2f")) {
		if encodedValueEnd(s, p-1) || s[p-1] == '=' {
			return Match{}, false
		}
		p--
	}
	if p == at0 || p-3 < from || !atFold(s, p-3, "%2f") || isMask(s, p) {
		return Match{}, false
	}
	u := p - 3
	us := u
	for us > from && u-us < 64 && (is(s[us-1], word) || s[us-1] == '$') {
		us--
	}
	if us > from && s[us-1] == '%' && u-us > 2 {
		us += 2 // the hex digits of an escape before the user ("%0Ascott")
	}
	if us == u {
		return Match{}, false
	}
	m := Match{p, at0, KindKeyValue}
	if atFold(s, at0, "%40%2f%2f") {
		if anyStart || us == from || s[us-1] == '=' || s[us-1] == '+' || s[us-1] == '&' || s[us-1] == '?' ||
			us-3 >= from && (atFold(s, us-3, "%3d") || atFold(s, us-3, "%3a") || atFold(s, us-3, "%20") || atFold(s, us-3, "%0a") || atFold(s, us-3, "%22")) {
			return m, true
		}
		return Match{}, false
	}
	if at0+3 >= len(s) || !is(s[at0+3], alnum) {
		return Match{}, false
	}
	// Back over spaces ('+', "%20") and flags to the command.
	c := us
	for n := 0; n < 4; n++ {
		sp := c
		for {
			if c > from && s[c-1] == '+' {
				c--
			} else if c-3 >= from && atFold(s, c-3, "%20") {
				c -= 3
			} else {
				break
			}
		}
		if c == sp {
			return Match{}, false
		}
		w := c
		for w > from && c-w < 16 && (is(s[w-1], alnum|cDash|cUnder) || s[w-1] == '.') {
			w--
		}
		if w == c {
			return Match{}, false
		}
		if s[w] == '-' {
			c = w
			continue
		}
		word := s[w:c]
		if len(word) > 2 && w > from && s[w-1] == '%' {
			word = word[2:] // "%2Fopt%2Foracle%2Fbin%2Fsqlplus", "%3Dsqlplus"
		}
		for _, cmd := range oracleCommands {
			if eqFold(word, cmd) {
				return m, true
			}
		}
		return Match{}, false
	}
	return Match{}, false
}
