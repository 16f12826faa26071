package redact

import (
	"unicode"
	"unicode/utf8"
)

// Labels of a password spelled with letters beyond ASCII ("contraseña:
// <pw>", "пароль: <pw>", "hasło=<pw>", "Lösenord: <pw>", "Şifre: <pw>"),
// in UTF-8 or as JSON \uXXXX escapes (Python's ensure_ascii:
// "contrase\u00f1a: <pw>"), and French's "mot de passe : <pw>" (a space
// before the colon, as French writes it). A key run of ASCII bytes ends
// in them or is empty (the label's last letter is not ASCII), so keyValue
// and the pre-check's keyBefore ask foreignLabel only where the run is
// empty or a byte beyond ASCII, an escape's "\u" or (for "passe") a space
// comes before it. Their ASCII spellings (contrasena, haslo, losenord,
// sifre) are passWordsForeign.
var foreignLabels = func() (ls [][]rune) {
	for _, l := range []string{"contraseña", "hasło", "lösenord", "şifre", "пароль", "парола", "jelszó", "mot de passe"} {
		ls = append(ls, []rune(l))
	}
	return ls
}()

// mayForeignKey is foreignLabel's gate in keyValue and keyBefore: the
// ASCII key run s[j:ke] (j at or after from) is empty after a byte beyond
// ASCII, or comes after one, after an escape's "\u", or is five bytes
// after a space ("mot de passe").
func mayForeignKey(s []byte, from, j, ke int) bool {
	if j == ke {
		return ke > from && s[ke-1] >= 0x80
	}
	if j <= from {
		return false
	}
	c := s[j-1]
	return c >= 0x80 || c == '\\' && s[j] == 'u' || c == '%' && hexVal(s[j]) >= 0 || (c == ' ' || c == '+') && ke-j == 5 && s[j]|0x20 == 'p'
}

// foreignBefore marks the bytes before a key run at which mayForeignKey
// may say yes (the "passe" of "mot de passe" is asked by its length):
// its callers look them up inline, most keys follow none.
var foreignBefore = func() (t [256]bool) {
	for c := 0x80; c < 0x100; c++ {
		t[c] = true
	}
	t['\\'], t['%'] = true, true
	return t
}()

// foreignLabel returns where one of foreignLabels ends at s[ke] starts
// (at or after from), its letters in any case, each in UTF-8 or a \uXXXX
// escape; the label starts a word.
func foreignLabel(s []byte, from, ke int) (int, bool) {
	for _, l := range foreignLabels {
		if p, ok := runesBefore(s, from, ke, l); ok && (p <= from || labelBoundary(s, p)) {
			return p, true
		}
	}
	return 0, false
}

// runesBefore reports whether the runes of l (lower case) end at s[e], in
// any case, each in UTF-8 or as a \uXXXX escape, and where they start.
func runesBefore(s []byte, from, e int, l []rune) (int, bool) {
	p := e
	for k := len(l) - 1; k >= 0; k-- {
		if p <= from {
			return 0, false
		}
		want := l[k]
		if want == ' ' && (s[p-1] == '+' || p-3 >= from && at(s, p-3, "%20")) {
			p -= 1 + 2*btoi(s[p-1] != '+') // URL-encoded
			continue
		}
		if want >= 0x80 && p-6 >= from && s[p-3] == '%' {
			if q, ok := pctRuneBefore(s, from, p, want); ok {
				p = q // URL-encoded: "Contrase%C3%B1a"
				continue
			}
		}
		if c := s[p-1]; c < 0x80 {
			if want >= 0x80 && p-8 >= from && s[p-8] == '%' && s[p-7] == '5' && s[p-6]|0x20 == 'c' && s[p-5] == 'u' {
				// An escape URL-encoded: "contrase%5Cu00f1a".
				if r, _, ok := escRuneAt(s, p-5); ok && unicode.ToLower(r) == want {
					p -= 8
					continue
				}
				return 0, false
			}
			if p-6 >= from && s[p-6] == '\\' && s[p-5] == 'u' {
				if r, _, ok := escRuneAt(s, p-5); ok && r >= 0x80 {
					if unicode.ToLower(r) != want {
						return 0, false
					}
					p -= 6
					for p > from && s[p-1] == '\\' {
						p-- // escaped again (JSON text held in a string)
					}
					continue
				}
			}
			if rune(lower(c)) != want {
				return 0, false
			}
			p--
			continue
		}
		r, n := utf8.DecodeLastRune(s[from:p])
		if r == utf8.RuneError || unicode.ToLower(r) != want {
			return 0, false
		}
		p -= n
	}
	return p, true
}

// labelBoundary reports whether a label starting at s[p] (p > from)
// starts a word: no letter, digit or character beyond ASCII is right
// before it (an escape's last hex digit is a letter or digit; the letter
// of "\n" is none).
func labelBoundary(s []byte, p int) bool {
	c := s[p-1]
	if p >= 3 && s[p-3] == '%' && hexVal(s[p-2]) >= 0 && hexVal(c) >= 0 {
		c = byte(hexVal(s[p-2])<<4 | hexVal(c)) // URL-encoded: "%0AContrase%C3%B1a"
	}
	return c < 0x80 && (!is(c, alnum) || escLetter(s, p-1))
}

// pctRuneBefore reports whether r (or its upper case) in UTF-8, each
// byte URL-encoded ("%C3%B1"), ends at s[p], and where it starts.
func pctRuneBefore(s []byte, from, p int, r rune) (int, bool) {
	for _, c := range [2]rune{r, unicode.ToUpper(r)} {
		var b [4]byte
		n := utf8.EncodeRune(b[:], c)
		q := p - 3*n
		if q < from {
			continue
		}
		k := 0
		for ; k < n; k++ {
			x := q + 3*k
			if s[x] != '%' || hexVal(s[x+1]) < 0 || hexVal(s[x+2]) < 0 || byte(hexVal(s[x+1])<<4|hexVal(s[x+2])) != b[k] {
				break
			}
		}
		if k == n {
			return q, true
		}
	}
	return 0, false
}

// foreignKey reports whether the key k (a JSON object's, a header's)
// ends in one of foreignLabels: it holds a byte beyond ASCII or an
// escape's backslash first (keys in ASCII, nearly all, are passed over).
func foreignKey(k []byte) bool {
	for _, c := range k {
		if c >= 0x80 || c == '\\' {
			_, ok := foreignLabel(k, 0, len(k))
			return ok
		}
	}
	return false
}

// foreignTail reports a key run of three letters or more that ends one
// of foreignLabels after its last letter beyond ASCII ("lösenord",
// "şifre", "ŞİFRE", "mot de passe"): keyBefore does not remember it as
// plain, as the same run after other bytes is.
func foreignTail(k []byte) bool {
	n := len(k)
	return n <= 6 && (k[n-1]|0x20 == 'e' || k[n-1]|0x20 == 'd') && eqFoldAny(k, "senord", "ifre", "fre", "passe")
}

// foreignQualified reports one of foreignLabels before a preposition and
// up to three words that end at s[ke], a separator's key ("Пароль для
// входа: <pw>"; qualifiedLabel), and where the label starts. Only where a
// character beyond ASCII ends the key (the key run before the separator
// is empty): an ASCII key is classified as it is ("contraseña del
// usuario: <pw>" is not read).
func foreignQualified(s []byte, from, ke int) (int, bool) {
	if ke <= from || s[ke-1] < 0x80 {
		return 0, false
	}
	return qualifiedLabel(s, from, ke, func(e int) (int, bool) { return foreignLabel(s, from, e) })
}
