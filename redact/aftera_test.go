package redact

import (
	"strings"
	"testing"
)

// TestAfterA: each shape prefixed looks for at an 'A' is still found
// behind afterA's gate, one example a second byte (an 'A' followed by any
// other byte is no start of one).
func TestAfterA(t *testing.T) {
	for _, c := range []struct {
		s    string
		kind Kind
	}{
		{"key AKIAIOSFODNN7EXAMPLE here", KindAWS},
		{"key ASIAIOSFODNN7EXAMPLE here", KindAWS},
		{"key ABIAIOSFODNN7EXAMPLE here", KindAWS},
		{"key ACCAIOSFODNN7EXAMPLE here", KindAWS},
		{"k AIza" + strings.Repeat("SyD4x", 7) + " end", KindGoogle},
		{"id AKID" + strings.Repeat("Ab3d", 8) + " end", KindVendorToken},
		{"id LTAI" + strings.Repeat("5tQ", 6) + " end", KindVendorToken},
		{"bot123456789:AA" + strings.Repeat("Hk3_x", 7) + " end", KindVendorToken},
		{"x " + strings.Repeat("A", 21) + strings.Repeat("%3Dq9Zk", 12) + " end", KindVendorToken},
		{"t ATATT3" + strings.Repeat("xFfGF0T3Bq", 10) + "=A1B2C3D4 end", KindVendorToken},
		{"t ATCTT3" + strings.Repeat("xFfGF0T3Bq", 10) + "=A1B2C3D4 end", KindVendorToken},
	} {
		m, ok := Find(c.s, 0)
		if !ok || m.Kind != c.kind {
			t.Errorf("Find(%q) = %v %v, want a %v", c.s, m, ok, c.kind)
		}
	}
	if m, ok := Find("redis-cli AUTH s3cretPassw0rd", 0); !ok || !m.Kind.Credential() {
		t.Errorf("Find(AUTH …) = %v %v, want a credential", m, ok)
	}
	if _, ok := prefixed([]byte("xAZ"), 0, 1); ok {
		t.Error("prefixed at an 'A' before a 'Z' matched")
	}
}
