package traces

import (
	"net/url"
	"strconv"
	"strings"
)

// The span of a stream follows the OpenTelemetry GenAI semantic
// conventions (gen-ai-agent-spans, registry gen_ai.*) where they fit, the
// A2A conventions (a2a.*) for A2A projections, and the general ones
// (error.type, network.*, server.*). What they have no name for keeps the
// E2A name under e2a.* (ids of the record) or is e2atap's own under
// e2atap.* (verdicts and counts). docs/traces.md is the mapping.

// OperationInvokeAgent is gen_ai.operation.name of a stream that invokes an
// agent, and the span name when the agent's name is not known.
const OperationInvokeAgent = "invoke_agent"

// OpenTelemetry semantic-convention keys.
const (
	AttrOperationName    = "gen_ai.operation.name"
	AttrAgentName        = "gen_ai.agent.name"
	AttrAgentID          = "gen_ai.agent.id"
	AttrConversationID   = "gen_ai.conversation.id"
	AttrRequestModel     = "gen_ai.request.model"
	AttrRequestStream    = "gen_ai.request.stream"
	AttrResponseID       = "gen_ai.response.id"
	AttrTimeToFirstChunk = "gen_ai.response.time_to_first_chunk" // seconds
	AttrA2AMethod        = "a2a.method.name"
	AttrA2ATaskID        = "a2a.task.id"
	AttrErrorType        = "error.type"
	AttrNetworkProtocol  = "network.protocol.name"
	AttrServerAddress    = "server.address"
	AttrServerPort       = "server.port"

	// ErrorTypeOther is error.type when the failure has no usable code.
	ErrorTypeOther = "_OTHER"
)

// E2A and EventMesh values with no semantic convention.
const (
	AttrRequestID      = "e2a.request_id"
	AttrChannel        = "e2a.channel"
	AttrMethod         = "e2a.method"
	AttrSourceProtocol = "e2a.source_protocol" // provenance.source_protocol
	AttrSID            = "eventmesh.sid"
)

// e2atap's own signals.
const (
	AttrOutcome         = "e2atap.outcome"
	AttrReason          = "e2atap.reason"
	AttrRecords         = "e2atap.records"
	AttrHeartbeats      = "e2atap.heartbeats"
	AttrErrors          = "e2atap.errors"
	AttrTap             = "e2atap.tap"
	AttrTapType         = "e2atap.tap.type"
	AttrProtocol        = "e2atap.protocol"
	AttrGap             = "e2atap.gap"
	AttrFindingsDropped = "e2atap.findings_dropped"

	EventFirstChunk = "e2atap.first_chunk"
	EventFinding    = "e2atap.finding"
	AttrRule        = "e2atap.rule"
	AttrSeverity    = "e2atap.severity"
	AttrMessage     = "e2atap.message"
)

// ReasonFinal is e2atap.reason of a stream that ended with its final record.
const ReasonFinal = "final"

// Tap describes a tap, for the network attributes and the kind of its
// spans.
type Tap struct {
	// Type is the tap's type in the configuration: ws, nats, kafka, logdir.
	Type string
	// Upstream is a ws tap's upstream URL: the agent server it relays to.
	Upstream string
}

// relays reports whether the tap is in the call's path: a ws tap forwards
// each request to the agent server itself, so its span is the client side
// of that call (SpanKindClient). The other taps only watch copies
// (SpanKindInternal).
func (tp Tap) relays() bool { return tp.Type == "ws" }

// networkProtocol is network.protocol.name for the tap's transport.
func (tp Tap) networkProtocol() string {
	switch tp.Type {
	case "ws":
		return "websocket"
	case "nats", "kafka":
		return tp.Type
	}
	return ""
}

// server returns server.address and server.port: the agent server behind
// a ws tap. The brokers of nats and kafka taps are not the agent, so they
// are not named (e2atap.tap says which tap saw the stream). The user
// information of the URL is never read.
func (tp Tap) server() (string, int) {
	if !tp.relays() || tp.Upstream == "" {
		return "", 0
	}
	u, err := url.Parse(tp.Upstream)
	if err != nil || u.Hostname() == "" {
		return "", 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		switch u.Scheme {
		case "wss", "https":
			port = 443
		default:
			port = 80
		}
	}
	return u.Hostname(), port
}

// invokesAgent reports whether a request method asks an agent for an
// answer (gen_ai.operation.name invoke_agent): the chat.* methods but
// chat.interrupt, ACP's session/prompt, and a stream whose method is not
// known (every EventMesh STREAM_REQ is a prompt). Other methods (config.*,
// history.*, session.*, ...) are calls to the agent server, not agent
// invocations: their span is named after the method and claims no GenAI
// operation.
func invokesAgent(method string) bool {
	switch {
	case method == "", method == "session/prompt":
		return true
	case method == "chat.interrupt":
		return false
	}
	return strings.HasPrefix(method, "chat.")
}

// a2aMethods are the well-known values of a2a.method.name.
var a2aMethods = map[string]string{}

func init() {
	for _, m := range []string{"CancelTask", "CreateTaskPushNotificationConfig", "DeleteTaskPushNotificationConfig",
		"GetExtendedAgentCard", "GetTask", "GetTaskPushNotificationConfig", "ListTaskPushNotificationConfigs",
		"ListTasks", "SendMessage", "SendStreamingMessage", "SubscribeToTask"} {
		a2aMethods[m] = m
	}
}
