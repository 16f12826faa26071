package redact

import "testing"

// TestEmphasisKey: a credential key in a Markdown emphasis or code span
// before its colon ("**Password**: <pw>") was not read (the value printed
// in every output); its value is masked now, and the pre-check passes the
// text. Unbalanced or empty marks, and plain keys, stay as they were.
func TestEmphasisKey(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"**Password**: Xk9#mQ2vL8", "Xk9#mQ2vL8"},
		{"- **Password**: hunter2", "hunter2"},
		{"*Password*: Xk9#mQ2vL8", "Xk9#mQ2vL8"},
		{"`api_key`: a8f3k2m9x7q1w5e4r6t8y0u2", "a8f3k2m9x7q1w5e4r6t8y0u2"},
		{"**API Key**: a8f3k2m9x7q1w5e4r6t8y0u2", "a8f3k2m9x7q1w5e4r6t8y0u2"},
		{"1. **Root password**: Tr0ub4dor&3 (change it)", "Tr0ub4dor&3"},
	} {
		m, ok := Find([]byte(c.in), 0)
		got := ""
		if ok {
			got = c.in[m.Start:m.End]
		}
		if got != c.want {
			t.Errorf("Find(%q) = %q (%v), want %q", c.in, got, ok, c.want)
		}
		if !MayHoldCredentialText([]byte(c.in)) {
			t.Errorf("MayHoldCredentialText(%q) = false: the pre-check turns away a text Find masks", c.in)
		}
	}
	for _, s := range []string{
		"**Note**: Xk9#mQ2vL8 is the build id",
		"***Password**: Xk9#mQ2vL8x",
		"Password**: Xk9#mQ2vL8",
		"a*b*: c",
		"**Primary Key**: user_id",
		"**Password policy**: at least 12 characters",
	} {
		if m, ok := Find([]byte(s), 0); ok && m.Kind == KindKeyValue {
			t.Errorf("Find(%q) = %q as a key's value, want no pair", s, s[m.Start:m.End])
		}
	}
}
