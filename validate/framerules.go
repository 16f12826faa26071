package validate

import (
	"encoding/json"
	"fmt"

	"github.com/e2atap/e2atap/frame"
)

var frameKinds = [...]string{"unknown", "stream_req", "stream_chunk", "event"}

// ObserveFrame checks one decoded EventMeshFrame.
func (e *Engine) ObserveFrame(in *Input, f *frame.Frame) {
	e.stats.Records++
	var key []byte
	keyAttr := "sid"
	if f.MsgType == frame.TypeEvent {
		keyAttr = "id"
	}
	if v, ok := f.Attr(keyAttr); ok && len(v) > 0 {
		key = v
	}
	kind := "unknown"
	if int(f.MsgType) < len(frameKinds) {
		kind = frameKinds[f.MsgType]
	}
	status := ""
	if f.MsgType == frame.TypeStreamChunk {
		status = "in_progress"
		if f.Done() {
			status = "succeeded"
			if _, hasErr := f.Attr("err"); hasErr {
				status = "failed"
			}
		}
	}
	e.frm = *f
	e.info = RecordInfo{In: in, Protocol: ProtoEventMesh, Kind: kind, Status: status, Frame: &e.frm, Stream: key}
	e.sink.Record(&e.info)

	if f.MsgType < frame.TypeStreamReq || f.MsgType > frame.TypeEvent {
		if e.on(RuleFrameType) {
			e.report(RuleFrameType, Off, in, key, ProtoEventMesh, fmt.Sprintf("msgType %d is not 1 (STREAM_REQ), 2 (STREAM_CHUNK) or 3 (EVENT)", f.MsgType))
		}
		return
	}
	if f.Flags&frame.FlagReserved != 0 && e.on(RuleFrameFlags) {
		e.report(RuleFrameFlags, Off, in, key, ProtoEventMesh, fmt.Sprintf("reserved flag bits set: 0x%02x", f.Flags&frame.FlagReserved))
	}
	if what, over := f.OverLimits(); over && e.on(RuleFrameLimits) {
		e.report(RuleFrameLimits, Off, in, key, ProtoEventMesh, what)
	}
	if e.on(RuleFrameAttr) {
		var problems []string
		need := [3]string{}
		switch f.MsgType {
		case frame.TypeStreamReq:
			need = [3]string{"sid", "replyTo"}
		case frame.TypeStreamChunk:
			need = [3]string{"sid"}
		case frame.TypeEvent:
			need = [3]string{"id", "type", "source"}
		}
		var miss []string
		for _, n := range need {
			if n == "" {
				continue
			}
			if _, ok := f.Attr(n); !ok {
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
	if f.MsgType != frame.TypeStreamChunk {
		return
	}
	errAttr, hasErr := f.Attr("err")
	_ = errAttr
	if f.HasError() != hasErr && e.on(RuleFrameErrorFlag) {
		msg := "hasError flag set without an err attribute"
		if hasErr {
			msg = "err attribute without the hasError flag"
		}
		e.report(RuleFrameErrorFlag, Off, in, key, ProtoEventMesh, msg)
	}
	meta, hasMeta := f.Attr("meta")
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
	if et, ok := f.Attr("etype"); ok && e.on(RuleFrameEtype) {
		switch string(et) {
		case "text", "thought", "tool", "structured":
		default:
			e.report(RuleFrameEtype, Off, in, key, ProtoEventMesh, "etype "+quoteString(et)+" is not text, thought, tool or structured")
		}
	}
	if key == nil {
		return
	}
	ck := e.composite(in, protoFrame, key)
	i, created, was := e.lookup(ck, true, false, in)
	if was != notEnded {
		if e.on(RuleFrameAfterDone) {
			e.report(RuleFrameAfterDone, Off, in, key, ProtoEventMesh, fmt.Sprintf("chunk seq %d after the done chunk", f.Seq))
		}
		return
	}
	s := e.tab.at(i)
	if created {
		s.flags |= fFrame
		if in.Joined {
			s.flags |= fJoined
		}
	}
	e.touch(i, in)
	s.flags |= fResponded
	s.records++
	e.startIfNeeded(i, in, ProtoEventMesh)
	s = e.tab.at(i)
	if s.chunkUs == 0 && s.startNs() != 0 && !in.Time.IsZero() {
		s.chunkUs = uint32(min(max(in.Time.UnixNano()-s.startNs(), 0)/1000, 1<<32-2)) + 1
	}
	e.sequence(in, s, int64(f.Seq), key, RuleFrameSeqStart, ProtoEventMesh)
	if f.Done() {
		o := OutcomeSucceeded
		if hasErr {
			o = OutcomeFailed
		}
		e.end(i, o, ReasonFinal, in, false)
	}
}

func isJSONObject(b []byte) bool {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
