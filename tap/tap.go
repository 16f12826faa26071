package tap

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"
)

// Direction is which way a message travelled.
type Direction uint8

const (
	// DirNone is a message with no direction: a topic record, a log line.
	DirNone Direction = iota
	// DirUpstream is client to server (Gateway → AgentServer).
	DirUpstream
	// DirDownstream is server to client (AgentServer → Gateway).
	DirDownstream
	numDirections
)

// NumDirections is the number of Direction values, for arrays indexed by it.
const NumDirections = int(numDirections)

var dirNames = [...]string{"none", "upstream", "downstream"}

// String is the metric label value of the direction.
func (d Direction) String() string {
	if int(d) < len(dirNames) {
		return dirNames[d]
	}
	return "none"
}

// Format is a hint of what the bytes are. FormatAuto sniffs: a first byte
// 0xEF is an EventMeshFrame, anything else is JSON.
type Format uint8

const (
	FormatAuto Format = iota
	FormatJSON
	FormatFrame
)

// Position kinds: how Position prints.
const (
	PosNone    uint8 = iota
	PosLine          // Name:Line (a JSON-lines file)
	PosByte          // Name@Offset (a frame file)
	PosSubject       // Name, or Name#Offset (NATS subject, JetStream stream sequence; Partition: 1 + the stream's index in its tap)
	PosKafka         // Name/Partition/Offset
	PosConn          // Name#Offset (WebSocket connection id, message index)
)

// Position is where a message came from. It is a plain value so that it can
// be converted to validate.Position (same fields) without allocating.
type Position struct {
	Kind      uint8
	Partition int32
	Name      string
	Offset    int64
	Line      int64
}

// String formats the position as findings print it.
func (p Position) String() string {
	switch p.Kind {
	case PosLine:
		return p.Name + ":" + strconv.FormatInt(p.Line, 10)
	case PosByte:
		return p.Name + "@" + strconv.FormatInt(p.Offset, 10)
	case PosSubject:
		if p.Offset > 0 {
			return p.Name + "#" + strconv.FormatInt(p.Offset, 10)
		}
		return p.Name
	case PosKafka:
		return p.Name + "/" + strconv.FormatInt(int64(p.Partition), 10) + "/" + strconv.FormatInt(p.Offset, 10)
	case PosConn:
		return p.Name + "#" + strconv.FormatInt(p.Offset, 10)
	}
	return p.Name
}

// Message is one unit a tap saw: a WebSocket message, a NATS or Kafka
// record, a log line. Data is owned by the receiver of emit once emit is
// called (a tap never reuses it).
type Message struct {
	Tap    string
	Pos    Position
	Conn   string // connection scope: WebSocket connection id, or "" (requests are tracked per Conn)
	Dir    Direction
	Time   time.Time
	Format Format
	Data   []byte
	// FromLog marks records read from a log file (they are checked for
	// leaked credentials: e2a.secret).
	FromLog bool
	// Gap marks the first message after the tap lost messages on this
	// connection or position: streams it touches cannot be judged across it.
	Gap bool
	// Joined marks messages that arrive within the join window after the tap
	// (re)connected: a stream first seen then may start mid-stream.
	Joined bool
	// ConnClosed marks a control message with no Data: the connection Conn
	// ended, and the streams it carried end with it (missing_final, reason
	// disconnect). It travels through emit so that it stays in order.
	ConnClosed bool
	// Reconnected marks a control message with no Data: the tap (re)connected
	// at Time, and the join window starts.
	Reconnected bool
	// Lost marks a control message with no Data: the tap could not see some
	// messages in the scope Conn ("" for a tap whose streams have no
	// connection: topics, logs) for the reason LossReason (a Drop* value).
	// Every open stream of that scope is gapped: not judged across the
	// loss. It travels through emit so that it stays in order. A Lost whose
	// Pos is a Kafka partition (Kind PosKafka, Name, Partition) is a
	// handover instead: that partition went to another consumer, which
	// reads its open streams from their start; they are dropped with no
	// verdict, and no other stream is touched. So is a Lost whose Pos is
	// a JetStream stream (Kind PosSubject, Partition > 0, Name ""): its
	// tap stopped and whoever reads on from its cursors reads those
	// streams from their start.
	Lost       bool
	LossReason uint8
	// Progress marks a control message with no Data about the Kafka
	// partition Pos (Kind PosKafka, Name, Partition) or JetStream stream
	// (Kind PosSubject, Name "", its Partition): with Behind, it
	// holds records the tap has not read yet (a backlog, or records past a
	// transaction still open, which read_committed cannot read before the
	// transaction ends); without, the tap has read what it held at its
	// last look. While a partition is behind, the streams opened on it do
	// not go idle: the tap is late, not the stream. Progress about a
	// connection (Kind PosConn, Conn) says the same of its streams: with
	// Behind, its relay is blocked writing to a peer that does not read,
	// and what the other peer sent meanwhile is not read yet. It travels
	// through emit so that it stays in order with the records.
	Progress bool
	Behind   bool
	// Charged is how many bytes of the tap's Budget this message holds; the
	// engine releases them once it has judged the message.
	Charged int
	// Reread marks a message the tap knows an earlier run of it emitted
	// and saw judged and written out (a JetStream message below the
	// cursors file's judged mark, read again because a stream open then
	// starts before it): it is judged for its stream's state only,
	// reported and logged no second time (RULES.md: a record read again
	// after a crash is judged once).
	Reread bool
	// Recycle, when set, owns Data's memory: a buffer the tap's client
	// takes back and reuses (the Kafka tap's decompressed batches).
	// Whoever takes the message calls Recycle once, when nothing reads
	// Data any more (the engine judged the record, or copied it), and
	// never reads Data after. A taker that never calls it costs the pool
	// a buffer, nothing else: the collector frees it.
	Recycle Recycler
}

// Recycler takes back the memory of a message's Data (Message.Recycle).
type Recycler interface{ Recycle() }

// EmitFunc hands a message to the engine. A blocking emit is backpressure;
// taps that must never block (the WebSocket relay) put a bounded queue in
// front of it and drop when full.
type EmitFunc func(context.Context, Message) error

// Source is one tap. Run blocks until ctx is done or the source fails for
// good; it reconnects by itself on transient errors.
type Source interface {
	Run(ctx context.Context, emit EmitFunc) error
}

// Drop reasons: a closed set, used as a metric label.
const (
	DropQueueFull   uint8 = iota // the mirror queue to the engine was full
	DropOversize                 // a message or line over the size limit
	DropUpstreamGap              // the source itself lost messages (JetStream sequence gap, truncated file)
	DropDecode                   // could not be read at all (I/O, broken compression)
	DropBudget                   // the byte budget for copies held for the engine was spent
	DropReconnect                // the transport reconnected and does not replay what was sent meanwhile
	DropRebalance                // a partition was handed to or taken from this consumer
	DropTruncated                // a file was truncated and no copy holds what was lost
	DropScan                     // a scan or read of the source failed (EMFILE, permissions)
	NumDropReasons
)

// DropReasonNames are the metric label values of the drop reasons.
var DropReasonNames = [NumDropReasons]string{"queue_full", "oversize", "upstream_gap", "decode",
	"budget", "reconnect", "rebalance", "truncated", "scan"}

// Stats is a tap's own health. Taps update it with atomics; the metrics
// exporter reads it (cmd/e2atap adapts it, since tap does not import
// Prometheus).
type Stats struct {
	Up         atomic.Bool
	Messages   [NumDirections]atomic.Uint64
	Bytes      [NumDirections]atomic.Uint64
	Drops      [NumDropReasons]atomic.Uint64
	Reconnects atomic.Uint64
	// Errors counts the tap's own faults by reason (ErrorReasonNames):
	// e2atap_tap_errors_total{tap,reason}.
	Errors [NumErrorReasons]atomic.Uint64
	// UpstreamUp is the health of what the tap reads from (the ws tap's
	// upstream, a broker): a metric and /healthz detail, never readiness.
	UpstreamUp atomic.Bool
	// Lag is how far behind the tap is, in the tap's own unit (bytes not yet
	// read for logdir, records for Kafka); 0 when unknown.
	Lag atomic.Int64
	// Conns is how many connections the tap holds open for its peers now
	// (the ws tap: its clients, relayed or in their handshake).
	Conns atomic.Int64
	// ConnsBehind is how many of them are behind now: the relay blocked
	// writing to a peer that does not read (their streams held, never
	// idle, until it reads or the connection ends).
	ConnsBehind atomic.Int64
}

// Count records one message seen in direction d.
func (s *Stats) Count(d Direction, n int) {
	s.Messages[d].Add(1)
	s.Bytes[d].Add(uint64(n))
}

// Drop records one dropped message.
func (s *Stats) Drop(reason uint8) { s.Drops[reason].Add(1) }

// Error reasons: a closed set, used as the reason label of
// e2atap_tap_errors_total.
const (
	ErrDial         uint8 = iota // could not connect to the upstream or broker
	ErrHandshake                 // the upstream's WebSocket handshake failed or timed out
	ErrDisconnect                // an established connection to a broker broke
	ErrPositions                 // the positions file could not be read or written
	ErrScan                      // a directory scan or file open failed
	ErrStart                     // the tap could not start (retried with backoff)
	ErrSlowConsumer              // the client library reported a slow consumer
	ErrOther
	NumErrorReasons
)

// ErrorReasonNames are the metric label values of the error reasons.
var ErrorReasonNames = [NumErrorReasons]string{"dial", "handshake", "disconnect", "positions", "scan", "start", "slow_consumer", "other"}

// Error records one fault of the tap.
func (s *Stats) Error(reason uint8) { s.Errors[reason].Add(1) }
