package e2a

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/e2atap/e2atap/redact"
)

// Credential detection for rule e2a.secret and for the redactor. Nothing
// here allocates unless a credential is found (and then only ScanSecrets,
// to build the path); no function returns or logs the secret itself.

// Credential kinds FindCredential reports: the names of the credential
// kinds of package redact (redact.Kind.String), among them these.
const (
	CredBearer = "bearer" // the token of "Bearer <token>"
	CredJWT    = "jwt"    // eyJ….….…
	CredSK     = "sk"     // sk-… API keys
	CredGHP    = "ghp"    // GitHub tokens (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_)
	CredGLPAT  = "glpat"  // GitLab personal access tokens
)

// wordByte marks the bytes that continue a token: [A-Za-z0-9_-].
var wordByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	return t
}()

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasFoldPrefix reports whether s starts with lowerWord, ASCII
// case-insensitively (lowerWord is lower case).
func hasFoldPrefix(s []byte, lowerWord string) bool {
	if len(s) < len(lowerWord) {
		return false
	}
	for i := 0; i < len(lowerWord); i++ {
		if lower(s[i]) != lowerWord[i] {
			return false
		}
	}
	return true
}

// FindCredential returns the span and kind of the first credential in s:
// the first match of redact.Find whose kind is a credential (token shapes
// of the common providers, JWTs, PEM private keys, the value of Bearer,
// Basic, Authorization, Cookie, of a credential-named key=value pair, a
// URL's userinfo); personal data (e-mail, phone, ID numbers) is not a
// credential. The span is the credential itself (for "Bearer <token>",
// the token). kind is the redact.Kind name ("bearer", "sk", "aws", ...).
func FindCredential(s []byte) (start, end int, kind string, ok bool) {
	for from := 0; from < len(s); {
		m, ok := redact.Find(s, from)
		if !ok {
			break
		}
		if CredentialMatch(s, m) {
			return m.Start, m.End, m.Kind.String(), true
		}
		from = m.End
		if m.Kind == redact.KindKeyValue && m.End-m.Start > 16 {
			// A pair whose value is no credential as a whole may hold
			// one: a service account's JSON as a variable's value
			// (export GOOGLE_CREDENTIALS='{… "private_key": "-----BEGIN…'),
			// code that spells one. Its inside is searched too.
			from = m.Start + 1
		}
	}
	return 0, 0, "", false
}

// CredentialMatch reports whether m, a match of redact.Find in s, is a
// credential for rule e2a.secret: a credential kind whose value may be
// the credential itself (credentialValue), not a key=value pair whose
// value names its key. FindCredential and the split check (a match across
// two chunks) judge a match by it alike.
func CredentialMatch(s []byte, m redact.Match) bool {
	return m.Kind.Credential() && credentialValue(m.Kind, s[m.Start:m.End]) &&
		!(m.Kind == redact.KindKeyValue && (namesItsKey(s, m.Start, m.End) || nonCredentialPair(pairKey(s, m.Start), s[m.Start:m.End]) ||
			typeBraces(s, m.Start, m.End) || identifiedByProse(s, m.Start)))
}

// typeBraces reports whether the value s[start:end] is a type in JSDoc's
// braces ("* `privateKey`: {KeyObject}", Node's API docs): a name or a
// union of names between '{' and '}' (as a value that opens with '{' is a
// template's placeholder).
func typeBraces(s []byte, start, end int) bool {
	if start == 0 || end >= len(s) || s[start-1] != '{' || s[end] != '}' {
		return false
	}
	v := s[start:end]
	return ident(v) || bytes.Contains(v, []byte(" | ")) && unionType(v)
}

// identifiedByProse reports whether the value at s[start] follows
// "identified by" in prose with a name in Markdown's backticks ("the
// directory identified by `path`."): SQL's password after IDENTIFIED BY
// is a string in quotes (a backtick quotes a name there), Oracle's is
// bare.
func identifiedByProse(s []byte, start int) bool {
	const w = "identified by "
	return start >= len(w) && s[start] == '`' && string(s[start-len(w):start]) == w
}

// nonCredentialPair reports whether a key=value pair in text that Find
// masked as a credential's is none for rule e2a.secret (the mask stays):
// its key names none (nonCredentialKey) and its value holds no token's
// shape; HTML's accesskey attribute, a keyboard shortcut of one character
// (accesskey="p"); or an example value made of its key's name
// ("gmsaCredentialSpec": "gmsaCredentialSpecValue", as Kubernetes's
// OpenAPI examples fill every field).
func nonCredentialPair(k, v []byte) bool {
	switch {
	case len(v) == 1 && len(k) == 9 && hasFoldPrefix(k, "accesskey"):
		return true
	case len(k) >= 3 && len(v) == len(k)+5 && string(v[:len(k)]) == string(k) && string(v[len(k):]) == "Value":
		return true
	}
	return nonCredentialKey(k) && !heldToken(v)
}

// heldToken reports whether v, a value that its key does not make a
// credential, holds one of its own shape (a "secret_ref: ghp_…" is a
// leaked token all the same), or a key=value credential ("* src/passwd.c:
// password=…"). It does not judge the keys inside v again (no recursion:
// "a_ref=a_ref=…" costs one pass over v, not one per key).
func heldToken(v []byte) bool {
	for from := 0; from < len(v); {
		m, ok := redact.Find(v, from)
		if !ok {
			return false
		}
		if m.Kind.Credential() && credentialValue(m.Kind, v[m.Start:m.End]) && !(m.Kind == redact.KindKeyValue && namesItsKey(v, m.Start, m.End)) {
			return true
		}
		from = max(m.End, from+1)
	}
	return false
}

// pairKey returns the key of the key=value pair in text whose value
// starts at s[start]: the run of key bytes before the '=' or ':' (and
// the quotes, a JSON escape's '\\' and the spaces around it) that precede
// the value; nil if there is none.
func pairKey(s []byte, start int) []byte {
	j := start
	skip := func() {
		for j > 0 && j-start > -8 && (s[j-1] == ' ' || s[j-1] == '"' || s[j-1] == '\'' || s[j-1] == '\\') {
			j--
		}
	}
	skip()
	if j == 0 || s[j-1] != '=' && s[j-1] != ':' {
		return nil
	}
	j--
	if j > 0 && s[j] == '=' && s[j-1] == ':' {
		j-- // Go's "ref := range refs"
	}
	end := j
	for end > 0 && start-end < 16 && (s[end-1] == ' ' || s[end-1] == '"' || s[end-1] == '\'' || s[end-1] == '\\') {
		end--
	}
	j = end
	for j > 0 && end-j < 128 && (isAlnum(s[j-1]) || strings.IndexByte("_-.$/", s[j-1]) >= 0) {
		j--
	}
	if j > 0 && s[j-1] == '\\' && end-j > 1 && (s[j] == 'n' || s[j] == 't' || s[j] == 'r') {
		j++ // "\tref: id" in JSON text: the key is "ref"
	}
	return s[j:end]
}

// nonCredentialKey reports whether k, the key of a key=value pair that
// Find masked as a credential's, names no credential for rule e2a.secret
// (the mask stays):
//   - a reference, its last word "ref" ("$ref" of JSON Schema and
//     OpenAPI, "imageRef", "api_key_ref"), as the key of a record's JSON
//     is (ScanSecrets: an api_key_ref names a secret, it is none);
//   - a source or manual file's name, "src/passwd.c" or
//     "man/chpasswd.8.xml" as a ChangeLog lists them ("* src/passwd.c:
//     Likewise."): its extension is the file's kind, no credential's word.
func nonCredentialKey(k []byte) bool {
	if len(k) < 3 {
		return false
	}
	if redact.ClassifyKey(bytes.TrimLeft(k, "$_-./")) == redact.KeyRef {
		return true
	}
	i := bytes.LastIndexByte(k, '.')
	if i <= 0 || i == len(k)-1 {
		return false
	}
	switch ext := string(k[i+1:]); ext {
	case "c", "h", "cc", "cpp", "cxx", "hpp", "go", "py", "js", "ts", "mjs", "rs", "java", "rb", "pl", "pm", "sh",
		"xml", "html", "htm", "in", "am", "ac", "m4", "texi", "po", "pot", "md", "rst":
		return true
	default:
		return len(ext) == 1 && ext[0] >= '1' && ext[0] <= '9' // a manual page: passwd.5
	}
}

// credentialValue reports whether v, the value Find matched as a
// credential of kind k, may be the credential itself, for rule e2a.secret
// (the redactor masks every match): the value of a credential-named
// key=value pair, of "Authorization:" or of "Bearer" in text may also be
// a placeholder or a reference to one ("$PASS", "${DB_PASSWORD}",
// "<token>", "(enter your password)", "%s", "{{ .Token }}",
// "your-key-here"), code that reads one (`os.environ[`, `get_key()`), or,
// for a key=value pair, a count of under 8 digits ("token: 128 used"):
// prose and code about credentials, which agents' records are full of,
// are no violation.
func credentialValue(k redact.Kind, v []byte) bool {
	switch k {
	case redact.KindKeyValue:
		if placeholder(v) || code(v) || redactedMark(v) || nonValue(v) || typeExpr(v) || proseLead(v) {
			return false
		}
		digits := true
		for _, c := range v {
			digits = digits && c >= '0' && c <= '9'
		}
		return !digits || len(v) >= 8
	case redact.KindBasic:
		return basicCredentials(v)
	case redact.KindURLUserinfo:
		return !placeholderUserinfo(v)
	case redact.KindAuthorization, redact.KindBearer:
		w := v // the header's value runs on: judge its first word ("Bearer *** and more")
		if i := bytes.IndexByte(w, ' '); i > 0 {
			w = w[:i]
		}
		return !placeholder(v) && !redactedMark(w) && !schemeOnly(v) &&
			!(k == redact.KindAuthorization && (codeWord(w) || v[0] == '`' && bytes.Contains(v, []byte("${"))))
	case redact.KindCookie:
		// A Cookie header's value is name=value pairs; a value with no '='
		// that is code or a plain word is a variable's ("cookie =
		// xcb_get_input_focus_unchecked(c);", "bad_cookie = False").
		return bytes.IndexByte(v, '=') >= 0 || !(codeWord(v) || plainWord(v) || redactedMark(v) || v[0] == '{')
	}
	return true
}

// codeWord reports whether w, a header's first word in text, is code
// that reads or passes one on (`r.Header.Get(`, `in.Authorization,` of a
// Go struct literal), as code reads it once a statement's ',' or ';' is
// dropped.
func codeWord(w []byte) bool {
	w = bytes.TrimRight(w, ",;")
	return len(w) > 0 && (code(w) || compositeLit(w))
}

// compositeLit reports whether w opens a Go composite literal, a type's
// name and '{' (`&Authorization{Credentials: c.BearerToken}`,
// `TPM2BData{`): a name with '&' before it, or with '{' as its last byte.
func compositeLit(w []byte) bool {
	amp := w[0] == '&'
	if amp {
		w = w[1:]
	}
	i := bytes.IndexByte(w, '{')
	if i <= 0 || !amp && i != len(w)-1 {
		return false
	}
	for _, c := range w[:i] {
		if !isAlnum(c) && c != '_' && c != '.' {
			return false
		}
	}
	return !(w[0] >= '0' && w[0] <= '9')
}

// basicCredentials reports whether v, the value after "Basic" in text,
// may be Basic credentials: the base64 of "user-id:password" (RFC 7617),
// which decoded holds a ':' (a token cut at its end decodes as far as its
// last whole group); or a value that reads as a key or holds a token's
// shape (a raw key sent as Basic). A word after "basic" in prose ("basic
// Permissions.", "a basic smoke-test", "basic readability/style") is
// none: it decodes to bytes without a ':', or not at all.
func basicCredentials(v []byte) bool {
	if bytes.IndexByte(v, '%') >= 0 || redact.KeyLikeValue(v) || heldToken(v) {
		return true // URL-encoded: judged as found
	}
	w := bytes.TrimRight(v, ".,;")
	enc := base64.RawStdEncoding
	if bytes.ContainsAny(w, "-_") {
		enc = base64.RawURLEncoding
	}
	w = bytes.TrimRight(w, "=")
	if len(w)%4 == 1 {
		w = w[:len(w)-1] // cut inside a group: decode the groups before it
	}
	var buf [96]byte
	if enc.DecodedLen(len(w)) > len(buf) {
		return true // longer than prose's words
	}
	n, err := enc.Decode(buf[:], w)
	return err == nil && bytes.IndexByte(buf[:n], ':') >= 0
}

// placeholderUserinfo reports whether v, a URL's user:password, is the
// textbook placeholder of one, each half naming itself
// ("user:pass@host", "username:password@server" of a manual's synopsis),
// or a redactor's mark ("REDACTED:REDACTED").
func placeholderUserinfo(v []byte) bool {
	i := bytes.IndexByte(v, ':')
	if i < 0 {
		return false
	}
	u, p := v[:i], v[i+1:]
	if len(p) == 0 {
		return false
	}
	if redactedMark(p) {
		return true
	}
	isAny := func(w []byte, words ...string) bool {
		for _, x := range words {
			if len(w) == len(x) && hasFoldPrefix(w, x) {
				return true
			}
		}
		return false
	}
	return isAny(u, "user", "username", "usr", "login") && isAny(p, "pass", "password", "passwd", "pwd")
}

// schemeOnly reports whether v, the value of an Authorization header in
// text, is code that builds one rather than a credential: the scheme word
// alone (`"Bearer " + token`) or a string prefix (`f"Bearer {token}"`,
// where Find stops at the quote); or a scheme and one or two characters
// (a header a model is still writing: "Token C").
func schemeOnly(v []byte) bool {
	v = bytes.TrimRight(v, " \"'")
	for _, w := range []string{"bearer", "basic", "token", "digest", "negotiate", "ntlm", "apikey"} {
		if len(v) == len(w) && hasFoldPrefix(v, w) {
			return true
		}
		if len(v) > len(w) && v[len(w)] == ' ' && hasFoldPrefix(v, w) {
			v = bytes.TrimLeft(v[len(w):], " ") // "Token C": a token of one character is none yet
			break
		}
	}
	return len(v) <= 2
}

// redactedMark reports whether v is what a redactor leaves where a
// credential was: no letter or digit at all ("***", "••••", "...", "="
// taken as the value of "password == nil"), a mark such as "REDACTED",
// "FILTERED" (Rails) or "MASKED", bare or in brackets, or a masked value that keeps a few
// characters in sight ("****1234", "sk-...", "sk-…abcd": at most 6
// letters and digits beside a run of three '*' or an ellipsis). The
// redactor masks these all the same; they are no credential in a log.
func redactedMark(v []byte) bool {
	alnum, stars, dots := 0, 0, 0
	run := false // a run of three '*' or '.', or an ellipsis
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isAlnum(c):
			alnum++
			stars, dots = 0, 0
			continue
		case c == '*':
			stars, dots = stars+1, 0
		case c == '.':
			stars, dots = 0, dots+1
		case c == 0xe2 && i+2 < len(v) && v[i+1] == 0x80 && (v[i+2] == 0xa6 || v[i+2] == 0xa2): // … or •
			run = true
			stars, dots = 0, 0
			i += 2
			continue
		default:
			stars, dots = 0, 0
		}
		run = run || stars >= 3 || dots >= 3
	}
	if alnum == 0 && (len(v) <= 3 || maskOnly(v)) || run && alnum <= 6 {
		return true
	}
	if len(v) > 2 && (v[0] == '[' && v[len(v)-1] == ']' || v[0] == '<' && v[len(v)-1] == '>' || v[0] == '(' && v[len(v)-1] == ')') {
		v = v[1 : len(v)-1] // [REDACTED], <redacted>, (hidden)
	}
	for _, w := range []string{"redacted", "filtered", "masked", "hidden", "removed", "obfuscated", "sanitized", "censored"} {
		if len(v) == len(w) && hasFoldPrefix(v, w) {
			return true
		}
	}
	return false
}

// maskOnly reports whether v holds only the characters masks are made
// of ('*', '.', '#', '-', '_', 'x' aside: those are letters), so that a
// password of punctuation ("!@#$%^&*") stays a credential.
func maskOnly(v []byte) bool {
	for _, c := range v {
		switch c {
		case '*', '.', '#', '-', '_', '=', '?', 0xe2, 0x80, 0xa6, 0xa2:
		default:
			return false
		}
	}
	return true
}

// nonValue reports whether v, the value of a credential-named key in
// text, is a language's literal for no value or a flag rather than a
// credential: `password = None`, `"auth": null` (JSON logged inside a
// string), `token: undefined`, `password: true`; or one of plainWord's
// words ("auth: bearer", "password: required").
func nonValue(v []byte) bool {
	for _, w := range []string{"undefined", "nan", "nul", "void", "empty", "unset", "missing", "nothing"} {
		if len(v) == len(w) && hasFoldPrefix(v, w) {
			return true
		}
	}
	return plainWord(v)
}

// typeExpr reports whether v, the value of a credential-named key in
// text, is a type rather than a value, as code declares a credential's
// field or parameter: `password: str`, `token?: string`, `password:
// String`, `api_key: SecretStr`, `password: Optional[str]`, `password:
// typing.Any`, `secret: List[bytes]` (Find stops the value at the
// bracket's end).
func typeExpr(v []byte) bool {
	if hasFoldPrefix(v, "typing.") {
		return true
	}
	if bytes.Contains(v, []byte(" | ")) {
		return unionType(v)
	}
	name := v
	if len(v) > 1 && v[0] == '&' { // Rust: &str, &'static str, &mut String
		name = bytes.TrimPrefix(bytes.TrimPrefix(v[1:], []byte("'static ")), []byte("mut "))
		v = name
	}
	if i := bytes.IndexAny(v, "[<"); i > 0 {
		name = v[:i]
		switch strings.ToLower(string(name)) {
		case "optional", "list", "dict", "union", "sequence", "mapping", "option", "vec", "array", "set", "map",
			"record", "partial", "readonly", "promise", "maybe", "annotated", "literal", "type", "final", "classvar", "box", "arc", "rc":
			return true
		}
		return false
	}
	for _, w := range []string{"str", "string", "int", "integer", "bool", "boolean", "number", "bytes", "bytearray", "float",
		"double", "char", "any", "object", "unknown", "secretstr", "secretbytes", "securestring", "[]byte", "uint8array", "buffer"} {
		if len(name) == len(w) && hasFoldPrefix(name, w) {
			return true
		}
	}
	// A class named after the credential, capitalised as types are; the
	// lower-case word may be the (weak) password itself ("password: secret").
	switch string(name) {
	case "Secret", "Password", "Token", "Credential", "Credentials", "ApiKey", "APIKey", "SecretString":
		return true
	}
	return false
}

// placeholder reports whether v stands for a credential rather than being
// one: it opens like a template, a variable or a prompt, or it is a
// documentation stand-in ("your-key-here", "xxxxxxxx", "changeme").
func placeholder(v []byte) bool {
	if len(v) > 1 && (v[0] == '`' || v[0] == '"' || v[0] == '\'') {
		v = v[1:] // quoted in Markdown or code: "`${DB_PASSWORD}`", "'<token>'"
	}
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '$':
		return !redact.IsCryptHash(v) // "$6$<salt>$<hash>" is no variable
	case '(', '<', '{', '[', '%':
		return true
	}
	for _, p := range []string{"your", "xxxx", "changeme", "replace", "placeholder", "insert"} {
		if hasFoldPrefix(v, p) {
			return true
		}
	}
	return false
}

// code reports whether v is an expression that reads a credential: it
// ends in an opening bracket (`os.environ[`, `getenv(`) or is a call
// (`get_key()`, `vault.read("db")`). A call is one as redact's codeExpr
// reads it (so that a value masked is reported): its name holds a '.' or
// a '_', or its '(' is followed by a name, a quote, '&', '*' or a closing
// bracket; "Summer(2024" and "abcDEF(12)" read as passwords.
func code(v []byte) bool {
	if len(v) >= 32 && manySymbols(v) {
		return false // a generated secret: a WordPress salt, "Hs(y}>`4&7v|…"
	}
	switch v[len(v)-1] {
	case '(', '[':
		// After a name: "!@$%^&*(" (a password cut at its ')') is none.
		if n := len(v); n > 1 && (isAlnum(v[n-2]) || v[n-2] == '_') {
			return true
		}
	}
	for i := 1; i < len(v); i++ {
		if v[i] == '(' && (isAlnum(v[i-1]) || v[i-1] == '_') && callArgs(v, i) {
			return true
		}
		// An index into a map of them: `params[:password]`, `st.secrets["db"]`.
		if v[i] == '[' && (isAlnum(v[i-1]) || v[i-1] == '_') && i+1 < len(v) && (v[i+1] == ':' || v[i+1] == '"' || v[i+1] == '\'') {
			return true
		}
	}
	switch string(v) { // `let token = await getToken()`
	case "await", "new", "yield", "async", "function", "lambda", "typeof", "require", "func", "fn":
		return true
	}
	return reference(v)
}

// manySymbols reports whether v holds eight kinds of ASCII punctuation
// or more: a generated secret drawn from them all (WordPress's salts),
// which code's reading of "x(y" as a call took for an expression; code
// that reads a credential uses a few ('.', '(', ')', '"', '[', ']').
func manySymbols(v []byte) bool {
	var seen [2]uint64
	n := 0
	for _, c := range v {
		if c <= ' ' || c >= 0x7f || isAlnum(c) || c == '_' {
			continue
		}
		if bit := uint64(1) << (c & 63); seen[c>>6]&bit == 0 {
			seen[c>>6] |= bit
			if n++; n >= 8 {
				return true
			}
		}
	}
	return false
}

// callArgs reports whether the '(' at v[i], after a name, opens a call's
// arguments as code writes them: the name holds a '.' or a '_'
// (`vault.read(`, `load_key(`), or the next byte is a name's, a quote,
// '&', '*' or a closing bracket (`getpass()`, `getpass("Password: ")`,
// `load(cfg)`), not a digit or other punctuation ("Summer(2024").
func callArgs(v []byte, i int) bool {
	for k := i - 1; k >= 0 && (isAlnum(v[k]) || v[k] == '_' || v[k] == '.' || v[k] == '$'); k-- {
		if v[k] == '.' || v[k] == '_' {
			return true
		}
	}
	if i+1 >= len(v) {
		return true
	}
	switch c := v[i+1]; {
	case c == ')' || c == ']' || c == '"' || c == '\'' || c == '&' || c == '*' || c == '_' || c == '$':
		return true
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return true
	}
	return false
}

// reference reports whether v names where a credential is kept rather
// than holding it: a field or variable path (`settings.DB_PASSWORD`,
// `self.api_key`, `process.env.OPENAI_API_KEY`, `var.db_password`,
// `cfg.Password`, `req.body.password`), a symbol or named parameter
// (`:password`), a YAML tag that fetches or encrypts it (`!vault`,
// `!Ref DbPassword`, `!Sub`), or a value encrypted in place (sops
// `ENC[AES256_GCM,…]`, Jasypt `ENC(…)`). A path is taken as one only
// where it reads like code, not like a password with a dot in it
// ("correct.horse.battery", "Summer.2024" stay credentials): each part an
// identifier, and the first a name code keeps settings in, or a part
// with an underscore, or a part that names a credential.
func reference(v []byte) bool {
	if bytes.HasPrefix(v, []byte("ENC[")) || bytes.HasPrefix(v, []byte("ENC(")) {
		return true
	}
	if len(v) > 1 && v[0] == '!' {
		switch string(v[1:]) {
		case "vault", "Ref", "Sub", "GetAtt", "ImportValue", "Join", "Select", "FindInMap", "Base64", "If",
			"env", "ENV", "secret", "Secret", "include", "unsafe", "encrypted", "sops":
			return true
		}
		return false
	}
	if len(v) > 1 && v[0] == ':' {
		return identPath(v[1:], false)
	}
	return identPath(v, true)
}

// identPath reports whether v is a dotted path of identifiers that reads
// like code (reference); with dotted, it needs at least one dot.
func identPath(v []byte, dotted bool) bool {
	parts := bytes.Split(v, []byte("."))
	if dotted && len(parts) < 2 {
		return false
	}
	if !dotted {
		return len(parts) == 1 && ident(v)
	}
	codeLike := false
	switch strings.ToLower(string(parts[0])) {
	case "self", "this", "cls", "settings", "config", "conf", "cfg", "args", "opts", "options", "params", "env", "process",
		"os", "req", "request", "form", "data", "var", "local", "module", "import", "ctx", "context", "app", "props", "state",
		"secrets", "vault", "creds", "credentials", "c", "s", "m", "p", "o", "t", "u", "r", "input", "body", "values", "spec", "user":
		codeLike = true
	}
	for _, p := range parts {
		if !ident(p) || randomName(p) {
			return false
		}
		if bytes.IndexByte(p, '_') >= 0 || redact.ClassifyKey(p) != redact.KeyPlain {
			codeLike = true
		}
	}
	return codeLike
}

// randomName reports whether p, a part of a dotted path, reads as random
// rather than as a name: 16 bytes or more, two digits at least, and a
// change between digit, capital and lower-case letter at every third
// byte or more (a token after its dotted prefix, Vault's
// "hvs.CWwVt3apfB_mexoTG…"; a camelCase name, "oauth2ClientSecret",
// changes once a word).
func randomName(p []byte) bool {
	if len(p) < 16 {
		return false
	}
	cls := func(c byte) int {
		switch {
		case c >= '0' && c <= '9':
			return 1
		case c >= 'A' && c <= 'Z':
			return 2
		case c >= 'a' && c <= 'z':
			return 3
		}
		return 0
	}
	digits, changes := 0, 0
	for i, c := range p {
		if cls(c) == 1 {
			digits++
		}
		if i > 0 && cls(c) != cls(p[i-1]) {
			changes++
		}
	}
	return digits >= 2 && changes*3 >= len(p)
}

// ident reports whether p is an identifier: a letter, '_' or '$', then
// letters, digits, '_' or '$'.
func ident(p []byte) bool {
	if len(p) == 0 || !(p[0] == '_' || p[0] == '$' || isAlnum(p[0]) && !(p[0] >= '0' && p[0] <= '9')) {
		return false
	}
	for _, c := range p {
		if !(isAlnum(c) || c == '_' || c == '$') {
			return false
		}
	}
	return true
}

// unionType reports whether v is a union of types as TypeScript and
// JSDoc write one ("string | Buffer | KeyObject", Node's API docs:
// "* `passphrase`: {string | Buffer}"): names joined by " | ", one of
// them a type typeExpr knows.
func unionType(v []byte) bool {
	known := false
	for part := range bytes.SplitSeq(v, []byte("|")) {
		part = bytes.TrimSpace(part)
		if !ident(part) {
			return false
		}
		known = known || typeExpr(part)
	}
	return known
}

// namesItsKey reports whether the value s[start:end] of a key=value pair
// is its key's own name, as code passes a variable on
// (`OpenAI(api_key=api_key)`, `password: password`, `{'password': password}`).
func namesItsKey(s []byte, start, end int) bool {
	j := start
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	if j == 0 || s[j-1] != '=' && s[j-1] != ':' {
		return false
	}
	j--
	for j > 0 && s[j-1] == ' ' {
		j--
	}
	if j > 0 && (s[j-1] == '"' || s[j-1] == '\'') { // {'password': password}
		j--
	}
	n := end - start
	if j < n || string(s[j-n:j]) != string(s[start:end]) {
		return false
	}
	return j == n || !(isAlnum(s[j-n-1]) || s[j-n-1] == '_')
}

// proseLead reports whether v, the first word after a credential label in
// text ("Password: see below", "API key: ask the admin", "Password: reset
// by the user"), is a word that opens a sentence about the credential or
// says what became of it, not the credential: the mask stays, but it is
// no e2a.secret finding (an error a user's alert fires on). A value with
// a digit, a capital after its first letter or a sign is none of these.
func proseLead(v []byte) bool {
	switch strings.ToLower(string(v)) {
	case "see", "ask", "check", "contact", "refer", "use", "same", "sent", "stored", "provided", "available",
		"below", "above", "shown", "hidden", "redacted", "unchanged", "blank", "unknown", "omitted",
		"not", "in", "from", "at", "via", "per", "is", "was", "will", "the", "a", "an", "as",
		"set", "saved", "generated", "configured", "managed", "rotated", "encrypted", "masked",
		"removed", "reset", "expired", "changed", "updated", "given", "supplied", "attached", "pending":
		return true
	}
	return false
}

// plainWord reports whether v, the value of a credential-named key that is
// none of the four keys RULES.md names (password, api_key, bearer_token,
// authorization: any non-empty value of those is a finding), is a word
// that says what kind of credential or setting it is rather than being
// one: {"auth": "none"}, {"auth": "bearer"}, {"credentials": "include"}.
func plainWord(v []byte) bool {
	for _, w := range []string{"none", "null", "nil", "true", "false", "yes", "no", "on", "off", "enabled", "disabled",
		"required", "optional", "basic", "bearer", "digest", "oauth", "oauth2", "apikey", "api_key", "token", "jwt", "hmac",
		"anonymous", "include", "omit", "same-origin", "n/a"} {
		if len(v) == len(w) && hasFoldPrefix(v, w) {
			return true
		}
	}
	return false
}

// Key classes of rule e2a.secret, as ScanSecrets reports them.
const (
	KeyBearerToken   = "bearer_token"
	KeyAPIKey        = "api_key"
	KeyPassword      = "password"
	KeyAuthorization = "authorization"
)

// KeyCredential is the kind ScanSecrets reports for a credential-named key
// that is none of the four above (client_secret, x-api-key, access_token,
// private_key, cookie...).
const KeyCredential = "credential_key"

// SecretKeyKind returns the class of a secret-carrying key, or "": a key
// that redact.ClassifyKey calls a credential (password, secret, api key,
// private key, authorization, cookie, a last word "token"...), reported as
// bearer_token, api_key (apikey, api-key), password, authorization when
// it is, case-insensitively and as a whole, one of these, else as
// credential_key. References (api_key_ref) and keys that describe a
// credential (password_hint) are not secret keys.
func SecretKeyKind(key []byte) string {
	switch len(key) {
	case 6:
		if hasFoldPrefix(key, "apikey") {
			return KeyAPIKey
		}
	case 7:
		if hasFoldPrefix(key, "api_key") || hasFoldPrefix(key, "api-key") {
			return KeyAPIKey
		}
	case 8:
		if hasFoldPrefix(key, "password") {
			return KeyPassword
		}
	case 12:
		if hasFoldPrefix(key, "bearer_token") {
			return KeyBearerToken
		}
	case 13:
		if hasFoldPrefix(key, "authorization") {
			return KeyAuthorization
		}
	}
	if redact.ClassifyKey(key).Credential() {
		return KeyCredential
	}
	return ""
}

// keyPagerDuty is the walker's class of PagerDuty's integration key's
// name ("routing_key", redact.PagerDutyKeyName): its value is a
// credential, reported as KeyCredential, only with the key's shape
// (redact.PagerDutyKeyValue); a broker's routing key ("orders.created")
// is none. Scan's pre-check takes it as a secret key (any string value
// may hold one).
const keyPagerDuty = "pagerduty_key"

// walkKeyClass is the class the walker gives key: SecretKeyKind's, else
// keyPagerDuty for PagerDuty's name, else "".
func walkKeyClass(key []byte) string {
	if k := SecretKeyKind(key); k != "" {
		return k
	}
	if redact.PagerDutyKeyName(key) {
		return keyPagerDuty
	}
	return ""
}

// IsSecretKey reports whether key is one of the keys of rule e2a.secret
// (see SecretKeyKind): "password_hint" is not.
func IsSecretKey(key []byte) bool { return SecretKeyKind(key) != "" }

// masked reports whether a value was already redacted ("******", with or
// without the fingerprint): the sidecar's own log is valid input and must
// not trigger e2a.secret again.
func masked(v []byte) bool {
	for i := 0; i+6 <= len(v); i++ {
		if string(v[i:i+6]) == "******" {
			return true
		}
	}
	return false
}

// ScanSecrets looks for a credential in a whole JSON record: a non-empty
// string that is the direct value of a secret key (IsSecretKey) at any
// depth, kind = the key class (KeyBearerToken, ...), or a credential-shaped
// string (FindCredential) in any string, keys included, kind = the shape.
// Strings are checked after unescaping. A value already masked by the
// redactor ("******...") does not count under a secret key.
//
// It returns the path of the first hit in document order, never the value:
// "body.delta", "auth.bearer_token", "params.files[0].uri"; a key that is
// not a plain identifier is written ["like this"]; a credential-shaped key
// is reported as its object's path followed by ".{key}" (the key itself
// stays out of the path); the root value is "$".
//
// The common case (nothing found) does not allocate and costs about one
// pass over the bytes: strings are delimited with bytes.IndexByte, a key
// the reference sends is classified by one look-up in a table made at
// start (knownKeys), another by a cache, and a string value is given to
// the detector only if redact.MayHoldCredentialText, which stops only at
// the few bytes that can start a credential, lets it through. Scan makes
// the same checks while it reads a record (Record.MayHoldSecret), so that
// the engine calls ScanSecrets only for the few records where it may find
// something. data should
// be valid JSON; on invalid input the result is unspecified but
// ScanSecrets does not panic.
func ScanSecrets(data []byte) (path string, kind string, found bool) {
	w := secretWalker{data: data, pct: redact.MayHoldEncodedEscape(data)}
	path, kind, found = w.walk()
	if w.buf != nil {
		w.buf.b = w.buf.b[:0]
		unquoteBufs.Put(w.buf)
	}
	return path, kind, found
}

type unquoteBuf struct{ b []byte }

var unquoteBufs = sync.Pool{New: func() any { return new(unquoteBuf) }}

// pathFrame is one open container of the walk.
type pathFrame struct {
	obj   bool
	index int // arrays: index of the current element
	// objects: where the current key's raw (still escaped) body is in the
	// record (offsets, not a slice: a frame holds no pointer to write)
	keyStart, keyEnd int
}

type secretWalker struct {
	data   []byte
	i      int
	buf    *unquoteBuf
	pct    bool // data holds "%25" or "%5Cu00" (findCredential)
	pwdKey bool // the last key is "PWD": a path under it is the working directory (redact.PWDPath)
}

// pwdName is the key redact.PWDPath is asked about for a key the walker
// found to be "PWD" (any case).
var pwdName = []byte("pwd")

// str reads the string at w.data[w.i] ('"') and returns its raw body and
// whether it has escapes; ok is false on malformed input. Control bytes
// inside a string are not rejected (the input is then not JSON, and the
// result unspecified).
func (w *secretWalker) str() (raw []byte, esc, ok bool) {
	d := w.data
	start := w.i + 1
	i := start
	// Most strings are short: look for their end eight bytes at a time,
	// without a call.
	for end := min(len(d)-8, start+32); i <= end; i += 8 {
		if m := quoteOrBackslash(binary.LittleEndian.Uint64(d[i:])); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if d[i] == '"' {
				w.i = i + 1
				return d[start:i], false, true
			}
			break
		}
	}
	return w.strFrom(start, i)
}

// SWAR constants: a byte of ones, a byte's high bit, in every byte.
const (
	swarOnes = 0x0101010101010101
	swarHigh = 0x8080808080808080
)

// quoteOrBackslash marks the bytes of x (little-endian) that are '"' or
// '\\' by their high bit. Only the lowest mark is exact (a borrow can mark
// a byte above a true one), which is the one str reads.
func quoteOrBackslash(x uint64) uint64 {
	q := x ^ swarOnes*'"'
	b := x ^ swarOnes*'\\'
	return ((q-swarOnes)&^q | (b-swarOnes)&^b) & swarHigh
}

// strFrom finishes str for a string whose body starts at start, with no
// '"' or '\\' in d[start:i]: bytes.IndexByte (vector code in the runtime)
// finds the closing quote, and again the escapes before it.
func (w *secretWalker) strFrom(start, i int) (raw []byte, esc, ok bool) {
	d := w.data
	q := bytes.IndexByte(d[i:], '"') + i
	if q < i {
		return nil, false, false
	}
	for {
		b := bytes.IndexByte(d[i:q], '\\')
		if b < 0 {
			w.i = q + 1
			return d[start:q], esc, true
		}
		esc = true
		// A run of escapes (\uXXXX\uXXXX... in ASCII-escaped text) is
		// read here, without a search per escape.
		for i += b; i < q && d[i] == '\\'; {
			if i+1 >= len(d) {
				return nil, false, false
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d) {
					return nil, false, false
				}
				for _, h := range d[i+2 : i+6] {
					if hexVal(h) < 0 {
						return nil, false, false
					}
				}
				i += 6
			default:
				return nil, false, false
			}
		}
		if i > q { // the quote was escaped: find the next one
			if q = bytes.IndexByte(d[i:], '"') + i; q < i {
				return nil, false, false
			}
		}
	}
}

// decoded returns the unescaped form of a string body read by str. It is
// valid until the next call.
func (w *secretWalker) decoded(raw []byte, esc bool) []byte {
	if !esc {
		return raw // invalid UTF-8 matches nothing either way
	}
	if w.buf == nil {
		w.buf = unquoteBufs.Get().(*unquoteBuf)
	}
	w.buf.b = AppendUnquoted(w.buf.b[:0], raw)
	return w.buf.b
}

func (w *secretWalker) ws() {
	d := w.data
	for w.i < len(d) && d[w.i] <= ' ' && (d[w.i] == ' ' || d[w.i] == '\t' || d[w.i] == '\n' || d[w.i] == '\r') {
		w.i++
	}
}

// findCredential is FindCredential behind the detector's pre-check; a
// string that spells a shape with JSON \u00XX escapes (JSON text held in
// a string, "\u0041KIA…", "p\u0061ssword: …") or URL-encoded twice
// ("%2540") or holding URL-encoded escapes ("%5Cu0041KIA…") is also
// searched in its unescaped form (redact.UnescapeASCII), as the redactor
// masks it (redact.Masker.Text). esc: s had escapes (else it holds no
// '\\'); pct: the record holds "%25" or "%5Cu00".
func findCredential(s []byte, esc, pct bool) (kind string, ok bool) {
	if redact.MayHoldCredentialText(s) {
		if _, _, kind, ok = FindCredential(s); ok {
			return kind, ok
		}
	}
	if (esc && bytes.IndexByte(s, '\\') >= 0 || pct) && redact.HasASCIIEscape(s) {
		if u := redact.UnescapeASCII(nil, s); redact.MayHoldCredentialText(u) {
			_, _, kind, ok = FindCredential(u)
		}
	}
	return kind, ok
}

// anchorAfterUnescape reports whether the body of a JSON string, once
// unescaped, may hold a byte at which a credential can be revealed
// (redact.IsCredentialAnchor), without unescaping it: ASCII-escaped text
// (Python's default, \uXXXX for every non-ASCII character) is then passed
// over in one look-up a byte. Only a literal anchor byte or a \u escape
// below U+0080 can be one (\" \\ \/ \b \f \n \r \t are not); the body
// must be one str accepted. A \u escape at or above U+0080 is one only
// for a CJK label's separator (redact.IsCJKSeparator: "密码\uff1a…",
// Python's ensure_ascii of "密码：…"), which the pre-check of the
// unescaped text stops at.
func anchorAfterUnescape(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		for i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' && (raw[i+2] != '0' || raw[i+3] != '0' || raw[i+4] >= '8') {
			if cjkSepEscape(raw, i) {
				return true
			}
			i += 6 // as in PrintableAfterUnescape
		}
		if i >= len(raw) {
			break
		}
		c := raw[i]
		if c != '\\' {
			if redact.IsCredentialAnchor(c) {
				return true
			}
			continue
		}
		if i+1 < len(raw) && raw[i+1] == 'u' {
			if i+5 >= len(raw) || raw[i+2] == '0' && raw[i+3] == '0' && hexVal(raw[i+4]) < 8 {
				return true
			}
			i += 5
			continue
		}
		i++
	}
	return false
}

// cjkSepEscape reports whether the \uXXXX escape at raw[i] (its four
// hex digits valid) is one of a CJK label's separator
// (redact.IsCJKSeparator: ff1a ：, ff1d ＝, 662f 是, 4e3a 为, 70ba 為,
// 306f は) right after what may be a key (cjkKeyBefore): all six are
// common in Chinese or Japanese text, almost never after a key. The four
// digits, in either case, are compared at once, little-endian
// (TestCJKSepEscape checks every escape against IsCJKSeparator).
func cjkSepEscape(raw []byte, i int) bool {
	if !cjkSepLast[raw[i+5]] {
		return false
	}
	return cjkSepAt(raw, i)
}

// cjkSepLast marks the last hex digits of the six separators' escapes:
// cjkSepEscape's first look, inlined, turns away 13 escapes in 16.
var cjkSepLast = [256]bool{'a': true, 'A': true, 'd': true, 'D': true, 'f': true, 'F': true}

// cjkSepAt is cjkSepEscape past its first look.
func cjkSepAt(raw []byte, i int) bool {
	switch binary.LittleEndian.Uint32(raw[i+2:]) | 0x20202020 { // ('0'-'9' have 0x20 set)
	case 0x61316666, 0x64316666: // ff1a ff1d
		return cjkKeyBefore(raw, i, true)
	case 0x66323636, 0x61336534, 0x61623037, 0x66363033: // 662f 4e3a 70ba 306f
		return cjkKeyBefore(raw, i, false)
	}
	return false
}

// cjkKeyBefore reports whether what ends right before raw[i] may be the
// key of a CJK separator there, as redact's cjkKey reads one: past up to
// three spaces and, before a full-width ':' or '=' (fullWidth), a closing
// quote (escaped or not) or a copula ("密码为：…", "Token为：…"), the last character of a
// CJK label (redact.IsCJKLabelEnd), as a \uXXXX escape or in UTF-8, or
// before a full-width separator an ASCII key's last byte (a letter, a
// digit, '-', '_' or '.': "password：…"). (A "\\u…" that is an escaped
// backslash and text is read as an escape: one decoding more, never one
// less.)
func cjkKeyBefore(raw []byte, i int, fullWidth bool) bool {
	j := i
	for k := 0; k < 3 && j > 0 && raw[j-1] == ' '; k++ {
		j--
	}
	if fullWidth && j > 0 && (raw[j-1] == '"' || raw[j-1] == '\'') {
		j--
		for k := 0; k < 7 && j > 0 && raw[j-1] == '\\'; k++ {
			j--
		}
	}
	asciiKey := func(j int) bool {
		return j > 0 && (isAlnum(raw[j-1]) || raw[j-1] == '-' || raw[j-1] == '_' || raw[j-1] == '.')
	}
	r, n := lastRune(raw[:j])
	if n == 0 {
		return fullWidth && asciiKey(j)
	}
	if fullWidth && redact.IsCJKSeparator(r) && r != '：' && r != '＝' {
		j -= n // a copula before the colon ("Token为：…" too)
		for k := 0; k < 3 && j > 0 && raw[j-1] == ' '; k++ {
			j--
		}
		if r, n = lastRune(raw[:j]); n == 0 {
			return asciiKey(j)
		}
	}
	return redact.IsCJKLabelEnd(r)
}

// lastRune is the character at or above U+0080 that b ends in, as a
// \uXXXX escape or in UTF-8, and its length in b; n is 0 where b ends in
// an ASCII byte (or nothing).
func lastRune(b []byte) (r rune, n int) {
	j := len(b)
	switch {
	case j >= 6 && b[j-6] == '\\' && b[j-5] == 'u' && isHex[b[j-4]]&isHex[b[j-3]]&isHex[b[j-2]]&isHex[b[j-1]] != 0:
		return hex4(b[j-4:]), 6
	case j > 0 && b[j-1] >= 0x80:
		return utf8.DecodeLastRune(b)
	}
	return 0, 0
}

// PrintableAfterUnescape reports whether the body of a JSON string (as
// Scan accepted it), once unescaped (AppendUnquoted), may hold a printable
// ASCII byte (0x21-0x7E), without unescaping it: ASCII-escaped text of a
// script other than Latin (Python's default: \uXXXX at or above U+0080,
// \n, \t) holds none, and redact.MayStartCredential is false on it.
// Only a literal printable byte, \" \\ \/ and a \u escape of one can
// be one.
func PrintableAfterUnescape(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		// Runs of \uXXXX at or above U+0080 (a valid body's hex digits at
		// or above '8' are 8-f).
		for i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' && (raw[i+2] != '0' || raw[i+3] != '0' || raw[i+4] >= '8') {
			i += 6
		}
		if i >= len(raw) {
			break
		}
		c := raw[i]
		if c != '\\' {
			if c-0x21 < 0x7f-0x21 {
				return true
			}
			continue
		}
		if i+1 >= len(raw) {
			return true
		}
		switch raw[i+1] {
		case 'b', 'f', 'n', 'r', 't':
			i++
			continue
		case 'u':
			if i+5 >= len(raw) {
				return true
			}
			if raw[i+2] == '0' && raw[i+3] == '0' {
				hi, lo := hexVal(raw[i+4]), hexVal(raw[i+5])
				if hi < 0 || lo < 0 || hi < 8 && byte(hi<<4|lo)-0x21 < 0x7f-0x21 {
					return true
				}
			}
			i += 5
			continue
		}
		return true // \" \\ \/
	}
	return false
}

func (w *secretWalker) walk() (string, string, bool) {
	d := w.data
	var stack [16]pathFrame
	frames := stack[:0] // open containers; grows past 16 levels
	secretKey := ""     // class of the key whose value comes next
	for {
		w.ws()
		if w.i >= len(d) {
			return "", "", false
		}
		// a value
		switch c := d[w.i]; c {
		case '{', '[':
			w.i++
			frames = append(frames, pathFrame{obj: c == '{'})
			w.ws()
			if w.i < len(d) && (d[w.i] == '}' || d[w.i] == ']') {
				w.i++
				frames = frames[:len(frames)-1]
				break
			}
			if c == '[' {
				secretKey = ""
				continue
			}
			p, k, ok, stop := w.key(frames, &secretKey)
			if ok || stop {
				return p, k, ok
			}
			continue
		case '"':
			raw, esc, ok := w.str()
			if !ok {
				return "", "", false
			}
			if secretKey == keyPagerDuty {
				if redact.PagerDutyKeyValue(w.decoded(raw, esc)) {
					return framePath(w.data, frames, false), KeyCredential, true
				}
			} else if secretKey != "" {
				if v := w.decoded(raw, esc); len(v) > 0 && !masked(v) && !redactedMark(v) && !(secretKey == KeyCredential && (plainWord(v) || w.pwdKey && redact.PWDPath(pwdName, v))) {
					return framePath(w.data, frames, false), secretKey, true
				}
			}
			if esc && !anchorAfterUnescape(raw) {
				break
			}
			if kind, ok := findCredential(w.decoded(raw, esc), esc, w.pct); ok {
				return framePath(w.data, frames, false), kind, true
			}
		default: // number or literal
			start := w.i
			for w.i < len(d) && (isAlnum(d[w.i]) || d[w.i] == '-' || d[w.i] == '+' || d[w.i] == '.') {
				w.i++
			}
			if w.i == start {
				return "", "", false
			}
		}
		// after a value: close containers, or go on to the next member
		for {
			w.ws()
			if len(frames) == 0 || w.i >= len(d) {
				return "", "", false
			}
			f := &frames[len(frames)-1]
			c := d[w.i]
			w.i++
			if c == ',' {
				if f.obj {
					p, k, ok, stop := w.key(frames, &secretKey)
					if ok || stop {
						return p, k, ok
					}
				} else {
					f.index++
					secretKey = ""
				}
				break
			}
			if c != '}' && c != ']' {
				return "", "", false
			}
			frames = frames[:len(frames)-1]
		}
	}
}

// key reads an object key and its colon, checks the key itself, and sets
// *secretKey to its class. stop is set on malformed input.
func (w *secretWalker) key(frames []pathFrame, secretKey *string) (path, kind string, ok, stop bool) {
	d := w.data
	w.ws()
	if w.i >= len(d) || d[w.i] != '"' {
		return "", "", false, true
	}
	raw, esc, good := w.str()
	if !good {
		return "", "", false, true
	}
	frames[len(frames)-1].keyStart, frames[len(frames)-1].keyEnd = w.i-1-len(raw), w.i-1
	w.pwdKey = len(raw) == 3 && raw[0]|0x20 == 'p' && raw[1]|0x20 == 'w' && raw[2]|0x20 == 'd' // ("PWD": "/srv/app" is no credential)
	if k, known := knownKeys.lookup(raw); known && !esc {
		*secretKey = k
	} else {
		k := w.decoded(raw, esc)
		if kind, ok := keyKinds.get(k); ok {
			*secretKey = kind
		} else {
			if kind, ok := findCredential(k, esc, w.pct); ok {
				return framePath(w.data, frames, true), kind, true, false
			}
			*secretKey = walkKeyClass(k)
			keyKinds.put(k, *secretKey)
		}
	}
	w.ws()
	if w.i >= len(d) || d[w.i] != ':' {
		return "", "", false, true
	}
	w.i++
	return "", "", false, false
}

// knownKeyNames are the keys the reference sends (envelopes, responses,
// bodies, provenance, params, metadata): classified once, at start, so that
// a record made of them costs no hash and no classification. Any other key
// goes through keyKinds.
var knownKeyNames = func() []string {
	ks := append([]string(nil), FieldKeys[:]...)
	for _, p := range SubPaths {
		ks = append(ks, p[strings.LastIndexByte(p, '.')+1:])
	}
	return append(ks, "_jiuwenswarm_server_push", "a2a_metadata", "agent_id", "agent_ref", "auth", "channel_context",
		"chat_id", "content", "context_id", "converted_at", "converter", "correlation_id", "details", "expected_output_modes",
		"intent", "kind", "message_id", "query", "service_id", "session_update_kind", "source_agent_id",
		"source_chunk_type", "source_protocol", "success", "task_id", "turns", "user_id", "workspace_key", "usage",
		"input_tokens", "output_tokens", "total_tokens", "role", "name", "uri", "files", "attachments", "_meta",
		"tracestate", "code", "message", "data", "text", "model", "messages", "tool_calls", "arguments", "function",
		"mime_type", "size", "title", "url", "index", "finish_reason", "sessionUpdate", "toolCallId", "status_code")
}()

// knownKeys is the table of knownKeyNames: open addressing, linear
// probing, filled at start and never written again (safe for concurrent
// shards). A key is held as its length and its first and last eight
// bytes, which a look-up loads anyway to hash it: a key of up to 16
// bytes is compared without a call. A key that holds a credential itself
// is left out: its hit needs the walk's path.
var knownKeys = func() *keyClassTable {
	t := &keyClassTable{}
	for _, k := range knownKeyNames {
		if _, _, _, cred := FindCredential([]byte(k)); cred || len(k) == 0 || len(k) > 255 {
			continue
		}
		if _, ok := t.lookup([]byte(k)); ok {
			continue
		}
		a, b := keyWords([]byte(k))
		h := knownKeyHash(a, b, len(k))
		for t.slot[h].n != 0 {
			h = (h + 1) % knownKeySlots
		}
		t.slot[h] = knownKey{n: uint8(len(k)), a: a, b: b, key: k, kind: walkKeyClass([]byte(k))}
	}
	for f, k := range FieldKeys {
		if h, ok := t.find([]byte(k)); ok {
			t.slot[h].top = uint8(f) + 1
		}
	}
	return t
}()

const knownKeySlots = 256 // a power of two, at least twice the keys

type keyClassTable struct {
	slot [knownKeySlots]knownKey
}

// knownKey is one slot of keyClassTable: what a look-up reads, in one
// or two cache lines.
type knownKey struct {
	n uint8 // len(key); 0: empty
	// top is 1 + the Field whose wire key this is (FieldKeys), or 0: Scan
	// reads a top-level key's field and its secret class in one look-up.
	top  uint8
	a, b uint64 // keyWords(key)
	key  string
	kind string
}

// keyWords returns the first and the last eight bytes of k (little-endian;
// a key shorter than eight bytes is a, zero-padded, and b is 0).
func keyWords(k []byte) (a, b uint64) {
	if n := len(k); n >= 8 {
		return binary.LittleEndian.Uint64(k), binary.LittleEndian.Uint64(k[n-8:])
	}
	for i, c := range k {
		a |= uint64(c) << (8 * i)
	}
	return a, 0
}

func knownKeyHash(a, b uint64, n int) uint {
	return uint(((a^b<<1^uint64(n))*0x9E3779B97F4A7C15)>>56) % knownKeySlots
}

func (t *keyClassTable) lookup(k []byte) (kind string, ok bool) {
	if h, ok := t.find(k); ok {
		return t.slot[h].kind, true
	}
	return "", false
}

// find returns the slot of the key k.
func (t *keyClassTable) find(k []byte) (uint, bool) {
	a, b := keyWords(k)
	return t.findWords(a, b, k)
}

// findWords is find with k's keyWords given.
func (t *keyClassTable) findWords(a, b uint64, k []byte) (uint, bool) {
	n := len(k)
	for h := knownKeyHash(a, b, n); t.slot[h].n != 0; h = (h + 1) % knownKeySlots {
		if e := &t.slot[h]; int(e.n) == n && e.a == a && e.b == b && (n <= 16 || e.key == string(k)) {
			return h, true
		}
	}
	return 0, false
}

// keyCache remembers what a key is, for keys that hold no credential
// themselves: records repeat the same few dozen keys, and classifying one
// (FindCredential, then SecretKeyKind) costs more than looking it up.
// It is a fixed table of immutable entries, safe for concurrent shards: a
// racing store only replaces an entry, and a key an attacker varies only
// evicts others. Keys holding a credential are never stored (their hit
// needs the path, and they are rare).
//
// A key has a set of two entries. Direct-mapped (one entry), two keys a
// record repeats evicted each other at every record when the process's
// seed put them in one slot: each record was then walked for secrets
// (Scan could not classify the evicted key) and allocated a new entry,
// for the whole life of the process. With 30 keys outside knownKeys in a
// record, one process in three drew such a pair; with two ways and 1024
// sets, three of the 30 must share a set, about one in 250.
type keyCache struct {
	seed    maphash.Seed
	entries [keyCacheSets][2]atomic.Pointer[keyEntry]
}

type keyEntry struct{ key, kind string }

const (
	keyCacheSets   = 1024
	keyCacheMaxLen = 64
)

var keyKinds = &keyCache{seed: maphash.MakeSeed()}

// set returns k's set and the way a store of k replaces when both are
// taken (a bit of the hash the set index does not use).
func (c *keyCache) set(k []byte) (*[2]atomic.Pointer[keyEntry], int) {
	h := maphash.Bytes(c.seed, k)
	return &c.entries[h%keyCacheSets], int(h>>63) & 1
}

func (c *keyCache) get(k []byte) (kind string, ok bool) {
	if len(k) > keyCacheMaxLen {
		return "", false
	}
	set, _ := c.set(k)
	for w := range set {
		if e := set[w].Load(); e != nil && e.key == string(k) {
			return e.kind, true
		}
	}
	return "", false
}

func (c *keyCache) put(k []byte, kind string) {
	if len(k) > keyCacheMaxLen {
		return
	}
	set, victim := c.set(k)
	e := &keyEntry{key: string(k), kind: kind}
	for w := range set {
		if set[w].CompareAndSwap(nil, e) {
			return
		}
	}
	set[victim].Store(e)
}

// framePath renders the position of the open frames; for a key hit the
// last key is replaced by "{key}".
func framePath(data []byte, frames []pathFrame, keyHit bool) string {
	var b []byte
	for n, f := range frames {
		if !f.obj {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
			continue
		}
		if keyHit && n == len(frames)-1 {
			break
		}
		key := AppendUnquoted(nil, data[f.keyStart:f.keyEnd])
		if plainKey(key) {
			if len(b) > 0 {
				b = append(b, '.')
			}
			b = append(b, key...)
		} else {
			b = append(b, '[')
			b = strconv.AppendQuote(b, string(key))
			b = append(b, ']')
		}
	}
	if keyHit {
		if len(b) > 0 {
			b = append(b, '.')
		}
		b = append(b, "{key}"...)
	}
	if len(b) == 0 {
		return "$"
	}
	return string(b)
}

func plainKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !wordByte[c] && c != '$' && c != '@' {
			return false
		}
	}
	return true
}
