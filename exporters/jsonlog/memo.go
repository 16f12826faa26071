package jsonlog

import "encoding/binary"

// memo remembers, for short byte strings that a record log sees record
// after record (keys, a converter's name, a status, a stream's id), the
// result of a pure function of them: a key's mode, or that a string holds
// nothing to mask. It belongs to one state (one Redact call at a time), so
// it needs no lock. A hit returns what the function returned for the same
// bytes; a miss costs a hash. Two ways a set; a full set loses the way not
// used last, so that a string seen once evicts nothing the next record
// needs.
//
// The hash reads the length and the first and last eight bytes only: it
// is a few instructions. It is not seeded: a producer that made its
// strings collide would only make the memo miss.
type memo struct {
	sets [memoSets][2]memoEntry
	last [memoSets]uint8 // the way of each set used last
}

type memoEntry struct {
	n uint8 // the string's length + 1; 0: empty
	b [memoMaxLen]byte
	v uint64
}

const (
	memoSets   = 256
	memoMaxLen = 79 // an entry is 88 bytes; a converter's name is ~70
)

func newMemo() *memo { return new(memo) }

// memoHash mixes len(s) and its first and last eight bytes (fewer when s
// is shorter).
func memoHash(s []byte) uint64 {
	var a, b uint64
	switch n := len(s); {
	case n >= 8:
		a, b = binary.LittleEndian.Uint64(s), binary.LittleEndian.Uint64(s[n-8:])
	case n >= 4:
		a, b = uint64(binary.LittleEndian.Uint32(s)), uint64(binary.LittleEndian.Uint32(s[n-4:]))
	default:
		for i, c := range s {
			a |= uint64(c) << (8 * i)
		}
	}
	h := (a*0x9e3779b97f4a7c15^b)*0xc2b2ae3d27d4eb4f ^ uint64(len(s))
	return h ^ h>>29
}

// get returns the value put for s, if it is still held.
func (m *memo) get(s []byte) (uint64, bool) {
	if m == nil || len(s) > memoMaxLen {
		return 0, false
	}
	h := memoHash(s) % memoSets
	set := &m.sets[h]
	for w := range set {
		if e := &set[w]; int(e.n) == len(s)+1 && string(e.b[:len(s)]) == string(s) {
			m.last[h] = uint8(w)
			return e.v, true
		}
	}
	return 0, false
}

// put remembers v for s (nothing when s is too long to hold).
func (m *memo) put(s []byte, v uint64) {
	if m == nil || len(s) > memoMaxLen {
		return
	}
	h := memoHash(s) % memoSets
	set := &m.sets[h]
	w := 1 - m.last[h]
	if set[0].n == 0 {
		w = 0
	}
	e := &set[w]
	e.n, e.v = uint8(len(s)+1), v
	copy(e.b[:], s)
	m.last[h] = w
}
