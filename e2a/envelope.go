package e2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
)

// Loose is the value of a field the reference declares as a string (or
// string|int, or dict) but never checks: from_dict copies whatever JSON value
// it finds and to_dict writes it back unchanged. Keeping the JSON value
// instead of a Go string lets ToDict reproduce the reference byte for byte,
// including a request_id sent as a number.
//
// The value is held as encoding/json decodes it with UseNumber: nil, bool,
// string, json.Number, []any or map[string]any. The zero Loose is JSON null.
type Loose struct{ v any }

// LooseString returns a Loose holding the string s.
func LooseString(s string) Loose { return Loose{s} }

// LooseInt returns a Loose holding the integer n.
func LooseInt(n int64) Loose { return Loose{json.Number(strconv.FormatInt(n, 10))} }

// LooseOf returns a Loose holding v, a JSON value as decoded by encoding/json
// (Go numeric types are accepted too).
func LooseOf(v any) Loose { return Loose{v} }

// IsNull reports whether the value is JSON null (or absent).
func (l Loose) IsNull() bool { return l.v == nil }

// Text returns the value if it is a JSON string.
func (l Loose) Text() (string, bool) {
	s, ok := l.v.(string)
	return s, ok
}

// Is reports whether the value is the JSON string s.
func (l Loose) Is(s string) bool {
	t, ok := l.v.(string)
	return ok && t == s
}

// Any returns the JSON value itself.
func (l Loose) Any() any { return l.v }

// Truthy applies Python truthiness, as the reference does with `x or ...`.
func (l Loose) Truthy() bool { return pyTruthy(l.v) }

// Equal reports whether two values are equal under Python's == (so 1 == 1.0
// == true).
func (l Loose) Equal(o Loose) bool { return pyEqual(l.v, o.v) }

// String returns the string for a JSON string, "" for null and the JSON text
// of any other value.
func (l Loose) String() string {
	switch v := l.v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, err := appendJSONValue(nil, l.v)
	if err != nil {
		return fmt.Sprint(l.v)
	}
	return string(b)
}

// MarshalJSON writes the value as it was read.
func (l Loose) MarshalJSON() ([]byte, error) { return appendJSONValue(nil, l.v) }

// UnmarshalJSON keeps any JSON value, numbers as json.Number.
func (l *Loose) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return err
	}
	l.v = v
	return nil
}

// Provenance is E2AProvenance: where an envelope or response came from.
type Provenance struct {
	SourceProtocol string
	Converter      Loose
	ConvertedAt    Loose
	Details        map[string]any
}

// DefaultProvenance is the reference default: source_protocol "e2a", the
// rest empty.
func DefaultProvenance() Provenance { return Provenance{SourceProtocol: SourceProtocolE2A} }

// MarshalJSON writes the reference key order.
func (p Provenance) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.str("source_protocol", p.SourceProtocol)
	o.val("converter", p.Converter.v)
	o.val("converted_at", p.ConvertedAt.v)
	o.dict("details", p.Details)
	return o.end()
}

func (p Provenance) toDict() map[string]any {
	return map[string]any{
		"source_protocol": p.SourceProtocol,
		"converter":       p.Converter.v,
		"converted_at":    p.ConvertedAt.v,
		"details":         copyDict(p.Details),
	}
}

// Auth is E2AAuth, a carrier of credentials. Its String, Format and LogValue
// never show bearer_token, the references, extra_headers or _meta; only
// MarshalJSON and ToDict (the wire form) carry them, and redaction of that
// form is the exporters' job.
type Auth struct {
	MethodID      Loose
	BearerToken   Loose
	APIKeyRef     Loose
	CredentialRef Loose
	ExtraHeaders  map[string]any
	Meta          map[string]any // wire key "_meta"
}

const secretMask = "******"

// MarshalJSON writes the reference key order, secrets included: this is the
// wire form.
func (a Auth) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.val("method_id", a.MethodID.v)
	o.val("bearer_token", a.BearerToken.v)
	o.val("api_key_ref", a.APIKeyRef.v)
	o.val("credential_ref", a.CredentialRef.v)
	o.dict("extra_headers", a.ExtraHeaders)
	o.dict("_meta", a.Meta)
	return o.end()
}

func (a *Auth) toDict() map[string]any {
	if a == nil {
		return nil
	}
	return map[string]any{
		"method_id":      a.MethodID.v,
		"bearer_token":   a.BearerToken.v,
		"api_key_ref":    a.APIKeyRef.v,
		"credential_ref": a.CredentialRef.v,
		"extra_headers":  copyDict(a.ExtraHeaders),
		"_meta":          copyDict(a.Meta),
	}
}

func maskLoose(l Loose) string {
	if l.IsNull() {
		return "<nil>"
	}
	return secretMask
}

func maskDict(m map[string]any) string {
	if len(m) == 0 {
		return "{}"
	}
	return secretMask
}

// String shows method_id and which secrets are present, never their values.
func (a Auth) String() string {
	return "Auth{method_id:" + a.MethodID.String() +
		" bearer_token:" + maskLoose(a.BearerToken) +
		" api_key_ref:" + maskLoose(a.APIKeyRef) +
		" credential_ref:" + maskLoose(a.CredentialRef) +
		" extra_headers:" + maskDict(a.ExtraHeaders) +
		" _meta:" + maskDict(a.Meta) + "}"
}

// Format makes every fmt verb (%v, %+v, %#v, %s, ...) print String, so a
// stray Printf of an Envelope cannot leak a token.
func (a Auth) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(a.String())) }

// LogValue masks the secrets for log/slog.
func (a Auth) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("method_id", a.MethodID.String()),
		slog.String("bearer_token", maskLoose(a.BearerToken)),
		slog.String("api_key_ref", maskLoose(a.APIKeyRef)),
		slog.String("credential_ref", maskLoose(a.CredentialRef)),
		slog.String("extra_headers", maskDict(a.ExtraHeaders)),
		slog.String("_meta", maskDict(a.Meta)),
	)
}

// FileRef is E2AFileRef, the recommended element of params.files and
// params.attachments. The reference's from_dict never builds one (the
// elements stay raw dicts in params); FileRefFromDict reads one.
type FileRef struct {
	URI      string
	Name     Loose
	MimeType Loose
	Size     Loose // int or null
	Meta     map[string]any
}

// FileRefFromDict reads a FileRef; uri is required and must be a string
// (E2AFileRef(**d) would fail without it).
func FileRefFromDict(m map[string]any) (FileRef, error) {
	uri, ok := m["uri"].(string)
	if !ok {
		return FileRef{}, &DictError{Key: "uri", PyType: "TypeError", Msg: "file reference needs a string uri"}
	}
	meta, err := pyDict(m["_meta"])
	if err != nil {
		return FileRef{}, wrapDictErr("_meta", err)
	}
	return FileRef{URI: uri, Name: Loose{m["name"]}, MimeType: Loose{m["mime_type"]}, Size: Loose{m["size"]}, Meta: meta}, nil
}

// MarshalJSON writes the reference key order.
func (f FileRef) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.str("uri", f.URI)
	o.val("name", f.Name.v)
	o.val("mime_type", f.MimeType.v)
	o.val("size", f.Size.v)
	o.dict("_meta", f.Meta)
	return o.end()
}

// Envelope is E2AEnvelope, a request from the Gateway (or an ACP/A2A
// adapter) to the AgentServer. Field order is the reference's to_dict key
// order. Build one with NewEnvelope (reference defaults) or EnvelopeFromDict.
type Envelope struct {
	ProtocolVersion Loose
	Provenance      Provenance
	RequestID       Loose
	JSONRPCID       Loose // string, int or null
	CorrelationID   Loose
	TaskID          Loose
	ContextID       Loose
	SessionID       Loose
	MessageID       Loose
	// Timestamp is a string or nil after from_dict: epochs are converted,
	// strings are kept unvalidated.
	Timestamp      *string
	IdentityOrigin Loose // a valid origin string, or the raw non-string value
	Channel        Loose
	UserID         Loose
	AgentRef       Loose // routing dict, e.g. {"mode":"code","id":"default"}
	ChatID         Loose
	SourceAgentID  Loose
	// AgentID, ServiceID and WorkspaceKey (upstream only) are stripped,
	// non-blank strings or nil.
	AgentID             *string
	ServiceID           *string
	WorkspaceKey        *string
	Method              Loose
	Params              map[string]any
	ExtMethod           Loose
	SessionUpdateKind   Loose
	IsStream            bool
	ExpectedOutputModes []any
	Auth                *Auth
	ChannelContext      map[string]any
	A2AMetadata         map[string]any
	ACPMeta             map[string]any
}

// NewEnvelope returns an envelope with the reference dataclass defaults.
func NewEnvelope() *Envelope {
	return &Envelope{
		ProtocolVersion: LooseString(ProtocolVersion),
		Provenance:      DefaultProvenance(),
		IdentityOrigin:  LooseString(string(OriginUser)),
		Params:          map[string]any{},
		ChannelContext:  map[string]any{},
		A2AMetadata:     map[string]any{},
		ACPMeta:         map[string]any{},
	}
}

// MarshalJSON writes the reference to_dict output: every field, nulls and
// empty containers included, in the reference key order. Keys inside free
// dicts (params, channel_context, ...) come out sorted: a Go map does not
// keep the sender's order.
func (e Envelope) MarshalJSON() ([]byte, error) {
	var o jsonObject
	o.begin()
	o.val("protocol_version", e.ProtocolVersion.v)
	o.val("provenance", e.Provenance)
	o.val("request_id", e.RequestID.v)
	o.val("jsonrpc_id", e.JSONRPCID.v)
	o.val("correlation_id", e.CorrelationID.v)
	o.val("task_id", e.TaskID.v)
	o.val("context_id", e.ContextID.v)
	o.val("session_id", e.SessionID.v)
	o.val("message_id", e.MessageID.v)
	o.strp("timestamp", e.Timestamp)
	o.val("identity_origin", e.IdentityOrigin.v)
	o.val("channel", e.Channel.v)
	o.val("user_id", e.UserID.v)
	o.val("agent_ref", e.AgentRef.v)
	o.val("chat_id", e.ChatID.v)
	o.val("source_agent_id", e.SourceAgentID.v)
	o.strp("agent_id", e.AgentID)
	o.strp("service_id", e.ServiceID)
	o.strp("workspace_key", e.WorkspaceKey)
	o.val("method", e.Method.v)
	o.dict("params", e.Params)
	o.val("ext_method", e.ExtMethod.v)
	o.val("session_update_kind", e.SessionUpdateKind.v)
	o.boolean("is_stream", e.IsStream)
	o.list("expected_output_modes", e.ExpectedOutputModes)
	if e.Auth == nil {
		o.val("auth", nil)
	} else {
		o.val("auth", *e.Auth)
	}
	o.dict("channel_context", e.ChannelContext)
	o.dict("a2a_metadata", e.A2AMetadata)
	o.dict("acp_meta", e.ACPMeta)
	return o.end()
}

// ToDict returns the reference to_dict output as a map (top-level dicts are
// copied, their values shared). Use MarshalJSON for the key order.
func (e Envelope) ToDict() map[string]any {
	modes := e.ExpectedOutputModes
	if modes == nil {
		modes = []any{}
	}
	var auth any
	if e.Auth != nil {
		auth = e.Auth.toDict()
	}
	return map[string]any{
		"protocol_version":      e.ProtocolVersion.v,
		"provenance":            e.Provenance.toDict(),
		"request_id":            e.RequestID.v,
		"jsonrpc_id":            e.JSONRPCID.v,
		"correlation_id":        e.CorrelationID.v,
		"task_id":               e.TaskID.v,
		"context_id":            e.ContextID.v,
		"session_id":            e.SessionID.v,
		"message_id":            e.MessageID.v,
		"timestamp":             strpAny(e.Timestamp),
		"identity_origin":       e.IdentityOrigin.v,
		"channel":               e.Channel.v,
		"user_id":               e.UserID.v,
		"agent_ref":             e.AgentRef.v,
		"chat_id":               e.ChatID.v,
		"source_agent_id":       e.SourceAgentID.v,
		"agent_id":              strpAny(e.AgentID),
		"service_id":            strpAny(e.ServiceID),
		"workspace_key":         strpAny(e.WorkspaceKey),
		"method":                e.Method.v,
		"params":                copyDict(e.Params),
		"ext_method":            e.ExtMethod.v,
		"session_update_kind":   e.SessionUpdateKind.v,
		"is_stream":             e.IsStream,
		"expected_output_modes": append([]any(nil), modes...),
		"auth":                  auth,
		"channel_context":       copyDict(e.ChannelContext),
		"a2a_metadata":          copyDict(e.A2AMetadata),
		"acp_meta":              copyDict(e.ACPMeta),
	}
}

// LogValue logs the routing ids only: no params (user text), no auth, no
// channel_context.
func (e Envelope) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("request_id", e.RequestID.String()),
		slog.String("session_id", e.SessionID.String()),
		slog.String("method", e.Method.String()),
		slog.String("channel", e.Channel.String()),
		slog.Bool("is_stream", e.IsStream),
	)
}

// jsonObject appends one JSON object with keys in call order.
type jsonObject struct {
	b   []byte
	err error
}

func (o *jsonObject) begin() { o.b = append(o.b[:0], '{') }

func (o *jsonObject) key(k string) {
	if len(o.b) > 1 {
		o.b = append(o.b, ',')
	}
	o.b = appendJSONString(o.b, k)
	o.b = append(o.b, ':')
}

func (o *jsonObject) val(k string, v any) {
	if o.err != nil {
		return
	}
	o.key(k)
	o.b, o.err = appendJSONValue(o.b, v)
}

func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.b = appendJSONString(o.b, v)
}

func (o *jsonObject) strp(k string, v *string) {
	if v == nil {
		o.key(k)
		o.b = append(o.b, "null"...)
		return
	}
	o.str(k, *v)
}

func (o *jsonObject) boolean(k string, v bool) {
	o.key(k)
	o.b = strconv.AppendBool(o.b, v)
}

func (o *jsonObject) dict(k string, m map[string]any) {
	if m == nil {
		o.key(k)
		o.b = append(o.b, "{}"...)
		return
	}
	o.val(k, m)
}

func (o *jsonObject) list(k string, l []any) {
	if l == nil {
		o.key(k)
		o.b = append(o.b, "[]"...)
		return
	}
	o.val(k, l)
}

func (o *jsonObject) end() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	return append(o.b, '}'), nil
}

// appendJSONValue encodes v without HTML escaping (the reference writes
// json.dumps(..., ensure_ascii=False): "<" stays "<").
func appendJSONValue(dst []byte, v any) ([]byte, error) {
	if v == nil {
		return append(dst, "null"...), nil
	}
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // Encode adds a newline
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := appendJSONValue(dst, s) // a string always encodes
	return b
}

func strpAny(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func copyDict(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
