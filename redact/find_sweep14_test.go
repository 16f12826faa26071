package redact

import (
	"strings"
	"testing"
)

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
