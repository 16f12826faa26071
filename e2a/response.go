package e2a

import "log/slog"

// Response is E2AResponse, one record from the AgentServer (every stream
// frame is one). Field order is the reference's to_dict key order. Unlike
// Envelope it has no chat_id, agent_id, service_id or workspace_key.
type Response struct {
	ProtocolVersion Loose
	ResponseID      Loose // equals request_id on every reference AgentServer frame
	RequestID       Loose
	Sequence        int64 // -1 on keepalives
	IsFinal         bool
	Status          string
	ResponseKind    string
	Timestamp       *string
	Provenance      Provenance
	Body            map[string]any
	JSONRPCID       Loose
	CorrelationID   Loose
	TaskID          Loose
	ContextID       Loose
	SessionID       Loose
	MessageID       Loose
	IsStream        bool
	IdentityOrigin  Loose
	Channel         Loose
	UserID          Loose
	AgentRef        Loose
	SourceAgentID   Loose
	Method          Loose
	Projections     map[string]any
	ChannelContext  map[string]any
	Metadata        map[string]any
	A2AMetadata     map[string]any
	ACPMeta         map[string]any
}

// NewResponse returns a response with the reference dataclass defaults
// (in_progress, sequence 0, identity_origin agent, empty kind).
func NewResponse() *Response {
	return &Response{
		ProtocolVersion: LooseString(ProtocolVersion),
		Status:          StatusInProgress,
		Provenance:      DefaultProvenance(),
		Body:            map[string]any{},
		IdentityOrigin:  LooseString(string(OriginAgent)),
		Projections:     map[string]any{},
		ChannelContext:  map[string]any{},
		Metadata:        map[string]any{},
		A2AMetadata:     map[string]any{},
		ACPMeta:         map[string]any{},
	}
}

// MarshalJSON writes the reference to_dict output in the reference key
// order; nothing is omitted.
func (r Response) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.val("protocol_version", r.ProtocolVersion.v)
	o.val("response_id", r.ResponseID.v)
	o.val("request_id", r.RequestID.v)
	o.val("sequence", r.Sequence)
	o.boolean("is_final", r.IsFinal)
	o.str("status", r.Status)
	o.str("response_kind", r.ResponseKind)
	o.strp("timestamp", r.Timestamp)
	o.val("provenance", r.Provenance)
	o.dict("body", r.Body)
	o.val("jsonrpc_id", r.JSONRPCID.v)
	o.val("correlation_id", r.CorrelationID.v)
	o.val("task_id", r.TaskID.v)
	o.val("context_id", r.ContextID.v)
	o.val("session_id", r.SessionID.v)
	o.val("message_id", r.MessageID.v)
	o.boolean("is_stream", r.IsStream)
	o.val("identity_origin", r.IdentityOrigin.v)
	o.val("channel", r.Channel.v)
	o.val("user_id", r.UserID.v)
	o.val("agent_ref", r.AgentRef.v)
	o.val("source_agent_id", r.SourceAgentID.v)
	o.val("method", r.Method.v)
	o.dict("projections", r.Projections)
	o.dict("channel_context", r.ChannelContext)
	o.dict("metadata", r.Metadata)
	o.dict("a2a_metadata", r.A2AMetadata)
	o.dict("acp_meta", r.ACPMeta)
	return o.end()
}

// ToDict returns the reference to_dict output as a map. Use MarshalJSON for
// the key order.
func (r Response) ToDict() map[string]any {
	return map[string]any{
		"protocol_version": r.ProtocolVersion.v,
		"response_id":      r.ResponseID.v,
		"request_id":       r.RequestID.v,
		"sequence":         r.Sequence,
		"is_final":         r.IsFinal,
		"status":           r.Status,
		"response_kind":    r.ResponseKind,
		"timestamp":        strpAny(r.Timestamp),
		"provenance":       r.Provenance.toDict(),
		"body":             copyDict(r.Body),
		"jsonrpc_id":       r.JSONRPCID.v,
		"correlation_id":   r.CorrelationID.v,
		"task_id":          r.TaskID.v,
		"context_id":       r.ContextID.v,
		"session_id":       r.SessionID.v,
		"message_id":       r.MessageID.v,
		"is_stream":        r.IsStream,
		"identity_origin":  r.IdentityOrigin.v,
		"channel":          r.Channel.v,
		"user_id":          r.UserID.v,
		"agent_ref":        r.AgentRef.v,
		"source_agent_id":  r.SourceAgentID.v,
		"method":           r.Method.v,
		"projections":      copyDict(r.Projections),
		"channel_context":  copyDict(r.ChannelContext),
		"metadata":         copyDict(r.Metadata),
		"a2a_metadata":     copyDict(r.A2AMetadata),
		"acp_meta":         copyDict(r.ACPMeta),
	}
}

// LogValue logs the stream position only, never body (model output) or
// metadata (may hold legacy blobs).
func (r Response) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("request_id", r.RequestID.String()),
		slog.String("response_id", r.ResponseID.String()),
		slog.Int64("sequence", r.Sequence),
		slog.Bool("is_final", r.IsFinal),
		slog.String("status", r.Status),
		slog.String("response_kind", r.ResponseKind),
	)
}

// IsKeepalive reports whether r is the AgentServer's idle heartbeat: an
// e2a.chunk with sequence -1 and body.event_type "keepalive". It breaks the
// spec's sequence invariant and must be whitelisted by the validator.
func (r Response) IsKeepalive() bool {
	return r.Sequence == KeepaliveSequence && r.ResponseKind == KindE2AChunk &&
		r.Body["event_type"] == EventTypeKeepalive
}

// IsServerPush reports whether metadata marks r as an unsolicited push frame
// (its request_id is not an in-flight request). The AgentServer sets the key
// to true; any truthy value counts here.
func (r Response) IsServerPush() bool { return pyTruthy(r.Metadata[WireServerPushKey]) }
