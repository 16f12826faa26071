package e2a

import "testing"

// TestFindCredentialProse: text about credentials (a placeholder, a
// variable, code that reads one, a count) is no e2a.secret finding, while
// the redactor still masks the value; a credential beside the same words
// is one.
func TestFindCredentialProse(t *testing.T) {
	for _, s := range []string{
		"Set the password = os.environ['DB_PASSWORD'] in your config",
		"Use curl -u $USER:$PASS https://api.example.com",
		"token: 128 tokens used, max_tokens=4096",
		"password: (enter your password)",
		"password=${DB_PASSWORD}",
		"api_key: <YOUR_API_KEY>",
		"secret: {{ .Values.secret }}",
		"password=%s",
		"token = getenv(",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); ok {
			t.Errorf("FindCredential(%q) = %s, want none", s, kind)
		}
	}
	for _, s := range []string{
		"password: hunter2", "password=CRPSpass-hunter2-9876", "token=12345678", "secret: s3cr3t!", "pwd: x",
		"api_key: <YOUR_API_KEY> or, here, api_key: 9f8e7d6c5b4a",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); !ok || kind != "key_value" {
			t.Errorf("FindCredential(%q) = %q %v, want key_value", s, kind, ok)
		}
	}
}
