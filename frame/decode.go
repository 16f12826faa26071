package frame

import (
	"encoding/binary"
	"strconv"
	"unsafe"
)

// Decode reads one frame from the front of b and returns it with the bytes
// that follow it; on error rest is nil. The checks, their order and their
// limits are those of the reference decoder (EventMeshFrame.decode after
// FrameLimits): msgType, reserved flag bits, seq and the name/value size
// limits are not checked here (the validator reports them), and the bytes
// after the data are not an error (a frame file is frames back to back).
//
// The Frame aliases b: attributes and Data are not copied, and nothing is
// allocated unless the frame is rejected. No length field is trusted before
// it has been checked against the bytes actually present.
func Decode(b []byte) (f Frame, rest []byte, err error) {
	rest, err = DecodeTo(&f, b)
	return f, rest, err
}

// DecodeTo is Decode into *f (a reader that keeps one Frame for a whole
// file: no copy of the frame per frame). On error *f is the zero Frame.
//
// Every field of *f is set once the frame decodes (nothing is zeroed
// first: a reader's Frame on the heap is written once a frame).
//
// It accepts exactly the frames decodeChecked accepts, with fewer
// branches and no error to build: a frame it has any doubt about goes to
// decodeChecked, which finds the first check that fails, in the
// reference's order (FuzzDecode compares them).
func DecodeTo(f *Frame, b []byte) (rest []byte, err error) {
	if TryDecodeTo(f, b) {
		return b[f.Size:], nil
	}
	return decodeChecked(f, b)
}

// TryDecodeTo is DecodeTo without the error: it reports whether the frame
// at the front of b decodes (into *f; on false *f is as it was), and
// builds nothing when it does not. A reader that may hold only part of a
// frame (the rest still to be read) asks it first, and DecodeTo for the
// error only when no more bytes will come.
func TryDecodeTo(f *Frame, b []byte) bool {
	n := len(b)
	if n < HeaderLen || b[0] != Magic || b[1] != Version {
		return false
	}
	keyCount := binary.BigEndian.Uint16(b[8:10])
	dataLen := binary.BigEndian.Uint32(b[10:14]) // over MaxDataBytes when negative as an int32
	if keyCount > MaxAttributes || dataLen > MaxDataBytes {
		return false
	}
	p := HeaderLen
	for i := keyCount; i > 0; i-- {
		// An attribute takes six bytes at least: its two prefixes.
		if n-p < 6 {
			return false
		}
		p += 2 + int(binary.BigEndian.Uint16(b[p:]))
		if p > n-4 {
			return false
		}
		vl := int32(binary.BigEndian.Uint32(b[p:]))
		p += 4 + int(vl)
		if vl < 0 || p > n {
			return false
		}
	}
	return f.take(b, p, keyCount, dataLen)
}

// take makes f the frame of b whose attributes end at p (checked), if its
// data of dataLen bytes lies within b.
func (f *Frame) take(b []byte, p int, keyCount uint16, dataLen uint32) bool {
	end := p + int(dataLen)
	if end > len(b) {
		return false
	}
	f.MsgType, f.Flags = b[2], b[3]
	f.Seq = int32(binary.BigEndian.Uint32(b[4:8]))
	f.KeyCount = keyCount
	f.Data = b[p:end:end]
	f.attrs = b[HeaderLen:p:p]
	f.Size = end
	return true
}

// decodeChecked is DecodeTo with every check of the reference decoder in
// its order, each failure with its own error.
func decodeChecked(f *Frame, b []byte) (rest []byte, err error) {
	n := len(b)
	if n < HeaderLen {
		return nil, f.reset(decodeErr(0, ErrTooShort, "frame too short: ", int64(n), ""))
	}
	if b[0] != Magic {
		return nil, f.reset(&DecodeError{Offset: 0, Code: ErrBadMagic,
			Reason: "bad frame magic: 0x" + strconv.FormatUint(uint64(b[0]), 16)})
	}
	if b[1] != Version {
		return nil, f.reset(decodeErr(1, ErrBadVersion, "unsupported frame version: ", int64(b[1]), ""))
	}
	keyCount := binary.BigEndian.Uint16(b[8:10])
	dataLen := int32(binary.BigEndian.Uint32(b[10:14]))
	if keyCount > MaxAttributes {
		return nil, f.reset(decodeErr(8, ErrAttrCount, "frame attribute count ", int64(keyCount), " exceeds limit 64"))
	}
	if dataLen < 0 || dataLen > MaxDataBytes {
		return nil, f.reset(decodeErr(10, ErrDataLength, "frame data length ", int64(dataLen), " exceeds limit 8388608"))
	}
	if int(dataLen) > n-HeaderLen {
		return nil, f.reset(decodeErr(10, ErrDataBeyondBuffer, "frame data length ", int64(dataLen),
			" exceeds the provided buffer ("+strconv.Itoa(n)+" bytes)"))
	}
	p := HeaderLen
	for i := 0; i < int(keyCount); i++ {
		if n-p < 2 {
			return nil, f.reset(decodeErr(p, ErrNamePrefix,
				"truncated frame: attribute name length prefix beyond buffer (", int64(n-p), " bytes left)"))
		}
		nl := int(binary.BigEndian.Uint16(b[p:]))
		p += 2
		if nl > n-p {
			return nil, f.reset(stringLenErr(p-2, int64(nl), n-p))
		}
		p += nl
		if n-p < 4 {
			return nil, f.reset(decodeErr(p, ErrValuePrefix,
				"truncated frame: attribute value length prefix beyond buffer (", int64(n-p), " bytes left)"))
		}
		vl := int32(binary.BigEndian.Uint32(b[p:]))
		p += 4
		if vl < 0 || int(vl) > n-p {
			return nil, f.reset(stringLenErr(p-4, int64(vl), n-p))
		}
		p += int(vl)
	}
	if int(dataLen) > n-p {
		return nil, f.reset(decodeErr(10, ErrDataRemaining, "frame data length ", int64(dataLen),
			" exceeds the remaining buffer ("+strconv.Itoa(n-p)+" bytes)"))
	}
	end := p + int(dataLen)
	f.MsgType, f.Flags = b[2], b[3]
	f.Seq = int32(binary.BigEndian.Uint32(b[4:8]))
	f.KeyCount = keyCount
	f.Data = b[p:end:end]
	f.attrs = b[HeaderLen:p:p]
	f.Size = end
	return b[end:], nil
}

// reset zeroes a frame that did not decode and returns err.
func (f *Frame) reset(err *DecodeError) error {
	*f = Frame{}
	return err
}

func decodeErr(off int, c Code, before string, v int64, after string) *DecodeError {
	return &DecodeError{Offset: off, Code: c, Reason: before + strconv.FormatInt(v, 10) + after}
}

func stringLenErr(off int, l int64, left int) *DecodeError {
	return decodeErr(off, ErrStringLength, "string length ", l,
		" exceeds the remaining buffer ("+strconv.Itoa(left)+" bytes)")
}

// A Decoder is TryDecodeTo for a reader of many frames back to back: it
// remembers the layout of the attribute section it last walked (how many
// attributes, each one's name and value lengths) and checks a frame
// against it first. Most frames of a stream, and of the streams of one
// producer, carry the same attributes of the same lengths (a sid, an
// etype): their length prefixes are then read where the layout says they
// are, each independent of the others, rather than walked, where each
// position depends on the length read before (a chain of loads that was
// most of TryDecodeTo's time). A frame whose prefixes differ from the
// layout is walked, and its layout kept. It accepts exactly what
// TryDecodeTo accepts, the same frame (FuzzDecoder compares them). The
// zero Decoder is ready to use; it is not safe for concurrent use.
type Decoder struct {
	n    uint16 // attributes of the layout
	end  int    // the offset where its attribute section ends; 0: none kept
	pos  [decoderAttrs]int32
	lens [decoderAttrs]uint64 // name length << 32 | value length
}

// decoderAttrs is the most attributes a Decoder's layout holds; a frame of
// more is walked.
const decoderAttrs = 8

// TryDecodeTo is TryDecodeTo(f, b) through d's layout.
func (d *Decoder) TryDecodeTo(f *Frame, b []byte) bool {
	n := len(b)
	if n < HeaderLen || b[0] != Magic || b[1] != Version {
		return false
	}
	keyCount := binary.BigEndian.Uint16(b[8:10])
	dataLen := binary.BigEndian.Uint32(b[10:14])
	if keyCount > MaxAttributes || dataLen > MaxDataBytes {
		return false
	}
	p := d.end
	if p == 0 || keyCount != d.n || p > n || !d.fits(b) {
		// Walk the section (TryDecodeTo's loop), keeping its layout.
		keep := keyCount <= decoderAttrs
		d.n, d.end = 0, 0
		p = HeaderLen
		for i := 0; i < int(keyCount); i++ {
			if n-p < 6 {
				return false
			}
			at := p
			nl := binary.BigEndian.Uint16(b[p:])
			p += 2 + int(nl)
			if p > n-4 {
				return false
			}
			vl := int32(binary.BigEndian.Uint32(b[p:]))
			p += 4 + int(vl)
			if vl < 0 || p > n {
				return false
			}
			if keep {
				d.pos[i], d.lens[i] = int32(at), uint64(nl)<<32|uint64(vl)
			}
		}
		if keep {
			d.n, d.end = keyCount, p
		}
	}
	return f.take(b, p, keyCount, dataLen)
}

// fits reports whether the length prefixes of b's attributes are those of
// d's layout, given that b holds d.end bytes at least (every prefix then
// lies within b, and so does every attribute: the walk would find the
// same positions and pass each of its checks).
func (d *Decoder) fits(b []byte) bool {
	// Read in place, without a bounds check per prefix: every position
	// and length comes from a walk that ended at d.end, and len(b) >=
	// d.end (the caller's check).
	p := unsafe.Pointer(unsafe.SliceData(b))
	for i, want := range d.lens[:d.n] {
		at := unsafe.Add(p, d.pos[i])
		// binary.BigEndian on a fixed-length view: one load and a byte
		// swap on a little-endian machine, a plain load on a big-endian
		// one (a native load reversed was right on little-endian only).
		nl := binary.BigEndian.Uint16((*[2]byte)(at)[:])
		vl := binary.BigEndian.Uint32((*[4]byte)(unsafe.Add(at, 2+want>>32))[:])
		if uint64(nl)<<32|uint64(vl) != want {
			return false
		}
	}
	return true
}
