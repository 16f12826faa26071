package observe

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// Redactor is what the hub needs of the redaction policy: free text with
// every credential and personal value masked, appended to dst, and a
// record redacted as the record log writes it.
type Redactor interface {
	RedactText(dst, s []byte) []byte
	Redact(dst, record []byte) (out []byte, paths []string, err error)
}

// Event types, as the "type" field says.
const (
	TypeFinding = "finding"
	TypeStream  = "stream"
	TypeRecord  = "record"
	TypeLost    = "lost"
)

// Event is one line a watcher receives. Every string that came from
// traffic has passed the Redactor.
type Event struct {
	Type     string    `json:"type"`
	Time     time.Time `json:"time"`
	Tap      string    `json:"tap,omitempty"`
	Rule     string    `json:"rule,omitempty"`
	Severity string    `json:"severity,omitempty"`
	Stream   string    `json:"stream,omitempty"`
	Source   string    `json:"source,omitempty"`
	Message  string    `json:"message,omitempty"`
	// Outcome is the outcome label of the metrics (streams_total): an
	// EventMesh stream that never sent its done chunk is "missing_final"
	// there too; Protocol tells the two apart.
	Outcome  string          `json:"outcome,omitempty"`
	Protocol string          `json:"protocol,omitempty"`
	Reason   string          `json:"reason,omitempty"`
	Records  uint32          `json:"records,omitempty"`
	Duration float64         `json:"duration_seconds,omitempty"`
	Gap      bool            `json:"gap,omitempty"`
	Kind     string          `json:"kind,omitempty"`
	Status   string          `json:"status,omitempty"`
	Record   json.RawMessage `json:"record,omitempty"`
	Lost     uint64          `json:"lost,omitempty"`
}

// entry is an event as kept: its line, and what filters look at.
type entry struct {
	line     []byte
	typ      string
	time     time.Time
	tap      string
	rule     string
	severity validate.Severity
	stream   string // as printed (redacted)
}

// Options bound the hub.
type Options struct {
	// RingEvents and RingBytes bound the events kept for "the last N on
	// connect" and --since.
	RingEvents int
	RingBytes  int
	// QueueEvents is each watcher's queue; past it the watcher loses events.
	QueueEvents int
	// Now is the clock for events without a capture time.
	Now func() time.Time
}

// DefaultOptions: 10 000 events or 16 MiB kept, 4096 queued per watcher.
func DefaultOptions() Options {
	return Options{RingEvents: 10_000, RingBytes: 16 << 20, QueueEvents: 4096, Now: time.Now}
}

// Hub is the Sink and the registry of watchers.
type Hub struct {
	red  Redactor
	opts Options

	mu       sync.Mutex
	ring     []entry // circular, oldest at head
	head     int
	n        int
	bytes    int
	watchers map[*watcher]struct{}

	closed chan struct{} // closed by Close: watchers' streams end
	once   sync.Once

	recordWatchers atomic.Int32 // watchers that asked for records
	events         atomic.Uint64
	lost           atomic.Uint64
}

var _ validate.Sink = (*Hub)(nil)

// NewHub returns a hub redacting with red.
func NewHub(red Redactor, opts Options) *Hub {
	d := DefaultOptions()
	if opts.RingEvents <= 0 {
		opts.RingEvents = d.RingEvents
	}
	if opts.RingBytes <= 0 {
		opts.RingBytes = d.RingBytes
	}
	if opts.QueueEvents <= 0 {
		opts.QueueEvents = d.QueueEvents
	}
	if opts.Now == nil {
		opts.Now = d.Now
	}
	return &Hub{red: red, opts: opts, ring: make([]entry, opts.RingEvents), watchers: map[*watcher]struct{}{}, closed: make(chan struct{})}
}

// Close ends every watcher's stream (at shutdown: an HTTP server's
// Shutdown waits for handlers, and a follow stream never ends by itself).
func (h *Hub) Close() { h.once.Do(func() { close(h.closed) }) }

// Stats: events published, events lost by slow watchers, watchers now.
func (h *Hub) Stats() (events, lost uint64, watchers int) {
	h.mu.Lock()
	watchers = len(h.watchers)
	h.mu.Unlock()
	return h.events.Load(), h.lost.Load(), watchers
}

func (h *Hub) redact(s string) string {
	if s == "" {
		return ""
	}
	return string(h.red.RedactText(nil, []byte(s)))
}

func (h *Hub) at(t time.Time) time.Time {
	if t.IsZero() {
		return h.opts.Now().UTC()
	}
	return t.UTC()
}

// Finding publishes a finding.
func (h *Hub) Finding(f *validate.Finding) {
	ev := Event{Type: TypeFinding, Time: h.at(f.Time), Tap: f.Tap, Rule: f.Rule, Severity: f.Severity.String(),
		Stream: h.redact(f.Stream), Source: h.redact(f.Source), Message: h.redact(f.Message)}
	h.publish(&ev, f.Severity)
}

// StreamEnd publishes a stream's outcome.
func (h *Hub) StreamEnd(s *validate.StreamInfo) {
	ev := Event{Type: TypeStream, Time: h.at(s.End), Tap: s.Tap, Stream: h.redact(s.Key), Outcome: s.Outcome.String(),
		Protocol: s.Protocol, Reason: s.Reason, Records: s.Records, Gap: s.Gap}
	if !s.Start.IsZero() && !s.End.IsZero() {
		ev.Duration = s.End.Sub(s.Start).Seconds()
	}
	h.publish(&ev, validate.Off)
}

// StreamStart is not published (the outcome says more).
func (h *Hub) StreamStart(*validate.StreamInfo) {}

// Record publishes a redacted record, only while a watcher asked for
// records (redacting every record for nobody would cost the engine).
func (h *Hub) Record(r *validate.RecordInfo) {
	if h.recordWatchers.Load() == 0 || r.In == nil {
		return
	}
	ev := Event{Type: TypeRecord, Time: h.at(r.In.Time), Tap: r.In.Tap, Source: h.redact(r.In.Source()),
		Kind: r.Kind, Status: r.Status, Stream: h.redact(string(r.Stream))}
	if r.Frame == nil && len(r.In.Data) > 0 {
		if out, _, err := h.red.Redact(nil, r.In.Data); err == nil && json.Valid(out) {
			ev.Record = json.RawMessage(strings.TrimRight(string(out), "\n"))
		}
	}
	h.publish(&ev, validate.Off)
}

func (h *Hub) publish(ev *Event, sev validate.Severity) {
	line, err := json.Marshal(ev)
	if err != nil {
		return
	}
	line = append(line, '\n')
	e := entry{line: line, typ: ev.Type, time: ev.Time, tap: ev.Tap, rule: ev.Rule, severity: sev, stream: ev.Stream}
	h.events.Add(1)
	h.mu.Lock()
	if ev.Type != TypeRecord { // records are live only: they would push findings out
		h.keep(e)
	}
	for w := range h.watchers {
		w.offer(&e, h)
	}
	h.mu.Unlock()
}

// keep appends to the ring, dropping the oldest past either bound.
func (h *Hub) keep(e entry) {
	for h.n > 0 && (h.n == len(h.ring) || h.bytes+len(e.line) > h.opts.RingBytes) {
		old := &h.ring[h.head]
		h.bytes -= len(old.line)
		*old = entry{}
		h.head = (h.head + 1) % len(h.ring)
		h.n--
	}
	h.ring[(h.head+h.n)%len(h.ring)] = e
	h.n++
	h.bytes += len(e.line)
}

// Filter selects events.
type Filter struct {
	Types    map[string]bool // empty: findings and streams
	Rules    map[string]bool
	Severity validate.Severity // findings at or above; Off: all
	Taps     map[string]bool
	Stream   string
	Since    time.Time
}

func (f *Filter) match(e *entry) bool {
	if len(f.Types) > 0 && !f.Types[e.typ] {
		return false
	}
	if len(f.Types) == 0 && e.typ == TypeRecord {
		return false
	}
	if len(f.Rules) > 0 && (e.typ != TypeFinding || !f.Rules[e.rule]) {
		return false
	}
	if f.Severity != validate.Off && (e.typ != TypeFinding || e.severity < f.Severity) {
		return false
	}
	if len(f.Taps) > 0 && !f.Taps[e.tap] {
		return false
	}
	if f.Stream != "" && e.stream != f.Stream {
		return false
	}
	if !f.Since.IsZero() && e.time.Before(f.Since) {
		return false
	}
	return true
}

// watcher is one connected client.
type watcher struct {
	filter Filter
	ch     chan []byte
	lost   atomic.Uint64
}

// offer queues an event for the watcher without waiting; called with h.mu.
func (w *watcher) offer(e *entry, h *Hub) {
	if !w.filter.match(e) {
		return
	}
	select {
	case w.ch <- e.line:
	default:
		w.lost.Add(1)
		h.lost.Add(1)
	}
}

// subscribe registers a watcher and returns the kept events that match
// (at most last; 0: none) to send first.
func (h *Hub) subscribe(f Filter, last int) (*watcher, [][]byte) {
	w := &watcher{filter: f, ch: make(chan []byte, h.opts.QueueEvents)}
	if f.Types[TypeRecord] {
		h.recordWatchers.Add(1)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var backlog [][]byte
	if last > 0 || !f.Since.IsZero() {
		for i := h.n - 1; i >= 0; i-- {
			e := &h.ring[(h.head+i)%len(h.ring)]
			if f.match(e) {
				backlog = append(backlog, e.line)
				if last > 0 && len(backlog) == last {
					break
				}
			}
		}
		for i, j := 0, len(backlog)-1; i < j; i, j = i+1, j-1 {
			backlog[i], backlog[j] = backlog[j], backlog[i]
		}
	}
	h.watchers[w] = struct{}{}
	return w, backlog
}

func (h *Hub) unsubscribe(w *watcher) {
	h.mu.Lock()
	delete(h.watchers, w)
	h.mu.Unlock()
	if w.filter.Types[TypeRecord] {
		h.recordWatchers.Add(-1)
	}
}

// lostLine is the event that tells a watcher how many it lost.
func lostLine(n uint64, now time.Time) []byte {
	b, _ := json.Marshal(Event{Type: TypeLost, Time: now.UTC(), Lost: n,
		Message: "this watcher read too slowly: " + strconv.FormatUint(n, 10) + " events were dropped for it"})
	return append(b, '\n')
}
