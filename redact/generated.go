package redact

import "bytes"

// Passwords that servers and tools print once, when they make one, in
// the logs an agent reads back: MySQL's "[Note] A temporary password is
// generated for root@localhost: <pw>", elasticsearch-reset-password's
// "Password for the [elastic] user successfully reset. New value: <pw>",
// Jenkins' "Please use the following password to proceed to
// installation:" and the password on a line of its own after it. Each is
// revealed at the ':' after its phrase (colonArg's, which the pre-check
// runs too); a variable or a placeholder (cmdValue) is none.

// generatedPassword matches the password after the ':' at s[i], its
// phrase before it. It looks at the byte after the ':' first.
func generatedPassword(s []byte, from, i int) (Match, bool) {
	if i+2 >= len(s) {
		return Match{}, false
	}
	switch s[i+1] {
	case ' ':
		if s[i-1] == 'e' && i >= 9 && atFold(s, i-9, "new value") {
			return elasticNewValue(s, from, i)
		}
		if s[i-1] == 't' && i >= 14 && at(s, i-14, "root@localhost") {
			return mysqlTemporary(s, from, i) // (the password is always root's)
		}
	case '\n', '\r', '\\':
		if s[i-1] == 'n' && i >= 15 && at(s, i-15, "to installation") {
			return jenkinsInitial(s, from, i)
		}
	}
	return Match{}, false
}

// mysqlTemporary: "temporary password is generated for <user>@<host>: <pw>".
func mysqlTemporary(s []byte, from, i int) (Match, bool) {
	w := i
	at2 := -1
	for w > from && i-w < 64 && s[w-1] != ' ' {
		if w--; s[w] == '@' {
			at2 = w
		}
	}
	if at2 <= w || w-14 < from || !at(s, w-14, "generated for ") {
		return Match{}, false
	}
	return lineValue(s, from, i+2)
}

// elasticNewValue: "New value: <pw>" after "successfully reset" (the
// line before it names the user whose password was reset).
func elasticNewValue(s []byte, from, i int) (Match, bool) {
	k := i - 9
	if !wordStart(s, k) && !(k >= 2 && s[k-2] == '\\' && s[k-1] == 'n') || !bytes.Contains(s[max(from, k-160):k], []byte("reset")) {
		return Match{}, false
	}
	return lineValue(s, from, i+2)
}

// jenkinsInitial: the 32 hex digits on a line of their own after
// "proceed to installation:" (blank lines between, also JSON text's "\n";
// "to installation:" is looked for, a delta may start inside the line).
func jenkinsInitial(s []byte, from, i int) (Match, bool) {
	v := i + 1
	for v < len(s) && v-i < 24 {
		switch {
		case s[v] == '\n' || s[v] == '\r' || s[v] == ' ':
			v++
		case s[v] == '\\':
			b := v
			for b < len(s) && s[b] == '\\' {
				b++
			}
			if b >= len(s) || s[b] != 'n' && s[b] != 'r' {
				return Match{}, false
			}
			v = b + 1
		default:
			e := hexRun(s, v)
			if v < from || e-v != 32 || e < len(s) && is(s[e], word) {
				return Match{}, false
			}
			return Match{v, e, KindKeyValue}, true
		}
	}
	return Match{}, false
}

// lineValue is the word at s[v] to white space, a quote or a JSON
// escape: a password of 8 bytes or more that is no variable or
// placeholder.
func lineValue(s []byte, from, v int) (Match, bool) {
	e := v
	for e < len(s) && e-v < 128 && !proseEndT[s[e]] {
		e++
	}
	if v < from || e-v < 8 || !cmdValue(s[v:e]) || holdsMask(s[v:e]) {
		return Match{}, false
	}
	return Match{v, e, KindKeyValue}, true
}
