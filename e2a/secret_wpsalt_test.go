package e2a

import "testing"

// TestWordPressSaltFinding: a WordPress salt (64 characters drawn from
// letters, digits and 30 kinds of punctuation) in define('NONCE_SALT',
// '…') is an e2a.secret finding: code read "s(y" in it as a call and
// took the salt for an expression. Code that reads a credential stays
// none.
func TestWordPressSaltFinding(t *testing.T) {
	for _, s := range []string{
		"define( 'NONCE_SALT', '~M0sPuv~H6#u5HMs(y}>`4&7v|UQZf09R(-?D7X|0u3yYDa[Eo2%r!qzJ~9%@2r*' );",
		`define("LOGGED_IN_KEY", "OJeI!b<(ftLv&<8ej.D0~v%k(a[a|1Xzxp4YJ=R=5@2N3_{y/E*gW#ig%UG=3nJ>");`,
	} {
		if _, _, _, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("%q: no e2a.secret finding, want one", s)
		}
	}
	for _, s := range []string{
		`password: os.environ.get("DB_PASSWORD_2", cfg["db"].get("pw"))`,
		`api_key: vault.read("secret/data/app-2")["data"]["key"]`,
	} {
		if _, _, k, ok := FindCredential([]byte(s)); ok {
			t.Errorf("%q: e2a.secret finding (%s), want none: code", s, k)
		}
	}
}
