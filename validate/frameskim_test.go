package validate

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// skimSame checks that sk.skim(b) is skimFrame(b), the key a part of b at
// the same place.
func skimSame(t *testing.T, sk *frameSkim, b []byte) {
	t.Helper()
	size, attrs, key, ok := sk.skim(b)
	wsize, wattrs, wkey, wok := skimFrame(b)
	if ok != wok || size != wsize || attrs != wattrs || !bytes.Equal(key, wkey) || (key == nil) != (wkey == nil) ||
		key != nil && unsafe.SliceData(key) != unsafe.SliceData(wkey) {
		t.Fatalf("frameSkim (%t, %d, %d, %q), skimFrame (%t, %d, %d, %q) on % x", ok, size, attrs, key, wok, wsize, wattrs, wkey, b[:min(len(b), 48)])
	}
}

// skimVariants are frames whose length prefixes are one layout's and
// whose names, type or data are not: what the layout alone cannot tell.
func skimVariants() [][]byte {
	mk := func(typ uint8, data string, attrs ...frame.Attr) []byte {
		b, err := frame.AppendFrame(nil, typ, 0, 0, attrs, []byte(data))
		if err != nil {
			panic(err)
		}
		return b
	}
	a := func(n, v string) frame.Attr { return frame.Attr{Name: n, Value: v} }
	return [][]byte{
		mk(frame.TypeStreamChunk, "data", a("sid", "s-0001"), a("etype", "text")),
		mk(frame.TypeStreamChunk, "data", a("sid", "s-0002"), a("etype", "done")),
		mk(frame.TypeStreamChunk, "data", a("sie", "s-0003"), a("etype", "text")), // same lengths, no key
		mk(frame.TypeStreamChunk, "data", a("xid", "s-0004"), a("etype", "text")),
		mk(frame.TypeEvent, "data", a("sid", "s-0005"), a("etype", "text")), // an EVENT: keyed by id
		mk(frame.TypeEvent, "datb", a("sid", "s-0006"), a("id", "e1")),
		mk(frame.TypeEvent, "datc", a("sid", "s-0007"), a("iD", "e2")),
		mk(frame.TypeStreamChunk, "data", a("sid", "s-0008"), a("sid", "s-0009")), // the last wins
		mk(frame.TypeStreamChunk, "data", a("sid", "s-0010"), a("six", "s-0011")),
		mk(frame.TypeStreamChunk, "longer data", a("sid", "s-0012"), a("six", "s-0013")),
		mk(frame.TypeStreamChunk, "", a("sid", "s-0014"), a("six", "s-0015")),
		mk(frame.TypeStreamChunk, "x"),
		mk(frame.TypeStreamChunk, "y"),
		mk(frame.TypeStreamChunk, "z", a("a", "1"), a("bb", "2"), a("ccc", "3"), a("id", "4"), a("sid", "5"), a("f", "6"), a("g", "7"), a("h", "8")),
		mk(frame.TypeStreamChunk, "z", a("a", "1"), a("bb", "2"), a("ccc", "3"), a("id", "4"), a("sid", "5"), a("f", "6"), a("g", "7"), a("h", "8"), a("i", "9")),
		mk(frame.TypeStreamChunk, "z", a("a", "1"), a("bb", "2"), a("ccc", "3"), a("id", "4"), a("sid", "5"), a("f", "6"), a("g", "7"), a("h", "8")),
	}
}

// TestFrameSkim: a frameSkim gives skimFrame's size, attributes' end and
// key (the same bytes) for every frame of a stream of frames that share a
// layout or change it, on their prefixes (a frame cut by the end of what
// was read) and on single-byte corruptions of them (a prefix, a name, the
// type, the data length), one skimmer going on from each to the next as a
// split's does.
func TestFrameSkim(t *testing.T) {
	frames := skimVariants()
	data := walkFrameCorpus(73, 200, 20, false)
	for off := 0; off < len(data); {
		var f frame.Frame
		if _, err := frame.DecodeTo(&f, data[off:]); err != nil {
			t.Fatal(err)
		}
		frames = append(frames, data[off:off+f.Size])
		off += f.Size
	}
	r := rand.New(rand.NewPCG(73, 5))
	var sk frameSkim
	for i, one := range frames {
		skimSame(t, &sk, one)
		skimSame(t, &sk, append(bytes.Clone(one), frames[(i+1)%len(frames)]...))
		for n := 0; n <= len(one); n++ {
			skimSame(t, &sk, one[:n])
			skimSame(t, &sk, one) // the layout back
		}
		for k := 0; k < 40; k++ {
			c := bytes.Clone(one)
			c[r.IntN(min(len(c), 80))] = byte(r.IntN(256))
			skimSame(t, &sk, c)
			skimSame(t, &sk, one)
		}
		// A data length over what follows, negative, over the limit.
		for _, dl := range []uint32{uint32(len(one)), 1 << 31, frame.MaxDataBytes + 1} {
			skimSame(t, &sk, one)
			c := bytes.Clone(one)
			binary.BigEndian.PutUint32(c[10:14], dl)
			skimSame(t, &sk, c)
		}
	}
}

// FuzzFrameSkim: on any bytes cut into pieces, one frameSkim going from
// piece to piece (each first skimmed whole, then as a variant at the
// fuzzer's byte) gives skimFrame's answers.
func FuzzFrameSkim(f *testing.F) {
	var seed []byte
	for _, b := range skimVariants() {
		seed = append(seed, b...)
	}
	f.Add(seed, uint16(0), byte(0))
	f.Add(walkFrameCorpus(7, 30, 5, false), uint16(9), byte('d'))
	f.Fuzz(func(t *testing.T, data []byte, at uint16, val byte) {
		var sk frameSkim
		for off := 0; off < len(data); {
			skimSame(t, &sk, data[off:])
			if len(data[off:]) > int(at) {
				c := bytes.Clone(data[off:])
				c[at] = val
				skimSame(t, &sk, c)
				skimSame(t, &sk, data[off:])
			}
			size, _, _, ok := skimFrame(data[off:])
			if !ok {
				size = 1
			}
			off += size
		}
	})
}
