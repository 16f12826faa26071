package redact

import (
	"strings"
	"testing"
)

// Planted values: made-up, shaped like the real ones.
const (
	awsID     = "AKIAIOSFODNN7EXAMPLE"
	awsSTS    = "ASIAY34FZKBOKMUTVV7A"
	awsSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	slackBot  = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	slackUser = "xoxp-123456789012-1234567890123-1234567890123-abcdef0123456789abcdef0123456789"
	slackApp  = "xapp-1-A0123456789-1234567890123-abcdef0123456789"
	stripeSK  = "sk_live_51HxAbCdEfGhIjKlMnOpQrStUv"
	stripeTK  = "sk_test_4eC39HqLyjWDarjtT1zdp7dc"
	stripeRK  = "rk_live_51HxAbCdEfGhIjKlMnOpQrStUv"
	googleKey = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	ghp       = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
	gho       = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
	ghs       = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	ghu       = "ghu_16C7e42F292c6912E7710c838347Ae178B4a"
	ghr       = "ghr_16C7e42F292c6912E7710c838347Ae178B4a"
	ghPAT     = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS"
	glpat     = "glpat-xYz12AbCdEfGhIjKlMnOp"
	openai    = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
	anthropic = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-AA"
	jwtTok    = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	basicCred = "dXNlcjpodW50ZXIy" // user:hunter2
	cnMob     = "13912345678"
	cnIDNum   = "11010519491231002X"
	mail      = "alice.liu@example.com"
)

// Shapes the first corpus did not have (issue 9's "shapes the project has
// never seen"): made-up, shaped like the real ones.
const (
	sendgrid    = "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"
	npmTok      = "npm_abcdefghijklmnopqrstuvwxyz0123456789"
	pypiTok     = "pypi-AgEIcHlwaS5vcmcCJGE4YjQ1ZTI4LWI1ZjgtNDQ5Yy04YjRiLWE0ZmY3OTc0YjcxNQACKlszLCI5ZjQ2In1dAAAGIG9k"
	hfTok       = "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH"
	twilioSK    = "SK0123456789abcdef0123456789abcdef"
	twilioAC    = "AC0123456789abcdef0123456789abcdef"
	discordTok  = "MTE4NDIzNjk0NTk2OTg1NDQwMA.GkXm2a.abcdefghijklmnopqrstuvwxyz012345678"
	telegramTok = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
	databricks  = "dapi0123456789abcdef0123456789abcdef"
	doToken     = "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	shopify     = "shpat_0123456789abcdef0123456789abcdef"
	squareTok   = "sq0atp-AbCdEfGhIjKlMnOpQrStUv"
	mailgun     = "key-0123456789abcdef0123456789abcdef"
	glrunner    = "glrt-AbCdEfGhIjKlMnOpQrSt"
	pgpKey      = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0AAAABCADPmA2cMBQ1Qk0x\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----"
	visa        = "4111 1111 1111 1111"
	cnCard      = "6222020000112233440"
	ibanNum     = "DE89370400440532013000"
)

const pemKey = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB\naFDrBz9vFqU4yU0wL0fQ2Km0ZSy9Zk4eC2S0a8Qv\n-----END RSA PRIVATE KEY-----"

func TestFind(t *testing.T) {
	cases := []struct {
		in, want string // want: the masked spans, joined by "|"
		kind     Kind   // kind of the first
	}{
		{"key " + awsID + " ok", awsID, KindAWS},
		{"id" + awsSTS, awsSTS, KindAWS},
		{"key " + awsID + "1 here", awsID + "1", KindAWS},
		{"1private_key: hunter2verysecret", "hunter2verysecret", KindKeyValue},
		{"key " + awsID + "X7Q2 here", awsID + "X7Q2", KindAWS},
		{"aws_secret_access_key=" + awsSecret, awsSecret, KindKeyValue},
		{"AWS_SECRET_ACCESS_KEY: " + awsSecret + "\n", awsSecret, KindKeyValue},
		{slackBot, slackBot, KindSlack},
		{"t=" + slackUser, slackUser, KindSlack},
		{"app " + slackApp, slackApp, KindSlack},
		{stripeSK + " " + stripeTK + " " + stripeRK, stripeSK + "|" + stripeTK + "|" + stripeRK, KindStripe},
		{"maps?key=" + googleKey, googleKey, KindGoogle},
		{ghp + gho, ghp + gho, KindGitHub},
		{ghs + " " + ghu + " " + ghr, ghs + "|" + ghu + "|" + ghr, KindGitHub},
		{"pat:" + ghPAT, ghPAT, KindGitHub},
		{"x" + glpat, glpat, KindGitLab},
		{"idsk-" + openai, openai, KindSK},
		{"key_" + anthropic, anthropic, KindSK},
		{"task-12345678 and risk-assessment-framework", "", 0},
		{"jwt:" + jwtTok, jwtTok, KindJWT},
		{"Authorization: Basic " + basicCred, basicCred, KindAuthorization},
		{"authorization=Digest username=\"bob\", response=\"6629fae49393a05397450978507c4ef1\"\nnext", "username=\"bob\", response=\"6629fae49393a05397450978507c4ef1\"", KindAuthorization},
		{`"Authorization": "Token abcdef"`, "abcdef", KindAuthorization},
		{"use Basic " + basicCred, basicCred, KindBasic},
		{"Basic authentication is weak", "", 0},
		{"Bearer: x", "x", KindBearer},
		{"Bearer abc123def456", "abc123def456", KindBearer},
		{"the Bearer authentication scheme", "", 0},
		{"Bearer ******(fp:0123456789abcdef)", "", 0},
		{"Cookie: sid=31d4d96e407aad42; lang=en\r\nHost: x", "sid=31d4d96e407aad42; lang=en", KindCookie},
		{"Set-Cookie: id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; Secure", "id=a3fWa; Expires=Thu, 21 Oct 2021 07:28:00 GMT; Secure", KindCookie},
		{`private_key: "` + pemKey + `"`, pemKey, KindKeyValue},
		{"here " + pemKey + " there", pemKey, KindPrivateKey},
		{`{"k":"` + strings.ReplaceAll(pemKey, "\n", `\n`) + `"}`, strings.ReplaceAll(pemKey, "\n", `\n`), KindPrivateKey},
		{"https://api.example.com/v1?api_key=abc123&x=1", "abc123", KindKeyValue},
		{"/cb#access_token=tok-123&state=1", "tok-123", KindKeyValue},
		{"login with password=hunter2, then secret=s3cr3t;", "hunter2|s3cr3t", KindKeyValue},
		{"api_key: AbC123 and pwd = 'x y'", "AbC123|x y", KindKeyValue},
		{`{\"password\":\"p@ss w0rd\"}`, "p@ss w0rd", KindKeyValue},
		{"token=abc max_tokens: 5 tokens=9 token_count=3", "abc", KindKeyValue},
		{"password=******(fp:0123456789abcdef)", "", 0},
		{"user_id=u-42 userId: 7", "u-42|7", KindUserID},
		{"nats://u:PASSWORD@bad host:4222", "u:PASSWORD", KindURLUserinfo},
		// no scheme: a broker as Kafka and Redis clients take it
		{"brokers u:PASSWORD@h1:9092,alice:p%40ss@10.0.0.2:9093 git@gitlab:22 a:b@example, 12:30@h", "u:PASSWORD|alice:p%40ss", KindURLUserinfo},
		{"masked ******(fp:0123456789abcdef)@h1:9092 and nats://******(len:12)@h:4222", "", 0},
		{`"https:\/\/bob:pw@h.example\/x"`, "bob:pw", KindURLUserinfo},
		{":CRPSpw@kafka-1:9092, redis :pw2@h:6379 and {\"b\":\":pw3@h:1\"}", ":CRPSpw|:pw2|:pw3", KindURLUserinfo},
		{"x:y a :b c@d:1 [::1]:8080 :smile: @bob:1 git :@host:22 ok", "", 0},
		{"http://host:8080/path", "", 0},
		// a '#' in the password (unencoded, as generated ones are pasted)
		{"postgres://app:z0Om#zTGvE5Z@db:5432/app and nats://u:p#w@h:4222", "app:z0Om#zTGvE5Z|u:p#w", KindURLUserinfo},
		{"https://h.example:443#top@x and http://localhost:3000#/users/@me and http://h#a:b@c", "", 0},
		{"mail " + mail + ".", mail, KindEmail},
		{"call " + cnMob + " or +86 139 1234 5678 or 139-1234-5678", cnMob + "|+86 139 1234 5678|139-1234-5678", KindPhone},
		{"id " + cnIDNum + " ok", cnIDNum, KindCNID},
		{"id 110105194912310021 bad check", "", 0},
		{"2026-03-29T12:00:01+00:00 seq 12 req_1 1717171717171", "", 0},
		{"AccountKey=Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==;EndpointSuffix=core", "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy==", KindKeyValue},
		{"a+b 1+2 x+", "", 0},
		{"mail bob42@example.com", "bob42@example.com", KindEmail},
		{"npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", KindVendorToken},
		{"trace 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 id 123e4567-e89b-12d3-a456-426614174000", "", 0},
		{"getUserById2FactorAuthenticationHandler and sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "", 0},
		// shapes the first corpus did not have
		{"key " + sendgrid + " ok", sendgrid, KindVendorToken},
		{"npm " + npmTok + ", pypi " + pypiTok, npmTok + "|" + pypiTok, KindVendorToken},
		{"hf=" + hfTok, hfTok, KindVendorToken},
		{twilioSK + " " + twilioAC, twilioSK + "|" + twilioAC, KindVendorToken},
		// glued to a suffix (an id made of one: "<value>-842")
		{"id bob@example.org-842 and " + mail + "-7", "bob@example.org|" + mail, KindEmail},
		{"mail alice@example.org.x, bob@mail.example.com.v2 and c@d.example.io.1.x-9", "alice@example.org|bob@mail.example.com|c@d.example.io", KindEmail},
		{"pkg left-pad@1.3.0, npm@10.2.4.x, scope@v2.x, at@host.x, a@b.c", "", 0},
		{"id +8613987654322-876, +44 20 7946 0958-12", "+8613987654322|+44 20 7946 0958-12", KindPhone},
		{"sid " + twilioSK + "-1437 " + twilioAC + "_2", twilioSK + "|" + twilioAC, KindVendorToken},
		{"sid x-" + twilioSK + " run_" + twilioAC + "_2", twilioSK + "|" + twilioAC, KindVendorToken},
		{"bot " + discordTok, discordTok, KindVendorToken},
		{"https://api.telegramTok.org/bot" + telegramTok + "/getMe", telegramTok, KindVendorToken},
		{databricks + " " + doToken + " " + shopify, databricks + "|" + doToken + "|" + shopify, KindVendorToken},
		{squareTok + " " + mailgun + " " + glrunner, squareTok + "|" + mailgun + "|" + glrunner, KindVendorToken},
		{pgpKey, pgpKey, KindPrivateKey},
		{"q=password%3Dhunter2%26x%3D1 and token%3Dabc123def", "hunter2|abc123def", KindKeyValue},
		{`{"msg":"{\\\"password\\\":\\\"hunter2\\\"}"}`, "hunter2", KindKeyValue},
		{"card " + visa + " or 4111-1111-1111-1111 or 378282246310005 exp", visa + "|4111-1111-1111-1111|378282246310005", KindCard},
		{"card " + cnCard + " ok", cnCard, KindCard},
		{"iban " + ibanNum + " or DE89 3704 0044 0532 0130 00 or GB82WEST12345698765432.", ibanNum + "|DE89 3704 0044 0532 0130 00|GB82WEST12345698765432", KindIBAN},
		{"call (415) 555-0132 or 415-555-0132 or 415.555.0132 or +44 20 7946 0958", "(415) 555-0132|415-555-0132|415.555.0132|+44 20 7946 0958", KindPhone},
		// a token glued after an id holding a digit: the token, of its kind
		{"run1_" + ghp + " build7-" + glpat + " x1" + awsID, ghp + "|" + glpat + "|" + awsID, KindGitHub},
		// ordinary traffic: no false positives
		{"ip 192.168.1.10 and 10.0.0.1:8080, model gpt-4o-2024-08-06, v1.2.3, claude-3-5-sonnet-20241022", "", 0},
		{"ts 1717171717171 ns 1717171717171717171 count 4111111111111112 key-value-store-key-rotation", "", 0},
		{"order 100-200-3000 at 2026-03-29 12:00 page 12 of 415, DE89 is a code, 4111 1111", "", 0},
		{"", "", 0},
	}
	for _, c := range cases {
		var got []string
		var first Kind
		for from := 0; ; {
			m, ok := Find(c.in, from)
			if !ok {
				break
			}
			if first == 0 {
				first = m.Kind
			}
			got = append(got, c.in[m.Start:m.End])
			from = m.End
		}
		if g := strings.Join(got, "|"); g != c.want || first != c.kind {
			t.Errorf("Find(%q) = %q %v, want %q %v", c.in, g, first, c.want, c.kind)
		}
		// []byte and string agree.
		m1, ok1 := Find(c.in, 0)
		m2, ok2 := Find([]byte(c.in), 0)
		if m1 != m2 || ok1 != ok2 {
			t.Errorf("Find(%q): string %v, bytes %v", c.in, m1, m2)
		}
	}
}

func TestClassifyKey(t *testing.T) {
	cases := map[string]KeyClass{
		"password": KeyCredential, "db_password": KeyCredential, "mysecretvalue": KeyCredential, "clientSecret": KeyCredential,
		"api_key": KeyCredential, "x-api-key": KeyCredential, "apiKey": KeyCredential, "private_key": KeyCredential,
		"aws_secret_access_key": KeyCredential, "AccountKey": KeyCredential, "SharedAccessKey": KeyCredential,
		"access_token": KeyToken, "idToken": KeyToken, "token": KeyToken, "refresh_token": KeyToken,
		"tokens": KeyPlain, "max_tokens": KeyPlain, "token_count": KeyPlain,
		"Authorization": KeyAuthorization, "Proxy-Authorization": KeyAuthorization, "Cookie": KeyCookie, "Set-Cookie": KeyCookie,
		"api_key_ref": KeyRef, "credential_ref": KeyRef, "email": KeyEmail, "phone": KeyPhone, "user_id": KeyUserID,
		"password_hint": KeyPlain, "authorization_url": KeyPlain, "secret_name": KeyPlain,
		"password-stdin": KeyPlain, "password_fd": KeyPlain, // (docker login --password-stdin <registry>)
		"request_id": KeyPlain, "session_id": KeyPlain, "sequence": KeyPlain, "status": KeyPlain, "key": KeyPlain, "auth": KeyCredential,
		// Letter/digit transitions split words; they make no ordinary key a credential.
		"1private_key": KeyCredential, "x9password": KeyCredential, "oauth2_token": KeyToken, "1token": KeyToken, "api2Key": KeyPlain,
		"agent_ref": KeyRef, "auth2": KeyPlain, "T12": KeyPlain, "req-000007": KeyPlain, "key1": KeyPlain,
		"sha256_key": KeyPlain, "max_tokens2": KeyPlain, "token2_count": KeyPlain, "user1_id": KeyPlain, "password2_hint": KeyPlain,
		// A last "pass", "pw" or "signature" after a word naming what it is
		// for; agents' records are full of the others.
		"DB_PASS": KeyCredential, "MYSQL_PW": KeyCredential, "smtpPass": KeyCredential, "X-Amz-Signature": KeyCredential,
		"x-hub-signature": KeyCredential, "first_pass": KeyPlain, "bypass": KeyPlain, "second_pass": KeyPlain,
		"signature": KeyPlain, "function_signature": KeyPlain, "tool_signature": KeyPlain, "methodSignature": KeyPlain,
		// A last "pat" after a word naming whose personal access token.
		"GITHUB_PAT": KeyCredential, "AZURE_DEVOPS_EXT_PAT": KeyCredential, "ghPat": KeyCredential, "ADO_PAT": KeyCredential,
		"glob_pat": KeyPlain, "search_pat": KeyPlain, "pat": KeyPlain, "path": KeyPlain, "file_path": KeyPlain, "pattern": KeyPlain,
		"patch": KeyPlain, "compat": KeyPlain, "dispatch": KeyPlain,
	}
	for k, want := range cases {
		if got := ClassifyKey(k); got != want {
			t.Errorf("ClassifyKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestMaskText(t *testing.T) {
	m := New([]byte("test-key-0123456789abcdef"))
	in := "id " + openai + " and " + openai + " mail " + mail
	out := m.Text(in)
	if strings.Contains(out, openai) || strings.Contains(out, mail) {
		t.Fatalf("leak: %s", out)
	}
	fp := m.Fingerprint(openai)
	if len(fp) != 16 || strings.Count(out, Mask+"(fp:"+fp+")") != 2 {
		t.Errorf("equal secrets, equal masks: %s (fp %s)", out, fp)
	}
	if fp != Fingerprint([]byte("test-key-0123456789abcdef"), openai) {
		t.Errorf("Masker.Fingerprint and Fingerprint differ")
	}
	if fp == New([]byte("another-key-0123456789")).Fingerprint(openai) {
		t.Errorf("the key does not change the fingerprint")
	}
	if got := m.Text(out); got != out {
		t.Errorf("masking twice changes the text: %s -> %s", out, got)
	}
	esc := `{"k":"\u0073k-proj-AbCdEfGhIjKlMnOp"}`
	if got := m.Text(esc); strings.Contains(got, "AbCdEfGhIjKlMnOp") {
		t.Errorf("escaped form leaked: %s", got)
	}
	if got := m.ID("idsk-" + openai); !strings.HasPrefix(got, Mask+"(fp:") || got != m.ID("idsk-"+openai) || strings.Contains(got, "idsk") {
		t.Errorf("ID = %s", got)
	}
	if got := m.ID("req_1"); got != "req_1" {
		t.Errorf("ID(req_1) = %s", got)
	}
	clean := "2026-03-29T12:00:01Z stream req_1 of tap ws: status in_progress, sequence 12 after 11 (e2a.chunk)"
	if n := testing.AllocsPerRun(100, func() { m.Text(clean) }); n != 0 {
		t.Errorf("clean text: %v allocs", n)
	}
	if m.Text(clean) != clean {
		t.Errorf("clean text changed")
	}
}

func FuzzFind(f *testing.F) {
	for _, s := range []string{"data:image/png;base64," + chanceB64, "data:a/b;c=d;base64,AKIAIOSFODNN7EXAMPLE==", "sk-12345678", "a+b", "user42@x.co", pemKey, "Authorization: Basic " + basicCred, "password=x", "\\u0073k-", "+8613912345678", cnIDNum, "x:\\/\\/u:p@h", "c2stcHJvai1DUlBTYjY0aW5uZXIwMTIzNDU2Nzg5", "TestNATSSlowConsumerGivesNoFalseFinding1724886460",
		// h-secrets3's forms
		"dp.st.dev.NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnArl63", "x:5432:*:u:p", "(localhost:*:*:postgres:pw)", "a/b@//h:1/s", "sqlplus -s u/p@db",
		"the password is correcthorsebattery.", "zip -P pw x.zip", "openssl enc -pass pass:pw", "keytool -storepass pw",
		"FlyV1 fm2_" + strings.Repeat("Ab1/", 17) + "==,fm2_x", "0123456789abcdef0123456789abcdef-us21", "v1.0-0123",
		// h-secrets4's forms
		"nats://u:p#w@h:1", "x%3A%2F%2Fa%40b%3Ap%23w%40h", "Authorization%3A%20Basic%20dXNlcjpwdw%3D%3D", "Basic+dXNlcjpwdw%2B%2F",
		"localhost%3A5432%3Ad%3Au%3Apw", "%2A%3A%2A%3A%2A%3Au%3Apw", "s%2Fpw%40%2F%2Fh", "sqlplus+u%2Fpw%40db", "-----BEGIN%20PRIVATE%20KEY-----%0Ax",
		"k%3D%5C%22pw%5C%22", "x%3A%5C%2F%5C%2Fu%3Ap%40h", "a\\u0073k-12345678", "u%253A%252F%252Fa%253Ap%2540h", "EAAA" + strings.Repeat("x1", 30) + "+/",
		// h-secrets11's forms
		"6379> auth pw1xyz", "auth default pw1xyz\r\n", "bindpw pw1xyz", "wandb login --x a1b2c3d4", "set -gx API_KEY pw1xyz", "setx TOKEN pw1xyz",
		"dotnet user-secrets set K pw1xyz", "mc alias set m http://h:9 AK pw1xyz", `s.login(u, "pw1xyz")`, "new PDO(d, 'u', 'pw1xyz')",
		"define('DB_PASSWORD', 'pw1xyz')", "xfreerdp /p:pwxyzw", "Key Content : pwxyzwv", "echo 'u:pw1xyz' | chpasswd", "chpasswd <<E\nu:pw1xyz",
		"Private-Lines: 1\nAAAAB3NzaC1yc2EAAAADAQAB", "q=6379%3E+auth+pw1xyz", "q=echo+pw1xyz+%7C+sudo+-S+id", "SET+PASSWORD+FOR+u+%3D+%27pw1x%27",
		"PASSWORD 'pwxyzwv'", "requirepass pwxyzwv",
		// h-secrets16's forms
		"STRIPE_KEY=0123456789abcdef0123456789abcdef", "acme_key: 0123456789abcdef01234567", "--zyte-key 0123456789abcdef01234567",
		"x-fc-0123456789abcdef0123456789abcdef", "%3Dfc-0123456789abcdef0123456789abcdef", "re_ab12CD34_" + strings.Repeat("aB3", 8),
		"STRIPE_KEY=pk_live_x1Y2z3"} {
		f.Add(s)
	}
	for _, c := range secrets19Credentials { // h-secrets19's forms
		f.Add(c.in)
	}
	for _, s := range secrets19bForms {
		f.Add(s)
	}
	for _, s := range derSeeds(f) { // h-der20's forms
		f.Add(s)
	}
	for _, s := range secrets20Forms {
		f.Add(s)
	}
	m := New([]byte("fuzz-key-0123456789abcdef"))
	f.Fuzz(func(t *testing.T, s string) {
		for from := 0; from < len(s); {
			x, ok := Find(s, from)
			y, ok2 := Find([]byte(s), from)
			if x != y || ok != ok2 {
				t.Fatalf("string %v, bytes %v", x, y)
			}
			if !ok {
				break
			}
			if x.Start < from || x.End <= x.Start || x.End > len(s) || x.Kind == KindNone {
				t.Fatalf("Find(%q, %d) = %v", s, from, x)
			}
			if x.Kind.Credential() && !MayHoldCredential(s) {
				t.Fatalf("Find(%q, %d) = %v, but MayHoldCredential is false", s, from, x)
			}
			from = x.End
		}
		out := m.Text(s)
		if again := m.Text(out); again != out {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	})
}

func TestStraddle(t *testing.T) {
	const secret = "sk-proj-AbCdEfGhIjKlMnOp"
	for cut := 1; cut < len(secret); cut++ {
		tail := []byte("key is " + secret[:cut])
		head := []byte(secret[cut:] + " ok")
		j, m, ok := Straddle(nil, tail, head)
		if !ok || string(j[m.Start:m.End]) != secret {
			t.Errorf("cut %d: %v %v %q", cut, ok, m, j)
		}
	}
	// What makes the head a secret is in the tail: the key or the scheme.
	for _, c := range [][3]string{
		{"Authorization: Token ", "CRPStok9f8e7d6c5b4a3\nHost: x", "CRPStok9f8e7d6c5b4a3"},
		{"Authorization: Token", " CRPStok9f8e7d6c5b4a3", "CRPStok9f8e7d6c5b4a3"},
		{"and then password=", "hunter2, later", "hunter2"},
		{"header Bearer ", "abc123def456 end", "abc123def456"},
	} {
		j, m, ok := Straddle(nil, []byte(c[0]), []byte(c[1]))
		if !ok || m.Start < len(c[0]) || string(j[m.Start:m.End]) != c[2] {
			t.Errorf("%q|%q: %v %v", c[0], c[1], ok, m)
		}
	}
	for _, c := range [][2]string{{"no secret ", "here"}, {"Bearer abc123def456 ", "sk-proj-AbCdEfGhIjKl"}, {"the key ", "password=hunter2"}, {"sk-proj-AbCdEfGhIjKl", " and then"}, {"end", "sk-proj-AbCdEfGhIjKl"}} {
		if _, m, ok := Straddle(nil, []byte(c[0]), []byte(c[1])); ok {
			t.Errorf("%q|%q: %v", c[0], c[1], m)
		}
	}
}

// TestFingerprintAllDigits: a mask whose fingerprint is all digits (about
// one in 1800; this one a Luhn-valid card number) is found as nothing, so
// that masking twice changes nothing (FuzzFind found it); the same digits
// outside a mask are still a card.
func TestFingerprintAllDigits(t *testing.T) {
	for _, s := range []string{"******(fp:4531319829383912)", "x ******(fp:4531319829383912) y", "******(fp:4531319829383912)abc"} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("Find(%q) = %v %q", s, m, s[m.Start:m.End])
		}
	}
	for _, s := range []string{"card 4531319829383912", "fp:4531319829383912", "(4531319829383912)"} {
		if m, ok := Find(s, 0); !ok || m.Kind != KindCard {
			t.Errorf("Find(%q) = %v %v, want a card", s, m, ok)
		}
	}
	m := New([]byte("fuzz-key-0123456789abcdef"))
	for _, s := range []string{"AaAABAb1CAcBBCxY0aDUyZXXlMTIzN27", "******(fp:4531319829383912)"} {
		out := m.Text(s)
		if again := m.Text(out); again != out {
			t.Errorf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	}
}

// TestMaskGluedAfterRandom: a random token glued before a known one is
// masked with it the first time, each as its own kind, so that masking
// the masked text again changes nothing (FuzzFind e3ba293d9d41c42e: a
// token before "-----BEGIN PRIVATE KEY-----" was left as it was, and
// became a word of its own, and a token, once the PEM block was masked).
// A short id glued before a known token stays outside its mask.
func TestMaskGluedAfterRandom(t *testing.T) {
	const random = "000012EG7N87YZabXIV8yA219BC10cxz"
	m := New([]byte("glued-key"))
	for _, c := range []struct {
		known string
		kind  Kind
	}{
		{"-----BEGIN PRIVATE KEY-----", KindPrivateKey},
		{pemKey, KindPrivateKey},
		{"-" + glpat, KindGitLab},
		{ghp, KindGitHub},
		{"_" + ghp, KindGitHub},
		{"-" + openai, KindSK},
		{"-" + awsID, KindAWS},
		{"-" + jwtTok, KindJWT},
		{slackBot, KindSlack},
		{"-" + npmTok, KindVendorToken},
	} {
		s := "x " + random + c.known + " y"
		var kinds []Kind
		for from := 0; ; {
			x, ok := Find(s, from)
			if !ok {
				break
			}
			kinds = append(kinds, x.Kind)
			from = x.End
		}
		if len(kinds) != 2 || kinds[0] != KindHighEntropy || kinds[1] != c.kind {
			t.Errorf("%q: kinds %v, want [high_entropy %v]", s, kinds, c.kind)
		}
		out := m.Text(s)
		if strings.Contains(out, random[4:]) || strings.Contains(out, "BEGIN") || strings.Count(out, Mask) != 2 {
			t.Errorf("%q -> %q", s, out)
		}
		if again := m.Text(out); again != out {
			t.Errorf("not idempotent: %q -> %q -> %q", s, out, again)
		}
	}
	// A short id (no token) before a known token keeps its text and the
	// known token its kind, as before.
	for _, s := range []string{"build7-" + glpat, "run1_" + ghp, "a1-" + openai} {
		x, ok := Find(s, 0)
		if !ok || !x.Kind.Credential() || x.Kind == KindHighEntropy || x.Start == 0 {
			t.Errorf("Find(%q) = %v %v", s, x, ok)
		}
		if out := m.Text(s); m.Text(out) != out || !strings.HasPrefix(out, s[:x.Start]+Mask) {
			t.Errorf("%q -> %q", s, out)
		}
	}
}

// TestMaskTwiceChangesNothing: shapes whose first mask changed what was
// around it (a neighbour, a run, a password), each masked once then again.
// What the first pass leaves in clear holds none of the planted values.
func TestMaskTwiceChangesNothing(t *testing.T) {
	m := New([]byte("twice-key"))
	for _, c := range []struct{ s, hidden string }{
		{"000012EG7N87YZabXIV8yA219BC10cxz-----BEGIN PRIVATE KEY-----", "EG7N87YZabXIV8yA219BC10cxz"},
		{"00c2stX000X000X00007c2stX000X000X00", "c2stX000X000X00007"},
		{"+000000000000ACCA0000000000000000", "ACCA0000000000000000"},
		{"000171278989AB0CYabZXAcxyIzBDU2Nc2stZ010Y010Y000", "8989AB0CYabZXAcxyIzBDU2N"},
		{":+00 0000000@0:0", "+00 0000000"},
		{":!+0 0000000@0:0", "+0 0000000"},
		{"200.200.0000.200.200.0000", "0000.200.200.0000"},
		{"0@0.AAeyJ0.0.0", "eyJ0.0.0"},
		{"0+00270891708011CeYabZXAcxyIzBDU2Nc2stX000X000X00", "0891708011CeYabZXAcxyIzBDU2N"},
		{"nats://bob:!+49 1511 2345678@nats:4222", "1511 2345678"},
		{"nats://bob:+49 1511 2345678@nats:4222", "1511 2345678"},
		{"brokers bob:+49 1511 2345678@kafka:9092", "1511 2345678"},
	} {
		once := m.Text(c.s)
		if twice := m.Text(once); twice != once {
			t.Errorf("%q -> %q -> %q", c.s, once, twice)
		}
		if strings.Contains(once, c.hidden) {
			t.Errorf("%q -> %q: %q is in clear", c.s, once, c.hidden)
		}
	}
}

// TestHoldsPass holds proseValue's gate to a plain search: "pass" in
// each of its cases at each offset of texts of "s", "S", "a" and "p"
// (pairs across the eight-byte words, near-misses around it).
func TestHoldsPass(t *testing.T) {
	fill := "xsSapPsa ssapSSpa"
	for n := 0; n <= 24; n++ {
		b := make([]byte, n)
		for k := range b {
			b[k] = fill[(k*7+n)%len(fill)]
		}
		if got, want := holdsPass(b), containsFold(b, "pass"); got != want {
			t.Errorf("holdsPass(%q) = %v, want %v", b, got, want)
		}
		for at := 0; at+4 <= n; at++ {
			for c := 0; c < 16; c++ {
				p := []byte("pass")
				for k := range p {
					if c>>k&1 != 0 {
						p[k] -= 'a' - 'A'
					}
				}
				x := append([]byte(nil), b...)
				copy(x[at:], p)
				if !holdsPass(x) {
					t.Errorf("holdsPass(%q) = false", x)
				}
				x[at+c%4] = 'x'
				if got, want := holdsPass(x), containsFold(x, "pass"); got != want {
					t.Errorf("holdsPass(%q) = %v, want %v", x, got, want)
				}
			}
		}
	}
}

func FuzzHoldsPass(f *testing.F) {
	for _, s := range []string{"", "pass", "1234567pAsS", "xxxxxxpass", "PASSWORD=", "passpasspass"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := holdsPass([]byte(s)), containsFold([]byte(s), "pass"); got != want {
			t.Fatalf("holdsPass(%q) = %v, want %v", s, got, want)
		}
	})
}

// TestValueWithHash: a '#' inside an unquoted value is part of it
// ("password: hunter#2…": the rest after the '#' was printed); a '#' after
// white space (a YAML or shell comment) still ends it.
func TestValueWithHash(t *testing.T) {
	for _, c := range []struct{ in, gone, kept string }{
		{"password: hunter#2XyZ9abc", "2XyZ9abc", "password: "},
		{"password=Str0ng#P@ssw0rd2024 ok", "P@ssw0rd2024", " ok"},
		{"api_key=AbC123#x9Qz7Lm", "x9Qz7Lm", "api_key="},
		{"token: abc # comment", "abc", "# comment"},
	} {
		out := MaskText(c.in)
		if strings.Contains(out, c.gone) || !strings.Contains(out, c.kept) {
			t.Errorf("MaskText(%q) = %q", c.in, out)
		}
	}
}

// TestUserTokenAsPassword: an API token given as the user of a
// user:password argument, with an empty or placeholder password (curl's
// -u, HTTPie's -a, Samba's -U): the password's match went past the token
// and left it shown. Both are masked, in one pass (FuzzFind's
// idempotence seed dd739dd07f66efae was the same defect).
func TestUserTokenAsPassword(t *testing.T) {
	const ghp = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7d"
	const sk = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dcQ2"
	for _, c := range []struct{ in, token string }{
		{"curl -u " + sk + ":x https://api.stripe.com/v1/charges", sk},
		{"curl -u " + ghp + ":x-oauth-basic https://api.github.com/user", ghp},
		{"curl --user " + ghp + ":hunter2XyZ9 https://x", ghp},
		{"http -a " + ghp + ":x https://api.github.com/user", ghp},
		{"smbclient //fs/share -U " + ghp + "%x", ghp},
		{"curl+-u+" + ghp + "%3Ax+https%3A%2F%2Fx", ghp},
	} {
		once := maskAll(c.in)
		if strings.Contains(once, c.token[8:]) {
			t.Errorf("%q: the token shows after one pass: %q", c.in[:12], once)
		}
		if twice := maskAll(once); twice != once {
			t.Errorf("%q: a second pass masks more: %q -> %q", c.in[:12], once, twice)
		}
	}
	// A user that is no credential: the password alone, as before.
	if got := maskAll("curl -u alice:hunter2XyZ9 https://x"); !strings.Contains(got, "-u alice:******") {
		t.Errorf("a plain user was masked too: %q", got)
	}
}

// maskAll masks every match of Find in s, as the writers do.
func maskAll(s string) string {
	var b strings.Builder
	last := 0
	for from := 0; from < len(s); {
		m, ok := Find(s, from)
		if !ok {
			break
		}
		b.WriteString(s[last:m.Start])
		b.WriteString("******")
		last, from = m.End, max(m.End, m.Start+1)
	}
	b.WriteString(s[last:])
	return b.String()
}
