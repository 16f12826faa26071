package e2a

import (
	"math/bits"

	"github.com/e2atap/e2atap/redact"
)

// The vector pass: before a line is scanned, a kernel classifies all of
// its bytes at once, 64 a block, into bitmaps (one bit a byte, bit k of
// block b for data[64b+k]); the scanner then finds the end of a string,
// the end of a run of whitespace and whether a string holds a credential
// anchor by bit scans instead of byte loops. The kernel is assembly where
// the CPU has it (classify_amd64.s, AVX2, detected at run time);
// elsewhere, or with vectorScan false, the scanner runs its scalar loops,
// which say the same thing byte by byte (TestScanVectorPath and
// FuzzScanVector hold the two paths to the same Record, error and
// MayHoldSecret).
//
// The scanner still walks the grammar token by token (it must give
// encoding/json's error at the same byte, classify every key and
// pre-check every string), so the bitmaps need no in-string mask: a
// string is found from its opening quote, and its first stop byte is its
// closing quote unless it holds an escape, which the scalar loop takes
// from there.

// block holds the bitmaps of 64 input bytes. The kernel writes it: keep
// the layout in step with classify_amd64.s.
type block struct {
	ws       uint64 // ' ', '\t', '\n', '\r'
	anchor   uint64 // redact.IsCredentialAnchor
	stop     uint64 // '"', '\\', < 0x20: where a string's plain run ends
	stopHigh uint64 // stop or >= 0x80: the same for a string that is kept
}

// The inputs classified: below minVectorLen bytes the scalar loops cost
// less than the pass; above maxVectorLen (rare: a long model output) the
// scalar loops read it, so that a Record never holds more than 128 KiB of
// bitmaps.
const (
	minVectorLen = 32
	maxVectorLen = 256 << 10
)

// vectorScan selects the vector pass when the CPU has a kernel (tests turn
// it off to run the scalar path on the same machine).
var vectorScan = haveKernel

// kernelTables are the constants of the kernel, each 32 bytes (a 16-byte
// table is repeated for both lanes of VPSHUFB).
type kernelTables struct {
	quote, bs, c1f, wsLo, anchorLo, anchorHi, nibble [32]byte
}

var tables, anchorNibbles = newKernelTables()

// newKernelTables builds the kernel's constants. Anchors are classified by
// nibbles: the high nibbles whose sets of low nibbles are equal share a
// bit, and a byte is an anchor when its high nibble's bits meet its low
// nibble's. ok is false when redact's anchors need more than eight such
// sets (then the kernel is not used).
func newKernelTables() (t kernelTables, ok bool) {
	var lo [16]uint8
	var hi [16]uint8
	var sets []uint16
	for h := range 16 {
		var set uint16
		for l := range 16 {
			if redact.IsCredentialAnchor(byte(h<<4 | l)) {
				set |= 1 << l
			}
		}
		if set == 0 {
			continue
		}
		k := -1
		for j, s := range sets {
			if s == set {
				k = j
			}
		}
		if k < 0 {
			if len(sets) == 8 {
				return t, false
			}
			k = len(sets)
			sets = append(sets, set)
		}
		hi[h] |= 1 << k
		for l := range 16 {
			if set&(1<<l) != 0 {
				lo[l] |= 1 << k
			}
		}
	}
	for i := range 32 {
		t.quote[i] = '"'
		t.bs[i] = '\\'
		t.c1f[i] = 0x1f
		t.nibble[i] = 0x0f
		t.anchorLo[i] = lo[i&15]
		t.anchorHi[i] = hi[i&15]
	}
	// wsLo[l] is the whitespace byte whose low nibble is l, or 0 (which
	// matches no byte of low nibble l ≠ 0); VPSHUFB gives 0 for bytes
	// >= 0x80, which are not whitespace.
	for _, c := range []byte{' ', '\t', '\n', '\r'} {
		t.wsLo[c&15] = c
		t.wsLo[16+c&15] = c
	}
	return t, true
}

// classifyGo is the kernel's specification: the same bitmaps, byte by
// byte. blocks must hold (len(data)+63)/64 blocks; bytes past the end
// classify as whitespace, as the kernel's padding does.
func classifyGo(data []byte, blocks []block) {
	for b := range blocks {
		var x block
		for k := range 64 {
			c := byte(' ')
			if i := b*64 + k; i < len(data) {
				c = data[i]
			}
			bit := uint64(1) << k
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				x.ws |= bit
			}
			if redact.IsCredentialAnchor(c) {
				x.anchor |= bit
			}
			if c == '"' || c == '\\' || c < 0x20 {
				x.stop |= bit
			}
			if c == '"' || c == '\\' || c < 0x20 || c >= 0x80 {
				x.stopHigh |= bit
			}
		}
		blocks[b] = x
	}
}

// classify fills blocks (grown as needed) for data with the kernel and
// returns them.
func classify(data []byte, blocks []block) []block {
	nb := (len(data) + 63) / 64
	if cap(blocks) < nb {
		blocks = make([]block, nb, nb+nb/4)
	}
	blocks = blocks[:nb]
	full := len(data) / 64
	if full > 0 {
		classifyAVX2(&data[0], full, &blocks[0], &tables)
	}
	rest := len(data) - full*64
	switch {
	case rest == 0:
	case full > 0:
		// The last 64 bytes, shifted down to the rest's, and the bits
		// past the end as the padding's (spaces): no copy of the rest.
		var last block
		classifyAVX2(&data[len(data)-64], 1, &last, &tables)
		sh, past := uint(64-rest), ^uint64(0)<<uint(rest)
		b := &blocks[full]
		b.ws = last.ws>>sh | past
		b.anchor = last.anchor >> sh
		if spaceAnchor {
			b.anchor |= past
		}
		b.stop = last.stop >> sh
		b.stopHigh = last.stopHigh >> sh
	default:
		var pad [64]byte
		copy(pad[copy(pad[:], data):], spaces[:])
		classifyAVX2(&pad[0], 1, &blocks[full], &tables)
	}
	return blocks
}

// spaceAnchor: a space, the kernel's padding, is a credential anchor.
var spaceAnchor = redact.IsCredentialAnchor(' ')

var spaces = [64]byte{' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' ', ' '}

// nextStop is the index of the first '"', '\\' or control byte at or
// after i, or len(s.data).
func (s *scanner) nextStop(i int) int {
	if i >= len(s.data) {
		return len(s.data)
	}
	m := s.m
	k := i >> 6
	if w := m[k].stop >> (i & 63); w != 0 {
		return i + bits.TrailingZeros64(w)
	}
	for k++; k < len(m); k++ {
		if w := m[k].stop; w != 0 {
			return k<<6 + bits.TrailingZeros64(w)
		}
	}
	return len(s.data)
}

// nextStopHigh is nextStop that stops at bytes >= 0x80 too.
func (s *scanner) nextStopHigh(i int) int {
	if i >= len(s.data) {
		return len(s.data)
	}
	m := s.m
	k := i >> 6
	if w := m[k].stopHigh >> (i & 63); w != 0 {
		return i + bits.TrailingZeros64(w)
	}
	for k++; k < len(m); k++ {
		if w := m[k].stopHigh; w != 0 {
			return k<<6 + bits.TrailingZeros64(w)
		}
	}
	return len(s.data)
}

// nextNonWS is skipWS by the bitmaps.
func (s *scanner) nextNonWS(i int) int {
	if i >= len(s.data) {
		return i
	}
	m := s.m
	k := i >> 6
	if w := ^m[k].ws >> (i & 63); w != 0 {
		return min(i+bits.TrailingZeros64(w), len(s.data))
	}
	for k++; k < len(m); k++ {
		if w := ^m[k].ws; w != 0 {
			return min(k<<6+bits.TrailingZeros64(w), len(s.data))
		}
	}
	return len(s.data)
}

// anyAnchor reports whether data[i:j] holds a credential anchor.
func (s *scanner) anyAnchor(i, j int) bool {
	m := s.m
	for i < j {
		k := i >> 6
		w := m[k].anchor >> (i & 63)
		if n := j - i; n < 64 {
			w &= 1<<n - 1
		}
		if w != 0 {
			return true
		}
		i = (k + 1) << 6
	}
	return false
}
