package frame

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestDecodeCloudEventJSON(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want CloudEvent
		attr string // error: the attribute named
		msg  string // error: part of the reason
	}{
		{name: "legacy vector body (data defaults to JSON)",
			in:   `{"specversion":"1.0","id":"1","source":"/s","type":"t","data":"x"}`,
			want: CloudEvent{SpecVersion: "1.0", ID: "1", Source: "/s", Type: "t", Data: []byte(`"x"`)}},
		{name: "full, json data compacted, extensions in order",
			in: `{ "specversion": "1.0", "type": "com.example.order.created", "id": "order-123",
				"source": "/checkout", "datacontenttype": "application/json", "subject": "orders",
				"time": "2024-05-01T12:00:00Z", "emttl": 60000, "emcorrelationid": "corr-1",
				"flag": true, "ratio": 1e7, "data": { "amount": 99 } }`,
			want: CloudEvent{SpecVersion: "1.0", ID: "order-123", Source: "/checkout", Type: "com.example.order.created",
				DataContentType: "application/json", Subject: "orders", Time: "2024-05-01T12:00:00Z",
				Extensions: []Attr{{"emttl", "60000"}, {"emcorrelationid", "corr-1"}, {"flag", "true"}, {"ratio", "1.0E7"}},
				Data:       []byte(`{"amount":99}`)}},
		{name: "text data",
			in:   `{"specversion":"1.0","id":"1","source":"em://stream/s","type":"t","datacontenttype":"text/plain","data":"h\u00e9"}`,
			want: CloudEvent{SpecVersion: "1.0", ID: "1", Source: "em://stream/s", Type: "t", DataContentType: "text/plain", Data: []byte("hé")}},
		{name: "data_base64",
			in:   `{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"AAEC"}`,
			want: CloudEvent{SpecVersion: "1.0", ID: "1", Source: "/s", Type: "t", Data: []byte{0, 1, 2}, DataBase64: true}},
		{name: "nulls are absent",
			in:   `{"specversion":"1.0","id":"1","source":"/s","type":"t","subject":null,"x":null,"data":null}`,
			want: CloudEvent{SpecVersion: "1.0", ID: "1", Source: "/s", Type: "t"}},
		{name: "empty", in: "  ", msg: "empty CloudEvents body"},
		{name: "not an object", in: `[1]`, msg: "not a JSON object"},
		{name: "bad JSON", in: `{"id":`, msg: "invalid JSON"},
		{name: "trailing", in: `{"specversion":"1.0","id":"1","source":"/s","type":"t"} x`, msg: "trailing data"},
		{name: "no specversion", in: `{"id":"1","source":"/s","type":"t"}`, attr: "specversion", msg: "missing"},
		{name: "old specversion", in: `{"specversion":"0.3","id":"1","source":"/s","type":"t"}`, attr: "specversion", msg: "unsupported"},
		{name: "no id", in: `{"specversion":"1.0","source":"/s","type":"t"}`, attr: "id", msg: "missing"},
		{name: "empty source", in: `{"specversion":"1.0","id":"1","source":"","type":"t"}`, attr: "source", msg: "missing or empty"},
		{name: "id not a string", in: `{"specversion":"1.0","id":5,"source":"/s","type":"t"}`, attr: "id", msg: "is a number"},
		{name: "bad source", in: `{"specversion":"1.0","id":"1","source":"a b","type":"t"}`, attr: "source", msg: "URI"},
		{name: "bad time", in: `{"specversion":"1.0","id":"1","source":"/s","type":"t","time":"yesterday"}`, attr: "time", msg: "RFC 3339"},
		{name: "both data", in: `{"specversion":"1.0","id":"1","source":"/s","type":"t","data":1,"data_base64":"AA=="}`, attr: "data_base64", msg: "mutually exclusive"},
		{name: "bad base64", in: `{"specversion":"1.0","id":"1","source":"/s","type":"t","data_base64":"!!"}`, attr: "data_base64", msg: "base64"},
		{name: "bad extension name", in: `{"specversion":"1.0","id":"1","source":"/s","type":"t","emTTL":"1"}`, attr: "emTTL", msg: "lowercase"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ce, err := DecodeCloudEventJSON([]byte(c.in))
			if c.msg != "" {
				var e *CloudEventError
				if !errors.As(err, &e) || e.Attr != c.attr || !strings.Contains(e.Reason, c.msg) {
					t.Fatalf("err %v, want attr %q and %q", err, c.attr, c.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ce.ID != c.want.ID || ce.Source != c.want.Source || ce.Type != c.want.Type ||
				ce.DataContentType != c.want.DataContentType || ce.Subject != c.want.Subject ||
				ce.Time != c.want.Time || string(ce.Data) != string(c.want.Data) || ce.DataBase64 != c.want.DataBase64 ||
				len(ce.Extensions) != len(c.want.Extensions) {
				t.Fatalf("got %+v\nwant %+v", ce, c.want)
			}
			for i := range ce.Extensions {
				if ce.Extensions[i] != c.want.Extensions[i] {
					t.Errorf("extension %d = %v, want %v", i, ce.Extensions[i], c.want.Extensions[i])
				}
			}
		})
	}
}

func TestFromCloudEvent(t *testing.T) {
	in := `{"specversion":"1.0","id":"order-123","source":"/checkout","type":"com.example.order.created",
		"datacontenttype":"application/json","subject":"orders","time":"2024-05-01T12:00:00Z",
		"emttl":"60000","emcorrelationid":"corr-1","data":{"amount":99}}`
	ce, err := DecodeCloudEventJSON([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := FromCloudEvent(nil, &ce)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []Attr{{"specversion", "1.0"}, {"id", "order-123"}, {"source", "/checkout"},
		{"type", "com.example.order.created"}, {"datacontenttype", "application/json"}, {"subject", "orders"},
		{"time", "2024-05-01T12:00Z"}, {"emttl", "60000"}, {"emcorrelationid", "corr-1"}}
	got := f.CanonicalAttrs()
	if f.MsgType != TypeEvent || len(got) != len(want) || string(f.Data) != `{"amount":99}` {
		t.Fatalf("frame %d %q data %q", f.MsgType, got, f.Data)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("attr %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestJavaTime(t *testing.T) {
	cases := []struct{ in, want string }{
		{"2024-05-01T12:00:00Z", "2024-05-01T12:00Z"},
		{"2024-05-01T12:00:30Z", "2024-05-01T12:00:30Z"},
		{"2024-05-01t12:00:00.5+02:00", "2024-05-01T12:00:00.500+02:00"},
		{"2024-05-01T12:00:00.000001Z", "2024-05-01T12:00:00.000001Z"},
		{"2024-05-01T12:00:00.123456789-05:30", "2024-05-01T12:00:00.123456789-05:30"},
		{"2024-05-01T12:00-00:00", "2024-05-01T12:00Z"},
		{"2024-02-29T00:00:00Z", "2024-02-29T00:00Z"},
		{"2023-02-29T00:00:00Z", ""},
		{"2024-05-01 12:00:00Z", ""},
		{"2024-05-01T12:00:00", ""},
		{"2024-05-01T24:00:00Z", ""},
		{"2024-05-01T12:00:00.Z", ""},
	}
	for _, c := range cases {
		got, err := javaTime(c.in)
		if (err != nil) != (c.want == "") || got != c.want {
			t.Errorf("javaTime(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestJavaNumber(t *testing.T) {
	for in, want := range map[string]string{
		"5": "5", "-12": "-12", "-0": "0", "1.5": "1.5", "1e3": "1000.0", "1E7": "1.0E7",
		"1.5e-5": "1.5E-5", "0.001": "0.001", "-2.5e10": "-2.5E10", "0.0": "0.0", "1e400": "Infinity",
	} {
		if got := javaNumber(in); got != want {
			t.Errorf("javaNumber(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestLegacyStreamEvents(t *testing.T) {
	chunk := `{"specversion":"1.0","id":"sess-1-3","source":"em://stream/sess-1","type":"stream.chunk",
		"datacontenttype":"text/plain","emsessionid":"sess-1","emseq":3,"emdone":"true","emerror":"LLM 500",
		"emeventtype":"text","data":""}`
	ce, err := DecodeCloudEventJSON([]byte(chunk))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := FromLegacyStreamEvent(nil, &ce)
	if err != nil {
		t.Fatal(err)
	}
	f, _, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.Chunk()
	if err != nil || c.SessionID != "sess-1" || c.Seq != 3 || !c.Done || c.Err != "LLM 500" ||
		c.EventType != "text" || f.Flags != FlagDone|FlagHasError || len(f.Data) != 0 {
		t.Errorf("chunk %+v flags %#x, %v", c, f.Flags, err)
	}

	req := `{"specversion":"1.0","id":"r1","source":"em://stream/s9","type":"stream.request",
		"datacontenttype":"text/plain","emsessionid":"s9","emreplyto":"p#client.c","emmodel":"m","data":"hi"}`
	ce, _ = DecodeCloudEventJSON([]byte(req))
	raw, err = FromLegacyStreamEvent(nil, &ce)
	if err != nil {
		t.Fatal(err)
	}
	f, _, _ = Decode(raw)
	r, err := f.StreamRequest()
	if err != nil || r.SessionID != "s9" || r.ReplyTo != "p#client.c" || r.Model != "m" || string(r.Prompt) != "hi" {
		t.Errorf("request %+v, %v", r, err)
	}

	for name, body := range map[string]string{
		"no emseq":   `{"specversion":"1.0","id":"x","source":"/s","type":"stream.chunk"}`,
		"bad emseq":  `{"specversion":"1.0","id":"x","source":"/s","type":"stream.chunk","emseq":"a"}`,
		"bad emdone": `{"specversion":"1.0","id":"x","source":"/s","type":"stream.chunk","emseq":1,"emdone":"yes"}`,
	} {
		ce, err := DecodeCloudEventJSON([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		var e *CloudEventError
		if _, err := FromLegacyStreamEvent(nil, &ce); !errors.As(err, &e) {
			t.Errorf("%s: err %v", name, err)
		}
	}
	ce = CloudEvent{Type: "other"}
	if _, err := FromLegacyStreamEvent(nil, &ce); !errors.Is(err, ErrNotLegacyStream) {
		t.Errorf("other type: %v", err)
	}
}

func TestDecodeMQBody(t *testing.T) {
	frameBody, _ := hex.DecodeString("ef0103000000000000010000000100026964000000017864deadbeef")
	legacy := `{"specversion":"1.0","id":"1","source":"/s","type":"t","data":"x"}`
	stream := `{"specversion":"1.0","id":"s-0","source":"em://stream/s","type":"stream.chunk","emsessionid":"s","emseq":0,"datacontenttype":"text/plain","data":"tok"}`
	cases := []struct {
		name   string
		in     []byte
		format BodyFormat
		check  func(f *Frame) bool
	}{
		{"frame with trailing bytes", frameBody, BodyFrame, func(f *Frame) bool { return string(f.Data) == "d" }},
		{"legacy CE JSON", []byte(legacy), BodyCloudEventJSON, func(f *Frame) bool {
			id, _ := f.Attr("id")
			return f.MsgType == TypeEvent && string(id) == "1" && string(f.Data) == `"x"`
		}},
		{"legacy stream chunk", []byte(stream), BodyLegacyStreamJSON, func(f *Frame) bool {
			sid, _ := f.Attr("sid")
			return f.MsgType == TypeStreamChunk && string(sid) == "s" && f.Seq == 0 && string(f.Data) == "tok"
		}},
	}
	scratch := make([]byte, 0, 64)
	for _, c := range cases {
		f, format, buf, err := DecodeMQBody(c.in, scratch)
		if err != nil || format != c.format || !c.check(&f) {
			t.Errorf("%s: format %v err %v frame %+v", c.name, format, err, f)
		}
		scratch = buf
	}
	_, _, _, err := DecodeMQBody([]byte(`{"id":1,"source":"/s"}`), nil)
	var de *DecodeError
	var ce *CloudEventError
	if !errors.As(err, &de) || !errors.As(err, &ce) || !errors.Is(err, ErrBadMagic) || strings.Contains(err.Error(), "\n") {
		t.Errorf("neither: %v", err)
	}
}
