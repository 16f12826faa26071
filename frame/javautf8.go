package frame

import (
	"bytes"
	"unicode/utf8"
)

// The reference turns attribute bytes into Java Strings with
// new String(bytes, UTF_8), which never fails: each malformed sequence
// becomes one U+FFFD. The JDK replaces a maximal ill-formed prefix (a
// truncated multi-byte sequence is one U+FFFD, not one per byte, unlike
// Go's utf8.DecodeRune) and an encoded surrogate (ED A0..BF xx) as a whole.
// The functions here reproduce that, so that duplicate detection and the
// canonical re-encode agree with what the reference does to the same bytes.
// Well-formed UTF-8 is left alone by both, so the fast paths use utf8.Valid.

const replacement = "\uFFFD"

func cont(b byte) bool { return b&0xC0 == 0x80 }

// javaRune decodes the first character of s (len(s) > 0) the way the JDK
// String decoder does, returning utf8.RuneError and the number of bytes the
// replacement stands for when s starts with a malformed sequence.
func javaRune(s []byte) (rune, int) {
	b1 := s[0]
	n := len(s)
	switch {
	case b1 < 0x80:
		return rune(b1), 1
	case b1 >= 0xC2 && b1 <= 0xDF:
		if n >= 2 && cont(s[1]) {
			return rune(b1&0x1F)<<6 | rune(s[1]&0x3F), 2
		}
		return utf8.RuneError, 1
	case b1 >= 0xE0 && b1 <= 0xEF:
		if n >= 3 {
			b2, b3 := s[1], s[2]
			bad2 := (b1 == 0xE0 && b2&0xE0 == 0x80) || !cont(b2)
			if bad2 {
				return utf8.RuneError, 1
			}
			if !cont(b3) {
				return utf8.RuneError, 2
			}
			c := rune(b1&0x0F)<<12 | rune(b2&0x3F)<<6 | rune(b3&0x3F)
			if c >= 0xD800 && c <= 0xDFFF {
				return utf8.RuneError, 3
			}
			return c, 3
		}
		if n == 2 && ((b1 == 0xE0 && s[1]&0xE0 == 0x80) || !cont(s[1])) {
			return utf8.RuneError, 1
		}
		return utf8.RuneError, n
	case b1 >= 0xF0 && b1 <= 0xF7:
		if n >= 4 {
			b2, b3, b4 := s[1], s[2], s[3]
			uc := rune(b1&0x07)<<18 | rune(b2&0x3F)<<12 | rune(b3&0x3F)<<6 | rune(b4&0x3F)
			if cont(b2) && cont(b3) && cont(b4) && uc >= 0x10000 && uc <= utf8.MaxRune {
				return uc, 4
			}
			if bad4second(b1, b2) {
				return utf8.RuneError, 1
			}
			if !cont(b3) {
				return utf8.RuneError, 2
			}
			return utf8.RuneError, 3
		}
		if n >= 2 && bad4second(b1, s[1]) || b1 > 0xF4 {
			return utf8.RuneError, 1
		}
		if n >= 3 && !cont(s[2]) {
			return utf8.RuneError, 2
		}
		return utf8.RuneError, n
	default: // continuation bytes, C0, C1, F8..FF
		return utf8.RuneError, 1
	}
}

func bad4second(b1, b2 byte) bool {
	return b1 > 0xF4 ||
		(b1 == 0xF0 && (b2 < 0x90 || b2 > 0xBF)) ||
		(b1 == 0xF4 && b2&0xF0 != 0x80) ||
		!cont(b2)
}

// javaLen is the byte length of s after the reference's decode and
// re-encode.
func javaLen(s []byte) int {
	if utf8.Valid(s) {
		return len(s)
	}
	l := 0
	for len(s) > 0 {
		r, w := javaRune(s)
		if r == utf8.RuneError {
			l += len(replacement)
		} else {
			l += w
		}
		s = s[w:]
	}
	return l
}

// appendJava appends s as the reference's decode and re-encode leaves it.
func appendJava(dst, s []byte) []byte {
	if utf8.Valid(s) {
		return append(dst, s...)
	}
	for len(s) > 0 {
		r, w := javaRune(s)
		if r == utf8.RuneError {
			dst = append(dst, replacement...)
		} else {
			dst = append(dst, s[:w]...)
		}
		s = s[w:]
	}
	return dst
}

// javaEqual reports whether a and b become equal Java Strings.
func javaEqual(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if utf8.Valid(a) && utf8.Valid(b) {
		return false
	}
	for len(a) > 0 && len(b) > 0 {
		ra, wa := javaRune(a)
		rb, wb := javaRune(b)
		if ra != rb {
			return false
		}
		a, b = a[wa:], b[wb:]
	}
	return len(a) == 0 && len(b) == 0
}

// javaString returns s as a Go string holding what the Java String holds.
func javaString(s []byte) string {
	if utf8.Valid(s) {
		return string(s)
	}
	return string(appendJava(nil, s))
}
