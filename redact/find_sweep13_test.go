package redact

import "testing"

// TestSweep13ProseTokenLabels: a credential named in a sentence and given
// after "is" or "was" ("Your AWS secret access key is …", "The API key is
// …", "your new token is …"): only "password", "passwd" and "passphrase"
// were keys of proseValue, and a text without "pass" was not looked at, so
// each was printed with no finding (the token masked as high-entropy at
// best). A value that reads as a word, a placeholder or a number is none.
func TestSweep13ProseTokenLabels(t *testing.T) {
	const aws = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ9Lm2Kq3x"
	const hex = "3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f"
	const tok = "ghx7Tq9Lm2Pz8Wk4Rv6Yb1Nc3Hd5Jf0s"
	checkSweep7(t, []sweep7Form{
		{"Your AWS secret access key is " + aws, aws, false},
		{"The API key is " + hex + ".", hex, false},
		{"your new token is " + tok, tok, false},
		{"The access token was " + tok + ", it expires in an hour.", tok, false},
		{"Your bearer token is '" + tok + "'.", tok, false},
		{"The auth token is " + tok, tok, false},
		{"The client secret is " + tok, tok, false},
		{"the private key is " + tok, tok, false},
		{"Your secret key is " + aws, aws, false},
		{"The access key is " + aws, aws, false},
		{"the api_key is " + hex, hex, false},
		{"Here it is: the API key is " + hex + "\nKeep it safe.", hex, false},
	}, true, []string{
		"The API key is stored in the vault.",
		"The API key is required for every request (see docs v2).",
		"Your access token is missing: run login 2 times.",
		"The API key is <redacted> in build 1234.",
		"The API key is ${API_KEY} in build 1234.",
		"The client secret is set since 2024-01-01.",
		"the key is the id 3f9a8c7e5b2d4a1c9e8f7a6b5c4d3e2f",
		"the key is " + hex,
		"The monkey is " + hex,
		"The API key is 32 characters long.",
		"the token is 50256",
		"The API key is v2-rotated-2024",
		"The access token was issued at 2024-01-01T00:00:00Z.",
		"the next token is 3f9a8c7e",
	})
}

// TestSweep13PasswordForEmail: "password for <e-mail> is <pw>": the
// address is matched first and the search goes on past it, where "password
// for" was out of proseValue's sight: the password was printed.
func TestSweep13PasswordForEmail(t *testing.T) {
	const pw = "Xk9#mP2q"
	checkSweep7(t, []sweep7Form{
		{"Temporary password for bob@example.com is " + pw, pw, false},
		{"The new password for alice.smith@corp.example.org was " + pw + ".", pw, false},
		{"Temporary password for bob is " + pw, pw, false},
	}, false, []string{
		"Temporary password for bob@example.com is expired.",
		"Temporary password for bob@example.com is 8 characters long.",
		"The address for bob@example.com is " + pw,
	})
	out := MaskText("Temporary password for bob@example.com is " + pw)
	if want := "Temporary password for " + Mask; len(out) < len(want) || out[:len(want)] != want {
		t.Errorf("the address is not masked: %s", mask6(out, pw))
	}
}

// proseKeysRef is proseKeys by a plain search.
func proseKeysRef(b []byte) bool {
	if containsFold(b, "pass") {
		return true
	}
	for _, l := range []string{"\xc3\xb1a", "\xc3\x91a"} { // "contraseña es " (Spanish)
		if containsFold(b, l+" es ") || containsFold(b, l+"+es+") {
			return true
		}
	}
	for _, l := range []string{"%c3%b1a", "%c3%91a"} { // the same URL-encoded
		if containsFold(b, l+"+es+") {
			return true
		}
	}
	for _, l := range []string{"key", "ken", "ret", "pwd"} {
		for _, c := range []string{"is", "was"} {
			for _, a := range []string{" ", "+"} {
				for _, z := range []string{" ", "+"} {
					if containsFold(b, l+a+c+z) {
						return true
					}
				}
			}
		}
	}
	return false
}

// TestProseKeys holds proseValue's gate to a plain search: "key is ",
// "token was+", "secret is " at each offset of texts of their letters
// (across the eight-byte words), with one byte of each changed.
func TestProseKeys(t *testing.T) {
	fill := "kensiwa yrt+sKEYpwd"
	for n := 0; n <= 24; n++ {
		b := make([]byte, n)
		for k := range b {
			b[k] = fill[(k*5+n)%len(fill)]
		}
		if got, want := proseKeys(b), proseKeysRef(b); got != want {
			t.Errorf("proseKeys(%q) = %v, want %v", b, got, want)
		}
		for _, p := range []string{"key is ", "KEN was+", "ret+is ", "Key+Was+", "pwd is ", "PWD+was "} {
			for at := 0; at+len(p) <= n; at++ {
				x := append([]byte(nil), b...)
				copy(x[at:], p)
				if !proseKeys(x) {
					t.Errorf("proseKeys(%q) = false", x)
				}
				for c := range p {
					y := append([]byte(nil), x...)
					y[at+c] = 'x'
					if got, want := proseKeys(y), proseKeysRef(y); got != want {
						t.Errorf("proseKeys(%q) = %v, want %v", y, got, want)
					}
				}
			}
		}
	}
}

func FuzzProseKeys(f *testing.F) {
	for _, s := range []string{"", "key is ", "The API key is 3f9a", "token+was+x", "secret is", "passkey is ", "contrase%C3%B1a+es+1", "%c3%91A+ES+"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := proseKeys([]byte(s)), proseKeysRef([]byte(s)); got != want {
			t.Fatalf("proseKeys(%q) = %v, want %v", s, got, want)
		}
	})
}
