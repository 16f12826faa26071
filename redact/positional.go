package redact

// Credentials at a ':' that no key names: a Twitch chat token after
// "oauth:", and the password of Windows' "net use", which is an argument
// before or after "/user:" and no key=value pair. Both are found by sep
// (the ':' is an anchor of Find and of the pre-check) and gated by the
// needles "oauth:" and "net use" (credNeedles, cmdNeedles) on raw JSON and
// in a stream's tail.

// twitchOAuth matches a Twitch chat (IRC) token, "oauth:" and 30 lower-case
// letters and digits ("PASS oauth:…" on an IRC connection, a bot's
// config), whose ':' is s[i]. "oauth:" starts a word; the 30 bytes hold a
// letter and a digit and end the word.
//
// URL-encoded ("PASS+oauth%3A…"), s[i] is the '%' of "%3A"
// (twitchOAuthAt).
func twitchOAuth(s []byte, from, i int) (Match, bool) { return twitchOAuthAt(s, from, i, i+1) }

// twitchOAuthAt is twitchOAuth with the separator s[i:v] (':' or "%3A").
func twitchOAuthAt(s []byte, from, i, v int) (Match, bool) {
	k := i - 5
	if k < from || !atFold(s, k, "oauth") || !wordStart(s, k) {
		return Match{}, false
	}
	e := v
	letter, digit := false, false
	for e < len(s) && e-v <= 30 {
		c := s[e]
		if c >= 'a' && c <= 'z' {
			letter = true
		} else if c >= '0' && c <= '9' {
			digit = true
		} else {
			break
		}
		e++
	}
	if e-v != 30 || !letter || !digit || e < len(s) && is(s[e], word) {
		return Match{}, false
	}
	return Match{v, e, KindVendorToken}, true
}

// netUse matches the password of Windows' "net use" whose "/user:" ends
// at the ':' s[i]: "net use [drive:] \\host\share <password> /user:[domain\]user"
// or "net use [drive:] \\host\share /user:[domain\]user <password>" (also
// with its "*": no password given, it prompts). The line (from its start
// or the last of "\n;&|") holds "net use" before "/user:".
func netUse(s []byte, from, i int) (Match, bool) {
	u := i - 5
	if u < from+1 || !atFold(s, u, "/user") {
		return Match{}, false
	}
	if s[u-1] == '\\' && u-1 > from {
		u-- // "\/user:" in JSON text
	}
	if s[u-1] != ' ' && s[u-1] != '\t' {
		return Match{}, false
	}
	// The line's "net use".
	b := u
	for b > from && u-b < 512 && s[b-1] != '\n' && s[b-1] != '\r' && s[b-1] != ';' && s[b-1] != '&' && s[b-1] != '|' && !escLetter(s, b-1) {
		b--
	}
	n := -1
	for k := b; k+7 <= u; k++ {
		if atFold(s, k, "net use") && (k == b || !is(s[k-1], alnum)) && (s[k+7] == ' ' || s[k+7] == '\t') {
			n = k + 7
			break
		}
	}
	if n < 0 {
		return Match{}, false
	}
	// The arguments between "net use" and "/user:": the password is the
	// one after a \\host\share (or a "\\\\" escaped one in JSON text).
	args, na := lastArgs(n, u, func(p int) int {
		if s[p] == ' ' || s[p] == '\t' {
			return 1
		}
		return 0
	})
	share := func(a [2]int) bool { return a[1]-a[0] > 2 && s[a[0]] == '\\' && s[a[0]+1] == '\\' } // (or "\\\\" in JSON text)
	if na >= 2 && share(args[na-2]) && !share(args[na-1]) && !(args[na-1][1]-args[na-1][0] == 1 && s[args[na-1][0]] == '*') {
		p := args[na-1]
		if !isMask(s, p[0]) {
			return Match{p[0], p[1], KindKeyValue}, true
		}
	}
	// After the user: "/user:CORP\svc <password>", not an option ("/persistent:no").
	p := i + 1
	dom := false // a '\\' read as the domain's end
	for p < len(s) && p-i < 256 && s[p] != ' ' && s[p] != '\t' && s[p] != '\n' && s[p] != '\r' && s[p] != '"' {
		if p+1 < len(s) && escLetter(s, p+1) {
			// JSON text's "\n" ends the user, but a user named b…, f…,
			// n…, r… or t… after its domain is no escape: "/user:CORP\bob
			// <pw>" (one backslash, a letter and more of the name).
			if dom || p == i+1 || p+2 >= len(s) || !is(s[p+2], alnum) {
				break
			}
			dom = true
		}
		p++
	}
	if p == i+1 || p >= len(s) || s[p] != ' ' && s[p] != '\t' {
		return Match{}, false
	}
	for p < len(s) && (s[p] == ' ' || s[p] == '\t') {
		p++
	}
	if p >= len(s) || s[p] == '/' || at(s, p, `\/`) || s[p] == '*' && (p+1 == len(s) || !is(s[p+1], alnum)) {
		return Match{}, false
	}
	v, end, ok := argSpan(s, p, false, true)
	if !ok {
		return Match{}, false
	}
	return Match{v, end, KindKeyValue}, true
}

// netUseEncoded is netUse in a URL-encoded text, at the '3' s[i] of the
// "%3A" after "%2Fuser" (a space is '+' or "%20", a backslash "%5C": a
// form's value, a query's): "net+use+%5C%5Chost%5Cshare+%2Fuser%3ACORP%5Cbob+<pw>",
// or the password before "%2Fuser". The line (back to "%0A") holds
// "net+use+" before it.
func netUseEncoded(s []byte, from, i int) (Match, bool) {
	u := i - 8 // "%2Fuser%3A": u at its '%'
	if u < from+1 || !atFold(s, u, "%2fuser") || s[i+1]|0x20 != 'a' {
		return Match{}, false
	}
	sp := func(p int) int { // the length of a space at s[p]: '+', "%20"
		if p < len(s) && s[p] == '+' {
			return 1
		}
		if atFold(s, p, "%20") {
			return 3
		}
		return 0
	}
	if !(s[u-1] == '+' || u-3 >= from && atFold(s, u-3, "%20")) {
		return Match{}, false
	}
	n := -1
	for k := u - 1; k >= from && u-k < 512; k-- {
		if atFold(s, k, "%0a") || atFold(s, k, "%0d") || s[k] == '&' || s[k] == '=' || s[k] == '?' {
			break
		}
		if atFold(s, k, "net") && (k == from || !is(s[k-1], alnum)) {
			if l := sp(k + 3); l > 0 && atFold(s, k+3+l, "use") && sp(k+6+l) > 0 {
				n = k + 6 + l
				break
			}
		}
	}
	if n < 0 {
		return Match{}, false
	}
	// The argument before "%2Fuser", after a \\host\share one.
	args, na := lastArgs(n, u, sp)
	share := func(a [2]int) bool { return a[1]-a[0] > 6 && atFold(s, a[0], "%5c%5c") }
	if na >= 2 && share(args[na-2]) && !share(args[na-1]) && !(args[na-1][1]-args[na-1][0] == 1 && s[args[na-1][0]] == '*') &&
		!atFold(s, args[na-1][0], "%2a") && !isMask(s, args[na-1][0]) {
		return Match{args[na-1][0], args[na-1][1], KindKeyValue}, true
	}
	// After the user: "%2Fuser%3ACORP%5Cbob+<pw>".
	p := i + 2
	for p < len(s) && p-i < 256 && sp(p) == 0 && s[p] != '&' && s[p] != '"' && !atFold(s, p, "%0a") {
		p++
	}
	if p == i+2 || sp(p) == 0 {
		return Match{}, false
	}
	for l := sp(p); l > 0; l = sp(p) {
		p += l
	}
	if p >= len(s) || atFold(s, p, "%2f") || s[p] == '*' || atFold(s, p, "%2a") || isMask(s, p) {
		return Match{}, false
	}
	e := p
	for e < len(s) && e-p < 256 && sp(e) == 0 && !isValueEnd(s[e], 0, false, false) && !atFold(s, e, "%0a") && !atFold(s, e, "%0d") {
		e++
	}
	if e == p {
		return Match{}, false
	}
	return Match{p, e, KindKeyValue}, true
}

// positional is twitchOAuth or netUse at the ':' s[i] (i >= 5), by the
// byte before it. (Its callers look at s[i-5], an 'o' or a '/', first:
// a tool's JSON results have a ':' after most keys.)
func positional(s []byte, from, i int) (Match, bool) {
	if s[i-1]|0x20 == 'h' {
		return twitchOAuth(s, from, i)
	}
	return netUse(s, from, i)
}

// mayPositional is the pre-check's gate of twitchOAuth and netUse at the
// ':' s[i] (i >= 5; s[i-5] is an 'o' or a '/'): the word before it is
// "oauth" or "/user", and the
// detector, from 0 (any later from leaves it less), takes it.
func mayPositional(s []byte, i int) bool {
	switch s[i-1] | 0x20 {
	case 'h':
		_, ok := twitchOAuth(s, 0, i)
		return ok
	case 'r':
		_, ok := netUse(s, 0, i)
		return ok
	}
	return false
}

// lastArgs splits [from, to) into arguments at separators (sep(p) is the
// length of the one at p, 0 for none; it is asked only below to) and
// returns the last three (start, end), oldest first, and how many there
// are (at most 3).
func lastArgs(from, to int, sep func(int) int) (args [3][2]int, na int) {
	for p := from; p < to; {
		for p < to {
			l := sep(p)
			if l == 0 {
				break
			}
			p += l
		}
		q := p
		for q < to && sep(q) == 0 {
			q++
		}
		if q > p {
			if na == len(args) {
				copy(args[:], args[1:])
				na--
			}
			args[na] = [2]int{p, q}
			na++
		}
		p = q
	}
	return args, na
}
