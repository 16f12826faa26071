package validate

import (
	"strconv"
	"time"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// Severity of a finding. Off turns a rule off in a profile.
type Severity uint8

const (
	Off Severity = iota
	Info
	Warning
	Error
)

var severityNames = [...]string{"off", "info", "warning", "error"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "off"
}

// ParseSeverity reads "error", "warning", "info" or "off".
func ParseSeverity(s string) (Severity, bool) {
	for i, n := range severityNames {
		if n == s {
			return Severity(i), true
		}
	}
	return Off, false
}

// Position kinds, as in tap.Position (same fields, so the two convert).
const (
	PosNone uint8 = iota
	PosLine
	PosByte
	PosSubject
	PosKafka
	PosConn
	// PosVerbatim: Name is the whole position as another run printed it
	// (a replayed record log keeps the live source).
	PosVerbatim
)

// Position is where a record came from. Same fields as tap.Position.
type Position struct {
	Kind      uint8
	Partition int32
	Name      string
	Offset    int64
	Line      int64
}

// AppendString appends the position as String returns it to dst.
func (p Position) AppendString(dst []byte) []byte {
	dst = append(dst, p.Name...)
	switch p.Kind {
	case PosLine:
		dst = append(dst, ':')
		return strconv.AppendInt(dst, p.Line, 10)
	case PosByte:
		dst = append(dst, '@')
		return strconv.AppendInt(dst, p.Offset, 10)
	case PosSubject, PosConn:
		if p.Kind == PosSubject && p.Offset <= 0 {
			return dst
		}
		dst = append(dst, '#')
		return strconv.AppendInt(dst, p.Offset, 10)
	case PosKafka:
		dst = append(dst, '/')
		dst = strconv.AppendInt(dst, int64(p.Partition), 10)
		dst = append(dst, '/')
		return strconv.AppendInt(dst, p.Offset, 10)
	}
	return dst
}

// NumberLen is how many bytes at the end of src, a source AppendSource
// made for a record at p, are p's number (a line, an offset: digits
// e2atap wrote), 0 when p has none: the outputs redact the text before
// it and print the number as it is.
func (p Position) NumberLen(src []byte) int {
	if !p.Numbered() {
		return 0
	}
	d := len(src)
	for d > 0 && src[d-1] >= '0' && src[d-1] <= '9' {
		d--
	}
	return len(src) - d
}

func (p Position) String() string {
	var b [64]byte
	return string(p.AppendString(b[:0]))
}

// Input is one message for the engine, with where and when it was seen.
type Input struct {
	Tap  string
	Conn string // connection scope for requests and disconnects; "" offline
	Pos  Position
	Dir  uint8 // tap.Direction
	Time time.Time
	Data []byte
	// JSON: the tap knows Data is JSON text, never an EventMesh frame (a
	// WebSocket text message): a first byte 0xEF (a UTF-8 byte order mark,
	// which the reference's json.loads rejects) is e2a.decode, not
	// frame.decode.
	JSON bool
	// FromLog: the record was read from a log file (e2a.secret applies).
	FromLog bool
	// Gap: messages were lost just before this one on this connection.
	Gap bool
	// Joined: seen within the join window after the tap (re)connected.
	Joined bool
	// Index orders records globally (offline: the record number); findings
	// carry it so that a sharded run can print them in input order.
	Index uint64
	// Charged is how many bytes of the taps' byte budget this input holds;
	// the live run releases them once a shard has judged it.
	Charged int
	// Logged is set for a line of e2atap's own record log being replayed:
	// what the live run knew that the redacted line no longer shows.
	Logged *Logged
	// Silent: the record was read again after a crash and is in the
	// record log already, its verdicts written before the crash. It is
	// judged for its stream's state only (a stream open at the crash is
	// read again from its start), and nothing is reported for it.
	Silent bool
}

// Secret is rule e2a.secret's look at a record: the credential a replayed
// log line says the live record held (its own is masked), or else a scan
// of the record. It returns the path and kind of the hit, never the value.
func (in *Input) Secret() (path, kind string, found bool) {
	if l := in.Logged; l != nil {
		return l.SecretPath, l.SecretKind, l.SecretKind != ""
	}
	return e2a.ScanSecrets(in.Data)
}

// Logged is what a replayed record log line says of the live record.
type Logged struct {
	// SecretKind and SecretPath: the live record (read from a log) held a
	// credential of that kind at that path, now masked; "" when none.
	SecretKind, SecretPath string
	// SecretSplit: that credential was split across chunks of its stream,
	// up to this one.
	SecretSplit bool
}

// Source formats where the record came from, as findings print it:
// "file:line" offline, "tap:position" live.
func (in *Input) Source() string {
	var b [96]byte
	return string(in.AppendSource(b[:0]))
}

// AppendSource appends in's source (Source) to dst: the position, after
// the tap's name and a colon when there is a tap (the tap alone when the
// position is empty).
func (in *Input) AppendSource(dst []byte) []byte {
	if in.Tap == "" {
		return in.Pos.AppendString(dst)
	}
	dst = append(append(dst, in.Tap...), ':')
	n := len(dst)
	if dst = in.Pos.AppendString(dst); len(dst) == n {
		dst = dst[:n-1] // no position: the tap alone
	}
	return dst
}

// Numbered reports whether Pos.String() holds a number that changes from
// record to record (a line, an offset, a sequence).
func (p Position) Numbered() bool {
	switch p.Kind {
	case PosLine, PosByte, PosKafka, PosConn:
		return true
	case PosSubject:
		return p.Offset > 0
	}
	return false
}

// Finding is one violation. It is a value, never an error.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"-"`
	Stream   string   `json:"stream"`
	Source   string   `json:"source"`
	Message  string   `json:"message"`
	Tap      string   `json:"tap,omitempty"`
	// SourceNum is how many bytes at Source's end are the position's
	// number (a line, an offset: digits e2atap wrote), 0 when it has none:
	// the outputs redact Source without them (SourceText), so that an
	// eleven-digit offset is not masked as a phone number.
	SourceNum int `json:"-"`
	// Time is the capture time of the record (zero offline when unknown).
	Time time.Time `json:"-"`
	// Index is the Input.Index of the record (end-of-stream findings: the
	// index of the record or event that ended it).
	Index uint64 `json:"-"`
	// Protocol is "e2a" or "eventmesh".
	Protocol string `json:"-"`
}

// SourceParts splits f's Source into the text that outputs redact and
// the position's number after it, printed as it is.
func (f *Finding) SourceParts() (text, num string) {
	n := f.SourceNum
	if n <= 0 || n > len(f.Source) {
		return f.Source, ""
	}
	return f.Source[:len(f.Source)-n], f.Source[len(f.Source)-n:]
}

// Outcome is how a stream ended.
type Outcome uint8

const (
	OutcomeSucceeded Outcome = iota
	OutcomeFailed
	OutcomeCancelled
	OutcomeMissingFinal
	OutcomeEvicted
	NumOutcomes
)

var outcomeNames = [...]string{"succeeded", "failed", "cancelled", "missing_final", "evicted"}

// String is the metric label value of the outcome.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// End reasons, for streams that ended without a final.
const (
	ReasonFinal      = "" // the stream ended with its final record
	ReasonEOF        = "end_of_input"
	ReasonIdle       = "idle_timeout"
	ReasonDisconnect = "disconnect"
	ReasonShutdown   = "shutdown"
	ReasonCancelled  = "interrupt"
	ReasonEvicted    = "evicted"
)

// Protocol label values.
const (
	ProtoE2A       = "e2a"
	ProtoEventMesh = "eventmesh"
)

// RecordInfo describes one record the engine classified. It is passed to
// Sink.Record by pointer and is valid only during the call: JSON and Frame
// alias reused buffers.
type RecordInfo struct {
	In       *Input
	Protocol string    // ProtoE2A or ProtoEventMesh
	Class    e2a.Class // for JSON records
	// Kind is a bounded label: the response_kind for known kinds ("other"
	// for unknown ones), "request", "event", "jsonrpc", "cloudevent",
	// "legacy_response", "unknown" for JSON; "stream_req", "stream_chunk",
	// "event", "unknown" for frames; "invalid" for undecodable input.
	Kind string
	// Status is a bounded label: succeeded, failed, in_progress, other, or
	// "" where the record has none.
	Status string
	JSON   *e2a.Record  // nil for frames and undecodable input
	Frame  *frame.Frame // nil for JSON
	Stream []byte       // the stream key (request_id, sid, event id) or nil
	// SplitSecret: the record was read from a log, and a credential of
	// this kind (redact.Kind name) is split across its body.delta and the
	// previous chunk's of its stream (rule e2a.secret, reported at
	// body.delta when the record holds no other); "" when none.
	SplitSecret string
	Heartbeat   bool // a jiuwenswarm keepalive chunk
	ServerPush  bool // a jiuwenswarm server-push frame
	// SecretFree: the scan of JSON found nothing rule e2a.secret could
	// report (e2a.Record.MayHoldSecret false, read before any rule
	// scanned into JSON again), so In.Secret() would find nothing and the
	// engine does not call it. false says nothing.
	SecretFree bool
}

// StreamInfo describes a stream at its start or end.
type StreamInfo struct {
	Tap      string
	Protocol string
	Key      string
	Outcome  Outcome // at end
	Reason   string  // at end: ReasonFinal or why it ended without one
	Start    time.Time
	// FirstChunk is zero when the stream had no chunk.
	FirstChunk time.Time
	// Request: the stream's request was seen, so Start is when it was
	// asked for (time to first chunk means something only then).
	Request    bool
	End        time.Time
	Records    uint32
	Heartbeats uint32
	// Gap: the tap lost messages of this stream, its verdicts are partial.
	Gap bool
	// Findings counts error findings on the stream (for span status).
	Errors uint32
	// Index of the record or event that ended the stream.
	Index uint64
}

// Sink receives what the engine sees. Within one engine the calls are
// sequential; a sharded run calls one Sink from every shard, so a Sink must
// be safe for concurrent use. A stream always stays on one shard, so the
// calls for one stream are ordered. Sinks must not retain pointers.
type Sink interface {
	Record(*RecordInfo)
	Finding(*Finding)
	StreamStart(*StreamInfo)
	StreamEnd(*StreamInfo)
}

// LossMarker is an optional interface of a Sink: LossMark is told of a
// loss of in's scope (in.Tap, in.Conn) that no later record of the scope
// carries as Gap, because the connection ended first; it comes after
// everything judged before it was handed to the sinks. The record log
// writes it, so that a replay of the log gaps the scope where the live
// run did (no e2a.missing_final for the streams the loss cut).
type LossMarker interface{ LossMark(in *Input) }

// OpenMarker is an optional interface of a Sink: OpenLeft is told, after
// everything judged was handed to the sinks, that a live run stopped with
// streams still open and did not end them (LiveConfig.FinishOnShutdown
// false: they are dropped unreported). The record log writes its mark of
// lines lost to everyone with "open", so that a replay drops every open
// stream there (Engine.LeaveOpen), as the live run judged none of them
// further: no e2a.missing_final and no outcome at the end of the replay
// for streams the live run left open (Stats.LeftOpen counts them), and a
// stream a later run appended to the same log starts afresh, as it did
// for that run, which knew nothing of it. A replay that knows no "open"
// gaps them (the mark of lines lost).
type OpenMarker interface{ OpenLeft() }

// StreamsIgnorer is an optional interface of a Sink: StreamsIgnored true
// says that its StreamStart and StreamEnd do nothing, so that an engine
// neither builds their StreamInfo (the stream's key and tap as strings, a
// packed id as text) nor calls them. Verdicts, findings and counters do
// not change.
type StreamsIgnorer interface {
	StreamsIgnored() bool
}

func streamsIgnored(s Sink) bool {
	si, ok := s.(StreamsIgnorer)
	return ok && si.StreamsIgnored()
}

// RecordsIgnorer is an optional interface of a Sink: RecordsIgnored true
// says that its Record does nothing, so that an engine need neither fill
// a RecordInfo nor call it: the frame rules do not (for a frame file, the
// call and the copy of the frame were 9 % of validate's CPU); the JSON
// path and decode errors still do. Verdicts, findings and counters do not
// change.
type RecordsIgnorer interface {
	RecordsIgnored() bool
}

func recordsIgnored(s Sink) bool {
	ri, ok := s.(RecordsIgnorer)
	return ok && ri.RecordsIgnored()
}

// FindingBefore is the order in which findings are printed: input order
// (Index), end-of-input findings (Index 0) last; findings of one record keep
// the order they were reported in (sort stably). End-of-input findings come
// from every shard at once, so they are ordered by what they say (protocol,
// stream, rule, source, message): the output is the same for any number of
// shards.
func FindingBefore(a, b *Finding) bool {
	if a.Index != b.Index {
		if a.Index == 0 || b.Index == 0 {
			return b.Index == 0
		}
		return a.Index < b.Index
	}
	if a.Index != 0 {
		return false
	}
	switch {
	case a.Protocol != b.Protocol:
		return a.Protocol < b.Protocol
	case a.Stream != b.Stream:
		return a.Stream < b.Stream
	case a.Rule != b.Rule:
		return a.Rule < b.Rule
	case a.Source != b.Source:
		return a.Source < b.Source
	}
	return a.Message < b.Message
}
