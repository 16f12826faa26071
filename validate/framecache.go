package validate

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// frameCache remembers what the frame rules read from the attribute
// sections of the latest chunks (frame.Find: which names are there, where
// their values are, that the section is clean), and where the streams of
// the latest sids are in the stream tables. A frame file interleaves a few
// streams of many chunks each, and the chunks of a stream mostly carry the
// same attributes (its sid, an etype): such a chunk skips Find, building
// its composite key (tap, conn, the sid with its UUID packed), hashing it
// twice (partition and table) and probing the table. A chunk whose
// section is new (an attribute that changes with every chunk) still finds
// its stream by its sid.
//
// An entry is a hint, never the truth. The attributes are used only for a
// section byte for byte equal to the one they were read from, with the
// same attribute count (the same bytes then decode to the same
// attributes). A stream is used only for a chunk of the same tap,
// connection and sid, once the table entry it names holds the very
// composite key it was made for (keys are unique in a partition's table),
// after the removals pending, as lookup does: a stream removed, evicted,
// moved by a removal (the last dense entry moves into the hole) or
// forgotten is looked up again. Only a removal moves a dense index, so
// while the table counts no removal since the entry was checked
// (table.removes), the index names the same stream and its key is not
// compared again. Hash collisions and sids or sections too
// long to keep cost the work without the cache. The verdicts do not depend
// on it (TestFrameCacheSameVerdicts).
//
// Both caches are four-way set associative: an entry may sit in any way
// of its set, which a hash of its bytes picks, and a new one takes the way
// of its set used least recently, so that a few thousand streams
// interleaved do not evict each other at every chunk as in a direct-mapped
// cache. The hashes and last uses of a set's ways sit together in one
// cache line (fcTag), apart from the entries: a lookup reads that line and
// the one entry it names.
//
// It starts small (fcMinBits: what a few streams at a time need, and
// stays in the CPU's caches) and grows, dropping what it holds, when
// more than one lookup of fcGrowEvery in eight misses, up to fcMaxBits.
type frameCache struct {
	attrTags   []fcTag
	streamTags []fcTag
	attrs      []fcAttrs
	streams    []fcStream
	shift      uint8  // a hash's set is its top bits: h >> shift
	bits       uint8  // log2 of the entries
	tick       uint64 // counts lookups of attribute sections: when a way was last used
	misses     uint32 // of them since the last fcGrowEvery
}

func newFrameCache(bits uint8) *frameCache {
	n := 1 << bits
	return &frameCache{attrTags: make([]fcTag, n), streamTags: make([]fcTag, n),
		attrs: make([]fcAttrs, n), streams: make([]fcStream, n), bits: bits, shift: 64 - (bits - 2)}
}

// set is the first slot of the set of hash h (shift is below 64: no
// check of it at each call).
func (fc *frameCache) set(h uint64) int { return int(h>>(fc.shift&63)) * fcWays }

// ways is the set of tags (attrTags or streamTags) whose first slot is at,
// a set's (so that the set lies in tags): in place, where a slice of tags
// cost the lookup of every frame 18 instructions (cachegrind).
func ways(tags []fcTag, at int) *[fcWays]fcTag {
	return (*[fcWays]fcTag)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(tags)), uintptr(at)*unsafe.Sizeof(fcTag{})))
}

// fcTag is the hash of what a way holds and when it was last used.
type fcTag struct{ hash, used uint64 }

// resize grows the cache when more than one in eight of the last
// fcGrowEvery lookups of attribute sections missed (or about: a new cache
// counts from where the old one was), or starts counting anew.
func (e *Engine) resize() {
	if fc := e.fc; fc.misses > fcGrowEvery/8 && fc.bits < fcMaxBits {
		e.fc = newFrameCache(fc.bits + 2)
		return
	}
	e.fc.misses = 0
}

const (
	fcMinBits   = 8  // 256 entries of each kind at first
	fcMaxBits   = 12 // 4096 at most (1.7 MB)
	fcGrowEvery = 1 << 14
	fcWays      = 4
	fcMaxAttrs  = 128 // longer attribute sections are not cached
	fcMaxSid    = 64  // nor longer sids
	fcMaxKey    = 96  // nor streams of longer composite keys (long tap or conn names)
	fcAttrNames = 8   // len(frameAttrNames)
)

// fcAttrs is what Find read from one clean attribute section, and the
// stream entry of its sid (stream, as it was at gen). plain: what the
// chunk rules read of the section passes them whatever the flags (a
// non-empty sid, no etype or a known one, no meta or a JSON object), and
// the section ends in Data (a STREAM_CHUNK's hot path: observeChunk).
type fcAttrs struct {
	found    uint64
	gen      uint64 // 0: none
	stream   uint16
	keyCount uint16
	attrsLen uint8 // 0: the entry is empty
	plain    bool
	vals     [fcAttrNames][2]uint8
	attrs    [fcMaxAttrs]byte
}

// fcStream is where the stream of one sid on tap and conn is (keyLen 0:
// not known); gen grows whenever the entry is taken for another sid (from
// 1: it never wraps).
type fcStream struct {
	tap     string
	conn    string
	gen     uint64
	removes uint64 // the table's removes when idx was last found to hold key
	// state is the stream's state, t.at(idx), as it was when removes was
	// set: the same while the table's removes are (only a removal moves
	// a state or gives back its segment).
	state  *stream
	idx    int32 // the stream's dense index in partition part
	part   uint16
	sidLen uint8 // 0: the entry is empty
	keyLen uint8
	sid    [fcMaxSid]byte
	key    [fcMaxKey]byte
}

// streamEntry returns the stream entry of sid, or nil (tests).
func (fc *frameCache) streamEntry(sid []byte) *fcStream {
	h := fcHash(sid)
	at := fc.set(h)
	for k := at; k < at+fcWays; k++ {
		if fc.streamTags[k].hash == h && fc.streams[k].holds(sid) {
			return &fc.streams[k]
		}
	}
	return nil
}

// sameString is a == b, without a call when they are the same string
// (a reader's tap and connection names are, frame after frame).
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// sameData reports whether a and b are the same string, not only equal
// ones (a reader's tap and connection names, frame after frame).
func sameData(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// holds reports whether the entry is sid's.
func (st *fcStream) holds(sid []byte) bool {
	return int(st.sidLen) == len(sid) && string(st.sid[:len(sid)]) == string(sid)
}

// frameCacheOff turns the cache off (tests compare the verdicts).
var frameCacheOff = false

// fcHash spreads byte strings over the sets: every 8-byte word, rotated
// by its position, folded with XOR (the last word read where the string
// ends, overlapping the one before), and mixed by one multiply. Cheap
// rather than strong: a collision only costs the work the cache saves.
func fcHash(b []byte) uint64 {
	h := uint64(len(b))
	if len(b) < 8 {
		for i, c := range b {
			h ^= uint64(c) << (8*i + 8)
		}
		return h * 0x9e3779b97f4a7c15
	}
	last := binary.LittleEndian.Uint64(b[len(b)-8:])
	r := 0
	for ; len(b) > 16; b = b[16:] { // two words at a step
		h ^= bits.RotateLeft64(binary.LittleEndian.Uint64(b), r) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[8:]), r+11)
		r += 22
	}
	if len(b) > 8 {
		h ^= bits.RotateLeft64(binary.LittleEndian.Uint64(b), r)
		r += 11
	}
	h ^= bits.RotateLeft64(last, r)
	return h * 0x9e3779b97f4a7c15
}

// frameEntry returns the cache entry of f's attribute section (nil: not
// cached) and whether it holds that section (hit).
func (e *Engine) frameEntry(f *frame.Frame) (en *fcAttrs, hit bool) {
	a := f.AttrSection()
	if frameCacheOff || len(a) > fcMaxAttrs || len(a) == 0 || f.Size > frame.MaxFrameBytes {
		return nil, false
	}
	fc := e.fc
	if fc == nil || (fc.tick+1)&(fcGrowEvery-1) == 0 {
		fc = e.turnFrameCache()
	} else {
		fc.tick++
	}
	h := fcHash(a)
	at := fc.set(h)
	tags := ways(fc.attrTags, at)
	for k := range tags {
		if tags[k].hash == h {
			if en = &fc.attrs[at+k]; en.holds(a, f.KeyCount) {
				tags[k].used = fc.tick
				return en, true
			}
		}
	}
	return fc.take(tags, at, h), false
}

// turnFrameCache counts a lookup of the engine's frame cache when it has
// none yet (it starts one) or when the lookup is the one that resizes it
// (every fcGrowEvery); it returns the cache to look in. Apart, in one call:
// the hot path of frameEntry neither carries this code nor keeps its
// registers aside for it (two calls cost it 5 instructions a frame).
//
//go:noinline
func (e *Engine) turnFrameCache() *frameCache {
	if e.fc == nil {
		e.fc = newFrameCache(fcMinBits)
		e.fc.tick++
		return e.fc
	}
	if e.fc.tick++; e.fc.tick&(fcGrowEvery-1) == 0 {
		e.resize()
	}
	return e.fc
}

// take gives the way of tags (the set at at) used least recently to a
// section of hash h, empty (frameAttrs fills it). Apart, as
// turnFrameCache.
//
//go:noinline
func (fc *frameCache) take(tags *[fcWays]fcTag, at int, h uint64) *fcAttrs {
	old := 0
	for k := range tags {
		if tags[k].used < tags[old].used {
			old = k
		}
	}
	fc.misses++
	tags[old] = fcTag{hash: h, used: fc.tick}
	en := &fc.attrs[at+old]
	en.attrsLen = 0
	return en
}

// holds reports whether the entry holds section a of keyCount attributes.
func (en *fcAttrs) holds(a []byte, keyCount uint16) bool {
	return int(en.attrsLen) == len(a) && en.keyCount == keyCount && string(en.attrs[:len(a)]) == string(a)
}

// frameAttrs is f.Find(frameAttrSet, vals) through the cache entry en of
// f's section (frameEntry; hit: en holds it); it returns the entry (nil:
// not cached), for frameStream.
func (e *Engine) frameAttrs(f *frame.Frame, vals *[fcAttrNames][]byte, en *fcAttrs, hit bool) (found uint64, clean bool, _ *fcAttrs) {
	if en == nil {
		found, clean = f.Find(frameAttrSet, vals[:])
		return found, clean, nil
	}
	a := f.AttrSection()
	if hit {
		for m := en.found; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			v := en.vals[k]
			vals[k] = a[v[0] : int(v[0])+int(v[1])]
		}
		return en.found, true, en
	}
	found, clean = f.Find(frameAttrSet, vals[:])
	if !clean {
		return found, clean, nil
	}
	en.attrsLen = 0 // empty until it is filled
	for m := found; m != 0; m &= m - 1 {
		k := bits.TrailingZeros64(m)
		// A value aliases the section, which ends where its capacity does.
		off := cap(a) - cap(vals[k])
		if off < 0 || off+len(vals[k]) > len(a) {
			return found, clean, nil
		}
		en.vals[k] = [2]uint8{uint8(off), uint8(len(vals[k]))}
	}
	en.found, en.keyCount, en.attrsLen = found, f.KeyCount, uint8(len(a))
	en.gen, en.stream = 0, 0
	en.plain = found&faSid != 0 && len(vals[0]) > 0 && (found&faEtype == 0 || knownEtype(vals[7])) &&
		(found&faMeta == 0 || isJSONObject(vals[6]))
	copy(en.attrs[:], a)
	return found, clean, en
}

// sectionStream is the stream entry of en's sid when it still names the
// stream, in the partition made current (frameStream's first check, for a
// section whose sid's entry it keeps), or nil. Its state field is then
// the stream's state.
func (e *Engine) sectionStream(in *Input, en *fcAttrs) *fcStream {
	if en == nil || en.gen == 0 {
		return nil
	}
	fc := e.fc
	st := &fc.streams[en.stream]
	if st.gen != en.gen || st.keyLen == 0 || len(e.forget) > 0 || e.sweep {
		return nil
	}
	if !sameData(st.tap, in.Tap) || !sameData(st.conn, in.Conn) {
		return e.namedStream(in, en, st)
	}
	return e.sectionState(en, st)
}

// namedStream is the end of sectionStream for an entry whose tap and
// connection are not in's very strings (apart, so that sectionStream makes
// no call it must keep registers aside for).
//
//go:noinline
func (e *Engine) namedStream(in *Input, en *fcAttrs, st *fcStream) *fcStream {
	if st.tap != in.Tap || st.conn != in.Conn {
		return nil
	}
	return e.sectionState(en, st)
}

// sectionState is the end of sectionStream: st, of en's sid on in's tap and
// connection, if it still names its stream, its partition made current.
func (e *Engine) sectionState(en *fcAttrs, st *fcStream) *fcStream {
	if pt := &e.parts[st.part]; pt != e.cur {
		e.useAgain(pt)
	}
	if t := e.tab; int(st.idx) >= t.len() || t.removes != st.removes {
		return nil
	}
	e.fc.streamTags[en.stream].used = e.fc.tick
	return st
}

// frameStream is lookup(composite(in, protoFrame, sid), true, false, in)
// with the cache in front of it; en is the entry of the chunk's attribute
// section (nil: none), whose sid it is.
func (e *Engine) frameStream(in *Input, sid []byte, en *fcAttrs) (i int32, created bool, was int) {
	if frameCacheOff || len(sid) > fcMaxSid {
		return e.lookup(e.composite(in, protoFrame, sid), true, false, in)
	}
	if e.fc == nil {
		e.fc = newFrameCache(fcMinBits)
	}
	var st *fcStream
	if en != nil && en.gen != 0 && e.fc.streams[en.stream].gen == en.gen {
		st = &e.fc.streams[en.stream] // the section's sid, as it was cached
		e.fc.streamTags[en.stream].used = e.fc.tick
	} else {
		fc := e.fc
		h := fcHash(sid)
		at := fc.set(h)
		tags := ways(fc.streamTags, at)
		way := -1
		for k := range tags {
			if tags[k].hash == h && fc.streams[at+k].holds(sid) {
				way = k
				break
			}
		}
		if way < 0 {
			// The way used least recently takes it.
			way = 0
			for k := range tags {
				if tags[k].used < tags[way].used {
					way = k
				}
			}
			st = &fc.streams[at+way]
			st.gen++
			st.sidLen, st.keyLen = uint8(len(sid)), 0
			copy(st.sid[:], sid)
			tags[way].hash = h
		}
		st = &fc.streams[at+way]
		tags[way].used = fc.tick
		if en != nil {
			en.stream, en.gen = uint16(at+way), st.gen
		}
	}
	if st.keyLen != 0 && sameString(st.tap, in.Tap) && sameString(st.conn, in.Conn) {
		// What lookup does first, then the partition composite would
		// have made current.
		if len(e.forget) > 0 || e.sweep {
			e.forgetPending()
		}
		if pt := &e.parts[st.part]; pt != e.cur {
			e.useAgain(pt)
		}
		if t := e.tab; int(st.idx) < t.len() && (t.removes == st.removes || string(t.key(st.idx)) == string(st.key[:st.keyLen])) {
			st.removes, st.state = t.removes, t.at(st.idx)
			return st.idx, false, notEnded
		}
	}
	return e.fillCache(st, in, protoFrame, sid, true, false)
}

// fillCache is lookup(composite(in, proto, id), create, reuse, in) for a
// stream whose cache entry st (its sid already set) did not name it: it
// keeps where the stream is in st. The callers check the entry first, the
// path of most records, in their own body (a call to a shared check cost
// frames 3 % more instructions).
func (e *Engine) fillCache(st *fcStream, in *Input, proto byte, id []byte, create, reuse bool) (i int32, created bool, was int) {
	ck := e.composite(in, proto, id)
	i, created, was = e.lookup(ck, create, reuse, in)
	st.keyLen = 0
	if was == notEnded && i >= 0 && len(ck) <= fcMaxKey {
		st.tap, st.conn = in.Tap, in.Conn
		st.idx, st.part, st.keyLen, st.removes = i, uint16(e.cur.id), uint8(len(ck)), e.tab.removes
		st.state = e.tab.at(i)
		copy(st.key[:], ck)
	}
	return i, created, was
}

// e2aCache is where the streams of the latest request_ids are (a JSON
// file interleaves a few streams of many records each, as a frame file
// does): frameCache's stream entries, kept apart from the sids' (a
// request_id and a sid of the same bytes are two streams).
type e2aCache [1 << e2aSlotBits]fcStream

// e2aSlotBits: a direct-mapped cache of 256 entries (the few streams a
// JSON file interleaves at a time).
const e2aSlotBits = 8

// e2aSlot is the entry of request_id id.
func e2aSlot(id []byte) int { return int(fcHash(id) >> (64 - e2aSlotBits)) }

// e2aCacheOff turns it off (tests compare the verdicts).
var e2aCacheOff = false

// e2aStream is lookup(composite(in, protoE2A, id), create, reuse, in)
// with the cache in front of it.
func (e *Engine) e2aStream(in *Input, id []byte, create, reuse bool) (i int32, created bool, was int) {
	if e2aCacheOff || len(id) > fcMaxSid {
		return e.lookup(e.composite(in, protoE2A, id), create, reuse, in)
	}
	if e.ec == nil {
		e.ec = new(e2aCache)
	}
	st := &e.ec[e2aSlot(id)]
	if int(st.sidLen) != len(id) || string(st.sid[:len(id)]) != string(id) {
		st.gen++
		st.sidLen, st.keyLen = uint8(len(id)), 0
		copy(st.sid[:], id)
	}
	// frameStream's check of the entry (the same whatever create and
	// reuse say: lookup finds a stream the table holds first).
	if st.keyLen != 0 && st.tap == in.Tap && st.conn == in.Conn {
		// What lookup does first, then the partition composite would
		// have made current.
		if len(e.forget) > 0 || e.sweep {
			e.forgetPending()
		}
		if pt := &e.parts[st.part]; pt != e.cur {
			e.useAgain(pt)
		}
		if t := e.tab; int(st.idx) < t.len() && (t.removes == st.removes || string(t.key(st.idx)) == string(st.key[:st.keyLen])) {
			st.removes, st.state = t.removes, t.at(st.idx)
			return st.idx, false, notEnded
		}
	}
	return e.fillCache(st, in, protoE2A, id, create, reuse)
}
