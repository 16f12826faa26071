package e2a

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// Head is what a router needs of a record: its stream key and whether it
// is a chat.interrupt, read from the top-level members only.
type Head struct {
	// RequestID is the top-level request_id as Scan reads it (unescaped,
	// invalid UTF-8 replaced), when it is a string; nil otherwise.
	RequestID []byte
	// Sequence is the top-level sequence when it is an integer literal.
	Sequence    int64
	HasSequence bool
	// Interrupt: the top-level method is "chat.interrupt".
	Interrupt bool
	// Complete: the top-level object closed within the input.
	Complete bool
}

// ScanHead reads h from the top-level members of the JSON object in data
// without validating it: one pass that skips nested values (strings eight
// bytes at a time) and looks only at request_id, sequence and method, the
// last occurrence of each winning as in Scan. On every valid object it
// agrees with Scan (FuzzScanHead); on anything else it returns what it
// could read and never panics. data may be a prefix of a record (the head
// of an oversize line): a member cut by the end of data is not taken.
//
// Unescaped strings are appended to buf, which is returned; RequestID
// aliases data when the string needed no change, else buf.
func ScanHead(data, buf []byte, h *Head) []byte { return scanHead(data, buf, h, -1) }

// ScanHeadTo is ScanHead for a caller that knows there is at most one
// request_id key and no method that matters, and where the only candidate
// key starts (stop, the offset of its opening quote): it returns once the
// member at stop is read, or as soon as the walk is past stop (the
// candidate was nested, so there is no top-level request_id). Complete is
// then not meaningful.
func ScanHeadTo(data, buf []byte, h *Head, stop int) []byte { return scanHead(data, buf, h, stop) }

func scanHead(data, buf []byte, h *Head, stop int) []byte {
	*h = Head{}
	n := len(data)
	i := skipWS(data, 0)
	if i >= n || data[i] != '{' {
		return buf
	}
	i = skipWS(data, i+1)
	if i < n && data[i] == '}' {
		h.Complete = true
		return buf
	}
	for i < n {
		if data[i] != '"' || (stop >= 0 && i > stop) {
			return buf
		}
		ks := i + 1
		ke, esc := headStringEnd(data, ks)
		if ke < 0 {
			return buf
		}
		key := data[ks:ke]
		which := headKey(key)
		if esc {
			if !escapesValid(key) {
				return buf
			}
			mark := len(buf)
			buf = AppendUnquoted(buf, key)
			which = headKey(buf[mark:])
			buf = buf[:mark]
		}
		i = skipWS(data, ke+1)
		if i >= n || data[i] != ':' {
			return buf
		}
		i = skipWS(data, i+1)
		if i >= n {
			return buf
		}
		vs := i
		i = headSkip(data, i)
		if i < 0 {
			// Cut by the end: a later occurrence would have won, so what
			// an earlier one said is unknown too.
			switch which {
			case headRequestID:
				h.RequestID = nil
			case headSequence:
				h.Sequence, h.HasSequence = 0, false
			}
			return buf
		}
		switch which {
		case headRequestID:
			h.RequestID = nil
			if data[vs] == '"' {
				var ok bool
				h.RequestID, buf, ok = headString(data[vs+1:i-1], buf)
				if !ok {
					return buf
				}
			}
		case headSequence:
			h.Sequence, h.HasSequence = 0, false
			if c := data[vs]; c == '-' || isDigit(c) {
				if v, ok := ParseInt(data[vs:i]); ok {
					h.Sequence, h.HasSequence = v, true
				}
			}
		case headMethod:
			h.Interrupt = false
			if data[vs] == '"' {
				s, nb, ok := headString(data[vs+1:i-1], buf)
				if !ok {
					return buf
				}
				h.Interrupt = string(s) == "chat.interrupt"
				buf = nb[:len(buf)]
			}
		}
		if ks-1 == stop {
			return buf
		}
		i = skipWS(data, i)
		if i >= n {
			return buf
		}
		switch data[i] {
		case ',':
			i = skipWS(data, i+1)
		case '}':
			h.Complete = true
			return buf
		default:
			return buf
		}
	}
	return buf
}

const (
	headOther = iota
	headRequestID
	headSequence
	headMethod
)

func headKey(k []byte) int {
	switch string(k) {
	case "request_id":
		return headRequestID
	case "sequence":
		return headSequence
	case "method":
		return headMethod
	}
	return headOther
}

// headString reads a string body as Scan does: as is when it needs no
// change, else unescaped into buf. ok is false for a bad escape.
func headString(body, buf []byte) (s, nb []byte, ok bool) {
	plain := true
	for _, c := range body {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return body, buf, true
	}
	if !escapesValid(body) {
		return nil, buf, false
	}
	if !hasByte(body, '\\') && utf8.Valid(body) {
		return body, buf, true
	}
	mark := len(buf)
	buf = AppendUnquoted(buf, body)
	return buf[mark:len(buf):len(buf)], buf, true
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// escapesValid says whether every escape in a string body is complete and
// valid, so that AppendUnquoted may read it.
func escapesValid(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+1 >= len(b) {
			return false
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+6 > len(b) {
				return false
			}
			for k := i + 2; k < i+6; k++ {
				if hexVal(b[k]) < 0 {
					return false
				}
			}
			i += 5
		default:
			return false
		}
	}
	return true
}

// headStringEnd returns the index of the closing quote of the string
// whose body starts at i, and whether it holds a backslash; -1 when the
// input ends first. Short strings (keys, ids) are read eight bytes a step;
// long ones (model output) with the vectorised bytes.IndexByte, a run of
// \uXXXX escapes (ensure_ascii output) in one tight loop.
func headStringEnd(data []byte, i int) (int, bool) {
	n := len(data)
	for k := 0; k < 8 && i+8 <= n; k++ {
		x := binary.LittleEndian.Uint64(data[i:])
		q := x ^ (ones * '"')
		b := x ^ (ones * '\\')
		if m := ((q-ones)&^q | (b-ones)&^b) & highs; m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			if data[i] == '"' {
				return i, false
			}
			break
		}
		i += 8
	}
	esc := false
	for {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			return -1, esc
		}
		b := bytes.IndexByte(data[i:i+q], '\\')
		if b < 0 {
			return i + q, esc
		}
		esc = true
		i += b
		for i+6 <= n && data[i] == '\\' && data[i+1] == 'u' {
			i += 6
		}
		if i < n && data[i] == '\\' {
			i += 2
		}
		if i >= n {
			return -1, esc
		}
	}
}

// headSkip returns the index just past the value at data[i], or -1 when
// the input ends first. It does not validate.
func headSkip(data []byte, i int) int {
	n := len(data)
	switch data[i] {
	case '"':
		e, _ := headStringEnd(data, i+1)
		if e < 0 {
			return -1
		}
		return e + 1
	case '{', '[':
		depth := 0
		for i < n {
			// Find the next quote or bracket: '[' and ']' become '{' and
			// '}' with bit 5 set, so three comparisons cover all five.
			for i+8 <= n {
				x := binary.LittleEndian.Uint64(data[i:])
				q := x ^ (ones * '"')
				y := x | ones*0x20
				o := y ^ (ones * '{')
				c := y ^ (ones * '}')
				m := ((q-ones)&^q | (o-ones)&^o | (c-ones)&^c) & highs
				if m != 0 {
					i += bits.TrailingZeros64(m) >> 3
					break
				}
				i += 8
			}
			for i < n && !headSpecial[data[i]] {
				i++
			}
			if i >= n {
				return -1
			}
			switch data[i] {
			case '"':
				e, _ := headStringEnd(data, i+1)
				if e < 0 {
					return -1
				}
				i = e + 1
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < n {
		switch data[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return -1 // a scalar cut by the end (or the last of a bare value)
}

// headSpecial marks what headSkip stops at inside a container.
var headSpecial = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}
