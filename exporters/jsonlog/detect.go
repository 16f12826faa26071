package jsonlog

import "bytes"

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
)

// classifyKey splits a key into words (at '_', '-', '.', ' ' and camelCase
// boundaries, case-insensitively) and looks for credential words. Words are
// compared whole, so "tokens", "max_tokens" and "token_count" are not
// credentials while "token", "access_token" and "accessToken" are.
func classifyKey(k []byte) keyKind {
	var prev, last []byte
	kind := keyPlain
	n := len(k)
	start := -1
	flush := func(w []byte) {
		before := prev
		prev, last = w, w
		if len(w) < 3 {
			return
		}
		// Only words starting with these letters can be credential words.
		switch lower(w[0]) {
		case 'p', 's', 'a', 'c', 'b', 'k':
		default:
			return
		}
		switch {
		case eqFoldAny(w, "password", "passwd", "pwd", "passphrase", "secret", "secrets",
			"authorization", "credential", "credentials", "bearer", "cookie", "apikey",
			"privatekey", "accesskey", "secretkey", "clientsecret"):
			kind = keyCredential
		case eqFold(w, "key") && eqFoldAny(before, "api", "private", "access", "secret", "signing", "encryption"):
			kind = keyCredential
		}
	}
	for i := 0; i <= n; i++ {
		sep := i == n || k[i] == '_' || k[i] == '-' || k[i] == '.' || k[i] == ' '
		boundary := false
		if !sep && i > 0 && isUpper(k[i]) {
			p := k[i-1]
			boundary = isLower(p) || isDigit(p) || (isUpper(p) && i+1 < n && isLower(k[i+1]))
		}
		if (sep || boundary) && start >= 0 {
			flush(k[start:i])
			start = -1
		}
		if !sep && start < 0 {
			start = i
		}
	}
	// A reference names a secret without being one, but is still masked
	// (under its own rule); agent_ref objects are routing, not secrets.
	if eqFold(last, "ref") {
		return keyRef
	}
	if kind != keyPlain {
		return kind
	}
	switch {
	case eqFold(last, "token") || (len(last) > 5 && eqFold(last[len(last)-5:], "token") && eqFoldAny(last[:len(last)-5], "access", "refresh", "id", "auth", "api", "bearer", "session", "csrf", "xsrf")):
		return keyToken
	}
	// PII keys: the whole key must be one of these (so "phone_verified" or
	// "mobile_layout" are not).
	switch {
	case eqFoldAny(k, "email", "e_mail", "e-mail", "email_address", "emailAddress", "mail"):
		return keyEmail
	case eqFoldAny(k, "phone", "phone_number", "phoneNumber", "mobile", "mobile_phone", "telephone", "tel", "msisdn"):
		return keyPhone
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

func eqFoldAny(b []byte, ss ...string) bool {
	for _, s := range ss {
		if eqFold(b, s) {
			return true
		}
	}
	return false
}

func hasPrefixFold(b []byte, s string) bool {
	return len(b) >= len(s) && eqFold(b[:len(s)], s)
}

// isMaskToken reports whether s is exactly a mask this package writes:
// "******", "******(fp:8 hex)" or "******(len:digits)". Such values are not
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
	case bytes.HasPrefix(s, []byte("(fp:")) && len(s) == 13 && s[12] == ')':
		for _, c := range s[4:12] {
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

// findEmail returns the first e-mail address in s at or after from.
func findEmail(s []byte, from int) (match, bool) {
	lo := from // the local part never reaches back before from
	for from < len(s) {
		at := bytes.IndexByte(s[from:], '@')
		if at < 0 {
			return match{}, false
		}
		at += from
		from = at + 1
		a := at
		for a > lo && isLocalChar(s[a-1]) {
			a--
		}
		if a == at {
			continue
		}
		// Domain: labels of [A-Za-z0-9-] separated by dots, the last one
		// alphabetic and at least two letters long.
		e, dots, lastLabel := at+1, 0, at+1
		for e < len(s) {
			c := s[e]
			if isAlnum(c) || c == '-' {
				e++
				continue
			}
			if c == '.' && e+1 < len(s) && isAlnum(s[e+1]) && e > lastLabel {
				dots++
				e++
				lastLabel = e
				continue
			}
			break
		}
		if dots == 0 || e-lastLabel < 2 {
			continue
		}
		tldOK := true
		for _, c := range s[lastLabel:e] {
			if !isUpper(c) && !isLower(c) {
				tldOK = false
				break
			}
		}
		if !tldOK {
			continue
		}
		return match{start: a, end: e, rule: RuleEmail}, true
	}
	return match{}, false
}

func isLocalChar(c byte) bool {
	return isAlnum(c) || c == '.' || c == '_' || c == '%' || c == '+' || c == '-'
}

// findPhone returns the first phone number in s at or after from: an
// international number ("+" country code and 8 to 15 digits in all,
// single spaces, dashes, dots or parentheses between groups) or a CN mobile
// number (1[3-9] and 9 more digits, optionally after 86). A number must not
// touch a letter or digit on either side, so hex ids, UUIDs and longer
// digit runs are not phone numbers.
func findPhone(s []byte, from int) (match, bool) {
	for i := from; i < len(s); i++ {
		c := s[i]
		if c != '+' && !isDigit(c) {
			continue
		}
		if i > 0 && (isAlnum(s[i-1]) || s[i-1] == '+') {
			// Inside a word or a digit run: skip to its end.
			for i+1 < len(s) && isAlnum(s[i+1]) {
				i++
			}
			continue
		}
		if c == '+' {
			if e, ok := intlPhone(s, i); ok {
				return match{start: i, end: e, rule: RulePhone}, true
			}
			continue
		}
		// A bare digit run: exactly 11 digits 1[3-9]..., or 13 digits 861[3-9]...
		e := i
		for e < len(s) && isDigit(s[e]) {
			e++
		}
		if e < len(s) && isAlnum(s[e]) {
			i = e
			continue
		}
		run := s[i:e]
		if len(run) == 3 {
			if end, ok := cnGrouped(s, i); ok {
				return match{start: i, end: end, rule: RulePhone}, true
			}
		}
		if (len(run) == 11 && cnMobile(run)) || (len(run) == 13 && run[0] == '8' && run[1] == '6' && cnMobile(run[2:])) {
			return match{start: i, end: e, rule: RulePhone}, true
		}
		i = e - 1
	}
	return match{}, false
}

func cnMobile(d []byte) bool { return d[0] == '1' && d[1] >= '3' && d[1] <= '9' }

// intlPhone reads "+CC digits..." at s[i] == '+': 8 to 15 digits in all,
// groups separated by at most two of " -.()".
func intlPhone(s []byte, i int) (int, bool) {
	digits, e, lastDigit := 0, i+1, -1
	for e < len(s) {
		if isDigit(s[e]) {
			digits++
			lastDigit = e
			e++
			continue
		}
		k := e
		for k < len(s) && k-e < 2 && isPhoneSep(s[k]) {
			k++
		}
		if k == e || k >= len(s) || !isDigit(s[k]) || lastDigit < 0 {
			break
		}
		e = k
	}
	if digits < 8 || digits > 15 {
		return 0, false
	}
	end := lastDigit + 1
	if end < len(s) && isAlnum(s[end]) {
		return 0, false
	}
	return end, true
}

func isPhoneSep(c byte) bool {
	return c == ' ' || c == '-' || c == '.' || c == '(' || c == ')'
}

// cnGrouped matches a CN mobile number written 3-4-4 with spaces or dashes
// ("139-1234-5678") at s[i:], returning its end.
func cnGrouped(s []byte, i int) (int, bool) {
	groups := [3]int{3, 4, 4}
	e := i
	for g, n := range groups {
		if g > 0 {
			if e >= len(s) || (s[e] != ' ' && s[e] != '-') {
				return 0, false
			}
			e++
		}
		for k := 0; k < n; k++ {
			if e >= len(s) || !isDigit(s[e]) {
				return 0, false
			}
			e++
		}
	}
	if !cnMobile(s[i:]) || (e < len(s) && isAlnum(s[e])) {
		return 0, false
	}
	return e, true
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
