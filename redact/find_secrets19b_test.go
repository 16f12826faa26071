package redact

import (
	"strings"
	"testing"
)

// TestStraddleAfterAddress: "Password for bob@example.com: <pw>" cut in
// the address (Straddle returns the address; StraddleNext the password
// after it) or at the address's end (Straddle goes on past a match that
// ends with tail: the password, which head alone does not show).
func TestStraddleAfterAddress(t *testing.T) {
	for _, text := range []string{"Password for bob@example.com: Xq7vLm2pR9tz and more", "password for ops@db.example.org: Xq7vLm2pR9tz"} {
		v := strings.Index(text, "Xq7v")
		at, colon := strings.Index(text, "@"), strings.Index(text, ":")
		for k := at - 1; k <= colon; k++ {
			tail, head := []byte(text[:k]), []byte(text[k:])
			if !MayStartCredential(tail) {
				t.Errorf("MayStartCredential(%q) = false", tail)
			}
			j, m, ok := Straddle(nil, tail, head)
			if ok && !m.Kind.Credential() && m.End > k {
				j, m, ok = StraddleNext(j, tail, head, m)
			}
			if !ok || m.Start != v || m.End != v+12 || !m.Kind.Credential() {
				t.Errorf("%q | %q: %v %v, want the password at %d", tail, head, m, ok, v)
			}
			_ = j
		}
	}
	// An address before no value; a credential match is not gone past.
	tail, head := []byte("Mail bob@exam"), []byte("ple.com: today at 10")
	j, m, ok := Straddle(nil, tail, head)
	if !ok || m.Kind != KindEmail {
		t.Fatalf("Straddle(%q | %q) = %v %v, want the address", tail, head, m, ok)
	}
	if _, n, ok := StraddleNext(j, tail, head, m); ok {
		t.Errorf("StraddleNext(%q | %q) = %v, want none", tail, head, n)
	}
	tail, head = []byte("token=sk-proj-AbCd"), []byte("EfGhIjKlMnOpQrStUv ok")
	j, m, ok = Straddle(nil, tail, head)
	if !ok || !m.Kind.Credential() {
		t.Fatalf("Straddle(%q | %q) = %v %v", tail, head, m, ok)
	}
	if _, n, ok := StraddleNext(j, tail, head, m); ok {
		t.Errorf("StraddleNext after a credential = %v, want none", n)
	}
}
