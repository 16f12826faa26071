package validate

import (
	"strings"
	"testing"
)

// TestMessagesDoNotQuoteRecordValues: a value of a record that is not a
// word of the protocol's vocabulary (here: credential shapes no detector
// knows, and a phone number) is never quoted in a finding message, in any
// field a message names; vocabulary words and date-times still are.
func TestMessagesDoNotQuoteRecordValues(t *testing.T) {
	const (
		secret = "AKIAZ7QXLEAKEDKEY123"
		phone  = "+86 139 1234 5678"
	)
	lines := []string{
		req("identity_origin", secret, "timestamp", phone),
		resp(0, "status", secret, "response_kind", "sk-proj-"+secret, "timestamp", secret, "protocol_version", phone),
		resp(1, "body.delta_kind", secret, "response_id", "r-"+secret),
		resp(2, "body.delta_kind", secret, "response_id", "r-"+secret),
		resp(3, "response_kind", "a2a.stream_event", "body", map[string]any{"branch": secret, "payload": map[string]any{}}),
		resp(4, "response_kind", "acp.session_update", "body", map[string]any{"sessionUpdate": secret}),
		resp(5, "status", "success", "timestamp", "2026-03-29 12:00:00"),
		`{"jsonrpc":"` + secret + `","id":1,"result":{}}`,
	}
	col := runCapture(t, ProfileSpec, []byte(strings.Join(lines, "\n")+"\n"), FormatJSONL)
	var all strings.Builder
	for _, f := range col.findings {
		all.WriteString(f.Rule + ": " + f.Message + "\n")
	}
	out := all.String()
	for _, leak := range []string{secret, "139 1234", "sk-proj"} {
		if strings.Contains(out, leak) {
			t.Errorf("a finding message quotes %q:\n%s", leak, out)
		}
	}
	for _, want := range []string{
		`status "******(len:20)" is not`, `response_kind "******(len:28)"`, `delta_kind "******(len:20)"`,
		`branch "******(len:20)"`, `variant "******(len:20)"`, `identity_origin "******(len:20)"`,
		`jsonrpc is "******(len:20)"`, `response_id "******(len:22)" seen before`,
		`status "success" is not`, `timestamp "2026-03-29 12:00:00" is not`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no message says %s:\n%s", want, out)
		}
	}
}
