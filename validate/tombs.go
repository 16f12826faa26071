package validate

import (
	"math/bits"
	"unsafe"
)

// tombSet remembers streams that ended, by the hash of their key, for
// after_final / after_done (and to keep late records of cancelled streams
// silent), instead of a stream's state: a ring of the last len(ring) ends
// (the oldest is forgotten first) and an open-addressing index of ring
// places by hash, 12 to 24 bytes a tombstone (a Go map of them took some
// 40, and the collector's headroom doubles what is on the heap). The index
// grows with what the ring holds.
type tombSet struct {
	// ring holds the hashes, their low two bits replaced by how the
	// stream ended (the hash is compared without them): ended, cancelled,
	// evicted, or 0 for idled.
	ring []uint64
	pos  int
	n    int // ring places used (len(ring) once it wrapped)
	// idx holds ring place + 1 of the latest end of each hash (0: empty),
	// linear probing, at a load of at most 1/2; live is how many it holds.
	// Above the place (the bits of placeMask) an entry holds a tag, the
	// top bits of its hash (tombTag), so that a probe passes an entry of
	// another hash without reading the ring, whose places are spread over
	// many cache lines (a new stream's lookup that met one cost a miss).
	idx       []uint32
	placeMask uint32
	live      int
	// forgotEvicted: the tombstone of an evicted stream was forgotten (the
	// ring was full), so that a record of a stream not in the table may
	// be one whose start the table held and lost: its first sequence is
	// then not judged (no seq_start: a loss is never a finding).
	forgotEvicted bool
}

const (
	tombHow  = 3 // the low bits of a ring entry: ended, cancelled, evicted or 0 (idled)
	minTombs = 16
)

func newTombSet(n int) tombSet {
	n = max(n, 1)
	m := uint32(1<<32 - 1) // a ring of 2^32-1 places or more: no tag
	if b := bits.Len(uint(n)); b < 32 {
		m = 1<<b - 1
	}
	t := tombSet{ring: make([]uint64, n), idx: make([]uint32, minTombs), placeMask: m}
	// The ring is written from its start, place after place.
	k := min(n, tombPrefault)
	prefault(asBytes(t.ring[:k:k]))
	return t
}

// tombPrefault is how much of a tombstone ring is prefaulted when it is
// made (64 KiB): the default's (1 << 16 over 61 partitions) whole.
const tombPrefault = 8 << 10

// tag is the tag of hash h in an index entry.
func (t *tombSet) tag(h uint64) uint32 { return uint32(h>>32) &^ t.placeMask }

// at is the ring place of index entry v (not 0).
func (t *tombSet) at(v uint32) int { return int(v&t.placeMask) - 1 }

func (t *tombSet) home(h uint64) int { return int(h>>2) & (len(t.idx) - 1) }

// prefetch asks for the index slot of h (slot reads it).
func (t *tombSet) prefetch(h uint64) {
	prefetch(uintptr(unsafe.Pointer(&t.idx[t.home(h&^tombHow)])))
}

// slot is the index slot of h, or -1.
func (t *tombSet) slot(h uint64) int {
	h &^= tombHow
	tg := t.tag(h)
	for p := t.home(h); ; p = (p + 1) & (len(t.idx) - 1) {
		v := t.idx[p]
		if v == 0 {
			return -1
		}
		if v&^t.placeMask == tg && t.ring[t.at(v)]&^tombHow == h {
			return p
		}
	}
}

// place puts ring place r (of hash h) in the index, in h's slot if it has
// one.
func (t *tombSet) place(h uint64, r int) {
	h &^= tombHow
	e := t.tag(h) | uint32(r+1)
	p := t.home(h)
	for ; t.idx[p] != 0; p = (p + 1) & (len(t.idx) - 1) {
		if v := t.idx[p]; v&^t.placeMask == e&^t.placeMask && t.ring[t.at(v)]&^tombHow == h {
			t.idx[p] = e
			return
		}
	}
	t.idx[p] = e
	t.live++
	if t.live*2 > len(t.idx) {
		old := t.idx
		t.idx = make([]uint32, 2*len(old))
		if len(t.idx) >= 512 {
			prefault(asBytes(t.idx)) // its own pages: written all over now
		}
		for _, v := range old {
			if v != 0 {
				q := t.home(t.ring[t.at(v)])
				for t.idx[q] != 0 {
					q = (q + 1) & (len(t.idx) - 1)
				}
				t.idx[q] = v
			}
		}
	}
}

// unslot empties index slot p (backward-shift deletion: no index
// tombstones).
func (t *tombSet) unslot(p int) {
	mask := len(t.idx) - 1
	t.live--
	for {
		t.idx[p] = 0
		q := p
		for {
			q = (q + 1) & mask
			v := t.idx[q]
			if v == 0 {
				return
			}
			// Move v into p unless its home is cyclically in (p, q].
			if h := t.home(t.ring[t.at(v)]); (q-h)&mask >= (q-p)&mask {
				t.idx[p] = v
				p = q
				break
			}
		}
	}
}

// add remembers the end of the stream of hash h; how is ended, cancelled
// or evicted.
func (t *tombSet) add(h uint64, how int) {
	switch how {
	case ended, cancelled, evicted:
	case idled:
		how = 0 // the one value of the two bits no other end takes
	default:
		how = ended
	}
	if t.n == len(t.ring) {
		// The oldest end goes; its hash with it if it is its latest.
		old := t.ring[t.pos]
		if p := t.slot(old); p >= 0 && t.at(t.idx[p]) == t.pos {
			if int(old&tombHow) == evicted {
				t.forgotEvicted = true
			}
			t.unslot(p)
		}
	} else {
		t.n++
	}
	t.ring[t.pos] = h&^tombHow | uint64(how)&tombHow
	t.place(h, t.pos)
	if t.pos++; t.pos == len(t.ring) {
		t.pos = 0
	}
}

// state says whether the stream of hash h ended, and how.
func (t *tombSet) state(h uint64) int {
	if p := t.slot(h); p >= 0 {
		if how := int(t.ring[t.at(t.idx[p])] & tombHow); how != 0 {
			return how
		}
		return idled
	}
	return notEnded
}

// drop forgets h (a new request reuses a finished id).
func (t *tombSet) drop(h uint64) {
	if p := t.slot(h); p >= 0 {
		t.unslot(p)
	}
}
