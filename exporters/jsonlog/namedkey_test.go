package jsonlog

import "testing"

// TestNamedKeyValues: a "<tool>_key" member of a tool the classifier does
// not know (redact.KeyNamedKey) is masked where its string reads as a key
// (a long hex run, a random token), as high_entropy; a word or a short
// value under it, and a data structure's key (cacheKey, partition_key)
// with a hash, are kept. A known vendor's key (serpapiKey) is a
// credential key's value, whatever its shape.
func TestNamedKeyValues(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	const h40 = "5f1d3c9a7e2b4f6a8c0d1e3f5a7b9c2d4e6f8a0b"
	const h64 = "9b74c9897bac770ffc029102a200c5de0b2b0e8f3c1d5e7a9b2c4d6e8f0a1b3c"
	cases := []struct{ in, want string }{
		{`{"params":{"zyte_key":"` + h40 + `","acme_key":"ctrl+k","fooKey":"abc123"}}`,
			`{"params":{"zyte_key":"******(fp:` + fp(r, h40) + `)","acme_key":"ctrl+k","fooKey":"abc123"}}`},
		{`{"cacheKey":"` + h64 + `","partition_key":"` + h40 + `","public_key":"` + h40 + `"}`,
			`{"cacheKey":"` + h64 + `","partition_key":"` + h40 + `","public_key":"` + h40 + `"}`},
		{`{"serpapiKey":"` + h64 + `","n":1}`, `{"serpapiKey":"******(fp:` + fp(r, h64) + `)","n":1}`},
	}
	for _, c := range cases {
		out, _, err := r.Redact(nil, []byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if string(out) != c.want {
			t.Errorf("in   %s\ngot  %s\nwant %s", c.in, out, c.want)
		}
	}
}
