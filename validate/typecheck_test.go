package validate

import (
	"encoding/json"
	"testing"
)

// TestResponseTypeMessages: the checks that a response's required fields
// are there and its object and string fields are of their types (their
// loops run only when the set of the fields' types says one may fire)
// name every field that is wrong, in the catalogue's order, and nothing
// for a record that is right.
func TestResponseTypeMessages(t *testing.T) {
	cases := []struct {
		name string
		line string
		want map[string]string // rule → message
	}{
		{"clean", final(0), nil},
		{"clean-nulls", final(0, "metadata", json.RawMessage("null"), "session_id", json.RawMessage("null")), nil},
		{"strings", final(0, "response_id", 7, "session_id", map[string]any{}),
			map[string]string{"e2a.type": "response_id is not a string and session_id is not a string"}},
		{"request_id", final(0, "request_id", true),
			map[string]string{"e2a.type": "request_id is not a string"}},
		{"objects", final(0, "metadata", []any{}, "channel_context", "x", "projections", 1),
			map[string]string{"e2a.type": "metadata is not an object, projections is not an object and channel_context is not an object"}},
		{"body", final(0, "body", "b"),
			map[string]string{"e2a.type": "body is not an object"}},
		{"missing", final(0, "timestamp", nil, "provenance", json.RawMessage("null"), "protocol_version", nil),
			map[string]string{"e2a.required": "missing or null: protocol_version, timestamp and provenance"}},
		{"missing-one", final(0, "response_id", nil),
			map[string]string{"e2a.required": "missing or null: response_id"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			col := runCapture(t, ProfileSpec, []byte(c.line+"\n"), FormatJSONL)
			got := map[string]string{}
			for _, f := range col.findings {
				if f.Index == 1 {
					got[f.Rule] = f.Message
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("findings %v, want %v", got, c.want)
			}
			for r, m := range c.want {
				if got[r] != m {
					t.Errorf("%s: %q, want %q", r, got[r], m)
				}
			}
		})
	}
}
