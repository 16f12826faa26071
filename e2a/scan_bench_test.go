package e2a

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type benchRecord struct {
	name string
	data []byte
}

// benchRecords are realistic messages: the shapes of the reference
// implementation's wire frames (Python json.dumps spacing).
func benchRecords() []benchRecord {
	text := strings.Repeat("The agent streams model output token by token; each chunk is a JSON line. ", 56)[:4096]
	return []benchRecord{
		{"chunk", []byte(`{"protocol_version": "1.0", "response_id": "req_8f14e45f", "request_id": "req_8f14e45f", "sequence": 17, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:17.250000+00:00", "provenance": {"source_protocol": "e2a", "agent_id": "assistant"}, "body": {"delta_kind": "text", "delta": "Hello, this is the next piece of the answer"}, "metadata": {}, "session_id": "sess_42", "method": "chat.send"}`)},
		{"final", []byte(`{"protocol_version": "1.0", "response_id": "req_8f14e45f", "request_id": "req_8f14e45f", "sequence": 18, "is_final": true, "status": "succeeded", "response_kind": "e2a.complete", "timestamp": "2026-03-29T12:00:18+00:00", "provenance": {"source_protocol": "e2a"}, "body": {"result": {"content": "Hello, this is the whole answer.", "usage": {"input_tokens": 812, "output_tokens": 96}}}, "session_id": "sess_42"}`)},
		{"request", []byte(`{"protocol_version": "1.0", "request_id": "req_8f14e45f", "session_id": "sess_42", "channel": "web", "method": "chat.send", "jsonrpc_id": 12, "identity_origin": "user", "timestamp": "2026-03-29T12:00:00+00:00", "params": {"query": "Summarise the attached report, please", "intent": "cancel", "_meta": {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, "files": [{"uri": "file:///tmp/report.pdf", "name": "report.pdf"}]}, "channel_context": {"feishu_open_id": "ou_123"}, "is_stream": true}`)},
		{"body4k", []byte(`{"protocol_version": "1.0", "response_id": "req_8f14e45f", "request_id": "req_8f14e45f", "sequence": 3, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:03+00:00", "provenance": {"source_protocol": "e2a"}, "body": {"delta_kind": "text", "delta": "` + text + `"}}`)},
	}
}

func benchScan(b *testing.B, scan func([]byte, *Record) error) {
	for _, rec := range benchRecords() {
		b.Run(rec.name, func(b *testing.B) {
			var r Record
			b.ReportAllocs()
			b.SetBytes(int64(len(rec.data)))
			for b.Loop() {
				if err := scan(rec.data, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

func BenchmarkScan(b *testing.B)    { benchScan(b, Scan) }
func BenchmarkScanStd(b *testing.B) { benchScan(b, ScanStd) }

func BenchmarkScanSecrets(b *testing.B) {
	recs := benchRecords()
	zh := strings.Repeat(`\u4f60\u597d\uff0c\u8fd9\u662f\u4e00\u4e2a\u5173\u4e8e\u8fb9\u8f66\u7684\u56de\u7b54\u3002`, 8)
	recs = append(recs,
		benchRecord{"chinese", []byte(`{"protocol_version": "1.0", "response_id": "req_8f14e45f", "request_id": "req_8f14e45f", "sequence": 17, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:17.250000+00:00", "provenance": {"source_protocol": "e2a"}, "body": {"delta_kind": "text", "delta": "` + zh + `"}, "metadata": {"note": "\u7528\u6237"}, "session_id": "sess_42", "method": "chat.send"}`)},
		benchRecord{"with-bearer", []byte(`{"protocol_version": "1.0", "response_id": "q1-r0", "request_id": "q1", "sequence": 0, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:00+00:00", "provenance": {"source_protocol": "e2a"}, "body": {"delta_kind": "text", "delta": "use Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlc2lnbmF0dXJl"}}`)},
		genRecords[0], genRecords[1],
		benchRecord{"with-key", []byte(`{"protocol_version": "1.0", "request_id": "req_8f14e45f", "session_id": "sess_42", "method": "chat.send", "params": {"query": "hi"}, "auth": {"bearer_token": "opaque-token-value", "extra_headers": {}}}`)},
	)
	for _, rec := range recs {
		b.Run(rec.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(rec.data)))
			for b.Loop() {
				ScanSecrets(rec.data)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// genRecords are e2atap gen's records (the shapes of make bench-system's
// corpus): a request and a response chunk.
var genRecords = []benchRecord{
	benchRecord{"gen-request", []byte(`{"protocol_version": "1.0", "provenance": {"source_protocol": "e2a", "converter": null, "converted_at": null, "details": {}}, "request_id": "req-000007-f3a6", "jsonrpc_id": null, "correlation_id": null, "task_id": null, "context_id": null, "session_id": "sess-5", "message_id": null, "timestamp": "2026-03-29T12:00:00.001000+00:00", "identity_origin": "user", "channel": "web", "user_id": "u-1", "agent_ref": null, "chat_id": null, "source_agent_id": null, "agent_id": null, "service_id": null, "workspace_key": null, "method": "chat.send", "params": {"query":"hello","content":"hello"}, "ext_method": null, "session_update_kind": null, "is_stream": true, "expected_output_modes": [], "auth": null, "channel_context": {}, "a2a_metadata": {}, "acp_meta": {}}`)},
	benchRecord{"gen-chunk", []byte(`{"protocol_version": "1.0", "response_id": "req-000002-c37e", "request_id": "req-000002-c37e", "sequence": -1, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:00.003000+00:00", "provenance": {"source_protocol": "e2a", "converter": "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk", "converted_at": "2026-03-29T12:00:00.003000+00:00", "details": {"kind": "legacy_agent_response_chunk", "is_complete": false}}, "body": {"delta_kind":"custom","delta":{"event_type":"keepalive"},"event_type":"keepalive"}, "jsonrpc_id": null, "correlation_id": null, "task_id": null, "context_id": null, "session_id": null, "message_id": null, "is_stream": true, "identity_origin": "agent", "channel": "web", "user_id": null, "agent_ref": null, "source_agent_id": null, "method": null, "projections": {}, "channel_context": {}, "metadata": {}, "a2a_metadata": {}, "acp_meta": {}}`)},
}

// BenchmarkScanPath compares the vector pass with the scalar loops on the
// same records (Scan uses the vector pass where the CPU has the kernel).
func BenchmarkScanPath(b *testing.B) {
	recs := append(benchRecords(), genRecords...)
	for _, vec := range []bool{false, true} {
		if vec && !haveKernel {
			continue
		}
		name := "scalar"
		if vec {
			name = "vector"
		}
		for _, rec := range recs {
			b.Run(name+"/"+rec.name, func(b *testing.B) {
				var r Record
				b.ReportAllocs()
				b.SetBytes(int64(len(rec.data)))
				for b.Loop() {
					if err := scan(rec.data, &r, vec); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkClassify: the vector pass alone, on one gen record and on 64
// of them in a row (the cost of a block without the call's).
func BenchmarkClassify(b *testing.B) {
	if !haveKernel {
		b.Skip("no vector kernel on this CPU")
	}
	for _, data := range [][]byte{genRecords[1].data, bytes.Repeat(genRecords[1].data, 64)} {
		b.Run(fmt.Sprint(len(data)), func(b *testing.B) {
			var blocks []block
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				blocks = classify(data, blocks)
			}
		})
	}
}

// BenchmarkScanCorpus scans the first lines of make bench-system's cached
// corpora (every shape the issue measures: gen, Python ensure_ascii with
// \u-escaped Chinese, ensure_ascii=False, 8 % and 100 % escaped request
// ids), when they are there (-corpus-dir, default /tmp/e2atap-bench). It
// leaves out everything but Scan (reading, routing, the engine).
func BenchmarkScanCorpus(b *testing.B) {
	for _, shape := range []string{"gen", "py-ascii", "py-utf8", "py-esc8", "py-esc100"} {
		lines := corpusLines(b, shape, 4000)
		if lines == nil {
			continue
		}
		size := 0
		for _, l := range lines {
			size += len(l)
		}
		b.Run(shape, func(b *testing.B) {
			var r Record
			b.ReportAllocs()
			b.SetBytes(int64(size))
			cpu := cpuNanos()
			for b.Loop() {
				for _, l := range lines {
					if err := Scan(l, &r); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(lines)), "ns/record")
			b.ReportMetric(float64(cpuNanos()-cpu)/float64(b.N*len(lines)), "cpu-ns/record")
		})
	}
}

func corpusLines(b testing.TB, shape string, n int) [][]byte {
	data, err := os.ReadFile(filepath.Join("/tmp/e2atap-bench", shape+"-20M.jsonl"))
	if err != nil {
		if b != nil {
			b.Logf("no %s corpus: %v", shape, err)
		}
		return nil
	}
	var lines [][]byte
	for len(lines) < n && len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > 0 {
			lines = append(lines, data[:i:i])
		}
		data = data[min(i+1, len(data)):]
	}
	return lines
}
