package frame

import (
	"bytes"
	"encoding/json"
	"errors"
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
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, rest, err := Decode(b)
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
