package jsonlog_test

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/internal/secretaudit"
	"github.com/e2atap/e2atap/redact"
)

// The audit corpus (redact/testdata/audit/families.jsonl): for every credential
// family, a fake value of its documented shape (random characters), and
// near-misses that must stay as they are. Each value is planted in every
// position and encoding of auditPositions; no core of a credential may
// show in the masked text in any of its forms (auditForms).

func loadAudit(t testing.TB, path string) []secretaudit.Family {
	t.Helper()
	fams, err := secretaudit.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// auditPosition is a value planted in a text.
type auditPosition struct{ name, text string }

// auditPositions plants v in prose, at either end of a line, glued to
// punctuation, in JSON (a value, nested, a key; escaped with "\/",
// \u002F, \u003d, every letter as \u00XX), URL-encoded, in base64 of a
// line holding it, and after a newline or tab escape.
func auditPositions(v string) []auditPosition {
	j := secretaudit.JSONInner(v)
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
		{"json \\u00XX", `{"note":"` + secretaudit.UEscapeAll(v) + `"}`},
		{"json in json", `{"body":"{\"note\":\"` + strings.ReplaceAll(strings.ReplaceAll(j, `\`, `\\`), `"`, `\"`) + `\"}"}`},
		{"url-encoded", "https://app.example.com/cb?state=" + url.QueryEscape(v) + "&x=1"},
		{"base64 line", "blob " + b64 + " end"},
		{"newline escape", `first line\n` + j + `\nlast line`},
		{"tab escape", `col\t` + j + `\tcol`},
		{"real newline", "first line\n" + v + "\nlast line"},
	}
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
		runs := secretaudit.NewPartial([]secretaudit.Family{c})
		for _, p := range auditPositions(c.Value) {
			out := mask(p.text)
			if c.Near {
				nears++
				if out == p.text {
					continue
				}
				fps++
				if cm, ok := secretaudit.FirstCredential(p.text); ok && c.Accept == "" {
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
			if cm, ok := secretaudit.FirstCredential(p.text); ok && (!redact.MayHoldCredentialText(p.text) || !redact.MayHoldCredential(p.text)) {
				t.Errorf("%s (%s): Find reports %s, the pre-checks pass it by: %q", c.Name, p.name, cm.Kind, p.text)
			}
			if hits := runs.Find([]byte(out)); len(hits) > 0 {
				leaks++
				t.Errorf("%s (%s): a run of %d characters or more of a core shows: …%s", c.Name, p.name, secretaudit.PartialRun, hits[0].Context([]byte(out)))
			}
			if again := mask(out); again != out {
				t.Errorf("%s (%s): masking twice changes %q to %q", c.Name, p.name, out, again)
			}
		}
	}
	t.Logf("%d plantings, %d leaks; %d near-miss texts, %d changed, %d of them holding a credential to Find", planted, leaks, nears, fps, creds)
}
