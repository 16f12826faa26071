package jsonlog

import "hash/maphash"

// memo remembers, for short byte strings that a record log sees record
// after record (keys, a converter's name, a status, a stream's id), the
// result of a pure function of them: a key's class, or that a string holds
// nothing to mask. It belongs to one state (one Redact call at a time), so
// it needs no lock. A hit returns what the function returned for the same
// bytes; a miss costs a hash. Two ways a set; a full set loses the way a
// bit of the hash picks.
type memo struct {
	seed maphash.Seed
	sets [memoSets][2]memoEntry
}

type memoEntry struct {
	n uint8 // the string's length + 1; 0: empty
	v uint8
	b [memoMaxLen]byte
}

const (
	memoSets   = 128
	memoMaxLen = 78 // an entry is 80 bytes; a converter's name is ~70
)

func newMemo() *memo { return &memo{seed: maphash.MakeSeed()} }

func (m *memo) set(s []byte) (*[2]memoEntry, int) {
	h := maphash.Bytes(m.seed, s)
	return &m.sets[h%memoSets], int(h>>63) & 1
}

// get returns the value put for s, if it is still held.
func (m *memo) get(s []byte) (uint8, bool) {
	if m == nil || len(s) > memoMaxLen {
		return 0, false
	}
	set, _ := m.set(s)
	for w := range set {
		if e := &set[w]; int(e.n) == len(s)+1 && string(e.b[:len(s)]) == string(s) {
			return e.v, true
		}
	}
	return 0, false
}

// put remembers v for s (nothing when s is too long to hold).
func (m *memo) put(s []byte, v uint8) {
	if m == nil || len(s) > memoMaxLen {
		return
	}
	set, victim := m.set(s)
	w := victim
	if set[0].n == 0 {
		w = 0
	} else if set[1].n == 0 {
		w = 1
	}
	e := &set[w]
	e.n, e.v = uint8(len(s)+1), v
	copy(e.b[:], s)
}
