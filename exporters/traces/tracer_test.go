package traces

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/exporters/metrics"
	"github.com/e2atap/e2atap/validate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// receiver collects the spans an OTLP exporter sends, over gRPC or HTTP.
type receiver struct {
	coltracepb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
	res   []*commonpb.KeyValue
}

func (r *receiver) add(req *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		r.res = rs.GetResource().GetAttributes()
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
}

func (r *receiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.add(req)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (r *receiver) byName() map[string]*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[string]*tracepb.Span{}
	for _, s := range r.spans {
		m[attrs(s.GetAttributes())[AttrRequestID]+attrs(s.GetAttributes())[AttrSID]] = s
	}
	return m
}

func startGRPC(t *testing.T) (*receiver, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, r)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return r, "http://" + lis.Addr().String()
}

func startHTTP(t *testing.T) (*receiver, string) {
	t.Helper()
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var msg coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &msg); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.Header.Get("Api-Key") != "k1" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func attrs(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch v.GetValue().(type) {
		case *commonpb.AnyValue_IntValue:
			m[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		case *commonpb.AnyValue_BoolValue:
			m[kv.GetKey()] = fmt.Sprint(v.GetBoolValue())
		case *commonpb.AnyValue_DoubleValue:
			m[kv.GetKey()] = fmt.Sprint(v.GetDoubleValue())
		default:
			m[kv.GetKey()] = v.GetStringValue()
		}
	}
	return m
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

const (
	parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
)

// jsonRecord scans data as the engine would and describes it.
func jsonRecord(t *testing.T, tap, key string, at time.Time, data string) *validate.RecordInfo {
	t.Helper()
	var r e2a.Record
	if err := e2a.ScanStd([]byte(data), &r); err != nil {
		t.Fatal(err)
	}
	c := e2a.Classify(&r)
	kind := "request"
	if c == e2a.ClassResponse {
		kind = string(r.Get(e2a.FResponseKind).Str)
	}
	return &validate.RecordInfo{
		In:       &validate.Input{Tap: tap, Time: at, Data: []byte(data)},
		Protocol: validate.ProtoE2A, Class: c, Kind: kind, JSON: &r, Stream: []byte(key),
	}
}

// feed plays three streams through every sink: req_1 succeeds but has a
// warning finding and a W3C parent, req_2 fails, req_3 is clean.
func feed(t *testing.T, sinks ...validate.Sink) map[string]*validate.StreamInfo {
	t.Helper()
	each := func(f func(validate.Sink)) {
		for _, s := range sinks {
			f(s)
		}
	}
	ends := map[string]*validate.StreamInfo{}

	req1 := jsonRecord(t, "agent-ws", "req_1", t0.Add(-50*time.Millisecond), `{"request_id":"req_1","method":"chat.send","session_id":"sess_9","channel":"web",
		"agent_ref":{"mode":"code","id":"default"},"agent_id":"agent-7","is_stream":true,
		"params":{"content":"my password is hunter2","_meta":{"traceparent":"00-`+parentTrace+`-`+parentSpan+`-01"}}}`)
	each(func(s validate.Sink) { s.Record(req1) })
	each(func(s validate.Sink) {
		s.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_1", Start: t0})
	})
	chunk := jsonRecord(t, "agent-ws", "req_1", t0.Add(200*time.Millisecond), `{"protocol_version":"1.0","request_id":"req_1","response_id":"req_1",
		"sequence":0,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","session_id":"sess_9","body":{"delta_kind":"text","delta":"secret answer"}}`)
	each(func(s validate.Sink) { s.Record(chunk) })
	each(func(s validate.Sink) {
		s.Finding(&validate.Finding{Rule: "e2a.timestamp_utc", Severity: validate.Warning, Stream: "req_1", Tap: "agent-ws",
			Message: "timestamp has offset +02:00, not UTC", Time: t0.Add(200 * time.Millisecond), Protocol: "e2a"})
	})
	ends["req_1"] = &validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_1", Outcome: validate.OutcomeSucceeded,
		Start: t0, FirstChunk: t0.Add(200 * time.Millisecond), End: t0.Add(3 * time.Second), Records: 5, Heartbeats: 1}

	req2 := jsonRecord(t, "agent-ws", "req_2", t0, `{"request_id":"req_2","method":"chat.send","session_id":"sess_9","channel":"web","params":{}}`)
	each(func(s validate.Sink) { s.Record(req2) })
	each(func(s validate.Sink) {
		s.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_2", Start: t0})
	})
	fail := jsonRecord(t, "agent-ws", "req_2", t0.Add(time.Second), `{"protocol_version":"1.0","request_id":"req_2","response_id":"req_2",
		"sequence":0,"is_final":true,"status":"failed","response_kind":"e2a.error","body":{"code":"E2A.AGENT_ERROR","message":"agent crashed"}}`)
	each(func(s validate.Sink) { s.Record(fail) })
	ends["req_2"] = &validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_2", Outcome: validate.OutcomeFailed,
		Start: t0, End: t0.Add(time.Second), Records: 1}

	each(func(s validate.Sink) {
		s.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_3", Start: t0})
	})
	ends["req_3"] = &validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_3", Outcome: validate.OutcomeSucceeded,
		Start: t0, FirstChunk: t0.Add(time.Second), End: t0.Add(2 * time.Second), Records: 3}

	for _, k := range []string{"req_1", "req_2", "req_3"} {
		each(func(s validate.Sink) { s.StreamEnd(ends[k]) })
	}
	return ends
}

// wsTap describes the tests' tap agent-ws: a ws relay to the agent server.
func wsTap(name string) (Tap, bool) {
	if name != "agent-ws" {
		return Tap{}, false
	}
	return Tap{Type: "ws", Upstream: "ws://user:pw@agent:18092/"}, true
}

// testKey is the fingerprint key of the tests' redaction policy.
var testKey = []byte("traces-test-fingerprint-key")

func newTracer(t *testing.T, cfg Config) *Tracer {
	t.Helper()
	if cfg.Redactor == nil {
		cfg.Redactor = jsonlog.NewRedactor(jsonlog.ContentMask, 0, testKey)
	}
	tr, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestExportGRPCAndHTTP(t *testing.T) {
	for _, proto := range []string{ProtocolGRPC, ProtocolHTTP} {
		t.Run(proto, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Protocol = proto
			cfg.Ratio = 0 // clean successful streams are not exported
			var rcv *receiver
			if proto == ProtocolGRPC {
				rcv, cfg.Endpoint = startGRPC(t)
			} else {
				var base string
				rcv, base = startHTTP(t)
				cfg.Endpoint = base + "/v1/traces"
				cfg.Headers = map[string]string{"api-key": "k1"}
			}
			cfg.Taps = wsTap
			tr := newTracer(t, cfg)
			feed(t, tr)
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkSpans(t, rcv)
			if got, want := tr.Stats(), (Stats{Spans: 2, SampledOut: 1, Exported: 2}); got != want {
				t.Errorf("stats %+v, want %+v", got, want)
			}
		})
	}
}

func checkSpans(t *testing.T, rcv *receiver) {
	t.Helper()
	spans := rcv.byName()
	if len(spans) != 2 || spans["req_1"] == nil || spans["req_2"] == nil {
		t.Fatalf("spans %v, want req_1 and req_2", keys(spans))
	}
	if got := attrs(rcv.res)["service.name"]; got != "e2atap" {
		t.Errorf("service.name %q", got)
	}

	s1 := spans["req_1"]
	if got := hex.EncodeToString(s1.GetTraceId()); got != parentTrace {
		t.Errorf("req_1 trace id %s, want the traceparent's %s", got, parentTrace)
	}
	if got := hex.EncodeToString(s1.GetParentSpanId()); got != parentSpan {
		t.Errorf("req_1 parent span %s, want %s", got, parentSpan)
	}
	if s1.GetName() != "invoke_agent default" {
		t.Errorf("req_1 name %q, want invoke_agent and the agent_ref", s1.GetName())
	}
	if s1.GetKind() != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("req_1 kind %v, want client (a ws tap relays the call)", s1.GetKind())
	}
	if got, want := s1.GetStartTimeUnixNano(), uint64(t0.Add(-50*time.Millisecond).UnixNano()); got != want {
		t.Errorf("req_1 starts at %d, want the request time %d", got, want)
	}
	if got, want := s1.GetEndTimeUnixNano(), uint64(t0.Add(3*time.Second).UnixNano()); got != want {
		t.Errorf("req_1 ends at %d, want %d", got, want)
	}
	wantAttrs := map[string]string{
		"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "default", "gen_ai.agent.id": "agent-7",
		"gen_ai.conversation.id": "sess_9", "gen_ai.request.stream": "true", "gen_ai.response.id": "req_1",
		"gen_ai.response.time_to_first_chunk": "0.25",
		"network.protocol.name":               "websocket", "server.address": "agent", "server.port": "18092",
		"e2a.request_id": "req_1", "e2a.channel": "web", "e2a.method": "chat.send",
		"e2atap.outcome": "succeeded", "e2atap.reason": "final", "e2atap.records": "5", "e2atap.heartbeats": "1",
		"e2atap.errors": "0", "e2atap.tap": "agent-ws", "e2atap.tap.type": "ws", "e2atap.protocol": "e2a",
	}
	if diff := cmp.Diff(wantAttrs, attrs(s1.GetAttributes())); diff != "" {
		t.Errorf("req_1 attributes (-want +got):\n%s", diff)
	}
	type ev struct {
		Name  string
		At    time.Duration
		Attrs map[string]string
	}
	var evs []ev
	for _, e := range s1.GetEvents() {
		evs = append(evs, ev{e.GetName(), time.Duration(int64(e.GetTimeUnixNano()) - t0.UnixNano()), attrs(e.GetAttributes())})
	}
	wantEvs := []ev{
		{"e2atap.first_chunk", 200 * time.Millisecond, map[string]string{}},
		{"e2atap.finding", 200 * time.Millisecond, map[string]string{"e2atap.rule": "e2a.timestamp_utc", "e2atap.severity": "warning",
			"e2atap.message": "timestamp has offset +02:00, not UTC"}},
	}
	if diff := cmp.Diff(wantEvs, evs); diff != "" {
		t.Errorf("req_1 events (-want +got):\n%s", diff)
	}
	if c := s1.GetStatus().GetCode(); c != tracepb.Status_STATUS_CODE_UNSET {
		t.Errorf("req_1 status %v, want unset (a warning is not an error)", c)
	}

	s2 := spans["req_2"]
	if c := s2.GetStatus().GetCode(); c != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("req_2 status %v, want error", c)
	}
	if len(s2.GetParentSpanId()) != 0 {
		t.Errorf("req_2 has a parent %x, want a root span", s2.GetParentSpanId())
	}
	a2 := attrs(s2.GetAttributes())
	if a2["e2atap.outcome"] != "failed" || a2["error.type"] != "E2A.AGENT_ERROR" {
		t.Errorf("req_2 outcome %q, error.type %q: want failed, the failed record's code", a2["e2atap.outcome"], a2["error.type"])
	}
	if s2.GetName() != "invoke_agent" {
		t.Errorf("req_2 name %q", s2.GetName())
	}

	// Nothing from the records' content reaches the spans.
	for _, s := range rcv.spans {
		raw, _ := proto.Marshal(s)
		for _, secret := range []string{"hunter2", "secret answer"} {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("span %s carries %q", s.GetName(), secret)
			}
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestExemplarsMatchSpans wires the metrics sink to the Tracer, in both
// orders, and checks that exemplars point at exported spans only.
func TestExemplarsMatchSpans(t *testing.T) {
	for _, tracerFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("tracerFirst=%v", tracerFirst), func(t *testing.T) {
			rcv, endpoint := startGRPC(t)
			cfg := DefaultConfig()
			cfg.Protocol, cfg.Endpoint, cfg.Ratio = ProtocolGRPC, endpoint, 0
			tr := newTracer(t, cfg)
			reg := prometheus.NewPedanticRegistry()
			m := metrics.New(reg, metrics.Options{Version: "test", TraceID: tr.TraceID})
			if tracerFirst {
				feed(t, tr, m)
			} else {
				feed(t, m, tr)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			exported := map[string]bool{}
			for _, s := range rcv.byName() {
				exported[hex.EncodeToString(s.GetTraceId())] = true
			}
			if len(exported) != 2 || !exported[parentTrace] {
				t.Fatalf("exported traces %v, want req_1's (%s) and req_2's", exported, parentTrace)
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]bool{}
			for _, mf := range mfs {
				if mf.GetName() != "e2atap_stream_duration_seconds" {
					continue
				}
				for _, mt := range mf.GetMetric() {
					for _, b := range mt.GetHistogram().GetBucket() {
						if e := b.GetExemplar(); e != nil {
							found[e.GetLabel()[0].GetValue()] = true
						}
					}
				}
			}
			if diff := cmp.Diff(exported, found); diff != "" {
				t.Errorf("exemplar trace ids vs exported spans (-spans +exemplars):\n%s", diff)
			}
		})
	}
}

// TestDisabled: without an endpoint the Tracer does nothing, and the
// metrics sink works the same with or without it.
func TestDisabled(t *testing.T) {
	tr := newTracer(t, DefaultConfig())
	reg := prometheus.NewPedanticRegistry()
	m := metrics.New(reg, metrics.Options{TraceID: tr.TraceID})
	feed(t, m, tr)
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := tr.Stats(); got != (Stats{}) {
		t.Errorf("disabled tracer stats %+v", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var streams float64
	for _, mf := range mfs {
		if mf.GetName() == "e2atap_streams_total" {
			for _, mt := range mf.GetMetric() {
				streams += mt.GetCounter().GetValue()
			}
		}
	}
	if streams != 3 {
		t.Errorf("streams_total %v, want 3", streams)
	}
}

// TestExportFailureCounted: an unreachable collector is counted and
// logged, never an error of the sink.
func TestExportFailureCounted(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	cfg := DefaultConfig()
	cfg.Endpoint = "http://" + addr + "/v1/traces"
	cfg.Timeout = 200 * time.Millisecond
	var logs bytes.Buffer
	tr, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	feed(t, tr)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = tr.Shutdown(ctx)
	if got := tr.Stats(); got.ExportFailed != 3 || got.Exported != 0 {
		t.Errorf("stats %+v, want 3 failed", got)
	}
	if !bytes.Contains(logs.Bytes(), []byte("trace export failed")) {
		t.Errorf("no log line: %s", logs.String())
	}
}

// TestStateBounded: streams that never end are evicted, and counted.
func TestStateBounded(t *testing.T) {
	_, endpoint := startGRPC(t)
	cfg := DefaultConfig()
	cfg.Protocol, cfg.Endpoint, cfg.MaxStreams, cfg.MaxFindings = ProtocolGRPC, endpoint, numShards, 2
	tr := newTracer(t, cfg)
	defer tr.Shutdown(context.Background())
	for i := range 10 * numShards {
		tr.StreamStart(&validate.StreamInfo{Tap: "t", Key: fmt.Sprint("k", i), Start: t0})
	}
	n := 0
	for i := range tr.shards {
		n += len(tr.shards[i].m)
	}
	if n > numShards {
		t.Errorf("%d states kept, cap %d", n, numShards)
	}
	if got := tr.Stats().Evicted; got != uint64(10*numShards-n) {
		t.Errorf("evicted %d, want %d", got, 10*numShards-n)
	}
	// Findings beyond MaxFindings are counted, not kept.
	tr.StreamStart(&validate.StreamInfo{Tap: "t", Key: "f", Start: t0})
	for range 5 {
		tr.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "f", Tap: "t"})
	}
	var buf [128]byte
	k := appendKey(buf[:0], "t", "f")
	sh, _ := tr.shardOf(k)
	st := sh.m[string(k)]
	if st == nil || len(st.findings) != 2 || st.dropped != 3 || st.errRule != "e2a.seq_gap" {
		t.Errorf("state %+v", st)
	}
	// A finding after the stream ended does not bring its state back.
	tr.StreamEnd(&validate.StreamInfo{Tap: "t", Key: "f", Start: t0, End: t0})
	tr.Finding(&validate.Finding{Rule: "e2a.after_final", Severity: validate.Error, Stream: "f", Tap: "t"})
	if sh.m[string(k)] != nil {
		t.Error("state recreated by a finding after the end")
	}
}

func TestRecordHotPathAllocs(t *testing.T) {
	_, endpoint := startGRPC(t)
	cfg := DefaultConfig()
	cfg.Protocol, cfg.Endpoint = ProtocolGRPC, endpoint
	tr := newTracer(t, cfg)
	defer tr.Shutdown(context.Background())
	req := jsonRecord(t, "agent-ws", "req_1", t0, `{"request_id":"req_1","method":"chat.send","session_id":"s","channel":"web","params":{}}`)
	// A response_id other than the request_id and an A2A kind: kept once, at
	// the first response (AllocsPerRun's warm-up), never again.
	chunk := jsonRecord(t, "agent-ws", "req_1", t0, `{"protocol_version":"1.0","request_id":"req_1","response_id":"resp-1","response_kind":"a2a.stream_event","session_id":"s","sequence":1,"status":"in_progress"}`)
	chunk.Kind = "a2a.stream_event"
	tr.Record(req)
	if raceEnabled {
		return
	}
	if n := testing.AllocsPerRun(1000, func() { tr.Record(chunk) }); n != 0 {
		t.Errorf("Record of a response: %v allocs/op, want 0", n)
	}
}

// TestConcurrentStreams drives the Tracer from several goroutines, as a
// sharded engine does (run with -race).
func TestConcurrentStreams(t *testing.T) {
	rcv, endpoint := startGRPC(t)
	cfg := DefaultConfig()
	cfg.Protocol, cfg.Endpoint, cfg.Ratio = ProtocolGRPC, endpoint, 1
	tr := newTracer(t, cfg)
	const workers, per = 4, 100
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				key := fmt.Sprintf("w%d-%d", w, i)
				s := &validate.StreamInfo{Tap: "t", Protocol: "e2a", Key: key, Start: t0, End: t0.Add(time.Second)}
				tr.StreamStart(s)
				tr.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: key, Tap: "t"})
				_, _ = tr.TraceID(s)
				tr.StreamEnd(s)
			}
		}()
	}
	wg.Wait()
	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(rcv.byName()); n != workers*per {
		t.Errorf("%d spans, want %d", n, workers*per)
	}
}

func BenchmarkTracerRecord(b *testing.B) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	cfg := DefaultConfig()
	cfg.Protocol, cfg.Endpoint = ProtocolGRPC, "http://"+addr
	tr, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = tr.Shutdown(ctx)
	}()
	var r e2a.Record
	if err := e2a.ScanStd([]byte(`{"protocol_version":"1.0","request_id":"req_1","response_kind":"e2a.chunk","session_id":"s","sequence":1}`), &r); err != nil {
		b.Fatal(err)
	}
	ri := &validate.RecordInfo{In: &validate.Input{Tap: "agent-ws"}, Protocol: "e2a", Class: e2a.ClassResponse,
		Kind: "e2a.chunk", JSON: &r, Stream: []byte("req_1")}
	tr.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Key: "req_1"})
	b.ReportAllocs()
	for b.Loop() {
		tr.Record(ri)
	}
}

// BenchmarkTracerRecordRequest: what a request costs beyond a response: the
// bounded scan for agent, task and context (once per stream).
func BenchmarkTracerRecordRequest(b *testing.B) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	cfg := DefaultConfig()
	cfg.Protocol, cfg.Endpoint, cfg.MaxStreams = ProtocolGRPC, "http://"+addr, 1024
	tr, err := New(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = tr.Shutdown(ctx)
	}()
	// The reference's key order: provenance and ids, agent fields, then method and params.
	data := []byte(`{"protocol_version":"1.0","provenance":{"source_protocol":"e2a","converter":null,"converted_at":null,"details":{}},` +
		`"request_id":"req_1","jsonrpc_id":null,"correlation_id":null,"task_id":null,"context_id":null,"session_id":"sess_1",` +
		`"message_id":null,"timestamp":"2026-05-01T12:00:00.000000+00:00","identity_origin":"user","channel":"web","user_id":"u1",` +
		`"agent_ref":{"mode":"code","id":"default"},"chat_id":null,"source_agent_id":null,"agent_id":"main","service_id":null,` +
		`"workspace_key":null,"method":"chat.send","params":{"content":"` + strings.Repeat("word ", 100) + `"},"ext_method":null,` +
		`"session_update_kind":null,"is_stream":true,"expected_output_modes":[],"auth":null,"channel_context":{},"a2a_metadata":{},"acp_meta":{}}`)
	var r e2a.Record
	if err := e2a.ScanStd(data, &r); err != nil {
		b.Fatal(err)
	}
	ri := &validate.RecordInfo{In: &validate.Input{Tap: "agent-ws", Data: data}, Protocol: "e2a", Class: e2a.ClassRequest,
		Kind: "request", JSON: &r, Stream: []byte("req_1")}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		tr.Record(ri) // the same stream again: the scan and the lookup (its fields are kept once)
	}
}
