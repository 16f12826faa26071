package validate

import (
	"errors"
	"fmt"
	"hash/maphash"
	"math"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
)

// scanJSON is the record scanner: the hand-written fast path, fuzzed
// against e2a.ScanStd (encoding/json) so that the two fill the same Record.
var scanJSON = e2a.Scan

const (
	protoE2A   = 'e'
	protoFrame = 'f'
)

// ObserveJSON checks one JSON message.
func (e *Engine) ObserveJSON(in *Input) {
	if len(in.Data) > e.cfg.MaxRecordBytes {
		e.DecodeError(in, ProtoE2A, fmt.Sprintf("record of %d bytes is over the %d-byte limit", len(in.Data), e.cfg.MaxRecordBytes))
		return
	}
	r := &e.rec
	if err := scanJSON(in.Data, r); err != nil {
		e.DecodeError(in, ProtoE2A, scanErrorText(err))
		return
	}
	e.judgeJSON(in, r)
}

// scanErrorText is the e2a.decode message of a record Scan rejects.
func scanErrorText(err error) string {
	if errors.Is(err, e2a.ErrNotObject) {
		return "valid JSON but not an object"
	}
	return "invalid JSON: " + err.Error()
}

// judgeJSON is ObserveJSON past the scan: every rule on r, which Scan
// filled from in.Data (the judgement; a split walk scans on one core and
// judges on another: splitwalk.go).
func (e *Engine) judgeJSON(in *Input, r *e2a.Record) {
	if TestingPanicOn != nil {
		testingPanic(in)
	}
	e.stats.Records++
	// Scan has already looked for what e2a.secret would find (rules below
	// may scan into r again, so it is read now).
	maySecret := r.MayHoldSecret()
	class := e2a.Classify(r)
	info := &e.info
	info.reset(in, ProtoE2A, class, r)
	info.SecretFree = !maySecret
	if in.FromLog && in.Logged == nil && class == e2a.ClassResponse && e.on(RuleE2ASecret) {
		info.SplitSecret = e.splitSecret(in, r)
	}
	switch class {
	case e2a.ClassResponse:
		e.response(in, r, info)
	case e2a.ClassRequest:
		e.request(in, r, info)
	case e2a.ClassJSONRPC:
		info.Kind = "jsonrpc"
		e.sink.Record(info)
		e.jsonrpc(in, r)
	case e2a.ClassEvent:
		info.Kind = "event"
		e.sink.Record(info)
	case e2a.ClassCloudEvent:
		if e.legacyStream(in, r) {
			break
		}
		info.Kind = "cloudevent"
		info.Protocol = ProtoEventMesh
		e.sink.Record(info)
		e.cloudEvent(in, r)
	case e2a.ClassLegacyResponse:
		info.Kind = "legacy_response"
		e.sink.Record(info)
		if rid := r.Get(e2a.FRequestID); e.on(RuleE2ALegacy) {
			e.report(RuleE2ALegacy, Off, in, strOrNil(rid), ProtoE2A, "deprecated legacy AgentResponse shape (request_id, channel_id and ok or is_complete)")
		}
	default:
		info.Kind = "unknown"
		e.sink.Record(info)
	}
	if in.FromLog && e.on(RuleE2ASecret) {
		var path, kind string
		var found bool
		if maySecret || in.Logged != nil {
			path, kind, found = in.Secret()
		}
		split := in.Logged != nil && in.Logged.SecretSplit
		if !found && info.SplitSecret != "" {
			path, kind, found, split = splitPath, info.SplitSecret, true, true
		}
		if found {
			msg := fmt.Sprintf("credential (%s) in a logged record at %s", kind, path)
			if split {
				msg += ", split across chunks of its stream, up to this one"
			}
			e.report(RuleE2ASecret, Off, in, e.recordStream(r, class), ProtoE2A, msg)
		}
	}
}

// reset makes ri the info of a new record: in, proto, class and r, the
// rest zero. Field by field, not a composite literal: the literal was
// built on the stack in 8-byte stores and copied into ri in 16-byte loads,
// which the stores could not forward (a stall at every JSON record, 0.8 %
// of validate's CPU). TestRecordInfoReset holds it to the literal.
func (ri *RecordInfo) reset(in *Input, proto string, class e2a.Class, r *e2a.Record) {
	ri.In, ri.Protocol, ri.Class, ri.JSON = in, proto, class, r
	ri.Kind, ri.Status, ri.SplitSecret = "", "", ""
	ri.Frame, ri.Stream = nil, nil
	ri.Heartbeat, ri.ServerPush, ri.SecretFree = false, false, false
}

func strOrNil(v *e2a.Value) []byte {
	if v.Type == e2a.String {
		return v.Str
	}
	return nil
}

func (e *Engine) recordStream(r *e2a.Record, class e2a.Class) []byte {
	switch class {
	case e2a.ClassResponse, e2a.ClassRequest, e2a.ClassLegacyResponse:
		return strOrNil(r.Get(e2a.FRequestID))
	case e2a.ClassCloudEvent:
		return strOrNil(r.Get(e2a.FID))
	}
	return nil
}

var responseRequired = [...]e2a.Field{
	e2a.FProtocolVersion, e2a.FResponseID, e2a.FRequestID, e2a.FSequence, e2a.FIsFinal,
	e2a.FStatus, e2a.FResponseKind, e2a.FTimestamp, e2a.FProvenance, e2a.FBody,
}

// missing names the required fields of a response that are absent or
// null (request_id not, when noStream).
func (e *Engine) missing(f *[e2a.NumFields]e2a.Value, noStream bool) []string {
	var missing []string
	for _, fl := range responseRequired {
		if !f[fl].Present() && !(noStream && fl == e2a.FRequestID) {
			missing = append(missing, e2a.FieldKeys[fl])
		}
	}
	return missing
}

// absent is the JSON types that are no value, a bit each (tb).
const absent = 1<<e2a.Absent | 1<<e2a.Null

// tb is the bit of field fl's JSON type: or-ed together, the set of the
// types of some fields.
func tb(f *[e2a.NumFields]e2a.Value, fl e2a.Field) uint32 { return 1 << f[fl].Type }

func statusLabel(v *e2a.Value) string {
	if v.Type != e2a.String {
		return ""
	}
	switch string(v.Str) {
	case "succeeded":
		return "succeeded"
	case "failed":
		return "failed"
	case "in_progress":
		return "in_progress"
	}
	return "other"
}

// kindLabel returns the response kind as a bounded label ("" when unknown).
func kindLabel(s []byte) string {
	switch string(s) {
	case "e2a.complete":
		return "e2a.complete"
	case "e2a.chunk":
		return "e2a.chunk"
	case "e2a.error":
		return "e2a.error"
	case "acp.session_update":
		return "acp.session_update"
	case "acp.prompt_result":
		return "acp.prompt_result"
	case "acp.jsonrpc_error":
		return "acp.jsonrpc_error"
	case "acp.output_request":
		return "acp.output_request"
	case "a2a.task":
		return "a2a.task"
	case "a2a.message":
		return "a2a.message"
	case "a2a.stream_event":
		return "a2a.stream_event"
	case "cron":
		return "cron"
	case "plan.approval_required":
		return "plan.approval_required"
	case "ext":
		return "ext"
	}
	return ""
}

// response checks one E2AResponse record.
func (e *Engine) response(in *Input, r *e2a.Record, info *RecordInfo) {
	f := &r.Fields
	rid := &f[e2a.FRequestID]
	var stream []byte
	if rid.Type == e2a.String && len(rid.Str) > 0 {
		stream = rid.Str
	}
	info.Stream = stream
	kv := &f[e2a.FResponseKind]
	kind := ""
	if kv.Type == e2a.String {
		kind = kindLabel(kv.Str)
	}
	info.Kind = kind
	if info.Kind == "" {
		info.Kind = "other"
	}
	info.Status = statusLabel(&f[e2a.FStatus])
	final := f[e2a.FIsFinal].Type == e2a.Bool && f[e2a.FIsFinal].Bool
	seq, seqOK := r.Sequence()
	pushed := e.prof.ServerPush && r.Sub(e2a.SMetaServerPush).Type == e2a.Bool && r.Sub(e2a.SMetaServerPush).Bool
	heartbeat := e.prof.Keepalive && seqOK && seq == -1 && r.Sub(e2a.SBodyEventType).Is("keepalive")
	info.Heartbeat, info.ServerPush = heartbeat, pushed
	e.sink.Record(info)

	// e2a.required: every missing or null field, once.
	noStream := e.prof.InvalidJSONReply && isInvalidJSONReply(r, kind, final, seq, seqOK)
	var missing []string
	// Most records have every field (the types seen, a bit each, say so):
	// the loop that names what is missing runs when one is not.
	if (tb(f, e2a.FProtocolVersion)|tb(f, e2a.FResponseID)|tb(f, e2a.FRequestID)|tb(f, e2a.FSequence)|tb(f, e2a.FIsFinal)|
		tb(f, e2a.FStatus)|tb(f, e2a.FResponseKind)|tb(f, e2a.FTimestamp)|tb(f, e2a.FProvenance)|tb(f, e2a.FBody))&absent != 0 {
		missing = e.missing(f, noStream)
	}
	if len(missing) > 0 && e.on(RuleE2ARequired) {
		e.report(RuleE2ARequired, Off, in, stream, ProtoE2A, "missing or null: "+list(missing))
	}

	// e2a.type: present fields of the wrong JSON type.
	var bad []string
	seqTracked := true
	if sv := &f[e2a.FSequence]; sv.Present() {
		if !(seqOK && seq >= 0) && !heartbeat {
			bad = append(bad, seqTypeMessage(sv))
		}
	}
	if !seqOK || seq < 0 {
		seqTracked = false
	}
	if v := &f[e2a.FIsFinal]; v.Present() && v.Type != e2a.Bool {
		bad = append(bad, "is_final is not a boolean")
	}
	if v := &f[e2a.FIsFinal]; v.Type != e2a.Bool {
		seqTracked = false
	}
	if v := &f[e2a.FIsStream]; v.Present() && v.Type != e2a.Bool {
		bad = append(bad, "is_stream is not a boolean")
	}
	if (tb(f, e2a.FBody)|tb(f, e2a.FProvenance)|tb(f, e2a.FMetadata)|tb(f, e2a.FProjections)|tb(f, e2a.FChannelContext))&^(absent|1<<e2a.Object) != 0 {
		for _, fl := range [...]e2a.Field{e2a.FBody, e2a.FProvenance, e2a.FMetadata, e2a.FProjections, e2a.FChannelContext} {
			if v := &f[fl]; v.Present() && v.Type != e2a.Object {
				bad = append(bad, e2a.FieldKeys[fl]+" is not an object")
			}
		}
	}
	if (tb(f, e2a.FResponseID)|tb(f, e2a.FRequestID)|tb(f, e2a.FSessionID))&^(absent|1<<e2a.String) != 0 {
		for _, fl := range [...]e2a.Field{e2a.FResponseID, e2a.FRequestID, e2a.FSessionID} {
			if v := &f[fl]; v.Present() && v.Type != e2a.String {
				bad = append(bad, e2a.FieldKeys[fl]+" is not a string")
			}
		}
	}
	if v := &f[e2a.FJSONRPCID]; v.Present() && v.Type != e2a.String && v.Type != e2a.Number {
		bad = append(bad, "jsonrpc_id is not a string, number or null")
	}
	if len(bad) > 0 && e.on(RuleE2AType) {
		e.report(RuleE2AType, Off, in, stream, ProtoE2A, list(bad))
	}

	if v := &f[e2a.FProtocolVersion]; v.Present() && !isVersion1(v) && e.on(RuleE2AVersion) {
		e.report(RuleE2AVersion, Off, in, stream, ProtoE2A, "protocol_version "+quoteValue(v)+" is not 1.x")
	}
	sv := &f[e2a.FStatus]
	if sv.Present() && info.Status != "succeeded" && info.Status != "failed" && info.Status != "in_progress" && e.on(RuleE2AStatus) {
		e.report(RuleE2AStatus, Off, in, stream, ProtoE2A, "status "+quoteValue(sv)+" is not succeeded, failed or in_progress")
	}
	if kv.Present() && kind == "" && e.on(RuleE2AKind) {
		e.report(RuleE2AKind, Off, in, stream, ProtoE2A, "response_kind "+quoteValue(kv)+" is not one of the 13 kinds")
	}
	if tv := &f[e2a.FTimestamp]; tv.Present() {
		valid, utc := false, false
		if tv.Type == e2a.String {
			valid, utc = e.ts.parse(tv.Str)
		}
		if !valid {
			if e.on(RuleE2ATimestamp) {
				e.report(RuleE2ATimestamp, Off, in, stream, ProtoE2A, "timestamp "+quoteTimestamp(tv)+" is not an RFC 3339 date-time")
			}
		} else if !utc && e.on(RuleE2ATimestampUTC) {
			e.report(RuleE2ATimestampUTC, Off, in, stream, ProtoE2A, "timestamp "+quoteTimestamp(tv)+" is not in UTC")
		}
	}
	if kind != "" && f[e2a.FBody].Type == e2a.Object && e.on(RuleE2ABody) {
		e.body(in, r, kind, stream)
	}
	if info.Status == "failed" && kind != "" && kind != "e2a.error" && kind != "acp.jsonrpc_error" && e.on(RuleE2AFailedKind) {
		e.report(RuleE2AFailedKind, Off, in, stream, ProtoE2A, "status failed with response_kind "+kind+" (want e2a.error or acp.jsonrpc_error)")
	}
	if final && info.Status == "in_progress" && e.on(RuleE2AFinalStatus) {
		e.report(RuleE2AFinalStatus, Off, in, stream, ProtoE2A, "is_final true with status in_progress")
	}
	if kind != "" && f[e2a.FIsFinal].Type == e2a.Bool && e.on(RuleE2AKindFinal) {
		if want, constrained := kindFinal(kind); constrained && want != final {
			e.report(RuleE2AKindFinal, Off, in, stream, ProtoE2A, fmt.Sprintf("response_kind %s with is_final %t (the reference Gateway only accepts is_final %t)", kind, final, want))
		}
	}
	if e.respIDs != nil && !pushed {
		if v := &f[e2a.FResponseID]; v.Type == e2a.String && len(v.Str) > 0 {
			set := e.respIDs
			if e.shared != nil {
				set = e.shared
			}
			if set.seen(maphash.Bytes(e.idSeed, v.Str)) {
				e.report(RuleE2AResponseIDDup, Off, in, stream, ProtoE2A, "response_id "+maskedLen(len(v.Str))+" seen before")
			}
		}
	}

	if pushed || stream == nil {
		return
	}
	if heartbeat {
		if i, _, _ := e.e2aStream(in, stream, false, false); i >= 0 {
			s := e.tab.at(i)
			s.addHeartbeat()
			e.touch(i, in)
		}
		return
	}
	if !seqTracked {
		return
	}
	i, created, was := e.e2aStream(in, stream, true, false)
	if was == ended || was == idled {
		if e.on(RuleE2AAfterFinal) {
			what := "after the stream's final record"
			if was == idled {
				// The contract's rule all the same (RULES.md: a record
				// after the stream's end takes no sequence rule), told as
				// it happened: there was no final.
				what = "after the stream was ended by the idle timeout with no final record"
			}
			e.report(RuleE2AAfterFinal, Off, in, stream, ProtoE2A, fmt.Sprintf("sequence %d %s", seq, what))
		}
		return
	}
	if was == cancelled || was == untracked {
		return // the reference drops late frames of a cancelled request
	}
	s := e.tab.at(i)
	if created && in.Joined {
		s.flags |= fJoined
	}
	e.touch(i, in)
	s.flags |= fResponded
	s.records++
	e.startIfNeeded(i, in, ProtoE2A)
	s = e.tab.at(i)
	if kind == "e2a.chunk" && s.chunkUs == 0 && s.startNs() != 0 && !in.Time.IsZero() {
		d := in.Time.UnixNano() - s.startNs()
		if d < 0 {
			d = 0
		}
		s.chunkUs = uint32(min(d/1000, 1<<32-2)) + 1
	}
	e.echo(in, r, s, stream)
	e.sequence(in, s, seq, stream, RuleE2ASeqStart, ProtoE2A)
	if final {
		o := OutcomeSucceeded
		if info.Status != "succeeded" {
			o = OutcomeFailed
		}
		e.end(i, o, ReasonFinal, in, false)
	}
}

// isInvalidJSONReply says whether r is the reference AgentServer's reply
// to a message it could not parse (reference/e2a.md, "Errors"): every part
// of its fixed shape must be there, so that a real response that lost its
// request_id is still e2a.required.
func isInvalidJSONReply(r *e2a.Record, kind string, final bool, seq int64, seqOK bool) bool {
	return kind == "e2a.error" && final && seqOK && seq == 0 &&
		r.Fields[e2a.FRequestID].Type == e2a.Null &&
		r.Fields[e2a.FResponseID].Is("invalid-json") &&
		r.Sub(e2a.SBodyCode).Is(e2a.CodeInvalidJSON)
}

// sequence applies RULES.md's sequence semantics. rule0 is the seq_start
// rule of the protocol; gap, dup and regress follow it in the catalogue.
func (e *Engine) sequence(in *Input, s *stream, seq int64, key []byte, rule0 Rule, proto string) {
	start, gap, dup, regress := rule0, rule0+1, rule0+2, rule0+3
	t := e.tab
	if s.flags&fSeq == 0 {
		s.flags |= fSeq
		t.setLastSeq(s, seq)
		if seq > 0 {
			if s.flags&(fJoined|fResync) != 0 {
				if s.flags&fJoined != 0 {
					e.stats.Joined++
				}
				s.flags &^= fResync
				return
			}
			e.report(start, Off, in, key, proto, fmt.Sprintf("stream starts at sequence %d, not 0", seq))
			s.addError()
		} else if s.flags&(fGap|fRequest) != fGap {
			// Seen from its start: nothing of it was lost (lookup's
			// forgotten evictions), or its request is in this table and
			// a loss came before any of its tracked records (Gap): the
			// loss is behind this, its next record (RULES.md); from
			// here on its sequence is judged.
			s.flags &^= fResync
		}
		return
	}
	if s.flags&fResync != 0 {
		s.flags &^= fResync
		if seq > t.lastSeq(s) {
			t.setLastSeq(s, seq)
		}
		return
	}
	// Compared with last, not last+1: a last of MaxInt64 has no next.
	last := t.lastSeq(s)
	switch {
	case seq == last:
		e.report(dup, Off, in, key, proto, fmt.Sprintf("sequence %d repeated", seq))
		s.addError()
	case seq < last:
		e.report(regress, Off, in, key, proto, fmt.Sprintf("sequence %d after %d: goes back", seq, last))
		s.addError()
	case seq-last == 1:
		t.setLastSeq(s, seq)
	default:
		e.report(gap, Off, in, key, proto, fmt.Sprintf("sequence %d after %d: %d missing", seq, last, seq-last-1))
		s.addError()
		t.setLastSeq(s, seq)
	}
}

// echo compares session_id, method and jsonrpc_id with what the stream
// (its request or earlier records) carried; null or absent is no value.
func (e *Engine) echo(in *Input, r *e2a.Record, s *stream, key []byte) {
	var diff []string
	if h := e.echoHash(r.Get(e2a.FSessionID)); h != 0 {
		if s.sess == 0 {
			e.tab.setSess(s, h)
		} else if s.sess != h {
			diff = append(diff, "session_id")
		}
	}
	for _, c := range [...]struct {
		slot *uint16
		f    e2a.Field
	}{{&s.method, e2a.FMethod}, {&s.rpc, e2a.FJSONRPCID}} {
		if h := echo16(e.echoHash(r.Get(c.f))); h != 0 {
			if *c.slot == 0 {
				*c.slot = h
			} else if *c.slot != h {
				diff = append(diff, e2a.FieldKeys[c.f])
			}
		}
	}
	if len(diff) > 0 && e.on(RuleE2AEchoMismatch) {
		e.report(RuleE2AEchoMismatch, Off, in, key, ProtoE2A, list(diff)+" differ from earlier records of the stream or its request")
	}
}

// kindFinal gives the is_final the reference Gateway accepts for a kind.
func kindFinal(kind string) (final, constrained bool) {
	switch kind {
	case "e2a.chunk", "acp.output_request":
		return false, true
	case "e2a.complete", "e2a.error", "cron", "plan.approval_required":
		return true, true
	}
	return false, false
}

func (e *Engine) body(in *Input, r *e2a.Record, kind string, stream []byte) {
	var problem string
	sev := Off
	switch kind {
	case "e2a.chunk":
		dk := r.Sub(e2a.SBodyDeltaKind)
		switch {
		case !dk.Present():
			problem = "e2a.chunk body has no delta_kind"
		case !(dk.Is("text") || dk.Is("reasoning") || dk.Is("tool") || dk.Is("custom")):
			problem = "e2a.chunk delta_kind " + quoteValue(dk) + " is not text, reasoning, tool or custom"
		case !r.Sub(e2a.SBodyDelta).Present():
			problem = "e2a.chunk body has no delta"
		}
	case "e2a.complete":
		if !r.Sub(e2a.SBodyResult).Present() {
			problem = "e2a.complete body has no result"
		}
	case "e2a.error":
		var miss []string
		if !r.Sub(e2a.SBodyCode).Present() {
			miss = append(miss, "code")
		}
		if !r.Sub(e2a.SBodyMessage).Present() {
			miss = append(miss, "message")
		}
		if len(miss) > 0 {
			problem = "e2a.error body has no " + list(miss)
		}
	case "a2a.stream_event":
		b := r.Sub(e2a.SBodyBranch)
		switch {
		case !(b.Is("task") || b.Is("message") || b.Is("status_update") || b.Is("artifact_update")):
			problem = "a2a.stream_event branch " + quoteValue(b) + " is not task, message, status_update or artifact_update"
		case r.Sub(e2a.SBodyPayload).Type != e2a.Object:
			problem = "a2a.stream_event payload is not an object"
		}
	case "acp.session_update":
		su := r.Sub(e2a.SBodySessionUpdate)
		switch {
		case su.Type != e2a.String:
			problem = "acp.session_update body has no string sessionUpdate"
		case !isSessionUpdateKind(su.Str):
			problem = "acp.session_update variant " + quoteValue(su) + " is not a known session update"
			sev = Warning
		}
	case "ext":
		if !r.Sub(e2a.SBodyExtMethod).Present() {
			problem = "ext body has no ext_method"
		}
	}
	if problem != "" {
		e.report(RuleE2ABody, sev, in, stream, ProtoE2A, problem)
	}
}

func isSessionUpdateKind(b []byte) bool {
	switch string(b) {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update",
		"todo_update", "plan", "available_commands_update", "current_mode_update", "config_option_update",
		"session_info_update", "usage_update":
		return true
	}
	return false
}

func isVersion1(v *e2a.Value) bool {
	if v.Type != e2a.String || len(v.Str) < 3 || v.Str[0] != '1' || v.Str[1] != '.' {
		return false
	}
	for _, c := range v.Str[2:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// quoteValue prints a value for a message (quote.go): strings only when
// they are words of the protocol's vocabulary, else masked with their
// length; numbers up to 6 characters (a version, a code), longer ones
// masked; other types by name.
func quoteValue(v *e2a.Value) string {
	switch v.Type {
	case e2a.String:
		return quoteString(v.Str)
	case e2a.Number:
		if len(v.Str) > 6 {
			return maskedLen(len(v.Str))
		}
		return string(v.Str)
	case e2a.Bool:
		return fmt.Sprint(v.Bool)
	}
	return v.Type.String()
}

// request checks one E2AEnvelope.
func (e *Engine) request(in *Input, r *e2a.Record, info *RecordInfo) {
	f := &r.Fields
	rid := &f[e2a.FRequestID]
	var skey []byte
	if rid.Type == e2a.String && len(rid.Str) > 0 {
		skey = rid.Str
	}
	info.Kind, info.Stream = "request", skey
	e.sink.Record(info)

	var problems []string
	if v := &f[e2a.FParams]; v.Present() && v.Type != e2a.Object {
		problems = append(problems, "params is not an object")
	}
	if f[e2a.FMethod].Is("ext") {
		if em := &f[e2a.FExtMethod]; em.Type != e2a.String || len(em.Str) == 0 {
			problems = append(problems, `method "ext" without ext_method`)
		}
	}
	if r.FileWithoutURI {
		problems = append(problems, "a files/attachments entry without uri")
	}
	if io := &f[e2a.FIdentityOrigin]; io.Present() && !(io.Is("system") || io.Is("user") || io.Is("agent") || io.Is("service")) {
		problems = append(problems, "identity_origin "+quoteValue(io)+" is not system, user, agent or service")
	}
	ts := &f[e2a.FTimestamp]
	switch ts.Type {
	case e2a.String:
		if ok, _ := e.ts.parse(ts.Str); !ok {
			problems = append(problems, "timestamp "+quoteTimestamp(ts)+" is not an RFC 3339 date-time")
		}
	case e2a.Bool, e2a.Object, e2a.Array:
		problems = append(problems, "timestamp is a "+ts.Type.String())
	}
	if len(problems) > 0 && e.on(RuleE2AEnvelope) {
		e.report(RuleE2AEnvelope, Off, in, skey, ProtoE2A, list(problems))
	}
	var legacy []string
	for _, fl := range [...]e2a.Field{e2a.FChannelID, e2a.FReqMethod, e2a.FMetadata, e2a.FBinding, e2a.FPayload} {
		if f[fl].Type != e2a.Absent {
			legacy = append(legacy, e2a.FieldKeys[fl])
		}
	}
	if ts.Type == e2a.Number {
		legacy = append(legacy, "epoch-number timestamp")
	}
	if len(legacy) > 0 && e.on(RuleE2ALegacy) {
		e.report(RuleE2ALegacy, Off, in, skey, ProtoE2A, "legacy keys in use: "+list(legacy))
	}

	if e.prof.Interrupt && f[e2a.FMethod].Is("chat.interrupt") {
		intent := r.Sub(e2a.SParamsIntent)
		if !intent.Present() || intent.Is("cancel") || intent.Is("supplement") {
			if sess := &f[e2a.FSessionID]; sess.Type == e2a.String && len(sess.Str) > 0 {
				e.cancelSession(in, e.echoHash(sess))
			}
		}
	}
	if skey == nil {
		return
	}
	// A new request may reuse a finished request_id: it starts afresh.
	i, created, was := e.e2aStream(in, skey, true, true)
	if was == untracked {
		return
	}
	s := e.tab.at(i)
	if !created && s.flags&fRequest != 0 && e.on(RuleE2ARequestDup) {
		e.report(RuleE2ARequestDup, Off, in, skey, ProtoE2A, "request_id already in flight")
		return
	}
	s.flags |= fRequest
	e.touch(i, in)
	e.tab.setSess(s, e.echoHash(&f[e2a.FSessionID]))
	s.method = echo16(e.echoHash(&f[e2a.FMethod]))
	s.rpc = echo16(e.echoHash(&f[e2a.FJSONRPCID]))
}

// cancelFrom applies only the cancellation of a chat.interrupt request
// (a sharded run sends it to the shards that do not own the request).
func (e *Engine) cancelFrom(in *Input) {
	r := &e.rec
	if !e.prof.Interrupt || scanJSON(in.Data, r) != nil {
		return
	}
	e.cancelScanned(in, r)
}

// cancelScanned is cancelFrom on a record already scanned. It cancels
// exactly where the owner's request rule does: a request (Classify) whose
// method is chat.interrupt (a JSON-RPC message or an event that names that
// method cancels nothing on one shard, so on no shard).
func (e *Engine) cancelScanned(in *Input, r *e2a.Record) {
	if !e.prof.Interrupt || !r.Get(e2a.FMethod).Is("chat.interrupt") || e2a.Classify(r) != e2a.ClassRequest {
		return
	}
	intent := r.Sub(e2a.SParamsIntent)
	if !intent.Present() || intent.Is("cancel") || intent.Is("supplement") {
		if sess := r.Get(e2a.FSessionID); sess.Type == e2a.String && len(sess.Str) > 0 {
			e.cancelSession(in, e.echoHash(sess))
		}
	}
}

// cancelSession ends the in-flight E2A streams of one session on the same
// tap (chat.interrupt): outcome cancelled, no missing_final. Only the
// partitions whose session filter (table.sessF) may hold the session are
// walked.
func (e *Engine) cancelSession(in *Input, sess uint32) {
	if sess == 0 {
		return
	}
	tap := string(appendScopeName(nil, in.Tap))
	// The ended streams leave the tables first, as in forConn: whether
	// they are still there (their removal waits for this engine's next
	// lookup) would otherwise depend on which records of other partitions
	// this engine judged since, that is on the number of shards, and the
	// order in which this walk ends (and later removes) streams with it.
	// No caller holds a table index here.
	e.forgetPending()
	e.eachPart(func(int) {
		if !e.tab.maySess(sess) {
			return // no stream of the session here
		}
		e.cancelWalks++
		for i := int32(0); i < int32(e.tab.len()); i++ {
			s := e.tab.at(i)
			if s.sess != sess || s.flags&(fEnded|fFrame) != 0 {
				continue
			}
			if string(tapOf(e.tab.key(i))) != tap {
				continue
			}
			s.setEnded(cancelled)
			e.end(i, OutcomeCancelled, ReasonCancelled, in, false)
		}
	})
}

// jsonrpc checks a JSON-RPC 2.0 message (ACP/A2A).
func (e *Engine) jsonrpc(in *Input, r *e2a.Record) {
	if !e.on(RuleJSONRPCInvalid) {
		return
	}
	f := &r.Fields
	var problems []string
	if !f[e2a.FJSONRPC].Is("2.0") {
		problems = append(problems, "jsonrpc is "+quoteValue(&f[e2a.FJSONRPC])+", not \"2.0\"")
	}
	id := &f[e2a.FID]
	if id.Type != e2a.Absent && id.Type != e2a.Null && id.Type != e2a.String && id.Type != e2a.Number {
		problems = append(problems, "id is a "+id.Type.String())
	}
	hasResult, hasError := f[e2a.FResult].Type != e2a.Absent, f[e2a.FError].Type != e2a.Absent
	if mv := &f[e2a.FMethod]; mv.Type != e2a.Absent {
		if mv.Type != e2a.String {
			problems = append(problems, "method is not a string")
		}
		if hasResult || hasError {
			problems = append(problems, "a request with result or error")
		}
		if pv := &f[e2a.FParams]; pv.Type != e2a.Absent && pv.Type != e2a.Object && pv.Type != e2a.Array {
			problems = append(problems, "params is neither an object nor an array")
		}
	} else {
		switch {
		case hasResult && hasError:
			problems = append(problems, "a response with both result and error")
		case !hasResult && !hasError:
			problems = append(problems, "a response with neither result nor error")
		case hasError:
			if f[e2a.FError].Type != e2a.Object {
				problems = append(problems, "error is not an object")
			} else {
				if c := r.Sub(e2a.SErrorCode); c.Type != e2a.Number {
					problems = append(problems, "error.code is not a number")
				} else if _, ok := e2a.ParseInt(c.Str); !ok {
					problems = append(problems, "error.code is not an integer")
				}
				if r.Sub(e2a.SErrorMessage).Type != e2a.String {
					problems = append(problems, "error.message is not a string")
				}
			}
		}
		if id.Type == e2a.Absent {
			problems = append(problems, "a response without id")
		}
	}
	if len(problems) > 0 {
		e.report(RuleJSONRPCInvalid, Off, in, nil, ProtoE2A, list(problems))
	}
}

// legacyStream judges a CloudEvent of EventMesh's old CE-JSON streaming
// codec (types stream.request and stream.chunk, extensions emsessionid,
// emseq, emdone, ...), which storage plugins still fall back to, as the
// STREAM_REQ or STREAM_CHUNK frame it stands for: sequence rules per
// emsessionid included. It reports whether it took the record.
func (e *Engine) legacyStream(in *Input, r *e2a.Record) bool {
	t := r.Get(e2a.FType)
	if !t.Is("stream.chunk") && !t.Is("stream.request") {
		return false
	}
	ce, err := frame.DecodeCloudEventJSON(in.Data)
	if err != nil {
		return false // judged as a plain CloudEvent: it names what is missing
	}
	buf, err := frame.FromLegacyStreamEvent(e.ceBuf[:0], &ce)
	if err != nil {
		e.stats.Records++
		e.info = RecordInfo{In: in, Protocol: ProtoEventMesh, Class: e2a.ClassCloudEvent, JSON: r, Kind: "cloudevent", Stream: strOrNil(r.Get(e2a.FID))}
		e.sink.Record(&e.info)
		if e.on(RuleFrameAttr) {
			e.report(RuleFrameAttr, Off, in, nil, ProtoEventMesh, "legacy CE-JSON stream event: "+legacyReason(err))
		}
		return true
	}
	e.ceBuf = buf
	f, _, err := frame.Decode(buf)
	if err != nil {
		return false
	}
	e.stats.Records-- // ObserveFrame counts it
	e.ObserveFrame(in, &f)
	return true
}

// cloudEvent checks a structured-mode CloudEvent as the EVENT frame it
// maps to: id, type and source are required (frame.attr).
func (e *Engine) cloudEvent(in *Input, r *e2a.Record) {
	if !e.on(RuleFrameAttr) {
		return
	}
	var miss []string
	for _, fl := range [...]e2a.Field{e2a.FID, e2a.FType, e2a.FSource} {
		if v := &r.Fields[fl]; v.Type != e2a.String || len(v.Str) == 0 {
			miss = append(miss, e2a.FieldKeys[fl])
		}
	}
	if len(miss) > 0 {
		e.report(RuleFrameAttr, Off, in, strOrNil(r.Get(e2a.FID)), ProtoEventMesh, "CloudEvent without "+list(miss))
	}
}

// echo16 folds an echo hash to 16 bits, never 0 for a value.
func echo16(h uint32) uint16 {
	if h == 0 {
		return 0
	}
	x := uint16(h ^ h>>16)
	if x == 0 {
		x = 1
	}
	return x
}

// legacyReason names what is wrong with a legacy CE-JSON stream event
// without the value that is wrong (CloudEventError's reason quotes it).
func legacyReason(err error) string {
	var ce *frame.CloudEventError
	if errors.As(err, &ce) && ce.Attr != "" {
		return ce.Attr + " is not valid"
	}
	return err.Error()
}

// seqTypeMessage says what is wrong with a sequence that takes no part in
// stream tracking: an integer past int64 (2^63 and up: the reference's
// Python takes any int) is one, not "not a non-negative integer".
func seqTypeMessage(v *e2a.Value) string {
	b := v.Str
	digits := v.Type == e2a.Number && len(b) > 0
	for _, c := range b {
		digits = digits && '0' <= c && c <= '9'
	}
	if !digits {
		return "sequence is not a non-negative integer"
	}
	if len(b) > 40 {
		return fmt.Sprintf("sequence %s… (%d digits) is past %d, the largest e2atap tracks", b[:20], len(b), int64(math.MaxInt64))
	}
	return fmt.Sprintf("sequence %s is past %d, the largest e2atap tracks", b, int64(math.MaxInt64))
}
