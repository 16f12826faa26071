package traces

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"

	"go.opentelemetry.io/otel/trace"
)

// traceIDKey carries a trace id chosen before the span is built (at the
// stream's first sight) into the ID generator, so that the exemplar the
// metrics sink attached and the exported span agree.
type traceIDKey struct{}

// idGen is the SDK's ID generator: the trace id of a root span comes from
// the context when set there, the rest is random.
type idGen struct{}

func (idGen) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := ctx.Value(traceIDKey{}).(trace.TraceID)
	if !ok || !tid.IsValid() {
		tid = newTraceID()
	}
	return tid, newSpanID()
}

func (idGen) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newTraceID() trace.TraceID {
	var t trace.TraceID
	for !t.IsValid() {
		binary.BigEndian.PutUint64(t[:8], rand.Uint64())
		binary.BigEndian.PutUint64(t[8:], rand.Uint64())
	}
	return t
}

func newSpanID() trace.SpanID {
	var s trace.SpanID
	for !s.IsValid() {
		binary.BigEndian.PutUint64(s[:], rand.Uint64())
	}
	return s
}

// parseTraceparent reads a W3C traceparent header value
// (version-traceid-parentid-flags, lowercase hex). Version 00 must have
// exactly four fields; a later version may carry more after a dash, as the
// W3C recommendation allows. Version ff and all-zero ids are invalid.
func parseTraceparent(b []byte) (trace.SpanContext, bool) {
	if len(b) < 55 || (len(b) > 55 && b[55] != '-') || b[2] != '-' || b[35] != '-' || b[52] != '-' {
		return trace.SpanContext{}, false
	}
	for _, c := range b[:55] {
		if c != '-' && !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return trace.SpanContext{}, false
		}
	}
	var ver [1]byte
	var tid trace.TraceID
	var sid trace.SpanID
	var flags [1]byte
	if _, err := hex.Decode(ver[:], b[0:2]); err != nil || ver[0] == 0xff || (ver[0] == 0 && len(b) != 55) {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(tid[:], b[3:35]); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(sid[:], b[36:52]); err != nil {
		return trace.SpanContext{}, false
	}
	if _, err := hex.Decode(flags[:], b[53:55]); err != nil {
		return trace.SpanContext{}, false
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    tid,
		SpanID:     sid,
		TraceFlags: trace.TraceFlags(flags[0]) & trace.FlagsSampled,
		Remote:     true,
	})
	return sc, sc.IsValid()
}

// ratioBound turns a ratio into the threshold ratioKeep compares with, the
// same arithmetic as OpenTelemetry's TraceIDRatioBased sampler, so that a
// stream kept here is kept by an upstream sampler with the same ratio.
func ratioBound(r float64) uint64 {
	if r >= 1 {
		return 1 << 63
	}
	if r <= 0 {
		return 0
	}
	return uint64(r * (1 << 63))
}

func ratioKeep(tid trace.TraceID, bound uint64) bool {
	return binary.BigEndian.Uint64(tid[8:16])>>1 < bound
}
