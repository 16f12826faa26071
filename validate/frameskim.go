package validate

import (
	"encoding/binary"
	"math/bits"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// A frameSkim is skimFrame with a memory of the last frame's layout, as
// frame.Decoder is DecodeTo with one: the frames of a file mostly share
// their attributes' names and lengths (a stream key of one length, the
// same few attributes), so a frame whose length prefixes are the layout's
// is skimmed with a few loads and no walk (on 1 M frames of 200 B: 154
// instructions a frame for skimFrame, cachegrind, most of the split's
// skim). What it returns is skimFrame's, frame for frame (FuzzFrameSkim).
type frameSkim struct {
	n   uint16 // attributes of the layout
	end int    // where its attribute section ends; 0: none kept
	// rawN is the key count's two bytes as a word read in place.
	rawN  uint16
	attrs [skimAttrs]skimAttr
	// id, sid: the attributes whose name is as long as "id", "sid" (the
	// stream key's candidates for an EVENT and for any other frame), a bit
	// each.
	id, sid uint8
}

// A skimAttr is where an attribute of a layout lies and its length
// prefixes as the words read in place there (no byte swap to compare).
type skimAttr struct {
	at, val int32 // its name's length prefix; its value's
	rawNL   uint16
	rawVL   uint32
	vl      uint32 // its value's length
}

// skimAttrs is the most attributes a frameSkim's layout holds.
const skimAttrs = 8

// skimMagic is a frame's first two bytes as a word read in place.
var skimMagic = *(*uint16)(unsafe.Pointer(&[2]byte{frame.Magic, frame.Version}))

// skim is skimFrame(b).
func (s *frameSkim) skim(b []byte) (size, attrsEnd int, key []byte, ok bool) {
	p := s.end
	if p == 0 || p > len(b) {
		return s.walk(b)
	}
	// b holds p >= HeaderLen bytes: its header and, where the layout's
	// length prefixes are found at the layout's places, every attribute
	// (a walk that ended at p found them there), so that each of
	// skimFrame's checks on them holds; what is left is the data's. Read
	// in place, without a bounds check per prefix.
	base := unsafe.Pointer(unsafe.SliceData(b))
	if *(*uint16)(base) != skimMagic || *(*uint16)(unsafe.Add(base, 8)) != s.rawN {
		return s.walk(b)
	}
	for i := range s.attrs[:s.n] {
		a := &s.attrs[i]
		if *(*uint16)(unsafe.Add(base, a.at)) != a.rawNL || *(*uint32)(unsafe.Add(base, a.val)) != a.rawVL {
			return s.walk(b)
		}
	}
	dataLen := int32(binary.BigEndian.Uint32((*[4]byte)(unsafe.Add(base, 10))[:]))
	if dataLen < 0 || dataLen > frame.MaxDataBytes || int(dataLen) > len(b)-p {
		return 0, 0, nil, false
	}
	// The last attribute named "sid" ("id" for an EVENT) is the key
	// (Frame.Attr's); a name of 3 bytes has its value's 4-byte prefix
	// after it to read a word of 4 from.
	if *(*byte)(unsafe.Add(base, 2)) == frame.TypeEvent {
		for m := s.id; m != 0; m &^= 1 << (7 - bits.LeadingZeros8(m)) {
			a := &s.attrs[7-bits.LeadingZeros8(m)]
			if *(*[2]byte)(unsafe.Add(base, a.at+2)) == [2]byte{'i', 'd'} {
				return p + int(dataLen), p, unsafe.Slice((*byte)(unsafe.Add(base, a.val+4)), a.vl), true
			}
		}
		return p + int(dataLen), p, nil, true
	}
	for m := s.sid; m != 0; m &^= 1 << (7 - bits.LeadingZeros8(m)) {
		a := &s.attrs[7-bits.LeadingZeros8(m)]
		if *(*[3]byte)(unsafe.Add(base, a.at+2)) == [3]byte{'s', 'i', 'd'} {
			return p + int(dataLen), p, unsafe.Slice((*byte)(unsafe.Add(base, a.val+4)), a.vl), true
		}
	}
	return p + int(dataLen), p, nil, true
}

// walk is skimFrame(b) (the same checks in the same order), keeping b's
// layout when b skims and has at most skimAttrs attributes.
func (s *frameSkim) walk(b []byte) (size, attrsEnd int, key []byte, ok bool) {
	s.n, s.end = 0, 0
	n := len(b)
	if n < frame.HeaderLen || b[0] != frame.Magic || b[1] != frame.Version {
		return 0, 0, nil, false
	}
	keyCount := int(binary.BigEndian.Uint16(b[8:10]))
	dataLen := int32(binary.BigEndian.Uint32(b[10:14]))
	if keyCount > frame.MaxAttributes || dataLen < 0 || dataLen > frame.MaxDataBytes || int(dataLen) > n-frame.HeaderLen {
		return 0, 0, nil, false
	}
	event := b[2] == frame.TypeEvent
	keep := keyCount <= skimAttrs
	var id, sid uint8
	p := frame.HeaderLen
	for i := 0; i < keyCount; i++ {
		// [nameLen u16][name][valueLen i32][value]
		if n-p < 6 {
			return 0, 0, nil, false
		}
		a := b[p:]
		nl := int(binary.BigEndian.Uint16(a))
		if nl > len(a)-6 {
			return 0, 0, nil, false
		}
		v := p + 6 + nl
		vl := int(int32(binary.BigEndian.Uint32(a[2+nl:])))
		if vl < 0 || vl > n-v {
			return 0, 0, nil, false
		}
		if event {
			if nl == 2 && a[2] == 'i' && a[3] == 'd' {
				key = b[v : v+vl]
			}
		} else if nl == 3 && a[2] == 's' && a[3] == 'i' && a[4] == 'd' {
			key = b[v : v+vl]
		}
		if keep {
			s.attrs[i] = skimAttr{at: int32(p), val: int32(p + 2 + nl), vl: uint32(vl),
				rawNL: *(*uint16)(unsafe.Pointer(&a[0])), rawVL: *(*uint32)(unsafe.Pointer(&a[2+nl]))}
			switch nl {
			case 2:
				id |= 1 << i
			case 3:
				sid |= 1 << i
			}
		}
		p = v + vl
	}
	if int(dataLen) > n-p {
		return 0, 0, nil, false
	}
	if keep {
		s.n, s.end, s.id, s.sid = uint16(keyCount), p, id, sid
		s.rawN = *(*uint16)(unsafe.Pointer(&b[8]))
	}
	return p + int(dataLen), p, key, true
}
