package model

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Config shapes generated traffic.
type Config struct {
	Seed    uint64
	Profile string // Spec or Jiuwenswarm: which readings the traffic may rely on
	// Convs is the number of conversations (a request and its responses,
	// a unary call, an interrupt, a push, a frame stream, an event).
	Convs int
	// Sessions the conversations share (interrupts cancel by session).
	Sessions int
	// FaultRate is the chance of each planted fault per conversation.
	FaultRate float64
	// MaxChunks bounds a stream's chunks.
	MaxChunks int
	// Concurrency is how many conversations are open at once at most.
	Concurrency int
	// Oversize is the chance of a chunk far over OversizeLimit bytes
	// (80 KiB, its body first); every other record stays far under it.
	Oversize float64
	// Plain: every record as the reference writes it (else some captures
	// mix other producers' JSON styles and line ends).
	Plain bool
}

func (c *Config) defaults() {
	if c.Profile == "" {
		c.Profile = Jiuwenswarm
	}
	if c.Convs <= 0 {
		c.Convs = 60
	}
	if c.Sessions <= 0 {
		c.Sessions = 4
	}
	if c.MaxChunks <= 0 {
		c.MaxChunks = 10
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 8
	}
}

// field is one key of an ordered JSON object.
type field struct {
	k string
	v any
}

// obj is a JSON object that keeps its key order (the reference's to_dict
// order).
type obj []field

// style is how a producer writes JSON: the reference's json.dumps
// (", " and ": ", non-ASCII kept), Go's compact encoding, Python's default
// ensure_ascii (every non-ASCII character a \u escape, surrogate pairs for
// the astral plane), keys in another order, keys and ids escaped where
// they need not be. One capture mixes records written by several.
type style struct {
	rnd *rand.Rand
	// per capture: the chance of each variation per record
	compact, ascii, shuffle, escape float64
	// per record, chosen by begin
	recCompact, recASCII, recShuffle, recEscape bool
}

func (st *style) begin() {
	if st == nil || st.rnd == nil {
		return
	}
	st.recCompact = st.rnd.Float64() < st.compact
	st.recASCII = st.rnd.Float64() < st.ascii
	st.recShuffle = st.rnd.Float64() < st.shuffle
	st.recEscape = st.rnd.Float64() < st.escape
}

func (st *style) appendObj(b []byte, o obj) []byte {
	sep, colon := ", ", ": "
	if st.recCompact {
		sep, colon = ",", ":"
	}
	if st.recShuffle && len(o) > 1 {
		o = append(obj(nil), o...)
		st.rnd.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
	}
	b = append(b, '{')
	for i, f := range o {
		if i > 0 {
			b = append(b, sep...)
		}
		b = st.appendString(b, f.k)
		b = append(b, colon...)
		b = st.append(b, f.v)
	}
	return append(b, '}')
}

// raw is a value written as it is (a malformed number, say).
type raw string

func (st *style) append(b []byte, v any) []byte {
	switch v := v.(type) {
	case raw:
		return append(b, v...)
	case obj:
		return st.appendObj(b, v)
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case string:
		return st.appendString(b, v)
	case []string:
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = st.appendString(b, s)
		}
		return append(b, ']')
	}
	panic(fmt.Sprintf("model: cannot write %T", v))
}

// appendString quotes s: control characters escaped, non-ASCII kept or
// (ensure_ascii) escaped, and, for a record written with needless
// escapes, now and then an ASCII letter as a \u escape.
func (st *style) appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r < 0x20:
			b = fmt.Appendf(b, "\\u%04x", r)
		case r >= 0x80 && st.recASCII:
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				b = fmt.Appendf(b, "\\u%04x\\u%04x", r1, r2)
			} else {
				b = fmt.Appendf(b, "\\u%04x", r)
			}
		case st.recEscape && r < 0x80 && (r|0x20) >= 'a' && (r|0x20) <= 'z' && st.rnd.IntN(8) == 0:
			b = fmt.Appendf(b, "\\u%04X", r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// record writes one record in st's style (chosen afresh per record).
func (st *style) record(o obj) []byte {
	st.begin()
	return st.appendObj(nil, o)
}

// recordInOrder is record with o's keys in o's order.
func (st *style) recordInOrder(o obj) []byte {
	st.begin()
	st.recShuffle = false
	return st.appendObj(nil, o)
}

// resp is one response of a conversation before it is written.
type resp struct {
	seq       any // int, or a malformed value
	final     any // bool, or a malformed value
	status    string
	kind      string
	keepalive bool
	respID    string
	delta     string
	// oversize: delta is far over OversizeLimit, and body is written
	// first, so that the line's head (the engine's first 64 KiB) does not
	// name its stream. Whether a line too long to judge whose head names
	// an open stream gaps that stream offline, RULES.md does not say.
	oversize bool
}

type conv struct {
	id, session string
	reqSession  string // the session_id its request carried ("" for none)
	items       [][]byte
	tracked     []bool // items that take part in stream tracking (well-typed responses)
	finals      []bool // tracked items that are finals
	requests    int    // leading items that are requests
	hasRequest  bool   // its first item is its request
	cancels     bool   // its first item is a chat.interrupt that cancels its session's streams
	next        int
}

type gen struct {
	cfg   Config
	st    *style
	rnd   *rand.Rand
	clock time.Time
	ids   int
}

func newGen(cfg Config) *gen {
	cfg.defaults()
	g := &gen{cfg: cfg, rnd: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		clock: time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)}
	g.st = &style{rnd: g.rnd}
	if !cfg.Plain {
		// Most captures are the reference's alone; the rest mix
		// producers.
		pick := func(p float64) float64 {
			if g.chance(0.5) {
				return 0
			}
			return p
		}
		g.st.compact, g.st.ascii, g.st.shuffle, g.st.escape = pick(0.5), pick(0.5), pick(0.3), pick(0.1)
	}
	return g
}

func (g *gen) chance(p float64) bool { return g.rnd.Float64() < p }

func (g *gen) now() string {
	g.clock = g.clock.Add(time.Duration(1+g.rnd.IntN(900)) * time.Millisecond)
	return g.clock.Format("2006-01-02T15:04:05.000000-07:00")
}

var words = []string{"the", "agent", "reads", "your", "files", "and", "plans", "a", "fix", "你好", "世界", "tool", "result", "ok", "\"quoted\"", "line\nbreak", "tab\t", "emoji 🙂"}

func (g *gen) text() string {
	n := 1 + g.rnd.IntN(4)
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.rnd.IntN(len(words))])
	}
	return b.String()
}

func (g *gen) provenance(ts string) obj {
	return obj{{"source_protocol", "e2a"}, {"converter", "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk"}, {"converted_at", ts}, {"details", obj{}}}
}

// request writes an E2AEnvelope in the reference's to_dict key order.
func (g *gen) request(rid string, session any, method string, params obj, stream bool) []byte {
	ts := g.now()
	return g.st.record(obj{
		{"protocol_version", "1.0"},
		{"provenance", obj{{"source_protocol", "e2a"}, {"converter", nil}, {"converted_at", nil}, {"details", obj{}}}},
		{"request_id", rid}, {"jsonrpc_id", nil}, {"correlation_id", nil}, {"task_id", nil}, {"context_id", nil},
		{"session_id", session}, {"message_id", nil}, {"timestamp", ts}, {"identity_origin", "user"},
		{"channel", "web"}, {"user_id", nil}, {"agent_ref", obj{{"mode", "code"}, {"id", "default"}}}, {"chat_id", nil},
		{"source_agent_id", nil}, {"agent_id", nil}, {"service_id", nil}, {"workspace_key", nil},
		{"method", method}, {"params", params}, {"ext_method", nil}, {"session_update_kind", nil},
		{"is_stream", stream}, {"expected_output_modes", []string{}}, {"auth", nil},
		{"channel_context", obj{}}, {"a2a_metadata", obj{}}, {"acp_meta", obj{}},
	})
}

// response writes an E2AResponse in the reference's to_dict key order.
func (g *gen) response(rid any, session any, r resp, meta obj, body obj) []byte {
	ts := g.now()
	if body == nil {
		body = g.body(r)
	}
	var rspID any = r.respID
	if r.respID == "" {
		rspID = rid
	}
	o := obj{
		{"protocol_version", "1.0"}, {"response_id", rspID}, {"request_id", rid}, {"sequence", r.seq},
		{"is_final", r.final}, {"status", r.status}, {"response_kind", r.kind}, {"timestamp", ts},
		{"provenance", g.provenance(ts)}, {"body", body}, {"jsonrpc_id", nil}, {"correlation_id", nil},
		{"task_id", nil}, {"context_id", nil}, {"session_id", session}, {"message_id", nil}, {"is_stream", true},
		{"identity_origin", "agent"}, {"channel", "web"}, {"user_id", nil}, {"agent_ref", nil},
		{"source_agent_id", nil}, {"method", nil}, {"projections", obj{}}, {"channel_context", obj{}},
		{"metadata", meta}, {"a2a_metadata", obj{}}, {"acp_meta", obj{}},
	}
	if r.oversize {
		o = append(obj{{"body", body}}, append(o[:9:9], o[10:]...)...)
		return g.st.recordInOrder(o)
	}
	return g.st.record(o)
}

func (g *gen) body(r resp) obj {
	switch {
	case r.keepalive:
		return obj{{"delta_kind", "custom"}, {"delta", obj{{"event_type", "keepalive"}}}, {"event_type", "keepalive"}}
	case r.kind == "e2a.chunk":
		if len(r.delta)%3 == 0 {
			return obj{{"delta_kind", "custom"}, {"delta", obj{{"event_type", "chat.tool_call"}, {"tool_name", "read_file"}, {"arguments", obj{{"path", r.delta}}}}}, {"event_type", "chat.tool_call"}}
		}
		return obj{{"delta_kind", "text"}, {"delta", r.delta}, {"event_type", "chat.delta"}, {"source_chunk_type", "llm_output"}}
	case r.kind == "e2a.error":
		return obj{{"code", "chat.error"}, {"message", r.delta}, {"details", obj{{"event_type", "chat.error"}, {"error", r.delta}, {"error_type", "RateLimitError"}}}}
	default:
		return obj{{"result", obj{{"event_type", "chat.final"}, {"content", r.delta}}}}
	}
}

// OversizeLimit is the line limit (validate --max-line-bytes) that
// Config.Oversize chunks are far over and every other record far under.
const OversizeLimit = 16 << 10

// Capture is Lines written out as a file: lines ended by "\n", or (some
// captures) "\r\n", the last one sometimes without an end.
func Capture(cfg Config) (lines [][]byte, data []byte) {
	lines = Lines(cfg)
	rnd := rand.New(rand.NewPCG(cfg.Seed^0x5bd1e995, cfg.Seed))
	eol := "\n"
	if !cfg.Plain && rnd.IntN(4) == 0 {
		eol = "\r\n"
	}
	for i, l := range lines {
		data = append(data, l...)
		if i < len(lines)-1 || cfg.Plain || rnd.IntN(3) > 0 {
			data = append(data, eol...)
		}
	}
	return lines, data
}

// Lines generates JSON lines shaped like the Gateway↔AgentServer link of
// the reference: connection.ack, sessions of several requests, streams
// interleaved with keepalives, unary calls, interrupts (cancelled streams
// send nothing more), server push, undecodable lines with the
// AgentServer's invalid-json reply, and planted faults.
func Lines(cfg Config) [][]byte {
	g := newGen(cfg)
	convs := g.convs()
	out := [][]byte{[]byte(`{"type": "event", "event": "connection.ack", "payload": {"status": "ready"}}`)}
	return append(out, g.merge(convs, g.cfg.Profile == Jiuwenswarm)...)
}

// convs builds Lines' conversations.
func (g *gen) convs() []*conv {
	jiu := g.cfg.Profile == Jiuwenswarm
	uniqueIDs := !jiu && g.chance(0.5) // spec traffic: unique response ids, or the reference's
	var convs []*conv
	var rids []string
	invalidReplies := 0
	for i := 0; i < g.cfg.Convs; i++ {
		g.ids++
		rid := fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", g.rnd.Uint32(), g.ids, g.rnd.IntN(4096), g.rnd.IntN(4096), g.rnd.Uint64()>>16)
		switch g.rnd.IntN(12) { // ids of other producers
		case 0:
			rid = "msg_" + strconv.Itoa(g.ids)
		case 1:
			rid = "会话-" + strconv.Itoa(g.ids) + "-🙂"
		case 2:
			rid = `q"` + strconv.Itoa(g.ids) + `\x/`
		}
		session := "sess_" + strconv.Itoa(g.rnd.IntN(g.cfg.Sessions))
		c := &conv{id: rid, session: session}
		switch x := g.rnd.Float64(); {
		case x < 0.08: // a chat.interrupt
			intents := []string{"cancel", "supplement", "pause", "resume", ""}
			intent := intents[g.rnd.IntN(len(intents))]
			params := obj{}
			if intent != "" {
				params = obj{{"intent", intent}}
			}
			c.items = append(c.items, g.request(rid, session, "chat.interrupt", params, false))
			c.hasRequest, c.requests, c.reqSession = true, 1, session
			c.cancels = intent == "" || intent == "cancel" || intent == "supplement"
			c.items = append(c.items, g.response(rid, session, resp{seq: 0, final: true, status: "succeeded", kind: "e2a.complete"}, obj{},
				obj{{"result", obj{{"event_type", "chat.interrupt_result"}, {"success", true}, {"message", "当前会话任务已终止"}}}}))
		case x < 0.13: // server push
			prid := ""
			switch {
			case !jiu:
				prid = "push-" + rid // spec knows no push: a stream of its own
			case g.chance(0.5) && len(rids) > 0:
				prid = rids[g.rnd.IntN(len(rids))] // not the in-flight request it names
			}
			meta := obj{{"_jiuwenswarm_server_push", true}}
			r := resp{seq: 0, final: true, status: "succeeded", kind: "e2a.complete", respID: prid}
			if !jiu {
				r.respID = "push-r-" + rid
			}
			if prid == "" {
				c.items = append(c.items, g.response("", nil, r, meta, obj{{"result", obj{{"event_type", "cron.response"}}}}))
			} else {
				c.items = append(c.items, g.response(prid, nil, r, meta, obj{{"result", obj{{"event_type", "cron.response"}}}}))
			}
		case x < 0.20: // ACP JSON-RPC beside E2A: no stream, and a chat.interrupt in it cancels nothing
			id := g.rnd.IntN(1000)
			switch g.rnd.IntN(3) {
			case 0:
				for k := 0; k < 1+g.rnd.IntN(3); k++ {
					c.items = append(c.items, g.st.record(obj{{"jsonrpc", "2.0"}, {"method", "session/update"}, {"params", obj{{"sessionId", session},
						{"update", obj{{"sessionUpdate", "agent_message_chunk"}, {"content", obj{{"type", "text"}, {"text", g.text()}}}}}}}}))
				}
			case 1:
				c.items = append(c.items, g.st.record(obj{{"jsonrpc", "2.0"}, {"id", id}, {"method", "session/prompt"},
					{"params", obj{{"sessionId", session}, {"prompt", []string{}}}}}))
				c.items = append(c.items, g.st.record(obj{{"jsonrpc", "2.0"}, {"id", id}, {"result", obj{{"stopReason", "end_turn"}}}}))
			default:
				c.items = append(c.items, g.st.record(obj{{"jsonrpc", "2.0"}, {"id", rid}, {"method", "chat.interrupt"}, {"session_id", session},
					{"params", obj{{"session_id", session}, {"intent", "cancel"}}}}))
			}
		case x < 0.23: // an undecodable message and the AgentServer's reply
			garbage := []string{`{"protocol_version": "1.0", "request_id": "` + rid[:min(len(rid), 5)], `not json at all`, `[1, 2, 3]`, `"a string"`, `{"a": 1} {"b": 2}`}
			c.items = append(c.items, []byte(garbage[g.rnd.IntN(len(garbage))]))
			if jiu || invalidReplies == 0 {
				invalidReplies++
				c.items = append(c.items, g.response(nil, nil, resp{seq: 0, final: true, status: "failed", kind: "e2a.error", respID: "invalid-json"}, obj{},
					obj{{"code", "E2A.INVALID_JSON"}, {"message", "invalid JSON"}, {"details", obj{{"kind", "json_parse_error"}}}}))
			}
		default:
			rids = append(rids, rid)
			g.stream(c, jiu, uniqueIDs)
		}
		convs = append(convs, c)
	}
	return convs
}

// LiveItem is one message a live tap saw on connection Conn, or (Data
// nil) a loss there: the tap could not see some of its messages.
type LiveItem struct {
	Conn string
	Data []byte
}

// Live generates Lines' traffic over several connections of one tap (a
// conversation stays on its connection; an interrupt ends its session's
// streams on every connection), with a chance per message of a loss in
// its place (only of a conversation that has had a tracked response, so
// that no stream starts unseen: whether a stream first seen after a loss
// was touched by it, RULES.md does not say).
func Live(cfg Config, conns int, lossRate float64) []LiveItem {
	g := newGen(cfg)
	convs := g.convs()
	var out []LiveItem
	for k := 0; k < conns; k++ {
		out = append(out, LiveItem{Conn: "c" + strconv.Itoa(k), Data: []byte(`{"type": "event", "event": "connection.ack", "payload": {"status": "ready"}}`)})
	}
	conn := map[*conv]string{}
	for _, c := range convs {
		conn[c] = "c" + strconv.Itoa(g.rnd.IntN(conns))
	}
	for _, e := range g.mergeLive(convs, g.cfg.Profile == Jiuwenswarm, lossRate) {
		out = append(out, LiveItem{Conn: conn[e.c], Data: e.data})
	}
	return out
}

// stream fills c with a request (mostly) and its responses, faults
// planted.
func (g *gen) stream(c *conv, jiu, uniqueIDs bool) {
	unary := g.chance(0.25)
	if g.chance(0.9) {
		method, params := "chat.send", obj{{"content", g.text()}, {"query", g.text()}}
		if unary {
			methods := []string{"history.get", "session.list", "config.get", "skills.list"}
			method, params = methods[g.rnd.IntN(len(methods))], obj{}
		}
		var reqSession any = c.session
		c.reqSession = c.session
		if g.chance(0.1) {
			// A request without its session (another producer) while
			// the responses carry one: an interrupt of that session
			// ends it once a response has named the session.
			reqSession, c.reqSession = nil, ""
		}
		req := g.request(c.id, reqSession, method, params, !unary)
		c.items = append(c.items, req)
		c.hasRequest, c.requests = true, 1
		if g.chance(g.cfg.FaultRate / 3) {
			c.items = append(c.items, req) // the same request again while in flight
			c.requests++
		}
	}
	var session any = c.session
	if g.chance(0.3) && c.reqSession != "" {
		session = nil
	}
	n := 0
	if !unary {
		n = g.rnd.IntN(g.cfg.MaxChunks + 1)
	}
	var rs []resp
	serial := 0
	id := func() string {
		serial++
		if uniqueIDs {
			return c.id + "-r" + strconv.Itoa(serial)
		}
		return c.id
	}
	for i := 0; i < n; i++ {
		for g.chance(0.15) {
			rs = append(rs, resp{seq: -1, final: false, status: "in_progress", kind: "e2a.chunk", keepalive: true, respID: id()})
		}
		r := resp{seq: i, final: false, status: "in_progress", kind: "e2a.chunk", respID: id(), delta: g.text()}
		if g.chance(g.cfg.Oversize) {
			r.delta = string(bytes.Repeat([]byte("model output "), (80<<10)/13+g.rnd.IntN(1000)))
			r.oversize = true
		}
		rs = append(rs, r)
	}
	fin := resp{seq: n, final: true, status: "succeeded", kind: "e2a.complete", respID: id(), delta: g.text()}
	if g.chance(0.15) {
		fin.status, fin.kind = "failed", "e2a.error"
	}
	rs = append(rs, fin)
	p := g.cfg.FaultRate
	real := func() []int { // indexes of well-typed non-keepalive responses
		var ix []int
		for i, r := range rs {
			if r.wellTyped() {
				ix = append(ix, i)
			}
		}
		return ix
	}
	finalAt := func() int {
		for i := len(rs) - 1; i >= 0; i-- {
			if f, ok := rs[i].final.(bool); ok && f {
				return i
			}
		}
		return -1
	}
	// Each fault with its chance, in a random order.
	faults := g.rnd.Perm(14)
	for _, f := range faults {
		if !g.chance(p / 2) {
			continue
		}
		ix := real()
		switch f {
		case 0: // a lost chunk
			if len(ix) >= 2 {
				k := ix[g.rnd.IntN(len(ix)-1)]
				rs = append(rs[:k], rs[k+1:]...)
			}
		case 1: // a duplicate, later in the stream
			k := ix[g.rnd.IntN(len(ix))]
			at := k + 1 + g.rnd.IntN(len(rs)-k)
			rs = append(rs[:at], append([]resp{rs[k]}, rs[at:]...)...)
		case 2: // two records swapped: a gap, then a regression
			if len(ix) >= 2 {
				k := g.rnd.IntN(len(ix) - 1)
				rs[ix[k]], rs[ix[k+1]] = rs[ix[k+1]], rs[ix[k]]
			}
		case 3: // a second final
			if k := finalAt(); k >= 0 {
				second := rs[k]
				second.respID = id()
				if g.chance(0.5) {
					second.seq = seqOf(rs[k]) + 1
				}
				rs = append(rs, second)
			}
		case 4: // a record after the final
			if k := finalAt(); k >= 0 {
				rs = append(rs, resp{seq: seqOf(rs[k]) + 1, final: false, status: "in_progress", kind: "e2a.chunk", respID: id(), delta: g.text()})
			}
		case 5: // no final
			if k := finalAt(); k >= 0 && len(ix) >= 2 {
				rs = append(rs[:k], rs[k+1:]...)
			}
		case 6: // wrong types
			if len(ix) < 2 {
				break
			}
			k := ix[g.rnd.IntN(len(ix))]
			switch g.rnd.IntN(6) {
			case 0:
				rs[k].seq = strconv.Itoa(seqOf(rs[k]))
			case 1:
				rs[k].seq = raw(strconv.Itoa(seqOf(rs[k])) + ".5")
			case 2:
				rs[k].seq = -1 // no keepalive body
			case 3:
				rs[k].seq = raw("-" + strconv.Itoa(seqOf(rs[k])+2))
			case 4:
				rs[k].final = strconv.FormatBool(rs[k].final == true)
			default:
				if rs[k].final == true {
					rs[k].final = 1
				} else {
					rs[k].final = 0
				}
			}
		case 7: // failed with the wrong kind
			k := ix[g.rnd.IntN(len(ix))]
			if rs[k].kind == "e2a.chunk" || rs[k].kind == "e2a.complete" {
				rs[k].status = "failed"
			}
		case 8: // a final still in progress
			if k := finalAt(); k >= 0 && rs[k].kind == "e2a.complete" {
				rs[k].status = "in_progress"
			}
		case 9: // a kind that does not fit is_final
			if k := finalAt(); k >= 0 && g.chance(0.5) {
				rs[k].kind = "e2a.chunk"
			} else if len(ix) >= 2 {
				k := ix[g.rnd.IntN(len(ix)-1)]
				if rs[k].kind == "e2a.chunk" && rs[k].final == false {
					rs[k].kind = "e2a.complete"
				}
			}
		case 10: // a keepalive after the final (the Gateway's trailing grace)
			if k := finalAt(); k >= 0 {
				rs = append(rs, resp{seq: -1, final: false, status: "in_progress", kind: "e2a.chunk", keepalive: true, respID: id()})
			}
		case 12: // a producer that numbers from far up: past 32 bits
			base := 1<<32 - 2
			if g.chance(0.5) {
				base = 1<<53 + 7
			}
			for i := range rs {
				if n, ok := rs[i].seq.(int); ok && n >= 0 {
					rs[i].seq = n + base
				}
			}
		case 13: // a jump far ahead, then in order from there
			if len(ix) >= 2 {
				k := 1 + g.rnd.IntN(len(ix)-1)
				jump := 1 << (20 + g.rnd.IntN(40))
				for _, i := range ix[k:] {
					if n, ok := rs[i].seq.(int); ok && n >= 0 {
						rs[i].seq = n + jump
					}
				}
			}
		case 11: // a record of a malformed sequence after the final
			if k := finalAt(); k >= 0 {
				rs = append(rs, resp{seq: "x", final: false, status: "in_progress", kind: "e2a.chunk", respID: id(), delta: g.text()})
			}
		}
	}
	// A final that repeats or regresses the sequence (faults combined):
	// whether it ends the stream, the contract does not say. Move it on.
	seen, ended, last := false, false, 0
	for i := range rs {
		seq, _ := rs[i].seq.(int)
		final, _ := rs[i].final.(bool)
		if !rs[i].wellTyped() || ended {
			continue
		}
		if final && seen && seq <= last {
			seq = last + 1 + g.rnd.IntN(2)
			rs[i].seq = seq
		}
		if !seen || seq > last {
			last = seq
		}
		seen, ended = true, final
	}
	for len(c.tracked) < len(c.items) {
		c.tracked = append(c.tracked, false)
		c.finals = append(c.finals, false)
	}
	for _, r := range rs {
		c.items = append(c.items, g.response(c.id, session, r, obj{}, nil))
		c.tracked = append(c.tracked, r.wellTyped())
		c.finals = append(c.finals, r.wellTyped() && r.final == true)
	}
}

// wellTyped says whether r takes part in stream tracking: a non-negative
// integer sequence, a boolean is_final, no keepalive, not too long.
func (r resp) wellTyped() bool {
	seq, seqOK := r.seq.(int)
	_, finalOK := r.final.(bool)
	return seqOK && seq >= 0 && finalOK && !r.keepalive && !r.oversize
}

func seqOf(r resp) int {
	if n, ok := r.seq.(int); ok {
		return n
	}
	return 0
}

// merge interleaves conversations: a few open at once, each sending its
// items in order. A cancelling chat.interrupt ends, under jiuwenswarm,
// every conversation of its session whose request was sent (under spec:
// every one that has had a well-typed response); they send nothing more,
// as the reference's cancelled tasks.
func (g *gen) merge(convs []*conv, jiu bool) [][]byte {
	var out [][]byte
	for _, e := range g.mergeLive(convs, jiu, 0) {
		out = append(out, e.data)
	}
	return out
}

// emitted is one item merge sent: data of conv c, or (data nil) a loss
// on c's connection in place of c's item.
type emitted struct {
	c    *conv
	data []byte
}

// mergeLive is merge; with lossRate, an item of a conversation that has
// had a tracked response may be lost instead (a loss marker in its
// place).
func (g *gen) mergeLive(convs []*conv, jiu bool, lossRate float64) []emitted {
	var out []emitted
	var active []*conv
	pending := convs
	for len(pending) > 0 || len(active) > 0 {
		if len(pending) > 0 && (len(active) == 0 || len(active) < g.cfg.Concurrency && g.chance(0.35)) {
			active = append(active, pending[0])
			pending = pending[1:]
			continue
		}
		i := g.rnd.IntN(len(active))
		c := active[i]
		had := false
		for _, t := range c.tracked[:min(c.next, len(c.tracked))] {
			had = had || t
		}
		// A lost final with tracked records after it would leave those
		// (records after the final) judged as the stream's own, a final
		// among them repeating the sequence: not settled (see stream).
		finalBefore := c.next < len(c.finals) && c.finals[c.next]
		for _, t := range c.tracked[min(c.next+1, len(c.tracked)):] {
			had = had && !(finalBefore && t)
		}
		if had && lossRate > 0 && g.chance(lossRate) {
			out = append(out, emitted{c, nil})
		} else {
			out = append(out, emitted{c, c.items[c.next]})
		}
		c.next++
		if c.next == 1 && c.cancels {
			kept := active[:0]
			for _, o := range active {
				had := false
				for _, t := range o.tracked[:min(o.next, len(o.tracked))] {
					had = had || t
				}
				// The session the AgentServer runs o in: its request's,
				// or, where that carried none or was not sent, the one
				// its responses carry once one of them is tracked.
				sess := o.reqSession
				if sess == "" && had {
					sess = o.session
				}
				cut := o != c && sess == c.session && o.next > 0
				if !jiu {
					// spec knows no cancellation: a stream cut now
					// must have had a tracked response (it misses its
					// final), not be a request alone.
					cut = cut && had
				}
				if !cut {
					kept = append(kept, o)
				}
			}
			active = kept
		}
		for i := 0; i < len(active); i++ {
			if active[i].next == len(active[i].items) {
				active = append(active[:i], active[i+1:]...)
				i--
			}
		}
	}
	return out
}

// Frames generates an EventMesh frame file: stream requests, their chunk
// streams interleaved (sid, seq from 0, a done chunk, errors on some),
// EVENT frames, planted faults, and sometimes a truncated frame at the
// end.
func Frames(cfg Config) []byte {
	g := newGen(cfg)
	var convs []*conv
	for i := 0; i < g.cfg.Convs; i++ {
		g.ids++
		c := &conv{id: fmt.Sprintf("agent-%d:%08x-%04x", g.rnd.IntN(5), g.rnd.Uint32(), g.ids)}
		if g.chance(0.1) {
			c.id = fmt.Sprintf("代理-%d:会话 🙂 %d", g.rnd.IntN(5), g.ids) // any UTF-8
		}
		if g.chance(0.15) {
			g.event(c)
		} else {
			g.frameStream(c)
		}
		convs = append(convs, c)
	}
	var out []byte
	for _, b := range g.merge(convs, false) {
		out = append(out, b...)
	}
	if g.chance(0.2) {
		f := encodeFrame(2, 0, 0, [][2]string{{"sid", "tail"}}, []byte("cut here"))
		out = append(out, f[:3+g.rnd.IntN(len(f)-4)]...)
	}
	return out
}

func (g *gen) event(c *conv) {
	attrs := [][2]string{{"specversion", "1.0"}, {"id", c.id}, {"source", "/agents/planner"}, {"type", "com.example.task.created"}, {"datacontenttype", "application/json"}}
	if g.chance(g.cfg.FaultRate / 3) {
		k := 1 + g.rnd.IntN(3) // id, source or type missing
		attrs = append(attrs[:k], attrs[k+1:]...)
	}
	c.items = append(c.items, encodeFrame(3, 0, 0, attrs, g.st.record(obj{{"task", g.text()}})))
}

type chunk struct {
	seq   int32
	flags uint8
	attrs [][2]string
	data  []byte
}

func (g *gen) frameStream(c *conv) {
	if g.chance(0.8) {
		attrs := [][2]string{{"sid", c.id}, {"replyTo", "client-parent#client.c" + strconv.Itoa(g.rnd.IntN(3))}, {"model", "qwen"}}
		if g.chance(g.cfg.FaultRate / 4) {
			attrs = attrs[:1] // no replyTo
		}
		c.items = append(c.items, encodeFrame(1, 0, 0, attrs, []byte(g.text())))
	}
	etypes := []string{"", "text", "thought", "tool", "structured"}
	n := 1 + g.rnd.IntN(g.cfg.MaxChunks)
	var cs []chunk
	for i := 0; i < n; i++ {
		attrs := [][2]string{{"sid", c.id}}
		var flags uint8
		if et := etypes[g.rnd.IntN(len(etypes))]; et != "" {
			attrs = append(attrs, [2]string{"etype", et})
		}
		if g.chance(0.2) {
			flags |= 4
			attrs = append(attrs, [2]string{"meta", `{"tokens":` + strconv.Itoa(g.rnd.IntN(90)) + `,"model":"qwen"}`})
		}
		if len(attrs) > 1 && g.chance(0.2) {
			attrs[0], attrs[1] = attrs[1], attrs[0] // the doc's order, not the code's: any order is a frame
		}
		cs = append(cs, chunk{seq: int32(i), flags: flags, attrs: attrs, data: []byte(g.text())})
	}
	done := chunk{seq: int32(n), flags: 1, attrs: [][2]string{{"sid", c.id}}}
	if g.chance(0.2) {
		done.flags |= 2
		done.attrs = append(done.attrs, [2]string{"err", "model overloaded"})
	}
	cs = append(cs, done)
	p := g.cfg.FaultRate
	doneAt := func() int {
		for i := len(cs) - 1; i >= 0; i-- {
			if cs[i].flags&1 != 0 {
				return i
			}
		}
		return -1
	}
	for _, f := range g.rnd.Perm(12) {
		if !g.chance(p / 2) {
			continue
		}
		switch f {
		case 0: // a lost chunk
			if len(cs) >= 3 {
				k := g.rnd.IntN(len(cs) - 1)
				cs = append(cs[:k], cs[k+1:]...)
			}
		case 1: // a duplicate, later
			k := g.rnd.IntN(len(cs))
			at := k + 1 + g.rnd.IntN(len(cs)-k)
			cs = append(cs[:at], append([]chunk{cs[k]}, cs[at:]...)...)
		case 2: // two chunks swapped
			if len(cs) >= 2 {
				k := g.rnd.IntN(len(cs) - 1)
				cs[k], cs[k+1] = cs[k+1], cs[k]
			}
		case 3: // a second done
			if k := doneAt(); k >= 0 {
				second := cs[k]
				second.seq++
				cs = append(cs, second)
			}
		case 4: // a chunk after done
			if k := doneAt(); k >= 0 {
				cs = append(cs, chunk{seq: cs[k].seq + 1, attrs: [][2]string{{"sid", c.id}}, data: []byte("late")})
			}
		case 5: // no done
			if k := doneAt(); k >= 0 && len(cs) >= 2 {
				cs = append(cs[:k], cs[k+1:]...)
			}
		case 6: // an etype the reference does not know
			k := g.rnd.IntN(len(cs))
			var attrs [][2]string
			for _, a := range cs[k].attrs {
				if a[0] != "etype" {
					attrs = append(attrs, a)
				}
			}
			cs[k].attrs = append(attrs, [2]string{"etype", "poem"})
		case 7: // a chunk without its sid: no stream
			if k := g.rnd.IntN(len(cs)); len(cs) >= 3 && hasSid(cs[k].attrs) {
				var attrs [][2]string
				for _, a := range cs[k].attrs {
					if a[0] != "sid" {
						attrs = append(attrs, a)
					}
				}
				cs[k].attrs = attrs
			}
		case 8: // hasError without err
			k := g.rnd.IntN(len(cs))
			if cs[k].flags&2 == 0 {
				cs[k].flags |= 2
			}
		case 9: // hasMeta without meta, or meta without the flag
			k := g.rnd.IntN(len(cs))
			cs[k].flags ^= 4
		case 10: // meta that is no JSON object
			k := g.rnd.IntN(len(cs))
			cs[k].flags |= 4
			var attrs [][2]string
			for _, a := range cs[k].attrs {
				if a[0] != "meta" {
					attrs = append(attrs, a)
				}
			}
			bad := []string{`[1,2]`, `{"tokens":`, `"text"`, `tokens=3`}
			cs[k].attrs = append(attrs, [2]string{"meta", bad[g.rnd.IntN(len(bad))]})
		case 11: // a reserved flag bit
			k := g.rnd.IntN(len(cs))
			cs[k].flags |= 8 << g.rnd.IntN(5)
		}
	}
	seen, ended, last := false, false, int32(0)
	for i := range cs {
		if !hasSid(cs[i].attrs) || ended {
			continue
		}
		done := cs[i].flags&1 != 0
		if done && seen && cs[i].seq <= last {
			cs[i].seq = last + 1 + int32(g.rnd.IntN(2)) // see stream
		}
		if !seen || cs[i].seq > last {
			last = cs[i].seq
		}
		seen, ended = true, done
	}
	for _, ch := range cs {
		c.items = append(c.items, encodeFrame(2, ch.flags, ch.seq, ch.attrs, ch.data))
	}
}

func hasSid(attrs [][2]string) bool {
	for _, a := range attrs {
		if a[0] == "sid" {
			return true
		}
	}
	return false
}

// encodeFrame writes one frame: the big-endian 14-byte header, the
// attributes in order, the data.
func encodeFrame(typ, flags uint8, seq int32, attrs [][2]string, data []byte) []byte {
	b := []byte{0xEF, 1, typ, flags}
	b = binary.BigEndian.AppendUint32(b, uint32(seq))
	b = binary.BigEndian.AppendUint16(b, uint16(len(attrs)))
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	for _, a := range attrs {
		b = binary.BigEndian.AppendUint16(b, uint16(len(a[0])))
		b = append(b, a[0]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(a[1])))
		b = append(b, a[1]...)
	}
	return append(b, data...)
}
