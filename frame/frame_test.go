package frame

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

const vectorsFile = "testdata/eventmesh_frame_vectors.jsonl"

type javaErr struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

type vector struct {
	Name    string `json:"name"`
	Hex     string `json:"hex"`
	Kind    string `json:"kind"`
	Decoded *struct {
		MsgType  uint8       `json:"msgType"`
		Flags    uint8       `json:"flags"`
		Seq      int32       `json:"seq"`
		Done     bool        `json:"done"`
		HasError bool        `json:"hasError"`
		HasMeta  bool        `json:"hasMeta"`
		Attrs    [][2]string `json:"attrs"`
		DataLen  int         `json:"dataLen"`
		DataHex  string      `json:"data_hex"`
	} `json:"decoded"`
	Error             *javaErr `json:"error"`
	ReencodeIdentical *bool    `json:"reencode_identical"`
	ReencodeError     *javaErr `json:"reencode_error"`
}

func loadVectors(t testing.TB) []vector {
	t.Helper()
	fh, err := os.Open(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var vs []vector
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("vector line %d: %v", len(vs)+1, err)
		}
		vs = append(vs, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return vs
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The copy in testdata must stay byte-identical to the shared vectors.
func TestVectorsFileIsTheSharedOne(t *testing.T) {
	shared, err := os.ReadFile("../../shared/vectors/frame/eventmesh_frame_vectors.jsonl")
	if err != nil {
		t.Skipf("shared vectors not beside the repo: %v", err)
	}
	local, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, local) {
		t.Fatal("testdata vectors differ from ../shared/vectors; copy them again")
	}
}

var reasonCode = map[string]Code{
	"frame too short":                  ErrTooShort,
	"bad frame magic":                  ErrBadMagic,
	"unsupported frame version":        ErrBadVersion,
	"frame attribute count":            ErrAttrCount,
	"truncated frame: attribute name":  ErrNamePrefix,
	"truncated frame: attribute value": ErrValuePrefix,
	"string length":                    ErrStringLength,
}

func wantCode(msg string) Code {
	if strings.HasPrefix(msg, "frame data length") {
		switch {
		case strings.Contains(msg, "exceeds limit"):
			return ErrDataLength
		case strings.Contains(msg, "provided buffer"):
			return ErrDataBeyondBuffer
		default:
			return ErrDataRemaining
		}
	}
	for prefix, c := range reasonCode {
		if strings.HasPrefix(msg, prefix) {
			return c
		}
	}
	return 0
}

func TestVectors(t *testing.T) {
	vs := loadVectors(t)
	if len(vs) != 55 {
		t.Fatalf("%d vectors, want 55", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			in := unhex(t, v.Hex)
			f, rest, err := Decode(in)
			if v.Error != nil {
				var de *DecodeError
				if !errors.As(err, &de) {
					t.Fatalf("Decode: err %v, want DecodeError %q", err, v.Error.Message)
				}
				if de.Reason != v.Error.Message {
					t.Errorf("Reason %q, reference says %q", de.Reason, v.Error.Message)
				}
				if c := wantCode(v.Error.Message); !errors.Is(err, c) {
					t.Errorf("errors.Is(err, %v) false; code %v", c, de.Code)
				}
				if de.Offset < 0 || de.Offset > len(in) {
					t.Errorf("Offset %d outside input of %d bytes", de.Offset, len(in))
				}
				if rest != nil {
					t.Errorf("rest %x on error", rest)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			d := v.Decoded
			if f.MsgType != d.MsgType || f.Flags != d.Flags || f.Seq != d.Seq {
				t.Errorf("header (%d,%d,%d), want (%d,%d,%d)", f.MsgType, f.Flags, f.Seq, d.MsgType, d.Flags, d.Seq)
			}
			if f.Done() != d.Done || f.HasError() != d.HasError || f.HasMeta() != d.HasMeta {
				t.Errorf("flags done/hasError/hasMeta = %v/%v/%v, want %v/%v/%v",
					f.Done(), f.HasError(), f.HasMeta(), d.Done, d.HasError, d.HasMeta)
			}
			if len(f.Data) != d.DataLen || hex.EncodeToString(f.Data) != d.DataHex {
				t.Errorf("data %d bytes %x, want %d bytes %s", len(f.Data), f.Data, d.DataLen, d.DataHex)
			}
			// The vectors list the reference's attribute map.
			got := f.CanonicalAttrs()
			if len(got) != len(d.Attrs) {
				t.Fatalf("attrs %q, want %q", got, d.Attrs)
			}
			for i, a := range got {
				if a.Name != d.Attrs[i][0] || a.Value != d.Attrs[i][1] {
					t.Errorf("attr %d = %q=%q, want %q=%q", i, a.Name, a.Value, d.Attrs[i][0], d.Attrs[i][1])
				}
			}
			// Wire order, duplicates included.
			n := 0
			f.Attrs(func(name, value []byte) bool { n++; return true })
			if n != int(f.KeyCount) {
				t.Errorf("Attrs visited %d, KeyCount %d", n, f.KeyCount)
			}
			if f.Size+len(rest) != len(in) || !bytes.Equal(rest, in[f.Size:]) {
				t.Errorf("Size %d, rest %d bytes, input %d", f.Size, len(rest), len(in))
			}
			for _, a := range d.Attrs {
				if val, ok := f.Attr(a[0]); ok && string(val) != a[1] && !strings.ContainsRune(a[0]+a[1], '\uFFFD') {
					t.Errorf("Attr(%q) = %q, want %q", a[0], val, a[1])
				}
			}

			out, err := Append(nil, &f)
			switch {
			case v.ReencodeError != nil:
				var ee *EncodeError
				if !errors.As(err, &ee) || ee.Reason != v.ReencodeError.Message {
					t.Errorf("Append: err %v, reference says %q", err, v.ReencodeError.Message)
				}
				if _, over := f.OverLimits(); !over {
					t.Error("OverLimits false for a frame the reference will not encode")
				}
			case err != nil:
				t.Errorf("Append: %v", err)
			case *v.ReencodeIdentical != bytes.Equal(out, in):
				t.Errorf("re-encode identical = %v, reference says %v\n got %x\nwant %x",
					bytes.Equal(out, in), *v.ReencodeIdentical, out, in)
			}
		})
	}
}

func TestDecodeErrorOffsets(t *testing.T) {
	cases := []struct {
		hex  string
		code Code
		off  int
	}{
		{"ef01", ErrTooShort, 0},
		{"0001030000000000000000000000", ErrBadMagic, 0},
		{"ef02030000000000000000000000", ErrBadVersion, 1},
		{"ef01030000000000004100000000", ErrAttrCount, 8},
		{"ef010300000000000000ffffffff", ErrDataLength, 10},
		{"ef0103000000000000000000000a", ErrDataBeyondBuffer, 10},
		{"ef01030000000000000100000000", ErrNamePrefix, 14},
		{"ef01030000000000000100000000000a616263", ErrStringLength, 14},
		{"ef0103000000000000010000000000016b0000", ErrValuePrefix, 17},
		{"ef0103000000000000010000000000016b800000007a7a", ErrStringLength, 17},
		{"ef0103000000000000010000000500016b00000001766865", ErrDataRemaining, 10},
	}
	for _, c := range cases {
		_, _, err := Decode(unhex(t, c.hex))
		var de *DecodeError
		if !errors.As(err, &de) || de.Code != c.code || de.Offset != c.off {
			t.Errorf("%s: err %v, want code %v at offset %d", c.hex, err, c.code, c.off)
		}
		if !strings.Contains(err.Error(), de.Reason) {
			t.Errorf("Error() %q lacks the reason", err)
		}
	}
}

func TestConcatenatedFrames(t *testing.T) {
	var file []byte
	for seq := int32(0); seq < 5; seq++ {
		var err error
		file, err = AppendStreamChunk(file, &StreamChunk{SessionID: "s", Seq: seq, Done: seq == 4, Data: []byte("tok")})
		if err != nil {
			t.Fatal(err)
		}
	}
	var seqs []int32
	for rest := file; len(rest) > 0; {
		f, r, err := Decode(rest)
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, f.Seq)
		if f.Done() != (f.Seq == 4) {
			t.Errorf("seq %d done %v", f.Seq, f.Done())
		}
		rest = r
	}
	if len(seqs) != 5 || seqs[4] != 4 {
		t.Fatalf("seqs %v", seqs)
	}
}

func TestBuildersMatchReferenceVectors(t *testing.T) {
	byName := map[string][]byte{}
	for _, v := range loadVectors(t) {
		byName[v.Name] = unhex(t, v.Hex)
	}
	req, err := AppendStreamRequest(nil, &StreamRequest{
		SessionID: "agent-1:uuid", ReplyTo: "client-parent#client.c1", Model: "qwen-max", Conv: "conv-9",
		Prompt: []byte("Introduce EventMesh"),
	})
	if err != nil || !bytes.Equal(req, byName["req_full"]) {
		t.Errorf("AppendStreamRequest = %x, %v\nwant %x", req, err, byName["req_full"])
	}
	empty, err := AppendStreamRequest(nil, &StreamRequest{})
	if err != nil || !bytes.Equal(empty, byName["req_empty_sid_empty_prompt"]) {
		t.Errorf("empty request = %x, %v", empty, err)
	}
	chunk, err := AppendStreamChunk(nil, &StreamChunk{
		SessionID: "s3", Seq: 9, Done: true, Err: "boom", EventType: "thought", Meta: `{"a":"1","b":2,"c":true}`,
	})
	if err != nil || !bytes.Equal(chunk, byName["chunk_all_flags"]) {
		t.Errorf("AppendStreamChunk = %x, %v\nwant %x", chunk, err, byName["chunk_all_flags"])
	}
	f, _, err := Decode(chunk)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Chunk()
	if err != nil || c.SessionID != "s3" || c.Err != "boom" || c.EventType != "thought" || !c.Done || c.Seq != 9 {
		t.Errorf("Chunk() = %+v, %v", c, err)
	}
	if _, err := f.StreamRequest(); !errors.Is(err, ErrNotRequest) {
		t.Errorf("StreamRequest on a chunk: %v", err)
	}
	rf, _, _ := Decode(req)
	r, err := rf.StreamRequest()
	if err != nil || r.ReplyTo != "client-parent#client.c1" || string(r.Prompt) != "Introduce EventMesh" {
		t.Errorf("StreamRequest() = %+v, %v", r, err)
	}
	if _, err := rf.Chunk(); !errors.Is(err, ErrNotChunk) {
		t.Errorf("Chunk on a request: %v", err)
	}
}

func TestEncodeLimits(t *testing.T) {
	many := make([]Attr, 65)
	for i := range many {
		many[i] = Attr{"k" + string(rune('a'+i%26)) + string(rune('a'+i/26)), "v"}
	}
	cases := []struct {
		name  string
		attrs []Attr
		data  []byte
		code  Code
		msg   string
	}{
		{"count", many, nil, ErrAttrCount, "frame attribute count 65 exceeds limit 64"},
		{"data", nil, make([]byte, MaxDataBytes+1), ErrDataLength, "frame data length 8388609 exceeds limit 8388608"},
		{"name", []Attr{{strings.Repeat("n", 257), "v"}}, nil, ErrNameLength, "attribute name length 257 exceeds limit 256"},
		{"value", []Attr{{"k", strings.Repeat("v", 4097)}}, nil, ErrValueLength, "attribute value length 4097 exceeds limit 4096"},
		{"at limits", []Attr{{strings.Repeat("n", 256), strings.Repeat("v", 4096)}}, make([]byte, MaxDataBytes), 0, ""},
	}
	for _, c := range cases {
		dst := []byte("keep")
		out, err := AppendFrame(dst, TypeEvent, 0, 0, c.attrs, c.data)
		if c.code == 0 {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var ee *EncodeError
		if !errors.As(err, &ee) || !errors.Is(err, c.code) || ee.Reason != c.msg {
			t.Errorf("%s: err %v, want %q", c.name, err, c.msg)
		}
		if string(out) != "keep" {
			t.Errorf("%s: dst changed on error", c.name)
		}
		// The unchecked builder writes it anyway; decode accepts all but
		// the decode-side limits.
		raw, err := AppendFrameUnchecked(nil, TypeEvent, 0, 0, c.attrs, c.data)
		if err != nil {
			t.Fatalf("%s unchecked: %v", c.name, err)
		}
		f, _, err := Decode(raw)
		switch c.code {
		case ErrAttrCount, ErrDataLength:
			if !errors.Is(err, c.code) {
				t.Errorf("%s: decode err %v, want %v", c.name, err, c.code)
			}
		default:
			if err != nil {
				t.Fatalf("%s: decode %v", c.name, err)
			}
			if what, over := f.OverLimits(); !over || !strings.Contains(what, "exceeds limit") {
				t.Errorf("%s: OverLimits = %q, %v", c.name, what, over)
			}
			if _, err := Append(nil, &f); !errors.Is(err, c.code) {
				t.Errorf("%s: Append err %v, want %v", c.name, err, c.code)
			}
		}
	}
}

func TestFrameSizeLimit(t *testing.T) {
	// Only reachable with values beyond the value limit, so the decoder's
	// view matters: OverLimits reports the value first.
	raw, err := AppendFrameUnchecked(nil, TypeEvent, 0, 0, []Attr{{"big", strings.Repeat("x", MaxFrameBytes)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if what, over := f.OverLimits(); !over || !strings.Contains(what, "value length") {
		t.Errorf("OverLimits = %q %v", what, over)
	}
	if f.Size <= MaxFrameBytes {
		t.Fatalf("size %d", f.Size)
	}
}

func TestJavaUTF8(t *testing.T) {
	const r = "\uFFFD"
	cases := []struct{ in, want string }{
		{"ok", "ok"},
		{"\xc3\x28", r + "("},
		{"\xff", r},
		{"\xff\xfe", r + r},
		{"\xe4\xb8", r},        // truncated 3-byte at the end: one replacement
		{"\xe4\xb8A", r + "A"}, // truncated 3-byte: one replacement
		{"\xed\xa0\x80", r},    // encoded surrogate: one replacement
		{"\xf0\x9f\x98", r},    // truncated 4-byte at the end
		{"\xf0\x9f\x98A", r + "A"},
		{"\xf0\x9fA", r + "A"},
		{"\xc0\xaf", r + r}, // overlong
		{"\xe0\x80\xaf", r + r + r},
		{"\xf4\x90\x80\x80", r + r + r + r}, // above U+10FFFF
		{"\xf5", r},
		{"\xc3", r},
		{"a\xf0\x9f\x9a\x80b", "a\U0001F680b"},
	}
	for _, c := range cases {
		if got := javaString([]byte(c.in)); got != c.want {
			t.Errorf("javaString(%q) = %q, want %q", c.in, got, c.want)
		}
		if l := javaLen([]byte(c.in)); l != len(c.want) {
			t.Errorf("javaLen(%q) = %d, want %d", c.in, l, len(c.want))
		}
		if !javaEqual([]byte(c.in), []byte(c.want)) {
			t.Errorf("javaEqual(%q, %q) false", c.in, c.want)
		}
	}
	if javaEqual([]byte("\xffa"), []byte("\xffb")) || javaEqual([]byte("ab"), []byte("a")) {
		t.Error("javaEqual of different strings")
	}
}

func TestValidatorHelpers(t *testing.T) {
	build := func(attrs ...Attr) Frame {
		raw, err := AppendFrame(nil, TypeEvent, 0, 0, attrs, nil)
		if err != nil {
			t.Fatal(err)
		}
		f, _, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	f := build(Attr{"id", "1"}, Attr{"type", "t"}, Attr{"id", "2"})
	if name, dup := f.DupAttr(); !dup || string(name) != "id" {
		t.Errorf("DupAttr = %q %v", name, dup)
	}
	if v, _ := f.Attr("id"); string(v) != "2" {
		t.Errorf("Attr(id) = %q, want the last value", v)
	}
	if got := f.CanonicalAttrs(); len(got) != 2 || got[0] != (Attr{"id", "2"}) {
		t.Errorf("CanonicalAttrs = %q", got)
	}
	// Names equal only after UTF-8 repair are one key for the reference.
	f = build(Attr{"\xff", "a"}, Attr{"\xfe", "b"})
	if _, dup := f.DupAttr(); !dup {
		t.Error("DupAttr misses names that repair to the same string")
	}
	if f.ValidUTF8() {
		t.Error("ValidUTF8 true")
	}
	f = build(Attr{"id", "x"}, Attr{"sid", "é"})
	if _, dup := f.DupAttr(); dup || !f.ValidUTF8() {
		t.Error("clean frame flagged")
	}
	if what, over := f.OverLimits(); over {
		t.Errorf("OverLimits = %q", what)
	}
	var zero Frame
	if _, dup := zero.DupAttr(); dup || !zero.ValidUTF8() {
		t.Error("zero frame flagged")
	}
	if out, err := Append(nil, &zero); err != nil || len(out) != HeaderLen {
		t.Errorf("Append(zero) = %x, %v", out, err)
	}
}

func TestZeroAllocs(t *testing.T) {
	in := typicalChunk(t)
	var f Frame
	var err error
	if n := testing.AllocsPerRun(1000, func() { f, _, err = Decode(in) }); n != 0 {
		t.Errorf("Decode: %v allocs", n)
	}
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 256)
	checks := map[string]func(){
		"Attr":       func() { _, _ = f.Attr("sid") },
		"Attrs":      func() { f.Attrs(func(n, v []byte) bool { return true }) },
		"DupAttr":    func() { _, _ = f.DupAttr() },
		"ValidUTF8":  func() { _ = f.ValidUTF8() },
		"OverLimits": func() { _, _ = f.OverLimits() },
		"Append":     func() { buf, _ = Append(buf[:0], &f) },
		"AppendStreamChunk": func() {
			buf, _ = AppendStreamChunk(buf[:0], &StreamChunk{SessionID: "s", Seq: 1, EventType: "text", Data: f.Data})
		},
	}
	for name, fn := range checks {
		if n := testing.AllocsPerRun(1000, fn); n != 0 {
			t.Errorf("%s: %v allocs", name, n)
		}
	}
}

func typicalChunk(t testing.TB) []byte {
	b, err := AppendStreamChunk(nil, &StreamChunk{
		SessionID: "agent-7:5f0c6a1e-1d2b", Seq: 42, EventType: "text",
		Data: []byte("Hello from the model, token 42."),
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}
