package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/internal/secretaudit"
)

// Credentials in their own tools' shapes, with no key=value separator and
// no URL scheme (a .pgpass line, an Oracle connect string, a Fly.io
// token; a password in prose with no digit), none of which redact found
// before h-secrets3, through validate: in a delta, a tool call's arguments
// (JSON text in a string) and an error message. Every stream but the
// prose one is an e2a.secret finding, and no password shows in the
// findings or the record log (content kept). (Not in the
// audit corpus: its URL-encoded position is not a shape these are found
// in.)
func TestToolShapedCredentialsOffline(t *testing.T) {
	fams := []secretaudit.Family{
		{Name: "pgpass", Value: "db.internal.example:5432:orders:app:Nq7vR2xLp9Zt", Cores: []string{"Nq7vR2xLp9Zt"}},
		{Name: "pgpass_wildcard", Value: "localhost:*:*:postgres:Wm4kT8sQ1yHc", Cores: []string{"Wm4kT8sQ1yHc"}},
		{Name: "oracle_ezconnect", Value: "scott/Jd5fG7hK2mPq@//db.example.com:1521/ORCLPDB1", Cores: []string{"Jd5fG7hK2mPq"}},
		{Name: "oracle_sqlplus", Value: "sqlplus -s system/Xb3nV6cZ8wLr@orcl @report.sql", Cores: []string{"Xb3nV6cZ8wLr"}},
		{Name: "oracle_jdbc_thin", Value: "jdbc:oracle:thin:app/Pe9rT4yU1iOa@db:1521:ORCL", Cores: []string{"Pe9rT4yU1iOa"}},
		{Name: "fly", Value: "FlyV1 fm2_lJPECAAAAAAAAMmhxBCw0ZAhQW3lzY0NbJEjelMSA9lpER2YaXWwAPXPnVFmBLNIjvj0xCi01D29FM1JkQx1d==,fm2_lJPETkJ4YAo9mCwRfTgQpL2sDv8NmXc7BzKe1RyWq5Hu0GtIjOa3FlVs6PdYx",
			Cores: []string{"lJPECAAAAAAAAMmhxBCw0ZAhQW3lzY0NbJEjelMSA9lpER2YaXWwAPXPnVFmBLNIjvj0xCi01D29FM1JkQx1d", "lJPETkJ4YAo9mCwRfTgQpL2sDv8NmXc7BzKe1RyWq5Hu0GtIjOa3FlVs6PdYx"}},
		// Masked, no finding: a password in prose with no digit.
		{Name: "prose_no_digit", Value: "the password is correcthorsebatterystaple.", Cores: []string{"correcthorsebatterystaple"}},
	}
	finding := len(fams) - 1 // the families before it are e2a.secret findings
	ts := "2026-12-06T00:00:00Z"
	var b bytes.Buffer
	for n, a := range fams {
		rid := fmt.Sprintf("tool-%02d", n)
		resp := func(seq int, final bool, status, kind string, body map[string]any) string {
			return jsonLine(map[string]any{"protocol_version": "1.0", "response_id": fmt.Sprintf("resp-%s-%d", rid, seq), "request_id": rid,
				"sequence": seq, "is_final": final, "status": status, "response_kind": kind, "timestamp": ts,
				"provenance": map[string]any{"source_protocol": "e2a"}, "body": body})
		}
		args, _ := json.Marshal(map[string]any{"command": "cat ~/.config", "stdout": "first\n" + a.Value + "\n"})
		for _, l := range []string{
			jsonLine(map[string]any{"protocol_version": "1.0", "request_id": rid, "session_id": "sess-" + rid, "channel": "web",
				"method": "chat.send", "timestamp": ts, "identity_origin": "user", "params": map[string]any{"query": "hi"}}),
			resp(0, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": "found it: " + a.Value + "\nok"}),
			resp(1, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "tool", "delta": string(args)}),
			// split across two chunks
			resp(2, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": "split " + a.Value[:len(a.Value)/2]}),
			resp(3, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": a.Value[len(a.Value)/2:] + " end"}),
			resp(4, true, "failed", "e2a.error", map[string]any{"code": "upstream", "message": "connect failed (" + a.Value + ")"}),
		} {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	capture := filepath.Join(t.TempDir(), "tools.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, recs := validateKeep(t, fams, capture)
	secretStreams(t, fams[:finding], stdout, "tool-%02d")
	if !strings.Contains(string(recs), "******(fp:") {
		t.Error("the record log masks nothing")
	}
}
