package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"
)

// TapSnapshot is one tap's health at scrape time. The maps are keyed by
// label value: direction names ("none", "upstream", "downstream") for
// Messages and Bytes, drop reason names ("queue_full", "oversize",
// "budget", "reconnect", ...) for Drops, error reason names ("dial",
// "start", ...) for Errors. cmd/e2atap fills them from tap.Stats with
// tap.Direction.String, tap.DropReasonNames and tap.ErrorReasonNames, so
// that this package needs no import of tap/.
type TapSnapshot struct {
	Tap      string
	Up       bool
	Messages map[string]uint64
	Bytes    map[string]uint64
	Drops    map[string]uint64
	Errors   map[string]uint64
	// HasUpstream says the tap reads from something it connects to (a ws
	// upstream, a broker); only then is UpstreamUp exposed.
	HasUpstream bool
	UpstreamUp  bool
	// Lag is how far behind the engine the tap is, in LagUnit: LagBytes
	// (a log not yet read) or LagMessages (records pending in a topic or
	// in a mirror queue); LagNone when the tap cannot tell.
	Lag     int64
	LagUnit string
	// Conns is the connections the tap holds open for its peers (HasConns:
	// a tap that has peers connect to it, the ws tap).
	HasConns    bool
	Conns       int64
	ConnsBehind int64
}

// Lag units of TapSnapshot.
const (
	LagNone     = ""
	LagBytes    = "bytes"
	LagMessages = "messages"
)

// RegisterTaps registers a collector that calls snapshot on every scrape and
// exposes tap_messages_total{tap,direction}, tap_bytes_total{tap,direction},
// tap_dropped_total{tap,reason}, tap_errors_total{tap,reason}, tap_up{tap}
// and tap_upstream_up{tap}. snapshot must be safe to call from any
// goroutine. Two snapshots with the same Tap are summed (up, upstream up if
// either is).
func RegisterTaps(reg prometheus.Registerer, snapshot func() []TapSnapshot) error {
	return reg.Register(&tapCollector{
		snapshot: snapshot,
		messages: prometheus.NewDesc(Namespace+"_tap_messages_total",
			"Messages a tap saw, by direction.", []string{"tap", "direction"}, nil),
		bytes: prometheus.NewDesc(Namespace+"_tap_bytes_total",
			"Bytes a tap saw, by direction.", []string{"tap", "direction"}, nil),
		dropped: prometheus.NewDesc(Namespace+"_tap_dropped_total",
			"Messages a tap could not hand to the engine, by reason.", []string{"tap", "reason"}, nil),
		errors: prometheus.NewDesc(Namespace+"_tap_errors_total",
			"Faults of a tap itself (dial, handshake, disconnect, positions, scan, start, slow_consumer, other), by reason.", []string{"tap", "reason"}, nil),
		up: prometheus.NewDesc(Namespace+"_tap_up",
			"1 when the tap is running (a ws tap: its listener accepts); 0 when it failed and is being retried.", []string{"tap"}, nil),
		upstreamUp: prometheus.NewDesc(Namespace+"_tap_upstream_up",
			"1 when what the tap connects to (the ws upstream, the NATS or Kafka brokers) answers. Never part of readiness.", []string{"tap"}, nil),
		lagBytes: prometheus.NewDesc(Namespace+"_tap_lag_bytes",
			"Bytes a tap has not read yet (log taps).", []string{"tap"}, nil),
		lagMessages: prometheus.NewDesc(Namespace+"_tap_lag_messages",
			"Messages pending for a tap: in its topic (Kafka, JetStream) or in its mirror queue to the engine (WebSocket).", []string{"tap"}, nil),
		conns: prometheus.NewDesc(Namespace+"_tap_connections",
			"Connections a ws tap relays now (its clients, from accept to close).", []string{"tap"}, nil),
		connsBehind: prometheus.NewDesc(Namespace+"_tap_connections_behind",
			"Connections of a ws tap whose relay is blocked writing to a peer that does not read; their streams are held, never idle, until it reads or the connection ends.", []string{"tap"}, nil),
	})
}

type tapCollector struct {
	snapshot                 func() []TapSnapshot
	messages, bytes, dropped *prometheus.Desc
	errors                   *prometheus.Desc
	up, upstreamUp           *prometheus.Desc
	lagBytes, lagMessages    *prometheus.Desc
	conns, connsBehind       *prometheus.Desc
}

func (c *tapCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.messages
	ch <- c.bytes
	ch <- c.dropped
	ch <- c.errors
	ch <- c.up
	ch <- c.upstreamUp
	ch <- c.lagBytes
	ch <- c.lagMessages
	ch <- c.conns
	ch <- c.connsBehind
}

func (c *tapCollector) Collect(ch chan<- prometheus.Metric) {
	snaps := c.snapshot()
	merged := make(map[string]*TapSnapshot, len(snaps))
	order := make([]string, 0, len(snaps))
	for i := range snaps {
		s := &snaps[i]
		t, ok := merged[s.Tap]
		if !ok {
			t = &TapSnapshot{Tap: s.Tap, Messages: map[string]uint64{}, Bytes: map[string]uint64{}, Drops: map[string]uint64{}, Errors: map[string]uint64{}}
			merged[s.Tap] = t
			order = append(order, s.Tap)
		}
		t.Up = t.Up || s.Up
		if s.HasUpstream {
			t.UpstreamUp = t.UpstreamUp || s.UpstreamUp
			t.HasUpstream = true
		}
		if s.LagUnit != LagNone {
			t.Lag += s.Lag
			t.LagUnit = s.LagUnit
		}
		if s.HasConns {
			t.Conns += s.Conns
			t.ConnsBehind += s.ConnsBehind
			t.HasConns = true
		}
		addAll(t.Messages, s.Messages)
		addAll(t.Bytes, s.Bytes)
		addAll(t.Drops, s.Drops)
		addAll(t.Errors, s.Errors)
	}
	for _, name := range order {
		t := merged[name]
		up := b2f(t.Up)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, t.Tap)
		if t.HasUpstream {
			ch <- prometheus.MustNewConstMetric(c.upstreamUp, prometheus.GaugeValue, b2f(t.UpstreamUp), t.Tap)
		}
		if t.HasConns {
			ch <- prometheus.MustNewConstMetric(c.conns, prometheus.GaugeValue, float64(max(t.Conns, 0)), t.Tap)
			ch <- prometheus.MustNewConstMetric(c.connsBehind, prometheus.GaugeValue, float64(max(t.ConnsBehind, 0)), t.Tap)
		}
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
		for reason, n := range t.Errors {
			ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(n), t.Tap, reason)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// BudgetSnapshot is the process's byte budget at scrape time: its size
// (0: unlimited) and what is charged now.
type BudgetSnapshot struct {
	Limit, Used int64
}

// RegisterBudget registers a collector that calls snapshot on every scrape
// and exposes budget_bytes (the size of the one byte budget for what the
// taps hold for the engine; 0 when unlimited) and budget_used_bytes.
// snapshot must be safe to call from any goroutine.
func RegisterBudget(reg prometheus.Registerer, snapshot func() BudgetSnapshot) error {
	return reg.Register(&budgetCollector{
		snapshot: snapshot,
		limit: prometheus.NewDesc(Namespace+"_budget_bytes",
			"Size of the byte budget for copies the taps hold for the engine (mirror copies, queued messages, partial fragments); 0 is unlimited.", nil, nil),
		used: prometheus.NewDesc(Namespace+"_budget_used_bytes",
			"Bytes of the budget charged now: held for the engine and not yet judged.", nil, nil),
	})
}

type budgetCollector struct {
	snapshot    func() BudgetSnapshot
	limit, used *prometheus.Desc
}

func (c *budgetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.limit
	ch <- c.used
}

func (c *budgetCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.snapshot()
	ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(max(b.Limit, 0)))
	ch <- prometheus.MustNewConstMetric(c.used, prometheus.GaugeValue, float64(max(b.Used, 0)))
}

// EngineSnapshot is what the engine counts beside its records, read at
// scrape time.
type EngineSnapshot struct {
	// Untracked: records of streams the engine could not track, its
	// stream tables having no memory for them (validate.Stats.Untracked).
	Untracked uint64
	// Panics: records skipped because judging them panicked (a defect of
	// e2atap; validate.Config.OnPanic).
	Panics uint64
}

// RegisterEngine registers a collector that calls snapshot on every scrape
// and exposes records_untracked_total: records judged outside any stream
// because the stream tables had no room for theirs (a loss: the stream is
// gapped once it is tracked again, as after an eviction). snapshot must be
// safe to call from any goroutine.
func RegisterEngine(reg prometheus.Registerer, snapshot func() EngineSnapshot) error {
	return reg.Register(&engineCollector{
		snapshot: snapshot,
		untracked: prometheus.NewDesc(Namespace+"_records_untracked_total",
			"Records of streams the engine could not track (its stream tables had no memory for them): judged alone, a loss; the stream is gapped once tracked again.", nil, nil),
		panics: prometheus.NewDesc(Namespace+"_engine_panics_total",
			"Records skipped because judging them panicked (a defect of e2atap, logged with its stack): a loss; the relay and the other records go on.", nil, nil),
	})
}

type engineCollector struct {
	snapshot          func() EngineSnapshot
	untracked, panics *prometheus.Desc
}

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.untracked; ch <- c.panics }

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	e := c.snapshot()
	ch <- prometheus.MustNewConstMetric(c.untracked, prometheus.CounterValue, float64(e.Untracked))
	ch <- prometheus.MustNewConstMetric(c.panics, prometheus.CounterValue, float64(e.Panics))
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
