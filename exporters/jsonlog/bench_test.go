package jsonlog

import (
	"bufio"
	"io"
	"sync"
	"testing"

	"github.com/e2atap/e2atap/validate"
)

// benchNames: a clean chunk and request, a chunk of Chinese text as
// ensure_ascii writes it (every character a \uXXXX escape), and a request
// and a chunk holding credentials.
var benchNames = []string{"chunk", "request", "chinese", "secrets", "secret_chunk"}

var benchRecords = map[string]string{
	"chinese":      `{"protocol_version":"1.0","response_id":"r-7f3a","request_id":"req_1","sequence":12,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:01+00:00","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"\u4f60\u597d\uff0c\u8fd9\u662f\u4e00\u4e2a\u5173\u4e8e\u8fb9\u8f66\u548c\u53ef\u89c2\u6d4b\u6027\u7684\u957f\u56de\u7b54\u3002\u4f60\u597d\uff0c\u8fd9\u662f\u4e00\u4e2a\u5173\u4e8e\u8fb9\u8f66\u548c\u53ef\u89c2\u6d4b\u6027\u7684\u957f\u56de\u7b54\u3002"},"session_id":"sess-42","method":"chat.send","metadata":{"_jiuwenswarm_server_push":false,"note":"\u7528\u6237\u8bf7\u6c42"}}`,
	"secrets":      `{"protocol_version":"1.0","request_id":"req_1","session_id":"s1","method":"chat.send","params":{"text":"my keys: AKIAIOSFODNN7EXAMPLE ghp_16C7e42F292c6912E7710c838347Ae178B4a xoxb-123456789012-1234567890123-AbCdEfGhIjKl","mode":"agent"},"auth":{"method_id":"oauth","bearer_token":"abcdefghijklmnopqrstuvwxyz012345","extra_headers":{"Authorization":"Basic dXNlcjpodW50ZXIy"}},"metadata":{"note":"mail alice@example.com or 13912345678, password=hunter2"}}`,
	"secret_chunk": `{"protocol_version":"1.0","response_id":"r-7f3a","request_id":"req_1","sequence":12,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:01+00:00","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"use sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 with Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"},"session_id":"sess-42","method":"chat.send"}`,
	"chunk":        `{"protocol_version":"1.0","response_id":"r-7f3a","request_id":"req_1","sequence":12,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:01+00:00","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"The quick brown fox jumps over the lazy dog, then writes a long answer about sidecars and observability."},"session_id":"sess-42","method":"chat.send","metadata":{"_jiuwenswarm_server_push":false}}`,
	"request":      `{"protocol_version":"1.0","provenance":{"source_protocol":"e2a"},"request_id":"req_1","session_id":"sess-42","timestamp":"2026-03-29T12:00:00Z","identity_origin":"user","channel":"web","user_id":"u-1","method":"chat.send","params":{"text":"Summarise the incident report for me, please.","mode":"agent","files":[{"uri":"https://files.example.com/a.pdf","name":"a.pdf"}]},"is_stream":true,"auth":{"method_id":"oauth","bearer_token":"abcdefghijklmnopqrstuvwxyz012345","extra_headers":{"X-Trace":"t-1"}},"channel_context":{"feishu_open_id":"ou_123","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`,
}

// BenchmarkRecord compares, in one run, writing a record as it is (the
// floor: a locked buffered write of the raw bytes) with writing it through
// the Writer (redaction, _e2atap object, the same locked buffered write).
func BenchmarkRecord(b *testing.B) {
	for _, name := range benchNames {
		rec := []byte(benchRecords[name])
		b.Run(name+"/plain", func(b *testing.B) {
			var mu sync.Mutex
			bw := bufio.NewWriterSize(io.Discard, 64<<10)
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				mu.Lock()
				bw.Write(rec)
				bw.WriteByte('\n')
				mu.Unlock()
			}
		})
		b.Run(name+"/redacted", func(b *testing.B) {
			w := NewWriterTo(io.Discard, NewRedactor(ContentMask, 65536, testKey))
			ri := jsonInfo(rec)
			ri.In.Pos = validate.Position{}
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				w.Record(ri)
			}
		})
		b.Run(name+"/redacted_keep_stream", func(b *testing.B) {
			// content keep, one stream: every chunk line is held until the
			// next and its delta's boundary checked (carry.go).
			w := NewWriterTo(io.Discard, NewRedactor(ContentKeep, 65536, testKey))
			ri := jsonInfo(rec)
			ri.In.Pos = validate.Position{}
			ri.Stream = []byte("req_1")
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				w.Record(ri)
			}
		})
		b.Run(name+"/redact_only", func(b *testing.B) {
			r := NewRedactor(ContentMask, 65536, testKey)
			var dst []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				dst, _, _ = r.Redact(dst[:0], rec)
			}
		})
		b.Run(name+"/redact_keep", func(b *testing.B) {
			r := NewRedactor(ContentKeep, 65536, testKey)
			var dst []byte
			b.ReportAllocs()
			b.SetBytes(int64(len(rec)))
			for b.Loop() {
				dst, _, _ = r.Redact(dst[:0], rec)
			}
		})
	}
}
