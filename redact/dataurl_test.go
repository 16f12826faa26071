package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// chanceB64 is a base64 run of an image with a Google API key's shape in
// it by chance ("AIza" and 35 word bytes), from line 39419 of make
// bench-system's py-b64 corpus, where validate reported e2a.secret
// (google) for a PNG data: URL.
const chanceB64 = "U8mNLGYmymjthMqdN/OK/NpaKO/Wab1yRyKkVfayzonjCcyUAIza94Db4dPveiXaqEMz4X8WzU8w8TtFoeZhQ6XLLHva+qw0"

func TestDataURLText(t *testing.T) {
	for _, c := range []struct {
		s string
		p int // payload start, -1: no such text
	}{
		{"data:image/png;base64,iVBORw0KGgo=", 22},
		{"data:image/png;base64,iVBORw0KGgoAA==", 22},
		{"DATA:IMAGE/PNG;BASE64,iVBO", 22},
		{"data:;base64,QUJD", 13},
		{"data:image/svg+xml;charset=utf-8;base64,PHN2Zz4=", 40},
		{"data:application/vnd.ms-excel;name=a_b.xls;base64,AAAA", 50},
		{"data:image/png;base64,", -1},             // no payload
		{"data:image/png;base64,iVBO rw0K", -1},    // a space in it
		{"data:image/png;base64,iVBO=rw0K", -1},    // padding inside
		{"data:image/png;base64,iVBO===", -1},      // three '='
		{"data:image/png;base64,iVBO-_w0", -1},     // URL-safe alphabet
		{"data:image/png;base64,iVBO\nrest", -1},   // a line after it
		{"data: {\"a\":1}", -1},                    // a server-sent event
		{"data:image/png,iVBORw0KGgo", -1},         // not base64
		{"data:image png;base64,AAAA", -1},         // a space in the type
		{"data:image/png;x;base64,AAAA", -1},       // a parameter with no value
		{"data:image/png;x=;base64,AAAA", -1},      // an empty value
		{"data:image/png;x=\"q\";base64,AAAA", -1}, // a quoted value
		{"xdata:image/png;base64,AAAA", -1},
		{"image/png;base64,AAAA", -1},
	} {
		p, ok := dataURLText([]byte(c.s))
		if ok != (c.p >= 0) || ok && p != c.p {
			t.Errorf("dataURLText(%q) = %d, %v; want %d", c.s, p, ok, c.p)
		}
		if ok2 := InertB64Tail(c.s, 4); ok2 != (ok && len(c.s)-c.p >= 4) {
			t.Errorf("InertB64Tail(%q, 4) = %v", c.s, ok2)
		}
	}
}

// TestDataURLNoCredential: a credential's shape that a payload holds by
// chance is masked (high_entropy) and no credential, and the pre-check
// says no; the same bytes anywhere else are what they were.
func TestDataURLNoCredential(t *testing.T) {
	payloads := []string{
		"iVBORw0KGgo/AKIAIOSFODNN7EXAMPLE/" + strings.Repeat("Qk1", 20), // an AWS key id's shape between slashes
		"AIza" + strings.Repeat("x7Q", 11) + "xy/AAAA",                  // at the payload's start
		chanceB64[:46] + "/AIza" + strings.Repeat("Wq4", 11) + "zz+" + chanceB64[46:],
	}
	for _, pl := range payloads {
		// Without the header the shape is a credential (the test's
		// premise: else it proves nothing).
		if _, ok := firstCredential([]byte("x " + pl)); !ok {
			t.Fatalf("premise: no credential in %q", pl)
		}
		for _, h := range []string{"data:image/png;base64,", "data:application/octet-stream;name=f.bin;base64,", "data:;base64,"} {
			s := h + pl
			if m, ok := firstCredential([]byte(s)); ok {
				t.Errorf("Find(%q) reports %v at %d:%d", s, m.Kind, m.Start, m.End)
			}
			if MayHoldCredentialText(s) {
				t.Errorf("MayHoldCredentialText(%q) = true", s)
			}
			// It is masked all the same.
			if _, ok := Find(s, 0); !ok {
				t.Errorf("Find(%q): nothing masked", s)
			}
			// Anything after the payload: a text like any other.
			for _, tail := range []string{" ", "\n", " and more", "\"", "-x"} {
				if _, ok := firstCredential([]byte(s + tail)); !ok {
					t.Errorf("Find(%q): the credential is no longer seen", s+tail)
				}
				if !MayHoldCredentialText(s + tail) {
					t.Errorf("MayHoldCredentialText(%q) = false", s+tail)
				}
			}
		}
	}
	// A credential in the header is one.
	for _, s := range []string{
		"data:text/plain;token=ghp_" + strings.Repeat("Ab1", 12) + ";base64,QUJD",
		"data:text/plain;api_key=AKIAIOSFODNN7EXAMPLE;base64,QUJD",
	} {
		if _, ok := firstCredential([]byte(s)); !ok {
			t.Errorf("Find(%q): the header's credential is not seen", s)
		}
		if !MayHoldCredentialText(s) {
			t.Errorf("MayHoldCredentialText(%q) = false", s)
		}
	}
	// A server-sent event's data line is searched.
	s := "data: {\"api_key\": \"AKIAIOSFODNN7EXAMPLE\"}"
	if _, ok := firstCredential([]byte(s)); !ok || !MayHoldCredentialText(s) {
		t.Errorf("%q: the credential is not seen", s)
	}
}

// BenchmarkDataURL: the pre-check of an 800-byte PNG data: URL, as a
// model's image stream or a chat request's image_url carries.
func BenchmarkDataURL(b *testing.B) {
	s := []byte("data:image/png;base64," + strings.Repeat(chanceB64[:96], 8))
	b.ReportAllocs()
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		if MayHoldCredentialText(s) {
			b.Fatal("true")
		}
	}
}

// TestGoogleKeyInBase64: "AIza" and more than 35 word bytes inside a base64
// text (a '+' or '/' next to the run, or a '=' after it) is no Google API
// key: the run of the py-b64 corpus's image was an e2a.secret finding. A
// key of 39 bytes is one anywhere, and a longer run that starts a word
// and is glued to text that is no base64 still is (a '+' after it is a
// URL-encoded space).
func TestGoogleKeyInBase64(t *testing.T) {
	const key = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
	for _, s := range []string{chanceB64, "x " + chanceB64, "AAAA/" + key + "Qx/AAAA", "AAAA+" + key + "Qx=="} {
		if m, ok := firstCredential([]byte(s)); ok {
			t.Errorf("Find(%q) reports %v at %d:%d", s, m.Kind, m.Start, m.End)
		}
	}
	for _, s := range []string{key, "key=" + key, "AAAA/" + key + "/AAAA", "?key=" + key + "&q=1", "\"" + key + "\"", "key=" + key + "Qx", key + "_prod key", "q=" + key + "Qx+more"} {
		if m, ok := firstCredential([]byte(s)); !ok || m.End-m.Start < 39 {
			t.Errorf("Find(%q) = %v %v, want the key", s, m, ok)
		}
		if !MayHoldCredentialText(s) {
			t.Errorf("MayHoldCredentialText(%q) = false", s)
		}
	}
}

// TestDataURLWrappedToken: a file in a data: URL that holds a token or a
// private key (an attachment of a .pem or .env file) is what it was
// before: the payload holds an encoded token prefix, so the text is
// searched as any other, and the decoded credential is reported with its
// kind. Its tail is no inert one where the prefix is in it.
func TestDataURLWrappedToken(t *testing.T) {
	for _, c := range []struct {
		file string
		kind Kind
	}{
		{pemKey + "\n", KindPrivateKey},
		{"GITHUB_TOKEN=" + ghp + "\n", KindGitHub},
		{"export OPENAI_API_KEY=" + openai + "\n", KindSK},
		{"# notes\n" + awsID + "\n", KindAWS},
	} {
		enc := base64.StdEncoding.EncodeToString([]byte(c.file))
		for _, h := range []string{"data:application/x-pem-file;base64,", "data:text/plain;charset=utf-8;base64,"} {
			s := h + enc
			m, ok := firstCredential([]byte(s))
			if !ok || m.Kind != c.kind {
				t.Errorf("Find(%q) = %v %v, want %v", s, m.Kind, ok, c.kind)
			}
			if !MayHoldCredentialText(s) {
				t.Errorf("MayHoldCredentialText(%q) = false", s)
			}
			if InertB64Tail(s, len(enc)) {
				t.Errorf("InertB64Tail(%q) = true", s)
			}
		}
	}
}

// TestMediaB64: a text that is wholly a media file's base64 (a PNG, a JPEG,
// a PDF, an MP4 … with no data: header, as Anthropic's and Gemini's image
// blocks and OpenAI's b64_json carry it) is read as a data: URL's payload:
// a credential's shape in its characters is none (masked), the pre-check
// says no, its tail is inert; what decoding it finds still is one; a text
// too short, without a magic, or with anything after the base64 is a text
// like any other.
func TestMediaB64(t *testing.T) {
	body := "iVBORw0KGgo/AKIAIOSFODNN7EXAMPLE/" + strings.Repeat("Qk1", 30)
	for _, magic := range []string{"", "/9j/4AAQSkZJRg", "R0lGODlhAQAB", "UklGRiQAAABXQVZF", "JVBERi0xLjcK", "UEsDBBQAAAAI", "H4sIAAAAAAAA", "AAAAIGZ0eXBpc29t", "GkXfo59ChoEB"} {
		s := magic + body
		if m, ok := firstCredential([]byte(s)); ok {
			t.Errorf("Find(%q) reports %v", s, m.Kind)
		}
		if MayHoldCredentialText(s) {
			t.Errorf("MayHoldCredentialText(%q) = true", s)
		}
		if _, ok := Find(s, 0); !ok {
			t.Errorf("Find(%q): nothing masked", s)
		}
		if !InertB64Tail(s, 64) {
			t.Errorf("InertB64Tail(%q) = false", s)
		}
	}
	for _, s := range []string{
		"x" + body,                              // no magic
		"iVBORw0KGgo/AKIAIOSFODNN7EXAMPLE/AAAA", // too short
		body + " and more",                      // something after it
		body + "-_",                             // the URL-safe alphabet
	} {
		if _, ok := firstCredential([]byte(s)); !ok {
			t.Errorf("Find(%q): the credential is no longer seen", s)
		}
		if !MayHoldCredentialText(s) {
			t.Errorf("MayHoldCredentialText(%q) = false", s)
		}
		if InertB64Tail(s, 16) {
			t.Errorf("InertB64Tail(%q) = true", s)
		}
	}
	// A PDF's base64 with a key in its text: decoding finds it.
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.7\n" + strings.Repeat("0 0 obj\n", 10) + "(deploy key " + ghp + ") Tj\n"))
	if m, ok := firstCredential([]byte(pdf)); !ok || m.Kind != KindGitHub {
		t.Errorf("Find(%q) = %v %v, want ghp", pdf, m.Kind, ok)
	}
	if !MayHoldCredentialText(pdf) {
		t.Errorf("MayHoldCredentialText(%q) = false", pdf)
	}
}

// TestMediaMagic holds mediaMagic (a switch on the first byte) to the list
// it is written from, mediaMagics and the ISO media box: every magic is
// one, and on random texts the two agree.
func TestMediaMagic(t *testing.T) {
	ref := func(s []byte) bool {
		for _, m := range mediaMagics {
			if at(s, 0, m) {
				return true
			}
		}
		return len(s) >= 10 && string(s[:4]) == "AAAA" && string(s[5:10]) == "GZ0eX"
	}
	for _, m := range mediaMagics {
		if s := []byte(m + "AAAA"); !mediaMagic(s) {
			t.Errorf("mediaMagic(%q) = false", s)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	const alpha = "iVBORw0KGg/9jR0lGODdhlUkEsJHT2SZxQdAAAAGZ0eXpk"
	for range 200000 {
		s := make([]byte, 1+r.IntN(12))
		for i := range s {
			s[i] = alpha[r.IntN(len(alpha))]
		}
		if mediaMagic(s) != ref(s) {
			t.Fatalf("mediaMagic(%q) = %v", s, mediaMagic(s))
		}
	}
}
