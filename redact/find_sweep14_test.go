package redact

import (
	"strings"
	"testing"
)

// TestSweep14Twilio: an account SID and its auth token (or an API key SID
// and its secret) as a client's constructor takes them: the SID was
// masked, the token printed.
func TestSweep14Twilio(t *testing.T) {
	const sid = "AC3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f"
	const tok = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	const sk = "SK0123456789abcdef0123456789abcdef"
	const sec = "Ab3dEf5hIj7lMn9pQr1tUv3xYz5bCd7f"
	checkSweep7(t, []sweep7Form{
		{"client = Client('" + sid + "', '" + tok + "')", tok, false},
		{`const client = new Twilio("` + sid + `", "` + tok + `");`, tok, false},
		{`const client = require('twilio')("` + sid + `", "` + tok + `");`, tok, false},
		{`{"code": "client = Client(\"` + sid + `\", \"` + tok + `\")"}`, tok, false},
		{"client = Client(\"" + sk + "\", \"" + sec + "\", \"" + sid + "\")", sec, false},
	}, false, nil)
	for _, s := range []string{
		"sid = '" + sid + "', 'orders-prod'",
		sid + ", " + tok + "ab",
	} {
		out := MaskText(s)
		if strings.Contains(out, sid[:12]) {
			t.Errorf("the SID is not masked: %s", out)
		}
		if strings.Contains(s, "orders-prod") && !strings.Contains(out, "orders-prod") {
			t.Errorf("more than the SID is masked: %s", out)
		}
	}
}

// TestSweep14CodeValue: a call or an index of a name after a credential
// key's "=" or ":=" is code, not its value: "creds :=
// credentials.NewStaticCredentials(" was masked as creds' value (a
// false positive; the rule e2a.secret judged it code already). A string
// literal is still masked, and so is a value that only looks like a call.
func TestSweep14CodeValue(t *testing.T) {
	for _, s := range []string{
		`creds := credentials.NewStaticCredentials(id, secret, "")`,
		"creds = get_credentials(profile)",
		"password = getpass.getpass()",
		`password = getpass("Password: ")`,
		"token := auth.NewToken(ctx)",
		`secret = os.environ["APP_SECRET"]`,
		"credentials = service_account.Credentials.from_service_account_file(path)",
		"const creds = new AWS.Credentials(a, b);",
		"api_key = load_key(cfg)",
		"token = await fetchToken(client)",
	} {
		if out := MaskText(s); out != s {
			t.Errorf("code masked: %s", out)
		}
	}
	const v = "Xk9mP2qLs7Tw"
	for _, s := range []string{
		`creds = "` + v + `"`,
		`creds := "` + v + `"`,
		"password = " + v,
		"password=" + v + "(2024)",
	} {
		if out := MaskText(s); strings.Contains(out, v) {
			t.Errorf("not masked: %s", mask6(out, v))
		}
	}
	const k = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Kq3x"
	s := `creds := credentials.NewStaticCredentials("AKIAIOSFODNN7EXAMPLE", "` + k + `", "")`
	if out := MaskText(s); strings.Contains(out, k[:10]) || !strings.HasPrefix(out, "creds := credentials.NewStaticCredentials(") {
		t.Errorf("the pair: %s", mask6(out, k))
	}
}
