package validate

import (
	"bytes"
	"hash/maphash"
)

// Stream flags.
const (
	fRequest   uint16 = 1 << iota // the request envelope was seen
	fResponded                    // at least one tracked response/chunk record
	fSeq                          // last holds a sequence
	fEnded                        // final/done seen, or cancelled: a tombstone
	fCancelled                    // ended by chat.interrupt
	fGap                          // the tap lost messages while the stream was open
	fResync                       // next sequence re-bases without findings (after a gap)
	fJoined                       // first seen within the join window
	fFrame                        // an EventMesh sid stream (else E2A)
	fStarted                      // StreamStart was reported
	fFailed                       // ended with a failure
	fEvicted                      // ended by eviction from a full table
)

// stream is the state of one stream, 48 bytes. Times: startNs is unix
// nanoseconds of capture time (0 offline, where captures carry none); the
// others are relative to it.
type stream struct {
	last    int64  // last sequence (valid with fSeq)
	startNs int64  // capture time of the first record or the request
	lastMs  uint32 // ms from start to the last record (saturates: 49 days)
	chunkUs uint32 // µs from start to the first chunk, +1; 0 = none yet
	records uint32
	// echo hashes (0 = not seen): session_id (also matches interrupts),
	// method and jsonrpc_id (16 bits: a missed mismatch is 1 in 65536).
	sess        uint32
	method, rpc uint16
	keyRef      uint32 // arena chunk << 16 | offset
	packed      uint32 // key length (10 bits) | heartbeats (11) | errors (11), saturating
	flags       uint16
	_           uint16
}

const (
	keyLenBits = 10
	countBits  = 11
	countMax   = 1<<countBits - 1
)

func (s *stream) keyLen() int     { return int(s.packed & (1<<keyLenBits - 1)) }
func (s *stream) heartbeats() int { return int(s.packed >> keyLenBits & countMax) }
func (s *stream) errors() int     { return int(s.packed >> (keyLenBits + countBits)) }

func (s *stream) addHeartbeat() {
	if s.heartbeats() < countMax {
		s.packed += 1 << keyLenBits
	}
}

func (s *stream) addError() {
	if s.errors() < countMax {
		s.packed += 1 << (keyLenBits + countBits)
	}
}

// lastNs is the capture time of the stream's last record.
func (s *stream) lastNs() int64 { return s.startNs + int64(s.lastMs)*1e6 }

// seen records activity at ns.
func (s *stream) seen(ns int64) {
	d := (ns - s.startNs) / 1e6
	switch {
	case d < 0:
		d = 0
	case d > 1<<32-1:
		d = 1<<32 - 1
	}
	if uint32(d) > s.lastMs {
		s.lastMs = uint32(d)
	}
}

// maxKeyLen bounds the stored key; longer keys keep a prefix and a hash of
// the whole (so that a hostile request_id cannot take unbounded memory).
const maxKeyLen = 512

const (
	segBits    = 12 // dense states in segments of 4096: no growth slack
	segSize    = 1 << segBits
	arenaChunk = 64 << 10 // keys in 64 KiB chunks (a key never spans two)
	idxBits    = 24       // a slot: dense index + 1 (24 bits) | hash tag (8 bits)
	// MaxTableStreams is the most streams one engine can hold.
	MaxTableStreams = 1<<idxBits - 2
)

// table is an open-addressing hash table (linear probing, backward-shift
// deletion) of dense stream states, with keys in an append-only arena.
// Per stream: 48 bytes of state, 4-byte slots at a load of at most 3/4,
// and the key itself.
type table struct {
	slots []uint32
	segs  [][]stream
	n     int
	arena [][]byte
	dead  int
	seed  maphash.Seed
}

func newTable(hint int) *table {
	n := 1024
	for n*3/4 < hint && n < 1<<30 {
		n <<= 1
	}
	return &table{slots: make([]uint32, n), seed: maphash.MakeSeed()}
}

func (t *table) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

func (t *table) len() int { return t.n }

// at returns the state of dense index i.
func (t *table) at(i int32) *stream { return &t.segs[i>>segBits][i&(segSize-1)] }

func (t *table) key(i int32) []byte {
	s := t.at(i)
	c, off := s.keyRef>>16, s.keyRef&0xffff
	return t.arena[c][off : int(off)+s.keyLen()]
}

func tag(h uint64) uint32 { return uint32(h>>56) << idxBits }

// find returns the dense index of key, or -1.
func (t *table) find(key []byte, h uint64) int32 {
	mask := uint64(len(t.slots) - 1)
	tg := tag(h)
	for p := h & mask; ; p = (p + 1) & mask {
		sl := t.slots[p]
		if sl == 0 {
			return -1
		}
		if sl&^(1<<idxBits-1) == tg {
			i := int32(sl&(1<<idxBits-1)) - 1
			if bytes.Equal(t.key(i), key) {
				return i
			}
		}
	}
}

// insert adds key (not present) and returns its dense index; the state is
// zeroed. The caller keeps len() below MaxTableStreams.
func (t *table) insert(key []byte, h uint64) int32 {
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	i := int32(t.n)
	t.room(i)
	t.n++
	*t.at(i) = stream{keyRef: t.store(key), packed: uint32(len(key))}
	t.place(h, uint32(i)+1)
	return i
}

// room makes dense index i addressable. A segment starts small and doubles
// up to segSize, so that a table that holds a little more than a multiple
// of segSize (every partition does, by chance) does not carry a whole
// empty segment: pointers from at are valid until the next insert.
func (t *table) room(i int32) {
	seg, off := int(i>>segBits), int(i&(segSize-1))
	if seg == len(t.segs) {
		t.segs = append(t.segs, make([]stream, 0, minSeg))
	}
	sg := t.segs[seg]
	if off < len(sg) {
		return
	}
	if off == cap(sg) {
		ns := make([]stream, len(sg), min(segSize, 2*cap(sg)))
		copy(ns, sg)
		sg = ns
	}
	t.segs[seg] = sg[:off+1]
}

// minSeg is the size a segment starts at.
const minSeg = 256

// store appends key to the arena and returns its reference.
func (t *table) store(key []byte) uint32 {
	c := len(t.arena) - 1
	if c < 0 || len(t.arena[c])+len(key) > arenaChunk {
		t.arena = append(t.arena, make([]byte, 0, arenaChunk))
		c++
	}
	off := len(t.arena[c])
	t.arena[c] = append(t.arena[c], key...)
	return uint32(c)<<16 | uint32(off)
}

func (t *table) place(h uint64, v uint32) {
	mask := uint64(len(t.slots) - 1)
	p := h & mask
	for t.slots[p] != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = tag(h) | v
}

func (t *table) grow() {
	t.slots = make([]uint32, len(t.slots)*2)
	for i := int32(0); i < int32(t.n); i++ {
		t.place(t.hash(t.key(i)), uint32(i)+1)
	}
}

func (t *table) home(sl uint32) uint64 {
	return t.hash(t.key(int32(sl&(1<<idxBits-1))-1)) & uint64(len(t.slots)-1)
}

// slotOf finds the slot holding dense index i.
func (t *table) slotOf(i int32) uint64 {
	mask := uint64(len(t.slots) - 1)
	want := uint32(i) + 1
	for p := t.hash(t.key(i)) & mask; ; p = (p + 1) & mask {
		if t.slots[p]&(1<<idxBits-1) == want {
			return p
		}
	}
}

// remove deletes dense index i. The last dense entry moves into i.
func (t *table) remove(i int32) {
	mask := uint64(len(t.slots) - 1)
	p := t.slotOf(i)
	// Backward-shift deletion keeps probe chains intact without tombstones.
	for {
		t.slots[p] = 0
		q := p
		for {
			q = (q + 1) & mask
			sl := t.slots[q]
			if sl == 0 {
				goto removed
			}
			home := t.home(sl)
			// Move sl into p if its home is not in (p, q] cyclically.
			if (q > p && (home <= p || home > q)) || (q < p && home <= p && home > q) {
				t.slots[p] = sl
				p = q
				break
			}
		}
	}
removed:
	t.dead += t.at(i).keyLen()
	last := int32(t.n - 1)
	if i != last {
		lp := t.slotOf(last)
		t.slots[lp] = t.slots[lp]&^(1<<idxBits-1) | (uint32(i) + 1)
		*t.at(i) = *t.at(last)
	}
	*t.at(last) = stream{}
	t.n--
	if t.n&(segSize-1) == 0 && int(t.n>>segBits) < len(t.segs)-1 {
		// Keep one spare segment; free the others as the table shrinks.
		t.segs = t.segs[:t.n>>segBits+1]
	}
	if t.dead > 1<<20 && t.dead*2 > t.liveBytes() {
		t.compact()
	}
}

func (t *table) liveBytes() int {
	n := 0
	for _, c := range t.arena {
		n += len(c)
	}
	return n - t.dead
}

// compact rewrites the arena with only the live keys.
func (t *table) compact() {
	old := t.arena
	t.arena = nil
	for i := int32(0); i < int32(t.n); i++ {
		s := t.at(i)
		c, off := s.keyRef>>16, s.keyRef&0xffff
		s.keyRef = t.store(old[c][off : int(off)+s.keyLen()])
	}
	t.dead = 0
}
