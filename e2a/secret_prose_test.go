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
		"api_key = get_key()\nclient = OpenAI(api_key=api_key)",
		"Use the Authorization: Bearer <token> header",
		"Run: export OPENAI_API_KEY=your-key-here",
		"password: password",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); ok {
			t.Errorf("FindCredential(%q) = %s, want none", s, kind)
		}
	}
	for _, s := range []string{
		"password: hunter2", "password=CRPSpass-hunter2-9876", "token=12345678", "secret: s3cr3t!", "pwd: x",
		"api_key: <YOUR_API_KEY> or, here, api_key: 9f8e7d6c5b4a",
		"client = OpenAI(api_key=q8Jz2LmX0pRt)", "password: hunter2password",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); !ok || kind != "key_value" {
			t.Errorf("FindCredential(%q) = %q %v, want key_value", s, kind, ok)
		}
	}
	// A real bearer token beside the same words is one.
	if _, _, kind, ok := FindCredential([]byte("Authorization: Bearer q8Jz2LmX0pRtVw5YcB7nK3dF")); !ok || kind != "bearer" && kind != "authorization" {
		t.Errorf("a bearer token: %q %v", kind, ok)
	}
}

// TestScanSecretsPlainWords: a credential-named key other than the four
// RULES.md names whose value says what kind of setting it is, is no
// finding; the four keep any non-empty value.
func TestScanSecretsPlainWords(t *testing.T) {
	for _, rec := range []string{`{"auth":"none"}`, `{"auth":"Bearer"}`, `{"credentials":"include"}`, `{"client_secret":"required"}`} {
		if path, kind, ok := ScanSecrets([]byte(rec)); ok {
			t.Errorf("ScanSecrets(%s) = %s %s, want none", rec, path, kind)
		}
	}
	for _, rec := range []string{`{"password":"none"}`, `{"api_key":"token"}`, `{"auth":"s3cr3t-v4lue"}`, `{"client_secret":"q8Jz2LmX0pRt"}`} {
		if _, _, ok := ScanSecrets([]byte(rec)); !ok {
			t.Errorf("ScanSecrets(%s): no finding", rec)
		}
	}
}

// TestFindCredentialNotAValue: code that declares or tests a credential
// (a type, a language's no-value literal, a comparison) and what other
// redactors leave where a credential was are no credential in text; the
// values beside them are. Agents stream such code and logs all day, and
// each was an e2a.secret finding (a producer's JSON logged as a string,
// as Docker's json-file driver writes it, made every `"auth": null` one).
func TestFindCredentialNotAValue(t *testing.T) {
	for _, s := range []string{
		"def login(user: str, password: str) -> None:",
		"password: Optional[str] = None",
		"interface Creds { password: string; token?: string }",
		"pub struct Db { password: String, }",
		"fn connect(password: &str)",
		"api_key: SecretStr",
		"password: typing.Any",
		"secret: List[bytes]",
		"password: Password",
		"if password == nil {",
		"password = None",
		"password = null;",
		"token: undefined",
		`{"auth": null, "agent_ref": null}`,
		"password: true",
		"password: ***",
		"password: ****1234",
		"api_key: sk-...",
		"api_key: sk-…abcd",
		"Authorization: Bearer ***",
		"password: REDACTED",
		"password: [FILTERED]",
		"secret: ••••••",
		// Where code keeps or fetches it, not the credential.
		"password=settings.DB_PASSWORD", "password=self.password", "api_key=config.api_key", "password=args.password",
		`"password": form.password.data`, "apiKey: process.env.OPENAI_API_KEY,", "password = var.db_password",
		"password = random_password.db.result", "Password: cfg.Password,", "password: req.body.password,",
		"const apiKey = import.meta.env.VITE_API_KEY;", "let token = await getToken();", ":password => params[:password]",
		"password = :password", "password: !vault |", "Password: !Ref DbPassword", "password: ENC[AES256_GCM,data:abc,iv:def]",
		"'password': password,", `headers = {"Authorization": f"Bearer {token}"}`, `headers = {"Authorization": "Bearer " + token}`,
		"Authorization: Bearer *** and more",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); ok {
			t.Errorf("FindCredential(%q) = %s, want none", s, kind)
		}
	}
	for _, s := range []string{
		"password: secret", "password: hunter2", "password: strongpass", "password: nullable-pass-7",
		"api_key: sk-...abcdefgh", "password: Stringent99", "password: !@$%^&*()",
		"Authorization: Bearer q8Jz2LmX0pRtVw5Y", "password: ***hunter2",
		"password: correct.horse.battery", "password: Summer.2024", "password => 'secret'", `password = "hunter2"`,
		"password: !Hunter2x", "Authorization: Basic YWxpY2U6czNjcjN0", "password: ENCrypted-Pw9",
	} {
		if _, _, kind, ok := FindCredential([]byte(s)); !ok {
			t.Errorf("FindCredential(%q) = %q %v, want a credential", s, kind, ok)
		}
	}
}

// TestScanSecretsRedactedMarks: a value of one of the four keys that
// another redactor already masked is no credential, as the sidecar's own
// "******" is not; a value that shows more than a few characters is.
func TestScanSecretsRedactedMarks(t *testing.T) {
	for _, rec := range []string{`{"password":"***"}`, `{"password":"REDACTED"}`, `{"api_key":"[REDACTED]"}`,
		`{"bearer_token":"****abcd"}`, `{"authorization":"<redacted>"}`} {
		if path, kind, ok := ScanSecrets([]byte(rec)); ok {
			t.Errorf("ScanSecrets(%s) = %s %s, want none", rec, path, kind)
		}
	}
	for _, rec := range []string{`{"password":"x"}`, `{"password":"***hunter2"}`, `{"api_key":"sk-...q8Jz2LmX0p"}`} {
		if _, _, ok := ScanSecrets([]byte(rec)); !ok {
			t.Errorf("ScanSecrets(%s): no finding", rec)
		}
	}
}
