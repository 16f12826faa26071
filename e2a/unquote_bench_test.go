package e2a

import (
	"encoding/json"
	"strings"
	"testing"
)

// codeBody is code as a model streams it, JSON-escaped: an escape every
// few bytes (\n, \t, \", \\) between short plain runs.
var codeBody = strings.Repeat(`def f(x):\n\tif x == \"a\\\\b\":\n\t\treturn {\"k\": \"v\", \"path\": \"C:\\\\tmp\"}\n\treturn None\n`, 8)

// BenchmarkAppendUnquoted: the escaped strings of the py-* corpora, a
// request id with escapes (py-esc100) and Python's ASCII-escaped Chinese.
func BenchmarkAppendUnquoted(b *testing.B) {
	for _, c := range []struct{ name, body string }{
		{"id", `req-000007-f3a6/\"\u00e9\"`},
		{"cjk", `\u4e2a\u6d41\u5f0f\u56de\u7b54\u7684\u7247\u6bb5\u3002\u6a21\u578b\u6b63`},
		{"code", codeBody},
	} {
		b.Run(c.name, func(b *testing.B) {
			var dst []byte
			raw := []byte(c.body)
			for b.Loop() {
				dst = AppendUnquoted(dst[:0], raw)
			}
		})
	}
}

// TestAppendUnquotedStd: AppendUnquoted reads every escape and every
// character as encoding/json does.
func TestAppendUnquotedStd(t *testing.T) {
	for _, body := range []string{`req-000007-f3a6/\"\u00e9\"`, `\u4e2a\u6d41\u3002`, `\u0041\u007f\u0080\u07ff\u0800\uffff\ud83d\ude00\ud83d\u0041\ude00`,
		`\b\f\n\r\t\/\\\"`, "\xff\xe4\xb8", "é中😀", `\u00e9x\u00E9`,
		// Invalid UTF-8 and a backslash inside runs of eight bytes and more
		// (AppendUnquoted copies them a word at a time).
		"abcdefgh\xffijklmnop", "abcdefg\xe4\xb8zzzzzzzz", "0123456789abcdef\xc3", "abcdefghijklm\\nopq\u00e9rstuvwxyz01234é",
		// Invalid bytes, each three bytes out of one: past the room made
		// at the start, at the start, at the end, and between words.
		strings.Repeat("\xff", 40), "\xff" + strings.Repeat("a", 17) + "\xfe\xfd", strings.Repeat("ab\\n\xc3", 9) + "\xc3",
		// A word that ends in the middle of an escape, a \u escape or a
		// surrogate pair.
		"abcdefg\\nabcdefg\\u00e9abcdef\\ud83d\\ude00abcdefgh\\\\", codeBody} {
		var want string
		if err := json.Unmarshal([]byte(`"`+body+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(AppendUnquoted([]byte("pre"), []byte(body))); got != "pre"+want {
			t.Errorf("AppendUnquoted(%q) = %q, want %q", body, got, "pre"+want)
		}
	}
}

func FuzzAppendUnquoted(f *testing.F) {
	f.Add("é中😀\x00\"\\/\b\f\n\r\t\xff", `\ud83d\u0041`)
	f.Fuzz(func(t *testing.T, s, raw string) {
		b, _ := json.Marshal(s)
		for _, body := range []string{string(b[1 : len(b)-1]), raw} {
			var want string
			if json.Unmarshal([]byte(`"`+body+`"`), &want) != nil {
				continue // not a string body encoding/json reads
			}
			if got := string(AppendUnquoted(nil, []byte(body))); got != want {
				t.Fatalf("AppendUnquoted(%q) = %q, want %q", body, got, want)
			}
		}
	})
}
