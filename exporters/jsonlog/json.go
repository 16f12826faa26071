package jsonlog

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The grammar checks below accept exactly what encoding/json's Valid
// accepts (FuzzRedact holds them to it): strict RFC 8259, nesting up to
// 10000, invalid UTF-8 inside strings allowed.

// str checks the string starting at st.in[i] == '"' and returns the index
// after its closing quote and whether it holds escapes. The plain bytes go
// eight at a time; a string of ASCII only is remembered (st.ascii), so that
// copyString need not look at it again for invalid UTF-8.
func (st *state) str(i int) (int, bool, error) {
	in := st.in
	esc := false
	var hi uint64 // the high bits of the bytes read: 0 while all are ASCII
	j := i + 1
	for {
		for ; j+8 <= len(in); j += 8 {
			w := binary.LittleEndian.Uint64(in[j:])
			if m := stop8(w); m != 0 {
				k := bits.TrailingZeros64(m) / 8
				hi |= w & (1<<(8*k) - 1)
				j += k
				break
			}
			hi |= w
		}
		if j >= len(in) {
			break
		}
		switch c := in[j]; {
		case c == '"':
			st.ascii = nil
			if hi&highs == 0 {
				st.ascii = in[i+1 : j]
			}
			return j + 1, esc, nil
		case c == '\\':
			esc = true
			j++
			if j >= len(in) {
				return 0, false, &SyntaxError{j, "unterminated string"}
			}
			switch in[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(in)-j < 5 || !isHex4(in[j+1:j+5]) {
					return 0, false, &SyntaxError{j, "invalid \\u escape"}
				}
				j += 4
			default:
				return 0, false, &SyntaxError{j, "invalid escape"}
			}
		case c < 0x20:
			return 0, false, &SyntaxError{j, "control character in string"}
		default:
			hi |= uint64(c)
		}
		j++
	}
	return 0, false, &SyntaxError{len(in), "unterminated string"}
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// stop8 has the high bit set in the byte of w that is the first '"', '\\'
// or control character (and maybe in bytes above it: str uses only the
// lowest). XOR makes the byte sought a zero one, and the borrow of x-ones
// marks only bytes above a zero byte; a byte below 0x20 borrows itself.
// Bytes of 0x80 and more are never marked (&^ w): they are plain.
func stop8(w uint64) uint64 {
	q := w ^ (ones * '"')
	b := w ^ (ones * '\\')
	return ((q-ones)&^q | (b-ones)&^b | (w-ones*0x20)&^w) & highs
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !isDigit(c) && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// number checks the number literal at st.in[i] and returns its end.
func (st *state) number(i int) (int, error) {
	in := st.in
	j := i
	if j < len(in) && in[j] == '-' {
		j++
	}
	switch {
	case j < len(in) && in[j] == '0':
		j++
	case j < len(in) && in[j] >= '1' && in[j] <= '9':
		for j < len(in) && isDigit(in[j]) {
			j++
		}
	default:
		return 0, &SyntaxError{j, "invalid value"}
	}
	if j < len(in) && in[j] == '.' {
		j++
		d := j
		for j < len(in) && isDigit(in[j]) {
			j++
		}
		if j == d {
			return 0, &SyntaxError{j, "invalid number"}
		}
	}
	if j < len(in) && (in[j] == 'e' || in[j] == 'E') {
		j++
		if j < len(in) && (in[j] == '+' || in[j] == '-') {
			j++
		}
		d := j
		for j < len(in) && isDigit(in[j]) {
			j++
		}
		if j == d {
			return 0, &SyntaxError{j, "invalid number"}
		}
	}
	return j, nil
}

// skip checks the value at st.in[i] without writing it and returns its end.
func (st *state) skip(i int) (int, error) {
	in := st.in
	if i >= len(in) {
		return 0, &SyntaxError{i, "unexpected end of input"}
	}
	switch c := in[i]; c {
	case '"':
		e, _, err := st.str(i)
		return e, err
	case '{', '[':
		st.depth++
		if st.depth > maxDepth {
			return 0, &SyntaxError{i, "exceeded max depth"}
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		i = st.ws(i + 1)
		if i < len(in) && in[i] == closer {
			st.depth--
			return i + 1, nil
		}
		for {
			var err error
			if c == '{' {
				if i >= len(in) || in[i] != '"' {
					return 0, &SyntaxError{i, "expected a key"}
				}
				if i, _, err = st.str(i); err != nil {
					return 0, err
				}
				i = st.ws(i)
				if i >= len(in) || in[i] != ':' {
					return 0, &SyntaxError{i, "expected ':'"}
				}
				i = st.ws(i + 1)
			}
			if i, err = st.skip(i); err != nil {
				return 0, err
			}
			i = st.ws(i)
			if i >= len(in) {
				return 0, &SyntaxError{i, "unterminated container"}
			}
			switch in[i] {
			case ',':
				i = st.ws(i + 1)
			case closer:
				st.depth--
				return i + 1, nil
			default:
				return 0, &SyntaxError{i, "expected ',' or a closing bracket"}
			}
		}
	case 't', 'f', 'n':
		lit := "null"
		if c == 't' {
			lit = "true"
		} else if c == 'f' {
			lit = "false"
		}
		if len(in)-i < len(lit) || string(in[i:i+len(lit)]) != lit {
			return 0, &SyntaxError{i, "invalid literal"}
		}
		return i + len(lit), nil
	}
	return st.number(i)
}

// appendEscaped appends s as JSON string content (no quotes); invalid UTF-8
// becomes U+FFFD, as encoding/json writes it.
func appendEscaped(dst, s []byte) []byte {
	const hexd = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}
