package redact

import "testing"

// TestForeignPasswordWords: "password" in other languages, spelled in
// ASCII as config keys and labels are, names a credential's key as
// "password" does (each value was printed in every output); the pre-check
// passes each text Find masks. Other words and "parola" (Italian "word")
// stay plain.
func TestForeignPasswordWords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"senha: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"DB_SENHA=Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"Kennwort: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"contrasena=Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"wachtwoord: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"passord: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"haslo=Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"heslo: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{`{"sifre": "Xk9mQ2vL8w"}`, "Xk9mQ2vL8w"},
		{"adgangskode: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
		{"admin_lozinka: Xk9mQ2vL8w", "Xk9mQ2vL8w"},
	} {
		m, ok := Find([]byte(c.in), 0)
		if got := c.in[m.Start:m.End]; !ok || got != c.want || m.Kind != KindKeyValue {
			t.Errorf("Find(%q) = %q %v (%v), want %q as a key's value", c.in, got, m.Kind, ok, c.want)
		}
		if !MayHoldCredentialText([]byte(c.in)) {
			t.Errorf("MayHoldCredentialText(%q) = false: the pre-check turns away a text Find masks", c.in)
		}
	}
	for _, k := range []string{"parola", "senhas_count", "senha_hint", "geslot", "sifrelemek"} {
		if c := ClassifyKey([]byte(k)); c == KeyCredential {
			t.Errorf("ClassifyKey(%q) = credential, want plain", k)
		}
	}
}
