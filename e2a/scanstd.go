package e2a

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrNotObject is returned for valid JSON that is not an object.
var ErrNotObject = errors.New("not a JSON object")

// ScanStd fills r from data using encoding/json. It is the reference the
// fast scanner (Scan) is fuzzed against and the baseline of its benchmarks:
// both must agree on every field a Record holds. It allocates freely.
func ScanStd(data []byte, r *Record) error {
	r.Reset()
	r.fieldsSet, r.subsSet = allFields, allSubs // the next Scan clears all
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return err
	}
	data = bytes.TrimLeft(data, " \t\r\n")
	if len(data) == 0 || data[0] != '{' {
		return ErrNotObject
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return err
	}
	for i, k := range FieldKeys {
		if raw, ok := top[k]; ok {
			r.Fields[i] = stdValue(raw)
		}
	}
	sub := func(parent json.RawMessage, key string) (json.RawMessage, bool) {
		var m map[string]json.RawMessage
		if len(parent) == 0 || parent[0] != '{' || json.Unmarshal(parent, &m) != nil {
			return nil, false
		}
		v, ok := m[key]
		return v, ok
	}
	set := func(s Sub, parent json.RawMessage, key string) {
		if v, ok := sub(parent, key); ok {
			r.Subs[s] = stdValue(v)
		}
	}
	body := top["body"]
	set(SBodyDeltaKind, body, "delta_kind")
	set(SBodyDelta, body, "delta")
	set(SBodyResult, body, "result")
	set(SBodyCode, body, "code")
	set(SBodyMessage, body, "message")
	set(SBodyBranch, body, "branch")
	set(SBodyPayload, body, "payload")
	set(SBodySessionUpdate, body, "sessionUpdate")
	set(SBodyExtMethod, body, "ext_method")
	set(SBodyEventType, body, "event_type")
	set(SMetaServerPush, top["metadata"], "_jiuwenswarm_server_push")
	params := top["params"]
	set(SParamsIntent, params, "intent")
	set(SErrorCode, top["error"], "code")
	set(SErrorMessage, top["error"], "message")
	for k := range r.Subs {
		if presenceOnly(Sub(k)) && r.Subs[k].Type == String {
			r.Subs[k].Str = nil
		}
	}
	for _, src := range []json.RawMessage{nil, top["acp_meta"], top["channel_context"]} {
		if src == nil {
			m, ok := sub(params, "_meta")
			if !ok {
				continue
			}
			src = m
		}
		if v, ok := sub(src, "traceparent"); ok {
			r.Subs[STraceparent] = stdValue(v)
			break
		}
	}
	for _, key := range []string{"files", "attachments"} {
		v, ok := sub(params, key)
		if !ok || len(v) == 0 || v[0] != '[' {
			continue
		}
		var entries []json.RawMessage
		if json.Unmarshal(v, &entries) != nil {
			continue
		}
		for _, e := range entries {
			u, ok := sub(e, "uri")
			if !ok || len(u) == 0 || u[0] != '"' {
				r.FileWithoutURI = true
			}
		}
	}
	return nil
}

func stdValue(raw json.RawMessage) Value {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return Value{}
	}
	switch raw[0] {
	case 'n':
		return Value{Type: Null}
	case 't':
		return Value{Type: Bool, Bool: true}
	case 'f':
		return Value{Type: Bool}
	case '{':
		return Value{Type: Object}
	case '[':
		return Value{Type: Array}
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return Value{Type: String, Str: []byte(s)}
	default:
		return Value{Type: Number, Str: append([]byte(nil), raw...)}
	}
}
