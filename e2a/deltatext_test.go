package e2a

import (
	"bytes"
	"testing"
)

// checkDeltaText fails when DeltaText holds anything but RawDelta
// unescaped.
func checkDeltaText(t testing.TB, data []byte, r *Record) {
	t.Helper()
	text, ok := r.DeltaText()
	if !ok {
		return
	}
	raw, esc, rok := r.RawDelta()
	if !rok || !esc {
		t.Fatalf("%q: DeltaText %q with RawDelta %q %v %v", data, text, raw, esc, rok)
	}
	if want := AppendUnquoted(nil, raw); !bytes.Equal(text, want) {
		t.Fatalf("%q: DeltaText %q, RawDelta unescaped %q", data, text, want)
	}
}

// TestDeltaText: the delta that Scan unescaped for its pre-check is kept
// unescaped, and only that record's, only that delta's: a record that
// follows (with no delta, a plain one, one with no anchor byte, or a second
// "delta" key) does not show the one before.
func TestDeltaText(t *testing.T) {
	const esc = `{"response_kind": "e2a.chunk", "body": {"delta": "{\"path\": \"/srv/a1.py\", \"n\": 12}"}}`
	r := new(Record)
	if err := Scan([]byte(esc), r); err != nil {
		t.Fatal(err)
	}
	if text, ok := r.DeltaText(); !ok || string(text) != `{"path": "/srv/a1.py", "n": 12}` {
		t.Fatalf("DeltaText = %q %v", text, ok)
	}
	for _, next := range []string{
		`{"response_kind": "e2a.chunk", "body": {}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta": "plain 1"}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta": "\u4f60\u597d"}}`,
		`{"response_kind": "e2a.chunk"}`,
		`{"response_kind": "e2a.chunk", "body": {"delta": "{\"a\": 1}", "delta": "\u4f60"}}`,
		`not json`,
	} {
		Scan([]byte(esc), r)
		Scan([]byte(next), r)
		checkDeltaText(t, []byte(next), r)
		if text, ok := r.DeltaText(); ok {
			t.Errorf("%q after %q: DeltaText %q", next, esc, text)
		}
	}
	var s Record
	for _, c := range scanCases {
		Scan([]byte(c), &s)
		checkDeltaText(t, []byte(c), &s)
	}
}

// TestRawDeltaEsc: RawDelta's esc says whether the delta as written holds
// a backslash (skipString's, not a search of its own), also in a record
// reused after one whose delta was escaped, or plain, or not a string, on
// both paths.
func TestRawDeltaEsc(t *testing.T) {
	defer func(v bool) { vectorScan = v }(vectorScan)
	recs := []string{
		`{"response_kind": "e2a.chunk", "body": {"delta_kind": "text", "delta": "a \"quoted\" word and a long enough tail"}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta_kind": "text", "delta": "plain text, long enough for the vector pass"}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta_kind": "text", "delta": "ends in an escape, long enough \u4e2d"}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta_kind": "text", "delta": {"event_type": "keepalive"}}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta": "\\", "delta": "x"}}`,
		`{"response_kind": "e2a.chunk", "body": {"delta": "x", "delta": "\n"}}`,
	}
	for _, v := range []bool{false, haveKernel} {
		vectorScan = v
		r := new(Record)
		for range 2 {
			for _, rec := range recs {
				if err := Scan([]byte(rec), r); err != nil {
					t.Fatalf("%s: %v", rec, err)
				}
				raw, esc, ok := r.RawDelta()
				if want := bytes.IndexByte(raw, '\\') >= 0; ok && esc != want {
					t.Errorf("vector %v, %s: RawDelta %q esc %v, want %v", v, rec, raw, esc, want)
				}
			}
		}
	}
}
