package tlsfiles

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretRotatesAndKeepsTheLastGood: a Secret reads its file at every
// Get (a rotation is seen at once), trims the trailing newline, keeps the
// last value when the file goes away (told once), and never prints its
// value.
func TestSecretRotatesAndKeepsTheLastGood(t *testing.T) {
	p := filepath.Join(t.TempDir(), "password")
	os.WriteFile(p, []byte("CRPSsecretOne\r\n"), 0o600)
	var errs, backs int
	s, err := NewSecret(p, func(error) { errs++ }, func() { backs++ })
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Get(); v != "CRPSsecretOne" {
		t.Fatalf("Get = %q", v)
	}
	os.WriteFile(p, []byte("CRPSsecretTwo"), 0o600)
	if v := s.Get(); v != "CRPSsecretTwo" {
		t.Fatalf("after rotation Get = %q", v)
	}
	os.Remove(p)
	if v := s.Get(); v != "CRPSsecretTwo" || s.Get() != "CRPSsecretTwo" || errs != 1 {
		t.Fatalf("with the file gone: %q, told %d times", v, errs)
	}
	os.WriteFile(p, []byte("CRPSsecretThree\n"), 0o600)
	if v := s.Get(); v != "CRPSsecretThree" || backs != 1 {
		t.Fatalf("back: %q, told %d times", v, backs)
	}
	for _, out := range []string{fmt.Sprint(s), fmt.Sprintf("%v %s", s, s)} {
		if strings.Contains(out, "CRPSsecret") {
			t.Errorf("the value is printed: %s", out)
		}
	}
	if _, err := NewSecret(filepath.Join(t.TempDir(), "none"), nil, nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a missing file: %v", err)
	}
}
