package main

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// termSafe returns s fit for one line of text output (validate's findings,
// observe's table): control characters (C0 with tab and newline, DEL, C1),
// Unicode's bidirectional overrides and isolates, and invalid UTF-8 are
// written as Go escapes (\n, \x1b, \u202e). The values come from traffic
// e2atap does not control: a request_id holding a newline wrote a line of
// its own, which a script reading one finding a line took for a finding,
// and one holding ESC sequences reached the terminal (colours, a title, a
// cleared screen); a right-to-left override showed the line reordered.
// JSON outputs need none of this: their encoder escapes.
func termSafe(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			break
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case r < 0x20 || r == 0x7f || unsafeRune(r, n):
			q := strconv.QuoteRuneToASCII(r) // 'x' with x escaped
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// unsafeRune: a rune termSafe escapes (beyond ASCII): C1 controls,
// invalid UTF-8, bidirectional embeddings, overrides and isolates, and
// the line and paragraph separators.
func unsafeRune(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028 || r == 0x2029:
		return true
	}
	return false
}
