package e2a

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestDERKeyFinding: a private key's base64 with no PEM armor (PKCS#8,
// PKCS#1, SEC1) is an e2a.secret finding of kind private_key in a
// response's body.delta and in a request's params, as it is, URL-encoded
// (as a form's value: key_value, as any value under a key) and with
// JSON's "\/"; Scan's pre-check lets each through. A public
// key's base64 in the same places is none.
func TestDERKeyFinding(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	b64 := base64.StdEncoding.EncodeToString
	p8, _ := x509.MarshalPKCS8PrivateKey(rk)
	sec1, _ := x509.MarshalECPrivateKey(ek)
	edp8, _ := x509.MarshalPKCS8PrivateKey(ed)
	spki, _ := x509.MarshalPKIXPublicKey(&rk.PublicKey)
	record := func(delta bool, text string) string {
		q, _ := json.Marshal(text)
		if delta {
			return `{"protocol_version":"1.0","response_id":"k-r0","request_id":"k","sequence":0,"body":{"delta_kind":"text","delta":` + string(q) + `}}`
		}
		return `{"protocol_version":"1.0","request_id":"k","method":"chat.send","params":{"query":` + string(q) + `}}`
	}
	for _, key := range []string{b64(p8), b64(x509.MarshalPKCS1PrivateKey(rk)), b64(sec1), b64(edp8)} {
		for _, text := range []string{
			"The service account gave us this: " + key + "\nUse it once.",
			"curl -d 'blob=" + url.QueryEscape(key) + "' https://kms.example/import",
		} {
			for _, delta := range []bool{true, false} {
				rec := record(delta, text)
				if strings.Contains(key, "/") && !delta {
					rec = strings.ReplaceAll(rec, "/", `\/`) // JSON's escaped slash, as PHP writes it
				}
				want := "params.query"
				if delta {
					want = "body.delta"
				}
				path, kind, ok := ScanSecrets([]byte(rec))
				if !ok || path != want || kind != "private_key" && !(kind == "key_value" && strings.HasPrefix(text, "curl")) {
					t.Errorf("ScanSecrets(%.80s…) = %q %q %v, want %q private_key", rec, path, kind, ok, want)
				}
				var r Record
				if err := Scan([]byte(rec), &r); err != nil {
					t.Fatalf("Scan: %v", err)
				}
				if !r.MayHoldSecret() {
					t.Errorf("Scan(%.80s…): MayHoldSecret false", rec)
				}
			}
		}
		if _, _, kind, ok := FindCredential([]byte(key)); !ok || kind != "private_key" {
			t.Errorf("FindCredential(%.40s…) = %q %v", key, kind, ok)
		}
	}
	for _, delta := range []bool{true, false} {
		rec := record(delta, "the public key is "+b64(spki))
		if path, kind, ok := ScanSecrets([]byte(rec)); ok {
			t.Errorf("public key: finding at %q (%s)", path, kind)
		}
	}
}
