package e2a

// Values are those of the reference implementation (jiuwenswarm
// common/e2a/constants.py and models.py); see reference/e2a.md §1. Where the
// reference has a tuple, the Go array keeps its order.

// ProtocolVersion is the only E2A version the reference sends and the only
// one its response discriminator accepts.
const ProtocolVersion = "1.0"

// IdentityOrigin says who triggered a request.
type IdentityOrigin string

// The identity origins. Any other string is a hard parse error in the
// reference's from_dict.
const (
	OriginSystem  IdentityOrigin = "system"
	OriginUser    IdentityOrigin = "user"
	OriginAgent   IdentityOrigin = "agent"
	OriginService IdentityOrigin = "service"
)

// Valid reports whether o is one of the four identity origins.
func (o IdentityOrigin) Valid() bool {
	switch o {
	case OriginSystem, OriginUser, OriginAgent, OriginService:
		return true
	}
	return false
}

// Source protocols of provenance.source_protocol. The set is open: from_dict
// accepts any string.
const (
	SourceProtocolE2A = "e2a"
	SourceProtocolACP = "acp"
	SourceProtocolA2A = "a2a"
)

// Response statuses. The reference does not validate status on decode.
const (
	StatusSucceeded  = "succeeded"
	StatusFailed     = "failed"
	StatusInProgress = "in_progress"
)

// Response kinds (E2A_RESPONSE_KIND_*).
const (
	KindE2AComplete          = "e2a.complete"
	KindE2AChunk             = "e2a.chunk"
	KindE2AError             = "e2a.error"
	KindACPSessionUpdate     = "acp.session_update"
	KindACPPromptResult      = "acp.prompt_result"
	KindACPJSONRPCError      = "acp.jsonrpc_error"
	KindACPOutputRequest     = "acp.output_request"
	KindA2ATask              = "a2a.task"
	KindA2AMessage           = "a2a.message"
	KindA2AStreamEvent       = "a2a.stream_event"
	KindCron                 = "cron"
	KindPlanApprovalRequired = "plan.approval_required"
	KindExt                  = "ext"
)

// E2AResponseKinds lists the 13 response kinds in the reference's order. The
// spec (§12.5) lists only 10: acp.output_request, cron and
// plan.approval_required are reference extensions.
var E2AResponseKinds = [...]string{
	KindE2AComplete,
	KindE2AChunk,
	KindE2AError,
	KindACPSessionUpdate,
	KindACPPromptResult,
	KindACPJSONRPCError,
	KindACPOutputRequest,
	KindA2ATask,
	KindA2AMessage,
	KindA2AStreamEvent,
	KindCron,
	KindPlanApprovalRequired,
	KindExt,
}

// IsResponseKind reports whether s is one of E2AResponseKinds. It does not
// allocate, so the fast path may call it with string(b) of a scanned value.
func IsResponseKind(s string) bool {
	switch s {
	case KindE2AComplete, KindE2AChunk, KindE2AError,
		KindACPSessionUpdate, KindACPPromptResult, KindACPJSONRPCError, KindACPOutputRequest,
		KindA2ATask, KindA2AMessage, KindA2AStreamEvent,
		KindCron, KindPlanApprovalRequired, KindExt:
		return true
	}
	return false
}

// KindFinalAllowed reports whether the reference Gateway's stream bridge
// (e2a_response_to_agent_chunk) accepts a frame of this kind with this
// is_final, and reads is_final the way the frame states it. known is false
// for kinds the bridge has no rule for (it raises on them whatever is_final
// says; allowed is then false).
//
//	e2a.chunk                 only not final
//	e2a.complete, e2a.error   only final
//	cron, plan.approval_required   final (the bridge ends the stream on them)
//	acp.output_request        not final
//
// The bridge itself ignores is_final for the last three; a frame that
// disagrees is accepted but means something other than it says, which is
// why it is reported as not allowed here.
func KindFinalAllowed(kind string, final bool) (allowed bool, known bool) {
	switch kind {
	case KindE2AChunk, KindACPOutputRequest:
		return !final, true
	case KindE2AComplete, KindE2AError, KindCron, KindPlanApprovalRequired:
		return final, true
	}
	return false, false
}

// A2A stream branches (body.branch of a2a.stream_event), snake_case.
const (
	BranchTask           = "task"
	BranchMessage        = "message"
	BranchStatusUpdate   = "status_update"
	BranchArtifactUpdate = "artifact_update"
)

// A2AStreamBranches is E2A_A2A_STREAM_BRANCHES in the reference's order.
var A2AStreamBranches = [...]string{BranchTask, BranchMessage, BranchStatusUpdate, BranchArtifactUpdate}

// a2aOuterKey maps a snake_case branch to the camelCase StreamResponse key.
func a2aOuterKey(branch string) (string, bool) {
	switch branch {
	case BranchTask:
		return "task", true
	case BranchMessage:
		return "message", true
	case BranchStatusUpdate:
		return "statusUpdate", true
	case BranchArtifactUpdate:
		return "artifactUpdate", true
	}
	return "", false
}

// ACPClientToAgentMethods are the ACP JSON-RPC methods a client calls.
var ACPClientToAgentMethods = [...]string{
	"initialize", "authenticate", "session/new", "session/load", "session/list",
	"session/set_mode", "session/set_config_option", "session/prompt", "session/set_model",
	"session/fork", "session/resume", "session/close", "logout",
}

// ACPAgentToClientMethods are the ACP JSON-RPC methods an agent calls.
var ACPAgentToClientMethods = [...]string{
	"session/update", "session/request_permission", "fs/read_text_file", "fs/write_text_file",
	"terminal/create", "terminal/output", "terminal/release", "terminal/wait_for_exit",
	"terminal/kill", "session/elicitation",
}

// ACPNotificationNames are the ACP notifications (no JSON-RPC id).
var ACPNotificationNames = [...]string{"session/cancel", "session/update", "session/elicitation/complete"}

// ACPSessionUpdateKinds are the values of session_update_kind and of an
// acp.session_update body's sessionUpdate.
var ACPSessionUpdateKinds = [...]string{
	"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call",
	"tool_call_update", "todo_update", "plan", "available_commands_update",
	"current_mode_update", "config_option_update", "session_info_update", "usage_update",
}

// IsSessionUpdateKind reports whether s is one of ACPSessionUpdateKinds,
// without allocating.
func IsSessionUpdateKind(s string) bool {
	switch s {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call",
		"tool_call_update", "todo_update", "plan", "available_commands_update",
		"current_mode_update", "config_option_update", "session_info_update", "usage_update":
		return true
	}
	return false
}

// ACP method names the adapters treat specially.
const (
	ACPMethodSessionPrompt = "session/prompt"
	// MethodExt is the envelope method whose real name is in ext_method.
	MethodExt = "ext"
)

// Wire and metadata keys (reference/e2a.md §1.5).
const (
	// WireLegacyAgentResponseKey holds a whole legacy AgentResponse dict in
	// E2AResponse.metadata when the AgentServer could not encode it. May
	// carry full model output.
	WireLegacyAgentResponseKey = "_e2a_wire_legacy_agent_response"
	// WireLegacyAgentChunkKey is the same for an AgentResponseChunk.
	WireLegacyAgentChunkKey = "_e2a_wire_legacy_agent_chunk"
	// WireServerPushKey is true in metadata of unsolicited push frames;
	// their request_id is not an in-flight request.
	WireServerPushKey = "_jiuwenswarm_server_push"
	// InternalCancelSourceKey records why a request was cancelled.
	InternalCancelSourceKey = "_jiuwenswarm_cancel_source"
	// CancelSourceClientDisconnect is a value of InternalCancelSourceKey.
	CancelSourceClientDisconnect = "client_disconnect"

	// InternalContextKey is the channel_context key of the Gateway's own
	// data (the fallback envelope).
	InternalContextKey = "_jiuwenswarm"
	// FallbackFailedKey is true under InternalContextKey in a fallback envelope.
	FallbackFailedKey = "normalize_failed"
	// LegacyAgentRequestKey holds the legacy AgentRequest dict of a fallback envelope.
	LegacyAgentRequestKey = "legacy_agent_request"
	// MaxLegacyAgentRequestJSONBytes is the size above which the fallback
	// envelope's legacy params are replaced by an error marker.
	MaxLegacyAgentRequestJSONBytes = 512000
)

// IsWireInternalMetadataKey reports whether k is one of the four keys of
// E2A_WIRE_INTERNAL_METADATA_KEYS, which a request's legacy metadata never
// copies into channel_context.
func IsWireInternalMetadataKey(k string) bool {
	switch k {
	case InternalCancelSourceKey, WireServerPushKey, WireLegacyAgentChunkKey, WireLegacyAgentResponseKey:
		return true
	}
	return false
}

// Delta kinds of an e2a.chunk body. The reference emits text, reasoning and
// custom only; tool events travel as custom.
const (
	DeltaText      = "text"
	DeltaReasoning = "reasoning"
	DeltaTool      = "tool"
	DeltaCustom    = "custom"
)

// Error codes are strings in E2A bodies.
const (
	CodeAgentError       = "E2A.AGENT_ERROR"
	CodeInvalidJSON      = "E2A.INVALID_JSON"
	CodeWireEncodeError  = "E2A.WIRE_ENCODE_ERROR"
	CodeChatError        = "chat.error"
	JSONRPCInternalError = -32603
)

// Event types with a protocol meaning.
const (
	EventTypeKeepalive = "keepalive"
	EventTypeChatDelta = "chat.delta"
	EventTypeChatError = "chat.error"
)

// AgentServer WebSocket facts.
const (
	// KeepaliveSequence is the sequence of the AgentServer's idle heartbeat
	// chunk (every 10 s without a real chunk).
	KeepaliveSequence = -1
	// AgentWSMaxMessageBytes is the AgentServer's max_size.
	AgentWSMaxMessageBytes = 8 << 20
	// AgentWSSendBudgetBytes is the size above which a frame is replaced by
	// an error frame.
	AgentWSSendBudgetBytes = 6 << 20
)

// File transfer methods / event types (upstream only).
const (
	FileTransferStart    = "file.transfer.start"
	FileTransferChunk    = "file.transfer.chunk"
	FileTransferComplete = "file.transfer.complete"
	FileDownloadStart    = "file.download.start"
	FileDownloadChunk    = "file.download.chunk"
	FileDownloadComplete = "file.download.complete"
)

// FileTransferEventTypes is FILE_TRANSFER_EVENT_TYPES.
var FileTransferEventTypes = [...]string{
	FileTransferStart, FileTransferChunk, FileTransferComplete,
	FileDownloadStart, FileDownloadChunk, FileDownloadComplete,
}

// File transfer error types (upstream only).
const (
	FileTransferErrTimeout          = "file.transfer.timeout"
	FileTransferErrChecksumMismatch = "file.transfer.checksum_mismatch"
	FileTransferErrChunkMissing     = "file.transfer.chunk_missing"
	FileTransferErrSizeExceeded     = "file.transfer.size_exceeded"
	FileTransferErrInvalidFile      = "file.transfer.invalid_file"
)

// FileTransferErrorTypes is FILE_TRANSFER_ERROR_TYPES.
var FileTransferErrorTypes = [...]string{
	FileTransferErrTimeout, FileTransferErrChecksumMismatch, FileTransferErrChunkMissing,
	FileTransferErrSizeExceeded, FileTransferErrInvalidFile,
}

// Converter names the reference writes into provenance.converter.
const (
	ConverterACPJSONRPC      = "jiuwenswarm.common.e2a.adapters:envelope_from_acp_jsonrpc"
	ConverterA2ASendMessage  = "jiuwenswarm.common.e2a.adapters:envelope_from_a2a_send_message"
	ConverterAgentResponse   = "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_response"
	ConverterAgentChunk      = "jiuwenswarm.common.e2a.gateway_normalize:e2a_response_from_agent_chunk"
	ConverterJSONParseError  = "jiuwenswarm.common.e2a.wire_codec:encode_json_parse_error_wire"
	responseIDInvalidJSON    = "invalid-json"
	detailsKindJSONParseErr  = "json_parse_error"
	detailsKindLegacyResp    = "legacy_agent_response"
	detailsKindLegacyChunk   = "legacy_agent_response_chunk"
	detailsKindJSONRPCReq    = "jsonrpc_request"
	detailsKindA2ASendMsg    = "a2a_send_message"
	a2aAbstractOpSendMessage = "SendMessage"
)
