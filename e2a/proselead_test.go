package e2a

import (
	"testing"

	"github.com/e2atap/e2atap/redact"
)

// TestProseLeadNoFinding: a label followed by a sentence about the
// credential, or by a quoted placeholder, is masked as before but is no
// e2a.secret finding (each was one); a credential after the same labels
// still is.
func TestProseLeadNoFinding(t *testing.T) {
	for _, s := range []string{
		"Password: see below",
		"Password: see the vault entry",
		"Password: ask the admin",
		"API key: check the dashboard",
		"password: same as above",
		"Password: reset by the user",
		"Password: `${DB_PASSWORD}`",
		"token: `<your token>`",
	} {
		if _, ok := redact.Find([]byte(s), 0); !ok {
			t.Errorf("%q: not masked (the mask stays)", s)
		}
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none: the value is prose or a placeholder", s, k)
		}
	}
	// A variable's reference in quotes is no mask either (h-secrets18).
	if m, ok := redact.Find([]byte("password: '${DB_PASSWORD}'"), 0); ok {
		t.Errorf("password: '${DB_PASSWORD}': masked %v, want plain", m)
	}
	for _, s := range []string{
		"Password: hunter2",
		"Password: Tr0ub4dor&3",
		"Password: seeyou2024",
		"Password: Check123!",
		"password: `hunter2`",
		"API key: sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD",
	} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("%q: no e2a.secret finding, want one", s)
		}
	}
}

// TestEmphasisKeyFinding: a credential after a key in a Markdown emphasis
// or code span ("**Password**: <pw>") is an e2a.secret finding, as after
// "Password: "; a placeholder or prose after it is none.
func TestEmphasisKeyFinding(t *testing.T) {
	for _, s := range []string{
		"Your account:\n- **Username**: admin\n- **Password**: Xk9#mQ2vL8",
		"*Password*: Tr0ub4dor&3",
		"`api_key`: a8f3k2m9x7q1w5e4r6t8y0u2",
	} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("%q: no e2a.secret finding, want one", s)
		}
	}
	for _, s := range []string{
		"**Password**: see below",
		"**Password**: `${DB_PASSWORD}`",
		"**Password**: <your password>",
	} {
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none", s, k)
		}
	}
}
