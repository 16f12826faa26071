package redact

import (
	"strings"
	"testing"
)

// TestSetterCall: a credential passed as the one quoted argument of a
// setter or a builder's method of a credential-named field (Java's
// HikariConfig.setPassword, Spring's DataSourceBuilder.password, an SDK's
// setApiKey) is masked, the value only, and no call that reads, looks up
// or checks one, nor a function of its own name, is.
func TestSetterCall(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{`config.setPassword("01%sjuQUy^DFvT");`, `01%sjuQUy^DFvT`},
		{`ds.setPassword('ZE1^fka1#7*v3X')`, `ZE1^fka1#7*v3X`},
		{`DataSourceBuilder.create().username("sa").password("OIZaK3iF#29yK9").build();`, `OIZaK3iF#29yK9`},
		{`MongoCredential.builder().withPassword("Wq7ZkP2vLm9x").build()`, `Wq7ZkP2vLm9x`},
		{`mail.setSmtpPassword("h8Gt2kLq0pZr")`, `h8Gt2kLq0pZr`},
		{`client.setApiKey("4fQz9WbK2mXc7RtY1pLs8HvN3dJe6GaU");`, `4fQz9WbK2mXc7RtY1pLs8HvN3dJe6GaU`},
		{`builder.apiKey("Zx81Kq0LmP3vRt7");`, `Zx81Kq0LmP3vRt7`},
		{`cfg.setClientSecret("Zx81Kq0LmP3vRt7");`, `Zx81Kq0LmP3vRt7`},
		{`props.set_password("k2Jd8sLq1Xz0")`, `k2Jd8sLq1Xz0`},
		{`{"code": "cfg.setPassword(\"Pz4Rk2Lm9Qx1\");"}`, `Pz4Rk2Lm9Qx1`},
		{`b.password("OIZaK3iF#29yK9")`, `OIZaK3iF#29yK9`},
		{`gh.setOAuthToken("Vb7Kq2Lz9Xc4Mn8Pw1Rt")`, `Vb7Kq2Lz9Xc4Mn8Pw1Rt`},
	} {
		m, ok := Find(c.text, 0)
		if !ok || c.text[m.Start:m.End] != c.secret {
			t.Errorf("%s: %v %v (%q), want %q", c.text, m, ok, c.text[m.Start:m.End], c.secret)
		}
		if !MayHoldCredentialText([]byte(c.text)) {
			t.Errorf("%s: the pre-check passes it over", c.text)
		}
	}
	for _, s := range []string{
		`vault.getSecret("prod-db-1")`,
		`if (!encoder.verifyPassword("hunter2x9")) {`,
		`hash_password("Tr0ub4dor3")`,
		`new Secret("name-2")`,
		`ds.setPassword(System.getenv("DB_PASSWORD2"));`,
		`ds.setPassword("${DB_PASSWORD_2}");`,
		`ds.setUsername("admin2024");`,
		`cfg.setPasswordFile("/run/secrets/db2");`,
		`ds.setPassword("");`,
	} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("%s: %v (%q)", s, m, s[m.Start:m.End])
		}
	}
}

// TestHelperNameKeys: a credential-named key whose last word is "store"
// or "helper" names a credential helper (Docker's config.json
// "credsStore": "desktop", git's credential.helper): its value is the
// helper's name, not a credential. A credential under such a parent
// object is still one.
func TestHelperNameKeys(t *testing.T) {
	for _, s := range []string{
		"{\n  \"auths\": {\n    \"ghcr.io\": {}\n  },\n  \"credsStore\": \"desktop\",\n  \"currentContext\": \"default\"\n}",
		`"credsStore": "osxkeychain"`,
		"[credential]\n\thelper = store\n",
		"credential.helper=manager-core2",
		"secretStore: vault-prod-2",
		"secret_store: aws-secrets-manager-2",
	} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("%q: %v (%q)", s, m, s[m.Start:m.End])
		}
	}
	for _, c := range []struct{ text, secret string }{
		{`{"auths": {"https://index.docker.io/v1/": {"auth": "Ym9iOlF6OXB3bXZ0bHJieDI="}}, "credsStore": "desktop"}`, `Ym9iOlF6OXB3bXZ0bHJieDI=`},
		{"secret_store_password: Kqz9pwmv2tlrbx", "Kqz9pwmv2tlrbx"},
	} {
		m, ok := Find(c.text, 0)
		if !ok || c.text[m.Start:m.End] != c.secret {
			t.Errorf("%s: %v %v, want %q", c.text, m, ok, c.secret)
		}
	}
}

// TestSetterCallCut: a setter's value cut across two texts, after the
// call's opening quote or inside the value, is kept as a tail
// (MayStartCredential: the "sword(" of cmdNeedles) and found by Straddle.
func TestSetterCallCut(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{"HikariConfig config = new HikariConfig();\nconfig.setPassword(\"Qz7kLp2Xw9Rv4M\");\n", "Qz7kLp2Xw9Rv4M"},
		{"DataSourceBuilder.create().username(\"sa\").password(\"Tb8Nq3Vx6Lm1Zc\").build();", "Tb8Nq3Vx6Lm1Zc"},
		{"client.setApiKey(\"4fQz9WbK2mXc7RtY1pLs8HvN3dJe6GaU\");", "4fQz9WbK2mXc7RtY1pLs8HvN3dJe6GaU"},
		{"val a = OAuthClient.builder().apiKey(\"Zx81Kq0LmP3vRt7Hw\").build()", "Zx81Kq0LmP3vRt7Hw"},
		{"gh = GitHubClient.create().setOAuthToken(\"Vb7Kq2Lz9Xc4Mn8Pw1RtYu5\");", "Vb7Kq2Lz9Xc4Mn8Pw1RtYu5"},
	} {
		v := strings.Index(c.text, c.secret)
		for _, cut := range []int{v, v + len(c.secret)/3, v + 2*len(c.secret)/3} {
			tail, head := []byte(c.text[:cut]), []byte(c.text[cut:])
			if !MayStartCredential(tail) {
				t.Errorf("%q | %q: the tail is not kept", tail, head)
				continue
			}
			j, m, ok := Straddle(nil, tail, head)
			if !ok || string(j[m.Start:m.End]) != c.secret {
				t.Errorf("%q | %q: %v %v", tail, head, m, ok)
			}
		}
	}
}

// TestUserPasswordCall: the password argument of a call that takes a user
// and its password (requests' HTTPBasicAuth, aiohttp's BasicAuth, .NET's
// NetworkCredential, JavaMail's PasswordAuthentication, Apache
// HttpClient's and Spring Security's UsernamePassword…) is masked, the
// value only; a variable, an environment read, an empty string and the
// user argument alone are none.
func TestUserPasswordCall(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{`r = requests.get(url, auth=HTTPBasicAuth('admin', 'yd*4#LmXsWRVf%'))`, `yd*4#LmXsWRVf%`},
		{`auth = requests.auth.HTTPDigestAuth("svc", "Qz7kLp2Xw9Rv4M")`, `Qz7kLp2Xw9Rv4M`},
		{`async with aiohttp.ClientSession(auth=aiohttp.BasicAuth("bot", "Tb8Nq3Vx6Lm1Zc")) as s:`, `Tb8Nq3Vx6Lm1Zc`},
		{`client.Credentials = new NetworkCredential("admin", "x0sT*2ubI9ciUY");`, `x0sT*2ubI9ciUY`},
		{`return new PasswordAuthentication("mailer@x.io", "h8Gt2kLq0pZr");`, `h8Gt2kLq0pZr`},
		{`new UsernamePasswordCredentials("admin", "Wq7ZkP2vLm9x")`, `Wq7ZkP2vLm9x`},
		{`new UsernamePasswordAuthenticationToken("alice", "P4ssw0rd!2026")`, `P4ssw0rd!2026`},
		{`{"code": "auth = HTTPBasicAuth(\"admin\", \"k2Jd8sLq1Xz0\")"}`, `k2Jd8sLq1Xz0`},
	} {
		found := false
		for from := 0; !found; {
			m, ok := Find(c.text, from)
			if !ok {
				break
			}
			found, from = c.text[m.Start:m.End] == c.secret, m.End
		}
		if !found {
			t.Errorf("%s: no match is %q", c.text, c.secret)
		}
		if !MayHoldCredentialText([]byte(c.text)) {
			t.Errorf("%s: the pre-check passes it over", c.text)
		}
	}
	for _, s := range []string{
		`auth = HTTPBasicAuth(user, password)`,
		`auth = HTTPBasicAuth("admin2", os.environ["API_PASSWORD"])`,
		`new NetworkCredential("admin2024", "")`,
		`new NetworkCredential("admin2024", password2)`,
		`HTTPBasicAuth("user2024")`,
	} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("%s: %v (%q)", s, m, s[m.Start:m.End])
		}
	}
}

// TestUserPasswordCallCut: the password of HTTPBasicAuth and its kin cut
// across two texts after its opening quote, or inside it, is kept as a
// tail (the calls' names among cmdNeedles) and found by Straddle.
func TestUserPasswordCallCut(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{"r = requests.get(URL, auth=HTTPBasicAuth('admin', 'Qz7kLp2Xw9Rv4M'))", "Qz7kLp2Xw9Rv4M"},
		{`session = aiohttp.ClientSession(auth=aiohttp.BasicAuth("bot", "Tb8Nq3Vx6Lm1Zc"))`, "Tb8Nq3Vx6Lm1Zc"},
		{`client.Credentials = new NetworkCredential("mailer", "x0sT2ubI9ciUYq");`, "x0sT2ubI9ciUYq"},
		{`return new PasswordAuthentication("alerts", "h8Gt2kLq0pZrW");`, "h8Gt2kLq0pZrW"},
		{`new UsernamePasswordCredentials("svc", "Wq7ZkP2vLm9xY")`, "Wq7ZkP2vLm9xY"},
	} {
		v := strings.Index(c.text, c.secret)
		for _, cut := range []int{v, v + len(c.secret)/3, v + 2*len(c.secret)/3} {
			tail, head := []byte(c.text[:cut]), []byte(c.text[cut:])
			if !MayStartCredential(tail) {
				t.Errorf("%q | %q: the tail is not kept", tail, head)
				continue
			}
			j, m, ok := Straddle(nil, tail, head)
			if !ok || string(j[m.Start:m.End]) != c.secret {
				t.Errorf("%q | %q: %v %v", tail, head, m, ok)
			}
		}
	}
}

// TestMarkdownBoldLabel: a credential after a Markdown bold label with
// its colon inside the bold ("**Password:** <pw>", as a model's reply
// lists credentials) is masked, the value only (the closing "**" was
// taken for the value, and the credential printed); also cut across two
// texts after the label. A label with no value, a mask or a placeholder
// after it is none.
func TestMarkdownBoldLabel(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{"**Password:** Kq7#zP2vLm9xWd", "Kq7#zP2vLm9xWd"},
		{"Here are the credentials:\n\n- **Username:** admin\n- **Password:** Kq7#zP2vLm9xWd\n", "Kq7#zP2vLm9xWd"},
		{"* **Password:**Tb8Nq3Vx6Lm1Zc", "Tb8Nq3Vx6Lm1Zc"},
		{"**API Key:** 4fQz9WbK2mXc7RtY1pLs8HvN3dJe6GaU", "4fQz9WbK2mXc7RtY1pLs8HvN3dJe6GaU"},
		{"**DB_PASSWORD:** Wq7ZkP2vLm9xY", "Wq7ZkP2vLm9xY"},
		{`{"delta": "| **Client secret:** h8Gt2kLq0pZrW"}`, "h8Gt2kLq0pZrW"},
	} {
		m, ok := Find(c.text, 0)
		for ok && m.Kind == KindEmail {
			m, ok = Find(c.text, m.End)
		}
		if !ok || c.text[m.Start:m.End] != c.secret {
			t.Errorf("%q: %v %v, want %q", c.text, m, ok, c.secret)
		}
		if !MayHoldCredentialText([]byte(c.text)) {
			t.Errorf("%q: the pre-check passes it over", c.text)
		}
		v := strings.Index(c.text, c.secret)
		for _, cut := range []int{v, v + len(c.secret)/2} {
			tail, head := []byte(c.text[:cut]), []byte(c.text[cut:])
			if !MayStartCredential(tail) {
				t.Errorf("%q | %q: the tail is not kept", tail, head)
				continue
			}
			if j, m, ok := Straddle(nil, tail, head); !ok || string(j[m.Start:m.End]) != c.secret {
				t.Errorf("%q | %q: %v %v", tail, head, m, ok)
			}
		}
	}
	// ("**Password:** see below" is masked as "Password: see below" is,
	// with no e2a.secret finding: TestMarkdownBoldLabelFinding.)
	for _, s := range []string{"**Password:**", "**Password:** ", "**Password:** ********", "**Password:** <your password>",
		"**Username:** admin2024"} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("%q: %v (%q)", s, m, s[m.Start:m.End])
		}
	}
}

// TestMarkdownBoldLabelEncoded: the bold label URL-encoded (a reply put in
// a query or a form body) is read as the text is (a key of one word).
func TestMarkdownBoldLabelEncoded(t *testing.T) {
	for _, c := range []struct{ text, secret string }{
		{"q=-+%2A%2APassword%3A%2A%2A+Kq7%23zP2vLm9xWd%0A&x=1", "Kq7%23zP2vLm9xWd"},
		{"q=%2A%2AToken%3A%2A%2A%20Vb7Kq2Lz9Xc4Mn8Pw1RtYu5&x=1", "Vb7Kq2Lz9Xc4Mn8Pw1RtYu5"},
	} {
		found := false
		for from := 0; !found; {
			m, ok := Find(c.text, from)
			if !ok {
				break
			}
			found, from = c.text[m.Start:m.End] == c.secret, m.End
		}
		if !found {
			t.Errorf("%q: no match is %q", c.text, c.secret)
		}
	}
	if m, ok := Find("q=%2A%2APassword%3A%2A%2A&x=1", 0); ok {
		t.Errorf("an empty label: %v", m)
	}
}
