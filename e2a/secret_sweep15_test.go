package e2a

import "testing"

// TestFindCredentialCallLike: a password that only looks like a call
// ("Summer(2024", "abcDEF(12)") is a credential of rule e2a.secret, as
// redact's codeExpr reads it (redact masked it, and code() took it for a
// call: no finding). A call as code writes one is still none.
func TestFindCredentialCallLike(t *testing.T) {
	for _, s := range []string{
		"password=Summer(2024",
		"password=Summer(2024)",
		"password: abcDEF(12)x",
		`{"password": "Xk9mP(2qLs"}`,
	} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("no credential: %s", s)
		}
	}
	for _, s := range []string{
		"password=getpass()",
		`password=getpass("Password: ")`,
		"password=get_key(1)",
		"password=vault.read(1)",
		"api_key=load(cfg)",
		"secret=os.environ[",
		"token=getenv(",
		"password=decrypt(*blob)",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); ok {
			t.Errorf("a credential (%s): %s", kind, s)
		}
	}
}
