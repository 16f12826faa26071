package metrics

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/e2atap/e2atap/validate"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prom from the current output")

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func rec(tap, proto, kind, status string, heartbeat bool) *validate.RecordInfo {
	return &validate.RecordInfo{
		In:       &validate.Input{Tap: tap},
		Protocol: proto, Kind: kind, Status: status, Heartbeat: heartbeat,
	}
}

const traceA = "4bf92f3577b34da6a3ce929d0e0e4736"

// feed runs a fixed sequence of Sink calls: two taps, an E2A stream that
// succeeds with a keepalive, one that fails with findings, one that never
// ends, one without a final, and EventMesh frames.
func feed(s validate.Sink) {
	s.Record(rec("agent-ws", "e2a", "request", "", false))
	s.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_1", Start: t0})
	s.Record(rec("agent-ws", "e2a", "e2a.chunk", "in_progress", false))
	s.Record(rec("agent-ws", "e2a", "e2a.chunk", "in_progress", true))
	s.Record(rec("agent-ws", "e2a", "e2a.chunk", "in_progress", false))
	s.Record(rec("agent-ws", "e2a", "e2a.complete", "succeeded", false))
	s.StreamEnd(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_1", Outcome: validate.OutcomeSucceeded,
		Start: t0, FirstChunk: t0.Add(300 * time.Millisecond), Request: true, End: t0.Add(4 * time.Second), Records: 4, Heartbeats: 1})

	s.Record(rec("agent-ws", "e2a", "request", "", false))
	s.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_2", Start: t0})
	s.Record(rec("agent-ws", "e2a", "e2a.chunk", "in_progress", false))
	s.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "req_2", Tap: "agent-ws", Protocol: "e2a"})
	s.Record(rec("agent-ws", "e2a", "e2a.error", "failed", false))
	s.Finding(&validate.Finding{Rule: "e2a.timestamp_utc", Severity: validate.Warning, Stream: "req_2", Tap: "agent-ws", Protocol: "e2a"})
	s.StreamEnd(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_2", Outcome: validate.OutcomeFailed,
		Start: t0, FirstChunk: t0.Add(2 * time.Second), Request: true, End: t0.Add(45 * time.Second), Records: 2, Errors: 1})

	s.StreamStart(&validate.StreamInfo{Tap: "agent-ws", Protocol: "e2a", Key: "req_3", Start: t0})
	s.Record(rec("agent-ws", "e2a", "e2a.chunk", "in_progress", false))

	s.Record(rec("mesh", "eventmesh", "stream_req", "", false))
	s.StreamStart(&validate.StreamInfo{Tap: "mesh", Protocol: "eventmesh", Key: "a:1", Start: t0})
	s.Record(rec("mesh", "eventmesh", "stream_chunk", "", false))
	s.Finding(&validate.Finding{Rule: "frame.missing_done", Severity: validate.Warning, Stream: "a:1", Tap: "mesh", Protocol: "eventmesh"})
	s.StreamEnd(&validate.StreamInfo{Tap: "mesh", Protocol: "eventmesh", Key: "a:1", Outcome: validate.OutcomeMissingFinal,
		Reason: validate.ReasonIdle, Start: t0, FirstChunk: t0.Add(20 * time.Millisecond), Request: true, End: t0.Add(10 * time.Minute), Records: 1})
	s.Record(rec("mesh", "eventmesh", "invalid", "", false))
	s.Finding(&validate.Finding{Rule: "frame.decode", Severity: validate.Error, Tap: "mesh", Protocol: "eventmesh"})
}

func traceIDFor(s *validate.StreamInfo) (string, bool) {
	if s.Key == "req_2" {
		return traceA, true
	}
	return "", false
}

func newFixture(t testing.TB) (*prometheus.Registry, *Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, Options{Version: "v0.1.0-test", TraceID: traceIDFor})
	if err := RegisterTaps(reg, func() []TapSnapshot {
		return []TapSnapshot{
			{Tap: "agent-ws", Up: true,
				Messages:    map[string]uint64{"upstream": 2, "downstream": 7},
				Bytes:       map[string]uint64{"upstream": 812, "downstream": 4096},
				Drops:       map[string]uint64{"queue_full": 1, "oversize": 0, "budget": 4},
				Errors:      map[string]uint64{"dial": 2, "handshake": 1},
				HasUpstream: true, UpstreamUp: true,
				Lag: 2, LagUnit: LagMessages, HasConns: true, Conns: 3, ConnsBehind: 1},
			{Tap: "mesh", Up: false,
				Messages: map[string]uint64{"none": 3}, Bytes: map[string]uint64{"none": 300},
				Drops:       map[string]uint64{"reconnect": 1},
				Errors:      map[string]uint64{"disconnect": 1, "start": 3},
				HasUpstream: true, UpstreamUp: false},
			{Tap: "agent-logs", Up: true,
				Messages: map[string]uint64{"none": 10}, Bytes: map[string]uint64{"none": 3000},
				Lag: 4096, LagUnit: LagBytes},
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterRedactions(reg, func() map[string]uint64 {
		return map[string]uint64{"credential": 3, "model_output": 12}
	}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterBudget(reg, func() BudgetSnapshot {
		return BudgetSnapshot{Limit: 64 << 20, Used: 7 << 20}
	}); err != nil {
		t.Fatal(err)
	}
	if err := RegisterEngine(reg, func() EngineSnapshot { return EngineSnapshot{Untracked: 5} }); err != nil {
		t.Fatal(err)
	}
	return reg, m
}

func exposition(t testing.TB, g prometheus.Gatherer) []byte {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	// The Go version is the machine's: keep the golden file portable.
	return bytes.ReplaceAll(buf.Bytes(), []byte(`goversion="`+runtime.Version()+`"`), []byte(`goversion="GOVERSION"`))
}

func TestGoldenExposition(t *testing.T) {
	reg, m := newFixture(t)
	feed(m)
	got := exposition(t, reg)
	golden := filepath.Join("testdata", "exposition.prom")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("exposition differs from %s (-want +got):\n%s", golden, diff)
	}
}

// TestPromtoolCheck lints the exposition with Prometheus' own checker.
func TestPromtoolCheck(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("E2ATAP_REQUIRE_PACKAGES") == "1" {
			t.Fatal("promtool not installed (Debian package `prometheus`): skipping `promtool check metrics`")
		}
		t.Skip("promtool not installed (Debian package `prometheus`): skipping `promtool check metrics`")
	}
	reg, m := newFixture(t)
	feed(m)
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition(t, reg))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func family(t *testing.T, reg prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("no metric family %s", name)
	return nil
}

func labels(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// TestExemplarsAndNative checks what the text format does not show: native
// histogram buckets and the trace id exemplars.
func TestExemplarsAndNative(t *testing.T) {
	reg, m := newFixture(t)
	feed(m)

	for _, name := range []string{"e2atap_stream_duration_seconds", "e2atap_time_to_first_chunk_seconds", "e2atap_stream_records"} {
		for _, mt := range family(t, reg, name).GetMetric() {
			h := mt.GetHistogram()
			if h.Schema == nil || h.GetZeroThreshold() == 0 {
				t.Errorf("%s%v: not a native histogram (schema %v)", name, labels(mt), h.Schema)
			}
		}
	}

	var exemplars []string
	for _, name := range []string{"e2atap_stream_duration_seconds", "e2atap_time_to_first_chunk_seconds"} {
		for _, mt := range family(t, reg, name).GetMetric() {
			h := mt.GetHistogram()
			seen := map[string]bool{}
			for _, b := range h.GetBucket() {
				if e := b.GetExemplar(); e != nil {
					seen[labels(&dto.Metric{Label: e.GetLabel()})[ExemplarLabel]] = true
				}
			}
			for _, e := range h.GetExemplars() { // native histogram exemplars
				seen[labels(&dto.Metric{Label: e.GetLabel()})[ExemplarLabel]+" (native)"] = true
			}
			for id := range seen {
				exemplars = append(exemplars, fmt.Sprintf("%s%v %s", name, labels(mt), id))
			}
		}
	}
	want := []string{
		"e2atap_stream_duration_seconds" + fmt.Sprint(map[string]string{"outcome": "failed", "tap": "agent-ws"}) + " " + traceA,
		"e2atap_stream_duration_seconds" + fmt.Sprint(map[string]string{"outcome": "failed", "tap": "agent-ws"}) + " " + traceA + " (native)",
		"e2atap_time_to_first_chunk_seconds" + fmt.Sprint(map[string]string{"tap": "agent-ws"}) + " " + traceA,
		"e2atap_time_to_first_chunk_seconds" + fmt.Sprint(map[string]string{"tap": "agent-ws"}) + " " + traceA + " (native)",
	}
	if diff := cmp.Diff(want, exemplars, cmpSorted); diff != "" {
		t.Errorf("exemplars (-want +got):\n%s", diff)
	}
}

var cmpSorted = cmp.Transformer("sort", func(in []string) []string {
	out := append([]string(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
})

func TestLabelValuesCapped(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, Options{MaxLabelValues: 4})
	for i := range 10 {
		m.Record(rec("t", "e2a", fmt.Sprintf("kind%d", i), "succeeded", false))
		m.Record(rec("t", "e2a", fmt.Sprintf("kind%d", i), "succeeded", false)) // cached path
	}
	got := map[string]float64{}
	for _, mt := range family(t, reg, "e2atap_records_total").GetMetric() {
		got[labels(mt)["kind"]] = mt.GetCounter().GetValue()
	}
	want := map[string]float64{"kind0": 2, "kind1": 2, "kind2": 2, "kind3": 2, "other": 12}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
}

func TestRedactionsCapped(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	counts := map[string]uint64{}
	for i := range DefaultMaxLabelValues + 10 {
		counts[fmt.Sprintf("rule%03d", i)] = 1
	}
	if err := RegisterRedactions(reg, func() map[string]uint64 { return counts }); err != nil {
		t.Fatal(err)
	}
	mf := family(t, reg, "e2atap_redactions_total")
	if n := len(mf.GetMetric()); n != DefaultMaxLabelValues {
		t.Errorf("%d series, want %d", n, DefaultMaxLabelValues)
	}
	var total float64
	for _, mt := range mf.GetMetric() {
		total += mt.GetCounter().GetValue()
	}
	if total != float64(len(counts)) {
		t.Errorf("sum %v, want %d", total, len(counts))
	}
}

func TestDuplicateTapsMerged(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	if err := RegisterTaps(reg, func() []TapSnapshot {
		return []TapSnapshot{
			{Tap: "a", Messages: map[string]uint64{"none": 1}},
			{Tap: "a", Up: true, Messages: map[string]uint64{"none": 2}},
		}
	}); err != nil {
		t.Fatal(err)
	}
	if got := family(t, reg, "e2atap_tap_messages_total").GetMetric()[0].GetCounter().GetValue(); got != 3 {
		t.Errorf("messages %v, want 3", got)
	}
	if got := family(t, reg, "e2atap_tap_up").GetMetric()[0].GetGauge().GetValue(); got != 1 {
		t.Errorf("up %v, want 1", got)
	}
}

// TestNoIDsInLabels: stream keys and session ids must never become label
// values, whatever the sink is fed.
func TestNoIDsInLabels(t *testing.T) {
	reg, m := newFixture(t)
	feed(m)
	text := string(exposition(t, reg))
	for _, id := range []string{"req_1", "req_2", "req_3", "a:1", traceA} {
		if strings.Contains(text, id) {
			t.Errorf("exposition contains the id %q", id)
		}
	}
}

func TestRecordZeroAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	m := New(prometheus.NewRegistry(), Options{})
	ri := rec("agent-ws", "e2a", "e2a.chunk", "in_progress", true)
	m.Record(ri)
	if n := testing.AllocsPerRun(1000, func() { m.Record(ri) }); n != 0 {
		t.Errorf("Record: %v allocs/op, want 0", n)
	}
	f := &validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Tap: "agent-ws"}
	m.Finding(f)
	if n := testing.AllocsPerRun(1000, func() { m.Finding(f) }); n != 0 {
		t.Errorf("Finding: %v allocs/op, want 0", n)
	}
}

// TestConcurrent drives the sink from many goroutines, as a sharded engine
// does, and checks the totals (run it with -race).
func TestConcurrent(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, Options{TraceID: traceIDFor})
	const workers, per = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tap := fmt.Sprintf("tap%d", w%3)
			for i := range per {
				kind := fmt.Sprintf("k%d", i%5)
				m.Record(rec(tap, "e2a", kind, "in_progress", i%7 == 0))
				m.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Tap: tap})
				s := &validate.StreamInfo{Tap: tap, Key: "req_2", Start: t0, End: t0.Add(time.Second), Records: 1}
				m.StreamStart(s)
				m.StreamEnd(s)
			}
		}()
	}
	wg.Wait()
	var records, findings, streams, active float64
	for _, mt := range family(t, reg, "e2atap_records_total").GetMetric() {
		records += mt.GetCounter().GetValue()
	}
	for _, mt := range family(t, reg, "e2atap_findings_total").GetMetric() {
		findings += mt.GetCounter().GetValue()
	}
	for _, mt := range family(t, reg, "e2atap_streams_total").GetMetric() {
		streams += mt.GetCounter().GetValue()
	}
	for _, mt := range family(t, reg, "e2atap_streams_active").GetMetric() {
		active += mt.GetGauge().GetValue()
	}
	if records != workers*per || findings != workers*per || streams != workers*per || active != 0 {
		t.Errorf("records %v findings %v streams %v active %v; want %d, %d, %d, 0",
			records, findings, streams, active, workers*per, workers*per, workers*per)
	}
}

func TestBadTraceIDIgnored(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, Options{TraceID: func(*validate.StreamInfo) (string, bool) { return strings.Repeat("é", 100), true }})
	s := &validate.StreamInfo{Tap: "t", Start: t0, FirstChunk: t0.Add(time.Second), Request: true, End: t0.Add(2 * time.Second)}
	m.StreamStart(s)
	m.StreamEnd(s) // must not panic
	for _, mt := range family(t, reg, "e2atap_stream_duration_seconds").GetMetric() {
		for _, b := range mt.GetHistogram().GetBucket() {
			if b.GetExemplar() != nil {
				t.Errorf("exemplar from an invalid trace id: %v", b.GetExemplar())
			}
		}
	}
}

// TestFirstChunkNeedsRequest: a stream seen without its request (a log, a
// topic) has no time to first chunk; one with its request has.
func TestFirstChunkNeedsRequest(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, Options{Version: "t"})
	t0 := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	for _, req := range []bool{false, true} {
		s := &validate.StreamInfo{Tap: "logs", Protocol: validate.ProtoE2A, Key: "k", Start: t0,
			FirstChunk: t0.Add(time.Second), End: t0.Add(2 * time.Second), Request: req}
		m.StreamStart(s)
		m.StreamEnd(s)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "e2atap_time_to_first_chunk_seconds" {
			if n := mf.GetMetric()[0].GetHistogram().GetSampleCount(); n != 1 {
				t.Fatalf("%d observations, want 1 (only the stream with a request)", n)
			}
			return
		}
	}
	t.Fatal("no time_to_first_chunk histogram")
}

// TestRecordCountedAtEveryScrape: counts kept per shard (Record's stripes)
// are all in every scrape: totals never go down while shards count, and
// once they stop every record is there, also for more label combinations
// than Record's fast path has slots (misses, collisions) and for the same
// values at other addresses.
func TestRecordCountedAtEveryScrape(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, Options{})
	// From any goroutine: no t.Fatal, and no family yet is 0.
	total := func() (n float64) {
		mfs, err := reg.Gather()
		if err != nil {
			panic(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == "e2atap_records_total" {
				for _, mt := range mf.GetMetric() {
					n += mt.GetCounter().GetValue()
				}
			}
		}
		return n
	}
	const shards, per, combos = 2, 20_000, 2 * recentSlots
	var wg sync.WaitGroup
	for s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One RecordInfo per shard, as an engine has; constant labels
			// mostly, and now and then one built at run time.
			chunk := rec("agent-ws", "e2a", "e2a.chunk", "in_progress", false)
			other := rec("agent-ws", "e2a", "", "", false)
			for i := range per {
				ri := chunk
				if i%4 == 0 {
					other.Kind = fmt.Sprintf("k%d", (i/4+s)%combos)
					other.Status = strings.Clone("in_progress")
					ri = other
				}
				m.Record(ri)
			}
		}()
	}
	stop := make(chan struct{})
	scraped := make(chan error, 1)
	go func() {
		last := 0.0
		for {
			select {
			case <-stop:
				scraped <- nil
				return
			default:
			}
			n := total()
			if n < last {
				scraped <- fmt.Errorf("records_total went down: %v after %v", n, last)
				return
			}
			last = n
		}
	}()
	wg.Wait()
	close(stop)
	if err := <-scraped; err != nil {
		t.Fatal(err)
	}
	if n := total(); n != shards*per {
		t.Fatalf("records_total %v, want %d", n, shards*per)
	}
	var chunks float64
	for _, mt := range family(t, reg, "e2atap_records_total").GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == "kind" && lp.GetValue() == "e2a.chunk" {
				chunks += mt.GetCounter().GetValue()
			}
		}
	}
	if want := float64(shards * per * 3 / 4); chunks != want {
		t.Fatalf("e2a.chunk counted %v, want %v", chunks, want)
	}
}

// TestRecordRecentIsIdentity: Record's fast path tells label values apart
// by data pointer and length; values that share their bytes' address but
// not their length (a prefix) are other series, in the same slot
// (recentSlot does not mix in the protocol's length).
func TestRecordRecentIsIdentity(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := New(reg, Options{})
	long := strings.Clone("eventmesh")
	short := long[:5]
	a, b := rec("agent-ws", long, "stream_chunk", "", false), rec("agent-ws", short, "stream_chunk", "", false)
	if recentSlot(&recordKey{a.In.Tap, a.Protocol, a.Kind, a.Status}) != recentSlot(&recordKey{b.In.Tap, b.Protocol, b.Kind, b.Status}) {
		t.Fatal("the two keys take different slots: the test proves nothing")
	}
	for _, ri := range []*validate.RecordInfo{a, a, b, a, b, b, b} {
		m.Record(ri)
	}
	got := map[string]float64{}
	for _, mt := range family(t, reg, "e2atap_records_total").GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == "protocol" {
				got[lp.GetValue()] += mt.GetCounter().GetValue()
			}
		}
	}
	if got["eventmesh"] != 3 || got["event"] != 4 || len(got) != 2 {
		t.Fatalf("records_total by protocol %v, want eventmesh 3, event 4", got)
	}
}
