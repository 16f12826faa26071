package jsonlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/e2atap/e2atap/e2a"
)

const fuzzSecret = "sk-FuzzPlanted0123456789"

func FuzzRedact(f *testing.F) {
	for _, r := range secretRecords() {
		f.Add([]byte(r))
	}
	for _, s := range []string{`{}`, `[]`, `"x"`, `{"a":1e5}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", `{"body":{"delta":[1,{"x":"y"}]}}`,
		`{"a":"data:,x a@b.co +8613912345678 Bearer abcdefgh1234"}`, `{"a":` + `[[[[[[[[]]]]]]]]` + `}`, `{"a" : -0.0E+1 }`, `{"a":tru}`} {
		f.Add([]byte(s))
	}
	r := NewRedactor(ContentMask, 4096, testKey)
	keep := NewRedactor(ContentKeep, 0, testKey)
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		obj := valid && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{"))
		for _, red := range []*Redactor{r, keep} {
			out, _, err := red.Redact(nil, data)
			switch {
			case obj && err != nil:
				t.Fatalf("valid object rejected: %v", err)
			case valid && !obj && !errors.Is(err, e2a.ErrNotObject):
				t.Fatalf("valid non-object: %v", err)
			case !valid && err == nil:
				t.Fatalf("invalid JSON accepted: %q", out)
			case err == nil && !json.Valid(out):
				t.Fatalf("output not JSON: %q -> %q", data, out)
			}
		}
		// The memos a state keeps across records (memo.go) only save work:
		// r and keep have redacted every input before this one, a new
		// Redactor none, and they write the same.
		for _, red := range []*Redactor{r, keep} {
			warm, _, werr := red.Redact(nil, data)
			fresh, _, ferr := NewRedactor(red.content, red.maxBytes, testKey).Redact(nil, data)
			if !bytes.Equal(warm, fresh) || (werr == nil) != (ferr == nil) {
				t.Fatalf("%q: %q (%v) after other records, %q (%v) by a new Redactor", data, warm, werr, fresh, ferr)
			}
		}
		if bytes.Contains(data, []byte("FuzzPlanted")) {
			return
		}
		// The input as text beside a planted key, and (if an object) as a
		// value beside a planted key: the key never survives.
		s, _ := json.Marshal(string(data) + " " + fuzzSecret)
		recs := [][]byte{append(append([]byte(`{"note":`), s...), '}')}
		if obj {
			recs = append(recs, append(append([]byte(`{"p":"`+fuzzSecret+`","d":`), data...), '}'))
		}
		for _, rec := range recs {
			for _, red := range []*Redactor{r, keep} {
				out, _, err := red.Redact(nil, rec)
				if err != nil {
					t.Fatalf("%v: %s", err, rec)
				}
				if bytes.Contains(out, []byte("FuzzPlanted")) {
					t.Fatalf("planted secret survived: %s -> %s", rec, out)
				}
			}
		}
	})
}
