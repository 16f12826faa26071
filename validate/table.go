package validate

import (
	"bytes"
	"hash/maphash"
	"runtime"
	"unsafe"
)

// Stream flags, in the low bits of stream.flags (above them: the end state
// and two saturating counters).
const (
	fRequest   uint32 = 1 << iota // the request envelope was seen
	fResponded                    // at least one tracked response/chunk record
	fSeq                          // last holds a sequence
	fGap                          // the tap lost messages while the stream was open
	fResync                       // next sequence re-bases without findings (after a gap)
	fJoined                       // first seen within the join window
	fFrame                        // an EventMesh sid stream (else E2A)
	fStarted                      // StreamStart was reported
	// fEnded is the end state's two bits: non-zero once the stream ended
	// (final/done seen, cancelled or evicted: a tombstone). Set it with
	// setEnded, never with |=.
	fEnded = 3 << flagBits
)

const (
	flagBits   = 8 // the flags above
	stateBits  = 2 // end state: 0 open, else ended, cancelled or evicted (the lookup outcomes)
	countBits  = 11
	countMax   = 1<<countBits - 1
	hbShift    = flagBits + stateBits
	errShift   = hbShift + countBits
	stateShift = flagBits
)

// stream is the state of one stream, 40 bytes, 4-byte aligned (so that
// a segment holds no padding). Times: the start is unix nanoseconds of
// capture time (0 offline, where captures carry none); the others are
// relative to it. The key is in the table's arena, length-prefixed.
type stream struct {
	startLo, startHi uint32 // capture time of the first record or the request
	// last sequence (valid with fSeq); lastBig: the sequence is in the
	// table's side map (one past 32 bits: RULES.md sets no bound; or a
	// negative frame seq).
	last    uint32
	lastMs  uint32 // ms from start to the last record (saturates: 49 days)
	chunkUs uint32 // µs from start to the first chunk, +1; 0 = none yet
	records uint32
	// echo hashes (0 = not seen): session_id (also matches interrupts),
	// method and jsonrpc_id (16 bits: a missed mismatch is 1 in 65536).
	sess        uint32
	method, rpc uint16
	keyRef      uint32 // arena chunk << 16 | offset
	flags       uint32 // flags (8 bits) | end state (2) | heartbeats (11) | errors (11), counters saturating
}

// lastBig marks a sequence kept in table.big.
const lastBig = 1<<32 - 1

func (s *stream) startNs() int64 { return int64(uint64(s.startHi)<<32 | uint64(s.startLo)) }

func (s *stream) setStart(ns int64) { s.startLo, s.startHi = uint32(ns), uint32(uint64(ns)>>32) }

func (s *stream) heartbeats() int { return int(s.flags >> hbShift & countMax) }
func (s *stream) errors() int     { return int(s.flags >> errShift) }

// endState is notEnded, ended, cancelled or evicted.
func (s *stream) endState() int { return int(s.flags >> stateShift & (1<<stateBits - 1)) }

// setEnded marks the stream ended, how (ended, cancelled or evicted), once:
// a later call does not change how.
func (s *stream) setEnded(how int) {
	if s.flags&fEnded == 0 {
		s.flags |= uint32(how) << stateShift
	}
}

func (s *stream) addHeartbeat() {
	if s.heartbeats() < countMax {
		s.flags += 1 << hbShift
	}
}

func (s *stream) addError() {
	if s.errors() < countMax {
		s.flags += 1 << errShift
	}
}

// lastNs is the capture time of the stream's last record.
func (s *stream) lastNs() int64 { return s.startNs() + int64(s.lastMs)*1e6 }

// seen records activity at ns.
func (s *stream) seen(ns int64) {
	d := (ns - s.startNs()) / 1e6
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
	idxMask    = 1<<idxBits - 1
	// MaxTableStreams is the most streams one engine can hold.
	MaxTableStreams = 1<<idxBits - 2
)

// A key is at most 16383 bytes (its length takes two bytes): the stream
// part is cut at maxKeyLen (composite), tap and connection names are short.

// table is an open-addressing hash table (linear probing, backward-shift
// deletion) of dense stream states, with keys in an append-only arena.
// Per stream: 40 bytes of state, a 4-byte slot at a load between 3/5 and
// 3/4 (the slot array grows by a quarter, not by doubling: 6 bytes a
// stream on average, and a growing table holds only 2.25 slot arrays'
// worth for a moment, one partition at a time; the old one is unmapped at
// once), and the key with a one-byte length (two past 127). All of it is
// off the Go heap (offheap.go).
type table struct {
	slots []uint32
	segs  [][]stream
	n     int
	arena [][]byte
	dead  int
	seed  maphash.Seed
	// big holds the sequences outside [0, lastBig) (stream.last == lastBig), by
	// keyRef (unique among the live streams).
	big map[uint32]int64
	// mem owns the slots, the segments and the key chunks: mapped off the
	// Go heap (offheap.go).
	mem *tableMem
	// spare holds the key chunks a compaction mapped ahead (it needs them
	// all or none).
	spare [][]byte
	// deadRetry: a compaction that failed is tried again once this many
	// key bytes are dead (not at every remove).
	deadRetry int
	// hintSlots: the slot array doubles up to this size, then grows by a
	// quarter (newTable).
	hintSlots int
	// removes counts the removals: only remove moves a dense index (the
	// last one into the hole), so while it stands still every dense index
	// names the stream it named (the frame cache checks an entry by it).
	removes uint64
	// sessF counts the streams the table holds by their session echo
	// hash (stream.sess, set through setSess), in 1<<sessBits buckets, a
	// count that reached 255 held there for good: a bucket at 0 says no
	// stream of those sessions is here, so that a chat.interrupt does not
	// walk the table (cancelSession walked every stream of every partition
	// for each one). nil until a stream has a session.
	sessF *[1 << sessBits]uint8
}

// sessBits: 1024 one-byte counters a table (1 KiB, whatever it holds).
const sessBits = 10

// sessFilterOff turns the session filter off (tests compare the verdicts).
var sessFilterOff = false

// setSess sets s.sess (s a stream of t) to h, counting it in sessF.
func (t *table) setSess(s *stream, h uint32) {
	if s.sess == h {
		return
	}
	t.uncountSess(s.sess)
	s.sess = h
	if h == 0 {
		return
	}
	if t.sessF == nil {
		t.sessF = new([1 << sessBits]uint8)
	}
	if c := &t.sessF[h&(1<<sessBits-1)]; *c < 255 {
		*c++
	}
}

// uncountSess takes a stream of session h out of sessF.
func (t *table) uncountSess(h uint32) {
	if h == 0 || t.sessF == nil {
		return
	}
	if c := &t.sessF[h&(1<<sessBits-1)]; *c > 0 && *c < 255 {
		*c--
	}
}

// maySess says whether the table may hold a stream of session h: false
// only when it holds none.
func (t *table) maySess(h uint32) bool {
	return sessFilterOff || t.sessF != nil && t.sessF[h&(1<<sessBits-1)] != 0
}

// minSlots is the smallest slot array.
const minSlots = 64

// newTable returns a table for about hint streams: its slot array starts
// at minSlots and doubles up to hint's size, then grows by a quarter. A
// partition that holds a few streams at a time (a frame file's
// interleaved streams, over 61 partitions) keeps a slot array of a few
// cache lines, which a new stream's lookup finds cached, where one sized
// for the hint (1433 slots) was probed at a random line, a miss at every
// new stream; one that fills rehashes its keys five times more before
// the hint, a few thousand at most.
func newTable(hint int) *table {
	t := &table{seed: maphash.MakeSeed(), mem: &tableMem{}, hintSlots: max(minSlots, hint*4/3+1)}
	if t.slots = t.newSlots(minSlots); t.slots == nil {
		// No memory to map: the smallest slot array on the heap (a table
		// must have one; free leaves it alone).
		t.slots = make([]uint32, minSlots)
	}
	runtime.AddCleanup(t, (*tableMem).freeAll, t.mem)
	return t
}

// newSlots maps a slot array of n, or returns nil.
func (t *table) newSlots(n int) []uint32 {
	b := t.mem.alloc(4*n, false)
	if b == nil {
		return nil
	}
	prefault(b) // probed at once, and filled at a load of 3/5 or more
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n)
}

func asBytes[T any](s []T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), cap(s)*int(unsafe.Sizeof(*new(T))))
}

func (t *table) hash(key []byte) uint64 { return maphash.Bytes(t.seed, key) }

func (t *table) len() int { return t.n }

// at returns the state of dense index i.
func (t *table) at(i int32) *stream { return &t.segs[i>>segBits][i&(segSize-1)] }

func (t *table) key(i int32) []byte {
	ref := t.at(i).keyRef
	c := t.arena[ref>>16][ref&0xffff:]
	n, w := int(c[0]), 1
	if n >= 0x80 {
		n, w = n&0x7f|int(c[1])<<7, 2
	}
	return c[w : w+n]
}

// lastSeq is the stream's last sequence.
func (t *table) lastSeq(s *stream) int64 {
	if s.last == lastBig {
		return t.big[s.keyRef]
	}
	return int64(s.last)
}

func (t *table) setLastSeq(s *stream, v int64) {
	if v >= 0 && v < lastBig {
		if s.last == lastBig {
			delete(t.big, s.keyRef)
		}
		s.last = uint32(v)
		return
	}
	if t.big == nil {
		t.big = map[uint32]int64{}
	}
	s.last = lastBig
	t.big[s.keyRef] = v
}

func tag(h uint64) uint32 { return uint32(h>>56) << idxBits }

// homeOf is the home slot of hash h: the high half of h times the slot
// count (any count, not only powers of two).
func (t *table) homeOf(h uint64) int {
	return int((h & 0xffffffff) * uint64(len(t.slots)) >> 32)
}

func (t *table) next(p int) int {
	if p++; p == len(t.slots) {
		return 0
	}
	return p
}

// find returns the dense index of key, or -1.
func (t *table) find(key []byte, h uint64) int32 {
	_, i := t.findSlot(key, h)
	return i
}

// findSlot returns the slot and the dense index of key, or -1, -1.
func (t *table) findSlot(key []byte, h uint64) (int, int32) {
	tg := tag(h)
	for p := t.homeOf(h); ; p = t.next(p) {
		sl := t.slots[p]
		if sl == 0 {
			return -1, -1
		}
		if sl&^idxMask == tg {
			i := int32(sl&idxMask) - 1
			if bytes.Equal(t.key(i), key) {
				return p, i
			}
		}
	}
}

// insert adds key (not present) and returns its dense index; the state is
// zeroed. The caller keeps len() below MaxTableStreams. It returns -1,
// the table unchanged, when the memory it needs cannot be had (offheap.go):
// a slot array that cannot grow is filled up to 7/8 first.
func (t *table) insert(key []byte, h uint64) int32 {
	if (t.n+1)*4 > len(t.slots)*3 && !t.grow() && (t.n+1)*8 > len(t.slots)*7 {
		return -1
	}
	i := int32(t.n)
	if !t.room(i) {
		return -1
	}
	ref, ok := t.store(key)
	if !ok {
		return -1
	}
	t.n++
	*t.at(i) = stream{keyRef: ref}
	t.place(h, uint32(i)+1)
	return i
}

// prefetchInsert asks for the cache lines an insert writes (the next
// dense state, the tail of the key arena), which are cold when a
// partition's streams start far apart (a new stream every few hundred
// records, over tens of partitions): their misses then overlap the
// lookup's (the key's slot, its tombstone) instead of following them.
func (t *table) prefetchInsert() {
	i := t.n
	if seg := i >> segBits; seg < len(t.segs) {
		prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(t.segs[seg]))) + uintptr(i&(segSize-1)*stateSize))
	}
	if c := len(t.arena) - 1; c >= 0 {
		a := t.arena[c]
		prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(a))) + uintptr(len(a)))
	}
}

// room makes dense index i addressable. A segment is mapped whole and
// paid page by page as it fills, so that a table that holds a little more
// than a multiple of segSize (every partition does, by chance) does not
// carry a whole empty segment: pointers from at are valid until the next
// insert or remove.
func (t *table) room(i int32) bool {
	seg, off := int(i>>segBits), int(i&(segSize-1))
	if seg == len(t.segs) {
		b := t.mem.alloc(segSize*stateSize, false)
		if b == nil {
			return false
		}
		prefault(b[:1]) // its first state is written now
		t.segs = append(t.segs, unsafe.Slice((*stream)(unsafe.Pointer(&b[0])), segSize)[:0])
	}
	if sg := t.segs[seg]; off >= len(sg) {
		t.segs[seg] = sg[:off+1]
	}
	return true
}

// stateSize is the bytes of one stream state.
const stateSize = int(unsafe.Sizeof(stream{}))

// store appends key, length first, to the arena and returns its
// reference; false when a new chunk is needed and cannot be had.
func (t *table) store(key []byte) (uint32, bool) {
	w := 1
	if len(key) >= 0x80 {
		w = 2
	}
	c := len(t.arena) - 1
	if c < 0 || len(t.arena[c])+w+len(key) > arenaChunk {
		var b []byte
		if n := len(t.spare); n > 0 {
			b, t.spare = t.spare[n-1], t.spare[:n-1]
		} else if b = t.mem.alloc(arenaChunk, false); b == nil {
			return 0, false
		} else {
			prefault(b[:1]) // key is stored there now
		}
		t.arena = append(t.arena, b[:0])
		c++
	}
	off := len(t.arena[c])
	if w == 1 {
		t.arena[c] = append(t.arena[c], byte(len(key)))
	} else {
		t.arena[c] = append(t.arena[c], byte(len(key))|0x80, byte(len(key)>>7))
	}
	t.arena[c] = append(t.arena[c], key...)
	return uint32(c)<<16 | uint32(off), true
}

// keyBytes is what key i takes in the arena.
func (t *table) keyBytes(i int32) int {
	n := len(t.key(i))
	if n < 0x80 {
		return 1 + n
	}
	return 2 + n
}

func (t *table) place(h uint64, v uint32) {
	p := t.homeOf(h)
	for t.slots[p] != 0 {
		p = t.next(p)
	}
	t.slots[p] = tag(h) | v
}

// grow makes the slot array a quarter larger and places every entry anew;
// false when the new array cannot be had (the old one stays).
func (t *table) grow() bool {
	old := t.slots
	n := len(old) + max(len(old)/4, minSlots)
	if len(old) < t.hintSlots {
		n = min(2*len(old), t.hintSlots)
	}
	slots := t.newSlots(n)
	if slots == nil {
		return false
	}
	t.slots = slots
	t.mem.free(asBytes(old))
	for i := int32(0); i < int32(t.n); i++ {
		t.place(t.hash(t.key(i)), uint32(i)+1)
	}
	return true
}

func (t *table) home(sl uint32) int {
	return t.homeOf(t.hash(t.key(int32(sl&idxMask) - 1)))
}

// slotOf finds the slot holding dense index i.
func (t *table) slotOf(i int32) int {
	want := uint32(i) + 1
	for p := t.homeOf(t.hash(t.key(i))); ; p = t.next(p) {
		if t.slots[p]&idxMask == want {
			return p
		}
	}
}

// remove deletes dense index i. The last dense entry moves into i.
func (t *table) remove(i int32) { t.removeAt(t.slotOf(i), i) }

// removeAt is remove(i) for i in slot p (findSlot's: no hash of the key
// again to find it).
func (t *table) removeAt(p int, i int32) {
	t.removes++
	// Backward-shift deletion keeps probe chains intact without tombstones.
	for {
		t.slots[p] = 0
		q := p
		for {
			q = t.next(q)
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
	s := t.at(i)
	t.uncountSess(s.sess)
	t.dropKey(i)
	if s.last == lastBig {
		delete(t.big, s.keyRef)
	}
	last := int32(t.n - 1)
	if i != last {
		lp := t.slotOf(last)
		t.slots[lp] = t.slots[lp]&^idxMask | (uint32(i) + 1)
		*s = *t.at(last)
	}
	*t.at(last) = stream{}
	t.n--
	if t.n&(segSize-1) == 0 && int(t.n>>segBits) < len(t.segs)-1 {
		// Keep one spare segment; free the others as the table shrinks.
		for _, sg := range t.segs[t.n>>segBits+1:] {
			t.mem.free(asBytes(sg))
		}
		clear(t.segs[t.n>>segBits+1:])
		t.segs = t.segs[:t.n>>segBits+1]
	}
	if t.dead > 1<<20 && t.dead*2 > t.liveBytes() && t.dead >= t.deadRetry {
		if !t.compact() {
			t.deadRetry = t.dead + arenaChunk
		}
	}
}

// dropKey gives back the arena bytes of dense index i's key, which is
// being removed: the arena's tail if the key ends it (the latest key
// stored, as a stream that ends before any later one of its partition
// starts: a frame file's interleaved streams, a few at a time over many
// partitions), for the next key to take, else dead bytes that a compaction
// reclaims. A key that stayed dead until 1 MiB of them were had cost its
// pages once each (20 000 streams of 1 M frames: 1.2 MB of keys, some 300
// page faults).
func (t *table) dropKey(i int32) {
	ref := t.at(i).keyRef
	n := t.keyBytes(i)
	if c := len(t.arena) - 1; int(ref>>16) == c && int(ref&0xffff)+n == len(t.arena[c]) {
		t.arena[c] = t.arena[c][:ref&0xffff]
		return
	}
	t.dead += n
}

func (t *table) liveBytes() int {
	n := 0
	for _, c := range t.arena {
		n += len(c)
	}
	return n - t.dead
}

// compact rewrites the arena with only the live keys; false, the arena
// unchanged, when the new chunks cannot be had. It maps them all first
// (they may pass the tables' ceiling for the moment: the old ones are
// unmapped right after), so that it never stops half way.
func (t *table) compact() bool {
	need, used := 0, arenaChunk
	for i := int32(0); i < int32(t.n); i++ {
		if k := t.keyBytes(i); used+k > arenaChunk {
			need, used = need+1, k
		} else {
			used += k
		}
	}
	for len(t.spare) < need {
		b := t.mem.alloc(arenaChunk, true)
		if b == nil {
			for _, c := range t.spare {
				t.mem.free(c)
			}
			t.spare = nil
			return false
		}
		t.spare = append(t.spare, b)
	}
	old := t.arena
	t.arena = nil
	var big map[uint32]int64
	for i := int32(0); i < int32(t.n); i++ {
		s := t.at(i)
		ref := s.keyRef
		c := old[ref>>16][ref&0xffff:]
		n, w := int(c[0]), 1
		if n >= 0x80 {
			n, w = n&0x7f|int(c[1])<<7, 2
		}
		s.keyRef, _ = t.store(c[w : w+n]) // from t.spare: cannot fail
		if s.last == lastBig {
			if big == nil {
				big = map[uint32]int64{}
			}
			big[s.keyRef] = t.big[ref]
		}
	}
	t.big = big
	for _, c := range old {
		t.mem.free(c)
	}
	for _, c := range t.spare {
		t.mem.free(c) // none, unless the count above was off
	}
	t.spare = nil
	t.dead, t.deadRetry = 0, 0
	return true
}
