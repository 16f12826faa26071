package validate

import (
	"encoding/json"
	"fmt"

	"github.com/e2atap/e2atap/frame"
)

var frameKinds = [...]string{"unknown", "stream_req", "stream_chunk", "event"}

// The attributes the frame rules read, in one pass (frame.Find).
var (
	frameAttrNames = []string{"sid", "id", "replyTo", "type", "source", "err", "meta", "etype"}
	frameAttrSet   = frame.NewAttrNames(frameAttrNames...)
)

const (
	faSid = 1 << iota
	faID
	faReplyTo
	faType
	faSource
	faErr
	faMeta
	faEtype
)

// ObserveFrame checks one decoded EventMeshFrame.
func (e *Engine) ObserveFrame(in *Input, f *frame.Frame) {
	var en *fcAttrs
	var hit bool
	if f.MsgType == frame.TypeStreamChunk {
		if en, hit = e.frameEntry(f); hit && en.plain && f.Flags&frame.FlagReserved == 0 {
			if !e.nextChunk(in, f, en) {
				e.observeChunk(in, f, en)
			}
			return
		}
	}
	e.observeFrame(in, f, en, hit)
}

// nextChunk is observeChunk for most chunks of a frame file: read offline
// (no capture time), no record log, flags that agree with the cached
// attributes, of a stream the cache names (sectionStream), started, whose
// seq is the next one, not done. It reports false, having changed nothing
// (sectionStream's making the stream's partition current, and its use of
// the cache entry, are what observeChunk does first), for any other
// chunk. Its checks take the place of observeChunk's and chunkStream's
// calls and what they keep aside across them (1 M chunks of 200 bytes,
// one shard: 788 -> 712 instructions a chunk, whole process).
func (e *Engine) nextChunk(in *Input, f *frame.Frame, en *fcAttrs) bool {
	if !in.Time.IsZero() || !e.noRecords || f.Flags&frame.FlagDone != 0 ||
		f.HasError() != (en.found&faErr != 0) || f.HasMeta() != (en.found&faMeta != 0) {
		return false
	}
	st := e.sectionStream(in, en)
	if st == nil {
		return false
	}
	s := st.state
	if seq := f.Seq; s.flags&(fSeq|fResync|fStarted) != fSeq|fStarted || seq <= 0 || uint32(seq) != s.last+1 {
		return false
	}
	e.stats.Records++
	s.flags |= fResponded
	s.records++
	s.last = uint32(f.Seq)
	return true
}

// observeFrame is ObserveFrame but for observeChunk (en, hit: frameEntry's
// for a STREAM_CHUNK). Its locals (the attribute values) are zeroed at
// each call: not in ObserveFrame, whose hot path does not need them.
func (e *Engine) observeFrame(in *Input, f *frame.Frame, en *fcAttrs, hit bool) {
	var vals [fcAttrNames][]byte
	var found uint64
	var clean bool
	if f.MsgType == frame.TypeStreamChunk {
		e.stats.Records++
		found, clean, en = e.frameAttrs(f, &vals, en, hit)
	} else {
		e.stats.Records++
		found, clean = f.Find(frameAttrSet, vals[:])
	}
	var key []byte
	keyBit, keyAt := faSid, 0
	if f.MsgType == frame.TypeEvent {
		keyBit, keyAt = faID, 1
	}
	if found&uint64(keyBit) != 0 && len(vals[keyAt]) > 0 {
		key = vals[keyAt]
	}
	hasErr := found&faErr != 0
	if !e.noRecords {
		kind := "unknown"
		if int(f.MsgType) < len(frameKinds) {
			kind = frameKinds[f.MsgType]
		}
		status := ""
		if f.MsgType == frame.TypeStreamChunk {
			status = "in_progress"
			if f.Done() {
				status = "succeeded"
				if hasErr {
					status = "failed"
				}
			}
		}
		e.recordFrame(in, f, kind, status, key)
	}

	if f.MsgType < frame.TypeStreamReq || f.MsgType > frame.TypeEvent {
		if e.on(RuleFrameType) {
			e.report(RuleFrameType, Off, in, key, ProtoEventMesh, fmt.Sprintf("msgType %d is not 1 (STREAM_REQ), 2 (STREAM_CHUNK) or 3 (EVENT)", f.MsgType))
		}
		return
	}
	if f.Flags&frame.FlagReserved != 0 && e.on(RuleFrameFlags) {
		e.report(RuleFrameFlags, Off, in, key, ProtoEventMesh, fmt.Sprintf("reserved flag bits set: 0x%02x", f.Flags&frame.FlagReserved))
	}
	if !clean {
		if what, over := f.OverLimits(); over && e.on(RuleFrameLimits) {
			e.report(RuleFrameLimits, Off, in, key, ProtoEventMesh, what)
		}
	}
	if e.on(RuleFrameAttr) {
		var need uint64
		switch f.MsgType {
		case frame.TypeStreamReq:
			need = faSid | faReplyTo
		case frame.TypeStreamChunk:
			need = faSid
		case frame.TypeEvent:
			need = faID | faType | faSource
		}
		if found&need != need || !clean {
			e.attrProblems(in, f, key, need&^found)
		}
	}
	if f.MsgType != frame.TypeStreamChunk {
		return
	}
	if f.HasError() != hasErr && e.on(RuleFrameErrorFlag) {
		msg := "hasError flag set without an err attribute"
		if hasErr {
			msg = "err attribute without the hasError flag"
		}
		e.report(RuleFrameErrorFlag, Off, in, key, ProtoEventMesh, msg)
	}
	meta, hasMeta := vals[6], found&faMeta != 0
	if e.on(RuleFrameMetaFlag) {
		msg := ""
		switch {
		case f.HasMeta() && !hasMeta:
			msg = "hasMeta flag set without a meta attribute"
		case !f.HasMeta() && hasMeta:
			msg = "meta attribute without the hasMeta flag"
		case hasMeta && !isJSONObject(meta):
			msg = "meta is not a JSON object"
		}
		if msg != "" {
			e.report(RuleFrameMetaFlag, Off, in, key, ProtoEventMesh, msg)
		}
	}
	if et := vals[7]; found&faEtype != 0 && !knownEtype(et) && e.on(RuleFrameEtype) {
		e.report(RuleFrameEtype, Off, in, key, ProtoEventMesh, "etype "+quoteString(et)+" is not text, thought, tool or structured")
	}
	if key == nil {
		return
	}
	e.chunkStream(in, f, key, hasErr, en)
}

// observeChunk is ObserveFrame for a STREAM_CHUNK without reserved flag
// bits whose attribute section is cached and plain (en): of the rules
// before the stream's, only those that read the flags can fail.
func (e *Engine) observeChunk(in *Input, f *frame.Frame, en *fcAttrs) {
	e.stats.Records++
	v := en.vals[0]
	key := f.AttrSection()[v[0] : int(v[0])+int(v[1])]
	hasErr := en.found&faErr != 0
	if !e.noRecords {
		status := "in_progress"
		if f.Done() {
			status = "succeeded"
			if hasErr {
				status = "failed"
			}
		}
		e.recordFrame(in, f, frameKinds[frame.TypeStreamChunk], status, key)
	}

	if f.HasError() != hasErr && e.on(RuleFrameErrorFlag) {
		msg := "hasError flag set without an err attribute"
		if hasErr {
			msg = "err attribute without the hasError flag"
		}
		e.report(RuleFrameErrorFlag, Off, in, key, ProtoEventMesh, msg)
	}
	if hasMeta := en.found&faMeta != 0; f.HasMeta() != hasMeta && e.on(RuleFrameMetaFlag) {
		msg := "hasMeta flag set without a meta attribute"
		if hasMeta {
			msg = "meta attribute without the hasMeta flag"
		}
		e.report(RuleFrameMetaFlag, Off, in, key, ProtoEventMesh, msg)
	}
	e.chunkStream(in, f, key, hasErr, en)
}

// knownEtype reports whether et is an etype the reference sends.
func knownEtype(et []byte) bool {
	switch string(et) {
	case "text", "thought", "tool", "structured":
		return true
	}
	return false
}

// seqWrap judges a chunk whose seq went past MaxInt32 and wrapped: the
// frame's seq is a signed int32 that the reference writes as it is and
// never checks, so a Java producer's int counter goes on from 2147483647
// to -2147483648. Across the wrap, seq follows last by uint32(seq) -
// uint32(last) (serial number arithmetic, RFC 1982, within a quarter of
// the space): the next chunk is no finding (it was a seq_regress, and so
// was every chunk after it), a jump is a seq_gap. It reports false, and
// judges nothing, for any other chunk.
func (e *Engine) seqWrap(in *Input, s *stream, seq int32, key []byte) bool {
	if seq >= 0 || s.flags&(fSeq|fResync) != fSeq {
		return false
	}
	last := e.tab.lastSeq(s)
	if last < 0 || last > 1<<31-1 {
		return false
	}
	d := uint32(seq) - uint32(last)
	if d >= 1<<30 {
		// Behind (serial arithmetic: 2^31 and up), or so far ahead that
		// it reads as going back (5, then -2147483645): a regress, as
		// sequence says.
		return false
	}
	if d > 1 {
		e.report(RuleFrameSeqGap, Off, in, key, ProtoEventMesh, fmt.Sprintf("sequence %d after %d (int32 wrapped): %d missing", seq, last, d-1))
		s.addError()
	}
	e.tab.setLastSeq(s, int64(seq))
	return true
}

// chunkStream is the stream rules of a STREAM_CHUNK of stream key (en: the
// cache entry of its attribute section, or nil).
func (e *Engine) chunkStream(in *Input, f *frame.Frame, key []byte, hasErr bool, en *fcAttrs) {
	var i int32
	var created bool
	var s *stream
	was := notEnded
	if st := e.sectionStream(in, en); st != nil {
		i, s = st.idx, st.state // no walk from the table to its segment
	} else {
		i, created, was = e.frameStream(in, key, en)
	}
	if was == untracked {
		return
	}
	if was != notEnded {
		if e.on(RuleFrameAfterDone) {
			what := "after the done chunk"
			if was == idled {
				what = "after the stream was ended by the idle timeout with no done chunk"
			}
			e.report(RuleFrameAfterDone, Off, in, key, ProtoEventMesh, fmt.Sprintf("chunk seq %d %s", f.Seq, what))
		}
		return
	}
	if s == nil {
		s = e.tab.at(i)
	}
	if created {
		s.flags |= fFrame
		if in.Joined {
			s.flags |= fJoined
		}
	}
	// touch, and startIfNeeded once, on the state at hand.
	if !in.Time.IsZero() {
		s.seen(in.Time.UnixNano())
	}
	s.flags |= fResponded
	s.records++
	if s.flags&fStarted == 0 {
		e.startIfNeeded(i, in, ProtoEventMesh)
		s = e.tab.at(i)
	}
	if s.chunkUs == 0 && !in.Time.IsZero() && s.startNs() != 0 {
		s.chunkUs = uint32(min(max(in.Time.UnixNano()-s.startNs(), 0)/1000, 1<<32-2)) + 1
	}
	if seq := f.Seq; s.flags&(fSeq|fResync) == fSeq && seq > 0 && uint32(seq) == s.last+1 {
		// The next in sequence (of a last sequence not kept aside: then
		// s.last+1 is 0): sequence's first case, without the call.
		s.last = uint32(seq)
	} else if !e.seqWrap(in, s, seq, key) {
		e.sequence(in, s, int64(seq), key, RuleFrameSeqStart, ProtoEventMesh)
	}
	if f.Done() {
		o := OutcomeSucceeded
		if hasErr {
			o = OutcomeFailed
		}
		e.end(i, o, ReasonFinal, in, false)
	}
}

// attrProblems reports frame.attr: the required attributes missing (bits
// of frameAttrNames), a repeated name, malformed UTF-8.
func (e *Engine) attrProblems(in *Input, f *frame.Frame, key []byte, missing uint64) {
	var problems []string
	var miss []string
	for i, n := range frameAttrNames {
		if missing&(1<<i) != 0 {
			miss = append(miss, n)
		}
	}
	if len(miss) > 0 {
		problems = append(problems, "missing "+list(miss))
	}
	if name, dup := f.DupAttr(); dup {
		problems = append(problems, "duplicate attribute "+quoteString(name))
	}
	if !f.ValidUTF8() {
		problems = append(problems, "invalid UTF-8 in an attribute")
	}
	if len(problems) > 0 {
		e.report(RuleFrameAttr, Off, in, key, ProtoEventMesh, list(problems))
	}
}

func isJSONObject(b []byte) bool {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// recordFrame hands the sink the record of frame f, on the engine's own
// copy of the Frame. Field by field: a composite literal is built aside
// and copied, once per frame.
func (e *Engine) recordFrame(in *Input, f *frame.Frame, kind, status string, key []byte) {
	e.frm = *f
	ri := &e.info
	ri.In, ri.Protocol, ri.Class, ri.Kind, ri.Status = in, ProtoEventMesh, 0, kind, status
	ri.JSON, ri.Frame, ri.Stream, ri.Heartbeat, ri.ServerPush, ri.SecretFree = nil, &e.frm, key, false, false, false
	ri.SplitSecret = ""
	e.sink.Record(ri)
}
