package redact

// KeyClass is what a key's name says about its value.
type KeyClass uint8

const (
	KeyPlain KeyClass = iota
	// KeyCredential: password, passwd, pwd, passphrase, secret, credential,
	// api key, private key, access key, account key, bearer, auth, sig...:
	// every scalar under it is a credential.
	KeyCredential
	// KeyToken: the last word is "token" (access_token, idToken): string
	// values are credentials; a number is a count (max_token).
	KeyToken
	// KeyRef: the last word is "ref" (api_key_ref, credential_ref): names a
	// secret without being one, still masked; objects are walked.
	KeyRef
	// KeyAuthorization: an Authorization header (any scheme).
	KeyAuthorization
	// KeyCookie: Cookie, Set-Cookie.
	KeyCookie
	// KeyEmail, KeyPhone: personal data whatever its shape.
	KeyEmail
	KeyPhone
	// KeyUserID: user_id, userid (masked in text, as the reference does;
	// the record log keeps it, the rules read it).
	KeyUserID
)

// Credential reports a class whose string values are credentials.
func (c KeyClass) Credential() bool {
	return c == KeyCredential || c == KeyToken || c == KeyAuthorization || c == KeyCookie
}

// ClassifyKey classifies a key: it is split into words (at '_', '-', '.',
// ' ' and camelCase boundaries) compared ASCII case-insensitively. Words
// are compared whole, so "tokens", "max_tokens" and "token_count" are not
// credentials while "token", "access_token" and "accessToken" are;
// "password" and "secret" count anywhere ("mysecretvalue",
// "db_password"; not "secretary"). A key whose last word describes the credential rather
// than holding it ("password_hint", "secret_name", "authorization_url")
// is plain.
func ClassifyKey[T Text](k T) KeyClass { return classifyWords(k, 0, len(k)) }

// stopLast are last words that make a credential-named key plain.
var stopLast = []string{"url", "uri", "endpoint", "hint", "type", "method", "required", "enabled", "name",
	"names", "len", "length", "count", "policy", "scheme", "mode", "expires", "expiry", "ttl", "header",
	"field", "path", "file", "id", "ids", "kind", "version", "source", "set", "present", "rotated",
	"updated", "created", "at", "hash", "format", "prompt", "label", "description", "env", "strength"}

func classifyWords[T Text](s T, from, to int) KeyClass {
	k := s[from:to]
	n := len(k)
	if n < 3 || !mayBeSpecial(k) {
		return KeyPlain
	}
	var prev, last T
	kind := KeyPlain
	words := 0
	flush := func(w T) {
		before := prev
		prev, last = w, w
		words++
		if eqFold(w, "id") && eqFold(before, "user") && kind == KeyPlain {
			kind = KeyUserID
		}
		if len(w) < 3 {
			return
		}
		switch lower(w[0]) {
		case 'p', 's', 'a', 'c', 'b', 'k', 'u', 'i':
		default:
			return
		}
		switch {
		case eqFold(w, "authorization") || eqFold(w, "authorisation"):
			if kind == KeyPlain {
				kind = KeyAuthorization
			}
		case eqFold(w, "cookie") || eqFold(w, "cookies"):
			if kind == KeyPlain {
				kind = KeyCookie
			}
		case eqFoldAny(w, "pwd", "passphrase", "bearer", "apikey", "privatekey", "accesskey", "secretkey",
			"accountkey", "credential", "credentials", "creds", "signingkey", "sessionkey"):
			kind = KeyCredential
		case eqFold(w, "key") && eqFoldAny(before, "api", "private", "access", "secret", "signing", "encryption", "account", "master", "session", "client"):
			kind = KeyCredential
		case eqFold(w, "userid"):
			if kind == KeyPlain {
				kind = KeyUserID
			}
		}
	}
	start := -1
	for i := 0; i <= n; i++ {
		sep := i == n || k[i] == '_' || k[i] == '-' || k[i] == '.' || k[i] == ' '
		boundary := false
		if !sep && i > 0 && isUpper(k[i]) {
			p := k[i-1]
			boundary = isLowerByte(p) || is(p, cDigit) || (isUpper(p) && i+1 < n && isLowerByte(k[i+1]))
		}
		if (sep || boundary) && start >= 0 {
			flush(k[start:i])
			start = -1
		}
		if !sep && start < 0 {
			start = i
		}
	}
	// password, passwd and secret count inside any word.
	if kind != KeyCredential && (containsFold(k, "passw") || containsFold(k, "secret") && !containsFold(k, "secretar")) {
		kind = KeyCredential
	}
	if eqFold(last, "ref") {
		return KeyRef
	}
	if kind == KeyUserID && words > 2 {
		kind = KeyPlain // user_id_hash, owner_user_id: not the reference's rule
	}
	if kind != KeyPlain {
		if words > 1 && kind != KeyUserID && eqFoldAny(last, stopLast...) {
			return KeyPlain
		}
		return kind
	}
	switch {
	case eqFold(last, "sig") && words == 1, eqFold(k, "auth"):
		return KeyCredential
	case eqFold(last, "token"),
		len(last) > 5 && eqFold(last[len(last)-5:], "token") && eqFoldAny(last[:len(last)-5], "access", "refresh", "id", "auth", "api", "bearer", "session", "csrf", "xsrf", "oauth"):
		return KeyToken
	}
	switch {
	case eqFoldAny(k, "email", "e_mail", "e-mail", "email_address", "emailAddress", "mail"):
		return KeyEmail
	case eqFoldAny(k, "phone", "phone_number", "phoneNumber", "mobile", "mobile_phone", "telephone", "tel", "msisdn"):
		return KeyPhone
	}
	return KeyPlain
}

// specialWords are the substrings one of which every key that is not
// plain holds (case-insensitively).
var specialWords = []string{"pass", "pwd", "phone", "secret", "sig", "token", "tel", "auth", "key",
	"cookie", "cred", "bearer", "mail", "mobile", "msisdn", "ref", "user"}

// specialPair marks the first two letters of a special word.
var specialPair = func() (t [256][256]bool) {
	for _, w := range specialWords {
		for _, a := range []byte{w[0], w[0] - 'a' + 'A'} {
			for _, b := range []byte{w[1], w[1] - 'a' + 'A'} {
				t[a][b] = true
			}
		}
	}
	return t
}()

// mayBeSpecial is a one-pass pre-check: one table look-up a byte; only
// where two letters start a special word is the word compared.
func mayBeSpecial[T Text](k T) bool {
	for i := 0; i+3 <= len(k); i++ {
		if !specialPair[k[i]][k[i+1]] {
			continue
		}
		for _, w := range specialWords {
			if lower(k[i]) == w[0] && atFold(k, i, w) {
				return true
			}
		}
	}
	return false
}

func isUpper(c byte) bool     { return c >= 'A' && c <= 'Z' }
func isLowerByte(c byte) bool { return c >= 'a' && c <= 'z' }

func eqFold[T Text](b T, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != lower(s[i]) {
			return false
		}
	}
	return true
}

func eqFoldAny[T Text](b T, ss ...string) bool {
	for _, s := range ss {
		if eqFold(b, s) {
			return true
		}
	}
	return false
}

// containsFold reports whether k holds p (lower case), case-insensitively.
func containsFold[T Text](k T, p string) bool {
	for i := 0; i+len(p) <= len(k); i++ {
		if lower(k[i]) == p[0] && atFold(k, i, p) {
			return true
		}
	}
	return false
}
