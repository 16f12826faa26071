package redact

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/binary"
	"math/big"
	mrand "math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// derSample is a key's (or a near miss's) base64, as printed with no PEM
// armor.
type derSample struct {
	name string
	b64  string
}

var derOnce struct {
	sync.Once
	keys, public []derSample
}

// derSamples makes the private keys DerKey must find (every form derParse
// and sshParse read) and the public structures it must not: generated
// once a process, with nothing fixed in the source.
func derSamples(tb testing.TB) (keys, public []derSample) {
	derOnce.Do(func() {
		enc := base64.StdEncoding.EncodeToString
		must := func(b []byte, err error) []byte {
			if err != nil {
				tb.Fatal(err)
			}
			return b
		}
		rk, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			tb.Fatal(err)
		}
		e256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		e384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
		_, ed, _ := ed25519.GenerateKey(rand.Reader)
		rnd := func(n int) []byte {
			b := make([]byte, n)
			_, _ = rand.Read(b)
			return b
		}
		big4096 := func() *big.Int { // an odd number of 4096 bits
			b := rnd(512)
			b[0] |= 0x80
			b[511] |= 1
			return new(big.Int).SetBytes(b)
		}
		half := func() *big.Int { return new(big.Int).SetBytes(rnd(256)) }
		// An RSA 4096 key's shape (generating one takes seconds).
		rsa4096 := must(asn1.Marshal(struct {
			V                     int
			N                     *big.Int
			E                     int
			D, P, Q, Dp, Dq, Qinv *big.Int
		}{0, big4096(), 65537, big4096(), half(), half(), half(), half(), half()}))
		// An encrypted PKCS#8 key: PBES2 with PBKDF2 and AES-256-CBC.
		oid := func(a ...int) asn1.ObjectIdentifier { return a }
		kdf := must(asn1.Marshal(struct {
			Salt []byte
			Iter int
		}{rnd(16), 2048}))
		params := must(asn1.Marshal(struct {
			KDF, Enc pkix.AlgorithmIdentifier
		}{pkix.AlgorithmIdentifier{Algorithm: oid(1, 2, 840, 113549, 1, 5, 12), Parameters: asn1.RawValue{FullBytes: kdf}},
			pkix.AlgorithmIdentifier{Algorithm: oid(2, 16, 840, 1, 101, 3, 4, 1, 42), Parameters: asn1.RawValue{FullBytes: must(asn1.Marshal(rnd(16)))}}}))
		encrypted := must(asn1.Marshal(struct {
			Alg  pkix.AlgorithmIdentifier
			Data []byte
		}{pkix.AlgorithmIdentifier{Algorithm: oid(1, 2, 840, 113549, 1, 5, 13), Parameters: asn1.RawValue{FullBytes: params}}, rnd(1232)}))
		// A PKCS#12 key store's shape: version 3, the authenticated safe
		// (pkcs7-data holding the encrypted bags), the MacData.
		type contentInfo struct {
			Type    asn1.ObjectIdentifier
			Content asn1.RawValue `asn1:"explicit,tag:0"`
		}
		octets := func(b []byte) asn1.RawValue { return asn1.RawValue{FullBytes: must(asn1.Marshal(b))} }
		type digest struct {
			Alg    pkix.AlgorithmIdentifier
			Digest []byte
		}
		type macData struct {
			Digest digest
			Salt   []byte
			Iter   int
		}
		sha256Alg := pkix.AlgorithmIdentifier{Algorithm: oid(2, 16, 840, 1, 101, 3, 4, 2, 1), Parameters: asn1.NullRawValue}
		pfx := must(asn1.Marshal(struct {
			V        int
			AuthSafe contentInfo
			Mac      macData
		}{3, contentInfo{oid(1, 2, 840, 113549, 1, 7, 1), octets(rnd(1500))}, macData{digest{sha256Alg, rnd(32)}, rnd(8), 2048}}))
		// A certificates-only PKCS#7 (a .p7b): a ContentInfo of signedData.
		p7b := must(asn1.Marshal(contentInfo{oid(1, 2, 840, 113549, 1, 7, 2), octets(rnd(900))}))
		ssh := opensshBody(ed)
		var wrapped strings.Builder
		for s := enc(ssh); len(s) > 0; {
			n := min(70, len(s))
			wrapped.WriteString(s[:n])
			if s = s[n:]; len(s) > 0 {
				wrapped.WriteByte('\n')
			}
		}
		derOnce.keys = []derSample{
			{"rsa_pkcs8", enc(must(x509.MarshalPKCS8PrivateKey(rk)))},
			{"rsa_pkcs1", enc(x509.MarshalPKCS1PrivateKey(rk))},
			{"rsa4096_pkcs1", enc(rsa4096)},
			{"ec256_pkcs8", enc(must(x509.MarshalPKCS8PrivateKey(e256)))},
			{"ec384_pkcs8", enc(must(x509.MarshalPKCS8PrivateKey(e384)))},
			{"ec256_sec1", enc(must(x509.MarshalECPrivateKey(e256)))},
			{"ec384_sec1", enc(must(x509.MarshalECPrivateKey(e384)))},
			{"ed25519_pkcs8", enc(must(x509.MarshalPKCS8PrivateKey(ed)))},
			{"pkcs8_encrypted", enc(encrypted)},
			{"openssh", enc(ssh)},
			{"openssh_wrapped", wrapped.String()},
			{"pkcs12", enc(pfx)},
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "x"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<31, 0)}
		cert := must(x509.CreateCertificate(rand.Reader, tmpl, tmpl, e256.Public(), e256))
		sum := sha256.Sum256([]byte("x"))
		digestInfo := must(asn1.Marshal(struct {
			Alg    pkix.AlgorithmIdentifier
			Digest []byte
		}{pkix.AlgorithmIdentifier{Algorithm: oid(2, 16, 840, 1, 101, 3, 4, 2, 1), Parameters: asn1.NullRawValue}, sum[:]}))
		derOnce.public = []derSample{
			{"rsa_spki", enc(must(x509.MarshalPKIXPublicKey(&rk.PublicKey)))},
			{"rsa_pkcs1_public", enc(x509.MarshalPKCS1PublicKey(&rk.PublicKey))},
			{"ec_spki", enc(must(x509.MarshalPKIXPublicKey(e256.Public())))},
			{"cert", enc(cert)},
			{"digest_info", enc(digestInfo)},
			{"pkcs7_certs", enc(p7b)},
			{"ssh_public", enc(sshString([]byte("ssh-ed25519"), ed.Public().(ed25519.PublicKey)))},
		}
	})
	return derOnce.keys, derOnce.public
}

// sshString is the SSH wire strings of parts, each after its length.
func sshString(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = binary.BigEndian.AppendUint32(b, uint32(len(p)))
		b = append(b, p...)
	}
	return b
}

// opensshBody is an unencrypted OpenSSH private key file's body for an
// Ed25519 key (PROTOCOL.key).
func opensshBody(k ed25519.PrivateKey) []byte {
	pub := sshString([]byte("ssh-ed25519"), k.Public().(ed25519.PublicKey))
	priv := []byte{1, 2, 3, 4, 1, 2, 3, 4}
	priv = append(priv, sshString([]byte("ssh-ed25519"), k.Public().(ed25519.PublicKey), k, []byte("u@h"))...)
	for p := byte(1); len(priv)%8 != 0; p++ {
		priv = append(priv, p)
	}
	b := append([]byte("openssh-key-v1\x00"), sshString([]byte("none"), []byte("none"), nil)...)
	b = binary.BigEndian.AppendUint32(b, 1)
	return append(b, sshString(pub, priv)...)
}

// derForm is a text holding a key's base64 written some way: pre, the
// key as written (enc of its base64), post.
type derForm struct {
	name      string
	pre, post string
	enc       func(string) string
}

var derForms = []derForm{
	{"bare", "", "", nil},
	{"json", `{"privateKey": "`, `"}`, nil},
	{"json_field", `{"config": {"keyData": "`, `", "alg": "RS256"}}`, nil},
	{"env", "JWT_PRIVATE_KEY=", "\nPORT=8080\n", nil},
	{"prose", "Here is the key you asked for: ", " (keep it safe).", nil},
	{"json_text_slash", `{\"k\": \"`, `\"}`, func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }},
	{"u_escaped", `\u0022`, `\u0022`, func(s string) string {
		return strings.NewReplacer("+", `\u002b`, "/", `\u002F`, "=", `\u003d`).Replace(s)
	}},
	{"url_encoded", "https://vault.example/import?blob=", "&fmt=der", url.QueryEscape},
	{"wrapped_64", "key:\n", "\n", func(s string) string { return wrap(s, 64, "\n") }},
	{"wrapped_json", `"`, `"`, func(s string) string { return wrap(s, 76, `\n`) }},
	{"data_url", "data:application/pkcs8;base64,", "", nil},
}

// wrap breaks s into lines of n characters (a line break already in s
// starts a new line).
func wrap(s string, n int, br string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		for len(line) > 0 {
			k := min(n, len(line))
			if b.Len() > 0 {
				b.WriteString(br)
			}
			b.WriteString(line[:k])
			line = line[k:]
		}
	}
	return b.String()
}

// TestDERKeyForms: a private key's base64 with no armor (PKCS#8, encrypted
// PKCS#8, PKCS#1, SEC1, OpenSSH's body) is a credential in every form,
// masked whole (the match is the encoded key, its padding included), the
// pre-checks pass it, and masking twice changes nothing.
func TestDERKeyForms(t *testing.T) {
	keys, _ := derSamples(t)
	m := New([]byte("der-test-key-0123456789"))
	for _, k := range keys {
		for _, f := range derForms {
			if f.name == "data_url" && strings.Contains(k.b64, "\n") {
				continue
			}
			v := k.b64
			if f.enc != nil {
				v = f.enc(v)
			}
			s := f.pre + v + f.post
			c, ok := firstCredential([]byte(s))
			if !ok {
				got, _ := Find(s, 0)
				t.Errorf("%s %s: no credential (first match %v)", k.name, f.name, got)
				continue
			}
			if c.Start != len(f.pre) || c.End != len(f.pre)+len(v) {
				t.Errorf("%s %s: %v [%d:%d], want [%d:%d]", k.name, f.name, c.Kind, c.Start, c.End, len(f.pre), len(f.pre)+len(v))
			}
			if c.Kind != KindPrivateKey && c.Kind != KindKeyValue {
				t.Errorf("%s %s: kind %v", k.name, f.name, c.Kind)
			}
			if !MayHoldCredentialText(s) || !MayHoldCredential(s) {
				t.Errorf("%s %s: pre-checks %v %v", k.name, f.name, MayHoldCredentialText(s), MayHoldCredential(s))
			}
			out := m.Text(s)
			if again := m.Text(out); again != out {
				t.Errorf("%s %s: masking again changes %q to %q", k.name, f.name, out, again)
			}
			mid := k.b64[len(k.b64)/2:]
			if mid = mid[:min(len(mid), 12)]; strings.Contains(out, mid) {
				t.Errorf("%s %s: masked text shows the key: %q", k.name, f.name, out)
			}
		}
	}
}

// TestDERKeyCut: a key's base64 cut by the end of the text (a delta, a
// truncated field) is a key from its start when its first bytes read as
// one; cut before that, or followed by more of the run, or ended early by
// text, it is none.
func TestDERKeyCut(t *testing.T) {
	keys, _ := derSamples(t)
	for _, k := range keys {
		for _, n := range []int{24, 40, 100, 300} {
			if n >= len(k.b64) {
				continue
			}
			s := "key " + k.b64[:n]
			if !strings.ContainsAny(s[4:], "0123456789+") {
				continue // Find looks at a run from a digit or '+' in it (base64.go)
			}
			if c, ok := firstCredential([]byte(s)); !ok || c.Kind != KindPrivateKey || c.Start != 4 || c.End != len(s) {
				t.Errorf("%s cut at %d: %q %v %v", k.name, n, s, c, ok)
			}
		}
		if strings.Contains(k.b64, "\n") {
			continue
		}
		body := strings.TrimRight(k.b64, "=")
		for _, s := range []string{body + "QUJD", k.b64[:len(k.b64)-8] + " and so on", k.b64[:12]} {
			if c, ok := firstCredential([]byte(s)); ok && c.Kind == KindPrivateKey {
				t.Errorf("%s: %q... is a key: %v", k.name, s[:min(len(s), 40)], c)
			}
		}
	}
}

// TestDERNearMiss: public keys (SubjectPublicKeyInfo, PKCS#1's
// RSAPublicKey, an SSH public key blob), a certificate, a DigestInfo
// (SEQUENCE, AlgorithmIdentifier, OCTET STRING: an encrypted key's shape
// with a digest's OID) and random base64 starting with a SEQUENCE's tag
// are no private key, and no credential.
func TestDERNearMiss(t *testing.T) {
	_, public := derSamples(t)
	for _, p := range public {
		for _, s := range []string{p.b64, `{"publicKey": "` + p.b64 + `"}`, "ssh-ed25519 " + p.b64 + " u@h", "data:application/pkix-cert;base64," + p.b64} {
			if c, ok := firstCredential([]byte(s)); ok {
				t.Errorf("%s: %q is a credential: %v", p.name, s[:min(40, len(s))], c)
			}
			for from := 0; from < len(s); {
				c, ok := Find(s, from)
				if !ok {
					break
				}
				if c.Kind == KindPrivateKey {
					t.Errorf("%s: private key at %v", p.name, c)
				}
				from = c.End
			}
		}
	}
	rng := mrand.New(mrand.NewPCG(20, 20))
	b := make([]byte, 1200)
	for n := 0; n < 3000; n++ {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		b[0] = 0x30
		b[1] = byte(0x80 | rng.IntN(4))
		if n%2 == 0 {
			b[4], b[5], b[6] = 2, 1, 0 // and a version
		}
		s := `{"image": "` + base64.StdEncoding.EncodeToString(b[:40+rng.IntN(len(b)-40)]) + `"}`
		if c, ok := firstCredential([]byte(s)); ok {
			t.Fatalf("random base64 %q: %v", s, c)
		}
	}
}

// TestDERStraddle: a delta that ends in the first characters of a key's
// base64 keeps its tail (MayStartCredential), and the key across the
// boundary is found from its start, also where the next delta is cut
// short as the split check cuts it.
func TestDERStraddle(t *testing.T) {
	keys, _ := derSamples(t)
	for _, k := range keys {
		for _, cut := range []int{2, 3, 5, 11, 40, 150} {
			if cut >= len(k.b64)-4 {
				continue
			}
			for _, pre := range []string{"the key: ", `{"privateKey":"`, "JWT_PRIVATE_KEY="} {
				tail := pre + k.b64[:cut]
				head := k.b64[cut:]
				head = head[:min(len(head), 1024)]
				if !MayStartCredential(tail) {
					t.Errorf("%s cut at %d after %q: MayStartCredential false", k.name, cut, pre)
				}
				j, m, ok := Straddle(nil, []byte(tail), []byte(head))
				if !ok || !m.Kind.Credential() || m.Start != len(pre) || m.End != len(j) {
					t.Errorf("%s cut at %d after %q: Straddle %v %v", k.name, cut, pre, m, ok)
				}
			}
		}
	}
}

// derSeeds are fuzz seeds: the short keys in each form, a long one's
// start, and the near misses.
func derSeeds(tb testing.TB) []string {
	keys, public := derSamples(tb)
	var out []string
	for _, k := range keys {
		v := k.b64
		if len(v) > 400 {
			v = v[:200]
		}
		for _, f := range derForms {
			e := v
			if f.enc != nil {
				e = f.enc(e)
			}
			out = append(out, f.pre+e+f.post)
		}
	}
	for _, p := range public {
		out = append(out, p.b64[:min(len(p.b64), 200)])
	}
	return out
}

// TestDERPreCheck holds the pre-checks to Find on keys' texts changed at
// random (bytes glued before and after, cut anywhere, a byte replaced):
// where Find reports a private key, MayHoldCredentialText and
// MayHoldCredential pass the text.
func TestDERPreCheck(t *testing.T) {
	keys, _ := derSamples(t)
	rng := mrand.New(mrand.NewPCG(2, 20))
	glue := []string{"a", "Z", "9", "+", "/", "=", "%", "%2B", "%22", "\\", "\\n", "\\u0022", "\\/", "u", "\"", " ", "@x.co", "-", "_", "\n", "M", "b3Bl"}
	piece := func() string {
		var b strings.Builder
		for n := rng.IntN(4); n > 0; n-- {
			b.WriteString(glue[rng.IntN(len(glue))])
		}
		return b.String()
	}
	found := 0
	for n := 0; n < 20000; n++ {
		k := keys[rng.IntN(len(keys))]
		f := derForms[rng.IntN(len(derForms))]
		v := k.b64
		if f.enc != nil {
			v = f.enc(v)
		}
		s := piece() + f.pre + v + f.post + piece()
		if rng.IntN(2) == 0 {
			s = s[:rng.IntN(len(s)+1)]
		}
		if rng.IntN(3) == 0 && len(s) > 0 {
			i := rng.IntN(len(s))
			s = s[:i] + glue[rng.IntN(len(glue))] + s[i+1:]
		}
		c, ok := firstCredential([]byte(s))
		if !ok || c.Kind != KindPrivateKey {
			continue
		}
		found++
		if !MayHoldCredentialText(s) || !MayHoldCredential(s) {
			t.Fatalf("%q: Find reports %v, pre-checks %v %v", s, c, MayHoldCredentialText(s), MayHoldCredential(s))
		}
	}
	if found < 1000 {
		t.Errorf("%d keys found in 20000 texts", found)
	}
}
