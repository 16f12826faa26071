package frame

import "encoding/binary"

// SetSkimmed sets f to the frame at the front of b as DecodeTo would, for
// a caller that has made DecodeTo's checks on b itself and found the
// attributes to end at attrsEnd and the frame at size (validate's walk,
// which reads the header and attributes of every frame to find its stream
// and would otherwise decode the frames it judges a second time). Nothing
// is checked again.
func (f *Frame) SetSkimmed(b []byte, attrsEnd, size int) {
	f.MsgType, f.Flags = b[2], b[3]
	f.Seq = int32(binary.BigEndian.Uint32(b[4:8]))
	f.KeyCount = binary.BigEndian.Uint16(b[8:10])
	f.Data = b[attrsEnd:size:size]
	f.attrs = b[HeaderLen:attrsEnd:attrsEnd]
	f.Size = size
}
