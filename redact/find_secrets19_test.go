package redact

import (
	"strings"
	"testing"
)

// secrets19Credentials are the shapes h-secrets19 fixed, each printed
// whole before: the text, and how every output prints it ("#" a mask).
var secrets19Credentials = []struct{ in, want string }{
	// a label, "for <user>" (an e-mail address, matched first), the value
	{"Password for bob@example.com: Xq7vLm2pR9tz", "Password for #: #"},
	{"Your password for alice.smith@corp.example.org: P@ss!w0rd#2024", "Your password for #: #"},
	// a login's user and password
	{"Login: admin / Xq7vLm2pR9tz", "Login: admin / #"},
	{"login: deploy-bot / Kq9!mZ2vLp", "login: deploy-bot / #"},
	{"Username: root / Xq7vLm2pR9tz.", "Username: root / #."},
	{`ok\nLogin: admin \/ Xq7vLm2pR9tz\n`, `ok\nLogin: admin \/ #\n`},
	{"user admin / pass Xq7vLm2pR9tz", "user admin / pass #"},
	{"Use user: ci / pass Xq7vLm2pR9tz to log in", "Use user: ci / pass # to log in"},
	// PagerDuty's integration key
	{"routing_key: 0123456789abcdef0123456789abcdef", "routing_key: #"},
	{`{"routing_key": "a1b2c3d4e5f60718293a4b5c6d7e8f90", "event_action": "trigger"}`, `{"routing_key": "#", "event_action": "trigger"}`},
	{"PAGERDUTY_ROUTING_KEY=a1b2c3d4e5f60718293a4b5c6d7e8f90", "PAGERDUTY_ROUTING_KEY=#"},
	{"integrationKey = 'a1b2c3d4e5f60718293a4b5c6d7e8f90'", "integrationKey = '#'"},
	// an OpenVPN inline <auth-user-pass> block
	{"remote vpn.example.com 1194\n<auth-user-pass>\nalice\nXq7vLm2pR9tz\n</auth-user-pass>\n", "remote vpn.example.com 1194\n<auth-user-pass>\nalice\n#\n</auth-user-pass>\n"},
	{"<auth-user-pass>\r\nalice\r\nXq7vLm2pR9tz\r\n</auth-user-pass>", "<auth-user-pass>\r\nalice\r\n#\r\n</auth-user-pass>"},
	// vault kv get's table, op read's output
	{"====== Data ======\nKey         Value\n---         -----\npassword    Xq7vLm2pR9tz\nusername    admin\n", "====== Data ======\nKey         Value\n---         -----\npassword    #\nusername    admin\n"},
	{"$ op read op://prod/postgres/password\nXq7vLm2pR9tz\n", "$ op read op://prod/postgres/password\n#\n"},
	// a password's label and a copula beyond English
	{"das Passwort ist Xq7vLm2pR9tz", "das Passwort ist #"},
	{"Le mot de passe est Xq7vLm2pR9tz.", "Le mot de passe est #."},
	{"La contraseña es Xq7vLm2pR9tz", "La contraseña es #"},
}

// TestSecrets19Masked: each shape is masked, as a credential (an
// e2a.secret finding), and the pre-check passes its text.
func TestSecrets19Masked(t *testing.T) {
	for _, c := range secrets19Credentials {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if _, ok := firstCredential([]byte(c.in)); !ok {
			t.Errorf("%q: Find reports no credential", c.in)
		}
		if !MayHoldCredentialText(c.in) {
			t.Errorf("MayHoldCredentialText(%q) = false: the pre-check turns away a text Find masks", c.in)
		}
		if !MayHoldCredential(c.in) {
			t.Errorf("MayHoldCredential(%q) = false", c.in)
		}
		once := MaskText(c.in)
		if twice := MaskText(once); twice != once {
			t.Errorf("%q: masked twice %q, once %q", c.in, twice, once)
		}
	}
}

// TestSecrets19MaskedOnly: a value that reads as a word (no digit, or not
// generated) after these labels is masked, never a finding, as prose
// passwords are (the policy of prose.go).
func TestSecrets19MaskedOnly(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"login: admin / hunter2x", "login: admin / #"},
		{"Password for bob@example.com: hunter2x", "Password for #: #"},
		{"password    correcthorse\n", "password    #\n"},
		{"<auth-user-pass>\nalice\nsummer2024\n</auth-user-pass>", "<auth-user-pass>\nalice\n#\n</auth-user-pass>"},
		{"integration_key: 0123456789abcdef0123456789abcdef01", "integration_key: #"},
	} {
		if got := mask18(c.in); got != c.want {
			t.Errorf("%q masked %q, want %q", c.in, got, c.want)
		}
		if m, ok := firstCredential([]byte(c.in)); ok {
			t.Errorf("%q: Find reports %v at %d:%d, want no credential", c.in, m.Kind, m.Start, m.End)
		}
	}
}

// TestSecrets19Plain: prose, code and docs that name these labels with
// no secret after them stay as they are.
func TestSecrets19Plain(t *testing.T) {
	for _, s := range []string{
		"Login: Settings / Security", "Login: admin / logout", "Home / Login: admin / Users", "user guide / pass rate 95%",
		"see user docs / pass 2 of the guide", "user: admin / pass: <your password>", "Login: admin / ${ADMIN_PASSWORD}",
		"routing_key: orders.created", "routing_key = 'logs.error'", `{"routing_key": "user.42.updated"}`, "ROUTING_KEY=orders.created",
		"routing_key: 01234567890123456789012345678901", "sha: 0123456789abcdef0123456789abcdef",
		"das Passwort ist 12 Zeichen lang", "Das Passwort ist falsch.", "le mot de passe est requis", "la contraseña es obligatoria",
		"la contraseña es de 12 caracteres", "das Passwort ist Pflicht 2", "the test ist 2024abc", "es ist Xq7vLm2pR9tz", "mes Xq7vLm2pR9tz",
		"password    string", "password    optional", "| Field    | Type |\npassword    string\n",
		"op read op://prod/db/username\nadmin2024x", "$ op read op://prod/db/hostname\ndb-01.internal\n",
		"<auth-user-pass>\n/etc/openvpn/creds.txt\n</auth-user-pass>", "<auth-user-pass>\n</auth-user-pass>\nXq7vLm2pR9tz",
		"client\nalice\nXq7vLm2pR9tz\n",
	} {
		if got := mask18(s); got != s {
			t.Errorf("%q masked %q, want it plain", s, got)
		}
	}
	// The address is personal data, masked; nothing after it is a value.
	for _, s := range []string{"Password for bob@example.com: see below 2", "Password for bob@example.com:"} {
		if got, want := mask18(s), strings.Replace(s, "bob@example.com", "#", 1); got != want {
			t.Errorf("%q masked %q, want %q", s, got, want)
		}
	}
}

// TestSecrets19Split: each shape cut in two where a stream's deltas
// may cut it, after its label or inside its copula: the tail is kept
// (MayStartCredential) and Straddle finds the value, as the record log
// and validate's split check read two deltas.
func TestSecrets19Split(t *testing.T) {
	// Every cut from the first byte of the key's word after which a tail
	// is kept (not in a word's first letters, "pa" | "ssword", nor, for
	// "user admin / pass", before the slash, nor in the e-mail address,
	// which Straddle reports first: see the report of h-secrets19).
	for _, c := range []struct{ text, value, from string }{
		{"Login: admin / Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "Login"},
		{"user admin / pass Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "user admin /"},
		{"routing_key: 0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef", "rou"},
		{"<auth-user-pass>\nalice\nXq7vLm2pR9tz\n</auth-user-pass>", "Xq7vLm2pR9tz", "<auth-user-pa"},
		{"password    Xq7vLm2pR9tz\n", "Xq7vLm2pR9tz", "pas"},
		{"das Passwort ist Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "das Pas"},
		{"le mot de passe est Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "le mot "},
		{"la contraseña es Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "la con"},
		{"contraseña: Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "con"},
		{"пароль: Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "паро"},
		{"password for admin: Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "pas"},
		{"Password for bob@example.com: Xq7vLm2pR9tz", "Xq7vLm2pR9tz", "Password for bob@example.com:"},
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
	// Inside a Cyrillic label, in a delta with no ASCII.
	for _, tail := range []string{"паро", "парол", "пароль", "Пароль", "ваш пароль"} {
		if !MayStartCredential(tail) {
			t.Errorf("MayStartCredential(%q) = false", tail)
		}
	}
	for _, tail := range []string{"token 17 of the answer ", "the user / ", "mot", "hasta la vista ", "Das ist ", "path /", "Пар", "это все "} {
		if MayStartCredential(tail) {
			t.Errorf("MayStartCredential(%q) = true, want false", tail)
		}
	}
}
