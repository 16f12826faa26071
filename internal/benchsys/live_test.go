package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestProgressReadsOneTapsCounters: the live part's figures come from
// e2atap's /metrics; only the tap under test counts, every label set of
// records_total and tap_dropped_total is summed, and the slow-consumer
// reports are the tap_errors_total series with that reason.
func TestProgressReadsOneTapsCounters(t *testing.T) {
	const exposition = `# HELP e2atap_records_total Records judged.
# TYPE e2atap_records_total counter
e2atap_records_total{kind="e2a.chunk",protocol="e2a",status="in_progress",tap="nats"} 1000
e2atap_records_total{kind="e2a.final",protocol="e2a",status="succeeded",tap="nats"} 25
e2atap_records_total{kind="e2a.chunk",protocol="e2a",status="in_progress",tap="other"} 7
e2atap_tap_dropped_total{reason="queue_full",tap="nats"} 3
e2atap_tap_dropped_total{reason="budget",tap="nats"} 2
e2atap_tap_dropped_total{reason="queue_full",tap="other"} 100
e2atap_tap_errors_total{reason="slow_consumer",tap="nats"} 4
e2atap_tap_errors_total{reason="dial",tap="nats"} 9
e2atap_tap_messages_total{direction="none",tap="nats"} 1030
`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(exposition)) }))
	defer srv.Close()
	c := &consumer{who: "e2atap", tap: "nats", metrics: srv.URL}
	got, dropped, slow := c.progress()
	if got != 1025 || dropped != 5 || slow != 4 {
		t.Errorf("progress = %d judged, %d dropped, %d slow; want 1025, 5, 4", got, dropped, slow)
	}
}

func TestParseCounts(t *testing.T) {
	got, err := parseCounts("50k, 1.5M,2000")
	if err != nil {
		t.Fatal(err)
	}
	want := []int{50_000, 1_500_000, 2000}
	if len(got) != len(want) {
		t.Fatalf("parseCounts = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("parseCounts = %v, want %v", got, want)
		}
	}
	for _, bad := range []string{"k", "-5k", "ten"} {
		if _, err := parseCounts(bad); err == nil {
			t.Errorf("parseCounts(%q): no error", bad)
		}
	}
}

// TestCeilingAccounting: the ceiling of a catch-up is the cores shared
// with the broker over the CPU a judging consumer needs per record (the
// broker's serving e2atap, the bare client's to receive it, the engine's
// to judge it), from the medians of the rounds; the ratio is against the
// bare client's best round (the least loaded).
func TestCeilingAccounting(t *testing.T) {
	out := map[string][]float64{
		"broker:bare":   {0.05, 0.04, 0.06},
		"broker:e2atap": {0.10, 0.20, 0.30},
		"cpu:bare":      {0.40, 0.30, 0.35},
		"cpu:validate":  {1.20, 1.10, 1.00},
		"cores:bare":    {0.90, 1.00, 0.95},
		"bare":          {2.0e6, 2.5e6, 3.0e6},
	}
	c := ceilingOf(out, 2)
	// 2 cores ÷ (0.20 + 0.35 + 1.10) µs = 1.2121 M/s; ÷ 3 M/s = 0.4040.
	if want := 2 / (0.20 + 0.35 + 1.10) * 1e6; c.rate < want*0.999 || c.rate > want*1.001 {
		t.Errorf("ceiling rate = %.0f, want %.0f", c.rate, want)
	}
	if r := c.ratio(); r < 0.403 || r > 0.405 {
		t.Errorf("ceiling ratio = %.4f, want 0.4040", r)
	}
	if c.brokerBare != 0.05 || c.busyBare != 0.95 {
		t.Errorf("broker µs serving the bare client %.2f, bare cores busy %.2f; want 0.05, 0.95", c.brokerBare, c.busyBare)
	}
	// One shard: the engine's thread, 1 ÷ 1.10 µs = 909 k/s.
	if got, want := c.oneShard(), 1e6/1.10; got < want*0.999 || got > want*1.001 {
		t.Errorf("one shard's bound = %.0f, want %.0f", got, want)
	}
	// The engine's figure is one shard's (validate --shards 1) where
	// measured: two shards cost more CPU than the engine needs.
	out["cpu:engine1"] = []float64{0.95, 0.90, 1.00}
	if got, want := ceilingOf(out, 2).rate, 2/(0.20+0.35+0.95)*1e6; got < want*0.999 || got > want*1.001 {
		t.Errorf("ceiling rate with one shard's engine figure = %.0f, want %.0f", got, want)
	}
	if got := ceilingOf(map[string][]float64{}, 2); got.rate != 0 || got.oneShard() != 0 {
		t.Errorf("no figures: ceiling %.0f, want 0 (not measured)", got.rate)
	}
}
