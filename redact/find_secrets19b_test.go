package redact

import (
	"strings"
	"testing"
)

// secrets19bForms are h-secrets19b's forms, seeds of FuzzFind and
// FuzzMayHoldCredentialText.
var secrets19bForms = []string{"la+contrase%C3%B1a+es+Xq7vLm2pR9tz", "msg=Contrase%C3%91a+es+Xq7vLm2pR9tz", "Espa%C3%B1a+es+Xq7vLm2pR9tz",
	"User: root / 2024-01-01", "Login: admin / 2024-01-01T10:00:00.123456+02:00", "Login: admin / 1234-5678",
	"Password for bob@example.com: Xq7vLm2pR9tz", "user admin / pass Xq7vLm2pR9tz", "le mot de passe est Xq7vLm2pR9tz"}

// TestStraddleAfterAddress: "Password for bob@example.com: <pw>" cut in
// the address (Straddle returns the address; StraddleNext the password
// after it) or at the address's end (Straddle goes on past a match that
// ends with tail: the password, which head alone does not show).
func TestStraddleAfterAddress(t *testing.T) {
	for _, text := range []string{"Password for bob@example.com: Xq7vLm2pR9tz and more", "password for ops@db.example.org: Xq7vLm2pR9tz"} {
		v := strings.Index(text, "Xq7v")
		at, colon := strings.Index(text, "@"), strings.Index(text, ":")
		for k := at - 1; k <= colon; k++ {
			tail, head := []byte(text[:k]), []byte(text[k:])
			if !MayStartCredential(tail) {
				t.Errorf("MayStartCredential(%q) = false", tail)
			}
			j, m, ok := Straddle(nil, tail, head)
			if ok && !m.Kind.Credential() && m.End > k {
				j, m, ok = StraddleNext(j, tail, head, m)
			}
			if !ok || m.Start != v || m.End != v+12 || !m.Kind.Credential() {
				t.Errorf("%q | %q: %v %v, want the password at %d", tail, head, m, ok, v)
			}
			_ = j
		}
	}
	// An address before no value; a credential match is not gone past.
	tail, head := []byte("Mail bob@exam"), []byte("ple.com: today at 10")
	j, m, ok := Straddle(nil, tail, head)
	if !ok || m.Kind != KindEmail {
		t.Fatalf("Straddle(%q | %q) = %v %v, want the address", tail, head, m, ok)
	}
	if _, n, ok := StraddleNext(j, tail, head, m); ok {
		t.Errorf("StraddleNext(%q | %q) = %v, want none", tail, head, n)
	}
	tail, head = []byte("token=sk-proj-AbCd"), []byte("EfGhIjKlMnOpQrStUv ok")
	j, m, ok = Straddle(nil, tail, head)
	if !ok || !m.Kind.Credential() {
		t.Fatalf("Straddle(%q | %q) = %v %v", tail, head, m, ok)
	}
	if _, n, ok := StraddleNext(j, tail, head, m); ok {
		t.Errorf("StraddleNext after a credential = %v, want none", n)
	}
}

// TestWordTailStart: a tail that ends in a login's name after its key, in
// "<auth-user-pass>" from its fifth byte, in "op read" from its 'r' up to
// the reference's scheme, or in French's "mot" after a determiner is kept
// (MayStartCredential), and Straddle finds the value the next delta
// holds, at every cut from there to the value (where the next delta alone
// does not show it).
func TestWordTailStart(t *testing.T) {
	for _, c := range []struct{ text, value, from string }{
		{"user admin / pass Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "user a"},
		{"Username: root / Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "Username: r"},
		{"Login: admin / Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "Login: a"},
		{"<auth-user-pass>\nalice\nXq7vLm2pR9tz\n</auth-user-pass>", "Xq7vLm2pR9tz", "<auth"},
		{"$ op read op://prod/postgres/password\nXq7vLm2pR9tz\n", "Xq7vLm2pR9tz", "$ op r"},
		{"le mot de passe est Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "le mot"},
		{"Votre mot de passe est Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "Votre mot"},
	} {
		v := strings.Index(c.text, c.value)
		for k := len(c.from); k <= v; k++ {
			tail, head := c.text[:k], c.text[k:]
			if m, ok := firstCredential([]byte(head)); ok && m.Start == v-k {
				continue // the next delta alone shows it
			}
			if !MayStartCredential(tail) {
				t.Errorf("MayStartCredential(%q) = false, next %q", tail, head)
				continue
			}
			_, m, ok := Straddle(nil, []byte(tail), []byte(head))
			if !ok || !m.Kind.Credential() || m.Start != v || m.End != v+len(c.value) {
				t.Errorf("Straddle(%q | %q) = %v %v, want the value", tail, head, m, ok)
			}
		}
	}
	// (Some of these other checks keep: "<author", "stop r".)
	for _, tail := range []string{"mot", "Mot", "le moteur", "<author", "<au", "stop r", "develop read", "op rx", "the user",
		"cooperative", "user-facing", "admin / ", "le mot.", "user: ", "a mot"} {
		if wordTailStart([]byte(tail)) {
			t.Errorf("wordTailStart(%q) = true, want false", tail)
		}
	}
}

// TestLoginPairDate: a date, a time or an address after a login's name
// and slash ("User: root / 2024-01-01", a breadcrumb or a log's line) is
// no password and stays plain; a password with a digit there is still
// masked, a credential where it reads as generated.
func TestLoginPairDate(t *testing.T) {
	for _, s := range []string{"User: root / 2024-01-01", "User: root / 2024-01-01 was the last login",
		"Login: admin / 2024-01-01T10:00:00Z", "Login: admin / 2024-01-01T10:00:00.123456+02:00", "Username: bob / 10:30:00",
		"User: root / 01/02/2024.", "Login: admin / 10.0.0.1", "Login: admin / 1.22.3-4"} {
		if m, ok := Find([]byte(s), 0); ok {
			t.Errorf("Find(%q) = %v %q, want nothing", s, m, s[m.Start:m.End])
		}
	}
	for _, c := range []struct {
		text, value string
		cred        bool
	}{
		{"User: root / Xq7vLm2pR9tz", "Xq7vLm2pR9tz", true},
		{"Login: admin / 2024-Xq7v-9", "2024-Xq7v-9", true},
		{"Login: admin / 1234-5678", "1234-5678", false},
		{"Login: admin / 20240101Z", "20240101Z", false},
		{"Login: admin / 2024-01-01x", "2024-01-01x", false},
		{"Login: admin / 12345678", "12345678", false},
	} {
		m, ok := Find([]byte(c.text), 0)
		if v := strings.Index(c.text, c.value); !ok || m.Start != v || m.End != v+len(c.value) || m.Kind.Credential() != c.cred {
			t.Errorf("Find(%q) = %v %v, want %q (credential %v)", c.text, m, ok, c.value, c.cred)
		}
	}
}

// TestSpanishCopulaEncoded: "la contraseña es <pw>" URL-encoded with '+'
// for spaces (a query string, a form's body) is masked and a credential,
// as written plainly; the pre-check passes it; a word or a number after
// it, and "ña es" after another word, are none.
func TestSpanishCopulaEncoded(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"la+contrase%C3%B1a+es+Xq7vLm2pR9tz", "la+contrase%C3%B1a+es+#"},
		{"q=La+contrase%c3%b1a+es+Xq7vLm2pR9tz&lang=es", "q=La+contrase%c3%b1a+es+#&lang=es"},
		{"msg=Contrase%C3%91a+es+Xq7vLm2pR9tz", "msg=Contrase%C3%91a+es+#"},
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
	for _, s := range []string{"la+contrase%C3%B1a+es+obligatoria", "la+contrase%C3%B1a+es+de+12+caracteres", "Espa%C3%B1a+es+Xq7vLm2pR9tz",
		"peque%C3%B1a+es+Xq7vLm2pR9tz", "la+contrase%C3%B1a+est+Xq7vLm2pR9tz", "xcontrase%C3%B1a+es+Xq7vLm2pR9tz"} {
		if m, ok := firstCredential([]byte(s)); ok {
			t.Errorf("%q: Find reports %v at %d:%d, want no credential", s, m.Kind, m.Start, m.End)
		}
	}
}

// TestOpReadWord: op read's output with no digit (a passphrase of words)
// on the line after "op read op://…/password" is masked, never a
// credential, as prose passwords are; prose on that line, a short word,
// another field and a reference that op read did not print stay plain.
func TestOpReadWord(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"$ op read op://prod/postgres/password\ncorrecthorsebattery\n", "$ op read op://prod/postgres/password\n#\n"},
		{"$ op read op://prod/postgres/password\r\ncorrecthorsebattery", "$ op read op://prod/postgres/password\r\n#"},
		{"op read --no-newline op://Private/db/passwd\ncorrect-horse-battery\n", "op read --no-newline op://Private/db/passwd\n#\n"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if m, ok := firstCredential([]byte(c.in)); ok {
			t.Errorf("%q: Find reports %v at %d:%d, want no credential", c.in, m.Kind, m.Start, m.End)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
	for _, s := range []string{"$ op read op://prod/postgres/password\nthe value was printed above\n", "see op://prod/postgres/password\ncorrecthorsebattery\n",
		"$ op read op://prod/postgres/username\nadministrator\n", "$ op read op://prod/postgres/password\nabc\n", "$ op read op://prod/postgres/password\n\ncorrecthorsebattery\n"} {
		if got := MaskText(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
}

// TestStraddleNextNotAfterRandom: StraddleNext does not go on past a
// high-entropy run that crosses the boundary: base64 streamed in data:
// URLs has one at every boundary, and the search of each head past it
// doubled such a stream's CPU. The price: a label before a random run and
// a value after it ("Password for <random id>" | "…: <pw>") is not read
// across the boundary (an address there still is: TestStraddleAfterAddress).
func TestStraddleNextNotAfterRandom(t *testing.T) {
	b64 := strings.Repeat("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkrLw", 8)
	for _, c := range []struct{ tail, head string }{
		{b64[:200], b64[200:260] + ": password: Xq7vLm2pR9tz"},
		{"Password for " + b64[:40], b64[40:60] + ": Xq7vLm2pR9tz"},
	} {
		tail, head := []byte(c.tail), []byte(c.head)
		j, m, ok := Straddle(nil, tail, head)
		if !ok || m.Kind != KindHighEntropy || m.Start >= len(tail) || m.End <= len(tail) {
			t.Fatalf("Straddle(%q | %q) = %v %v, want a high-entropy run across the boundary", tail, head, m, ok)
		}
		if _, n, ok := StraddleNext(j, tail, head, m); ok {
			t.Errorf("StraddleNext(%q | %q) after a high-entropy run = %v, want none", tail, head, n)
		}
	}
}
