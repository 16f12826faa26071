package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// TapSnapshot is one tap's health at scrape time. The maps are keyed by
// label value: direction names ("none", "upstream", "downstream") for
// Messages and Bytes, drop reason names ("queue_full", "oversize",
// "upstream_gap", "decode") for Drops. cmd/e2atap fills them from
// tap.Stats with tap.Direction.String and tap.DropReasonNames, so that this
// package needs no import of tap/.
type TapSnapshot struct {
	Tap      string
	Up       bool
	Messages map[string]uint64
	Bytes    map[string]uint64
	Drops    map[string]uint64
	// Lag is how far behind the engine the tap is, in LagUnit: LagBytes
	// (a log not yet read) or LagMessages (records pending in a topic or
	// in a mirror queue); LagNone when the tap cannot tell.
	Lag     int64
	LagUnit string
}

// Lag units of TapSnapshot.
const (
	LagNone     = ""
	LagBytes    = "bytes"
	LagMessages = "messages"
)

// RegisterTaps registers a collector that calls snapshot on every scrape and
// exposes tap_messages_total{tap,direction}, tap_bytes_total{tap,direction},
// tap_dropped_total{tap,reason} and tap_up{tap}. snapshot must be safe to
// call from any goroutine. Two snapshots with the same Tap are summed (up if
// either is up).
func RegisterTaps(reg prometheus.Registerer, snapshot func() []TapSnapshot) error {
	return reg.Register(&tapCollector{
		snapshot: snapshot,
		messages: prometheus.NewDesc(Namespace+"_tap_messages_total",
			"Messages a tap saw, by direction.", []string{"tap", "direction"}, nil),
		bytes: prometheus.NewDesc(Namespace+"_tap_bytes_total",
			"Bytes a tap saw, by direction.", []string{"tap", "direction"}, nil),
		dropped: prometheus.NewDesc(Namespace+"_tap_dropped_total",
			"Messages a tap could not hand to the engine, by reason.", []string{"tap", "reason"}, nil),
		up: prometheus.NewDesc(Namespace+"_tap_up",
			"1 when the tap is connected to its source.", []string{"tap"}, nil),
		lagBytes: prometheus.NewDesc(Namespace+"_tap_lag_bytes",
			"Bytes a tap has not read yet (log taps).", []string{"tap"}, nil),
		lagMessages: prometheus.NewDesc(Namespace+"_tap_lag_messages",
			"Messages pending for a tap: in its topic (Kafka, JetStream) or in its mirror queue to the engine (WebSocket).", []string{"tap"}, nil),
	})
}

type tapCollector struct {
	snapshot                 func() []TapSnapshot
	messages, bytes, dropped *prometheus.Desc
	up                       *prometheus.Desc
	lagBytes, lagMessages    *prometheus.Desc
}

func (c *tapCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.messages
	ch <- c.bytes
	ch <- c.dropped
	ch <- c.up
	ch <- c.lagBytes
	ch <- c.lagMessages
}

func (c *tapCollector) Collect(ch chan<- prometheus.Metric) {
	snaps := c.snapshot()
	merged := make(map[string]*TapSnapshot, len(snaps))
	order := make([]string, 0, len(snaps))
	for i := range snaps {
		s := &snaps[i]
		t, ok := merged[s.Tap]
		if !ok {
			t = &TapSnapshot{Tap: s.Tap, Messages: map[string]uint64{}, Bytes: map[string]uint64{}, Drops: map[string]uint64{}}
			merged[s.Tap] = t
			order = append(order, s.Tap)
		}
		t.Up = t.Up || s.Up
		if s.LagUnit != LagNone {
			t.Lag += s.Lag
			t.LagUnit = s.LagUnit
		}
		addAll(t.Messages, s.Messages)
		addAll(t.Bytes, s.Bytes)
		addAll(t.Drops, s.Drops)
	}
	for _, name := range order {
		t := merged[name]
		up := 0.0
		if t.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, t.Tap)
		switch t.LagUnit {
		case LagBytes:
			ch <- prometheus.MustNewConstMetric(c.lagBytes, prometheus.GaugeValue, float64(max(t.Lag, 0)), t.Tap)
		case LagMessages:
			ch <- prometheus.MustNewConstMetric(c.lagMessages, prometheus.GaugeValue, float64(max(t.Lag, 0)), t.Tap)
		}
		for dir, n := range t.Messages {
			ch <- prometheus.MustNewConstMetric(c.messages, prometheus.CounterValue, float64(n), t.Tap, dir)
		}
		for dir, n := range t.Bytes {
			ch <- prometheus.MustNewConstMetric(c.bytes, prometheus.CounterValue, float64(n), t.Tap, dir)
		}
		for reason, n := range t.Drops {
			ch <- prometheus.MustNewConstMetric(c.dropped, prometheus.CounterValue, float64(n), t.Tap, reason)
		}
	}
}

func addAll(dst, src map[string]uint64) {
	for k, v := range src {
		dst[k] += v
	}
}

// RegisterRedactions registers a collector that calls counts on every scrape
// and exposes redactions_total{rule}: how many values the redacting log
// writer masked, by its rule name. Rule names come from configuration;
// beyond DefaultMaxLabelValues of them the rest (in name order) are summed
// into "other". counts must be safe to call from any goroutine.
func RegisterRedactions(reg prometheus.Registerer, counts func() map[string]uint64) error {
	return reg.Register(&redactionCollector{
		counts: counts,
		desc: prometheus.NewDesc(Namespace+"_redactions_total",
			"Values masked in the redacted record log, by redaction rule.", []string{"rule"}, nil),
	})
}

type redactionCollector struct {
	counts func() map[string]uint64
	desc   *prometheus.Desc
}

func (c *redactionCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *redactionCollector) Collect(ch chan<- prometheus.Metric) {
	counts := c.counts()
	if len(counts) <= DefaultMaxLabelValues {
		for rule, n := range counts {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), rule)
		}
		return
	}
	rules := make([]string, 0, len(counts))
	for rule := range counts {
		rules = append(rules, rule)
	}
	sort.Strings(rules)
	var other uint64
	for i, rule := range rules {
		if i < DefaultMaxLabelValues-1 && rule != otherValue {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(counts[rule]), rule)
			continue
		}
		other += counts[rule]
	}
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(other), otherValue)
}
