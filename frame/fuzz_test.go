package frame

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Seeds beyond testdata/fuzz: every reference vector.
func addVectorSeeds(f *testing.F) {
	for _, v := range loadVectors(f) {
		f.Add(unhex(f, v.Hex))
	}
}

func FuzzDecode(f *testing.F) {
	addVectorSeeds(f)
	for _, c := range findCases {
		f.Add(rawFrame(c.attrs...))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, rest, err := Decode(b)
		// DecodeTo's fast path accepts what the full checks accept, the
		// same frame; a rejection is decodeChecked's own error.
		var ck Frame
		crest, cerr := decodeChecked(&ck, b)
		if (err == nil) != (cerr == nil) || !reflect.DeepEqual(fr, ck) || len(rest) != len(crest) ||
			err != nil && err.Error() != cerr.Error() {
			t.Fatalf("DecodeTo %+v, %v; decodeChecked %+v, %v", fr, err, ck, cerr)
		}
		// TryDecodeTo: the same frame, or false and the frame untouched.
		tf := Frame{Seq: 7}
		if ok := TryDecodeTo(&tf, b); ok != (err == nil) || ok && !reflect.DeepEqual(tf, fr) || !ok && tf.Seq != 7 {
			t.Fatalf("TryDecodeTo %t %+v; DecodeTo %+v, %v", ok, tf, fr, err)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(b) || de.Code == 0 {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if fr.Size < HeaderLen || fr.Size > len(b) || fr.Size+len(rest) != len(b) {
			t.Fatalf("Size %d rest %d len %d", fr.Size, len(rest), len(b))
		}
		n := 0
		fr.Attrs(func(name, value []byte) bool { n++; return true })
		if n != int(fr.KeyCount) {
			t.Fatalf("Attrs visited %d of %d", n, fr.KeyCount)
		}
		_, dup := fr.DupAttr()
		valid := fr.ValidUTF8()
		_, over := fr.OverLimits()
		checkFind(t, &fr, !dup && valid && !over)
		{
			cp := bytes.Clone(b[:fr.Size])
			g := fr.On(cp)
			if g.Size != fr.Size || !bytes.Equal(g.Data, fr.Data) || !bytes.Equal(g.attrs, fr.attrs) || g.KeyCount != fr.KeyCount {
				t.Fatal("On: the frame differs on the copy")
			}
			if len(g.Data) > 0 && &g.Data[0] != &cp[fr.Size-len(fr.Data)] {
				t.Fatal("On: Data does not alias the copy")
			}
			if l := fr.Layout().On(cp); !reflect.DeepEqual(l, g) {
				t.Fatalf("Layout.On: %+v, On: %+v", l, g)
			}
		}

		canon, err := Append(nil, &fr)
		if err != nil {
			if !over && !errors.Is(err, ErrNameLength) && !errors.Is(err, ErrValueLength) {
				t.Fatalf("Append: %v for a frame within limits", err)
			}
			return
		}
		g, grest, err := Decode(canon)
		if err != nil || len(grest) != 0 {
			t.Fatalf("canonical form does not decode: %v (rest %d)", err, len(grest))
		}
		if g.MsgType != fr.MsgType || g.Flags != fr.Flags || g.Seq != fr.Seq || !bytes.Equal(g.Data, fr.Data) {
			t.Fatal("canonical form changed the header or data")
		}
		a, c := fr.CanonicalAttrs(), g.CanonicalAttrs()
		if len(a) != len(c) || len(c) != int(g.KeyCount) {
			t.Fatalf("attrs %q, canonical %q", a, c)
		}
		for i := range a {
			if a[i] != c[i] {
				t.Fatalf("attr %d: %q, canonical %q", i, a[i], c[i])
			}
		}
		if _, d := g.DupAttr(); d || !g.ValidUTF8() {
			t.Fatal("canonical form has duplicates or bad UTF-8")
		}
		again, err := Append(nil, &g)
		if err != nil || !bytes.Equal(again, canon) {
			t.Fatal("canonical encoding is not a fixed point")
		}
		if !dup && valid && len(rest) == 0 && !bytes.Equal(canon, b) {
			t.Fatal("a canonical input re-encodes differently")
		}
	})
}

func FuzzDecodeCloudEventJSON(f *testing.F) {
	for _, s := range []string{
		`{"specversion":"1.0","id":"1","source":"/s","type":"t","data":"x"}`,
		`{"specversion":"1.0","id":"1","source":"/s","type":"t","datacontenttype":"text/plain","data":"x","emx":1.5}`,
		`{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"AAE=","time":"2024-05-01T12:00:00.5+01:00"}`,
		`{"specversion":"1.0","id":"s-1","source":"em://stream/s","type":"stream.chunk","emsessionid":"s","emseq":1,"emdone":true}`,
		`{"specversion":"1.0","id":"r","source":"em://stream/s","type":"stream.request","emsessionid":"s","emreplyto":"p#l"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ce, err := DecodeCloudEventJSON(b)
		if err != nil {
			var e *CloudEventError
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatal("accepted invalid JSON")
		}
		if ce.SpecVersion != "1.0" || ce.ID == "" || ce.Source == "" || ce.Type == "" {
			t.Fatalf("accepted without required attributes: %+v", ce)
		}
		raw, err := FromCloudEvent(nil, &ce)
		if err == nil {
			if _, _, err := Decode(raw); err != nil {
				t.Fatalf("FromCloudEvent built an undecodable frame: %v", err)
			}
		} else if !errors.As(err, new(*EncodeError)) {
			t.Fatalf("FromCloudEvent: %v", err)
		}
		if raw, err := FromLegacyStreamEvent(nil, &ce); err == nil {
			if _, _, err := Decode(raw); err != nil {
				t.Fatalf("FromLegacyStreamEvent built an undecodable frame: %v", err)
			}
		}
	})
}

func FuzzDecodePackage(f *testing.F) {
	f.Add(goodPackage(`{"cmd":"ASYNC_MESSAGE_TO_SERVER","code":0,"seq":"1","properties":{"a":"b"}}`,
		`{"topic":"t","properties":{"ttl":"4000"},"headers":{"k":"v"},"body":"x"}`))
	f.Add(goodPackage(`{"cmd":"HEARTBEAT_REQUEST"}`, ""))
	f.Add(rawPackage("EventMesh", "0000", 100, 2, "{}", ""))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, rest, err := DecodePackage(b)
		if err != nil {
			var pe *PackageError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(b) {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if p.Size > len(b) || p.Size+len(rest) != len(b) || p.BodyOffset+len(p.Body) != p.Size {
			t.Fatalf("sizes: size %d body@%d+%d rest %d len %d", p.Size, p.BodyOffset, len(p.Body), len(rest), len(b))
		}
		if raw, err := p.ToFrame(nil); err == nil {
			if _, _, err := Decode(raw); err != nil {
				t.Fatalf("ToFrame built an undecodable frame: %v", err)
			}
		}
		again, err := AppendPackage(nil, &p.Header, p.Body)
		if err != nil {
			return // re-encoded header may push it over the limit
		}
		q, _, err := DecodePackage(again)
		if err != nil {
			t.Fatalf("re-encoded package does not decode: %v", err)
		}
		h, g := p.Header, q.Header
		if h.Command != g.Command || h.Code != g.Code || h.Desc != g.Desc || h.Seq != g.Seq ||
			len(h.Properties) != len(g.Properties) || !bytes.Equal(p.Body, q.Body) {
			t.Fatalf("header %+v re-decoded as %+v", h, g)
		}
	})
}

// checkFind: Find agrees with Attr on every name it is asked for (and on
// names the frame holds), and its clean with the three checks.
func checkFind(t *testing.T, fr *Frame, wantClean bool) {
	t.Helper()
	names := []string{"sid", "id", "err", "meta", "etype", "type"}
	fr.Attrs(func(name, _ []byte) bool {
		if len(names) < 12 {
			names = append(names, string(name))
		}
		return true
	})
	uniq := names[:0:0]
	for _, n := range names {
		if len(n) <= MaxAttrNameBytes && !slices.Contains(uniq, n) {
			uniq = append(uniq, n)
		}
	}
	names = uniq
	vals := make([][]byte, len(names))
	found, clean := fr.Find(NewAttrNames(names...), vals)
	if clean != wantClean {
		t.Fatalf("Find: clean %t, the checks say %t", clean, wantClean)
	}
	for i, n := range names {
		v, ok := fr.Attr(n)
		if ok != (found&(1<<i) != 0) || ok && !bytes.Equal(v, vals[i]) {
			t.Fatalf("Find %q: %q %t, Attr: %q %t", n, vals[i], found&(1<<i) != 0, v, ok)
		}
	}
}

// rawFrame builds a STREAM_CHUNK with the attributes as given (names and
// values alternate), past the encoder's limits if asked.
func rawFrame(nv ...string) []byte {
	b := []byte{Magic, Version, TypeStreamChunk, 0, 0, 0, 0, 1}
	b = binary.BigEndian.AppendUint16(b, uint16(len(nv)/2))
	b = binary.BigEndian.AppendUint32(b, 2)
	for i := 0; i+1 < len(nv); i += 2 {
		b = binary.BigEndian.AppendUint16(b, uint16(len(nv[i])))
		b = append(b, nv[i]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(nv[i+1])))
		b = append(b, nv[i+1]...)
	}
	return append(b, "ok"...)
}

var findCases = []struct {
	name  string
	attrs []string
	clean bool
}{
	{"plain", []string{"sid", "s-1", "etype", "text"}, true},
	{"none", nil, true},
	{"utf-8", []string{"sid", "会话-é", "名前", "x"}, true},
	{"duplicate", []string{"sid", "a", "etype", "text", "sid", "b"}, false},
	{"bad utf-8 value", []string{"sid", "\xff"}, false},
	{"bad utf-8 value bytes", []string{"sid", "a\xffb"}, false},
	{"names equal after repair", []string{"\xff", "a", "\xfe", "b"}, false},
	{"long value", []string{"sid", strings.Repeat("v", MaxAttrValueBytes+1)}, false},
	{"long name", []string{strings.Repeat("n", MaxAttrNameBytes+1), "v"}, false},
	{"value at the limit", []string{"sid", strings.Repeat("v", MaxAttrValueBytes)}, true},
}

var findNames = NewAttrNames("sid", "id", "err", "meta")

// TestFind: Find reads every attribute Attr reads, and is clean exactly
// when DupAttr, ValidUTF8 and OverLimits all pass.
func TestFind(t *testing.T) {
	for _, c := range findCases {
		t.Run(c.name, func(t *testing.T) {
			fr, _, err := Decode(rawFrame(c.attrs...))
			if err != nil {
				t.Fatal(err)
			}
			_, dup := fr.DupAttr()
			_, over := fr.OverLimits()
			want := !dup && fr.ValidUTF8() && !over
			if want != c.clean {
				t.Fatalf("the checks say clean %t, the case %t", want, c.clean)
			}
			checkFind(t, &fr, want)
			if n := testing.AllocsPerRun(100, func() {
				var vals [4][]byte
				fr.Find(findNames, vals[:])
			}); n != 0 {
				t.Errorf("Find: %v allocs", n)
			}
		})
	}
}
