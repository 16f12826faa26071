package model

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Profile names, as the engine spells them.
const (
	Spec        = "spec"
	Jiuwenswarm = "jiuwenswarm"
)

// Finding is what the differential tests compare: the rule, the stream key
// and the source ("file:line", "file@offset", or the end-of-input source).
type Finding struct {
	Rule, Stream, Source string
}

func (f Finding) String() string { return fmt.Sprintf("%s %q %s", f.Rule, f.Stream, f.Source) }

// Diff says how got (the findings of side, "engine" or "e2atap")
// differs from want, the model's, as multisets: each finding only one has,
// how many times, and, where record gives one, the record at its source;
// "" when they are equal.
func Diff(got, want []Finding, side string, record func(source string) string) string {
	count := map[Finding]int{}
	for _, f := range want {
		count[f]++
	}
	for _, f := range got {
		count[f]--
	}
	var b strings.Builder
	for _, f := range Sorted(append(append([]Finding(nil), got...), want...)) {
		n := count[f]
		if n == 0 {
			continue
		}
		count[f] = 0
		what := side + " only"
		if n > 0 {
			what = "model only"
		}
		fmt.Fprintf(&b, "  %s (x%d): %s\n", what, max(n, -n), f)
		if record == nil {
			continue
		}
		if rec := record(f.Source); rec != "" {
			if len(rec) > 300 {
				rec = rec[:300] + "…"
			}
			fmt.Fprintf(&b, "    %s\n", rec)
		}
	}
	return b.String()
}

// Sorted returns fs sorted, for comparison as a multiset.
func Sorted(fs []Finding) []Finding {
	out := append([]Finding(nil), fs...)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Rule != b.Rule {
			return a.Rule < b.Rule
		}
		return a.Stream < b.Stream
	})
	return out
}

// Verdict is the model's judgement of one input.
type Verdict struct {
	Findings []Finding
	// Ambiguous lists record shapes met that the contract does not settle
	// (the generator never makes them; a test must fail on any).
	Ambiguous []string
	// Cancelled counts the streams a chat.interrupt ended.
	Cancelled int
}

// stream is one E2A stream (request_id) or frame chunk stream (sid).
type stream struct {
	seen      bool // a record took part in tracking
	last      int64
	ended     bool // final / done seen
	cancelled bool
	request   bool // its request envelope was seen
	// session is the one its request envelope carried or, where that
	// carried none (or was not seen), the first its tracked responses
	// carry: the session the AgentServer runs the stream's task in, the
	// one a chat.interrupt of it ends.
	session  string
	inFlight bool   // request or a tracked response seen, not ended, not cancelled
	order    int    // first appearance, for a stable end-of-input order
	key      string // request_id or sid
	conn     string // the connection scope (live)
	// A loss in its scope while it was open: resync, no sequence rule
	// for its next tracked record; lost, no missing_final.
	resync, lost bool
}

// track applies the sequence semantics to one record of st and returns the
// sequence rule's suffix ("" when in order), or "after" for a record after
// the final.
func (st *stream) track(seq int64, final bool) (rule string, ambiguous bool) {
	switch {
	case st.ended:
		return "after", false
	case st.resync:
		// No sequence rule; last still never decreases.
		if !st.seen || seq > st.last {
			st.last = seq
		}
		st.seen, st.resync = true, false
	case !st.seen:
		st.seen = true
		if seq > 0 {
			rule = "seq_start"
		}
		st.last = seq
	case seq == st.last:
		rule = "seq_dup"
	case seq < st.last:
		rule = "seq_regress"
	case seq-st.last == 1: // not last+1: a last of MaxInt64 has no next
		st.last = seq
	default:
		rule = "seq_gap"
		st.last = seq
	}
	if final {
		// A final that is itself a duplicate or a regression: does it
		// end the stream? The contract does not say.
		ambiguous = rule == "seq_dup" || rule == "seq_regress"
		st.ended = true
		st.inFlight = false
	}
	return rule, ambiguous
}

// e2aJudge holds the state of one E2A judgement.
type e2aJudge struct {
	profile string
	v       Verdict
	streams map[string]*stream
	n       int
	respIDs map[string]bool
	curSrc  string
	conn    string
}

func (j *e2aJudge) add(rule, stream string) {
	j.v.Findings = append(j.v.Findings, Finding{Rule: rule, Stream: stream, Source: j.curSrc})
}

func (j *e2aJudge) ambiguous(what string) {
	j.v.Ambiguous = append(j.v.Ambiguous, j.curSrc+": "+what)
}

func (j *e2aJudge) get(rid string) *stream {
	k := j.conn + "\x00" + rid // streams are per connection
	st := j.streams[k]
	if st == nil {
		st = &stream{order: j.n, key: rid, conn: j.conn}
		j.n++
		j.streams[k] = st
	}
	return st
}

// Judge judges one run over several inputs (validate FILE...): streams go
// on from one file to the next; end-of-input findings come at End.
type Judge struct {
	e  *e2aJudge
	fr frameJudge
	// MaxLine: a longer JSON line is e2a.decode (0: no limit).
	MaxLine int
}

// NewJudge starts a judgement under profile.
func NewJudge(profile string) *Judge {
	return &Judge{e: &e2aJudge{profile: profile, streams: map[string]*stream{}, respIDs: map[string]bool{}},
		fr: frameJudge{streams: map[string]*stream{}}}
}

// Lines judges JSON lines (one record each, numbered from 1 in file name).
func (j *Judge) Lines(name string, lines [][]byte) {
	j.Records(lines, func(i int) string { return name + ":" + strconv.Itoa(i+1) })
}

// Records judges JSON records (messages of a live tap, say); source(i)
// is where the i-th (from 0) came from.
func (j *Judge) Records(lines [][]byte, source func(i int) string) {
	for i, line := range lines {
		j.e.curSrc = source(i)
		if j.MaxLine > 0 && len(line) > j.MaxLine {
			j.e.add("e2a.decode", "")
			continue
		}
		j.e.line(line)
	}
}

// Record judges one JSON message of a live tap's connection conn.
func (j *Judge) Record(conn, source string, line []byte) {
	j.e.conn, j.e.curSrc = conn, source
	j.e.line(line)
	j.e.conn = ""
}

// Lost says the tap could not see some messages of connection conn:
// every stream of it that is open (its request or a tracked response
// seen, no final, not cancelled) is not judged across the loss: no
// sequence rule for its next tracked record, no missing_final (RULES.md,
// live taps).
func (j *Judge) Lost(conn string) {
	for _, st := range j.e.streams {
		if st.conn == conn && !st.ended && !st.cancelled && (st.seen || st.request) {
			st.resync, st.lost = true, true
		}
	}
}

// Frames judges a frame file (concatenated EventMesh frames) named name.
func (j *Judge) Frames(name string, data []byte) { j.fr.frames(name, data, &j.e.v) }

// End ends the input (end is the source of its findings) and returns the
// verdict.
func (j *Judge) End(end string) Verdict {
	j.e.end(end)
	j.fr.end(end, &j.e.v)
	return j.e.v
}

// JudgeLines judges JSON lines of one file under profile; end is the
// source of end-of-input findings.
func JudgeLines(profile, name string, lines [][]byte, end string) Verdict {
	j := NewJudge(profile)
	j.Lines(name, lines)
	return j.End(end)
}

// JudgeFrames judges one frame file; end is the source of end-of-input
// findings.
func JudgeFrames(name string, data []byte, end string) Verdict {
	j := NewJudge(Jiuwenswarm)
	j.Frames(name, data)
	return j.End(end)
}

func (j *e2aJudge) end(end string) {
	j.curSrc = end
	type open struct {
		key string
		st  *stream
	}
	var opens []open
	for _, st := range j.streams {
		if st.ended || st.cancelled || st.lost {
			continue
		}
		if !st.seen {
			if st.request {
				// A request with no response at all: is that a
				// stream that misses its final? Not settled.
				j.ambiguous("request " + strconv.Quote(st.key) + " never answered")
			}
			continue
		}
		opens = append(opens, open{st.key, st})
	}
	sort.Slice(opens, func(a, b int) bool { return opens[a].st.order < opens[b].st.order })
	for _, o := range opens {
		j.add("e2a.missing_final", o.key)
	}
}

func (j *e2aJudge) line(b []byte) {
	if !json.Valid(b) {
		j.add("e2a.decode", "")
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		j.add("e2a.decode", "")
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		j.add("e2a.decode", "")
		return
	}
	if t, _ := obj["type"].(string); t == "event" {
		return // connection.ack and friends: never a finding
	}
	if _, ok := obj["jsonrpc"]; ok {
		return // ACP/A2A JSON-RPC: the generator makes valid 2.0 messages only; no stream, no interrupt
	}
	if _, ok := obj["response_kind"]; ok {
		j.response(obj)
		return
	}
	if _, ok := obj["method"]; ok {
		j.request(obj)
		return
	}
	j.ambiguous("a record that is neither a request nor a response")
}

var responseRequired = []string{"protocol_version", "response_id", "request_id", "sequence", "is_final", "status", "response_kind", "timestamp", "provenance", "body"}

func (j *e2aJudge) response(obj map[string]any) {
	jiu := j.profile == Jiuwenswarm
	rid, ridOK := obj["request_id"].(string)
	key := rid
	if !ridOK {
		key = ""
	}
	kind, _ := obj["response_kind"].(string)
	status, _ := obj["status"].(string)
	body, _ := obj["body"].(map[string]any)
	meta, _ := obj["metadata"].(map[string]any)
	push := jiu && meta["_jiuwenswarm_server_push"] == true
	invalidJSONReply := jiu && kind == "e2a.error" && body["code"] == "E2A.INVALID_JSON" &&
		obj["response_id"] == "invalid-json" && obj["request_id"] == nil && obj["is_final"] == true
	for _, f := range responseRequired {
		if obj[f] == nil {
			if f == "request_id" && invalidJSONReply {
				continue
			}
			j.add("e2a.required", key)
			return // the record is not checked further (the generator makes no other fault on it)
		}
	}
	seq, seqOK := nonNegInt(obj["sequence"])
	final, finalOK := obj["is_final"].(bool)
	keepalive := jiu && isMinusOne(obj["sequence"]) && body["event_type"] == "keepalive"
	if keepalive {
		return
	}
	if !seqOK || !finalOK {
		j.add("e2a.type", key)
	}
	if !jiu {
		if id, ok := obj["response_id"].(string); ok {
			if j.respIDs[id] {
				j.add("e2a.response_id_dup", key)
			}
			j.respIDs[id] = true
		}
	}
	if status == "failed" && kind != "e2a.error" && kind != "acp.jsonrpc_error" {
		j.add("e2a.failed_kind", key)
	}
	if finalOK {
		if final && status == "in_progress" {
			j.add("e2a.final_status", key)
		}
		if jiu && !kindFinalOK(kind, final) {
			j.add("e2a.kind_final", key)
		}
	}
	if push || invalidJSONReply || !ridOK || !seqOK || !finalOK {
		return // outside stream tracking
	}
	st := j.get(rid)
	if st.cancelled {
		j.ambiguous("a response after its stream was cancelled")
		return
	}
	if !st.ended {
		st.inFlight = true
		if sess, _ := obj["session_id"].(string); st.session == "" && sess != "" {
			st.session = sess
		}
	}
	rule, amb := st.track(seq, final)
	if amb {
		j.ambiguous("a final that repeats or regresses the sequence")
	}
	switch rule {
	case "":
	case "after":
		j.add("e2a.after_final", rid)
	default:
		j.add("e2a."+rule, rid)
	}
}

// kindFinalOK is the jiuwenswarm table of (kind, is_final) pairs.
func kindFinalOK(kind string, final bool) bool {
	switch kind {
	case "e2a.chunk", "acp.output_request":
		return !final
	case "e2a.complete", "e2a.error", "cron", "plan.approval_required":
		return final
	}
	return true
}

func (j *e2aJudge) request(obj map[string]any) {
	rid, ok := obj["request_id"].(string)
	if !ok {
		j.ambiguous("a request without a string request_id")
		return
	}
	session, _ := obj["session_id"].(string)
	st := j.get(rid)
	if st.inFlight {
		j.add("e2a.request_dup", rid)
	} else if st.request || st.seen {
		j.ambiguous("a request_id used again")
	}
	st.request, st.inFlight, st.session = true, true, session
	method, _ := obj["method"].(string)
	if method != "chat.interrupt" || j.profile != Jiuwenswarm || session == "" {
		return
	}
	intent := "cancel"
	if p, ok := obj["params"].(map[string]any); ok {
		if s, ok := p["intent"].(string); ok {
			intent = s
		}
	}
	if intent != "cancel" && intent != "supplement" {
		return
	}
	for _, o := range j.streams {
		if o != st && o.inFlight && o.session == session {
			o.cancelled, o.inFlight = true, false
			j.v.Cancelled++
		}
	}
}

func nonNegInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	s := string(n)
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	x, err := strconv.ParseInt(s, 10, 64)
	return x, err == nil
}

func isMinusOne(v any) bool {
	n, ok := v.(json.Number)
	return ok && string(n) == "-1"
}

// frameJudge holds the chunk streams by sid.
type frameJudge struct {
	streams map[string]*stream
	order   []string
}

func (fj *frameJudge) end(end string, v *Verdict) {
	for _, sid := range fj.order {
		if !fj.streams[sid].ended {
			v.Findings = append(v.Findings, Finding{"frame.missing_done", sid, end})
		}
	}
}

func (fj *frameJudge) frames(name string, data []byte, v *Verdict) {
	streams := fj.streams
	for off := 0; off < len(data); {
		src := name + "@" + strconv.Itoa(off)
		add := func(rule, key string) { v.Findings = append(v.Findings, Finding{rule, key, src}) }
		f, n, err := parseFrame(data[off:])
		if err != nil {
			add("frame.decode", "")
			if off+n >= len(data) || n == 0 {
				break
			}
			v.Ambiguous = append(v.Ambiguous, src+": a bad frame before the end (where reading resumes)")
			break
		}
		off += n
		attr := func(name string) (string, bool) {
			for _, a := range f.attrs {
				if a[0] == name {
					return a[1], true
				}
			}
			return "", false
		}
		for _, a := range f.attrs {
			if !utf8.ValidString(a[0]) || !utf8.ValidString(a[1]) {
				v.Ambiguous = append(v.Ambiguous, src+": invalid UTF-8")
			}
		}
		// The stream key of the record-level findings: the sid of a
		// stream frame, the id of an event.
		key, _ := attr("sid")
		if f.typ == 3 {
			key, _ = attr("id")
		}
		if f.flags&^7 != 0 {
			add("frame.flags", key)
		}
		switch f.typ {
		case 1: // STREAM_REQ: its sid opens no stream of chunks
			sid, _ := attr("sid")
			_, okS := attr("sid")
			_, okR := attr("replyTo")
			if !okS || !okR {
				add("frame.attr", sid)
			}
		case 2:
			sid, ok := attr("sid")
			if !ok {
				add("frame.attr", "")
			}
			_, hasErr := attr("err")
			if hasErr != (f.flags&2 != 0) {
				add("frame.error_flag", sid)
			}
			if et, ok := attr("etype"); ok && et != "text" && et != "thought" && et != "tool" && et != "structured" {
				add("frame.etype", sid)
			}
			meta, hasMeta := attr("meta")
			var m map[string]any
			if hasMeta != (f.flags&4 != 0) || hasMeta && json.Unmarshal([]byte(meta), &m) != nil {
				add("frame.meta_flag", sid)
			}
			if !ok {
				continue // checked, but no stream
			}
			st := streams[sid]
			if st == nil {
				st = &stream{}
				streams[sid] = st
				fj.order = append(fj.order, sid)
			}
			rule, amb := st.track(int64(f.seq), f.flags&1 != 0)
			if f.seq < 0 {
				v.Ambiguous = append(v.Ambiguous, src+": a negative chunk seq")
			}
			if amb {
				v.Ambiguous = append(v.Ambiguous, src+": a done chunk that repeats or regresses the seq")
			}
			switch rule {
			case "":
			case "after":
				add("frame.after_done", sid)
			default:
				add("frame."+rule, sid)
			}
		case 3:
			id, _ := attr("id")
			_, okI := attr("id")
			_, okT := attr("type")
			_, okS := attr("source")
			if !okI || !okT || !okS {
				add("frame.attr", id)
			}
		default:
			add("frame.type", "")
		}
	}
}

type mframe struct {
	typ, flags uint8
	seq        int32
	attrs      [][2]string
	data       []byte
}

// parseFrame reads one frame: the 14-byte big-endian header, the
// attributes, the data. It returns the frame's length.
func parseFrame(b []byte) (mframe, int, error) {
	var f mframe
	if len(b) < 14 || b[0] != 0xEF || b[1] != 1 {
		return f, len(b), fmt.Errorf("bad header")
	}
	f.typ, f.flags = b[2], b[3]
	f.seq = int32(binary.BigEndian.Uint32(b[4:]))
	keys := int(binary.BigEndian.Uint16(b[8:]))
	dataLen := int(int32(binary.BigEndian.Uint32(b[10:])))
	if keys > 64 || dataLen < 0 {
		return f, len(b), fmt.Errorf("bad counts")
	}
	p := 14
	for i := 0; i < keys; i++ {
		if len(b)-p < 2 {
			return f, len(b), fmt.Errorf("truncated")
		}
		nl := int(binary.BigEndian.Uint16(b[p:]))
		p += 2
		if len(b)-p < nl+4 {
			return f, len(b), fmt.Errorf("truncated")
		}
		name := string(b[p : p+nl])
		p += nl
		vl := int(int32(binary.BigEndian.Uint32(b[p:])))
		p += 4
		if vl < 0 || len(b)-p < vl {
			return f, len(b), fmt.Errorf("truncated")
		}
		f.attrs = append(f.attrs, [2]string{name, string(b[p : p+vl])})
		p += vl
	}
	if len(b)-p < dataLen {
		return f, len(b), fmt.Errorf("truncated")
	}
	f.data = b[p : p+dataLen]
	return f, p + dataLen, nil
}
