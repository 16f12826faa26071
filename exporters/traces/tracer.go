package traces

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

// Span names when the request's method is unknown.
const (
	NameE2A       = "e2a.stream"
	NameEventMesh = "eventmesh.stream"
)

// Attribute keys and event names: a contract with dashboards and queries.
const (
	AttrRequestID       = "e2a.request_id"
	AttrSessionID       = "e2a.session_id"
	AttrChannel         = "e2a.channel"
	AttrMethod          = "e2a.method"
	AttrOutcome         = "e2a.outcome"
	AttrEndReason       = "e2a.end_reason"
	AttrRecords         = "e2a.records"
	AttrHeartbeats      = "e2a.heartbeats"
	AttrErrors          = "e2a.errors"
	AttrSID             = "eventmesh.sid"
	AttrTap             = "e2atap.tap"
	AttrProtocol        = "e2atap.protocol"
	AttrGap             = "e2atap.gap"
	AttrFindingsDropped = "e2atap.findings_dropped"

	EventFirstChunk = "e2a.first_chunk"
	EventFinding    = "e2a.finding"
	AttrRule        = "e2a.rule"
	AttrSeverity    = "e2a.severity"
	AttrMessage     = "e2a.message"
)

// ErrShutdown is returned by Shutdown when called twice.
var ErrShutdown = errors.New("traces: already shut down")

const (
	numShards   = 64
	recentSlots = 256 // per shard: streams just ended, for TraceID after StreamEnd
	evictSample = 8   // entries looked at to pick the stalest one to evict
	// maxAttrLen bounds every attribute value (finding messages, ids).
	maxAttrLen = 512
)

// Stats counts what the Tracer did; read with (*Tracer).Stats.
type Stats struct {
	Spans        uint64 // spans handed to the SDK
	SampledOut   uint64 // clean successful streams not exported (ratio)
	Evicted      uint64 // per-stream states evicted because the table was full
	Exported     uint64 // spans the exporter accepted
	ExportFailed uint64 // spans lost to export errors
}

// Tracer is the trace sink. Build it with New.
type Tracer struct {
	on     bool
	cfg    Config
	log    *slog.Logger
	tp     *sdktrace.TracerProvider
	tracer trace.Tracer
	bound  uint64
	seed   maphash.Seed
	per    int // state entries per shard
	shards [numShards]shard

	spans, sampledOut, evicted, exported, exportFailed atomic.Uint64
	shutdown                                           atomic.Bool
}

var _ validate.Sink = (*Tracer)(nil)

// New builds the Tracer. With tracing off (cfg.Enabled() false) it returns
// a Tracer that does nothing. The exporter connects lazily: an unreachable
// collector is not an error here, its failures are logged and counted.
func New(ctx context.Context, cfg Config, logger *slog.Logger) (*Tracer, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := &Tracer{cfg: cfg, log: logger}
	if !cfg.Enabled() {
		return t, nil
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var (
		exp sdktrace.SpanExporter
		err error
	)
	switch cfg.Protocol {
	case ProtocolGRPC:
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(cfg.Endpoint)}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlptracegrpc.WithTimeout(cfg.Timeout))
		}
		exp, err = otlptracegrpc.New(ctx, opts...)
	default:
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(cfg.Endpoint)}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
		}
		if cfg.Timeout > 0 {
			opts = append(opts, otlptracehttp.WithTimeout(cfg.Timeout))
		}
		exp, err = otlptracehttp.New(ctx, opts...)
	}
	if err != nil {
		return nil, fmt.Errorf("traces: exporter: %w", err)
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", cfg.ServiceName)}
	for k, v := range cfg.ResourceAttributes {
		attrs = append(attrs, attribute.String(k, v))
	}
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(sdktrace.NewBatchSpanProcessor(&countingExporter{SpanExporter: exp, t: t},
			sdktrace.WithMaxQueueSize(cfg.QueueSize))),
		// The decision is ours, taken at the end of the stream.
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithIDGenerator(idGen{}),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit:   maxAttrLen,
			AttributeCountLimit:         32,
			EventCountLimit:             cfg.MaxFindings + 2,
			LinkCountLimit:              0,
			AttributePerEventCountLimit: 8,
			AttributePerLinkCountLimit:  0,
		}),
	)
	t.tracer = t.tp.Tracer("github.com/e2atap/e2atap/exporters/traces")
	t.on = true
	t.bound = ratioBound(cfg.Ratio)
	t.seed = maphash.MakeSeed()
	t.per = max(1, (cfg.MaxStreams+numShards-1)/numShards)
	for i := range t.shards {
		t.shards[i].m = make(map[string]*stream)
	}
	return t, nil
}

// Shutdown exports the spans still queued and stops the exporter. Sink
// calls after it are ignored.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if !t.on {
		return nil
	}
	if t.shutdown.Swap(true) {
		return ErrShutdown
	}
	return t.tp.Shutdown(ctx)
}

// Stats returns the counters.
func (t *Tracer) Stats() Stats {
	return Stats{
		Spans: t.spans.Load(), SampledOut: t.sampledOut.Load(), Evicted: t.evicted.Load(),
		Exported: t.exported.Load(), ExportFailed: t.exportFailed.Load(),
	}
}

// countingExporter counts and logs export results, so that failures reach
// the Tracer's logger and counters instead of OpenTelemetry's global error
// handler.
type countingExporter struct {
	sdktrace.SpanExporter
	t *Tracer
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.t.exportFailed.Add(uint64(len(spans)))
		e.t.log.Warn("trace export failed", "spans", len(spans), "err", err)
		return nil // handled here, once
	}
	e.t.exported.Add(uint64(len(spans)))
	return nil
}

// stream is what the Tracer remembers of one stream until it ends.
type stream struct {
	key      string // tap NUL key, the map key
	method   string
	session  string
	channel  string
	parent   trace.SpanContext
	traceID  trace.TraceID
	reqTime  time.Time
	findings []findingEvent
	dropped  uint32
	flagged  bool   // a warning or error finding: always exported
	errRule  string // first error finding: the span status says it
	touched  uint64 // shard tick of the last use, for eviction
}

type findingEvent struct {
	rule, message string
	severity      validate.Severity
	at            time.Time
}

type ended struct {
	key     string
	traceID trace.TraceID
	keep    bool
}

type shard struct {
	mu     sync.Mutex
	m      map[string]*stream
	tick   uint64
	recent [recentSlots]ended
}

// appendKey builds the state key (tap NUL stream key) into buf.
func appendKey[S string | []byte](buf []byte, tap string, key S) []byte {
	buf = append(buf, tap...)
	buf = append(buf, 0)
	return append(buf, key...)
}

func (t *Tracer) shardOf(k []byte) (*shard, int) {
	h := maphash.Bytes(t.seed, k)
	return &t.shards[h%numShards], int((h / numShards) % recentSlots)
}

// How get treats a stream it does not track.
const (
	lookupOnly        = iota
	createUnlessEnded // not if it just ended: a finding on a record after the final
	createAlways      // a request or a stream start: a new stream, even with a reused key
)

// get returns the state of k, creating it as mode says. The shard is locked
// by the caller.
func (t *Tracer) get(sh *shard, k []byte, slot int, mode int) *stream {
	sh.tick++
	if st := sh.m[string(k)]; st != nil {
		st.touched = sh.tick
		return st
	}
	switch {
	case mode == lookupOnly:
		return nil
	case sh.recent[slot].key == string(k):
		if mode == createUnlessEnded {
			return nil
		}
		sh.recent[slot] = ended{}
	}
	if len(sh.m) >= t.per {
		t.evictOne(sh)
	}
	st := &stream{key: string(k), traceID: newTraceID(), touched: sh.tick}
	sh.m[st.key] = st
	return st
}

// evictOne drops the stalest of a few entries: cheap, and good enough to
// clear out streams that never ended.
func (t *Tracer) evictOne(sh *shard) {
	var victim *stream
	n := 0
	for _, st := range sh.m {
		if victim == nil || st.touched < victim.touched {
			victim = st
		}
		if n++; n == evictSample {
			break
		}
	}
	if victim != nil {
		delete(sh.m, victim.key)
		t.evicted.Add(1)
	}
}

// Record learns the method, session, channel, request time and parent of a
// stream from its request (and fills gaps from its responses).
func (t *Tracer) Record(ri *validate.RecordInfo) {
	if !t.on || len(ri.Stream) == 0 || ri.ServerPush || ri.In == nil {
		return
	}
	create := false
	switch {
	case ri.JSON != nil:
		switch ri.Class {
		case e2a.ClassRequest:
			create = true
		case e2a.ClassJSONRPC:
			create = ri.JSON.Get(e2a.FMethod).Type == e2a.String
		case e2a.ClassResponse, e2a.ClassLegacyResponse:
		default:
			return
		}
	case ri.Frame != nil:
		if ri.Frame.MsgType != frame.TypeStreamReq {
			return // chunks carry nothing the span needs beyond StreamInfo
		}
		create = true
	default:
		return
	}
	var buf [128]byte
	k := appendKey(buf[:0], ri.In.Tap, ri.Stream)
	sh, slot := t.shardOf(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	mode := lookupOnly
	if create {
		mode = createAlways
	}
	st := t.get(sh, k, slot, mode)
	if st == nil {
		return
	}
	if create && st.reqTime.IsZero() {
		st.reqTime = ri.In.Time
	}
	if ri.Frame != nil {
		if v, ok := ri.Frame.Attr("traceparent"); ok {
			st.setParent(v)
		}
		return
	}
	r := ri.JSON
	if st.method == "" {
		if v := r.Get(e2a.FMethod); v.Type == e2a.String {
			st.method = spanName(v.Str)
		} else if v := r.Get(e2a.FReqMethod); v.Type == e2a.String {
			st.method = spanName(v.Str)
		}
	}
	if st.session == "" {
		if v := r.Get(e2a.FSessionID); v.Type == e2a.String && len(v.Str) > 0 {
			st.session = clip(v.Str)
		}
	}
	if st.channel == "" {
		if v := r.Get(e2a.FChannel); v.Type == e2a.String && len(v.Str) > 0 {
			st.channel = clip(v.Str)
		} else if v := r.Get(e2a.FChannelID); v.Type == e2a.String && len(v.Str) > 0 {
			st.channel = clip(v.Str)
		}
	}
	if create {
		if v := r.Sub(e2a.STraceparent); v.Type == e2a.String {
			st.setParent(v.Str)
		}
	}
}

// redact passes a value taken from a record through the configured
// Redactor; without one the value is masked whole. It runs once per value
// of an exported span, at StreamEnd, never on the record path.
func (t *Tracer) redact(v string) string {
	if v == "" {
		return v
	}
	if t.cfg.Redactor == nil {
		return "******"
	}
	return string(t.cfg.Redactor.MaskText(make([]byte, 0, len(v)+16), []byte(v)))
}

func (st *stream) setParent(v []byte) {
	if st.parent.IsValid() {
		return
	}
	if sc, ok := parseTraceparent(v); ok {
		st.parent = sc
		st.traceID = sc.TraceID()
	}
}

// spanName keeps a method as the span name only if it looks like one (short,
// no spaces or odd bytes): span names must stay few and never carry data.
func spanName(b []byte) string {
	if len(b) == 0 || len(b) > 64 {
		return ""
	}
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9',
			c == '.', c == '_', c == '-', c == '/', c == ':':
		default:
			return ""
		}
	}
	return string(b)
}

func clip(b []byte) string {
	if len(b) > maxAttrLen {
		b = b[:maxAttrLen]
	}
	return string(b)
}

// Finding attaches a finding to its stream's span.
func (t *Tracer) Finding(f *validate.Finding) {
	if !t.on || f.Stream == "" || f.Severity == validate.Off {
		return
	}
	var buf [128]byte
	k := appendKey(buf[:0], f.Tap, f.Stream)
	sh, slot := t.shardOf(k)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	st := t.get(sh, k, slot, createUnlessEnded)
	if st == nil {
		return
	}
	if f.Severity >= validate.Warning {
		st.flagged = true
	}
	if f.Severity == validate.Error && st.errRule == "" {
		st.errRule = f.Rule
	}
	if len(st.findings) >= t.cfg.MaxFindings {
		st.dropped++
		return
	}
	st.findings = append(st.findings, findingEvent{rule: f.Rule, message: f.Message, severity: f.Severity, at: f.Time})
}

// StreamStart begins tracking a stream (if its request did not already).
func (t *Tracer) StreamStart(s *validate.StreamInfo) {
	if !t.on {
		return
	}
	var buf [128]byte
	k := appendKey(buf[:0], s.Tap, s.Key)
	sh, slot := t.shardOf(k)
	sh.mu.Lock()
	t.get(sh, k, slot, createAlways)
	sh.mu.Unlock()
}

// keep is the export decision: everything that is not a clean success is
// exported; clean successes at the configured ratio.
func (t *Tracer) keep(s *validate.StreamInfo, st *stream, tid trace.TraceID) bool {
	if s.Outcome != validate.OutcomeSucceeded || s.Errors > 0 || s.Gap || (st != nil && st.flagged) {
		return true
	}
	return ratioKeep(tid, t.bound)
}

// TraceID reports the trace id of the stream's span if it is (or will be)
// exported: the exemplar source for the metrics sink
// (metrics.Options.TraceID). It answers both before and shortly after the
// Tracer's own StreamEnd for the stream, so the order of the sinks does not
// matter.
func (t *Tracer) TraceID(s *validate.StreamInfo) (string, bool) {
	if !t.on {
		return "", false
	}
	var buf [128]byte
	k := appendKey(buf[:0], s.Tap, s.Key)
	sh, slot := t.shardOf(k)
	sh.mu.Lock()
	var (
		tid  trace.TraceID
		keep bool
	)
	if st := sh.m[string(k)]; st != nil {
		tid, keep = st.traceID, t.keep(s, st, st.traceID)
	} else if e := &sh.recent[slot]; e.key == string(k) {
		tid, keep = e.traceID, e.keep
	}
	sh.mu.Unlock()
	if !keep {
		return "", false
	}
	return tid.String(), true
}

// StreamEnd builds and ends the stream's span, if it is to be exported.
func (t *Tracer) StreamEnd(s *validate.StreamInfo) {
	if !t.on || t.shutdown.Load() {
		return
	}
	var buf [128]byte
	k := appendKey(buf[:0], s.Tap, s.Key)
	sh, slot := t.shardOf(k)
	sh.mu.Lock()
	st := sh.m[string(k)]
	var tid trace.TraceID
	if st != nil {
		delete(sh.m, st.key)
		tid = st.traceID
	} else {
		tid = newTraceID()
	}
	keep := t.keep(s, st, tid)
	if st != nil {
		sh.recent[slot] = ended{key: st.key, traceID: tid, keep: keep}
	}
	sh.mu.Unlock()
	if !keep {
		t.sampledOut.Add(1)
		return
	}
	t.emit(s, st, tid)
}

func (t *Tracer) emit(s *validate.StreamInfo, st *stream, tid trace.TraceID) {
	if st == nil {
		st = &stream{}
	}
	ctx := context.Background()
	if st.parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, st.parent)
	} else {
		ctx = context.WithValue(ctx, traceIDKey{}, tid)
	}
	start, end := s.Start, s.End
	if !st.reqTime.IsZero() && (start.IsZero() || st.reqTime.Before(start)) {
		start = st.reqTime
	}
	if start.IsZero() {
		start = end
	}
	if end.Before(start) {
		end = start
	}
	red := func(v string) string { return t.redact(v) }
	method := st.method
	if method != "" && red(method) != method {
		method = "" // a method shaped like a credential is no span name
	}
	name := method
	if name == "" {
		name = NameE2A
		if s.Protocol == validate.ProtoEventMesh {
			name = NameEventMesh
		}
	}
	reason := s.Reason
	if reason == validate.ReasonFinal {
		reason = "final"
	}
	attrs := make([]attribute.KeyValue, 0, 14)
	if s.Protocol == validate.ProtoEventMesh {
		attrs = append(attrs, attribute.String(AttrSID, red(s.Key)))
	} else {
		attrs = append(attrs, attribute.String(AttrRequestID, red(s.Key)))
	}
	if st.session != "" {
		attrs = append(attrs, attribute.String(AttrSessionID, red(st.session)))
	}
	if st.channel != "" {
		attrs = append(attrs, attribute.String(AttrChannel, red(st.channel)))
	}
	if method != "" {
		attrs = append(attrs, attribute.String(AttrMethod, method))
	}
	attrs = append(attrs,
		attribute.String(AttrOutcome, s.Outcome.String()),
		attribute.String(AttrEndReason, reason),
		attribute.Int64(AttrRecords, int64(s.Records)),
		attribute.Int64(AttrHeartbeats, int64(s.Heartbeats)),
		attribute.Int64(AttrErrors, int64(s.Errors)),
		attribute.String(AttrTap, s.Tap),
		attribute.String(AttrProtocol, s.Protocol),
	)
	if s.Gap {
		attrs = append(attrs, attribute.Bool(AttrGap, true))
	}
	if st.dropped > 0 {
		attrs = append(attrs, attribute.Int64(AttrFindingsDropped, int64(st.dropped)))
	}
	_, span := t.tracer.Start(ctx, name, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if !s.FirstChunk.IsZero() {
		span.AddEvent(EventFirstChunk, trace.WithTimestamp(s.FirstChunk))
	}
	for _, f := range st.findings {
		at := f.at
		if at.IsZero() {
			at = end
		}
		span.AddEvent(EventFinding, trace.WithTimestamp(at), trace.WithAttributes(
			attribute.String(AttrRule, f.rule),
			attribute.String(AttrSeverity, f.severity.String()),
			attribute.String(AttrMessage, red(f.message)),
		))
	}
	switch {
	case s.Outcome == validate.OutcomeFailed:
		span.SetStatus(codes.Error, "stream failed")
	case st.errRule != "":
		span.SetStatus(codes.Error, st.errRule)
	case s.Errors > 0:
		span.SetStatus(codes.Error, "error findings")
	}
	span.End(trace.WithTimestamp(end))
	t.spans.Add(1)
}
