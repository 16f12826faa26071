package e2a

// Class is what a JSON message is, as far as e2atap is concerned.
type Class uint8

const (
	// ClassUnknown is a JSON object none of the protocols claim.
	ClassUnknown Class = iota
	// ClassResponse is an E2AResponse record.
	ClassResponse
	// ClassRequest is an E2AEnvelope (current or legacy AgentRequest shape).
	ClassRequest
	// ClassEvent is a `{"type":"event",...}` frame such as connection.ack.
	ClassEvent
	// ClassJSONRPC is an ACP/A2A JSON-RPC 2.0 message.
	ClassJSONRPC
	// ClassCloudEvent is a CloudEvents 1.0 structured-mode JSON event.
	ClassCloudEvent
	// ClassLegacyResponse is a deprecated AgentResponse / AgentResponseChunk
	// dict that the reference Gateway still accepts with a warning.
	ClassLegacyResponse
)

var classNames = [...]string{"unknown", "response", "request", "event", "jsonrpc", "cloudevent", "legacy_response"}

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "invalid"
}

// Classify tells the kinds of message apart from the keys a Record holds.
// The order matters and is the same in every profile:
//
//  1. "type":"event" is an event frame (the reference Gateway routes these
//     before anything else);
//  2. a "jsonrpc" key is JSON-RPC;
//  3. "specversion" is a CloudEvent;
//  4. "response_kind", or any of sequence/is_final/status without a
//     method or params, is a response (a response that lost its kind is
//     still a response, so that e2a.required can say so);
//  5. the deprecated legacy response shapes (request_id + channel_id + ok,
//     or + is_complete + payload) are legacy responses;
//  6. method, req_method, params or request_id is a request.
func Classify(r *Record) Class {
	f := &r.Fields
	switch {
	case f[FType].Is("event"):
		return ClassEvent
	case f[FJSONRPC].Type != Absent:
		return ClassJSONRPC
	case f[FSpecVersion].Type != Absent:
		return ClassCloudEvent
	}
	hasMethod := f[FMethod].Type != Absent || f[FParams].Type != Absent || f[FReqMethod].Type != Absent
	if f[FResponseKind].Type != Absent ||
		(!hasMethod && (f[FSequence].Type != Absent || f[FIsFinal].Type != Absent || f[FStatus].Type != Absent)) {
		return ClassResponse
	}
	if f[FRequestID].Type != Absent && f[FChannelID].Type != Absent &&
		(f[FOk].Type != Absent || (f[FIsComplete].Type != Absent && f[FPayload].Type != Absent)) {
		return ClassLegacyResponse
	}
	if hasMethod || f[FRequestID].Type != Absent {
		return ClassRequest
	}
	return ClassUnknown
}

// IsResponseWireDict mirrors the reference discriminator
// is_e2a_response_wire_dict: not an event frame, protocol_version exactly
// "1.0", and a non-blank string response_kind. Classify is deliberately
// looser (a response with protocol_version "2.0" is still validated as a
// response); this one answers "would the reference Gateway take it".
func IsResponseWireDict(r *Record) bool {
	f := &r.Fields
	if f[FType].Is("event") || !f[FProtocolVersion].Is("1.0") || f[FResponseKind].Type != String {
		return false
	}
	for _, c := range f[FResponseKind].Str {
		switch c {
		case ' ', '\t', '\n', '\r', '\v', '\f':
		default:
			return true
		}
	}
	return false
}
