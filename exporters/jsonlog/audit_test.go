package jsonlog_test

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/redact"
)

// The audit corpus (redact/testdata/audit/families.jsonl): for every credential
// family, a fake value of its documented shape (random characters), and
// near-misses that must stay as they are. Each value is planted in every
// position and encoding of auditPositions; no core of a credential may
// show in the masked text in any of its forms (auditForms).

// auditCase is one line of the corpus.
type auditCase struct {
	Name  string   `json:"name"`
	Value string   `json:"value"`
	Cores []string `json:"cores"`
	Near  bool     `json:"near"`
	// Accept says why a near-miss may be masked anyway.
	Accept string `json:"accept"`
}

func loadAudit(t testing.TB, path string) []auditCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []auditCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c auditCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// auditPosition is a value planted in a text.
type auditPosition struct{ name, text string }

// jsonInner is s as the inside of a JSON string (no HTML escaping: "&"
// stays as it is).
func jsonInner(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	o := strings.TrimSpace(b.String())
	return o[1 : len(o)-1]
}

// uEscapeAll writes every letter and digit of s as \u00XX.
func uEscapeAll(s string) string {
	var b strings.Builder
	for _, c := range jsonInner(s) {
		if c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			fmt.Fprintf(&b, "\\u%04x", c)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// auditPositions plants v in prose, at either end of a line, glued to
// punctuation, in JSON (a value, nested, a key; escaped with "\/",
// \u002F, \u003d, every letter as \u00XX), URL-encoded, in base64 of a
// line holding it, and after a newline or tab escape.
func auditPositions(v string) []auditPosition {
	j := jsonInner(v)
	b64 := base64.StdEncoding.EncodeToString([]byte("config line: " + v + "\n"))
	return []auditPosition{
		{"whole", v},
		{"prose", "upstream said: " + v + " (retrying)"},
		{"line start", v + " was rejected"},
		{"line end", "using credential " + v},
		{"parens", "(" + v + "),"},
		{"quotes", "'" + v + "';"},
		{"angle", "<" + v + ">"},
		{"brackets", "[" + v + "]."},
		{"json value", `{"note":"` + j + `"}`},
		{"json nested", `{"a":{"b":[1,"` + j + `"]}}`},
		{"json key", `{"` + j + `":true}`},
		{"json \\/", `{"note":"` + strings.ReplaceAll(j, "/", `\/`) + `"}`},
		{"json \\u002F \\u003d", `{"note":"` + strings.NewReplacer("/", `\u002F`, "=", `\u003d`, ":", `\u003a`).Replace(j) + `"}`},
		{"json \\u00XX", `{"note":"` + uEscapeAll(v) + `"}`},
		{"json in json", `{"body":"{\"note\":\"` + strings.ReplaceAll(strings.ReplaceAll(j, `\`, `\\`), `"`, `\"`) + `\"}"}`},
		{"url-encoded", "https://app.example.com/cb?state=" + url.QueryEscape(v) + "&x=1"},
		{"base64 line", "blob " + b64 + " end"},
		{"newline escape", `first line\n` + j + `\nlast line`},
		{"tab escape", `col\t` + j + `\tcol`},
		{"real newline", "first line\n" + v + "\nlast line"},
	}
}

// auditForms are the forms in which a core could show: as is, JSON-
// and URL-escaped, every letter as \u00XX, and its base64 (both
// alphabets, each of the three alignments: the characters the core alone
// decides).
func auditForms(core string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if len(f) >= 10 && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	add(core)
	add(jsonInner(core))
	add(strings.ReplaceAll(jsonInner(core), "/", `\/`))
	add(uEscapeAll(core))
	add(url.QueryEscape(core))
	if len(core) >= 12 {
		for r := 0; r < 3; r++ {
			enc := base64.StdEncoding.EncodeToString(append(make([]byte, r), core...))
			first := (8*r + 5) / 6          // the first character no byte before the core decides
			last := 8 * (r + len(core)) / 6 // the characters wholly inside the core
			if last > first {
				e := enc[first:last]
				add(e)
				add(strings.NewReplacer("+", "-", "/", "_").Replace(e))
			}
		}
	}
	return out
}

// auditLeak returns the first form of a core of c found in out.
func auditLeak(c auditCase, out string) (string, bool) {
	for _, core := range c.Cores {
		for _, f := range auditForms(core) {
			if strings.Contains(out, f) {
				return f, true
			}
		}
	}
	return "", false
}

func TestAuditCorpus(t *testing.T) {
	key := []byte("audit-key")
	m := redact.New(key)
	red := jsonlog.NewRedactor(jsonlog.ContentMask, 0, key)
	paths := map[string]func(string) string{
		"Masker.Text":      m.Text,
		"jsonlog.MaskText": func(s string) string { return string(red.MaskText(nil, []byte(s))) },
	}
	for pname, mask := range paths {
		t.Run(pname, func(t *testing.T) { auditPath(t, mask) })
	}
}

func auditPath(t *testing.T, mask func(string) string) {
	cases := loadAudit(t, "../../redact/testdata/audit/families.jsonl")
	leaks, planted, fps, nears, creds := 0, 0, 0, 0, 0
	for _, c := range cases {
		for _, p := range auditPositions(c.Value) {
			out := mask(p.text)
			if c.Near {
				nears++
				if out == p.text {
					continue
				}
				fps++
				if cm, ok := firstCredential(p.text); ok && c.Accept == "" {
					// A false e2a.secret finding, whatever the position.
					creds++
					t.Errorf("near-miss %q (%s) holds a credential to Find: %s %q", c.Value, p.name, cm.Kind, p.text[cm.Start:cm.End])
				} else if ok {
					creds++
				} else if c.Accept == "" && p.name != "base64 line" {
					// (A base64 blob of 32+ characters is masked as
					// high_entropy whatever it encodes.)
					t.Errorf("near-miss %q (%s) is masked: %q", c.Value, p.name, out)
				}
				continue
			}
			planted++
			if cm, ok := firstCredential(p.text); ok && (!redact.MayHoldCredentialText(p.text) || !redact.MayHoldCredential(p.text)) {
				t.Errorf("%s (%s): Find reports %s, the pre-checks pass it by: %q", c.Name, p.name, cm.Kind, p.text)
			}
			if f, ok := auditLeak(c, out); ok {
				leaks++
				t.Errorf("%s (%s): %q shows in %q", c.Name, p.name, f, out)
			}
			if again := mask(out); again != out {
				t.Errorf("%s (%s): masking twice changes %q to %q", c.Name, p.name, out, again)
			}
		}
	}
	t.Logf("%d plantings, %d leaks; %d near-miss texts, %d changed, %d of them holding a credential to Find", planted, leaks, nears, fps, creds)
}

// firstCredential is the first match of Find in s that is a credential.
func firstCredential(s string) (redact.Match, bool) {
	for from := 0; from < len(s); {
		m, ok := redact.Find(s, from)
		if !ok {
			break
		}
		if m.Kind.Credential() {
			return m, true
		}
		from = m.End
	}
	return redact.Match{}, false
}
