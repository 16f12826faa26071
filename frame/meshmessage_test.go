package frame

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

// rawPackage builds a package byte by byte, so tests can break any field.
func rawPackage(magic, version string, length, headerLen int32, header, body string) []byte {
	b := []byte(magic + version)
	b = binary.BigEndian.AppendUint32(b, uint32(length))
	b = binary.BigEndian.AppendUint32(b, uint32(headerLen))
	return append(append(b, header...), body...)
}

func goodPackage(header, body string) []byte {
	return rawPackage("EventMesh", "0000", int32(13+len(header)+len(body)), int32(len(header)), header, body)
}

func TestDecodePackage(t *testing.T) {
	hdr := `{"cmd":"ASYNC_MESSAGE_TO_SERVER","code":0,"desc":"ok","seq":"1234567890","properties":{"protocoltype":"eventmeshmessage","n":5}}`
	body := `{"topic":"TEST-TOPIC","properties":{"ttl":"4000"},"headers":{"REPLY_TO":"x"},"body":"body text"}`
	in := append(goodPackage(hdr, body), "next"...)
	p, rest, err := DecodePackage(in)
	if err != nil {
		t.Fatal(err)
	}
	h := p.Header
	if h.Command != CmdAsyncMessageToServer || h.Code != 0 || h.Desc != "ok" || h.Seq != "1234567890" ||
		len(h.Properties) != 2 || h.Properties[1] != (Attr{"n", "5"}) {
		t.Errorf("header %+v", h)
	}
	if string(p.Body) != body || string(rest) != "next" || p.Size != len(in)-4 || p.BodyOffset != 21+len(hdr) {
		t.Errorf("body %q rest %q size %d", p.Body, rest, p.Size)
	}

	// The EVENT frame is the reference's MeshMessageFrameAdaptor layout:
	// byte for byte the event_meshmessage vector.
	raw, err := p.ToFrame(nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	for _, v := range loadVectors(t) {
		if v.Name == "event_meshmessage" {
			want = unhex(t, v.Hex)
		}
	}
	if !bytes.Equal(raw, want) {
		t.Errorf("ToFrame = %x\nwant     %x", raw, want)
	}

	// Round trip through the builder.
	again, err := AppendPackage(nil, &h, p.Body)
	if err != nil {
		t.Fatal(err)
	}
	p2, _, err := DecodePackage(again)
	if err != nil || p2.Header.Seq != h.Seq || p2.Header.Command != h.Command || !bytes.Equal(p2.Body, p.Body) {
		t.Errorf("round trip: %+v, %v", p2, err)
	}
}

func TestDecodePackageErrors(t *testing.T) {
	okHdr := `{"cmd":"HEARTBEAT_REQUEST","seq":"1"}`
	cases := []struct {
		name string
		in   []byte
		code Code
		off  int
		msg  string
	}{
		{"short", []byte("EventMesh0000"), ErrPackageTruncated, 13, "need at least 21"},
		{"bad magic", rawPackage("EventMass", "0000", 13, 0, "", ""), ErrPackageMagic, 0, `flag="EventMass"`},
		{"bad version", rawPackage("EventMesh", "0001", 13, 0, "", ""), ErrPackageMagic, 9, `version="0001"`},
		{"too large", rawPackage("EventMesh", "0000", MaxPackageLength+1, 0, "", ""), ErrPackageTooLarge, 13, "exceeds limit 4194304"},
		{"negative length", rawPackage("EventMesh", "0000", -1, 0, "", ""), ErrPackageLength, 13, "less than"},
		{"negative header", rawPackage("EventMesh", "0000", 13, -1, "", ""), ErrPackageLength, 17, "header length -1"},
		{"header beyond package", rawPackage("EventMesh", "0000", 20, 8, "{}", ""), ErrPackageLength, 17, "does not fit"},
		{"truncated", rawPackage("EventMesh", "0000", 100, 2, "{}", ""), ErrPackageTruncated, 23, "needs 108 bytes"},
		{"header not JSON", goodPackage("{cmd", ""), ErrPackageHeader, 22, "header: invalid JSON"},
		{"header not object", goodPackage(`"x"`, ""), ErrPackageHeader, 21, "not a JSON object"},
		{"unknown cmd", goodPackage(`{"cmd":"FOO"}`, ""), ErrPackageCommand, 28, `unknown command "FOO"`},
		{"no cmd", goodPackage(`{"seq":"1"}`, ""), ErrPackageCommand, 21, "no cmd"},
		{"bad code", goodPackage(`{"cmd":"HELLO_REQUEST","code":"x"}`, ""), ErrPackageHeader, 0, "not a 32-bit integer"},
		{"bad properties", goodPackage(`{"cmd":"HELLO_REQUEST","properties":[1]}`, ""), ErrPackageHeader, 0, "want an object"},
		{"ok", goodPackage(okHdr, "{}"), 0, 0, ""},
	}
	for _, c := range cases {
		_, _, err := DecodePackage(c.in)
		if c.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var pe *PackageError
		if !errors.As(err, &pe) || !errors.Is(err, c.code) || !strings.Contains(pe.Reason, c.msg) {
			t.Errorf("%s: err %v, want %v with %q", c.name, err, c.code, c.msg)
			continue
		}
		if c.off != 0 && pe.Offset != c.off {
			t.Errorf("%s: offset %d, want %d", c.name, pe.Offset, c.off)
		}
	}
}

func TestMeshMessageBody(t *testing.T) {
	hdr := `{"cmd":"ASYNC_MESSAGE_TO_CLIENT","seq":"7"}`
	for name, c := range map[string]struct {
		body string
		ok   bool
	}{
		"plain":          {`{"topic":"t","body":"b"}`, true},
		"null maps":      {`{"topic":"t","properties":null,"headers":null,"body":"b"}`, true},
		"nested prop":    {`{"topic":"t","properties":{"a":{"b":1}}}`, false},
		"topic object":   {`{"topic":{}}`, false},
		"not json":       {`hello`, false},
		"id in property": {`{"topic":"t","properties":{"id":"override"}}`, true},
	} {
		p, _, err := DecodePackage(goodPackage(hdr, c.body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		raw, err := p.ToFrame(nil)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v", name, err)
			continue
		}
		var pe *PackageError
		if err != nil {
			if !errors.As(err, &pe) || pe.Offset < p.BodyOffset || !errors.Is(err, ErrPackageBody) {
				t.Errorf("%s: err %v not a body error with a package offset", name, err)
			}
			continue
		}
		f, _, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := f.Attr("id")
		origin, _ := f.Attr("emorigin")
		if string(origin) != "meshmessage" || (name == "id in property") != (string(id) == "override") {
			t.Errorf("%s: attrs %q", name, f.CanonicalAttrs())
		}
	}
	p, _, _ := DecodePackage(goodPackage(`{"cmd":"HEARTBEAT_REQUEST"}`, ""))
	if _, err := p.ToFrame(nil); !errors.Is(err, ErrPackageCommand) {
		t.Errorf("heartbeat ToFrame: %v", err)
	}
}

func TestCommands(t *testing.T) {
	if CmdRecommendResponse != 36 || CmdAsyncMessageToClient != 22 || CmdRegisterRequest != 31 {
		t.Fatal("command codes drifted from the reference table")
	}
	for c := Command(0); c < numCommands; c++ {
		got, ok := ParseCommand(c.String())
		if !ok || got != c {
			t.Errorf("ParseCommand(%s) = %d %v", c, got, ok)
		}
	}
	if _, ok := ParseCommand("heartbeat_request"); ok {
		t.Error("command names are case-sensitive enum names")
	}
	if Command(99).String() != "Command(99)" {
		t.Error(Command(99).String())
	}
}
