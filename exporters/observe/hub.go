package observe

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// Redactor is what the hub needs of the redaction policy: free text with
// every credential and personal value masked, appended to dst as plain
// text (the hub escapes what it renders itself), and a record redacted as
// the record log writes it.
type Redactor interface {
	MaskText(dst, s []byte) []byte
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

// entry is an event as kept in the ring: its fields, every string from
// traffic already redacted, and the length of its line. The line itself
// is rendered only when someone reads it (a watcher connected, a
// last/since query), so that publishing costs no encoding and no
// allocation while nobody watches. It holds what a finding or a stream
// outcome has, no more (records are not kept): the ring is written once
// for every stream, and each pointer of an entry is a write barrier while
// the collector runs and a share of the cache lines it takes.
type entry struct {
	tap, stream string
	// A finding's rule, source and message; a stream outcome's protocol
	// and reason (c empty).
	a, b, c  string
	sec      int64 // Time, UTC: seconds and nanoseconds of Unix time
	duration float64
	size     int // len(appendLine(nil, &ev)): what RingBytes bounds
	nsec     int32
	records  uint32
	typ      uint8 // keptFinding or keptStream
	severity validate.Severity
	outcome  validate.Outcome
	gap      bool
}

const (
	keptFinding = 1 + iota
	keptStream
)

// compact is ev as the ring keeps it (a finding or a stream outcome).
func compact(ev *Event, sev validate.Severity, outcome validate.Outcome, size int) entry {
	en := entry{tap: ev.Tap, stream: ev.Stream, sec: ev.Time.Unix(), nsec: int32(ev.Time.Nanosecond()), size: size, severity: sev}
	if ev.Type == TypeFinding {
		en.typ, en.a, en.b, en.c = keptFinding, ev.Rule, ev.Source, ev.Message
	} else {
		en.typ, en.a, en.b = keptStream, ev.Protocol, ev.Reason
		en.outcome, en.records, en.duration, en.gap = outcome, ev.Records, ev.Duration, ev.Gap
	}
	return en
}

// event is the kept entry as the event it was published as.
func (en *entry) event() Event {
	ev := Event{Time: time.Unix(en.sec, int64(en.nsec)).UTC(), Tap: en.tap, Stream: en.stream}
	if en.typ == keptFinding {
		ev.Type, ev.Rule, ev.Severity, ev.Source, ev.Message = TypeFinding, en.a, en.severity.String(), en.b, en.c
	} else {
		ev.Type, ev.Protocol, ev.Reason, ev.Outcome = TypeStream, en.a, en.b, en.outcome.String()
		ev.Records, ev.Duration, ev.Gap = en.records, en.duration, en.gap
	}
	return ev
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

	scratch sync.Pool // *[]byte: a shard's buffer for redaction and rendering

	mu       sync.Mutex
	ring     []entry // circular, oldest at head; grows up to RingEvents
	head     int
	n        int
	bytes    int
	watchers map[*watcher]struct{}

	closed chan struct{} // closed by Close: watchers' streams end
	once   sync.Once

	recordWatchers atomic.Int32 // watchers that asked for records
	nwatchers      atomic.Int32 // len(watchers): publish renders a line only for them
	split          splitTails   // split credentials in records' deltas (split.go)
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
	h := &Hub{red: red, opts: opts, watchers: map[*watcher]struct{}{}, closed: make(chan struct{})}
	h.scratch.New = func() any { b := make([]byte, 0, 1024); return &b }
	return h
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

// redact returns s with the Redactor applied: s itself when nothing in it
// was masked (no copy kept), else the masked copy. buf is scratch.
func (h *Hub) redact(buf *[]byte, s string) string {
	if s == "" {
		return ""
	}
	in := append((*buf)[:0], s...)
	// Plain text: a JSON-escaped one (RedactText's) was escaped again
	// when the line was rendered, and a stream key with a '"', '\\' or a
	// control character reached watchers as another key.
	out := h.red.MaskText(in[len(in):], in) // after in, in the same buffer
	r := s
	if len(out) != len(s) || string(out) != s {
		r = string(out)
	}
	// The pooled buffer keeps no unredacted copy.
	clear(in)
	*buf = in[:0]
	return r
}

func (h *Hub) at(t time.Time) time.Time {
	if t.IsZero() {
		return h.opts.Now().UTC()
	}
	return t.UTC()
}

func (h *Hub) getScratch() *[]byte { return h.scratch.Get().(*[]byte) }

func (h *Hub) putScratch(b *[]byte) {
	if cap(*b) > 64<<10 {
		return // a huge record: do not pin its buffer
	}
	h.scratch.Put(b)
}

// Finding publishes a finding.
func (h *Hub) Finding(f *validate.Finding) {
	buf := h.getScratch()
	defer h.putScratch(buf)
	text, num := f.SourceParts()
	ev := Event{Type: TypeFinding, Time: h.at(f.Time), Tap: f.Tap, Rule: f.Rule, Severity: f.Severity.String(),
		Stream: h.redact(buf, f.Stream), Source: h.redact(buf, text) + num, Message: h.redact(buf, f.Message)}
	h.publish(&ev, f.Severity, 0, buf)
}

// StreamEnd publishes a stream's outcome.
func (h *Hub) StreamEnd(s *validate.StreamInfo) {
	h.split.end(s.Tap, s.Key)
	buf := h.getScratch()
	defer h.putScratch(buf)
	ev := Event{Type: TypeStream, Time: h.at(s.End), Tap: s.Tap, Stream: h.redact(buf, s.Key), Outcome: s.Outcome.String(),
		Protocol: s.Protocol, Reason: s.Reason, Records: s.Records, Gap: s.Gap}
	if !s.Start.IsZero() && !s.End.IsZero() {
		ev.Duration = s.End.Sub(s.Start).Seconds()
	}
	h.publish(&ev, validate.Off, s.Outcome, buf)
}

// StreamStart is not published (the outcome says more).
func (h *Hub) StreamStart(*validate.StreamInfo) {}

// Record publishes a redacted record, only while a watcher asked for
// records (redacting every record for nobody would cost the engine).
func (h *Hub) Record(r *validate.RecordInfo) {
	if h.recordWatchers.Load() == 0 || r.In == nil {
		return
	}
	buf := h.getScratch()
	defer h.putScratch(buf)
	ev := Event{Type: TypeRecord, Time: h.at(r.In.Time), Tap: r.In.Tap, Source: h.redact(buf, r.In.Source()),
		Kind: r.Kind, Status: r.Status, Stream: h.redact(buf, string(r.Stream))}
	if r.Frame == nil && len(r.In.Data) > 0 {
		head, tail := h.split.check(r)
		if out, _, err := h.red.Redact(nil, r.In.Data); err == nil && json.Valid(out) {
			if head || tail {
				out = maskDelta(out, head) // nil: no record shown rather than half a secret
			}
			if out != nil {
				ev.Record = json.RawMessage(bytes.TrimRight(out, "\n"))
			}
		}
	}
	h.publish(&ev, validate.Off, 0, buf)
}

// publish keeps ev (unless it is a record) and offers its line to the
// watchers it matches (sev: a finding's severity; outcome: a stream's).
// While someone watches, the line is rendered into buf (scratch) outside
// the lock, and copied only when a watcher takes it; while nobody does,
// only its length is worked out (lineSize), for RingBytes.
func (h *Hub) publish(ev *Event, sev validate.Severity, outcome validate.Outcome, buf *[]byte) {
	var line []byte
	rendered := h.nwatchers.Load() > 0
	if rendered {
		line = appendLine((*buf)[:0], ev)
		*buf = line[:0]
	}
	h.events.Add(1)
	h.mu.Lock()
	if len(h.watchers) > 0 {
		if !rendered { // a watcher came since the look above
			line = appendLine((*buf)[:0], ev)
			*buf = line[:0]
			rendered = true
		}
		var out []byte // one copy, shared by the watchers it matches
		for w := range h.watchers {
			if !w.filter.match(ev, sev) {
				continue
			}
			if out == nil {
				out = bytes.Clone(line)
			}
			w.offer(out, h)
		}
	}
	if ev.Type != TypeRecord { // records are live only: they would push findings out
		size := len(line)
		if !rendered {
			size = lineSize(ev)
		}
		h.keep(compact(ev, sev, outcome, size))
	}
	h.mu.Unlock()
}

// keep appends to the ring, dropping the oldest past either bound.
func (h *Hub) keep(e entry) {
	for h.n > 0 && (h.n == h.opts.RingEvents || h.bytes+e.size > h.opts.RingBytes) {
		old := &h.ring[h.head]
		h.bytes -= old.size
		if h.n < len(h.ring) {
			*old = entry{} // not the slot e takes next: let go of its strings
		}
		h.head = (h.head + 1) % len(h.ring)
		h.n--
	}
	if h.n == len(h.ring) {
		h.grow()
	}
	h.ring[(h.head+h.n)%len(h.ring)] = e
	h.n++
	h.bytes += e.size
}

// grow makes room for one more entry (the ring is full and below
// RingEvents): a hub that sees few events holds a small ring.
func (h *Hub) grow() {
	n := min(max(2*len(h.ring), 64), h.opts.RingEvents)
	ring := make([]entry, n)
	for i := 0; i < h.n; i++ {
		ring[i] = h.ring[(h.head+i)%len(h.ring)]
	}
	h.ring, h.head = ring, 0
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

// match: whether f selects e (sev: a finding's severity).
func (f *Filter) match(e *Event, sev validate.Severity) bool {
	if len(f.Types) > 0 && !f.Types[e.Type] {
		return false
	}
	if len(f.Types) == 0 && e.Type == TypeRecord {
		return false
	}
	if len(f.Rules) > 0 && (e.Type != TypeFinding || !f.Rules[e.Rule]) {
		return false
	}
	if f.Severity != validate.Off && (e.Type != TypeFinding || sev < f.Severity) {
		return false
	}
	if len(f.Taps) > 0 && !f.Taps[e.Tap] {
		return false
	}
	if f.Stream != "" && e.Stream != f.Stream {
		return false
	}
	if !f.Since.IsZero() && e.Time.Before(f.Since) {
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

// offer queues a line for the watcher without waiting; called with h.mu.
func (w *watcher) offer(line []byte, h *Hub) {
	select {
	case w.ch <- line:
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
	// The kept events that match are copied under the lock (the ring
	// moves on) and rendered after it, so that a long backlog does not
	// hold up the shards.
	var kept []Event
	h.mu.Lock()
	if last > 0 || !f.Since.IsZero() {
		for i := h.n - 1; i >= 0; i-- {
			en := &h.ring[(h.head+i)%len(h.ring)]
			if ev := en.event(); f.match(&ev, en.severity) {
				kept = append(kept, ev)
				if last > 0 && len(kept) == last {
					break
				}
			}
		}
	}
	h.watchers[w] = struct{}{}
	h.nwatchers.Store(int32(len(h.watchers)))
	h.mu.Unlock()
	var backlog [][]byte
	if len(kept) > 0 {
		backlog = make([][]byte, len(kept))
		for i := range kept { // oldest first
			backlog[i] = appendLine(nil, &kept[len(kept)-1-i])
		}
	}
	return w, backlog
}

func (h *Hub) unsubscribe(w *watcher) {
	h.mu.Lock()
	delete(h.watchers, w)
	h.nwatchers.Store(int32(len(h.watchers)))
	h.mu.Unlock()
	if w.filter.Types[TypeRecord] {
		h.recordWatchers.Add(-1)
	}
}

// lostLine is the event that tells a watcher how many it lost.
func lostLine(n uint64, now time.Time) []byte {
	return appendLine(nil, &Event{Type: TypeLost, Time: now.UTC(), Lost: n,
		Message: "this watcher read too slowly: " + strconv.FormatUint(n, 10) + " events were dropped for it"})
}
