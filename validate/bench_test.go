package validate

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/frame"
)

// epochs rewrites the epoch "E0000" of every stream id in lines, so that a
// benchmark that replays its traffic opens fresh streams each time round.
// The places are found once; a renewal writes four digits in each, cheap
// enough to stay inside the timed loop (stopping the timer costs more: it
// reads the memory statistics, a stop-the-world, every time).
type epochs struct {
	lines [][]byte
	at    [][]int
}

func newEpochs(lines [][]byte) *epochs {
	e := &epochs{lines: lines, at: make([][]int, len(lines))}
	for n, l := range lines {
		for i := 0; i+5 < len(l); i++ {
			if l[i] == 'E' && l[i+1] >= '0' && l[i+1] <= '9' && l[i+5] == '-' {
				e.at[n] = append(e.at[n], i+1)
			}
		}
	}
	return e
}

func (e *epochs) renew(epoch int) {
	var d [4]byte
	for i, x := 3, epoch%10000; i >= 0; i, x = i-1, x/10 {
		d[i] = byte('0' + x%10)
	}
	for n, l := range e.lines {
		for _, o := range e.at[n] {
			copy(l[o:], d[:])
		}
	}
}

type nopSink struct{}

func (nopSink) Record(*RecordInfo)      {}
func (nopSink) Finding(*Finding)        {}
func (nopSink) StreamStart(*StreamInfo) {}
func (nopSink) StreamEnd(*StreamInfo)   {}

// quietSink is nopSink saying so (StreamsIgnorer), as validate's sink does.
type quietSink struct{ nopSink }

func (quietSink) StreamsIgnored() bool { return true }

// mallocs reports the heap allocations per 1000 operations since m0 (a
// benchmark allocating once per stream shows as 0 allocs/op).
func mallocs(b *testing.B, m0 uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.Mallocs-m0)*1000/float64(b.N), "allocs/1k-ops")
}

func mallocsNow() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// benchLines is reference-shaped traffic: 64 interleaved streams of 15
// chunks and a final, as the AgentServer sends them (jiuwenswarm).
func benchLines(streams, chunks int) [][]byte {
	var out [][]byte
	for c := 0; c <= chunks; c++ {
		for s := 0; s < streams; s++ {
			id := fmt.Sprintf("E0000-req-%08d", s)
			var line string
			if c < chunks {
				line = fmt.Sprintf(`{"protocol_version": "1.0", "response_id": %q, "request_id": %q, "sequence": %d, "is_final": false, "status": "in_progress", "response_kind": "e2a.chunk", "timestamp": "2026-03-29T12:00:%02d.123456+00:00", "provenance": {"source_protocol": "e2a", "converter": null, "converted_at": "2026-03-29T12:00:00.123456+00:00", "details": {}}, "body": {"delta_kind": "text", "delta": "some model output tokens", "event_type": "chat.delta"}, "session_id": "sess-1", "is_stream": true, "metadata": {}}`, id, id, c, c%60)
			} else {
				line = fmt.Sprintf(`{"protocol_version": "1.0", "response_id": %q, "request_id": %q, "sequence": %d, "is_final": true, "status": "succeeded", "response_kind": "e2a.complete", "timestamp": "2026-03-29T12:00:59.123456+00:00", "provenance": {"source_protocol": "e2a", "converter": null, "converted_at": "2026-03-29T12:00:00.123456+00:00", "details": {}}, "body": {"result": {"content": "done"}}, "session_id": "sess-1", "is_stream": true, "metadata": {}}`, id, id, c)
			}
			out = append(out, []byte(line))
		}
	}
	return out
}

func BenchmarkValidateJSON(b *testing.B) { benchValidateJSON(b, false, nopSink{}) }

// BenchmarkValidateJSONStreamsIgnored is BenchmarkValidateJSON for a sink
// that ignores stream starts and ends (validate's).
func BenchmarkValidateJSONStreamsIgnored(b *testing.B) { benchValidateJSON(b, false, quietSink{}) }

// BenchmarkValidateJSONFromLog is BenchmarkValidateJSON for records read
// from a log (a file source): rule e2a.secret looks at each, and at each
// chunk boundary (splitsecret.go).
func BenchmarkValidateJSONFromLog(b *testing.B) { benchValidateJSON(b, true, nopSink{}) }

func benchValidateJSON(b *testing.B, fromLog bool, sink Sink) {
	lines := benchLines(64, 15)
	var size int
	for _, l := range lines {
		size += len(l)
	}
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	e := NewEngine(cfg, sink)
	in := Input{Pos: Position{Kind: PosLine, Name: "bench"}, FromLog: fromLog}
	ep := newEpochs(lines)
	b.SetBytes(int64(size / len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	m0 := mallocsNow()
	for i := 0; i < b.N; i++ {
		if i%len(lines) == 0 && i > 0 {
			ep.renew(i / len(lines))
		}
		in.Data = lines[i%len(lines)]
		in.Index = uint64(i + 1)
		e.Observe(&in)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	mallocs(b, m0)
}

// stdResponse is what a straightforward encoding/json validator decodes.
type stdResponse struct {
	ProtocolVersion *string          `json:"protocol_version"`
	ResponseID      *string          `json:"response_id"`
	RequestID       *string          `json:"request_id"`
	Sequence        *json.Number     `json:"sequence"`
	IsFinal         *bool            `json:"is_final"`
	Status          *string          `json:"status"`
	ResponseKind    *string          `json:"response_kind"`
	Timestamp       *string          `json:"timestamp"`
	Provenance      map[string]any   `json:"provenance"`
	Body            map[string]any   `json:"body"`
	SessionID       *string          `json:"session_id"`
	Metadata        map[string]any   `json:"metadata"`
	IsStream        *bool            `json:"is_stream"`
	Extra           *json.RawMessage `json:"jsonrpc_id"`
}

// BenchmarkValidateJSONStdlib is the baseline: decode each record with
// encoding/json into a struct and check what the engine checks on these
// records (required fields, types, version, status, kind, timestamp and its
// offset, body per kind, failed_kind, final_status, kind_final, echo of
// session_id, sequence semantics in a map), written the straightforward way.
func BenchmarkValidateJSONStdlib(b *testing.B) {
	lines := benchLines(64, 15)
	type st struct {
		last    int64
		ended   bool
		session string
	}
	kinds := map[string]bool{}
	for _, k := range []string{"e2a.complete", "e2a.chunk", "e2a.error", "acp.session_update", "acp.prompt_result", "acp.jsonrpc_error",
		"acp.output_request", "a2a.task", "a2a.message", "a2a.stream_event", "cron", "plan.approval_required", "ext"} {
		kinds[k] = true
	}
	streams := map[string]*st{}
	findings := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var r stdResponse
		if err := json.Unmarshal(lines[i%len(lines)], &r); err != nil {
			findings++
			continue
		}
		if r.ProtocolVersion == nil || r.ResponseID == nil || r.RequestID == nil || r.Sequence == nil || r.IsFinal == nil ||
			r.Status == nil || r.ResponseKind == nil || r.Timestamp == nil || r.Provenance == nil || r.Body == nil {
			findings++
		}
		if r.Status != nil && *r.Status != "succeeded" && *r.Status != "failed" && *r.Status != "in_progress" {
			findings++
		}
		if r.ProtocolVersion != nil && !strings.HasPrefix(*r.ProtocolVersion, "1.") {
			findings++
		}
		if r.Timestamp != nil {
			if ts, err := time.Parse(time.RFC3339Nano, *r.Timestamp); err != nil {
				findings++
			} else if _, off := ts.Zone(); off != 0 {
				findings++
			}
		}
		if r.ResponseKind != nil {
			kind := *r.ResponseKind
			if !kinds[kind] {
				findings++
			}
			switch kind {
			case "e2a.chunk":
				dk, ok := r.Body["delta_kind"].(string)
				if !ok || (dk != "text" && dk != "reasoning" && dk != "tool" && dk != "custom") || r.Body["delta"] == nil {
					findings++
				}
			case "e2a.complete":
				if r.Body["result"] == nil {
					findings++
				}
			}
			if r.Status != nil && *r.Status == "failed" && kind != "e2a.error" && kind != "acp.jsonrpc_error" {
				findings++
			}
			if r.IsFinal != nil && (kind == "e2a.chunk" && *r.IsFinal || kind == "e2a.complete" && !*r.IsFinal) {
				findings++
			}
		}
		if r.IsFinal != nil && *r.IsFinal && r.Status != nil && *r.Status == "in_progress" {
			findings++
		}
		if r.RequestID == nil || r.Sequence == nil || r.IsFinal == nil {
			continue
		}
		seq, err := r.Sequence.Int64()
		if err != nil {
			findings++
			continue
		}
		s, ok := streams[*r.RequestID]
		if !ok {
			s = &st{last: -1}
			streams[*r.RequestID] = s
		}
		if r.SessionID != nil {
			if s.session == "" {
				s.session = *r.SessionID
			} else if s.session != *r.SessionID {
				findings++
			}
		}
		switch {
		case s.ended:
			findings++
		case seq == s.last+1:
			s.last = seq
		case seq > s.last+1:
			findings++
			s.last = seq
		default:
			findings++
		}
		if *r.IsFinal {
			delete(streams, *r.RequestID) // the loop replays the same streams
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	if findings < 0 {
		b.Fatal(findings)
	}
}

func benchFrames(b *testing.B, streams, chunks int) [][]byte {
	var out [][]byte
	for c := 0; c <= chunks; c++ {
		for s := 0; s < streams; s++ {
			flags := uint8(0)
			if c == chunks {
				flags = frame.FlagDone
			}
			f, err := frame.AppendFrame(nil, frame.TypeStreamChunk, flags, int32(c), []frame.Attr{{Name: "sid", Value: fmt.Sprintf("E0000-agent-1:%08d", s)}, {Name: "etype", Value: "text"}}, []byte("tok tok"))
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, f)
		}
	}
	return out
}

// BenchmarkValidateFrames runs every frame rule and the sequence check.
func BenchmarkValidateFrames(b *testing.B) { benchValidateFrames(b, nopSink{}) }

// BenchmarkValidateFramesStreamsIgnored is BenchmarkValidateFrames for a
// sink that ignores stream starts and ends (validate's).
func BenchmarkValidateFramesStreamsIgnored(b *testing.B) { benchValidateFrames(b, quietSink{}) }

func benchValidateFrames(b *testing.B, sink Sink) {
	frames := benchFrames(b, 64, 15)
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	e := NewEngine(cfg, sink)
	in := Input{Pos: Position{Kind: PosByte, Name: "bench"}}
	ep := newEpochs(frames)
	b.ReportAllocs()
	b.ResetTimer()
	m0 := mallocsNow()
	for i := 0; i < b.N; i++ {
		if i%len(frames) == 0 && i > 0 {
			ep.renew(i / len(frames))
		}
		in.Data = frames[i%len(frames)]
		f, _, err := frame.Decode(in.Data)
		if err != nil {
			b.Fatal(err)
		}
		e.ObserveFrame(&in, &f)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	mallocs(b, m0)
}

// BenchmarkFrameDecodeSeq is decode plus the sequence check alone: the
// stream table lookup and RULES.md's sequence semantics.
func BenchmarkFrameDecodeSeq(b *testing.B) {
	frames := benchFrames(b, 64, 15)
	t := newTable(1024)
	gaps := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, _, err := frame.Decode(frames[i%len(frames)])
		if err != nil {
			b.Fatal(err)
		}
		sid, _ := f.Attr("sid")
		h := t.hash(sid)
		k := t.find(sid, h)
		if k < 0 {
			k = t.insert(sid, h)
		}
		s := t.at(k)
		seq := int64(f.Seq)
		switch last := t.lastSeq(s); {
		case s.flags&fSeq == 0 || seq == last+1:
			t.setLastSeq(s, seq)
			s.flags |= fSeq
		case seq > last+1:
			gaps++
			t.setLastSeq(s, seq)
		default:
			gaps++
		}
		if f.Done() {
			s.flags &^= fSeq // the loop replays the same streams
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	if gaps != 0 {
		b.Fatalf("%d sequence findings on clean frames", gaps)
	}
}

// BenchmarkStreamMemory opens one million streams (keys like a reference
// request id) and reports the heap they take, per stream.
func BenchmarkStreamMemory(b *testing.B) {
	const n = 1_000_000
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		cfg := DefaultConfig()
		cfg.IdleTimeout = 0
		cfg.MaxStreams = 2 * n // partitions fill unevenly: room for all n
		e := NewEngine(cfg, nopSink{})
		in := Input{}
		for s := 0; s < n; s++ {
			in.Data = []byte(fmt.Sprintf(`{"protocol_version":"1.0","response_id":"r","request_id":"%08x-0000-4000-8000-000000000000","sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"delta_kind":"text","delta":""}}`, s))
			e.Observe(&in)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if e.Open() != n {
			b.Fatalf("%d streams open, want %d", e.Open(), n)
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/stream")
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc-uint64(n*36))/n, "bytes/stream-excl-key")
		runtime.KeepAlive(e)
	}
}
