package jsonlog

import (
	"bytes"

	"github.com/e2atap/e2atap/redact"
)

// keyKind is what a key's name says about its value, before the key's place
// in the record is taken into account.
type keyKind uint8

const (
	keyPlain keyKind = iota
	// keyCredential: password, secret, api key, authorization, credential,
	// private key, cookie...: every scalar under it is a credential.
	keyCredential
	// keyToken: the last word is "token" (access_token, idToken): string
	// values are credentials, numbers are kept (max_token is a count).
	keyToken
	// keyRef: the last word is "ref" (api_key_ref, credential_ref): string
	// values are masked; objects (agent_ref is a routing triple) are walked.
	keyRef
	// keyEmail, keyPhone: the value is personal data whatever its shape.
	keyEmail
	keyPhone
	// keyNamed: "<tool>_key" of a tool the classifier does not know
	// (redact.KeyNamedKey): a string that reads as a key is masked.
	keyNamed
)

// classifyKey is redact.ClassifyKey as the record log's policy reads it:
// authorization and cookie keys are credentials; user_id is a field the
// rules read, kept (personal data inside it is still masked).
func classifyKey(k []byte) keyKind {
	switch redact.ClassifyKey(k) {
	case redact.KeyCredential, redact.KeyAuthorization, redact.KeyCookie:
		return keyCredential
	case redact.KeyToken:
		return keyToken
	case redact.KeyRef:
		return keyRef
	case redact.KeyEmail:
		return keyEmail
	case redact.KeyPhone:
		return keyPhone
	case redact.KeyNamedKey:
		return keyNamed
	}
	return keyPlain
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isLower(c byte) bool { return c >= 'a' && c <= 'z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }

func lower(c byte) byte {
	if isUpper(c) {
		return c + 'a' - 'A'
	}
	return c
}

// eqFold compares ASCII case-insensitively without allocating.
func eqFold(b []byte, s string) bool {
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

func hasPrefixFold(b []byte, s string) bool {
	return len(b) >= len(s) && eqFold(b[:len(s)], s)
}

// isMaskToken reports whether s is exactly a mask this package writes:
// "******", "******(fp:16 hex)" (8 hex: logs written before fingerprints
// had 64 bits) or "******(len:digits)". Such values are not
// masked again, so redacting a redacted log changes nothing.
func isMaskToken(s []byte) bool {
	const m = "******"
	if !bytes.HasPrefix(s, []byte(m)) {
		return false
	}
	s = s[len(m):]
	if len(s) == 0 {
		return true
	}
	switch {
	case bytes.HasPrefix(s, []byte("(fp:")) && (len(s) == 13 || len(s) == 5+redact.FingerprintHex) && s[len(s)-1] == ')':
		for _, c := range s[4 : len(s)-1] {
			if !isDigit(c) && (c < 'a' || c > 'f') {
				return false
			}
		}
		return true
	case bytes.HasPrefix(s, []byte("(len:")) && len(s) > 6 && s[len(s)-1] == ')':
		for _, c := range s[5 : len(s)-1] {
			if !isDigit(c) {
				return false
			}
		}
		return true
	}
	return false
}

// span is one match inside a string: [start, end) and the rule that masks
// it. keep is how many leading bytes of the span stay visible (the
// "data:image/png;base64," of a data: URL, the "Bearer " of a header).
type match struct {
	start, end, keep int
	rule             Rule
}

// findDataURL returns the first data: URL's payload in s at or after from;
// keep covers "data:<mediatype>[;params]," so the media type stays visible.
func findDataURL(s []byte, from int) (match, bool) {
	for from < len(s) {
		j := indexFold(s[from:], "data:")
		if j < 0 {
			return match{}, false
		}
		a := from + j
		from = a + 5
		if a > 0 && isAlnum(s[a-1]) {
			continue
		}
		k := a + 5
		for k < len(s) && s[k] != ',' && isMediaChar(s[k]) {
			k++
		}
		if k >= len(s) || s[k] != ',' {
			continue
		}
		k++
		e := k
		for e < len(s) && isDataChar(s[e]) {
			e++
		}
		if e == k {
			continue
		}
		return match{start: a, end: e, keep: k - a, rule: RuleDataURL}, true
	}
	return match{}, false
}

func isMediaChar(c byte) bool {
	return isAlnum(c) || c == '/' || c == '+' || c == '.' || c == '-' || c == ';' || c == '=' || c == '_'
}

func isDataChar(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '%' || c == '-' || c == '_' || c == '.' || c == '~'
}

func indexFold(s []byte, pat string) int {
	for i := 0; i+len(pat) <= len(s); i++ {
		j := bytes.IndexByte(s[i:], pat[0])
		if u := bytes.IndexByte(s[i:], pat[0]-'a'+'A'); u >= 0 && (j < 0 || u < j) {
			j = u
		}
		if j < 0 {
			return -1
		}
		i += j
		if i+len(pat) <= len(s) && eqFold(s[i:i+len(pat)], pat) {
			return i
		}
	}
	return -1
}
