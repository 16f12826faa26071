package metrics

import (
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/e2atap/e2atap/validate"
)

// Namespace is the prefix of every metric name.
const Namespace = "e2atap"

// ExemplarLabel is the exemplar label that carries a trace id.
const ExemplarLabel = "trace_id"

// DefaultMaxLabelValues caps the distinct values of one label. The rule
// catalogue has about 50 rule ids and the engine about 20 kinds, so the cap
// only bites when something upstream is broken.
const DefaultMaxLabelValues = 128

// maxCachedSeries bounds each child cache. Past it new combinations still
// count correctly, through the slower client-library lookup.
const maxCachedSeries = 4096

// Options configures New. The zero value is usable.
type Options struct {
	// Version is the build_info version label; "" reads the main module's
	// version from the build information ("unknown" if there is none).
	Version string
	// TraceID, when set, gives the trace id (32 lowercase hex digits) of a
	// stream's span, for exemplars on stream_duration_seconds and
	// time_to_first_chunk_seconds. It is called once per stream end, never
	// per record, and should report false for streams whose span is not
	// exported, so that no exemplar points at a trace that does not exist.
	// traces.(*Tracer).TraceID has this signature.
	TraceID func(*validate.StreamInfo) (traceID string, ok bool)
	// MaxLabelValues caps the distinct values per label; 0 means
	// DefaultMaxLabelValues. Values past the cap are counted as "other".
	MaxLabelValues int
	// DurationBuckets, FirstChunkBuckets and RecordBuckets override the
	// classic buckets of the stream histograms (native buckets are always
	// on: factor 1.1, at most 160 buckets).
	DurationBuckets   []float64
	FirstChunkBuckets []float64
	RecordBuckets     []float64
}

// Default classic buckets. Agent streams run from a few hundred
// milliseconds to many minutes; the first chunk usually comes within
// seconds.
var (
	defaultDurationBuckets   = []float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800}
	defaultFirstChunkBuckets = []float64{0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	defaultRecordBuckets     = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}
)

// Metrics is the Prometheus sink. Build it with New.
type Metrics struct {
	traceID func(*validate.StreamInfo) (string, bool)

	records        *prometheus.CounterVec
	findings       *prometheus.CounterVec
	streamsActive  *prometheus.GaugeVec
	streamsTotal   *prometheus.CounterVec
	streamDuration *prometheus.HistogramVec
	firstChunk     *prometheus.HistogramVec
	streamRecords  *prometheus.HistogramVec
	heartbeats     *prometheus.CounterVec

	// Caches of children, keyed by the label values as the engine gives
	// them (before capping).
	recordCache  cowMap[recordKey, *recordSeries]
	findingCache cowMap[findingKey, prometheus.Counter]
	tapCache     cowMap[string, *tapSeries]
	recent       [recentSlots]atomic.Pointer[recentSeries]

	// Caps per label; tap is shared by every family.
	tapCap, protoCap, kindCap, statusCap, ruleCap *labelCap
}

type recordKey struct{ tap, protocol, kind, status string }

// Record's fast path: the series of the label values last seen in each of
// recentSlots slots, indexed by where the values' bytes are (the engine's
// labels are constants, a tap's name one string): a look-up is one atomic
// load and a comparison of four data pointers and lengths, with no hash
// and no compare of the label values. A miss goes through recordCache.
const recentSlots = 256

// recentSeries is a recent slot: the label values as the caller gave them
// (not cloned, unlike the cache's key) and their series. Holding the
// caller's strings keeps their bytes alive and unchanged, so that the same
// data pointer and length is the same value: identity decides a hit. A
// value equal to k at another address misses, and costs a cache look-up,
// never a wrong count.
type recentSeries struct {
	k  recordKey
	rs *recordSeries
}

// same: a's strings are b's, by identity (data pointer and length).
func (a *recordKey) same(b *recordKey) bool {
	return unsafe.StringData(a.tap) == unsafe.StringData(b.tap) && len(a.tap) == len(b.tap) &&
		unsafe.StringData(a.protocol) == unsafe.StringData(b.protocol) && len(a.protocol) == len(b.protocol) &&
		unsafe.StringData(a.kind) == unsafe.StringData(b.kind) && len(a.kind) == len(b.kind) &&
		unsafe.StringData(a.status) == unsafe.StringData(b.status) && len(a.status) == len(b.status)
}

// recordStripes: a series' count not yet added to its counter, split by
// engine (shard), so that two shards counting the same series do not
// contend for one cache line on every record; Gather adds them up first
// (foldingCounterVec), so every scrape sees every record counted before
// it.
const recordStripes = 8

// recordSeries is one records_total child and what Record needs with it.
type recordSeries struct {
	k   recordKey
	c   prometheus.Counter
	tap *tapSeries
	// striped: counts go to n (folded into c at Gather); not for a series
	// past maxCachedSeries, which fold would not find.
	striped bool
	n       [recordStripes]stripe
}

type stripe struct {
	v atomic.Uint64
	_ [56]byte // a cache line each
}

type findingKey struct {
	tap, rule string
	severity  validate.Severity
}

// tapSeries holds the children that only depend on the tap.
type tapSeries struct {
	active     prometheus.Gauge
	heartbeats prometheus.Counter
	firstChunk histogram
	records    prometheus.Observer
	outcomes   [validate.NumOutcomes]outcomeSeries
}

type outcomeSeries struct {
	total    prometheus.Counter
	duration histogram
}

// histogram is an observer with its exemplar interface resolved once.
type histogram struct {
	obs prometheus.Observer
	ex  prometheus.ExemplarObserver // nil if the child has no exemplars
}

func (h histogram) observe(v float64, traceID string) {
	if traceID != "" && h.ex != nil {
		h.ex.ObserveWithExemplar(v, prometheus.Labels{ExemplarLabel: traceID})
		return
	}
	h.obs.Observe(v)
}

func newHistogram(o prometheus.Observer) histogram {
	ex, _ := o.(prometheus.ExemplarObserver)
	return histogram{obs: o, ex: ex}
}

var _ validate.Sink = (*Metrics)(nil)

// New registers the e2atap metric families with reg (it panics, as promauto
// does, if one is already registered) and returns the sink.
func New(reg prometheus.Registerer, opts Options) *Metrics {
	max := opts.MaxLabelValues
	if max <= 0 {
		max = DefaultMaxLabelValues
	}
	f := promauto.With(reg)
	native := func(o prometheus.HistogramOpts) prometheus.HistogramOpts {
		o.Namespace = Namespace
		o.NativeHistogramBucketFactor = 1.1
		o.NativeHistogramMaxBucketNumber = 160
		o.NativeHistogramMinResetDuration = time.Hour
		o.NativeHistogramMaxExemplars = 10
		return o
	}
	m := &Metrics{
		traceID: opts.TraceID,
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "records_total",
			Help: "Records the engine classified, by tap, protocol, kind and status.",
		}, []string{"tap", "protocol", "kind", "status"}),
		findings: f.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "findings_total",
			Help: "Protocol findings, by tap, rule id and severity.",
		}, []string{"tap", "rule", "severity"}),
		streamsActive: f.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "streams_active",
			Help: "Streams started and not yet ended.",
		}, []string{"tap"}),
		streamsTotal: f.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "streams_total",
			Help: "Streams ended, by outcome (succeeded, failed, cancelled, missing_final, evicted).",
		}, []string{"tap", "outcome"}),
		streamDuration: f.NewHistogramVec(native(prometheus.HistogramOpts{
			Name:    "stream_duration_seconds",
			Help:    "Time from a stream's start (request or first record) to its end.",
			Buckets: bucketsOr(opts.DurationBuckets, defaultDurationBuckets),
		}), []string{"tap", "outcome"}),
		firstChunk: f.NewHistogramVec(native(prometheus.HistogramOpts{
			Name:    "time_to_first_chunk_seconds",
			Help:    "Time from a stream's start to its first chunk.",
			Buckets: bucketsOr(opts.FirstChunkBuckets, defaultFirstChunkBuckets),
		}), []string{"tap"}),
		streamRecords: f.NewHistogramVec(native(prometheus.HistogramOpts{
			Name:    "stream_records",
			Help:    "Records per stream, heartbeats included.",
			Buckets: bucketsOr(opts.RecordBuckets, defaultRecordBuckets),
		}), []string{"tap"}),
		heartbeats: f.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "heartbeats_total",
			Help: "Keepalive chunks (jiuwenswarm sequence -1), counted outside the sequence rules.",
		}, []string{"tap"}),
		tapCap:    newLabelCap(max),
		protoCap:  newLabelCap(max),
		kindCap:   newLabelCap(max),
		statusCap: newLabelCap(max),
		ruleCap:   newLabelCap(max),
	}
	if reg != nil {
		reg.MustRegister(foldingCounterVec{m.records, m})
	}
	f.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "build_info",
		Help: "Always 1; the labels say which build is running.",
	}, []string{"version", "goversion"}).WithLabelValues(version(opts.Version), runtime.Version()).Set(1)
	return m
}

func bucketsOr(b, def []float64) []float64 {
	if len(b) > 0 {
		return b
	}
	return def
}

func version(v string) string {
	if v != "" {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "unknown"
}

// Record counts one record. It is the hot path: no allocation and no
// hash of the label values once the combination has been seen (recent).
func (m *Metrics) Record(ri *validate.RecordInfo) {
	var tap string
	if ri.In != nil {
		tap = ri.In.Tap
	}
	k := recordKey{tap, ri.Protocol, ri.Kind, ri.Status}
	slot := &m.recent[recentSlot(&k)]
	var rs *recordSeries
	if e := slot.Load(); e != nil && e.k.same(&k) {
		rs = e.rs
	} else {
		var ok bool
		if rs, ok = m.recordCache.load(k); !ok {
			rs = m.recordSlow(k)
		}
		slot.Store(&recentSeries{k, rs})
	}
	if rs.striped {
		// The engine's RecordInfo is its own (one per shard): its address
		// picks the stripe.
		rs.n[stripeOf(unsafe.Pointer(ri))].v.Add(1)
	} else {
		rs.c.Inc()
	}
	if ri.Heartbeat {
		rs.tap.heartbeats.Inc()
	}
}

// recentSlot is k's slot in Metrics.recent: a mix of where its strings'
// bytes are and how long they are. Equal values at other addresses may
// take another slot; that costs a miss, never a wrong count.
func recentSlot(k *recordKey) int {
	h := uint64(uintptr(unsafe.Pointer(unsafe.StringData(k.tap)))) + uint64(len(k.tap))
	h = h*0x9e3779b97f4a7c15 + uint64(uintptr(unsafe.Pointer(unsafe.StringData(k.protocol))))
	h = h*0x9e3779b97f4a7c15 + uint64(uintptr(unsafe.Pointer(unsafe.StringData(k.kind)))) + uint64(len(k.kind))
	h = h*0x9e3779b97f4a7c15 + uint64(uintptr(unsafe.Pointer(unsafe.StringData(k.status)))) + uint64(len(k.status))
	h *= 0x9e3779b97f4a7c15
	return int(h >> (64 - 8)) // recentSlots = 1<<8
}

func stripeOf(p unsafe.Pointer) int {
	return int((uint64(uintptr(p)) * 0x9e3779b97f4a7c15) >> (64 - 3)) // recordStripes = 1<<3
}

func (m *Metrics) recordSlow(k recordKey) *recordSeries {
	k = recordKey{strings.Clone(k.tap), strings.Clone(k.protocol), strings.Clone(k.kind), strings.Clone(k.status)}
	return m.recordCache.loadOrCreate(k, maxCachedSeries, func() *recordSeries {
		// Under the cache's lock: whether it keeps the series (and fold
		// will find it) is known here, before anyone else can see it.
		n := 0
		if p := m.recordCache.p.Load(); p != nil {
			n = len(*p)
		}
		return &recordSeries{k: k, tap: m.tap(k.tap), striped: n < maxCachedSeries,
			c: m.records.WithLabelValues(m.tapCap.value(k.tap), m.protoCap.value(k.protocol),
				m.kindCap.value(k.kind), m.statusCap.value(k.status))}
	})
}

// fold adds the striped counts of every cached series to its counter.
func (m *Metrics) fold() {
	p := m.recordCache.p.Load()
	if p == nil {
		return
	}
	for _, rs := range *p {
		for i := range rs.n {
			if v := rs.n[i].v.Swap(0); v > 0 {
				rs.c.Add(float64(v))
			}
		}
	}
}

// foldingCounterVec is records_total as registered: every Collect first
// folds the striped counts into the children.
type foldingCounterVec struct {
	*prometheus.CounterVec
	m *Metrics
}

func (f foldingCounterVec) Collect(ch chan<- prometheus.Metric) {
	f.m.fold()
	f.CounterVec.Collect(ch)
}

// Finding counts one finding.
func (m *Metrics) Finding(f *validate.Finding) {
	k := findingKey{f.Tap, f.Rule, f.Severity}
	c, ok := m.findingCache.load(k)
	if !ok {
		k = findingKey{strings.Clone(k.tap), strings.Clone(k.rule), k.severity}
		c = m.findingCache.loadOrCreate(k, maxCachedSeries, func() prometheus.Counter {
			return m.findings.WithLabelValues(m.tapCap.value(k.tap), m.ruleCap.value(k.rule), k.severity.String())
		})
	}
	c.Inc()
}

// StreamStart counts a stream as active.
func (m *Metrics) StreamStart(s *validate.StreamInfo) {
	m.tap(s.Tap).active.Inc()
}

// StreamEnd counts the stream's outcome and observes its duration, time to
// first chunk and record count, with the trace id as exemplar when known.
func (m *Metrics) StreamEnd(s *validate.StreamInfo) {
	ts := m.tap(s.Tap)
	ts.active.Dec()
	ts.records.Observe(float64(s.Records))
	var traceID string
	if m.traceID != nil {
		if id, ok := m.traceID(s); ok && validTraceID(id) {
			traceID = id
		}
	}
	// From the request only: a stream first seen at its first chunk (a
	// log without requests, a topic) would record a meaningless 0.
	if !s.FirstChunk.IsZero() && s.Request {
		ts.firstChunk.observe(seconds(s.FirstChunk.Sub(s.Start)), traceID)
	}
	if s.Outcome >= validate.NumOutcomes {
		return // not an outcome the contract knows: no label value for it
	}
	o := &ts.outcomes[s.Outcome]
	o.total.Inc()
	o.duration.observe(seconds(s.End.Sub(s.Start)), traceID)
}

// validTraceID accepts a W3C trace id (32 lowercase hex digits): anything
// else would make the client library reject the exemplar with a panic.
func validTraceID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// seconds converts d, clamping negative durations (clock steps, records
// out of order) to zero.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return 0
	}
	return d.Seconds()
}

// tap returns the per-tap children, creating every outcome's series on
// first sight of the tap so that rate() has a zero to start from.
func (m *Metrics) tap(tap string) *tapSeries {
	if ts, ok := m.tapCache.load(tap); ok {
		return ts
	}
	tap = strings.Clone(tap)
	return m.tapCache.loadOrCreate(tap, maxCachedSeries, func() *tapSeries {
		t := m.tapCap.value(tap)
		ts := &tapSeries{
			active:     m.streamsActive.WithLabelValues(t),
			heartbeats: m.heartbeats.WithLabelValues(t),
			firstChunk: newHistogram(m.firstChunk.WithLabelValues(t)),
			records:    m.streamRecords.WithLabelValues(t),
		}
		for o := range ts.outcomes {
			name := validate.Outcome(o).String()
			ts.outcomes[o] = outcomeSeries{
				total:    m.streamsTotal.WithLabelValues(t, name),
				duration: newHistogram(m.streamDuration.WithLabelValues(t, name)),
			}
		}
		return ts
	})
}
