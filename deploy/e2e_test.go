package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/e2atap/e2atap/dashboards"
	"github.com/e2atap/e2atap/deploy/promtest"
	"github.com/e2atap/e2atap/exporters/metrics"
	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

// Faulty traffic, taken from the conformance vectors (vectors/streams) with
// the request ids made unique per vector: seq_gap, missing_final,
// failed_kind, decode_garbage_then_more, timestamp_not_utc and two clean
// streams (spec profile); keepalives (jiuwenswarm); EventMesh frames with
// a missing done chunk and a truncated frame.
const (
	faultySpec = "testdata/faulty_spec.jsonl"
	heartbeats = "testdata/heartbeats_jiuwenswarm.jsonl"
	faultyMesh = "testdata/faulty.frames"
)

// tapHandler gives offline input a tap name and a capture time, as a live
// tap would: validate.Read leaves both empty.
type tapHandler struct {
	tap  string
	e    *validate.Engine
	base time.Time
}

func (h *tapHandler) stamp(in *validate.Input) {
	in.Tap = h.tap
	in.Time = h.base.Add(time.Duration(in.Index) * 150 * time.Millisecond)
}

func (h *tapHandler) Observe(in *validate.Input) { h.stamp(in); h.e.Observe(in) }
func (h *tapHandler) ObserveFrame(in *validate.Input, f *frame.Frame) {
	h.stamp(in)
	h.e.ObserveFrame(in, f)
}
func (h *tapHandler) DecodeError(in *validate.Input, proto, msg string) {
	h.stamp(in)
	h.e.DecodeError(in, proto, msg)
}

// feeder runs the faulty captures through fresh engines in a loop, so that
// every counter keeps growing while Prometheus scrapes (rates need that).
type feeder struct {
	sink    validate.Sink
	inputs  []feedInput
	batches atomic.Int64
}

type feedInput struct {
	tap     string
	profile validate.Profile
	data    []byte
}

func (f *feeder) batch(now time.Time) error {
	for _, in := range f.inputs {
		cfg := validate.DefaultConfig()
		cfg.Profile = in.profile
		e := validate.NewEngine(cfg, f.sink)
		h := &tapHandler{tap: in.tap, e: e, base: now}
		last, err := validate.Read(bytes.NewReader(in.data), "capture", validate.FormatAuto, validate.ReadOptions{}, h)
		if err != nil {
			return err
		}
		end := validate.Input{Tap: in.tap, Index: last + 1}
		h.stamp(&end)
		e.Finish(validate.ReasonEOF, &end)
	}
	f.batches.Add(1)
	return nil
}

// tapStats is the taps' health as metrics.RegisterTaps reads it: agent-ws
// up, with traffic and queue_full drops growing; mesh down.
type tapStats struct{ n atomic.Uint64 }

func (s *tapStats) snapshot() []metrics.TapSnapshot {
	n := s.n.Add(1)
	return []metrics.TapSnapshot{
		{
			Tap: "agent-ws", Up: true,
			Messages: map[string]uint64{"upstream": 2 * n, "downstream": 20 * n},
			Bytes:    map[string]uint64{"upstream": 800 * n, "downstream": 9000 * n},
			Drops:    map[string]uint64{"queue_full": n, "oversize": 0},
		},
		{
			Tap: "mesh", Up: false,
			Messages: map[string]uint64{"none": 3 * n},
			Bytes:    map[string]uint64{"none": 400 * n},
			Drops:    map[string]uint64{"decode": 0},
		},
	}
}

// startExporter serves a registry with exporters/metrics fed by the faulty
// traffic on 127.0.0.1 and returns its host:port.
func startExporter(t *testing.T) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg, metrics.Options{Version: "v0.0.0-e2e"})
	stats := &tapStats{}
	if err := metrics.RegisterTaps(reg, stats.snapshot); err != nil {
		t.Fatal(err)
	}
	var redactions atomic.Uint64
	if err := metrics.RegisterRedactions(reg, func() map[string]uint64 {
		n := redactions.Add(1)
		return map[string]uint64{"credential": n, "model_output": 4 * n}
	}); err != nil {
		t.Fatal(err)
	}

	f := &feeder{sink: m}
	for _, in := range []struct {
		tap, file string
		profile   validate.Profile
	}{
		{"agent-ws", faultySpec, validate.SpecProfile()},
		{"agent-ws", heartbeats, validate.JiuwenswarmProfile()},
		{"mesh", faultyMesh, validate.SpecProfile()},
	} {
		b, err := os.ReadFile(in.file)
		if err != nil {
			t.Fatal(err)
		}
		f.inputs = append(f.inputs, feedInput{tap: in.tap, profile: in.profile, data: b})
	}
	if err := f.batch(time.Now()); err != nil {
		t.Fatal(err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				if err := f.batch(now); err != nil {
					t.Errorf("feeder: %v", err)
					return
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Close()
		t.Logf("feeder ran %d batches", f.batches.Load())
	})
	return ln.Addr().String()
}

// dashboardQuery is one panel target with where it comes from.
type dashboardQuery struct {
	where, expr string
}

func dashboardQueries(t *testing.T) []dashboardQuery {
	t.Helper()
	type panel struct {
		Title   string `json:"title"`
		Targets []struct {
			RefID string `json:"refId"`
			Expr  string `json:"expr"`
		} `json:"targets"`
		Panels json.RawMessage `json:"panels"`
	}
	var out []dashboardQuery
	names, err := fs.Glob(dashboards.FS, "*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no dashboards: %v", err)
	}
	for _, name := range names {
		b, err := dashboards.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []panel `json:"panels"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		var walk func([]panel)
		walk = func(ps []panel) {
			for _, p := range ps {
				for _, tg := range p.Targets {
					out = append(out, dashboardQuery{where: fmt.Sprintf("%s %q %s", name, p.Title, tg.RefID), expr: tg.Expr})
				}
				if len(p.Panels) > 0 {
					var sub []panel
					if err := json.Unmarshal(p.Panels, &sub); err != nil {
						t.Fatal(err)
					}
					walk(sub)
				}
			}
		}
		walk(d.Panels)
	}
	return out
}

// TestEndToEndPrometheus scrapes a live exporters/metrics registry fed by
// faulty traffic with a real Prometheus that loads the alert rules, then
// runs every dashboard query and every alert expression and requires data
// from each, and requires every alert to be pending or firing.
//
// The alerts keep their production for: durations; pending is what a
// few seconds of faults can reach, and it proves the expression matched
// with the labels the annotations use. promtool's unit tests prove firing.
func TestEndToEndPrometheus(t *testing.T) {
	start := time.Now()
	promtest.RequireBinary(t, "prometheus", "prometheus")
	live := startExporter(t)
	// A second target of the e2atap job that never answers: a sidecar that
	// is down, for E2AtapSidecarDown.
	dead, err := promtest.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	prom := promtest.StartPrometheus(t, promtest.Config{
		Jobs: []promtest.Job{{
			Name:    "e2atap",
			Targets: []string{live, dead},
			// What the PodMonitor adds in a cluster; the dashboards filter on it.
			Labels: map[string]string{"namespace": "test"},
		}},
		RuleFiles:          []string{alertsFile},
		ScrapeInterval:     time.Second,
		EvaluationInterval: time.Second,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := prom.WaitTargetUp(ctx, live); err != nil {
		t.Fatalf("exporter target never up: %v", err)
	}
	t.Logf("prometheus up and scraping after %s", time.Since(start).Round(time.Millisecond))

	// Rule files loaded without errors.
	groups, err := prom.Rules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules {
			loaded[r.Name] = true
			if r.Health == "err" {
				t.Errorf("rule %s: %s", r.Name, r.LastError)
			}
		}
	}
	rf := readRules(t)
	for _, r := range alerts(rf) {
		if !loaded[r.Alert] {
			t.Errorf("alert %s not loaded by prometheus", r.Alert)
		}
	}

	// Every dashboard query returns data. Variables: the namespace the
	// scrape config adds, both taps (overview) or agent-ws (per tap), and
	// short ranges (1s scrapes).
	type check struct{ where, expr string }
	var checks []check
	for _, q := range dashboardQueries(t) {
		tap := "agent-ws|mesh"
		if strings.HasPrefix(q.where, "e2atap-tap.json") {
			tap = "agent-ws"
		}
		expr := promtest.ExpandVars(q.expr, map[string]string{
			"namespace": "test", "tap": tap,
			"__rate_interval": "5s", "__interval": "1s", "__range": "30s",
		})
		checks = append(checks, check{q.where, expr})
	}
	for _, r := range alerts(rf) {
		checks = append(checks, check{"alert " + r.Alert, r.Expr})
	}
	pending := map[string]check{}
	for _, c := range checks {
		pending[c.where] = c
	}
	// Poll until all return data: rates need two scrapes in the window.
	err = promtest.Poll(ctx, 500*time.Millisecond, func() (bool, error) {
		var last error
		for where, c := range pending {
			res, err := prom.Query(ctx, c.expr)
			if err != nil {
				return false, err // a bad query will not get better
			}
			if hasNumber(res) {
				delete(pending, where)
				continue
			}
			last = fmt.Errorf("%s: no data yet for %s", where, c.expr)
		}
		return len(pending) == 0, last
	})
	if err != nil {
		var left []string
		for where, c := range pending {
			left = append(left, where+": "+c.expr)
		}
		sort.Strings(left)
		t.Fatalf("queries without data: %v\n%s", err, strings.Join(left, "\n"))
	}
	t.Logf("%d dashboard queries and %d alert expressions returned data after %s",
		len(checks)-len(alerts(rf)), len(alerts(rf)), time.Since(start).Round(time.Millisecond))

	// Every alert pending or firing, with the labels its annotations use.
	want := map[string]bool{}
	for _, r := range alerts(rf) {
		want[r.Alert] = true
	}
	var active []promtest.Alert
	err = promtest.Poll(ctx, 500*time.Millisecond, func() (bool, error) {
		as, err := prom.Alerts(ctx)
		if err != nil {
			return false, err
		}
		active = as
		got := map[string]bool{}
		for _, a := range as {
			if a.State == "pending" || a.State == "firing" {
				got[a.Labels["alertname"]] = true
			}
		}
		for name := range want {
			if !got[name] {
				return false, fmt.Errorf("%s not pending or firing", name)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("alerts: %v; active: %+v", err, active)
	}
	var protocol *promtest.Alert
	for i, a := range active {
		if a.Labels["alertname"] == "E2AtapProtocolErrors" && a.Labels["tap"] == "agent-ws" {
			protocol = &active[i]
		}
	}
	if protocol == nil {
		t.Fatalf("E2AtapProtocolErrors has no alert for tap agent-ws: %+v", active)
	}
	if protocol.Labels["namespace"] != "test" || protocol.Labels["severity"] != "critical" ||
		!strings.Contains(protocol.Annotations["summary"], "agent-ws") {
		t.Errorf("E2AtapProtocolErrors: labels %v annotations %v", protocol.Labels, protocol.Annotations)
	}
	for _, a := range active {
		if strings.Contains(a.Annotations["summary"]+a.Annotations["description"], "<no value>") {
			t.Errorf("%s: annotation renders a missing label: %v", a.Labels["alertname"], a.Annotations)
		}
	}
	t.Logf("all %d alerts pending or firing after %s", len(want), time.Since(start).Round(time.Millisecond))
}

// hasNumber reports whether a result has at least one sample whose value
// is a number (not NaN): data, not just a series.
func hasNumber(r promtest.Result) bool {
	for _, s := range r.Samples {
		for _, v := range s.Values {
			if v != "NaN" {
				return true
			}
		}
	}
	return false
}
