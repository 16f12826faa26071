package e2a

import (
	"strconv"
	"sync"
)

// Credential detection for rule e2a.secret and for the redactor. Nothing
// here allocates unless a credential is found (and then only ScanSecrets,
// to build the path); no function returns or logs the secret itself.

// Credential kinds FindCredential reports.
const (
	CredBearer = "bearer" // the token of "Bearer <token>"
	CredJWT    = "jwt"    // eyJ….….…
	CredSK     = "sk"     // sk-… API keys
	CredGHP    = "ghp"    // GitHub personal access tokens
	CredGLPAT  = "glpat"  // GitLab personal access tokens
)

// wordByte marks the bytes that continue a token: [A-Za-z0-9_-]. A
// credential shape only starts where the byte before it is not one of
// these (so "task-12345678" holds no sk- key, and neither does
// "my_sk-12345678").
var wordByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	return t
}()

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isB64Token marks the characters of an RFC 6750 b64token (before the
// trailing '=' padding).
func isB64Token(c byte) bool {
	return isAlnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/'
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

// FindCredential returns the span and kind of the first credential-shaped
// substring of s (the leftmost; the span of a Bearer credential is the
// token after the scheme, its position is that of the word "Bearer"):
//
//   - "Bearer <token>" (kind "bearer"): the scheme in any ASCII case, one or
//     more spaces or tabs, then an RFC 6750 b64token of at least 8
//     characters. So that prose ("the Bearer authentication scheme") is not
//     taken for a credential, a token made only of letters must be at least
//     20 characters long.
//   - JWT, eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+ ("jwt")
//   - sk-[A-Za-z0-9_-]{8,} ("sk")
//   - ghp_[A-Za-z0-9]{20,} ("ghp")
//   - glpat-[A-Za-z0-9_-]{20,} ("glpat")
//
// Every shape must start at a word boundary: the byte before it, if any,
// is not in [A-Za-z0-9_-]. The prefixes (eyJ, sk-, ghp_, glpat-) are case
// sensitive. s is matched byte-wise: non-ASCII bytes are boundaries.
func FindCredential(s []byte) (start, end int, kind string, ok bool) {
	n := len(s)
	for i := 0; i < n; {
		c := s[i]
		if !wordByte[c] {
			i++
			continue
		}
		// s[i] starts a word.
		switch c {
		case 'b', 'B':
			if st, en, ok := matchBearer(s, i); ok {
				return st, en, CredBearer, true
			}
		case 'e':
			if en, ok := matchJWT(s, i); ok {
				return i, en, CredJWT, true
			}
		case 's':
			if en, ok := matchRun(s, i, "sk-", 8, wordByte[:]); ok {
				return i, en, CredSK, true
			}
		case 'g':
			if en, ok := matchRun(s, i, "ghp_", 20, alnumByte[:]); ok {
				return i, en, CredGHP, true
			}
			if en, ok := matchRun(s, i, "glpat-", 20, wordByte[:]); ok {
				return i, en, CredGLPAT, true
			}
		}
		for i++; i < n && wordByte[s[i]]; i++ {
		}
	}
	return 0, 0, "", false
}

var alnumByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isAlnum(byte(c))
	}
	return t
}()

// matchRun matches prefix followed by at least min bytes of class at
// s[i:] and returns the end of the longest such run.
func matchRun(s []byte, i int, prefix string, min int, class []bool) (int, bool) {
	if len(s)-i < len(prefix)+min || string(s[i:i+len(prefix)]) != prefix {
		return 0, false
	}
	j := i + len(prefix)
	for j < len(s) && class[s[j]] {
		j++
	}
	return j, j-i-len(prefix) >= min
}

func matchJWT(s []byte, i int) (int, bool) {
	if len(s)-i < 8 || s[i+1] != 'y' || s[i+2] != 'J' {
		return 0, false
	}
	j := i + 3
	for seg := 0; seg < 3; seg++ {
		if seg > 0 {
			if j >= len(s) || s[j] != '.' {
				return 0, false
			}
			j++
		}
		k := j
		for j < len(s) && wordByte[s[j]] {
			j++
		}
		if j == k {
			return 0, false
		}
	}
	return j, true
}

func matchBearer(s []byte, i int) (int, int, bool) {
	if !hasFoldPrefix(s[i:], "bearer") {
		return 0, 0, false
	}
	j := i + len("bearer")
	k := j
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	if j == k {
		return 0, 0, false
	}
	start := j
	lettersOnly := true
	for j < len(s) && isB64Token(s[j]) {
		if c := lower(s[j]); c < 'a' || c > 'z' {
			lettersOnly = false
		}
		j++
	}
	if j == start {
		return 0, 0, false
	}
	for j < len(s) && s[j] == '=' {
		lettersOnly = false
		j++
	}
	if n := j - start; n < 8 || lettersOnly && n < 20 {
		return 0, 0, false
	}
	return start, j, true
}

// Key classes of rule e2a.secret, as ScanSecrets reports them.
const (
	KeyBearerToken   = "bearer_token"
	KeyAPIKey        = "api_key"
	KeyPassword      = "password"
	KeyAuthorization = "authorization"
)

// SecretKeyKind returns the class of a secret-carrying key, or "": the key
// must be, ASCII case-insensitively and as a whole, bearer_token, api_key
// (or apikey, api-key), password or authorization.
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
	return ""
}

// IsSecretKey reports whether key is one of the keys of rule e2a.secret
// (see SecretKeyKind). Substrings do not count: "password_hint" is not.
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
// The common case (nothing found) does not allocate: a pre-pass over the
// raw bytes looks for the few anchors a hit needs and only then is the
// record walked. data should be valid JSON; on invalid input the result is
// unspecified but ScanSecrets does not panic.
func ScanSecrets(data []byte) (path string, kind string, found bool) {
	if !mayHoldSecret(data) {
		return "", "", false
	}
	w := secretWalker{data: data}
	path, kind, found = w.walk()
	if w.buf != nil {
		w.buf.b = w.buf.b[:0]
		unquoteBufs.Put(w.buf)
	}
	return path, kind, found
}

// anchorByte marks the bytes mayHoldSecret stops at.
var anchorByte = func() (t [256]uint8) {
	for _, c := range []byte("\\J-_bBwWzZkK") {
		t[c] = 1
	}
	return t
}()

// mayHoldSecret is a conservative pre-check on the raw record: a hit of
// ScanSecrets needs one of these anchors in the raw bytes, since only a
// \u00XX escape can spell an ASCII letter or digit another way.
func mayHoldSecret(d []byte) bool {
	n := len(d)
	t := &anchorByte
	for i := 0; i < n; i++ {
		// eight bytes a round while there is nothing to look at
		for i+8 <= n {
			b := d[i : i+8 : i+8]
			if t[b[0]]|t[b[1]]|t[b[2]]|t[b[3]]|t[b[4]]|t[b[5]]|t[b[6]]|t[b[7]] != 0 {
				break
			}
			i += 8
		}
		if i >= n {
			break
		}
		if t[d[i]] == 0 {
			continue
		}
		switch d[i] {
		case '\\':
			if i+4 < n && d[i+1] == 'u' && d[i+2] == '0' && d[i+3] == '0' && d[i+4] >= '2' && d[i+4] <= '7' {
				return true
			}
			i++ // an escaped backslash is not the start of an escape
		case 'J': // eyJ
			if i >= 2 && d[i-2] == 'e' && d[i-1] == 'y' {
				return true
			}
		case '-': // sk-, glpat-, api-key
			if i >= 2 && d[i-2] == 's' && d[i-1] == 'k' ||
				i >= 5 && string(d[i-5:i]) == "glpat" ||
				i >= 3 && hasFoldPrefix(d[i-3:], "api") {
				return true
			}
		case '_': // ghp_, api_key (bearer_token starts with b)
			if i >= 3 && (string(d[i-3:i]) == "ghp" || hasFoldPrefix(d[i-3:], "api")) {
				return true
			}
		case 'b', 'B': // Bearer, bearer_token
			if hasFoldPrefix(d[i+1:], "earer") {
				return true
			}
		case 'w', 'W': // password
			if i >= 4 && hasFoldPrefix(d[i-4:], "password") {
				return true
			}
		case 'z', 'Z': // authorization
			if i >= 7 && hasFoldPrefix(d[i-7:], "authorization") {
				return true
			}
		case 'k', 'K': // apikey
			if i >= 3 && hasFoldPrefix(d[i-3:], "apikey") {
				return true
			}
		}
	}
	return false
}

type unquoteBuf struct{ b []byte }

var unquoteBufs = sync.Pool{New: func() any { return new(unquoteBuf) }}

// pathFrame is one open container of the walk.
type pathFrame struct {
	obj   bool
	index int    // arrays: index of the current element
	key   []byte // objects: raw (still escaped) current key
}

type secretWalker struct {
	data []byte
	i    int
	buf  *unquoteBuf
}

// str reads the string at w.data[w.i] ('"') and returns its raw body and
// whether it has escapes; ok is false on malformed input.
func (w *secretWalker) str() (raw []byte, esc, ok bool) {
	d := w.data
	i := w.i + 1
	start := i
	for i < len(d) {
		switch c := d[i]; {
		case c == '"':
			w.i = i + 1
			return d[start:i], esc, true
		case c == '\\':
			esc = true
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
		case c < 0x20:
			return nil, false, false
		default:
			i++
		}
	}
	return nil, false, false
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
	for w.i < len(d) && (d[w.i] == ' ' || d[w.i] == '\t' || d[w.i] == '\n' || d[w.i] == '\r') {
		w.i++
	}
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
			v := w.decoded(raw, esc)
			if secretKey != "" && len(v) > 0 && !masked(v) {
				return framePath(frames, false), secretKey, true
			}
			if _, _, kind, ok := FindCredential(v); ok {
				return framePath(frames, false), kind, true
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
	frames[len(frames)-1].key = raw
	k := w.decoded(raw, esc)
	if _, _, kind, ok := FindCredential(k); ok {
		return framePath(frames, true), kind, true, false
	}
	*secretKey = SecretKeyKind(k)
	w.ws()
	if w.i >= len(d) || d[w.i] != ':' {
		return "", "", false, true
	}
	w.i++
	return "", "", false, false
}

// framePath renders the position of the open frames; for a key hit the
// last key is replaced by "{key}".
func framePath(frames []pathFrame, keyHit bool) string {
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
		key := AppendUnquoted(nil, f.key)
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
