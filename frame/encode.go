package frame

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
)

// Append appends the canonical encoding of f to dst: the bytes the
// reference's encode() writes for the frame its decode() built from the
// same input. That means duplicate names collapsed (the last value at the
// first name's position), malformed UTF-8 in names and values replaced by
// U+FFFD, and no trailing bytes. For a frame that is already canonical the
// result equals the input it was decoded from.
//
// The reference's encode-side limits apply (64 attributes, 8 MiB data,
// 256-byte names, 4096-byte values, 16 MiB frame); on error dst is returned
// unchanged with an *EncodeError. Append allocates only to grow dst.
func Append(dst []byte, f *Frame) ([]byte, error) {
	if f.ValidUTF8() {
		if _, dup := f.DupAttr(); !dup {
			return appendVerbatim(dst, f)
		}
	}
	count, size := 0, HeaderLen+len(f.Data)
	var err error
	f.canonical(func(name, value []byte) bool {
		count++
		nl, vl := javaLen(name), javaLen(value)
		if err == nil {
			err = checkAttr(nl, vl)
		}
		size += 6 + nl + vl
		return true
	})
	// The reference checks the count and the data before any attribute.
	if count > MaxAttributes {
		return dst, limitErr(ErrAttrCount, "frame attribute count ", count, " exceeds limit 64")
	}
	if len(f.Data) > MaxDataBytes {
		return dst, limitErr(ErrDataLength, "frame data length ", len(f.Data), " exceeds limit 8388608")
	}
	if err != nil {
		return dst, err
	}
	if size > MaxFrameBytes {
		return dst, limitErr(ErrFrameSize, "encoded frame size ", size, " exceeds limit 16777216")
	}
	dst = appendHeader(dst, f.MsgType, f.Flags, f.Seq, count, len(f.Data))
	f.canonical(func(name, value []byte) bool {
		dst = binary.BigEndian.AppendUint16(dst, uint16(javaLen(name)))
		dst = appendJava(dst, name)
		dst = binary.BigEndian.AppendUint32(dst, uint32(javaLen(value)))
		dst = appendJava(dst, value)
		return true
	})
	return append(dst, f.Data...), nil
}

// appendVerbatim is Append for a frame whose attribute section is already
// canonical: it is copied as it is.
func appendVerbatim(dst []byte, f *Frame) ([]byte, error) {
	if len(f.Data) > MaxDataBytes {
		return dst, limitErr(ErrDataLength, "frame data length ", len(f.Data), " exceeds limit 8388608")
	}
	b := f.attrs
	for i := 0; i < int(f.KeyCount); i++ {
		var name, value []byte
		name, value, b = nextAttr(b)
		if err := checkAttr(len(name), len(value)); err != nil {
			return dst, err
		}
	}
	if size := HeaderLen + len(f.attrs) + len(f.Data); size > MaxFrameBytes {
		return dst, limitErr(ErrFrameSize, "encoded frame size ", size, " exceeds limit 16777216")
	}
	dst = appendHeader(dst, f.MsgType, f.Flags, f.Seq, int(f.KeyCount), len(f.Data))
	dst = append(dst, f.attrs...)
	return append(dst, f.Data...), nil
}

func checkAttr(nameLen, valueLen int) error {
	if nameLen > MaxAttrNameBytes {
		return limitErr(ErrNameLength, "attribute name length ", nameLen, " exceeds limit 256")
	}
	if valueLen > MaxAttrValueBytes {
		return limitErr(ErrValueLength, "attribute value length ", valueLen, " exceeds limit 4096")
	}
	return nil
}

func limitErr(c Code, before string, v int, after string) *EncodeError {
	return &EncodeError{Code: c, Reason: before + strconv.Itoa(v) + after}
}

func appendHeader(dst []byte, msgType, flags uint8, seq int32, keyCount, dataLen int) []byte {
	dst = append(dst, Magic, Version, msgType, flags)
	dst = binary.BigEndian.AppendUint32(dst, uint32(seq))
	dst = binary.BigEndian.AppendUint16(dst, uint16(keyCount))
	return binary.BigEndian.AppendUint32(dst, uint32(dataLen))
}

// AppendFrame appends a frame built from its parts, with the attributes
// written exactly as given, in order. The reference's encode-side limits
// are enforced, but duplicates and malformed UTF-8 are written as they
// are, so tests can build the non-canonical frames the validator must
// flag. On error dst is returned unchanged.
func AppendFrame(dst []byte, msgType, flags uint8, seq int32, attrs []Attr, data []byte) ([]byte, error) {
	if len(attrs) > MaxAttributes {
		return dst, limitErr(ErrAttrCount, "frame attribute count ", len(attrs), " exceeds limit 64")
	}
	if len(data) > MaxDataBytes {
		return dst, limitErr(ErrDataLength, "frame data length ", len(data), " exceeds limit 8388608")
	}
	size := HeaderLen + len(data)
	for i := range attrs {
		if err := checkAttr(len(attrs[i].Name), len(attrs[i].Value)); err != nil {
			return dst, err
		}
		size += 6 + len(attrs[i].Name) + len(attrs[i].Value)
	}
	if size > MaxFrameBytes {
		return dst, limitErr(ErrFrameSize, "encoded frame size ", size, " exceeds limit 16777216")
	}
	return appendRaw(dst, msgType, flags, seq, attrs, data), nil
}

// AppendFrameUnchecked is AppendFrame without the reference's limits, for
// building frames that break them (frame.limits, frame.decode tests). It
// fails only when a length does not fit its wire field.
func AppendFrameUnchecked(dst []byte, msgType, flags uint8, seq int32, attrs []Attr, data []byte) ([]byte, error) {
	if len(attrs) > math.MaxUint16 {
		return dst, limitErr(ErrAttrCount, "frame attribute count ", len(attrs), " does not fit 16 bits")
	}
	if len(data) > math.MaxInt32 {
		return dst, limitErr(ErrDataLength, "frame data length ", len(data), " does not fit 31 bits")
	}
	for i := range attrs {
		if len(attrs[i].Name) > math.MaxUint16 {
			return dst, limitErr(ErrNameLength, "attribute name length ", len(attrs[i].Name), " does not fit 16 bits")
		}
		if len(attrs[i].Value) > math.MaxInt32 {
			return dst, limitErr(ErrValueLength, "attribute value length ", len(attrs[i].Value), " does not fit 31 bits")
		}
	}
	return appendRaw(dst, msgType, flags, seq, attrs, data), nil
}

func appendRaw(dst []byte, msgType, flags uint8, seq int32, attrs []Attr, data []byte) []byte {
	dst = appendHeader(dst, msgType, flags, seq, len(attrs), len(data))
	for i := range attrs {
		dst = binary.BigEndian.AppendUint16(dst, uint16(len(attrs[i].Name)))
		dst = append(dst, attrs[i].Name...)
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(attrs[i].Value)))
		dst = append(dst, attrs[i].Value...)
	}
	return append(dst, data...)
}

// StreamRequest is the STREAM_REQ payload (the reference's StreamRequest).
type StreamRequest struct {
	SessionID string // attr sid, always written ("" when unset)
	ReplyTo   string // attr replyTo, "parent#lite"; omitted when empty
	Model     string // attr model; omitted when empty
	Conv      string // attr conv; omitted when empty
	Prompt    []byte // data
}

// StreamChunk is the STREAM_CHUNK payload (the reference's StreamChunk).
type StreamChunk struct {
	SessionID string // attr sid, always written
	Seq       int32  // header seq, from 0
	Done      bool   // flag done: the terminal chunk
	Err       string // attr err and flag hasError; omitted when empty
	EventType string // attr etype: text, thought, tool, structured; omitted when empty
	Meta      string // attr meta (a JSON object) and flag hasMeta; omitted when empty
	Data      []byte // chunk text; empty on the terminal chunk
}

// AppendStreamRequest appends the STREAM_REQ frame the reference's
// fromRequest builds: flags 0, seq 0, attributes sid, replyTo, model, conv.
func AppendStreamRequest(dst []byte, r *StreamRequest) ([]byte, error) {
	var buf [4]Attr
	attrs := append(buf[:0], Attr{"sid", r.SessionID})
	attrs = appendIf(attrs, "replyTo", r.ReplyTo)
	attrs = appendIf(attrs, "model", r.Model)
	attrs = appendIf(attrs, "conv", r.Conv)
	return AppendFrame(dst, TypeStreamReq, 0, 0, attrs, r.Prompt)
}

// AppendStreamChunk appends the STREAM_CHUNK frame the reference's
// fromChunk builds: attributes in the order sid, err, etype, meta (the
// protocol document lists etype first; the code does not), flags derived
// from Done, Err and Meta.
func AppendStreamChunk(dst []byte, c *StreamChunk) ([]byte, error) {
	var buf [4]Attr
	attrs := append(buf[:0], Attr{"sid", c.SessionID})
	attrs = appendIf(attrs, "err", c.Err)
	attrs = appendIf(attrs, "etype", c.EventType)
	attrs = appendIf(attrs, "meta", c.Meta)
	var flags uint8
	if c.Done {
		flags |= FlagDone
	}
	if c.Err != "" {
		flags |= FlagHasError
	}
	if c.Meta != "" {
		flags |= FlagHasMeta
	}
	return AppendFrame(dst, TypeStreamChunk, flags, c.Seq, attrs, c.Data)
}

func appendIf(attrs []Attr, name, value string) []Attr {
	if value == "" {
		return attrs
	}
	return append(attrs, Attr{name, value})
}

// Errors of the typed views, as the reference's toChunk/toStreamRequest/
// toCloudEvent throw them.
var (
	ErrNotChunk   = errors.New("not a STREAM_CHUNK frame")
	ErrNotRequest = errors.New("not a STREAM_REQ frame")
	ErrNotEvent   = errors.New("not an EVENT frame")
)

// Chunk returns the frame as the reference's toChunk reads it: done from
// the flag, but err and meta from the attributes whatever the flags say.
// The strings are copies (repaired like the reference's).
func (f *Frame) Chunk() (StreamChunk, error) {
	if f.MsgType != TypeStreamChunk {
		return StreamChunk{}, ErrNotChunk
	}
	c := StreamChunk{Seq: f.Seq, Done: f.Done(), Data: f.Data}
	f.canonical(func(name, value []byte) bool {
		switch string(name) {
		case "sid":
			c.SessionID = javaString(value)
		case "err":
			c.Err = javaString(value)
		case "etype":
			c.EventType = javaString(value)
		case "meta":
			c.Meta = javaString(value)
		}
		return true
	})
	return c, nil
}

// StreamRequest returns the frame as the reference's toStreamRequest reads
// it.
func (f *Frame) StreamRequest() (StreamRequest, error) {
	if f.MsgType != TypeStreamReq {
		return StreamRequest{}, ErrNotRequest
	}
	r := StreamRequest{Prompt: f.Data}
	f.canonical(func(name, value []byte) bool {
		switch string(name) {
		case "sid":
			r.SessionID = javaString(value)
		case "replyTo":
			r.ReplyTo = javaString(value)
		case "model":
			r.Model = javaString(value)
		case "conv":
			r.Conv = javaString(value)
		}
		return true
	})
	return r, nil
}
