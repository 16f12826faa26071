package redact

import (
	"encoding/base64"
	"math/rand"
	"strings"
	"testing"
)

// TestFindEncodedForms: credentials of known families in the encodings and
// spellings agents' traffic gives them (the sweep4 corpus of cmd/e2atap):
// a '#' in a URL's password, URL-encoded Authorization headers, .pgpass
// lines, Oracle connect strings and PEM keys, JSON text's escaped quotes
// URL-encoded, a URL-encoded text encoded again, JSON text held in JSON
// text with \u00XX escapes. Each is masked (MaskText) and a credential to
// Find in the form MaskText reads; the near-misses stay as they are. A
// failure names the case, never the value.
func TestFindEncodedForms(t *testing.T) {
	for _, c := range []struct{ name, text, secret string }{
		{"userinfo #", "postgres://app:z0Om#zTGvE5Z@db:5432/app", "z0Om#zTGvE5Z"},
		{"userinfo # nats", "nats://bob:Zq9x#S3cr3tPw@127.0.0.1:4222", "Zq9x#S3cr3tPw"},
		{"userinfo # encoded", "postgres%3A%2F%2Fapp%3Az0Om%23zTGvE5Z%40db%3A5432%2Fapp", "z0Om%23zTGvE5Z"},
		{"userinfo e-mail user encoded", "mongodb%3A%2F%2Fapp%40corp%3APm0Lwzn24CXBUf%40mongo%3A27017%2Fadmin", "Pm0Lwzn24CXBUf"},
		{"userinfo JSON text encoded", "state=postgres%3A%5C%2F%5C%2Fapp%3AWLVih5%216x74vtJ%40db.example.com%2Fx", "WLVih5%216x74vtJ"},
		{"userinfo e-mail user encoded twice", "mongodb%253A%252F%252Fapp%2540corp%253APm0Lwzn24CXBUf%2540mongo%253A27017", "Pm0Lwzn24CXBUf"},
		{"basic form", "h=Authorization%3A+Basic+ZGVwbG95OmQyZFpUaSVDVWJZMVJ4&x=1", "ZGVwbG95OmQyZFpUaSVDVWJZMVJ4"},
		{"basic %20", "h=Authorization%3A%20Basic%20YWxpY2U6bFkwS3NWIWFyUDlyWm8%3D", "YWxpY2U6bFkwS3NWIWFyUDlyWm8"},
		{"basic in code encoded", "q=req.Header.Set%28%22Authorization%22%2C+%22Basic+b3BzOmc2eUphWCUySVhTcVh5%22%29", "b3BzOmc2eUphWCUySVhTcVh5"},
		{"bearer curl encoded", "curl+-H+%27Authorization%3A+Bearer+abc%2Fdef%2B123xyzQ%27", "abc%2Fdef%2B123xyzQ"},
		{"pgpass encoded", "line=db.example.com%3A5432%3Aorders%3Aapp%3AD48Q7o%23FpobB6l", "D48Q7o%23FpobB6l"},
		{"pgpass encoded stars", "pgpass=%2A%3A%2A%3A%2A%3Apostgres%3AJVEs6n%2AsAVB5ra", "JVEs6n%2AsAVB5ra"},
		{"pgpass encoded line", "a%0Alocalhost%3a6432%3adb%3au%3apw9Xq7%0Anext", "pw9Xq7"},
		{"oracle encoded", "dsn=scott%2FO8HX4EPFAlF6yI%40%2F%2Fdb.example.com%3A1521%2FORCLPDB1", "O8HX4EPFAlF6yI"},
		{"oracle sqlplus encoded", "cmd=sqlplus%20system%2FEUZAZ1R5PWZD3q%40ORCL", "EUZAZ1R5PWZD3q"},
		{"oracle sqlplus form", "cmd=sqlplus+-s+system%2FEUZAZ1R5PWZD3q%40ORCL", "EUZAZ1R5PWZD3q"},
		{"oracle encoded twice", "u=dsn%3Dscott%252FO8HX4EPFAlF6yI%2540%252F%252Fdb%253A1521%252FX", "O8HX4EPFAlF6yI"},
		{"pem encoded", "k=-----BEGIN%20PRIVATE%20KEY-----%0AMIIEvQIBADANBgkqhkiG9w0BAQEFAASC%0A-----END%20PRIVATE%20KEY-----%0Anext", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
		{"escaped quotes encoded", "q=%7B%5C%22api_key%5C%22%3A%5C%22abc123XYZq%5C%22%7D", "abc123XYZq"},
		{"escaped quotes encoded deep", "x=%7B%5C%5C%5C%22password%5C%5C%5C%22%3A+%5C%5C%5C%222tw2KY%233UUhAqo%5C%5C%5C%22%7D", "2tw2KY%233UUhAqo"},
		{"key escaped in JSON text in JSON text", `{\"note\":\"p\\u0061ssword: 2Her2R%w3hhvOL\"}`, "2Her2R%w3hhvOL"},
		{"token escaped in JSON text", `tok xoxb\u002d19207732636-9571273583037-dWZrmhEu4DgwhUd7470jQd60`, "dWZrmhEu4DgwhUd7470jQd60"},
		// A value with JSON's escaped slash ended at its first "\/"
		// (the rest shown), a PEM key as an encoded value at its first
		// '+', a key cut by a chunk's end at its armor header.
		{"escaped slash in a value", `{"note":"AWS_SECRET_ACCESS_KEY=wJalrXUtn\/K7MDENG\/bPxRfiCYzEXAMPLEKEY"}`, `K7MDENG\/bPxRfiCYzEXAMPLEKEY`},
		{"escaped slash in JSON text", `{\"env\":\"AWS_SECRET_ACCESS_KEY=wJalrXUtn\\\/K7MDENG\\\/bPxRfiCYzEXAMPLEKEY\"}`, `bPxRfiCYzEXAMPLEKEY`},
		{"pem encoded as a value", "k=%7B%22private_key%22%3A%22-----BEGIN+PRIVATE+KEY-----%5CnMIIEvQIBADANBgkqhkiG9w0BAQEFAASC%5Cn-----END+PRIVATE+KEY-----%5Cn%22%7D", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC"},
		{"pem cut after an armor header", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\nvNOHIhm7MTD99lTGtbhXgOqN/u7srvm58RyXBBmSql2Bdp0\nZTD6TwI0", "u7srvm58RyXBBmSql2Bdp0"},
		// Near-misses.
		{"fragment after a port", "https://h.example:443#top@x and http://localhost:3000#/users/@me", ""},
		{"fragment encoded", "http%3A%2F%2Fh%3A8080%23a%40b.c and http%3A%2F%2Fh%23a%3Ab%40b.c", ""},
		{"basic words", "Basic+Premium plan, Basic+plan and Bearer+token, basic+auth+is+weak", ""},
		{"module versions encoded", "path=a%2Fb%40v1.2 and go+get+example.com%2Fmod%40v1.2.3 img%2Fbob%40%2F%2Fx", ""},
		{"pg-like encoded", "cache%3A5432%3Akey and orders%3A5432%3Aa%3Ab%3Ac and a.b%3A5432%3Ac%3Ad%3Ae%3Af", ""},
		{"certificate encoded", "-----BEGIN%20CERTIFICATE-----%0AMIIabc and -----BEGIN%20PUBLIC%20KEY-----%0AMIIabc", ""},
		{"percent encoded twice", "done 100%25 of 8%2540 (a%252Fb)", ""},
	} {
		masked := MaskText(c.text)
		u := c.text
		if HasASCIIEscape([]byte(u)) {
			u = string(UnescapeASCII(nil, []byte(u)))
		}
		var kinds []Kind
		for from := 0; ; {
			m, ok := Find(u, from)
			if !ok {
				break
			}
			kinds = append(kinds, m.Kind)
			from = m.End
		}
		cred := false
		for _, k := range kinds {
			cred = cred || k.Credential()
		}
		if c.secret == "" {
			if masked != c.text {
				t.Errorf("%s: a near-miss is masked (%v)", c.name, kinds)
			}
			continue
		}
		if strings.Contains(masked, c.secret) || strings.Contains(masked, strings.ReplaceAll(c.secret, "%25", "%")) {
			t.Errorf("%s: not masked (kinds %v)", c.name, kinds)
		}
		if !cred {
			t.Errorf("%s: no credential (%v)", c.name, kinds)
		}
		if !MayHoldCredentialText(u) {
			t.Errorf("%s: MayHoldCredentialText = false for a credential", c.name)
		}
		if again := MaskText(masked); again != masked {
			t.Errorf("%s: masking twice changes the text", c.name)
		}
	}
}

// TestBase64ProtobufNoVendorToken: a protobuf message in base64 starts
// "EAA" (field 2, a varint: "\x10\x00") as a Meta token does, and "EAAA"
// as a Square one: a run of one read as a token was an e2a.secret finding
// (vendor_token) in 10 to 15 of 2000 such blobs of each size and encoding
// (std, URL, unpadded). A run with a '+' or '/' next to it, or a '=' after
// it, is a part of a base64 text (inBase64); a Square token is 72 bytes
// at most (64 as documented), a Meta one 100 or more. A blob with none of those bytes at all
// (3 in 2000 of 120 bytes) still reads as a token; the true forms are in
// TestFindDottedTokens.
func TestBase64ProtobufNoVendorToken(t *testing.T) {
	for _, s := range []string{
		"EAAAksrg0VBXsVmYf5TMdBHXF_FFebKqEA-7s0-lk_6u0nJIt2Ljq1gF8HZaK5wdfg83xEkhvT9lZOrf",
		"EAAGX0axoPaGceNplWEJm9EFEumz9DgH8gE6UPslEsQM3ouLZvHMOsAyr2J4c78ycusDwGZJkjlYSGRlHqcQxiDz2BRbMuRhmPM2dWO4stRJdYxgFMZno5L+40Xg9CB8qd6tpA+QXdotFPhHaXwC0e4vl8dyFtVZ",
	} {
		if k, ok := credentialKind("blob " + s + " end"); ok {
			t.Errorf("a base64 protobuf blob (%.8s…) is a credential: %v", s, k)
		}
	}
	r := rand.New(rand.NewSource(20261206))
	n := 0
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding} {
		for k := 0; k < 2000; k++ {
			b := make([]byte, 40+r.Intn(160))
			r.Read(b)
			b[0], b[1] = 0x10, byte(r.Intn(4))
			s := enc.EncodeToString(b)
			if !strings.ContainsAny(s, "+/=") {
				continue // (no base64 byte: it reads as a token)
			}
			n++
			if kd, ok := credentialKind("data " + s + " end"); ok && kd == KindVendorToken {
				t.Errorf("a base64 protobuf blob (%.8s…, %d bytes) is a vendor token", s, len(s))
			}
		}
	}
	if n < 5000 {
		t.Fatalf("only %d blobs", n)
	}
}

// credentialKind is the kind of the first credential Find sees in s.
func credentialKind(s string) (Kind, bool) {
	for from := 0; from < len(s); {
		m, ok := Find(s, from)
		if !ok {
			break
		}
		if m.Kind.Credential() {
			return m.Kind, true
		}
		from = m.End
	}
	return 0, false
}
