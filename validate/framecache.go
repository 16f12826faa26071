package validate

import (
	"encoding/binary"
	"math/bits"

	"github.com/e2atap/e2atap/frame"
)

// frameCache remembers, for the attribute sections of the latest chunks,
// what the frame rules read from them (frame.Find: which names are there,
// where their values are, that the section is clean) and where the
// stream they name is in the stream tables. A frame file interleaves a few
// streams of many chunks each, and the chunks of a stream mostly carry the
// same attributes (its sid, an etype): such a chunk skips Find, building
// its composite key (tap, conn, the sid with its UUID packed), hashing it
// twice (partition and table) and probing the table.
//
// An entry is a hint, never the truth. The attributes are used only for a
// section byte for byte equal to the one they were read from (with the
// same attribute count: the same bytes then decode to the same
// attributes). The stream is used only once the table entry it names holds
// the very composite key it was made for (tap, connection and sid: keys
// are unique in a partition's table), so a stream removed, evicted, moved by a removal (the last dense
// entry moves into the hole) or forgotten is simply looked up again. Hash
// collisions and sections too long to keep cost the same: the work without
// the cache. The verdicts do not depend on it (TestFrameCacheSameVerdicts).
type frameCache struct {
	e [fcSlots]fcEntry
}

const (
	fcSlotBits  = 8
	fcSlots     = 1 << fcSlotBits
	fcMaxAttrs  = 128 // longer attribute sections are not cached
	fcMaxKey    = 96  // nor streams of longer composite keys (long tap or conn names)
	fcAttrNames = 8   // len(frameAttrNames)
)

type fcEntry struct {
	found    uint64
	idx      int32 // the stream's dense index in partition part
	part     uint16
	keyCount uint16
	attrsLen uint8 // 0: the entry is empty
	keyLen   uint8 // 0: no stream
	vals     [fcAttrNames][2]uint8
	attrs    [fcMaxAttrs]byte
	key      [fcMaxKey]byte
}

// frameCacheOff turns the cache off (tests compare the verdicts).
var frameCacheOff = false

// fcSlot spreads sections over the slots: every 8-byte word, rotated by
// its position, folded with XOR and mixed by one multiply. Cheap rather
// than strong: a collision only costs the work the cache saves.
func fcSlot(b []byte) int {
	h := uint64(len(b))
	r := 0
	for len(b) >= 8 {
		h ^= bits.RotateLeft64(binary.LittleEndian.Uint64(b), r)
		b, r = b[8:], r+11
	}
	var t uint64
	for i, c := range b {
		t |= uint64(c) << (8 * i)
	}
	h ^= bits.RotateLeft64(t, r)
	return int((h * 0x9e3779b97f4a7c15) >> (64 - fcSlotBits))
}

// frameAttrs is f.Find(frameAttrSet, vals) through the cache; it returns
// the entry for f's section (nil: not cached) for frameStream.
func (e *Engine) frameAttrs(f *frame.Frame, vals *[fcAttrNames][]byte) (found uint64, clean bool, en *fcEntry) {
	a := f.AttrSection()
	if frameCacheOff || len(a) > fcMaxAttrs || len(a) == 0 || f.Size > frame.MaxFrameBytes {
		found, clean = f.Find(frameAttrSet, vals[:])
		return found, clean, nil
	}
	if e.fc == nil {
		e.fc = new(frameCache)
	}
	en = &e.fc.e[fcSlot(a)]
	if int(en.attrsLen) == len(a) && en.keyCount == f.KeyCount && string(en.attrs[:len(a)]) == string(a) {
		for m := en.found; m != 0; m &= m - 1 {
			k := bits.TrailingZeros64(m)
			v := en.vals[k]
			vals[k] = a[v[0] : int(v[0])+int(v[1])]
		}
		return en.found, true, en
	}
	found, clean = f.Find(frameAttrSet, vals[:])
	en.attrsLen, en.keyLen = 0, 0
	if !clean {
		return found, clean, nil
	}
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
	copy(en.attrs[:], a)
	return found, clean, en
}

// frameStream is lookup(composite(in, protoFrame, sid), true, false, in)
// with the cache in front of it: en is the entry of the chunk's attribute
// section (nil: none), which names sid.
func (e *Engine) frameStream(in *Input, sid []byte, en *fcEntry) (i int32, created bool, was int) {
	if en == nil {
		return e.lookup(e.composite(in, protoFrame, sid), true, false, in)
	}
	if en.keyLen != 0 {
		// What lookup does first, then the partition composite would
		// have made current.
		if len(e.forget) > 0 || e.sweep {
			e.forgetPending()
		}
		e.use(int(en.part))
		if t := e.tab; int(en.idx) < t.len() && string(t.key(en.idx)) == string(en.key[:en.keyLen]) {
			return en.idx, false, notEnded
		}
	}
	ck := e.composite(in, protoFrame, sid)
	i, created, was = e.lookup(ck, true, false, in)
	en.keyLen = 0
	if was == notEnded && i >= 0 && len(ck) <= fcMaxKey {
		en.idx, en.part = i, uint16(e.cur.id)
		en.keyLen = uint8(len(ck))
		copy(en.key[:], ck)
	}
	return i, created, was
}
