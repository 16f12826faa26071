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

// TestCJKLabelledCredentialsOffline: credentials labelled in Chinese,
// Japanese and Korean, and an ASCII key before a full-width colon, each
// printed by every output before (a CJK label held no byte the redactor
// stopped at), through validate as the reference sends them (json.dumps'
// ensure_ascii: \uXXXX escapes) and as UTF-8: in a delta, in a tool
// result's JSON text (also under a CJK key), split across two chunks
// (inside the value, and between the label and the value), and in an
// error message. Every stream is an e2a.secret finding; no
// value shows in the findings, stderr or the record log (content kept).
func TestCJKLabelledCredentialsOffline(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	fams := []secretaudit.Family{
		{Name: "zh_colon", Value: "数据库密码：Qm7vT2xLp9ZtRk4sWn8cHy3b", Cores: []string{"Qm7vT2xLp9ZtRk4sWn8cHy3b"}},
		{Name: "zh_ascii_colon", Value: "API密钥: Vd3kP8wZq1LmXr6tNs9bJc2f", Cores: []string{"Vd3kP8wZq1LmXr6tNs9bJc2f"}},
		{Name: "zh_copula", Value: "访问令牌为 Ht5nB2qWz8KcLp4xMv7sRd1g", Cores: []string{"Ht5nB2qWz8KcLp4xMv7sRd1g"}},
		{Name: "zh_trad", Value: "密碼＝Gw2rN6yTq9BvLk3zXc8mPs5h", Cores: []string{"Gw2rN6yTq9BvLk3zXc8mPs5h"}},
		{Name: "ja", Value: "パスワードは Kx4tM9pRw2ZnQv7cLb3sHd8f です", Cores: []string{"Kx4tM9pRw2ZnQv7cLb3sHd8f"}},
		{Name: "ko", Value: "비밀번호: Fz8qL3mTx6WpNc1vRk9bYs4d", Cores: []string{"Fz8qL3mTx6WpNc1vRk9bYs4d"}},
		{Name: "fullwidth_key", Value: "db_password：Rj6wK1nZv4TqLm8xPc2sBh7g", Cores: []string{"Rj6wK1nZv4TqLm8xPc2sBh7g"}},
	}
	ts := "2026-12-07T00:00:00Z"
	var b bytes.Buffer
	for n, a := range fams {
		rid := fmt.Sprintf("cjk-%02d", n)
		resp := func(seq int, final bool, status, kind string, body map[string]any) map[string]any {
			return map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid,
				"sequence": seq, "is_final": final, "status": status, "response_kind": kind, "timestamp": ts,
				"provenance": map[string]any{"source_protocol": "e2a"}, "body": body}
		}
		args, _ := json.Marshal(map[string]any{"command": "cat config.txt", "stdout": "第一行\n" + a.Value + "\n", "数据库密码": a.Cores[0]})
		half := len(a.Value) / 2 // inside the value: every label is shorter than it
		for k, r := range []map[string]any{
			resp(0, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": "好的，" + a.Value + "\n请妥善保管。"}),
			resp(1, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "tool", "delta": string(args)}),
			resp(2, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": "split " + a.Value[:half]}),
			resp(3, false, "in_progress", "e2a.chunk", map[string]any{"delta_kind": "text", "delta": a.Value[half:] + " end"}),
			resp(4, true, "failed", "e2a.error", map[string]any{"code": "upstream", "message": "连接失败（" + a.Value + "）"}),
		} {
			var line []byte
			if (n+k)%2 == 0 {
				line, _ = json.Marshal(r) // UTF-8, as json.dumps(ensure_ascii=False)
			} else {
				line = asciiJSON(t, r)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	// Split between the label and its value: the first delta holds no
	// printable ASCII, or only before the label ("数据库密码：" | "<pw>").
	for n, a := range fams {
		rid := fmt.Sprintf("cjkcut-%02d", n)
		cut := strings.Index(a.Value, a.Cores[0])
		for k, r := range []map[string]any{
			{"delta_kind": "text", "delta": "好的，" + a.Value[:cut]},
			{"delta_kind": "text", "delta": a.Value[cut:]},
		} {
			b.Write(asciiJSON(t, map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": k,
				"is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": ts, "provenance": map[string]any{}, "body": r}))
			b.WriteByte('\n')
		}
		b.Write(asciiJSON(t, map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": 2,
			"is_final": true, "status": "succeeded", "response_kind": "e2a.complete", "timestamp": ts, "provenance": map[string]any{}, "body": map[string]any{"result": map[string]any{}}}))
		b.WriteByte('\n')
	}
	capture := filepath.Join(t.TempDir(), "cjk.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, recs := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, "cjk-%02d")
	secretStreams(t, fams, stdout, "cjkcut-%02d")
	if n := bytes.Count(recs, []byte("******(fp:")); n < 5*len(fams) {
		t.Errorf("the record log has %d masks, want %d at least", n, 5*len(fams))
	}
}

// asciiJSON is v as Python's json.dumps writes it by default
// (ensure_ascii): every non-ASCII character a \uXXXX escape (UTF-16).
func asciiJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, r := range string(raw) {
		switch {
		case r < 0x80:
			out.WriteRune(r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.Bytes()
}

// TestCJKSeparatorEscapedValueWithoutAnchor: a CJK-labelled credential
// whose value holds no byte the redactor stops at (lower-case letters
// only: no digit, '-', '_', 'w', no change of case inside) written by json.dumps' default, ensure_ascii, so
// that the label and its separator are \uXXXX escapes ("\u5bc6\u7801
// \uff1aKqzmpx…"). The record log masked it, but the scan's gate for an
// escaped string skipped every escape at or above U+0080, the separator's
// too, and no e2a.secret finding was made: five of the first six streams
// had none (in UTF-8, all six had one). A colon after the copula ("您的密码
// 为：<pw>", your password is: …) was not read at all, in either form.
// Each stream, one record, is a finding now, ensure_ascii and UTF-8; no
// value shows in any output.
func TestCJKSeparatorEscapedValueWithoutAnchor(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	fams := []secretaudit.Family{
		{Name: "zh_fullwidth_colon", Value: "密码：Kqzmpxtrlv", Cores: []string{"Kqzmpxtrlv"}},
		{Name: "zh_db_fullwidth_colon", Value: "数据库密码：pzqkrtnvlx", Cores: []string{"pzqkrtnvlx"}},
		{Name: "zh_trad_fullwidth_equals", Value: "密碼＝htqznvkrpl", Cores: []string{"htqznvkrpl"}},
		{Name: "ja_fullwidth_colon", Value: "パスワード：zkqtrmnvpl", Cores: []string{"zkqtrmnvpl"}},
		{Name: "ko_fullwidth_colon", Value: "비밀번호：mqzkrtnvxl", Cores: []string{"mqzkrtnvxl"}},
		{Name: "ascii_key_fullwidth_colon", Value: "password：nvkqzrtmpl", Cores: []string{"nvkqzrtmpl"}},
		// A colon after the copula ("your password is: …"): printed in
		// UTF-8 too before, by every output.
		{Name: "zh_copula_fullwidth_colon", Value: "您的密码为：Xk9mP2qLw7", Cores: []string{"Xk9mP2qLw7"}},
		{Name: "zh_copula_ascii_colon", Value: "初始密码是: Rt4vN8kQz2", Cores: []string{"Rt4vN8kQz2"}},
		{Name: "zh_copula_colon_letters", Value: "密码为：kzqmtrvnpx", Cores: []string{"kzqmtrvnpx"}},
		{Name: "ascii_key_copula_colon", Value: "您的Token为：qzkvtrmnpx", Cores: []string{"qzkvtrmnpx"}},
	}
	ts := "2026-12-07T00:00:00Z"
	var b bytes.Buffer
	for n, a := range fams {
		rid := fmt.Sprintf("cjkesc-%02d", n)
		for _, r := range []map[string]any{
			{"sequence": 0, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "body": map[string]any{"delta_kind": "text", "delta": a.Value}},
			{"sequence": 1, "is_final": true, "status": "succeeded", "response_kind": "e2a.complete", "body": map[string]any{"result": map[string]any{}}},
		} {
			r["protocol_version"], r["response_id"], r["request_id"], r["timestamp"] = "1.0", rid, rid, ts
			r["provenance"] = map[string]any{"source_protocol": "e2a"}
			b.Write(asciiJSON(t, r))
			b.WriteByte('\n')
			r["response_id"], r["request_id"] = "utf8-"+rid, "utf8-"+rid
			line, _ := json.Marshal(r) // the same in UTF-8
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	capture := filepath.Join(t.TempDir(), "cjkesc.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, recs := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, "cjkesc-%02d")
	secretStreams(t, fams, stdout, "utf8-cjkesc-%02d")
	if n := bytes.Count(recs, []byte("******(fp:")); n < 2*len(fams) {
		t.Errorf("the record log has %d masks, want %d", n, 2*len(fams))
	}
}

// TestCJKEscapedLabelCutInside: JSON text held in a delta and written by
// json.dumps' default (ensure_ascii), so that a CJK label and its
// separator are \uXXXX escapes in the delta's text ("\u5bc6\u7801\uff1a
// <pw>"), streamed in two deltas cut at every byte of the label's and the
// separator's escapes. The record log masked each, but a cut inside the
// escapes left no tail for the split check (the first delta ended in no
// credential's start) and no e2a.secret finding was made. Each stream is a
// finding now; no value shows in any output. Also an ASCII key before the
// escaped separator ("API Key\uff1a<v>", "api_key\u4e3a\uff1a<v>").
func TestCJKEscapedLabelCutInside(t *testing.T) {
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	texts := []struct{ name, label, value string }{
		{"zh_db_password", "数据库密码：", "Kqzmpxtrlv7W"},
		{"zh_token_copula", "令牌为 ", "Ht5nB2qWz8Kc"},
		{"ja_password", "パスワード＝", "zkqtrmnvpl3Q"},
		{"api_key_fullwidth", "API Key：", "Vd3kP8wZq1Lm"},
		{"api_key_copula_colon", "api_key为：", "Rj6wK1nZv4Tq"},
	}
	var fams []secretaudit.Family
	var cuts [][2]string
	for _, x := range texts {
		raw, _ := json.Marshal(map[string]any{"note": "配置如下", "line": x.label + x.value})
		text := string(asciiJSON(t, json.RawMessage(raw))) // the delta's text: {"line": "\u5bc6…\uff1aKqzm…", …}
		v := strings.Index(text, x.value)
		line := strings.Index(text, `"line":"`) + len(`"line":"`)
		first := line + strings.Index(text[line:], `\u`) // (a cut in an ASCII key's first letters is not seen: redact's tail.go)
		for c := first + 1; c < v; c++ {
			fams = append(fams, secretaudit.Family{Name: fmt.Sprintf("%s_cut%d", x.name, c-first), Value: text, Cores: []string{x.value}})
			cuts = append(cuts, [2]string{text[:c], text[c:]})
		}
	}
	ts := "2026-12-07T00:00:00Z"
	var b bytes.Buffer
	for n, c := range cuts {
		rid := fmt.Sprintf("esccut-%03d", n)
		for k, r := range []map[string]any{
			{"delta_kind": "tool", "delta": c[0]},
			{"delta_kind": "tool", "delta": c[1]},
		} {
			line, _ := json.Marshal(map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": k,
				"is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": ts, "provenance": map[string]any{}, "body": r})
			b.Write(line)
			b.WriteByte('\n')
		}
		line, _ := json.Marshal(map[string]any{"protocol_version": "1.0", "response_id": rid, "request_id": rid, "sequence": 2,
			"is_final": true, "status": "succeeded", "response_kind": "e2a.complete", "timestamp": ts, "provenance": map[string]any{}, "body": map[string]any{"result": map[string]any{}}})
		b.Write(line)
		b.WriteByte('\n')
	}
	capture := filepath.Join(t.TempDir(), "esccut.jsonl")
	if err := os.WriteFile(capture, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _ := validateKeep(t, fams, capture)
	secretStreams(t, fams, stdout, "esccut-%03d")
}
