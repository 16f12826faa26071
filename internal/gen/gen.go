package gen

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
)

// Fault is a protocol fault the generator can inject; each maps to the
// rule that must report it.
type Fault string

const (
	LostChunk       Fault = "lost_chunk"        // a chunk is never sent: e2a.seq_gap
	DoubleFinal     Fault = "double_final"      // the final is sent twice: e2a.after_final
	NeverEnds       Fault = "never_ends"        // no final at all: e2a.missing_final
	FailedWrongKind Fault = "failed_wrong_kind" // failed status on e2a.complete: e2a.failed_kind
	LeakedToken     Fault = "leaked_token"      // a bearer token in a logged record: e2a.secret
)

// AllFaults lists the faults in a fixed order.
var AllFaults = []Fault{LostChunk, DoubleFinal, NeverEnds, FailedWrongKind, LeakedToken}

// Rule is the rule that reports a fault.
func (f Fault) Rule() string {
	switch f {
	case LostChunk:
		return "e2a.seq_gap"
	case DoubleFinal:
		return "e2a.after_final"
	case NeverEnds:
		return "e2a.missing_final"
	case FailedWrongKind:
		return "e2a.failed_kind"
	case LeakedToken:
		return "e2a.secret"
	}
	return ""
}

// ParseFault reads a fault name.
func ParseFault(s string) (Fault, error) {
	for _, f := range AllFaults {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown fault %q (want one of %v)", s, AllFaults)
}

// Direction of a message on the Gateway ↔ AgentServer link.
type Direction uint8

const (
	ToServer Direction = iota + 1 // Gateway → AgentServer (requests)
	ToClient                      // AgentServer → Gateway (responses)
)

// Message is one record to send or log.
type Message struct {
	Dir    Direction
	Stream string // request_id ("" for server push)
	Data   []byte
	// Fault is set on the message that carries an injected fault (for
	// NeverEnds: the last message of the stream). LeakedToken faults are
	// meant for the log only: Log is set on them.
	Fault Fault
	// Log marks a record that belongs in the AgentServer's own log file
	// rather than on the wire.
	Log bool
	// Wire is, for a Log record, what the wire carries in its place (the
	// same record without the leaked credential); nil when nothing is sent.
	Wire []byte
}

// Config shapes the traffic.
type Config struct {
	Seed uint64
	// Concurrent streams interleaved on one connection.
	Concurrent int
	// Chunks per streaming chat (min, max).
	MinChunks, MaxChunks int
	// FaultRate is the probability that a stream carries a fault.
	FaultRate float64
	// Faults that may be injected (nil: all).
	Faults []Fault
	// KeepaliveRate: probability of a keepalive between two chunks.
	KeepaliveRate float64
	// UnaryRate, PushRate, InterruptRate: share of unary calls, server push
	// frames and interrupted chats among new streams.
	UnaryRate, PushRate, InterruptRate float64
	// Session count (interrupts cancel the chats of one session).
	Sessions int
	// Now gives timestamps (default: a fixed clock that advances 1 ms a
	// message, so that output is reproducible).
	Now func() time.Time
}

// DefaultConfig is a small mix of everything.
func DefaultConfig() Config {
	return Config{
		Seed: 1, Concurrent: 8, MinChunks: 3, MaxChunks: 12, FaultRate: 0.05,
		KeepaliveRate: 0.05, UnaryRate: 0.15, PushRate: 0.03, InterruptRate: 0.03, Sessions: 16,
	}
}

type streamState struct {
	id, session string
	chunks      int // chunks to send
	next        int // next sequence
	fault       Fault
	skip        int // LostChunk: sequence not sent
	unary       bool
	interrupt   bool // the user interrupts this chat after a few chunks
	sentReq     bool
	done        bool
}

// Generator produces messages.
type Generator struct {
	cfg    Config
	rnd    *rand.Rand
	live   []*streamState
	n      int
	clock  time.Time
	queue  []Message
	counts map[Fault]int
}

// New returns a generator.
func New(cfg Config) *Generator {
	d := DefaultConfig()
	if cfg.Concurrent < 1 {
		cfg.Concurrent = d.Concurrent
	}
	if cfg.MinChunks < 1 {
		cfg.MinChunks = d.MinChunks
	}
	if cfg.MaxChunks < cfg.MinChunks {
		cfg.MaxChunks = cfg.MinChunks
	}
	if cfg.Sessions < 1 {
		cfg.Sessions = d.Sessions
	}
	if cfg.Faults == nil {
		cfg.Faults = AllFaults
	}
	return &Generator{
		cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x5eed)),
		clock: time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC), counts: map[Fault]int{},
	}
}

// Injected returns how many faults of each kind were issued so far.
func (g *Generator) Injected() map[Fault]int {
	out := make(map[Fault]int, len(g.counts))
	for k, v := range g.counts {
		out[k] = v
	}
	return out
}

func (g *Generator) now() string {
	if g.cfg.Now != nil {
		return g.cfg.Now().UTC().Format("2006-01-02T15:04:05.000000+00:00")
	}
	g.clock = g.clock.Add(time.Millisecond)
	return g.clock.Format("2006-01-02T15:04:05.000000+00:00")
}

// Next returns the next message.
func (g *Generator) Next() Message {
	for len(g.queue) == 0 {
		g.step()
	}
	m := g.queue[0]
	g.queue = g.queue[1:]
	return m
}

// Drain returns the messages that end every live stream (finals, or
// nothing for NeverEnds), for a clean end of traffic.
func (g *Generator) Drain() []Message {
	out := append([]Message(nil), g.queue...)
	g.queue = nil
	for _, s := range g.live {
		for !s.done {
			g.advance(s)
			out = append(out, g.queue...)
			g.queue = nil
		}
	}
	g.live = nil
	return out
}

func (g *Generator) step() {
	for len(g.live) < g.cfg.Concurrent {
		g.live = append(g.live, g.newStream())
	}
	i := g.rnd.IntN(len(g.live))
	s := g.live[i]
	if s.done {
		// Cancelled by an interrupt of its session: it sends nothing more.
		g.live = append(g.live[:i], g.live[i+1:]...)
		return
	}
	g.advance(s)
	if s.done {
		g.live = append(g.live[:i], g.live[i+1:]...)
	}
}

func (g *Generator) newStream() *streamState {
	g.n++
	s := &streamState{
		id:      fmt.Sprintf("req-%06d-%04x", g.n, g.rnd.Uint32()&0xffff),
		session: "sess-" + strconv.Itoa(g.rnd.IntN(g.cfg.Sessions)),
		chunks:  g.cfg.MinChunks + g.rnd.IntN(g.cfg.MaxChunks-g.cfg.MinChunks+1),
		skip:    -1,
	}
	r := g.rnd.Float64()
	switch {
	case r < g.cfg.UnaryRate:
		s.unary = true
	case r < g.cfg.UnaryRate+g.cfg.PushRate:
		g.push()
		s.done = true
		return g.newStreamNoPush()
	case r < g.cfg.UnaryRate+g.cfg.PushRate+g.cfg.InterruptRate:
		s.interrupt = true
	}
	if !s.interrupt && len(g.cfg.Faults) > 0 && g.rnd.Float64() < g.cfg.FaultRate {
		s.fault = g.cfg.Faults[g.rnd.IntN(len(g.cfg.Faults))]
		if s.unary && (s.fault == LostChunk || s.fault == NeverEnds) {
			s.unary = false
		}
		// A later interrupt in the same session would cancel the stream
		// (as the reference does) and hide the fault: a missing final, or
		// a final after the engine marked the stream cancelled.
		s.session = "sess-solo-" + strconv.Itoa(g.n)
		if s.fault == LostChunk {
			if s.chunks < 2 {
				s.chunks = 2
			}
			s.skip = 1 + g.rnd.IntN(s.chunks-1)
		}
	}
	return s
}

func (g *Generator) newStreamNoPush() *streamState {
	saved := g.cfg.PushRate
	g.cfg.PushRate = 0
	s := g.newStream()
	g.cfg.PushRate = saved
	return s
}

func (g *Generator) emit(m Message) { g.queue = append(g.queue, m) }

// advance sends the next message of stream s.
func (g *Generator) advance(s *streamState) {
	if !s.sentReq {
		s.sentReq = true
		method := "chat.send"
		if s.unary {
			method = "history.get"
		}
		g.emit(Message{Dir: ToServer, Stream: s.id, Data: g.request(s.id, s.session, method, !s.unary, `{"query":"hello","content":"hello"}`)})
		return
	}
	if s.unary {
		status, kind, body := "succeeded", "e2a.complete", `{"result":{"turns":[]}}`
		if s.fault == FailedWrongKind {
			status = "failed"
		}
		g.final(s, status, kind, body, false)
		return
	}
	if s.interrupt && s.next >= 2 {
		// The user interrupts: the chat sends no final (reference §7.5).
		iid := s.id + "-int"
		g.emit(Message{Dir: ToServer, Stream: iid, Data: g.request(iid, s.session, "chat.interrupt", false, `{"intent":"cancel"}`)})
		g.emit(Message{Dir: ToClient, Stream: iid, Data: g.response(iid, 0, true, "succeeded", "e2a.complete", `{"result":{"event_type":"chat.interrupt_result","success":true}}`, false, "")})
		g.cancelSession(s.session)
		return
	}
	if s.next < s.chunks {
		if g.cfg.KeepaliveRate > 0 && g.rnd.Float64() < g.cfg.KeepaliveRate {
			g.emit(Message{Dir: ToClient, Stream: s.id, Data: g.response(s.id, -1, false, "in_progress", "e2a.chunk",
				`{"delta_kind":"custom","delta":{"event_type":"keepalive"},"event_type":"keepalive"}`, true, "")})
			return
		}
		seq := s.next
		s.next++
		if seq == s.skip {
			g.counts[LostChunk]++
			// The lost chunk is not sent; the fault shows on the next one.
			seq = s.next
			s.next++
			if seq >= s.chunks {
				// The final comes right after the lost chunk: it carries the gap.
				g.final(s, "succeeded", "e2a.complete", `{"result":{"content":"done"}}`, true)
				g.queue[len(g.queue)-1].Fault = LostChunk
				return
			}
			g.emit(Message{Dir: ToClient, Stream: s.id, Fault: LostChunk, Data: g.chunk(s, seq)})
			return
		}
		m := Message{Dir: ToClient, Stream: s.id, Data: g.chunk(s, seq)}
		if s.fault == LeakedToken && seq == 0 {
			g.counts[LeakedToken]++
			m.Fault, m.Log, m.Wire = LeakedToken, true, m.Data
			m.Data = g.response(s.id, seq, false, "in_progress", "e2a.chunk",
				`{"delta_kind":"text","delta":"calling the API with Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJkZW1vIn0.c2lnbmF0dXJlLWRlbW8","event_type":"chat.delta"}`, true, "")
		}
		g.emit(m)
		return
	}
	switch s.fault {
	case NeverEnds:
		g.counts[NeverEnds]++
		s.done = true
		// Mark the stream's last message as carrying the fault.
		for k := len(g.queue) - 1; k >= 0; k-- {
			if g.queue[k].Stream == s.id {
				g.queue[k].Fault = NeverEnds
				break
			}
		}
		if len(g.queue) == 0 {
			g.emit(Message{Dir: ToClient, Stream: s.id, Fault: NeverEnds, Data: g.chunk(s, s.next)})
			s.next++
		}
		return
	case FailedWrongKind:
		g.final(s, "failed", "e2a.complete", `{"result":{"error":"tool crashed"}}`, true)
		return
	}
	g.final(s, "succeeded", "e2a.complete", `{"result":{"content":"done"}}`, true)
}

// Live returns the request_ids of the streaming chats in flight: request
// sent, no final yet, not cancelled. A sender that paces messages slowly
// keeps them alive with Keepalive, as the reference does after 10 s
// without a chunk.
func (g *Generator) Live() []string {
	var out []string
	for _, s := range g.live {
		if s.sentReq && !s.unary && !s.done {
			out = append(out, s.id)
		}
	}
	return out
}

// Keepalive returns a keepalive chunk (sequence -1) for stream id, shaped
// like the reference's heartbeat. It does not change the generator's
// streams.
func (g *Generator) Keepalive(id string) Message {
	return Message{Dir: ToClient, Stream: id, Data: g.response(id, -1, false, "in_progress", "e2a.chunk",
		`{"delta_kind":"custom","delta":{"event_type":"keepalive"},"event_type":"keepalive"}`, true, "")}
}

func (g *Generator) final(s *streamState, status, kind, body string, stream bool) {
	seq := 0
	if stream {
		seq = s.next
	}
	m := Message{Dir: ToClient, Stream: s.id, Data: g.response(s.id, seq, true, status, kind, body, stream, "")}
	if s.fault == FailedWrongKind {
		g.counts[FailedWrongKind]++
		m.Fault = FailedWrongKind
	}
	g.emit(m)
	if s.fault == DoubleFinal {
		g.counts[DoubleFinal]++
		g.emit(Message{Dir: ToClient, Stream: s.id, Fault: DoubleFinal, Data: g.response(s.id, seq, true, status, kind, body, stream, "")})
	}
	s.done = true
}

func (g *Generator) cancelSession(session string) {
	for _, o := range g.live {
		if o.session == session && !o.unary && o.sentReq && o.fault == "" {
			o.done = true
		}
	}
	// Streams with faults in the same session are cancelled too: their
	// faults are then not issued (counts only move when a fault is sent).
	for _, o := range g.live {
		if o.session == session && !o.unary && o.sentReq {
			o.done = true
		}
	}
}

func (g *Generator) chunk(s *streamState, seq int) []byte {
	return g.response(s.id, seq, false, "in_progress", "e2a.chunk",
		`{"delta_kind":"text","delta":"token `+strconv.Itoa(seq)+` ","event_type":"chat.delta","source_chunk_type":"llm_output"}`, true, "")
}

func (g *Generator) push() {
	g.emit(Message{Dir: ToClient, Data: []byte(`{"protocol_version": "1.0", "response_id": "", "request_id": "", "sequence": 0, "is_final": true, "status": "succeeded", "response_kind": "e2a.complete", "timestamp": "` + g.now() + `", "provenance": {"source_protocol": "e2a", "converter": "jiuwenswarm.server.gateway_push.wire:build_server_push_wire", "converted_at": null, "details": {"kind": "server_push"}}, "body": {"result": {"event_type": "cron.response"}}, "metadata": {"_jiuwenswarm_server_push": true}}`)})
}

// response renders an E2AResponse as the reference serialises it (every
// field, reference key order, response_id == request_id).
func (g *Generator) response(id string, seq int, final bool, status, kind, body string, stream bool, session string) []byte {
	ts := g.now()
	sess := "null"
	if session != "" {
		sess = strconv.Quote(session)
	}
	return []byte(`{"protocol_version": "1.0", "response_id": ` + strconv.Quote(id) + `, "request_id": ` + strconv.Quote(id) +
		`, "sequence": ` + strconv.Itoa(seq) + `, "is_final": ` + strconv.FormatBool(final) + `, "status": "` + status +
		`", "response_kind": "` + kind + `", "timestamp": "` + ts + `", "provenance": {"source_protocol": "e2a", "converter": "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk", "converted_at": "` + ts +
		`", "details": {"kind": "legacy_agent_response_chunk", "is_complete": ` + strconv.FormatBool(final) + `}}, "body": ` + body +
		`, "jsonrpc_id": null, "correlation_id": null, "task_id": null, "context_id": null, "session_id": ` + sess +
		`, "message_id": null, "is_stream": ` + strconv.FormatBool(stream) + `, "identity_origin": "agent", "channel": "web", "user_id": null, "agent_ref": null, "source_agent_id": null, "method": null, "projections": {}, "channel_context": {}, "metadata": {}, "a2a_metadata": {}, "acp_meta": {}}`)
}

// request renders an E2AEnvelope as the Gateway sends it.
func (g *Generator) request(id, session, method string, stream bool, params string) []byte {
	return []byte(`{"protocol_version": "1.0", "provenance": {"source_protocol": "e2a", "converter": null, "converted_at": null, "details": {}}, "request_id": ` + strconv.Quote(id) +
		`, "jsonrpc_id": null, "correlation_id": null, "task_id": null, "context_id": null, "session_id": ` + strconv.Quote(session) +
		`, "message_id": null, "timestamp": "` + g.now() + `", "identity_origin": "user", "channel": "web", "user_id": "u-1", "agent_ref": null, "chat_id": null, "source_agent_id": null, "agent_id": null, "service_id": null, "workspace_key": null, "method": "` + method +
		`", "params": ` + params + `, "ext_method": null, "session_update_kind": null, "is_stream": ` + strconv.FormatBool(stream) +
		`, "expected_output_modes": [], "auth": null, "channel_context": {}, "a2a_metadata": {}, "acp_meta": {}}`)
}
