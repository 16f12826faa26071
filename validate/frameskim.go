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
	// pos: where each attribute starts; lens its name length << 32 | its
	// value length.
	pos  [skimAttrs]int32
	lens [skimAttrs]uint64
	// id, sid: the attributes whose name is as long as "id", "sid" (the
	// stream key's candidates for an EVENT and for any other frame), a bit
	// each.
	id, sid uint8
}

// skimAttrs is the most attributes a frameSkim's layout holds.
const skimAttrs = 8

// skim is skimFrame(b).
func (s *frameSkim) skim(b []byte) (size, attrsEnd int, key []byte, ok bool) {
	n := len(b)
	p := s.end
	if p == 0 || p > n || b[0] != frame.Magic || b[1] != frame.Version {
		return s.walk(b)
	}
	// b holds p >= HeaderLen bytes: its header and, where the layout's
	// lengths are found at the layout's places, every attribute (a walk
	// that ended at p found them there), so that each of skimFrame's
	// checks on them holds; what is left is the data's. Read in place,
	// without a bounds check per prefix.
	base := unsafe.Pointer(unsafe.SliceData(b))
	keyCount := bits.ReverseBytes16(*(*uint16)(unsafe.Add(base, 8)))
	dataLen := int32(bits.ReverseBytes32(*(*uint32)(unsafe.Add(base, 10))))
	if keyCount != s.n {
		return s.walk(b)
	}
	for i := range int(keyCount) {
		at := unsafe.Add(base, s.pos[i])
		want := s.lens[i]
		if uint64(bits.ReverseBytes16(*(*uint16)(at)))<<32|uint64(bits.ReverseBytes32(*(*uint32)(unsafe.Add(at, 2+want>>32)))) != want {
			return s.walk(b)
		}
	}
	if dataLen < 0 || dataLen > frame.MaxDataBytes || int(dataLen) > n-p {
		return 0, 0, nil, false
	}
	// The last attribute named "sid" ("id" for an EVENT) is the key
	// (Frame.Attr's); a name of 3 bytes has 6 bytes of prefixes after it
	// to read a word of 4 from.
	if *(*byte)(unsafe.Add(base, 2)) == frame.TypeEvent {
		for m := s.id; m != 0; m &^= 1 << (7 - bits.LeadingZeros8(m)) {
			i := 7 - bits.LeadingZeros8(m)
			at := unsafe.Add(base, s.pos[i])
			if *(*uint16)(unsafe.Add(at, 2)) == uint16('i')|uint16('d')<<8 {
				return p + int(dataLen), p, unsafe.Slice((*byte)(unsafe.Add(at, 6+2)), uint32(s.lens[i])), true
			}
		}
		return p + int(dataLen), p, nil, true
	}
	for m := s.sid; m != 0; m &^= 1 << (7 - bits.LeadingZeros8(m)) {
		i := 7 - bits.LeadingZeros8(m)
		at := unsafe.Add(base, s.pos[i])
		if *(*uint32)(unsafe.Add(at, 2))&0xffffff == uint32('s')|uint32('i')<<8|uint32('d')<<16 {
			return p + int(dataLen), p, unsafe.Slice((*byte)(unsafe.Add(at, 6+3)), uint32(s.lens[i])), true
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
			s.pos[i], s.lens[i] = int32(p), uint64(nl)<<32|uint64(vl)
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
	}
	return p + int(dataLen), p, key, true
}
