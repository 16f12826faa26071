package e2a

import (
	"time"
)

// Adapters between E2A and ACP / A2A, and the legacy AgentResponse bridge
// that produces the AgentServer's real wire frames (reference/e2a.md §6,
// §7.2). Every function copies what it returns from: no input is modified.

// MergeParamsToACPPrompt mirrors merge_params_to_acp_prompt. For a method
// other than session/prompt it returns a shallow copy of params. Otherwise,
// unless params already has a "prompt" key (even null: then it returns the
// copy untouched, with no session_id and no _meta), it builds prompt from a
// non-empty content_blocks list, or from the first truthy of text, content,
// query when that is a non-empty string (a one-element text block list);
// then adds session_id (if truthy and absent) and merges acp_meta into _meta
// (acp_meta wins). It fails where Python raises: an existing _meta that is
// not an object while acp_meta is non-empty.
func MergeParamsToACPPrompt(e *Envelope) (map[string]any, error) {
	p := copyDict(e.Params)
	if !e.Method.Is(ACPMethodSessionPrompt) {
		return p, nil
	}
	if _, has := p["prompt"]; has {
		return p, nil
	}
	var blocks []any
	if cb, ok := p["content_blocks"].([]any); ok && len(cb) > 0 {
		blocks = append(blocks, cb...)
	} else {
		text := p["text"]
		for _, k := range []string{"content", "query"} {
			if pyTruthy(text) {
				break
			}
			text = p[k]
		}
		if s, ok := text.(string); ok && s != "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": s})
		}
	}
	if len(blocks) > 0 {
		p["prompt"] = blocks
	}
	if e.SessionID.Truthy() {
		if _, has := p["session_id"]; !has {
			p["session_id"] = e.SessionID.v
		}
	}
	if len(e.ACPMeta) > 0 {
		raw, has := p["_meta"]
		meta := map[string]any{}
		if has {
			m, ok := raw.(map[string]any)
			if !ok {
				return nil, &DictError{Key: "_meta", PyType: "AttributeError",
					Msg: "'" + pyTypeName(raw) + "' object has no attribute 'update'"}
			}
			meta = copyDict(m) // the reference updates the caller's dict in place
		}
		for k, v := range e.ACPMeta {
			meta[k] = v
		}
		p["_meta"] = meta
	}
	return p, nil
}

// ACPCall is a JSON-RPC 2.0 call as envelope_to_acp_jsonrpc_call builds it.
type ACPCall struct {
	ID     Loose // always written, null included
	Method Loose
	Params map[string]any
}

// MarshalJSON writes {"jsonrpc":"2.0","id":…,"method":…,"params":…}.
func (c ACPCall) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.str("jsonrpc", "2.0")
	o.val("id", c.ID.v)
	o.val("method", c.Method.v)
	o.dict("params", c.Params)
	return o.end()
}

// EnvelopeToACPJSONRPCCall mirrors envelope_to_acp_jsonrpc_call: method is
// ext_method when method is "ext" and ext_method is truthy, else method as
// it is (chat.send passes through, which a pure ACP peer rejects); params go
// through MergeParamsToACPPrompt for session/prompt.
func EnvelopeToACPJSONRPCCall(e *Envelope) (ACPCall, error) {
	method := e.Method
	if e.Method.Is(MethodExt) && e.ExtMethod.Truthy() {
		method = e.ExtMethod
	}
	params, err := MergeParamsToACPPrompt(e)
	if err != nil {
		return ACPCall{}, err
	}
	return ACPCall{ID: e.JSONRPCID, Method: method, Params: params}, nil
}

// ACPIngress are the keyword arguments of envelope_from_acp_jsonrpc.
type ACPIngress struct {
	JSONRPCID Loose
	// SessionID wins over params.session_id when truthy; the result is kept
	// only when it is a string (params.sessionId is never read).
	SessionID      Loose
	Channel        Loose
	IdentityOrigin IdentityOrigin // "" means user
	Converter      string         // "" means ConverterACPJSONRPC
	// ExtraProvenanceDetails override the built-in details keys.
	ExtraProvenanceDetails map[string]any
	Now                    func() time.Time // nil means time.Now
}

// EnvelopeFromACPJSONRPC mirrors envelope_from_acp_jsonrpc: provenance acp
// with details {kind: jsonrpc_request, jsonrpc_method, jsonrpc_id (when not
// null)} plus the extra details; params are copied without a prompt merge;
// request_id and timestamp stay null.
func EnvelopeFromACPJSONRPC(method string, params map[string]any, in ACPIngress) *Envelope {
	p := copyDict(params)
	sid := in.SessionID.v
	if !pyTruthy(sid) {
		sid = p["session_id"]
	}
	if _, ok := sid.(string); !ok {
		sid = nil
	}
	details := map[string]any{"kind": detailsKindJSONRPCReq, "jsonrpc_method": method}
	if !in.JSONRPCID.IsNull() {
		details["jsonrpc_id"] = in.JSONRPCID.v
	}
	for k, v := range in.ExtraProvenanceDetails {
		details[k] = v
	}
	e := NewEnvelope()
	e.Provenance = Provenance{
		SourceProtocol: SourceProtocolACP,
		Converter:      LooseString(orDefault(in.Converter, ConverterACPJSONRPC)),
		ConvertedAt:    LooseString(utcNowISO(in.Now)),
		Details:        details,
	}
	e.JSONRPCID = in.JSONRPCID
	e.Method = LooseString(method)
	e.Params = p
	e.SessionID = Loose{sid}
	e.Channel = in.Channel
	e.IdentityOrigin = LooseString(string(orOrigin(in.IdentityOrigin, OriginUser)))
	return e
}

// A2ASendMessage are the keyword arguments of envelope_from_a2a_send_message.
type A2ASendMessage struct {
	TaskID      Loose
	ContextID   Loose
	MessageBody any
	// Metadata is the A2A metadata; it goes to a2a_metadata, never to the
	// Gateway's metadata/channel_context.
	Metadata               map[string]any
	Configuration          map[string]any
	Channel                Loose
	IdentityOrigin         IdentityOrigin // "" means user
	Converter              string         // "" means ConverterA2ASendMessage
	ExtraProvenanceDetails map[string]any
	Now                    func() time.Time
}

// EnvelopeFromA2ASendMessage mirrors envelope_from_a2a_send_message: method
// session/prompt, params {message, configuration}, expected_output_modes
// from configuration.acceptedOutputModes (camelCase, only when a list, each
// item through str()).
func EnvelopeFromA2ASendMessage(in A2ASendMessage) *Envelope {
	modes := []any{}
	if acc, ok := in.Configuration["acceptedOutputModes"].([]any); ok {
		for _, x := range acc {
			modes = append(modes, pyStr(x))
		}
	}
	details := map[string]any{"kind": detailsKindA2ASendMsg, "abstract_operation": a2aAbstractOpSendMessage}
	for k, v := range in.ExtraProvenanceDetails {
		details[k] = v
	}
	cfg := in.Configuration
	if cfg == nil {
		cfg = map[string]any{}
	}
	e := NewEnvelope()
	e.Provenance = Provenance{
		SourceProtocol: SourceProtocolA2A,
		Converter:      LooseString(orDefault(in.Converter, ConverterA2ASendMessage)),
		ConvertedAt:    LooseString(utcNowISO(in.Now)),
		Details:        details,
	}
	e.Method = LooseString(ACPMethodSessionPrompt)
	e.TaskID = in.TaskID
	e.ContextID = in.ContextID
	e.Channel = in.Channel
	e.IdentityOrigin = LooseString(string(orOrigin(in.IdentityOrigin, OriginUser)))
	e.ExpectedOutputModes = modes
	e.Params = map[string]any{"message": in.MessageBody, "configuration": cfg}
	e.A2AMetadata = copyDict(in.Metadata)
	return e
}

// ResponseToACPJSONRPCResponse mirrors e2a_response_to_acp_jsonrpc_response.
// It returns nil when the response has no JSON-RPC form: every kind but
// acp.prompt_result, acp.jsonrpc_error and e2a.error (status is ignored),
// unless projections.acp already holds a JSON-RPC 2.0 response.
func ResponseToACPJSONRPCResponse(r *Response) map[string]any {
	if proj, ok := r.Projections["acp"].(map[string]any); ok && proj["jsonrpc"] == "2.0" {
		_, hasResult := proj["result"]
		_, hasError := proj["error"]
		if hasResult || hasError {
			out := copyDict(proj)
			if _, has := out["id"]; !has {
				out["id"] = r.JSONRPCID.v
			}
			return out
		}
	}
	body := copyDict(r.Body)
	switch r.ResponseKind {
	case KindACPPromptResult:
		return map[string]any{"jsonrpc": "2.0", "id": r.JSONRPCID.v, "result": body}
	case KindACPJSONRPCError:
		return map[string]any{"jsonrpc": "2.0", "id": r.JSONRPCID.v, "error": body}
	case KindE2AError:
		raw, hasCode := body["code"]
		var code any = int64(JSONRPCInternalError)
		isInt := pyIsInt(raw)
		if isInt {
			code = raw
		}
		data := map[string]any{}
		if d := body["details"]; d != nil {
			data["details"] = d
		}
		if x := body["external"]; x != nil {
			data["external"] = x
		}
		if hasCode && raw != nil && !isInt {
			data["e2a_code"] = raw
		}
		msg := ""
		if m := body["message"]; pyTruthy(m) {
			msg = pyStr(m)
		}
		errObj := map[string]any{"code": code, "message": msg}
		if len(data) > 0 {
			errObj["data"] = data
		}
		return map[string]any{"jsonrpc": "2.0", "id": r.JSONRPCID.v, "error": errObj}
	}
	return nil
}

// pyIsInt is isinstance(x, int): JSON true/false count, floats do not.
func pyIsInt(v any) bool {
	if _, ok := v.(bool); ok {
		return true
	}
	n, ok := pyNum(v)
	return ok && n.isInt
}

// ResponseToA2AStreamPayload mirrors e2a_response_to_a2a_stream_payload: nil
// unless response_kind is a2a.stream_event; then projections.a2a when it is
// an object with exactly one camelCase StreamResponse key, else
// {outer(body.branch): body.payload} when the branch is one of the
// snake_case A2AStreamBranches and payload is an object, else nil.
func ResponseToA2AStreamPayload(r *Response) map[string]any {
	if r.ResponseKind != KindA2AStreamEvent {
		return nil
	}
	if proj, ok := r.Projections["a2a"].(map[string]any); ok && len(proj) == 1 {
		for k := range proj {
			switch k {
			case "task", "message", "statusUpdate", "artifactUpdate":
				return copyDict(proj)
			}
		}
	}
	branch, _ := r.Body["branch"].(string)
	payload, ok := r.Body["payload"].(map[string]any)
	outer, known := a2aOuterKey(branch)
	if !ok || !known {
		return nil
	}
	return map[string]any{outer: payload}
}

// AgentResponse is the legacy unary AgentResponse (AgentServer → Gateway).
type AgentResponse struct {
	RequestID string
	ChannelID string
	OK        bool
	Payload   map[string]any // nil is None
	Metadata  map[string]any // nil is None
	AgentRef  Loose
}

// AgentChunk is the legacy streaming AgentResponseChunk.
type AgentChunk struct {
	RequestID  string
	ChannelID  string
	Payload    map[string]any // nil is None
	IsComplete bool
	AgentRef   Loose
	Metadata   map[string]any // nil is None
}

// MarshalJSON writes the dataclass field order; nil maps are null.
func (a AgentResponse) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.str("request_id", a.RequestID)
	o.str("channel_id", a.ChannelID)
	o.boolean("ok", a.OK)
	o.val("payload", dictOrNil(a.Payload))
	o.val("metadata", dictOrNil(a.Metadata))
	o.val("agent_ref", a.AgentRef.v)
	return o.end()
}

// MarshalJSON writes the dataclass field order; nil maps are null.
func (c AgentChunk) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.str("request_id", c.RequestID)
	o.str("channel_id", c.ChannelID)
	o.val("payload", dictOrNil(c.Payload))
	o.boolean("is_complete", c.IsComplete)
	o.val("agent_ref", c.AgentRef.v)
	o.val("metadata", dictOrNil(c.Metadata))
	return o.end()
}

func dictOrNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// AgentResponseFromDict mirrors the Gateway's reading of the deprecated
// unary shape (_raw_dict_to_agent_response): request_id is required and
// str()-ed, channel_id str()-ed (default ""), ok by truthiness (default
// true); agent_ref is not read. A payload or metadata that is not an object
// or null is an error here (the reference would fail later).
func AgentResponseFromDict(m map[string]any) (*AgentResponse, error) {
	rid, ok := m["request_id"]
	if !ok {
		return nil, &DictError{Key: "request_id", PyType: "KeyError", Msg: "'request_id'"}
	}
	a := &AgentResponse{RequestID: pyStr(rid), ChannelID: strOr(m, "channel_id", ""), OK: true}
	if v, has := m["ok"]; has {
		a.OK = pyTruthy(v)
	}
	var err error
	if a.Payload, err = dictOrNone(m, "payload"); err != nil {
		return nil, err
	}
	if a.Metadata, err = dictOrNone(m, "metadata"); err != nil {
		return nil, err
	}
	return a, nil
}

// AgentChunkFromDict mirrors _raw_dict_to_agent_chunk: like
// AgentResponseFromDict, with is_complete by truthiness (default false);
// agent_ref and metadata are not read (the reference drops them).
func AgentChunkFromDict(m map[string]any) (*AgentChunk, error) {
	rid, ok := m["request_id"]
	if !ok {
		return nil, &DictError{Key: "request_id", PyType: "KeyError", Msg: "'request_id'"}
	}
	c := &AgentChunk{RequestID: pyStr(rid), ChannelID: strOr(m, "channel_id", ""), IsComplete: pyTruthy(m["is_complete"])}
	var err error
	if c.Payload, err = dictOrNone(m, "payload"); err != nil {
		return nil, err
	}
	return c, nil
}

func strOr(m map[string]any, k, def string) string {
	if v, ok := m[k]; ok {
		return pyStr(v)
	}
	return def
}

func dictOrNone(m map[string]any, k string) (map[string]any, error) {
	switch v := m[k].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return copyDict(v), nil
	default:
		return nil, &DictError{Key: k, PyType: "TypeError", Msg: "expected an object or null, got " + pyTypeName(v)}
	}
}

// FrameOptions are what the AgentServer adds to a legacy response when it
// encodes it for the wire.
type FrameOptions struct {
	// ResponseID: the reference AgentServer passes the request_id.
	ResponseID string
	// Sequence: 0 for unary replies, chunk_index for stream frames, -1 for
	// keepalives.
	Sequence int64
	// Timestamp is used for both timestamp and provenance.converted_at; ""
	// means now.
	Timestamp string
	Now       func() time.Time
}

func (o FrameOptions) timestamp() string {
	if o.Timestamp != "" {
		return o.Timestamp
	}
	return utcNowISO(o.Now)
}

func legacyFrame(o FrameOptions, converter string, details map[string]any, channelID string, agentRef Loose, meta map[string]any) *Response {
	r := NewResponse()
	ts := o.timestamp()
	r.ResponseID = LooseString(o.ResponseID)
	r.Sequence = o.Sequence
	r.Timestamp = &ts
	r.Provenance = Provenance{SourceProtocol: SourceProtocolE2A, Converter: LooseString(converter), ConvertedAt: LooseString(ts), Details: details}
	if channelID != "" {
		r.Channel = LooseString(channelID)
	}
	r.AgentRef = agentRef
	r.Metadata = copyDict(meta)
	return r
}

// ResponseFromAgentChunk mirrors e2a_response_from_agent_chunk, which makes
// every AgentServer stream frame:
//
//   - complete with payload {"is_complete": true}: e2a.complete, body {"result": {}}
//   - complete with event_type chat.error: e2a.error, code "chat.error"
//   - any other complete: e2a.complete, body {"result": payload}
//   - chat.delta: e2a.chunk, delta_kind text (reasoning for llm_reasoning)
//   - anything else: e2a.chunk, delta_kind custom, delta = payload
//
// So chat.final, tool calls and keepalives are custom chunks, not finals.
func ResponseFromAgentChunk(c *AgentChunk, isStream bool, o FrameOptions) *Response {
	r := legacyFrame(o, ConverterAgentChunk,
		map[string]any{"kind": detailsKindLegacyChunk, "is_complete": c.IsComplete},
		c.ChannelID, c.AgentRef, c.Metadata)
	r.RequestID = LooseString(c.RequestID)
	r.IsStream = isStream
	pl := copyDict(c.Payload)
	switch {
	case c.IsComplete && len(pl) == 1 && pyEqual(pl["is_complete"], true) && hasKey(pl, "is_complete"):
		r.IsFinal, r.Status, r.ResponseKind = true, StatusSucceeded, KindE2AComplete
		r.Body = map[string]any{"result": map[string]any{}}
	case c.IsComplete && pl["event_type"] == EventTypeChatError:
		r.IsFinal, r.Status, r.ResponseKind = true, StatusFailed, KindE2AError
		msg := ""
		if v, has := pl["error"]; has {
			msg = pyStr(v)
		}
		r.Body = map[string]any{"code": CodeChatError, "message": msg, "details": pl}
	case c.IsComplete:
		r.IsFinal, r.Status, r.ResponseKind = true, StatusSucceeded, KindE2AComplete
		r.Body = map[string]any{"result": pl}
	default:
		r.IsFinal, r.Status, r.ResponseKind = false, StatusInProgress, KindE2AChunk
		et := pl["event_type"]
		if et == EventTypeChatDelta {
			sct := pl["source_chunk_type"]
			dk := DeltaText
			if sct == "llm_reasoning" {
				dk = DeltaReasoning
			}
			var delta any = ""
			if v, has := pl["content"]; has {
				delta = v
			}
			body := map[string]any{"delta_kind": dk, "delta": delta, "event_type": et, "source_chunk_type": sct}
			for _, k := range []string{"role", "member_name"} {
				if v := pl[k]; v != nil {
					body[k] = v
				}
			}
			r.Body = body
		} else {
			r.Body = map[string]any{"delta_kind": DeltaCustom, "delta": pl, "event_type": et}
		}
	}
	return r
}

func hasKey(m map[string]any, k string) bool {
	_, ok := m[k]
	return ok
}

// ResponseFromAgentResponse mirrors e2a_response_from_agent_response, which
// makes every unary reply: final, sequence as given (0), is_stream false;
// ok gives e2a.complete {"result": payload}, not ok gives e2a.error with code
// E2A.AGENT_ERROR and message str(payload.error ?? payload.message ?? "Agent
// error").
func ResponseFromAgentResponse(a *AgentResponse, o FrameOptions) *Response {
	r := legacyFrame(o, ConverterAgentResponse,
		map[string]any{"kind": detailsKindLegacyResp, "ok": a.OK},
		a.ChannelID, a.AgentRef, a.Metadata)
	r.RequestID = LooseString(a.RequestID)
	r.IsFinal = true
	pl := copyDict(a.Payload)
	if a.OK {
		r.Status, r.ResponseKind = StatusSucceeded, KindE2AComplete
		r.Body = map[string]any{"result": pl}
		return r
	}
	var msg any = "Agent error"
	if v, has := pl["error"]; has {
		msg = v
	} else if v, has := pl["message"]; has {
		msg = v
	}
	r.Status, r.ResponseKind = StatusFailed, KindE2AError
	r.Body = map[string]any{"code": CodeAgentError, "message": pyStr(msg), "details": pl}
	return r
}

// ResponseToAgentChunk mirrors e2a_response_to_agent_chunk, the Gateway's
// reading of a stream frame. It accepts e2a.complete and e2a.error only when
// final, e2a.chunk only when not final, and cron, acp.output_request and
// plan.approval_required whatever is_final says; any other pair is an error
// (the reference raises ValueError, with the same message).
func ResponseToAgentChunk(r *Response) (*AgentChunk, error) {
	c := &AgentChunk{}
	if r.RequestID.Truthy() {
		c.RequestID = pyStr(r.RequestID.v)
	}
	if r.Channel.Truthy() {
		c.ChannelID = pyStr(r.Channel.v)
	}
	if r.AgentRef.Truthy() {
		c.AgentRef = r.AgentRef
	}
	if len(r.Metadata) > 0 {
		c.Metadata = copyDict(r.Metadata)
	}
	body := copyDict(r.Body)
	switch {
	case r.ResponseKind == KindE2AComplete && r.IsFinal:
		c.IsComplete = true
		res, isDict := body["result"].(map[string]any)
		if len(body) == 1 && isDict && len(res) == 0 {
			c.Payload = map[string]any{"is_complete": true}
		} else {
			c.Payload = copyDict(res)
		}
	case r.ResponseKind == KindE2AError && r.IsFinal:
		c.IsComplete = true
		if det, ok := body["details"].(map[string]any); ok {
			c.Payload = copyDict(det)
		} else {
			c.Payload = body
		}
	case r.ResponseKind == KindE2AChunk && !r.IsFinal:
		dk, et, delta := body["delta_kind"], body["event_type"], body["delta"]
		if et == EventTypeChatDelta || dk == DeltaText || dk == DeltaReasoning {
			sct := body["source_chunk_type"]
			if dk == DeltaReasoning {
				sct = "llm_reasoning"
			}
			if delta == nil {
				delta = ""
			}
			pl := map[string]any{"event_type": EventTypeChatDelta, "content": delta}
			if sct != nil {
				pl["source_chunk_type"] = sct
			}
			for _, k := range []string{"role", "member_name"} {
				if v := body[k]; v != nil {
					pl[k] = v
				}
			}
			c.Payload = pl
			break
		}
		var pl map[string]any
		if d, ok := delta.(map[string]any); ok {
			pl = copyDict(d)
		} else {
			pl = map[string]any{}
			if et != nil {
				pl["event_type"] = et
			}
			if delta != nil {
				pl["content"] = delta
			}
		}
		if _, has := pl["event_type"]; et != nil && !has {
			pl["event_type"] = et
		}
		c.Payload = pl
	case r.ResponseKind == KindCron:
		c.IsComplete = true
		c.Payload = map[string]any{"event_type": "cron.response", "action": body["action"],
			"status": body["status"], "data": body["data"], "message": body["message"]}
	case r.ResponseKind == KindACPOutputRequest:
		c.Payload = map[string]any{"event_type": KindACPOutputRequest, "jsonrpc": body}
	case r.ResponseKind == KindPlanApprovalRequired:
		c.IsComplete = true
		sid := any("")
		if r.SessionID.Truthy() {
			sid = r.SessionID.v
		}
		c.Payload = map[string]any{"event_type": KindPlanApprovalRequired,
			"plan_content": getOr(body, "plan_content", ""), "plan_slug": getOr(body, "plan_slug", ""),
			"plan_path": getOr(body, "plan_path", ""), "session_id": sid}
	default:
		return nil, &DictError{PyType: "ValueError",
			Msg: "e2a_response_to_agent_chunk: unsupported response_kind=" + pyRepr(r.ResponseKind) +
				" is_final=" + pyRepr(r.IsFinal)}
	}
	return c, nil
}

// ResponseToAgentResponse mirrors e2a_response_to_agent_response, the
// Gateway's reading of a unary reply: e2a.complete + succeeded is ok; e2a.error
// or status failed is not ok (payload = body.details when an object, else
// {error: body.message ?? "Agent error", code: body.code}); anything else is
// an error.
func ResponseToAgentResponse(r *Response) (*AgentResponse, error) {
	a := &AgentResponse{}
	if r.RequestID.Truthy() {
		a.RequestID = pyStr(r.RequestID.v)
	}
	if r.Channel.Truthy() {
		a.ChannelID = pyStr(r.Channel.v)
	}
	if len(r.Metadata) > 0 {
		a.Metadata = copyDict(r.Metadata)
	}
	body := r.Body
	switch {
	case r.ResponseKind == KindE2AComplete && r.Status == StatusSucceeded:
		a.OK = true
		res, _ := body["result"].(map[string]any)
		a.Payload = copyDict(res)
	case r.ResponseKind == KindE2AError || r.Status == StatusFailed:
		if det, ok := body["details"].(map[string]any); ok {
			a.Payload = copyDict(det)
		} else {
			a.Payload = map[string]any{"error": getOr(body, "message", "Agent error"), "code": body["code"]}
		}
	default:
		return nil, &DictError{PyType: "ValueError",
			Msg: "e2a_response_to_agent_response: unsupported response_kind=" + pyRepr(r.ResponseKind) +
				" status=" + pyRepr(r.Status)}
	}
	return a, nil
}

func getOr(m map[string]any, k string, def any) any {
	if v, ok := m[k]; ok {
		return v
	}
	return def
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orOrigin(o, def IdentityOrigin) IdentityOrigin {
	if o == "" {
		return def
	}
	return o
}

// JSONParseErrorFrame mirrors encode_json_parse_error_wire, the AgentServer's
// answer to an inbound text it cannot parse: a final e2a.error with code
// E2A.INVALID_JSON. response_id is responseID, else requestID, else
// "invalid-json"; empty requestID and channelID become null.
func JSONParseErrorFrame(requestID, channelID, message, responseID string, now func() time.Time) *Response {
	r := NewResponse()
	ts := utcNowISO(now)
	rid := responseID
	if rid == "" {
		rid = requestID
	}
	if rid == "" {
		rid = responseIDInvalidJSON
	}
	r.ResponseID = LooseString(rid)
	if requestID != "" {
		r.RequestID = LooseString(requestID)
	}
	r.IsFinal, r.Status, r.ResponseKind = true, StatusFailed, KindE2AError
	r.Timestamp = &ts
	r.Provenance = Provenance{SourceProtocol: SourceProtocolE2A, Converter: LooseString(ConverterJSONParseError),
		ConvertedAt: LooseString(ts), Details: map[string]any{"kind": detailsKindJSONParseErr}}
	r.Body = map[string]any{"code": CodeInvalidJSON, "message": message, "details": map[string]any{}}
	if channelID != "" {
		r.Channel = LooseString(channelID)
	}
	return r
}

// KeepaliveChunk is the legacy chunk the AgentServer sends after 10 s
// without a real chunk; encode it with ResponseFromAgentChunk and
// FrameOptions{ResponseID: requestID, Sequence: KeepaliveSequence}.
func KeepaliveChunk(requestID, channelID string) *AgentChunk {
	return &AgentChunk{RequestID: requestID, ChannelID: channelID,
		Payload: map[string]any{"event_type": EventTypeKeepalive}}
}

// OversizeChunk is the final chat.error chunk the AgentServer sends instead
// of a stream frame over AgentWSSendBudgetBytes (with the same sequence).
func OversizeChunk(requestID, channelID string, actualBytes int64) *AgentChunk {
	return &AgentChunk{RequestID: requestID, ChannelID: channelID, IsComplete: true,
		Payload: map[string]any{
			"error":        "AgentServer response exceeds WebSocket send budget",
			"code":         "response_too_large",
			"actual_bytes": actualBytes,
			"max_bytes":    int64(AgentWSSendBudgetBytes),
			"event_type":   EventTypeChatError,
		}}
}

// EventFrame is a {"type":"event",...} frame: not E2A, routed by the
// Gateway before anything else.
type EventFrame struct {
	Event   string
	Payload map[string]any
}

// MarshalJSON writes {"type":"event","event":…,"payload":…}.
func (f EventFrame) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.str("type", "event")
	o.str("event", f.Event)
	o.dict("payload", f.Payload)
	return o.end()
}

// ConnectionAck is the AgentServer's first frame after a connect; the
// Gateway waits up to 5 s for it.
func ConnectionAck() EventFrame {
	return EventFrame{Event: "connection.ack", Payload: map[string]any{"status": "ready"}}
}
