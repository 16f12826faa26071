package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// secrets20Forms are h-secrets20's forms, seeds of FuzzFind and
// FuzzMayHoldCredentialText.
var secrets20Forms = []string{"a senha é Xq7vLm2pR9tz", "A SENHA É Xq7vLm2pR9tz", "пароль — Xq7vLm2pR9tz", "Пароль – Xq7vLm2pR9tz",
	"пароль - Xq7vLm2pR9tz", "CONTRASEÑA ES Xq7vLm2pR9tz", "la%20contrase%C3%B1a%20es%20Xq7vLm2pR9tz", "user admin / pass 2024-01-01",
	"o café é 2024", "пароль — 2024-01-01", "x - 12345678", "my password for bob@example.com: Xq7vLm2pR9tz",
	"SSH_KEY=-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7xq9Lm3Rt5Vw2Yz4\n-----END RSA PRIVATE KEY-----", "TLS_KEY=-----BEGIN CERTIFICATE-----\nMIIE",
	"curl -H 'Cookie: sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6' https://x", "curl -b 'lang=en; sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6' https://x", "curl -b a=1",
	"x=2qYDx2o%2Fabc7Xk9Lm3Qp8Rt5Vw2Yz4Bn6Cd1Ef&b=2", "La password è Xq7vLm2pR9tz", "il caffè è 2024", "A senha do banco é Xq7vLm2pR9tz",
	"Das Passwort für den Server ist Xq7vLm2pR9tz", "Пароль для входа: Xq7vLm2pR9tz", "%2F2Fabc7Xk9Lm3Qp8Rt5Vw2Yz4Bn6Cd1Ef", "Pa", "au"}

// TestForeignSepLabels: a password after a label beyond English and a
// dash ("пароль — <pw>", an en dash or a hyphen too), after Portuguese's
// "a senha é" and Italian's "la password è", after "CONTRASEÑA ES" in
// capitals, and after "la contraseña es" URL-encoded with "%20" is
// masked, a credential where it reads as generated; the pre-check passes
// it; masking twice changes nothing. So is one after a label, a
// preposition and up to three words ("a senha do banco é", "Пароль от
// почты —", "das Passwort für den Server ist"), as "the password for
// <who> is" is. Near misses (another word before the dash or "é", a
// date, a number too short, a word, four words) stay plain.
func TestForeignSepLabels(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a senha é Xq7vLm2pR9tz", "a senha é #"},
		{"A senha é Xq7vLm2pR9tz para o banco", "A senha é # para o banco"},
		{"A SENHA É Xq7vLm2pR9tz", "A SENHA É #"},
		{"пароль — Xq7vLm2pR9tz", "пароль — #"},
		{"Пароль – Xq7vLm2pR9tz.", "Пароль – #."},
		{"ПАРОЛЬ - Xq7vLm2pR9tz", "ПАРОЛЬ - #"},
		{"Ваш пароль - Xq7vLm2pR9tz, логин - admin", "Ваш пароль - #, логин - admin"},
		{"hasło — Xq7vLm2pR9tz", "hasło — #"},
		{"senha - Xq7vLm2pR9tz", "senha - #"},
		{"CONTRASEÑA ES Xq7vLm2pR9tz", "CONTRASEÑA ES #"},
		{"LA CONTRASEÑA ES Xq7vLm2pR9tz", "LA CONTRASEÑA ES #"},
		{"GET /s?q=la%20contrase%C3%B1a%20es%20Xq7vLm2pR9tz&hl=es", "GET /s?q=la%20contrase%C3%B1a%20es%20#&hl=es"},
		{"La password è Xq7vLm2pR9tz, non condividerla", "La password è #, non condividerla"},
		{"LA PASSWORD È Xq7vLm2pR9tz", "LA PASSWORD È #"},
		{"A senha do banco de dados é Xq7vLm2pR9tz", "A senha do banco de dados é #"},
		{"Пароль от почты — Xq7vLm2pR9tz", "Пароль от почты — #"},
		{"Пароль для входа - Xq7vLm2pR9tz", "Пароль для входа - #"},
		{"la password del database è Xq7vLm2pR9tz", "la password del database è #"},
		{"Das Passwort für den Server ist Xq7vLm2pR9tz", "Das Passwort für den Server ist #"},
		{"Le mot de passe du serveur est Xq7vLm2pR9tz", "Le mot de passe du serveur est #"},
		{"Пароль для входа: Xq7vLm2pR9tz", "Пароль для входа: #"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if _, ok := firstCredential([]byte(c.in)); !ok {
			t.Errorf("%q: Find reports no credential", c.in)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false", c.in)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
	// A value with a digit that does not read as generated: masked, no
	// finding (the policy of prose passwords).
	if got, want := mask18("a senha é banco2024"), "a senha é #"; got != want {
		t.Errorf("masked %q, want %q", got, want)
	}
	if m, ok := firstCredential([]byte("a senha é banco2024")); ok {
		t.Errorf("a word and a year: Find reports %v", m)
	}
	for _, s := range []string{"o café é 2024 bom", "a senha é forte", "x - 12345678 - y", "пароль — 12", "Пароль — 2024-01-01",
		"a senha é 2024-01-01", "Дата - 2024-01-01", "версия — v1.2.3-rc1", "la senha é forte — 2024 foi bom", "asenha é Xq7vLm2pR9tz",
		"contrase%C3%B1a%20est%20Xq7vLm2pR9tz", "Espa%C3%B1a%20es%20Xq7vLm2pR9tz", "user - Xq7vLm2pR9tz",
		"la password è obbligatoria", "il caffè è 2024", "la passwordè Xq7vLm2pR9tz", "la xpassword è Xq7vLm2pR9tz",
		"o preço do café é 2024", "контакт для связи — 89161234567", "Der Preis für den Server ist 2024", "a senha do banco é obrigatória",
		"senha do primeiro segundo terceiro quarto é Xq7vLm2pR9tz", "a senha xx banco é Xq7vLm2pR9tz",
		"Контакт для связи: 89161234567", "Ссылка для входа: https://example.com/login", "Логин для входа: admin2024"} {
		if got := MaskText(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
}

// TestUserSlashPassDate: a date or a date-time after "user <name> /
// pass" is no password (as after "User: root /": TestLoginPairDate); a
// password there still is.
func TestUserSlashPassDate(t *testing.T) {
	for _, s := range []string{"user admin / pass 2024-01-01", "user admin / pass 2024-01-01T10:00:00Z", "Username: bob / pass 10:30:00",
		"login root / pass 01/02/2024."} {
		if m, ok := Find(s, 0); ok {
			t.Errorf("Find(%q) = %v %q, want nothing", s, m, s[m.Start:m.End])
		}
	}
	for _, s := range []string{"user admin / pass Xq7vLm2pR9tz", "user admin / pass 2024-Xq7v-9"} {
		if _, ok := firstCredential([]byte(s)); !ok {
			t.Errorf("%q: Find reports no credential", s)
		}
	}
}

// TestStraddleAddressInHead: "my password for bob@example.com: <pw>" cut
// inside "password" (the label in tail, the address and the value in
// head): Straddle goes on past the address, which head alone shows, to
// the password, which it does not; an address before no value is no
// match across the boundary.
func TestStraddleAddressInHead(t *testing.T) {
	for _, text := range []string{"my password for bob@example.com: Xq7vLm2pR9tz and more", "Password for ops@db.example.org: Xq7vLm2pR9tz"} {
		v := strings.Index(text, "Xq7v")
		at := strings.Index(text, "@")
		for k := strings.Index(text, "ass") - 1; k < at-3; k++ { // (from "pa" on: TestTailTwoLetters)
			tail, head := []byte(text[:k]), []byte(text[k:])
			if m, ok := firstCredential(head); ok && m.Start == v-k {
				continue // the next delta alone shows it
			}
			if !MayStartCredential(tail) {
				t.Errorf("MayStartCredential(%q) = false", tail)
				continue
			}
			_, m, ok := Straddle(nil, tail, head)
			if !ok || m.Start != v || m.End != v+12 || !m.Kind.Credential() {
				t.Errorf("%q | %q: %v %v, want the password at %d", tail, head, m, ok, v)
			}
		}
	}
	tail, head := []byte("write to"), []byte(" bob@example.com: Xq7vLm2pR9tz")
	if _, m, ok := Straddle(nil, tail, head); ok {
		t.Errorf("Straddle(%q | %q) = %v, want none", tail, head, m)
	}
}

// TestPEMUnderNamedKey: a PEM private key block as the value of a key
// that names no credential but a key of some tool (SSH_KEY=, TLS_KEY=,
// cert_key=: KeyNamedKey, whose values are high_entropy) keeps its kind,
// a private key, so that it is a credential; under a credential's key it
// stays that key's. A certificate there is no private key.
func TestPEMUnderNamedKey(t *testing.T) {
	const block = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7xq9Lm3Rt5Vw2Yz4Bn6Cd1EfGh8Jk0LmNpQr\n-----END RSA PRIVATE KEY-----"
	for _, c := range []struct {
		key  string
		kind Kind
	}{
		{"SSH_KEY=", KindPrivateKey}, {"TLS_KEY=", KindPrivateKey}, {"cert_key: ", KindPrivateKey}, {"export DEPLOY_KEY='", KindKeyValue},
		{"PRIVATE_KEY=", KindKeyValue}, {"key: ", KindPrivateKey},
	} {
		in := c.key + block
		m, ok := Find(in, 0)
		if !ok || m.Start != len(c.key) || m.End != len(in) || m.Kind != c.kind {
			t.Errorf("Find(%q) = %v %v, want the block as %v", in, m, ok, c.kind)
		}
		if !MayHoldCredentialText(in) {
			t.Errorf("MayHoldCredentialText(%q) = false", in)
		}
		once := MaskText(in)
		if twice := MaskText(once); twice != once || strings.Contains(once, "MIIE") {
			t.Errorf("%q: masked %q, twice %q", in, once, twice)
		}
	}
	cert := "TLS_KEY=-----BEGIN CERTIFICATE-----\nMIIEpAIBAAKCAQEA7xq9Lm3Rt5Vw2Yz4Bn6Cd1EfGh8Jk0LmNpQr\n-----END CERTIFICATE-----"
	if m, ok := firstCredential([]byte(cert)); ok {
		t.Errorf("a certificate: Find reports %v", m)
	}
}

// TestTailVaultTerraform: a delta that ends inside a HashiCorp Vault
// token's prefix ("hv" | "s.…", "hvs" | ".…") or inside a Terraform Cloud
// token's ".atlasv1." ("…Mn.atl" | "asv1.…") is kept (MayStartCredential)
// and Straddle finds the token in the two joined; a word that only looks
// alike is not kept.
func TestTailVaultTerraform(t *testing.T) {
	for _, c := range []struct{ text, from, to string }{
		{"got hvs.CAESIJ8fQ2Xz9kLm3Qp8Rt5Vw2Yz4Bn6Cd1EfGh7Jk0LmNpQrStUvWx back", "got hv", "got hvs.CAES"},
		{"use hvb.AAAAAQJ8fQ2Xz9kLm3Qp8Rt5Vw2Yz4Bn6Cd1EfGh7Jk0LmNpQrStUvWx", "use hv", "use hvb.AAAA"},
		{"here: AbCdEfGhIjKlMn.atlasv1.Xq7vLm2pR9tzK4Bn6Cd1EfGh7Jk0LmNpQrStUvWxYz012345AbCdEfGhIjKlMnOp done", "here: AbCdEfGhIjKlMn.", "here: AbCdEfGhIjKlMn.atlasv1.X"},
	} {
		v := strings.Index(c.text, c.from[strings.LastIndexByte(c.from, ' ')+1:])
		for k := len(c.from); k <= len(c.to); k++ {
			tail, head := c.text[:k], c.text[k:]
			if !MayStartCredential(tail) {
				t.Errorf("MayStartCredential(%q) = false", tail)
				continue
			}
			_, m, ok := Straddle(nil, []byte(tail), []byte(head))
			if !ok || m.Kind != KindVendorToken || m.Start != v {
				t.Errorf("Straddle(%q | %q) = %v %v, want the token at %d", tail, head, m, ok, v)
			}
		}
	}
	for _, tail := range []string{"MongoDB.atl", "AbCdEfGhIjKlM.atl", "AbCdEfGhIjKlMn.atx", "the hvx"} {
		if MayStartCredential(tail) {
			t.Errorf("MayStartCredential(%q) = true, want false", tail)
		}
	}
}

// TestQuotedHeaderLine: a Cookie or Authorization header written as one
// quoted argument (curl -H 'Cookie: …' https://…, a list of header lines
// in code) ends at its quote, and one whose value is a template literal
// (JavaScript's Authorization: `Bearer …`) at its closing backtick: the URL
// and the arguments after it are not masked with it (they were: such a
// value runs to the line's end). The value is still masked, a credential.
func TestQuotedHeaderLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"curl -H 'Cookie: session=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6' https://x.example.com/api", "curl -H 'Cookie: #' https://x.example.com/api"},
		{`curl -H "Cookie: sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6; theme=dark" https://x.example.com/api -o out.json`, `curl -H "Cookie: #" https://x.example.com/api -o out.json`},
		{"curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==' https://x.example.com/api", "curl -H 'Authorization: Basic #' https://x.example.com/api"},
		{`headers = ["Authorization: Bearer VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6", "Accept: */*"]`, `headers = ["Authorization: Bearer #", "Accept: */*"]`},
		{"Cookie: sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6; a='b' c", "Cookie: #"},
		{"'Cookie: sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6", "'Cookie: #"},
		{"fetch(u, {headers: {Authorization: `Bearer VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6`, Accept: 'x'}})", "fetch(u, {headers: {Authorization: `Bearer #`, Accept: 'x'}})"},
		{"fetch(u, {headers: {Cookie: `sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6`}, method: 'GET'})", "fetch(u, {headers: {Cookie: `#`}, method: 'GET'})"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if _, ok := firstCredential([]byte(c.in)); !ok {
			t.Errorf("%q: Find reports no credential", c.in)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false", c.in)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
	// A template literal that builds the header is code, not a value.
	if s := "fetch(u, {headers: {Authorization: `Bearer ${token}`, 'Content-Type': 'application/json'}})"; MaskText(s) != s {
		t.Errorf("%q masked %q, want it plain", s, MaskText(s))
	}
}

// TestCurlCookie: a session cookie given to curl's -b ('name=<random>',
// also among other cookies) is masked, a credential, as after "Cookie: ";
// a cookie with no random value, a cookie file and another command's -b
// stay plain.
func TestCurlCookie(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"curl -b 'session=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6' https://x.example.com", "curl -b 'session=#' https://x.example.com"},
		{"curl -s -b 'lang=en; sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6' https://x.example.com", "curl -s -b 'lang=#' https://x.example.com"},
		{`curl -b "connect.sid=s%3AVvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6.abc" https://x.example.com`, `curl -b "connect.sid=#" https://x.example.com`},
		{"curl -b PHPSESSID=el4ukv0kqbvoirg7nkp4dncpk3 https://x.example.com", "curl -b PHPSESSID=# https://x.example.com"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if m, ok := firstCredential([]byte(c.in)); !ok || m.Kind != KindCookie {
			t.Errorf("%q: Find reports %v %v, want a cookie", c.in, m, ok)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false", c.in)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
	for _, s := range []string{"curl -b lang=en https://x.example.com", "curl -b cookies.txt -c cookies.txt https://x.example.com",
		"curl -b 'theme=dark; lang=en' https://x.example.com", "git checkout -b feature=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6",
		"mycurl -b 'sid=VvVqE1SkHbn88HxjSI6bWHtP3fS2qHx6'"} {
		if got := MaskText(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
}

// TestForeignSepTail: a delta that ends after a label beyond English and
// a dash, after "a senha é", after such a label and a space, or after
// "CONTRASEÑA" and a start of "ES" is kept (MayStartCredential), and
// Straddle finds the password the next delta holds, at every cut from the
// label's end to the value; a tail that only looks alike is not kept.
func TestForeignSepTail(t *testing.T) {
	for _, text := range []string{"Ваш пароль — Xq7vLm2pR9tz ok", "пароль - Xq7vLm2pR9tz", "Пароль – Xq7vLm2pR9tz", "a senha é Xq7vLm2pR9tz",
		"A SENHA É Xq7vLm2pR9tz", "CONTRASEÑA ES Xq7vLm2pR9tz", "hasło — Xq7vLm2pR9tz", "La password è Xq7vLm2pR9tz"} {
		v := strings.Index(text, "Xq7v")
		label := strings.IndexAny(text, " -–—é") // (the first word's end or later)
		for _, w := range []string{"пароль", "Пароль", "senha", "SENHA", "CONTRASEÑA", "hasło", "password"} {
			if k := strings.Index(text, w); k >= 0 {
				label = k + len(w)
			}
		}
		for k := label; k < v; k++ {
			tail, head := text[:k], text[k:]
			if !utf8.ValidString(tail) {
				continue // (inside a character: a cut in two bytes is not seen)
			}
			if !MayStartCredential(tail) {
				t.Errorf("MayStartCredential(%q) = false, next %q", tail, head)
				continue
			}
			_, m, ok := Straddle(nil, []byte(tail), []byte(head))
			if !ok || !m.Kind.Credential() || m.Start != v || m.End != v+12 {
				t.Errorf("Straddle(%q | %q) = %v %v, want the password", tail, head, m, ok)
			}
		}
	}
	for _, tail := range []string{"o café é ", "Дата - ", "версия — ", "a xsenha é ", "CONTRASEÑAS E", "ESPAÑA ES ", "the password "} {
		if foreignSepTailStart([]byte(tail)) {
			t.Errorf("foreignSepTailStart(%q) = true, want false", tail)
		}
	}
}

// TestTailTwoLetters: a delta that ends in "pa" or "au" as a word of its
// own (any case) is kept, and Straddle reads "Pa" | "ssword for bob:
// <pw>" and "Au" | "thorization: Token <tok>" across the boundary; "to",
// and "pa" or "au" inside a longer word, are not kept.
func TestTailTwoLetters(t *testing.T) {
	for _, c := range [][2]string{{"Pa", "ssword for bob: Xq7vLm2pR9tz"}, {"the pa", "ssword is Xq7vLm2pR9tz"}, {"PA", "SSWORD=Xq7vLm2pR9tz"},
		{"Au", "thorization: Token Xq7vLm2pR9tzK4Bn6Cd1EfGh7Jk0"}, {"au", "th=Xq7vLm2pR9tzK4Bn6Cd1"}} {
		if !MayStartCredential(c[0]) {
			t.Errorf("MayStartCredential(%q) = false", c[0])
		}
		_, m, ok := Straddle(nil, []byte(c[0]), []byte(c[1]))
		if !ok || !m.Kind.Credential() || m.End <= len(c[0]) {
			t.Errorf("Straddle(%q | %q) = %v %v, want the value", c[0], c[1], m, ok)
		}
	}
	for _, tail := range []string{"to", "the to", "spa", "Spa", "papa", "go to the sea, pa.", "chapeau", "Landau"} {
		if MayStartCredential(tail) {
			t.Errorf("MayStartCredential(%q) = true, want false", tail)
		}
	}
}

// TestEncodedRunStart: a random run URL-encoded with a '/' or '+' in it
// (an AWS secret in a query: "2qYDx2o%2Fabc…") whose word after the escape
// reads as random is masked from the run's start: it was masked from the
// escape's hex digits, its first characters and the '%' shown. An encoded
// path is left alone.
func TestEncodedRunStart(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"x=2qYDx2o%2Fabc7Xk9Lm3Qp8Rt5Vw2Yz4Bn6Cd1Ef&b=2", "x=#&b=2"},
		{"2qYDx2o%2Fabc7Xk9Lm3Qp8Rt5Vw2Yz4Bn6Cd1Ef", "#"},
		{"k=2qYDx2o%2babc7Xk9Lm3Qp8Rt5Vw2Yz4Bn6Cd1Ef", "k=#"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
	for _, s := range []string{"q=hello%20world%2Fpath%2Fto%2Ffile2024", "GET /a%2Fb%2Fc%2Fd HTTP/1.1", "https://x.example.com/docs%2F2024%2F01"} {
		if got := MaskText(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
}
