package redact

import "encoding/binary"

// pairBits has byte x set for a pair of bytes x (s[i] | s[i+1]<<8) that a
// word of a table holds at its offset 0 or 1 (wordPairs): 64 KiB, of which
// text touches its own bytes' pairs (base64: 64 pairs of cache lines, 8
// KiB), and one load a look-up (a table of bits, 8 KiB, cost a shift, a
// mask and a test more each, a quarter of anyWordPairs' instructions).
type pairBits [1 << 16]uint8

func (b *pairBits) has(x uint16) bool { return b[x] != 0 }

// b64Pairs are b64Table's pairs: anyB64Word looks for the encoded token
// prefixes in a base64 run (b64Candidate, b64state.check), whose bytes
// start one of them every third byte or so, which made anyWord's test of
// each byte (pairTable.first) a branch taken at random.
var b64Pairs = wordPairs(b64Table)

// anyB64Word is anyWord(b64Table, s).
func anyB64Word(s []byte) bool { return anyWordPairs(b64Table, b64Pairs, s) }

// wordPairs returns the pairs that the words of t hold at offsets 0 and
// 1, in every case t matches them, or nil when a word is shorter than
// three bytes.
func wordPairs(t *pairTable) *pairBits {
	b := new(pairBits)
	set := func(xs, ys []byte) {
		for _, x := range xs {
			for _, y := range ys {
				b[uint16(x)|uint16(y)<<8] = 1
			}
		}
	}
	for _, g := range t.groups {
		for _, w := range g {
			if len(w.w) < 3 {
				return nil
			}
			var f0, f1, f2 [2]byte
			c0, c1, c2 := foldBytes(&f0, w.w[0]), foldBytes(&f1, w.w[1]), foldBytes(&f2, w.w[2])
			if w.exact {
				c0, c1, c2 = c0[:1], c1[:1], c2[:1]
			}
			set(c0, c1)
			set(c1, c2)
		}
	}
	return b
}

// anyWordPairs is anyWord(t, s), with bits = wordPairs(t) (not nil):
// every word is three bytes or more, so one that starts at s[p] holds the
// pair at an even index, p or p+1, and only those are looked up, four at a
// time; where one is a pair of a word, the words starting at it and at
// the byte before it are compared.
func anyWordPairs(t *pairTable, bits *pairBits, s []byte) bool {
	n := len(s)
	i := 0
	for ; i+8 <= n; i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if !bits.has(uint16(w)) && !bits.has(uint16(w>>16)) && !bits.has(uint16(w>>32)) && !bits.has(uint16(w>>48)) {
			continue
		}
		for k := i; k < i+8; k += 2 {
			if bits.has(uint16(s[k])|uint16(s[k+1])<<8) && (k > 0 && t.wordAt(s, k-1) || t.wordAt(s, k)) {
				return true
			}
		}
	}
	for ; i+1 < n; i += 2 {
		if bits.has(uint16(s[i])|uint16(s[i+1])<<8) && (i > 0 && t.wordAt(s, i-1) || t.wordAt(s, i)) {
			return true
		}
	}
	return false
}

// wordAt reports whether one of the words of t starts at s[p].
func (t *pairTable) wordAt(s []byte, p int) bool {
	if p+1 >= len(s) {
		return false
	}
	g := t.pair[s[p]][s[p+1]]
	if g == 0 {
		return false
	}
	for _, w := range t.groups[g-1] {
		if w.exact && at(s, p, w.w) || !w.exact && atFold(s, p, w.w) {
			return true
		}
	}
	return false
}
