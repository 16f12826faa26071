package secretaudit

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"strings"
)

// PartialRun is the length of the shortest run of a secret's characters
// that counts as a leak: half a token in a live view, the first twelve
// characters of a password in an error message. Ten characters of a
// random core are not met by chance in an output.
const PartialRun = 10

// Partial finds, in an output, any run of PartialRun consecutive
// characters of a core in any of the forms Forms knows (as is,
// JSON-escaped, \u00XX-spelled, URL-encoded once or twice, and the
// characters of its base64 that the run alone decides), where Leak finds
// whole cores only. It indexes every form by its first PartialRun bytes,
// so that an output is read once whatever the number of cores.
type Partial struct {
	index map[string][]partialForm
}

type partialForm struct {
	form   string
	family string
}

// PartialHit is one leak: the family, where in the output, and a
// fingerprint of the form found (never the form itself: a test failure
// message must not print a secret).
type PartialHit struct {
	Family string
	At     int
	Len    int
	FP     string
}

// NewPartial indexes every run of every core of fams. A run that the
// cores of two families share ("0123456789" in the fake values of a
// hand-written corpus) is left out: it says neither leaked.
func NewPartial(fams []Family) *Partial {
	p := &Partial{index: map[string][]partialForm{}}
	seen := map[string]bool{}
	owner := map[string]string{}
	for _, a := range fams {
		for _, core := range a.Cores {
			for i := 0; i+PartialRun <= len(core); i++ {
				w := core[i : i+PartialRun]
				if o, ok := owner[w]; ok && o != a.Name {
					owner[w] = "\x00"
				} else if !ok {
					owner[w] = a.Name
				}
			}
		}
	}
	for _, a := range fams {
		for _, core := range a.Cores {
			for i := 0; i+PartialRun <= len(core); i++ {
				if owner[core[i:i+PartialRun]] != a.Name {
					continue
				}
				for _, f := range runForms(core[i : i+PartialRun]) {
					if len(f) < PartialRun || seen[a.Name+"\x00"+f] {
						continue
					}
					seen[a.Name+"\x00"+f] = true
					k := f[:PartialRun]
					p.index[k] = append(p.index[k], partialForm{f, a.Name})
				}
			}
		}
	}
	return p
}

// runForms are the forms of one run w of a core.
func runForms(w string) []string {
	j := JSONInner(w)
	html, _ := json.Marshal(w)
	out := []string{w, j, string(html[1 : len(html)-1]), strings.ReplaceAll(j, "/", `\/`), JSONInner(j),
		UEscapeAll(w), url.QueryEscape(w), url.PathEscape(w), url.QueryEscape(url.QueryEscape(w))}
	for r := 0; r < 3; r++ {
		enc := base64.StdEncoding.EncodeToString(append(make([]byte, r), w...))
		first, last := (8*r+5)/6, 8*(r+len(w))/6
		if last > first {
			e := enc[first:last]
			out = append(out, e, strings.NewReplacer("+", "-", "/", "_").Replace(e))
		}
	}
	return out
}

// Find returns the first hit of each family in out.
func (p *Partial) Find(out []byte) []PartialHit {
	var hits []PartialHit
	done := map[string]bool{}
	for i := 0; i+PartialRun <= len(out); i++ {
		fs, ok := p.index[string(out[i:i+PartialRun])]
		if !ok {
			continue
		}
		for _, f := range fs {
			if done[f.family] || !bytes.HasPrefix(out[i:], []byte(f.form)) {
				continue
			}
			done[f.family] = true
			sum := sha256.Sum256([]byte(f.form))
			hits = append(hits, PartialHit{Family: f.family, At: i, Len: len(f.form), FP: hex.EncodeToString(sum[:6])})
		}
	}
	return hits
}

// Context is the text before a hit and the hit's length and
// fingerprint, for a failure message: what follows a hit may be the rest
// of the secret, and what comes before holds fewer than PartialRun of its
// characters in the form found (the hit is the first in the output).
func (h PartialHit) Context(out []byte) string {
	return string(out[max(0, h.At-60):h.At]) + "<leak " + h.FP + ", " + itoa(h.Len) + " bytes>"
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
