package e2a

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file mirrors the reference from_dict rules (reference/e2a.md §4, §5),
// including the Python semantics they lean on: truthiness, str(), int(),
// dict(), list() and datetime.fromtimestamp(...).isoformat().

// DictError is returned where the reference's from_dict (or an adapter)
// raises: the whole decode fails.
type DictError struct {
	// Key is the top-level key at fault ("" when none applies).
	Key string
	// PyType is the exception the reference raises (ValueError, TypeError,
	// AttributeError, OverflowError), or "" for a limit of this port that
	// the reference does not have (an integer beyond int64).
	PyType string
	// Msg is the reference's message where it is known.
	Msg string
}

func (e *DictError) Error() string {
	if e.Key == "" {
		return "e2a: " + e.Msg
	}
	return "e2a: " + e.Key + ": " + e.Msg
}

func wrapDictErr(key string, err error) error {
	var de *DictError
	if errors.As(err, &de) && de.Key == "" {
		c := *de
		c.Key = key
		return &c
	}
	return err
}

// ErrTrailingData is returned by DecodeDict for input with more than one
// JSON value.
var ErrTrailingData = errors.New("e2a: data after the JSON object")

// DecodeDict decodes one JSON object keeping integers as json.Number, the
// form EnvelopeFromDict and ResponseFromDict expect.
func DecodeDict(data []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, ErrTrailingData
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, ErrNotObject
	}
	return m, nil
}

// EnvelopeFromJSON decodes one JSON object with EnvelopeFromDict.
func EnvelopeFromJSON(data []byte) (*Envelope, error) {
	m, err := DecodeDict(data)
	if err != nil {
		return nil, err
	}
	return EnvelopeFromDict(m)
}

// ResponseFromJSON decodes one JSON object with ResponseFromDict.
func ResponseFromJSON(data []byte) (*Response, error) {
	m, err := DecodeDict(data)
	if err != nil {
		return nil, err
	}
	return ResponseFromDict(m)
}

// UnmarshalJSON applies the from_dict rules, so json.Unmarshal into an
// Envelope reads legacy shapes the way the AgentServer does.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	n, err := EnvelopeFromJSON(b)
	if err != nil {
		return err
	}
	*e = *n
	return nil
}

// UnmarshalJSON applies the from_dict rules.
func (r *Response) UnmarshalJSON(b []byte) error {
	n, err := ResponseFromJSON(b)
	if err != nil {
		return err
	}
	*r = *n
	return nil
}

// EnvelopeFromDict mirrors E2AEnvelope.from_dict: legacy keys are migrated
// (binding, payload, metadata, app_id, channel_id, req_method, workspace_dir),
// values are coerced the way Python does, unknown keys are dropped. It fails
// only where the reference raises: an invalid identity_origin string, a
// non-object auth, a container that dict()/list() cannot convert, an epoch
// timestamp out of datetime's range.
//
// m must hold JSON values as encoding/json decodes them; with UseNumber
// (DecodeDict) integers keep their exact form. m is not modified.
func EnvelopeFromDict(m map[string]any) (*Envelope, error) {
	prov, err := provenanceFromDict(m["provenance"])
	if err != nil {
		return nil, wrapDictErr("provenance", err)
	}
	prov = migrateBinding(m, prov)

	origin, err := originFromDict(m, OriginUser)
	if err != nil {
		return nil, err
	}

	params, err := pyDict(m["params"])
	if err != nil {
		return nil, wrapDictErr("params", err)
	}
	if payload, ok := m["payload"].(map[string]any); ok {
		for k, v := range payload {
			if _, dup := params[k]; dup || v == nil || isEmptyContainer(v) {
				continue
			}
			params[k] = v
		}
	}

	auth, err := authFromDict(m["auth"])
	if err != nil {
		return nil, wrapDictErr("auth", err)
	}

	cc, err := pyDict(m["channel_context"])
	if err != nil {
		return nil, wrapDictErr("channel_context", err)
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		for k, v := range meta {
			if IsWireInternalMetadataKey(k) {
				continue
			}
			if _, dup := cc[k]; !dup {
				cc[k] = v
			}
		}
	}
	if app, ok := m["app_id"]; ok && pyTruthy(app) {
		if _, dup := cc["app_id"]; !dup {
			cc["app_id"] = app
		}
	}

	channel := m["channel"]
	if channel == nil {
		channel = m["channel_id"]
	}

	method := m["method"]
	if method == nil {
		if rm, ok := m["req_method"].(string); ok {
			method = rm
		}
	}

	e := &Envelope{
		ProtocolVersion: protocolVersionFromDict(m),
		Provenance:      prov,
		RequestID:       Loose{m["request_id"]},
		JSONRPCID:       Loose{m["jsonrpc_id"]},
		CorrelationID:   Loose{m["correlation_id"]},
		TaskID:          Loose{m["task_id"]},
		ContextID:       Loose{m["context_id"]},
		SessionID:       Loose{m["session_id"]},
		MessageID:       Loose{m["message_id"]},
		IdentityOrigin:  origin,
		Channel:         Loose{channel},
		UserID:          Loose{m["user_id"]},
		AgentRef:        Loose{m["agent_ref"]},
		ChatID:          Loose{m["chat_id"]},
		SourceAgentID:   Loose{m["source_agent_id"]},
		Method:          Loose{method},
		Params:          params,
		ExtMethod:       Loose{m["ext_method"]},
		// session_update_kind is not checked against ACPSessionUpdateKinds.
		SessionUpdateKind: Loose{m["session_update_kind"]},
		IsStream:          pyTruthy(m["is_stream"]),
		Auth:              auth,
		ChannelContext:    cc,
	}
	if e.Timestamp, err = normalizeTimestamp(m["timestamp"]); err != nil {
		return nil, wrapDictErr("timestamp", err)
	}
	e.AgentID = wireStr(m["agent_id"])
	if e.AgentID == nil {
		e.AgentID = wireStr(m["source_agent_id"])
	}
	e.ServiceID = wireStr(m["service_id"])
	e.WorkspaceKey = wireStr(m["workspace_key"])
	if e.WorkspaceKey == nil {
		e.WorkspaceKey = wireStr(m["workspace_dir"])
	}
	if e.ExpectedOutputModes, err = pyList(m["expected_output_modes"]); err != nil {
		return nil, wrapDictErr("expected_output_modes", err)
	}
	if e.A2AMetadata, err = pyDict(m["a2a_metadata"]); err != nil {
		return nil, wrapDictErr("a2a_metadata", err)
	}
	if e.ACPMeta, err = pyDict(m["acp_meta"]); err != nil {
		return nil, wrapDictErr("acp_meta", err)
	}
	return e, nil
}

// ResponseFromDict mirrors E2AResponse.from_dict: no binding migration,
// metadata stays in metadata (internal keys included), sequence goes through
// int() with failures read as 0, is_final through truthiness, status through
// str() without validation. It fails where the reference raises (invalid
// identity_origin string, unconvertible containers, out-of-range epochs, an
// infinite sequence) and, unlike the reference, on a sequence beyond int64.
func ResponseFromDict(m map[string]any) (*Response, error) {
	prov, err := provenanceFromDict(m["provenance"])
	if err != nil {
		return nil, wrapDictErr("provenance", err)
	}
	origin, err := originFromDict(m, OriginAgent)
	if err != nil {
		return nil, err
	}
	seq, err := pySequence(m["sequence"])
	if err != nil {
		return nil, wrapDictErr("sequence", err)
	}
	channel := m["channel"]
	if channel == nil {
		channel = m["channel_id"]
	}
	status := StatusInProgress
	if v, ok := m["status"]; ok {
		status = pyStr(v)
	}
	kind := ""
	if v := m["response_kind"]; pyTruthy(v) {
		kind = pyStr(v)
	}
	r := &Response{
		ProtocolVersion: protocolVersionFromDict(m),
		ResponseID:      Loose{m["response_id"]},
		RequestID:       Loose{m["request_id"]},
		Sequence:        seq,
		IsFinal:         pyTruthy(m["is_final"]),
		Status:          status,
		ResponseKind:    kind,
		Provenance:      prov,
		JSONRPCID:       Loose{m["jsonrpc_id"]},
		CorrelationID:   Loose{m["correlation_id"]},
		TaskID:          Loose{m["task_id"]},
		ContextID:       Loose{m["context_id"]},
		SessionID:       Loose{m["session_id"]},
		MessageID:       Loose{m["message_id"]},
		IsStream:        pyTruthy(m["is_stream"]),
		IdentityOrigin:  origin,
		Channel:         Loose{channel},
		UserID:          Loose{m["user_id"]},
		AgentRef:        Loose{m["agent_ref"]},
		SourceAgentID:   Loose{m["source_agent_id"]},
		Method:          Loose{m["method"]},
	}
	if r.Timestamp, err = normalizeTimestamp(m["timestamp"]); err != nil {
		return nil, wrapDictErr("timestamp", err)
	}
	for _, d := range []struct {
		key string
		dst *map[string]any
	}{
		{"body", &r.Body},
		{"projections", &r.Projections},
		{"channel_context", &r.ChannelContext},
		{"metadata", &r.Metadata},
		{"a2a_metadata", &r.A2AMetadata},
		{"acp_meta", &r.ACPMeta},
	} {
		if *d.dst, err = pyDict(m[d.key]); err != nil {
			return nil, wrapDictErr(d.key, err)
		}
	}
	return r, nil
}

func protocolVersionFromDict(m map[string]any) Loose {
	if v, ok := m["protocol_version"]; ok {
		return Loose{v}
	}
	return LooseString(ProtocolVersion)
}

// originFromDict: a string must be a valid origin (else ValueError); any
// other JSON value, null included, is kept as it is.
func originFromDict(m map[string]any, def IdentityOrigin) (Loose, error) {
	v, ok := m["identity_origin"]
	if !ok {
		return LooseString(string(def)), nil
	}
	if s, isStr := v.(string); isStr {
		if !IdentityOrigin(s).Valid() {
			return Loose{}, &DictError{Key: "identity_origin", PyType: "ValueError",
				Msg: pyRepr(s) + " is not a valid IdentityOrigin"}
		}
	}
	return Loose{v}, nil
}

func provenanceFromDict(raw any) (Provenance, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return DefaultProvenance(), nil
	}
	p := Provenance{SourceProtocol: SourceProtocolE2A, Converter: Loose{m["converter"]}, ConvertedAt: Loose{m["converted_at"]}}
	if v, ok := m["source_protocol"]; ok {
		p.SourceProtocol = pyStr(v)
	}
	var err error
	if p.Details, err = pyDict(m["details"]); err != nil {
		return Provenance{}, err
	}
	return p, nil
}

// migrateBinding moves the legacy binding into
// provenance.details.migrated_from_binding, and sets source_protocol from it
// only while that is still "e2a".
func migrateBinding(m map[string]any, p Provenance) Provenance {
	legacy := m["binding"]
	if legacy == nil || p.Details["migrated_from_binding"] != nil {
		return p
	}
	if lm, ok := legacy.(map[string]any); ok {
		if v, has := lm["value"]; has {
			legacy = v
		}
	}
	s := ""
	if legacy != nil {
		s = pyStr(legacy)
	}
	d := copyDict(p.Details)
	d["migrated_from_binding"] = s
	p.Details = d
	if p.SourceProtocol == SourceProtocolE2A && (s == SourceProtocolACP || s == SourceProtocolA2A) {
		p.SourceProtocol = s
	}
	return p
}

func authFromDict(raw any) (*Auth, error) {
	if raw == nil {
		return nil, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, &DictError{PyType: "AttributeError", Msg: "'" + pyTypeName(raw) + "' object has no attribute 'get'"}
	}
	a := &Auth{MethodID: Loose{m["method_id"]}, BearerToken: Loose{m["bearer_token"]},
		APIKeyRef: Loose{m["api_key_ref"]}, CredentialRef: Loose{m["credential_ref"]}}
	var err error
	if a.ExtraHeaders, err = pyDict(m["extra_headers"]); err != nil {
		return nil, err
	}
	if a.Meta, err = pyDict(m["_meta"]); err != nil {
		return nil, err
	}
	return a, nil
}

// wireStr is _normalize_optional_wire_str: a stripped, non-blank string or nil.
func wireStr(v any) *string {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	s = strings.TrimFunc(s, pyIsSpace)
	if s == "" {
		return nil
	}
	return &s
}

// normalizeTimestamp is _normalize_timestamp_value: strings pass unchanged
// (no validation), numbers and booleans are epoch seconds written as
// datetime.fromtimestamp(x, UTC).isoformat(), containers become str(x).
func normalizeTimestamp(v any) (*string, error) {
	switch t := v.(type) {
	case nil:
		return nil, nil
	case string:
		return &t, nil
	case bool:
		s, err := pyISOFromTimestamp(b2f(t))
		return strPtrErr(s, err)
	}
	if n, ok := pyNum(v); ok {
		f, err := n.float()
		if err != nil {
			return nil, err
		}
		s, err := pyISOFromTimestamp(f)
		return strPtrErr(s, err)
	}
	s := pyStr(v)
	return &s, nil
}

func strPtrErr(s string, err error) (*string, error) {
	if err != nil {
		return nil, err
	}
	return &s, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Python's datetime range as Unix seconds: 0001-01-01 .. 9999-12-31T23:59:59.
const (
	pyMinUnix = -62135596800
	pyMaxUnix = 253402300799
)

// pyISOFromTimestamp rounds to the microsecond half-to-even as CPython does
// (_PyTime_ObjectToTimeval), then writes isoformat with "+00:00" and the
// fraction only when it is not zero.
func pyISOFromTimestamp(f float64) (string, error) {
	if math.IsNaN(f) {
		return "", &DictError{PyType: "ValueError", Msg: "Invalid value NaN (not a number)"}
	}
	sec, frac := math.Modf(f)
	us := math.RoundToEven(frac * 1e6)
	if us >= 1e6 {
		us -= 1e6
		sec++
	} else if us < 0 {
		us += 1e6
		sec--
	}
	if sec < -9.223372036854775808e18 || sec >= 9.223372036854775808e18 {
		return "", &DictError{PyType: "OverflowError", Msg: "timestamp out of range for platform time_t"}
	}
	s := int64(sec)
	if s < pyMinUnix || s > pyMaxUnix {
		return "", &DictError{PyType: "ValueError", Msg: fmt.Sprintf("year %d is out of range", time.Unix(s, 0).UTC().Year())}
	}
	return formatPyISO(time.Unix(s, int64(us)*1000).UTC()), nil
}

// formatPyISO writes t (UTC) as Python's isoformat of an aware datetime,
// truncated to microseconds.
func formatPyISO(t time.Time) string {
	t = t.UTC()
	b := make([]byte, 0, 32)
	b = appendPad(b, t.Year(), 4)
	b = append(b, '-')
	b = appendPad(b, int(t.Month()), 2)
	b = append(b, '-')
	b = appendPad(b, t.Day(), 2)
	b = append(b, 'T')
	b = appendPad(b, t.Hour(), 2)
	b = append(b, ':')
	b = appendPad(b, t.Minute(), 2)
	b = append(b, ':')
	b = appendPad(b, t.Second(), 2)
	if us := t.Nanosecond() / 1000; us != 0 {
		b = append(b, '.')
		b = appendPad(b, us, 6)
	}
	return string(append(b, "+00:00"...))
}

func appendPad(b []byte, n, width int) []byte {
	s := strconv.Itoa(n)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// utcNowISO is the reference utc_now_iso() with an injectable clock.
func utcNowISO(now func() time.Time) string {
	if now == nil {
		now = time.Now
	}
	return formatPyISO(now())
}

// pySequence is `int(x)` with TypeError/ValueError read as 0.
func pySequence(v any) (int64, error) {
	switch t := v.(type) {
	case nil:
		return 0, nil
	case bool:
		if t {
			return 1, nil
		}
		return 0, nil
	case string:
		n, ok, big := pyIntFromString(t)
		if big {
			return 0, &DictError{Msg: "integer beyond int64"}
		}
		if !ok {
			return 0, nil
		}
		return n, nil
	}
	n, ok := pyNum(v)
	if !ok {
		return 0, nil // list, dict: TypeError → 0
	}
	if n.isInt {
		if n.big {
			return 0, &DictError{Msg: "integer beyond int64"}
		}
		return n.i, nil
	}
	if math.IsInf(n.f, 0) {
		return 0, &DictError{PyType: "OverflowError", Msg: "cannot convert float infinity to integer"}
	}
	t := math.Trunc(n.f)
	if t < -9.223372036854775808e18 || t >= 9.223372036854775808e18 {
		return 0, &DictError{Msg: "integer beyond int64"}
	}
	return int64(t), nil
}

// pyIntFromString is int(str) in base 10: surrounding whitespace, a sign,
// Unicode decimal digits, single underscores between digits. big reports a
// valid integer beyond int64.
func pyIntFromString(s string) (n int64, ok, big bool) {
	s = strings.TrimFunc(s, pyIsSpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return 0, false, false
	}
	var u uint64
	over := false
	prevDigit := false
	for _, r := range s {
		if r == '_' {
			if !prevDigit {
				return 0, false, false
			}
			prevDigit = false
			continue
		}
		d, isDigit := pyDigit(r)
		if !isDigit {
			return 0, false, false
		}
		prevDigit = true
		if !over {
			if u > (math.MaxUint64-uint64(d))/10 {
				over = true
			} else {
				u = u*10 + uint64(d)
			}
		}
	}
	if !prevDigit {
		return 0, false, false // trailing underscore
	}
	if over || (!neg && u > math.MaxInt64) || (neg && u > 1<<63) {
		return 0, false, true
	}
	if neg {
		return -int64(u), true, false
	}
	return int64(u), true, false
}

// pyDigit returns the value of a Unicode decimal digit (category Nd). Nd
// code points come in aligned runs of ten starting at a zero.
func pyDigit(r rune) (int, bool) {
	if r >= '0' && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	start := r
	for start > 0 && unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10, true
}

// pyIsSpace is Python's str.isspace for one code point.
func pyIsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// pyNumber is a JSON number as Python's json module reads it: an int
// (arbitrary precision) for literals without fraction or exponent, else a
// float.
type pyNumber struct {
	isInt bool
	big   bool   // an int beyond int64; lit holds it
	i     int64  // when isInt && !big
	lit   string // the literal of an int
	f     float64
}

func pyNum(v any) (pyNumber, bool) {
	switch t := v.(type) {
	case json.Number:
		s := string(t)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil && !isRangeErr(err) {
				return pyNumber{}, false
			}
			return pyNumber{f: f}, true // Python reads 1e400 as inf
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			if !isRangeErr(err) {
				return pyNumber{}, false
			}
			return pyNumber{isInt: true, big: true, lit: s}, true
		}
		return pyNumber{isInt: true, i: i, lit: strconv.FormatInt(i, 10)}, true
	case float64:
		return pyNumber{f: t}, true
	case float32:
		return pyNumber{f: float64(t)}, true
	case int:
		return pyInt(int64(t)), true
	case int8:
		return pyInt(int64(t)), true
	case int16:
		return pyInt(int64(t)), true
	case int32:
		return pyInt(int64(t)), true
	case int64:
		return pyInt(t), true
	case uint:
		return pyUint(uint64(t)), true
	case uint8:
		return pyInt(int64(t)), true
	case uint16:
		return pyInt(int64(t)), true
	case uint32:
		return pyInt(int64(t)), true
	case uint64:
		return pyUint(t), true
	}
	return pyNumber{}, false
}

func pyInt(i int64) pyNumber {
	return pyNumber{isInt: true, i: i, lit: strconv.FormatInt(i, 10)}
}

func pyUint(u uint64) pyNumber {
	if u > math.MaxInt64 {
		return pyNumber{isInt: true, big: true, lit: strconv.FormatUint(u, 10)}
	}
	return pyInt(int64(u))
}

func isRangeErr(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

// float is Python's float(x).
func (n pyNumber) float() (float64, error) {
	if !n.isInt {
		return n.f, nil
	}
	if !n.big {
		return float64(n.i), nil
	}
	f, err := strconv.ParseFloat(n.lit, 64)
	if err != nil {
		return 0, &DictError{PyType: "OverflowError", Msg: "int too large to convert to float"}
	}
	return f, nil
}

func (n pyNumber) isZero() bool {
	if n.isInt {
		return !n.big && n.i == 0
	}
	return n.f == 0
}

func (n pyNumber) bigFloat() *big.Float {
	if n.isInt {
		if n.big {
			b, _ := new(big.Int).SetString(n.lit, 10)
			return new(big.Float).SetInt(b)
		}
		return new(big.Float).SetInt64(n.i)
	}
	return new(big.Float).SetFloat64(n.f)
}

// pyTruthy is Python's bool(x) for a JSON value.
func pyTruthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	if n, ok := pyNum(v); ok {
		return !n.isZero()
	}
	return true
}

func isEmptyContainer(v any) bool {
	switch t := v.(type) {
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// pyEqual is Python's == for JSON values: numbers (booleans included) compare
// by value across int and float.
func pyEqual(a, b any) bool {
	na, aNum := pyNumOrBool(a)
	nb, bNum := pyNumOrBool(b)
	if aNum || bNum {
		if !aNum || !bNum {
			return false
		}
		if (!na.isInt && math.IsNaN(na.f)) || (!nb.isInt && math.IsNaN(nb.f)) {
			return false
		}
		if na.isInt && nb.isInt && !na.big && !nb.big {
			return na.i == nb.i
		}
		return na.bigFloat().Cmp(nb.bigFloat()) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !pyEqual(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

func pyNumOrBool(v any) (pyNumber, bool) {
	if b, ok := v.(bool); ok {
		if b {
			return pyInt(1), true
		}
		return pyInt(0), true
	}
	return pyNum(v)
}

// pyTypeName is type(x).__name__ for a JSON value.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case []any:
		return "list"
	case map[string]any:
		return "dict"
	}
	if n, ok := pyNum(v); ok {
		if n.isInt {
			return "int"
		}
		return "float"
	}
	return fmt.Sprintf("%T", v)
}

// pyDict is dict(x or {}): a falsy value gives {}, an object is copied, a
// list of pairs is converted; anything else raises as in Python.
func pyDict(v any) (map[string]any, error) {
	if !pyTruthy(v) {
		return map[string]any{}, nil
	}
	switch t := v.(type) {
	case map[string]any:
		return copyDict(t), nil
	case []any:
		out := make(map[string]any, len(t))
		for i, el := range t {
			pair, err := pySeqOf(el)
			if err != nil {
				return nil, &DictError{PyType: "TypeError",
					Msg: fmt.Sprintf("cannot convert dictionary update sequence element #%d to a sequence", i)}
			}
			if len(pair) != 2 {
				return nil, &DictError{PyType: "ValueError",
					Msg: fmt.Sprintf("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))}
			}
			k, err := pyJSONKey(pair[0])
			if err != nil {
				return nil, err
			}
			out[k] = pair[1]
		}
		return out, nil
	case string:
		return nil, &DictError{PyType: "ValueError", Msg: "dictionary update sequence element #0 has length 1; 2 is required"}
	}
	return nil, &DictError{PyType: "TypeError", Msg: "'" + pyTypeName(v) + "' object is not iterable"}
}

// pyList is list(x or []).
func pyList(v any) ([]any, error) {
	if !pyTruthy(v) {
		return []any{}, nil
	}
	l, err := pySeqOf(v)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// pySeqOf iterates v as Python would: a list's items, a string's code
// points, an object's keys (sorted here: the sender's order is gone).
func pySeqOf(v any) ([]any, error) {
	switch t := v.(type) {
	case []any:
		return append([]any{}, t...), nil
	case string:
		out := make([]any, 0, utf8.RuneCountInString(t))
		for _, r := range t {
			out = append(out, string(r))
		}
		return out, nil
	case map[string]any:
		keys := sortedKeys(t)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	}
	return nil, &DictError{PyType: "TypeError", Msg: "'" + pyTypeName(v) + "' object is not iterable"}
}

// pyJSONKey is the key json.dumps writes for a dict key.
func pyJSONKey(k any) (string, error) {
	switch t := k.(type) {
	case string:
		return t, nil
	case nil:
		return "null", nil
	case bool:
		if t {
			return "true", nil
		}
		return "false", nil
	case []any, map[string]any:
		return "", &DictError{PyType: "TypeError", Msg: "unhashable type: '" + pyTypeName(k) + "'"}
	}
	return pyStr(k), nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pyStr is Python's str(x) for a JSON value.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr is Python's repr(x) for a JSON value. Dict keys come out sorted (a
// Go map has no insertion order).
func pyRepr(v any) string {
	var b strings.Builder
	writePyRepr(&b, v)
	return b.String()
}

func writePyRepr(b *strings.Builder, v any) {
	switch t := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if t {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		writePyStrRepr(b, t)
	case []any:
		b.WriteByte('[')
		for i, el := range t {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyRepr(b, el)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(t) {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyStrRepr(b, k)
			b.WriteString(": ")
			writePyRepr(b, t[k])
		}
		b.WriteByte('}')
	default:
		n, ok := pyNum(v)
		switch {
		case !ok:
			fmt.Fprint(b, v)
		case n.isInt:
			b.WriteString(n.lit)
		default:
			b.WriteString(pyFloatRepr(n.f))
		}
	}
}

func writePyStrRepr(b *strings.Builder, s string) {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
}

// pyFloatRepr is Python's repr(float): the shortest round-trip digits, in
// positional form when the decimal point falls within (-4, 16], else
// scientific with a two-digit minimum exponent.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign = "-"
		f = -f
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expS, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expS)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1
	if decpt > -4 && decpt <= 16 {
		switch {
		case decpt <= 0:
			return sign + "0." + strings.Repeat("0", -decpt) + digits
		case decpt >= len(digits):
			return sign + digits + strings.Repeat("0", decpt-len(digits)) + ".0"
		default:
			return sign + digits[:decpt] + "." + digits[decpt:]
		}
	}
	out := sign + digits[:1]
	if len(digits) > 1 {
		out += "." + digits[1:]
	}
	es := "+"
	if exp < 0 {
		es = "-"
		exp = -exp
	}
	if exp < 10 {
		es += "0"
	}
	return out + "e" + es + strconv.Itoa(exp)
}
