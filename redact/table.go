package redact

// A credential in a row of a table that names it in the cell before it:
// a Markdown table in a model's answer ("| Password | <pw> |", "|
// **API key** | `<key>` |"), the AWS CLI's --output table ("|
// SecretAccessKey |  <key>  |"). The '|' that ends the key's cell is a
// separator (aSep); the key cell is the whole cell after the row's or the
// previous cell's '|', classified as keyValue classifies a key (also
// "API key", spacedKey's); the value is the whole next cell, one word
// without its Markdown emphasis. A value that reads as a password or a
// token (a letter and a digit, or strongValue, randomValue) is a
// credential; a longer word with no digit is masked as prose passwords
// are; a placeholder, a variable, a mask, a word or "-" is none.

// tableCell matches the value in the cell after the '|' at s[i].
func tableCell(s []byte, from, i int) (Match, bool) {
	if i-2 < from || i+2 >= len(s) || s[i-1] != ' ' || s[i+1] != ' ' {
		return Match{}, false
	}
	// The key cell, trimmed of spaces and emphasis.
	ke := i - 1
	for ke > from && i-ke < 32 && (s[ke-1] == ' ' || s[ke-1] == '*' || s[ke-1] == '`') {
		ke--
	}
	ks := ke
	for ks > from && ke-ks < 48 && s[ks-1] != '|' && s[ks-1] != '\n' && !(s[ks-1] == '*' || s[ks-1] == '`') {
		ks--
	}
	b := ks
	for b > from && ks-b < 4 && (s[b-1] == '*' || s[b-1] == '`' || s[b-1] == ' ') {
		b--
	}
	if b == from || s[b-1] != '|' || ke-ks < 3 || s[ks] == ' ' && ks+1 == ke {
		return Match{}, false
	}
	if !tableKey(s, from, ks, ke) {
		return Match{}, false
	}
	// The value cell.
	v := i + 1
	for v < len(s) && v-i < 32 && s[v] == ' ' {
		v++
	}
	for v < len(s) && v-i < 36 && (s[v] == '*' || s[v] == '`') {
		v++
	}
	e := v
	for e < len(s) && e-v < 256 && s[e] != ' ' && s[e] != '|' && s[e] != '`' && s[e] != '\n' && s[e] != '\r' && s[e] != '\\' {
		e++
	}
	ve := e
	for e < len(s) && e-ve < 36 && (s[e] == ' ' || s[e] == '*' || s[e] == '`') {
		e++
	}
	if v < from || ve-v < 4 || e >= len(s) || s[e] != '|' || !cmdValue(s[v:ve]) || holdsMask(s[v:ve]) || isMask(s, v) {
		return Match{}, false
	}
	val := s[v:ve]
	if strongValue(val) || randomValue(val) || hasDigitAndLetter(val) {
		return Match{v, ve, KindKeyValue}, true
	}
	if len(val) >= 8 && !englishWord(val) {
		for _, c := range val {
			if !is(c, cUpper|cLower) {
				return Match{}, false
			}
		}
		return Match{v, ve, KindHighEntropy}, true
	}
	return Match{}, false
}

// tableKey reports a key cell s[ks:ke] that names a credential: one key
// (classifyWords: "Password", "SecretAccessKey", "DB_PASSWORD", "Access
// token" by its last word) or "<label> key" (spacedKey).
func tableKey(s []byte, from, ks, ke int) bool {
	w := ke
	for w > ks && is(s[w-1], word|cKey) {
		w--
	}
	if w == ke {
		return false
	}
	if ke-w == 3 && spacedKey(s, max(from, ks), w) {
		return true
	}
	return classifyWords(s, w, ke).Credential()
}

// hasDigitAndLetter reports a letter and a digit in v.
func hasDigitAndLetter(v []byte) bool {
	var seen uint8
	for _, c := range v {
		seen |= class[c]
	}
	return seen&cDigit != 0 && seen&(cUpper|cLower) != 0
}
