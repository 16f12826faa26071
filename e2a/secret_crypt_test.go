package e2a

import "testing"

// TestFindCredentialCryptHash: the crypt(3) hash "usermod -p" is given
// ("$6$<salt>$<hash>") is a credential of rule e2a.secret: its leading
// '$' read as a shell variable's (placeholder), and the hash, masked,
// gave no finding. A variable is still none.
func TestFindCredentialCryptHash(t *testing.T) {
	for _, s := range []string{
		"usermod -p '$6$rounds=5000$Xq3v9LmT$Zq1kLmNoPqRsTuVwXyZ0123456789abcdefghijABCDEFGHIJklmnopqrstuvwxYZ./' bob",
		"useradd -m -p '$1$xyz$AbCdEfGhIjKlMnOpQrStU.' bob",
		"password: $y$j9T$Xq3v9LmTabcd$Zq1kLmNoPqRsTuVwXyZ0123456789abcdefg",
	} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("no credential: %s", s)
		}
	}
	for _, s := range []string{
		"usermod -p \"$HASH\" bob",
		"password=$DB_PASSWORD",
		"password=${DB_PASSWORD}",
		"password=$1",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); ok {
			t.Errorf("a credential (%s): %s", kind, s)
		}
	}
}
