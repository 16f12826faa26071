package frame

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// decodeBoth decodes b with d and with TryDecodeTo and fails unless they
// agree: the same verdict, the same frame, or a frame left as it was.
func decodeBoth(t *testing.T, d *Decoder, b []byte) bool {
	t.Helper()
	want, got := Frame{Seq: 7}, Frame{Seq: 7}
	ok := TryDecodeTo(&want, b)
	if dok := d.TryDecodeTo(&got, b); dok != ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("Decoder.TryDecodeTo %t %+v; TryDecodeTo %t %+v (input %x)", dok, got, ok, want, b)
	}
	return ok
}

// TestDecoderLayout: a Decoder that kept a layout gives TryDecodeTo's
// verdict on frames that fit it, differ from it in any one length prefix,
// end before it does, or have no attributes.
func TestDecoderLayout(t *testing.T) {
	var d Decoder
	a := rawFrame("sid", "s-00000001", "etype", "text")
	if !decodeBoth(t, &d, a) || d.end != HeaderLen+len("\x00\x03sid\x00\x00\x00\x0as-00000001\x00\x05etype\x00\x00\x00\x04text") {
		t.Fatalf("first frame: layout end %d", d.end)
	}
	// The same layout, another sid: read through the layout.
	if !decodeBoth(t, &d, rawFrame("sid", "s-00000002", "etype", "text")) {
		t.Fatal("a frame of the same layout does not decode")
	}
	// Every length prefix changed in turn, to every value of its low
	// byte: longer, shorter, past the end, negative (values).
	prefixes := []int{HeaderLen, HeaderLen + 2 + 3, HeaderLen + 2 + 3 + 4 + 10, HeaderLen + 2 + 3 + 4 + 10 + 2 + 5}
	for i, at := range prefixes {
		width := 2
		if i%2 == 1 {
			width = 4
		}
		for v := 0; v < 256; v++ {
			b := bytes.Clone(a)
			b[at+width-1] = byte(v)
			decodeBoth(t, &d, b)
			decodeBoth(t, &d, a) // the layout back
		}
		if width == 4 {
			b := bytes.Clone(a)
			binary.BigEndian.PutUint32(b[at:], 0xffffffff)
			decodeBoth(t, &d, b)
			decodeBoth(t, &d, a)
		}
	}
	// Cut anywhere: within the layout's section, or in the data.
	for n := 0; n <= len(a); n++ {
		decodeBoth(t, &d, a[:n:n])
		decodeBoth(t, &d, a)
	}
	// Another attribute count, then none, then more than a layout holds.
	decodeBoth(t, &d, rawFrame("sid", "s-1"))
	for range 2 { // walked, then through the kept layout of none
		if !decodeBoth(t, &d, rawFrame()) {
			t.Fatal("a frame without attributes does not decode")
		}
	}
	many := make([]string, 0, 2*(decoderAttrs+1))
	for i := 0; i <= decoderAttrs; i++ {
		many = append(many, "k"+string(rune('a'+i)), "v")
	}
	if !decodeBoth(t, &d, rawFrame(many...)) || d.end != 0 {
		t.Fatalf("%d attributes: layout end %d, want none kept", decoderAttrs+1, d.end)
	}
	decodeBoth(t, &d, a)
}

// FuzzDecoder: one Decoder over a sequence of inputs (b, a cut of it, what
// follows the cut, b again) agrees with TryDecodeTo on each.
func FuzzDecoder(f *testing.F) {
	addVectorSeeds(f)
	for _, c := range findCases {
		f.Add(rawFrame(c.attrs...))
	}
	f.Add(append(rawFrame("sid", "a", "etype", "text"), rawFrame("sid", "b", "etype", "tool")...))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Decoder
		rest := b
		for range 4 { // the frames of b back to back
			var fr Frame
			if !decodeBoth(t, &d, rest) {
				break
			}
			TryDecodeTo(&fr, rest)
			rest = rest[fr.Size:]
		}
		for n := range min(len(b), 64) {
			decodeBoth(t, &d, b[:len(b)-n])
			decodeBoth(t, &d, b[n:])
		}
		decodeBoth(t, &d, b)
	})
}
