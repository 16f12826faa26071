package frame

import "encoding/binary"

// Message types.
const (
	TypeStreamReq   uint8 = 1
	TypeStreamChunk uint8 = 2
	TypeEvent       uint8 = 3
)

// Flag bits.
const (
	FlagDone     uint8 = 0x01
	FlagHasError uint8 = 0x02
	FlagHasMeta  uint8 = 0x04
	FlagReserved uint8 = 0xF8
)

// Wire constants and the reference's limits (FrameLimits).
const (
	Magic             = 0xEF
	Version           = 1
	HeaderLen         = 14
	MaxFrameBytes     = 16 << 20 // encode only
	MaxDataBytes      = 8 << 20  // encode and decode
	MaxAttributes     = 64       // encode and decode
	MaxAttrNameBytes  = 256      // encode only
	MaxAttrValueBytes = 4096     // encode only
)

// Frame is one decoded EventMeshFrame. Decode fills it without copying:
// the attribute section and Data alias the input buffer.
type Frame struct {
	MsgType  uint8
	Flags    uint8
	Seq      int32
	KeyCount uint16 // attributes on the wire, duplicates included
	Data     []byte
	// attrs is the raw attribute section, validated by Decode:
	// keyCount × [nameLen:u16][name][valLen:i32][value].
	attrs []byte
	// Size is the number of bytes the frame took on the wire (header,
	// attributes and data; trailing bytes excluded).
	Size int
}

// Done reports the done flag (bit 0).
func (f *Frame) Done() bool { return f.Flags&FlagDone != 0 }

// HasError reports the hasError flag (bit 1).
func (f *Frame) HasError() bool { return f.Flags&FlagHasError != 0 }

// HasMeta reports the hasMeta flag (bit 2).
func (f *Frame) HasMeta() bool { return f.Flags&FlagHasMeta != 0 }

// Attrs calls fn for each attribute in wire order, duplicates included,
// until fn returns false. name and value alias the input buffer.
func (f *Frame) Attrs(fn func(name, value []byte) bool) {
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		n := int(binary.BigEndian.Uint16(b))
		name := b[2 : 2+n]
		b = b[2+n:]
		v := int(binary.BigEndian.Uint32(b))
		value := b[4 : 4+v]
		b = b[4+v:]
		if !fn(name, value) {
			return
		}
	}
}

// AttrSection returns the raw attribute section, as on the wire (keyCount
// × [nameLen:u16][name][valLen:i32][value]), validated by Decode: what a
// reader that caches per attribute section compares. It aliases the frame
// and its capacity ends where it does.
func (f *Frame) AttrSection() []byte { return f.attrs }

// Attr returns the value of the attribute name; with duplicates the last
// one wins, as in the reference decoder.
func (f *Frame) Attr(name string) (value []byte, ok bool) {
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		n := int(binary.BigEndian.Uint16(b))
		nm := b[2 : 2+n]
		b = b[2+n:]
		v := int(binary.BigEndian.Uint32(b))
		if string(nm) == name {
			value, ok = b[4:4+v], true
		}
		b = b[4+v:]
	}
	return value, ok
}

// On returns the same frame on b, a copy of the frame's wire bytes (the
// first f.Size bytes of what it was decoded from): what a reader that
// decoded a frame once hands to another goroutine with a copy of its bytes,
// so that the frame is not decoded again there.
func (f *Frame) On(b []byte) Frame {
	a := HeaderLen + len(f.attrs)
	g := *f
	g.attrs = b[HeaderLen:a:a]
	g.Data = b[a:f.Size:f.Size]
	return g
}

// Layout is a decoded frame without its bytes (16 bytes where a Frame
// takes 64): what a reader hands to another goroutine beside a copy of the
// frame's wire bytes, which Layout.On turns back into the Frame without
// decoding it again.
type Layout struct {
	MsgType, Flags uint8
	KeyCount       uint16
	Seq            int32
	attrsEnd, size int32
}

// Layout returns f's layout.
func (f *Frame) Layout() Layout {
	return Layout{MsgType: f.MsgType, Flags: f.Flags, KeyCount: f.KeyCount, Seq: f.Seq,
		attrsEnd: int32(HeaderLen + len(f.attrs)), size: int32(f.Size)}
}

// On returns the frame of layout l on b, a copy of its wire bytes.
func (l Layout) On(b []byte) Frame {
	a, n := int(l.attrsEnd), int(l.size)
	return Frame{MsgType: l.MsgType, Flags: l.Flags, Seq: l.Seq, KeyCount: l.KeyCount,
		Data: b[a:n:n], attrs: b[HeaderLen:a:a], Size: n}
}
