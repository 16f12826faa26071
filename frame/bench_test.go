package frame

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
)

// BenchmarkDecode is the hot path: one typical STREAM_CHUNK, then what the
// validator reads from it (sid, seq, done).
func BenchmarkDecode(b *testing.B) {
	in := typicalChunk(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	var last int32
	for b.Loop() {
		f, _, err := Decode(in)
		if err != nil {
			b.Fatal(err)
		}
		last += f.Seq
	}
	_ = last
}

// BenchmarkDecodeSeqCheck adds the sid lookup and a sequence comparison,
// the per-frame work of the chunk-stream rules.
func BenchmarkDecodeSeqCheck(b *testing.B) {
	in := typicalChunk(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	expected, gaps := int32(42), 0
	for b.Loop() {
		f, _, err := Decode(in)
		if err != nil {
			b.Fatal(err)
		}
		sid, ok := f.Attr("sid")
		if !ok || len(sid) == 0 || f.Seq != expected {
			gaps++
		}
	}
	if gaps != 0 {
		b.Fatal(gaps)
	}
}

type wireHeader struct {
	Magic, Ver, MsgType, Flags uint8
	Seq                        int32
	KeyCount                   uint16
	DataLen                    int32
}

// decodeNaive is the baseline: encoding/binary.Read into a struct and
// copies of every attribute and of the data, the way a first version
// would be written.
func decodeNaive(in []byte) (wireHeader, map[string]string, []byte, error) {
	r := bytes.NewReader(in)
	var h wireHeader
	if err := binary.Read(r, binary.BigEndian, &h); err != nil {
		return h, nil, nil, err
	}
	attrs := make(map[string]string, h.KeyCount)
	for i := 0; i < int(h.KeyCount); i++ {
		var nl uint16
		if err := binary.Read(r, binary.BigEndian, &nl); err != nil {
			return h, nil, nil, err
		}
		name := make([]byte, nl)
		if _, err := r.Read(name); err != nil {
			return h, nil, nil, err
		}
		var vl int32
		if err := binary.Read(r, binary.BigEndian, &vl); err != nil {
			return h, nil, nil, err
		}
		value := make([]byte, vl)
		if _, err := r.Read(value); err != nil {
			return h, nil, nil, err
		}
		attrs[string(name)] = string(value)
	}
	data := make([]byte, h.DataLen)
	if _, err := r.Read(data); err != nil {
		return h, nil, nil, err
	}
	return h, attrs, data, nil
}

func BenchmarkDecodeBaselineBinaryRead(b *testing.B) {
	in := typicalChunk(b)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		h, attrs, _, err := decodeNaive(in)
		if err != nil || h.Seq != 42 || attrs["sid"] == "" {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	in := typicalChunk(b)
	f, _, err := Decode(in)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if buf, err = Append(buf[:0], &f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendStreamChunk(b *testing.B) {
	c := StreamChunk{SessionID: "agent-7:5f0c6a1e-1d2b", Seq: 42, EventType: "text",
		Data: []byte("Hello from the model, token 42.")}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendStreamChunk(buf[:0], &c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFind: the validator's one pass over a typical chunk's
// attributes (eight names asked for).
func BenchmarkFind(b *testing.B) {
	f, _, err := Decode(typicalChunk(b))
	if err != nil {
		b.Fatal(err)
	}
	names := NewAttrNames("sid", "id", "replyTo", "type", "source", "err", "meta", "etype")
	var vals [8][]byte
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, clean := f.Find(names, vals[:]); !clean {
			b.Fatal("not clean")
		}
	}
}

// benchChunks is 64 STREAM_CHUNKs back to back, make bench-system's shape:
// a sid (agent-7: and a UUID) and an etype, 120 bytes of data, 8 streams.
func benchChunks(b *testing.B) []byte {
	var out []byte
	data := bytes.Repeat([]byte("model output text "), 7)[:120]
	for i := range 64 {
		sid := fmt.Sprintf("agent-7:%08d-0000-4000-8000-000000000000", i%8)
		var err error
		if out, err = AppendFrame(out, TypeStreamChunk, 0, int32(i/8), []Attr{{Name: "sid", Value: sid}, {Name: "etype", Value: "text"}}, data); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// BenchmarkDecodeFile is a reader's decode of frames back to back
// (TryDecodeTo), and BenchmarkDecoderFile the same through a Decoder,
// which reads the length prefixes where the last layout puts them.
func BenchmarkDecodeFile(b *testing.B) {
	in := benchChunks(b)
	b.SetBytes(int64(len(in)))
	var f Frame
	for b.Loop() {
		for p := in; len(p) > 0; p = p[f.Size:] {
			if !TryDecodeTo(&f, p) {
				b.Fatal("no frame")
			}
		}
	}
}

func BenchmarkDecoderFile(b *testing.B) {
	in := benchChunks(b)
	b.SetBytes(int64(len(in)))
	var f Frame
	var d Decoder
	for b.Loop() {
		for p := in; len(p) > 0; p = p[f.Size:] {
			if !d.TryDecodeTo(&f, p) {
				b.Fatal("no frame")
			}
		}
	}
}
