package redact

import "bytes"

// A private key block streamed across many pieces (a model's deltas): its
// header in one, base64 lines in the next ones, its END line later. Find
// masks a block from its header to the end of the text it is given, but
// the pieces after the one that holds the header are lines of base64 that
// nothing names. OpenKey tells the caller, piece by piece, which bytes are
// inside a block opened before them.

// inPEMBlock reports whether c may be inside a key block's body: base64,
// line breaks (also escaped in JSON text: '\\', 'n'), the armor headers'
// ':' and ',' (Proc-Type: 4,ENCRYPTED), URL-encoding's '%'.
func inPEMBlock(c byte) bool {
	return is(c, alnum|cB64) || c == '=' || c == '\n' || c == '\r' || c == ' ' || c == '\t' || c == '\\' || c == ':' || c == ',' || c == '%'
}

// OpenKey reads s, the end of a text before from and a new piece of it
// after, with open telling whether a private key block was open at from
// (OpenKey's still of the previous piece). It returns to, the end of the
// bytes of the new piece (s[from:to], none when to <= from) inside a block
// opened before the piece (its header ended in an earlier piece, or
// started in one and ends in this one), and whether a block is still open
// at the end of s: its header seen, neither its END line nor a byte that
// no block holds after it. A block whose header is wholly in the piece is
// Find's to mask there; OpenKey only says whether it stays open.
func OpenKey(s []byte, from int, open bool) (to int, still bool) {
	to, i := from, from
	if open {
		st := 0
		if b := bytes.LastIndex(s[:from], []byte("-----BEGIN")); b >= 0 {
			if h := pemHeader(s, b); h >= 0 && h <= from {
				st = h
			}
		}
		e, closed := pemBlockEnd(s, st)
		if !closed {
			return len(s), true
		}
		to, i = max(e, from), max(e, from)
	}
	// A header that ends in the piece (it may start before it).
	for b := max(0, i-len("-----BEGIN")-60); ; {
		k := bytes.Index(s[b:], []byte("-----BEGIN"))
		if k < 0 {
			return to, false
		}
		b += k
		h := pemHeader(s, b)
		if h <= from || h < i {
			b++
			continue
		}
		e, closed := pemBlockEnd(s, h)
		if b < from {
			to = max(to, e)
		}
		if !closed {
			return to, true
		}
		b = e
	}
}

// pemBlockEnd is the end of the key block whose body starts at s[h]: after
// its END line's dashes, or at a byte no block holds; closed is false when
// s ends first (inside the body or the END line's name).
func pemBlockEnd(s []byte, h int) (end int, closed bool) {
	for k := h; k < len(s); k++ {
		c := s[k]
		if c == '-' {
			if at(s, k, "-----END ") || at(s, k, "-----END+") || at(s, k, "-----END%20") {
				e := k + len("-----END ")
				for e < len(s) && e-k < 60 && s[e] != '-' {
					e++
				}
				if e == len(s) {
					return e, false
				}
				return run(s, e, cDash), true
			}
			continue
		}
		if !inPEMBlock(c) {
			return k, true
		}
	}
	return len(s), false
}
