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

// TestNamedKeyContainers: an array or an object under an unknown tool's
// key ({"acmeKey": ["<hex>"]}, {"acmeKey": {"live": "<hex>"}}) holds the
// key's values: each string is judged as the key's own value would be
// (masked where it reads as a key, as high_entropy; a word kept), at any
// depth. They were walked as plain text, the hex printed. A data
// structure's key (cacheKey, hotkey) with its hashes stays plain, and a
// vendor glued to "key" (stripekey, OPENAIKEY) is a credential key.
func TestNamedKeyContainers(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	const h40 = "5f1d3c9a7e2b4f6a8c0d1e3f5a7b9c2d4e6f8a0b"
	const h64 = "9b74c9897bac770ffc029102a200c5de0b2b0e8f3c1d5e7a9b2c4d6e8f0a1b3c"
	m40, m64 := `"******(fp:`+fp(r, h40)+`)"`, `"******(fp:`+fp(r, h64)+`)"`
	cases := []struct{ in, want string }{
		{`{"params":{"acmeKey":["` + h40 + `","ctrl+k"]}}`, `{"params":{"acmeKey":[` + m40 + `,"ctrl+k"]}}`},
		{`{"params":{"acme_key":{"live":"` + h40 + `","test":["` + h64 + `"],"n":3,"mode":"live"}}}`,
			`{"params":{"acme_key":{"live":` + m40 + `,"test":[` + m64 + `],"n":3,"mode":"live"}}}`},
		{`{"params":{"acme_keys_key":[["` + h40 + `"]]}}`, `{"params":{"acme_keys_key":[[` + m40 + `]]}}`},
		{`{"stripekey":"` + h64 + `","OPENAIKEY":"sk-x","serpapikey":["` + h40 + `"]}`,
			`{"stripekey":` + m64 + `,"OPENAIKEY":"******(fp:` + fp(r, "sk-x") + `)","serpapikey":[` + m40 + `]}`},
		// Near-misses: data structures' keys and words ending in "key".
		{`{"cacheKey":["` + h64 + `"],"partition_key":{"v":"` + h40 + `"},"hotkey":["` + h40 + `"]}`,
			`{"cacheKey":["` + h64 + `"],"partition_key":{"v":"` + h40 + `"},"hotkey":["` + h40 + `"]}`},
		{`{"monkey":"` + h40 + `","turnkey":"` + h40 + `","whiskey":"` + h40 + `","passkey":"` + h40 + `"}`,
			`{"monkey":"` + h40 + `","turnkey":"` + h40 + `","whiskey":"` + h40 + `","passkey":"` + h40 + `"}`},
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

// TestPWDPathMember: {"PWD": "/srv/app"} (an environment's working
// directory, also as a Kubernetes env entry) is no credential: the path
// is kept (scanned as text). Any other value under "PWD", and a path
// under another password key, stay masked.
func TestPWDPathMember(t *testing.T) {
	r := NewRedactor(ContentMask, 0, testKey)
	cases := []struct{ in, want string }{
		{`{"params":{"env":{"PWD":"/srv/app","HOME":"/root","pwd":"~/src"}}}`, `{"params":{"env":{"PWD":"/srv/app","HOME":"/root","pwd":"~/src"}}}`},
		{`{"params":{"env":[{"name":"PWD","value":"/workspace/app"}]}}`, `{"params":{"env":[{"name":"PWD","value":"/workspace/app"}]}}`},
		{`{"params":{"env":{"PWD":"hunter22","DB_PWD":"/x/y2"}}}`,
			`{"params":{"env":{"PWD":"******(fp:` + fp(r, "hunter22") + `)","DB_PWD":"******(fp:` + fp(r, "/x/y2") + `)"}}}`},
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
