package e2a

import (
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		in   string
		want Class
	}{
		{`{"type":"event","event":"connection.ack","payload":{"status":"ready"}}`, ClassEvent},
		{`{"type":"event","protocol_version":"1.0","response_kind":"e2a.chunk"}`, ClassEvent},
		{`{"jsonrpc":"2.0","id":1,"method":"session/prompt"}`, ClassJSONRPC},
		{`{"specversion":"1.0","id":"e","type":"t","source":"/"}`, ClassCloudEvent},
		{`{"protocol_version":"1.0","request_id":"q","response_kind":"e2a.chunk"}`, ClassResponse},
		{`{"request_id":"q","sequence":0,"is_final":true}`, ClassResponse},
		{`{"request_id":"q","sequence":0,"method":"chat.send"}`, ClassRequest},
		{`{"request_id":"q","channel_id":"web","ok":true,"payload":{}}`, ClassLegacyResponse},
		{`{"request_id":"q","channel_id":"web","is_complete":false,"payload":{}}`, ClassLegacyResponse},
		{`{"request_id":"q","channel_id":"web","req_method":"chat.send"}`, ClassRequest},
		{`{"hello":"world"}`, ClassUnknown},
	}
	var r Record
	for _, c := range cases {
		if err := Scan([]byte(c.in), &r); err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := Classify(&r); got != c.want {
			t.Errorf("%s: %s, want %s", c.in, got, c.want)
		}
	}
}

// FuzzClassify: the class (and the reference discriminator) of a record is
// the same whichever scanner read it, and classifying never panics.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		`{"type":"event","event":"connection.ack"}`, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"specversion":"1.0","id":"e"}`, `{"protocol_version":"1.0","response_kind":" "}`,
		`{"request_id":"q","channel_id":"web","ok":true}`, `{"method":"chat.send","params":{}}`,
		`{"ty\u0070e":"event"}`, `{"type":"event","type":"x"}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, std Record
		errFast, errStd := Scan(data, &fast), ScanStd(data, &std)
		if (errFast == nil) != (errStd == nil) {
			t.Fatalf("Scan error %v, ScanStd error %v", errFast, errStd)
		}
		if errFast != nil {
			return
		}
		if a, b := Classify(&fast), Classify(&std); a != b {
			t.Fatalf("class %s from Scan, %s from ScanStd", a, b)
		}
		if a, b := IsResponseWireDict(&fast), IsResponseWireDict(&std); a != b {
			t.Fatalf("IsResponseWireDict %v from Scan, %v from ScanStd", a, b)
		}
	})
}
