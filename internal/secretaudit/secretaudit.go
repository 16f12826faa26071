// Package secretaudit reads the redaction audit corpus
// (redact/testdata/audit/families.jsonl: a fake value of the documented
// shape of every credential family, and near-misses) and says in which
// forms a planted credential could show in an output. It is for tests: the
// library's (exporters/jsonlog) and the binary's (cmd/e2atap) hold every
// output to the same corpus and the same forms.
package secretaudit

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"

	"github.com/e2atap/e2atap/redact"
)

// Family is one line of the corpus.
type Family struct {
	Name  string   `json:"name"`
	Value string   `json:"value"`
	Cores []string `json:"cores"` // the secret parts of Value
	Near  bool     `json:"near"`  // a near-miss: must stay as it is
	// Accept says why a near-miss may be masked anyway.
	Accept string `json:"accept"`
}

// Load reads the corpus at path.
func Load(path string) ([]Family, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Family
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		var a Family
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, n, err)
		}
		out = append(out, a)
	}
	return out, sc.Err()
}

// JSONInner is s as the inside of a JSON string, without HTML escaping
// ("&" stays as it is).
func JSONInner(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	o := strings.TrimSpace(b.String())
	return o[1 : len(o)-1]
}

// UEscapeAll is JSONInner(s) with every letter and digit written as
// \u00XX.
func UEscapeAll(s string) string {
	var b strings.Builder
	esc := false
	for _, c := range JSONInner(s) {
		if !esc && c < 0x80 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			fmt.Fprintf(&b, "\\u%04x", c)
		} else {
			b.WriteRune(c)
		}
		// (The letter of an escape, "\n", is left as it is: escaped, it
		// spelled a backslash and the text "u006e".)
		esc = !esc && c == '\\'
	}
	return b.String()
}

// Forms are the forms in which a core could show: as is, JSON-escaped
// (with and without HTML escaping, with "\/"), every letter as \u00XX,
// URL-encoded, and its base64 (both alphabets, each of the three
// alignments: the characters the core alone decides). Forms under 10
// bytes are left out (they would match by chance).
func Forms(core string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(f string) {
		if len(f) >= 10 && !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	add(core)
	add(JSONInner(core))
	html, _ := json.Marshal(core)
	add(string(html[1 : len(html)-1]))
	add(strings.ReplaceAll(JSONInner(core), "/", `\/`))
	add(UEscapeAll(core))
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

// Leak returns the first form of one of cores found in out.
func Leak(cores []string, out string) (string, bool) {
	for _, core := range cores {
		for _, f := range Forms(core) {
			if strings.Contains(out, f) {
				return f, true
			}
		}
	}
	return "", false
}

// FirstCredential is the first match of redact.Find in s that is a
// credential.
func FirstCredential(s string) (redact.Match, bool) {
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
