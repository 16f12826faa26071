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
)

// stream is the state of one stream: a few dozen bytes. Times are unix
// nanoseconds of capture time (0 offline, where captures carry none).
type stream struct {
	last    int64
	startNs int64
	lastNs  int64
	first   uint64 // Input.Index of the first record, orders end-of-input findings
	chunkUs uint32 // µs from start to the first chunk, +1; 0 = none yet
	records uint32
	// echo hashes (0 = not seen): session_id, method, jsonrpc_id
	sess, method, rpc uint32
	keyOff            uint32
	keyLen            uint16
	flags             uint16
	heartbeats        uint16
	errors            uint16
}

// maxKeyLen bounds the stored key; longer keys keep a prefix and a hash of
// the whole (so that a hostile request_id cannot take unbounded memory).
const maxKeyLen = 512

// table is an open-addressing hash table (linear probing, backward-shift
// deletion) of dense stream states, with keys in an append-only arena.
// A slot holds the low 32 bits of the key's hash (high half) and the dense
// index + 1 (low half); 0 is empty.
type table struct {
	slots []uint64
	dense []stream
	arena []byte
	dead  int
	seed  maphash.Seed
}

func newTable(hint int) *table {
	n := 1024
	for n*3/4 < hint && n < 1<<30 {
		n <<= 1
	}
	return &table{slots: make([]uint64, n), seed: maphash.MakeSeed()}
}

func (t *table) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

func (t *table) len() int { return len(t.dense) }

func (t *table) key(i int32) []byte {
	s := &t.dense[i]
	return t.arena[s.keyOff : s.keyOff+uint32(s.keyLen)]
}

// find returns the dense index of key, or -1.
func (t *table) find(key []byte, h uint64) int32 {
	mask := uint64(len(t.slots) - 1)
	tag := h & 0xffffffff
	for p := tag & mask; ; p = (p + 1) & mask {
		sl := t.slots[p]
		if sl == 0 {
			return -1
		}
		if sl>>32 == tag {
			i := int32(sl&0xffffffff) - 1
			if bytes.Equal(t.key(i), key) {
				return i
			}
		}
	}
}

// insert adds key (not present) and returns its dense index; the state is
// zeroed.
func (t *table) insert(key []byte, h uint64) int32 {
	if (len(t.dense)+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	i := int32(len(t.dense))
	t.dense = append(t.dense, stream{keyOff: uint32(len(t.arena)), keyLen: uint16(len(key))})
	t.arena = append(t.arena, key...)
	t.place(h&0xffffffff, uint64(i)+1)
	return i
}

func (t *table) place(tag, v uint64) {
	mask := uint64(len(t.slots) - 1)
	p := tag & mask
	for t.slots[p] != 0 {
		p = (p + 1) & mask
	}
	t.slots[p] = tag<<32 | v
}

func (t *table) grow() {
	old := t.slots
	t.slots = make([]uint64, len(old)*2)
	for _, sl := range old {
		if sl != 0 {
			t.place(sl>>32, sl&0xffffffff)
		}
	}
}

// slotOf finds the slot holding dense index i.
func (t *table) slotOf(i int32) uint64 {
	mask := uint64(len(t.slots) - 1)
	tag := t.hash(t.key(i)) & 0xffffffff
	want := uint64(i) + 1
	for p := tag & mask; ; p = (p + 1) & mask {
		if t.slots[p]&0xffffffff == want {
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
			home := (sl >> 32) & mask
			// Move sl into p if its home is not in (p, q] cyclically.
			if (q > p && (home <= p || home > q)) || (q < p && home <= p && home > q) {
				t.slots[p] = sl
				p = q
				break
			}
		}
	}
removed:
	t.dead += int(t.dense[i].keyLen)
	last := int32(len(t.dense) - 1)
	if i != last {
		lp := t.slotOf(last)
		t.slots[lp] = t.slots[lp]&^0xffffffff | (uint64(i) + 1)
		t.dense[i] = t.dense[last]
	}
	t.dense = t.dense[:last]
	if t.dead > 1<<20 && t.dead > len(t.arena)/2 {
		t.compact()
	}
}

// compact rewrites the arena with only the live keys.
func (t *table) compact() {
	arena := make([]byte, 0, len(t.arena)-t.dead+len(t.arena)/8)
	for i := range t.dense {
		s := &t.dense[i]
		off := len(arena)
		arena = append(arena, t.arena[s.keyOff:s.keyOff+uint32(s.keyLen)]...)
		s.keyOff = uint32(off)
	}
	t.arena, t.dead = arena, 0
}
