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
	ExportFailed uint64 // spans lost to export errors, or not exported by the end of Shutdown
	Dropped      uint64 // spans dropped because QueueSize spans waited for export already
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

	spans, sampledOut, evicted, exported, exportFailed, dropped atomic.Uint64
	shutdown                                                    atomic.Bool
	// pending counts the spans handed to the batch processor and not yet
	// through an export (queued, or in the batch being exported): the
	// queue's bound is kept here, where a drop can be counted (the SDK's
	// own drops are silent). cut is set when Shutdown gave up on them:
	// they are counted failed then, and an export ending after is not
	// counted again.
	pending atomic.Int64
	cut     atomic.Bool
	// failing: the last export failed; failedAt is exportFailed when it
	// began (the failure is logged when it begins and when it ends).
	failing  atomic.Bool
	failedAt atomic.Uint64
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
	// The batch processor's queue is as long as the bound that
	// boundedProcessor keeps on pending (which counts its batch too), so
	// it never drops a span itself: every drop is counted.
	bsp := sdktrace.NewBatchSpanProcessor(&countingExporter{SpanExporter: exp, t: t},
		sdktrace.WithMaxQueueSize(cfg.QueueSize))
	t.tp = sdktrace.NewTracerProvider(
		sdktrace.WithSpanProcessor(&boundedProcessor{SpanProcessor: bsp, t: t, limit: int64(cfg.QueueSize)}),
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
	err := t.tp.Shutdown(ctx)
	if ctx.Err() != nil && t.cut.CompareAndSwap(false, true) {
		// The collector did not take the last spans in time (it does
		// not answer, or too slowly): they are lost, counted as failed
		// exports, and the stop goes on.
		lost := max(t.pending.Load(), 0)
		t.exportFailed.Add(uint64(lost))
		t.log.Warn("trace export cut short by the stop: the spans not exported yet are lost", "spans_lost", lost, "err", ctx.Err())
		return nil
	}
	return err
}

// Stats returns the counters.
func (t *Tracer) Stats() Stats {
	return Stats{
		Spans: t.spans.Load(), SampledOut: t.sampledOut.Load(), Evicted: t.evicted.Load(),
		Exported: t.exported.Load(), ExportFailed: t.exportFailed.Load(), Dropped: t.dropped.Load(),
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
	err := e.SpanExporter.ExportSpans(ctx, spans)
	e.t.pending.Add(-int64(len(spans)))
	if e.t.cut.Load() {
		return nil // counted failed by Shutdown already
	}
	if err != nil {
		n := e.t.exportFailed.Add(uint64(len(spans)))
		if !e.t.failing.Swap(true) {
			// Once, not every batch (a collector down logged several a
			// second); the count goes on in Stats.
			e.t.failedAt.Store(n - uint64(len(spans)))
			e.t.log.Warn("trace export failed; spans are dropped until it works again, logged once", "spans", len(spans), "err", err)
		}
		return nil // handled here, once
	}
	e.t.exported.Add(uint64(len(spans)))
	if e.t.failing.Swap(false) {
		e.t.log.Info("trace export works again", "spans_lost", e.t.exportFailed.Load()-e.t.failedAt.Load())
	}
	return nil
}

// boundedProcessor is the batch processor with its queue bounded where a
// drop is counted: at most limit spans wait for export (Tracer.pending);
// a span past it is dropped (Stats.Dropped) instead of given to the batch
// processor, which would drop it without a count.
type boundedProcessor struct {
	sdktrace.SpanProcessor
	t     *Tracer
	limit int64
}

func (p *boundedProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		p.SpanProcessor.OnEnd(s) // not queued by the batch processor
		return
	}
	if p.t.pending.Add(1) > p.limit {
		p.t.pending.Add(-1)
		p.t.dropped.Add(1)
		return
	}
	p.SpanProcessor.OnEnd(s)
}

// stream is what the Tracer remembers of one stream until it ends. The
// strings are the record's bytes, clipped; they are redacted at StreamEnd.
type stream struct {
	key       string // tap NUL key, the map key
	method    string
	session   string
	channel   string
	model     string // EventMesh STREAM_REQ model
	agentID   string
	agent     string // agent_ref.id
	taskID    string
	context   string // context_id
	source    string // provenance.source_protocol
	a2aOp     string // a well-known a2a.method.name, from provenance.details
	respID    string // the first response_id, unless it is the request_id
	errCode   string // code of the first failed record
	parent    trace.SpanContext
	traceID   trace.TraceID
	reqTime   time.Time
	findings  []findingEvent
	dropped   uint32
	isStream  int8   // gen_ai.request.stream: 0 unknown, 1 false, 2 true
	a2a       bool   // an A2A projection (source a2a, or a2a.* responses)
	respIsKey bool   // the first response_id is the request_id
	flagged   bool   // a warning or error finding: always exported
	errRule   string // first error finding: the span status says it
	touched   uint64 // shard tick of the last use, for eviction
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
	// A request is read before the shard is locked.
	var f reqFields
	if create && ri.JSON != nil {
		scanRequest(ri.In.Data, &f)
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
		st.fromStreamReq(ri)
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
		st.fromRequest(ri, &f)
		return
	}
	// A response (or a JSON-RPC reply): nothing here allocates but once
	// per stream (the first other response_id, the first failure's code).
	if st.respID == "" && !st.respIsKey {
		if v := r.Get(e2a.FResponseID); v.Type == e2a.String && len(v.Str) > 0 {
			if string(v.Str) == string(ri.Stream) {
				st.respIsKey = true // the reference's way: nothing to keep
			} else {
				st.respID = clip(v.Str)
			}
		}
	}
	if len(ri.Kind) > 4 && ri.Kind[:4] == "a2a." {
		st.a2a = true
	}
	if st.errCode == "" {
		st.errCode = failureCode(r)
	}
}

// fromRequest reads what a JSON request says of the call: its W3C parent,
// streaming mode, agent, task and context, and provenance.
func (st *stream) fromRequest(ri *validate.RecordInfo, f *reqFields) {
	r := ri.JSON
	if v := r.Sub(e2a.STraceparent); v.Type == e2a.String {
		st.setParent(v.Str)
	}
	if v := r.Get(e2a.FIsStream); v.Type == e2a.Bool && st.isStream == 0 {
		st.isStream = 1
		if v.Bool {
			st.isStream = 2
		}
	}
	set := func(dst *string, v []byte) {
		if *dst == "" && len(v) > 0 {
			*dst = clip(v)
		}
	}
	// The reference's own rule: agent_id, else source_agent_id.
	set(&st.agentID, f.agentID)
	set(&st.agentID, f.sourceAgentID)
	set(&st.agent, f.agentRef)
	set(&st.taskID, f.taskID)
	set(&st.context, f.contextID)
	set(&st.source, f.sourceProtocol)
	if m, ok := a2aMethods[string(f.abstractOp)]; ok && st.a2aOp == "" {
		st.a2aOp = m
	}
	if string(f.sourceProtocol) == e2a.SourceProtocolA2A {
		st.a2a = true
	}
}

// fromStreamReq reads an EventMesh STREAM_REQ: parent, model and
// conversation. A STREAM_REQ always asks for a stream.
func (st *stream) fromStreamReq(ri *validate.RecordInfo) {
	fr := ri.Frame
	if v, ok := fr.Attr("traceparent"); ok {
		st.setParent(v)
	}
	st.isStream = 2
	if v, ok := fr.Attr("model"); ok && len(v) > 0 && st.model == "" {
		st.model = clip(v)
	}
	if v, ok := fr.Attr("conv"); ok && len(v) > 0 && st.session == "" {
		st.session = clip(v)
	}
}

// failureCode is the error code of a failed record: body.code of a failed
// response (an e2a.error's string code, an acp.jsonrpc_error's JSON-RPC
// number), ErrorTypeOther for a failure without one, "" if the record did
// not fail.
func failureCode(r *e2a.Record) string {
	if !r.Get(e2a.FStatus).Is("failed") {
		return ""
	}
	if v := r.Sub(e2a.SBodyCode); (v.Type == e2a.Number || v.Type == e2a.String) && len(v.Str) > 0 {
		return clip(v.Str)
	}
	return ErrorTypeOther
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
	red := t.redact
	method := t.token(st.method)
	invoke := st.a2a || invokesAgent(method)
	agent := t.token(st.agent)
	var name string
	switch {
	case invoke && agent != "":
		name = OperationInvokeAgent + " " + agent
	case invoke:
		name = OperationInvokeAgent
	default:
		name = method
	}

	attrs := make([]attribute.KeyValue, 0, 28)
	if invoke {
		attrs = append(attrs, attribute.String(AttrOperationName, OperationInvokeAgent))
	}
	if st.agent != "" {
		attrs = append(attrs, attribute.String(AttrAgentName, red(st.agent)))
	}
	if st.agentID != "" {
		attrs = append(attrs, attribute.String(AttrAgentID, red(st.agentID)))
	}
	// An A2A projection's conversation is its contextId (A2A conventions);
	// otherwise the E2A session (or the EventMesh conv).
	conv := st.session
	if st.a2a && st.context != "" {
		conv = st.context
	}
	if conv != "" {
		attrs = append(attrs, attribute.String(AttrConversationID, red(conv)))
	}
	if st.model != "" {
		attrs = append(attrs, attribute.String(AttrRequestModel, red(st.model)))
	}
	if st.isStream != 0 {
		attrs = append(attrs, attribute.Bool(AttrRequestStream, st.isStream == 2))
	}
	if s.Protocol == validate.ProtoEventMesh {
		attrs = append(attrs, attribute.String(AttrSID, red(s.Key)))
	} else {
		attrs = append(attrs, attribute.String(AttrRequestID, red(s.Key)))
		// The reference answers with response_id == request_id.
		if rid := st.respID; rid != "" || st.respIsKey {
			if st.respIsKey {
				rid = s.Key
			}
			attrs = append(attrs, attribute.String(AttrResponseID, red(rid)))
		}
	}
	if !s.FirstChunk.IsZero() && (s.Request || !st.reqTime.IsZero()) && !s.FirstChunk.Before(start) {
		attrs = append(attrs, attribute.Float64(AttrTimeToFirstChunk, s.FirstChunk.Sub(start).Seconds()))
	}
	if st.a2a {
		if st.a2aOp != "" {
			attrs = append(attrs, attribute.String(AttrA2AMethod, st.a2aOp))
		}
		if st.taskID != "" {
			attrs = append(attrs, attribute.String(AttrA2ATaskID, red(st.taskID)))
		}
	}
	if method != "" {
		attrs = append(attrs, attribute.String(AttrMethod, method))
	}
	if st.channel != "" {
		attrs = append(attrs, attribute.String(AttrChannel, red(st.channel)))
	}
	if src := t.token(st.source); src != "" {
		attrs = append(attrs, attribute.String(AttrSourceProtocol, src))
	}

	kind := trace.SpanKindInternal
	if t.cfg.Taps != nil {
		if tp, ok := t.cfg.Taps(s.Tap); ok {
			if tp.relays() {
				kind = trace.SpanKindClient
			}
			if p := tp.networkProtocol(); p != "" {
				attrs = append(attrs, attribute.String(AttrNetworkProtocol, p))
			}
			if host, port := tp.server(); host != "" {
				attrs = append(attrs, attribute.String(AttrServerAddress, red(host)), attribute.Int(AttrServerPort, port))
			}
			if tp.Type != "" {
				attrs = append(attrs, attribute.String(AttrTapType, tp.Type))
			}
		}
	}

	reason := s.Reason
	if reason == validate.ReasonFinal {
		reason = ReasonFinal
	}
	attrs = append(attrs,
		attribute.String(AttrOutcome, s.Outcome.String()),
		attribute.String(AttrReason, reason),
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

	// Status and error.type (Recording Errors): a failed stream says the
	// failed record's code; a stream e2atap found broken, the first error
	// rule; _OTHER when neither is usable.
	errType, status := "", ""
	switch {
	case s.Outcome == validate.OutcomeFailed:
		errType, status = t.token(st.errCode), "stream failed"
		if errType == "" {
			errType = ErrorTypeOther
		}
	case st.errRule != "":
		errType, status = st.errRule, st.errRule
	case s.Errors > 0:
		errType, status = ErrorTypeOther, "error findings"
	}
	if errType != "" {
		attrs = append(attrs, attribute.String(AttrErrorType, errType))
	}

	_, span := t.tracer.Start(ctx, name, trace.WithTimestamp(start),
		trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
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
	if status != "" {
		span.SetStatus(codes.Error, status)
	}
	span.End(trace.WithTimestamp(end))
	t.spans.Add(1)
}

// token returns v if it can be a span name or a low-cardinality value
// (short, no spaces or odd bytes) that the redaction policy leaves alone;
// "" otherwise. A value shaped like a credential is no name.
func (t *Tracer) token(v string) string {
	if v == "" || spanName([]byte(v)) == "" || t.redact(v) != v {
		return ""
	}
	return v
}
