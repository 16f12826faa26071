package validate

import (
	"bytes"
	"unicode/utf8"

	"github.com/e2atap/e2atap/e2a"
)

// routeJSON finds what a sharded run needs before the full scan: the
// top-level request_id (the stream key) and whether the message is a
// chat.interrupt request (which every shard must see). It does not validate:
// the shard's full scan does. Keys written with escapes take the slow path
// (the reference scanner), so that routing and checking never disagree.
func routeJSON(data []byte, rec *e2a.Record) (key []byte, interrupt bool) {
	// Fast path for the common line: no escapes anywhere, no interrupt, and
	// one "request_id" in it. Without a backslash a string cannot contain a
	// quote, so every occurrence of "request_id" with its quotes is a key or
	// a whole string value; the walk below stops at it (near the front in
	// the reference's key order) instead of skipping the whole record.
	if bytes.IndexByte(data, '\\') < 0 && !bytes.Contains(data, interruptValue) {
		first := bytes.Index(data, requestIDKey)
		if first < 0 {
			return nil, false
		}
		// (bytes.LastIndex is not vectorised; a second Index is.)
		if !bytes.Contains(data[first+len(requestIDKey):], requestIDKey) {
			return walkJSON(data, rec, first)
		}
	}
	return walkJSON(data, rec, -1)
}

var (
	requestIDKey   = []byte(`"request_id"`)
	interruptValue = []byte(`"chat.interrupt"`)
)

// walkJSON walks the top-level members; with stop >= 0 it returns after
// the member whose key starts at byte stop (or once past it).
func walkJSON(data []byte, rec *e2a.Record, stop int) (key []byte, interrupt bool) {
	i := skipWS(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false
	}
	i++
	for {
		i = skipWS(data, i)
		if i >= len(data) || data[i] != '"' {
			return key, interrupt
		}
		ks := i + 1
		ke := ks
		for ke < len(data) && data[ke] != '"' {
			if data[ke] == '\\' {
				return routeSlow(data, rec)
			}
			ke++
		}
		if ke >= len(data) {
			return key, interrupt
		}
		name := data[ks:ke]
		i = skipWS(data, ke+1)
		if i >= len(data) || data[i] != ':' {
			return key, interrupt
		}
		i = skipWS(data, i+1)
		vs := i
		i = skipValue(data, i)
		if i < 0 {
			return key, interrupt
		}
		switch string(name) {
		case "request_id":
			key = nil
			if data[vs] == '"' {
				v := data[vs+1 : i-1]
				if bytes.IndexByte(v, '\\') >= 0 || !utf8.Valid(v) {
					// The scanner unescapes and replaces invalid UTF-8:
					// take its word for the key.
					return routeSlow(data, rec)
				}
				key = v
			}
		case "method":
			interrupt = string(data[vs:i]) == `"chat.interrupt"`
		}
		if stop >= 0 && ks-1 >= stop {
			return key, interrupt
		}
		i = skipWS(data, i)
		if i >= len(data) || data[i] != ',' {
			return key, interrupt
		}
		i++
	}
}

func routeSlow(data []byte, rec *e2a.Record) ([]byte, bool) {
	if e2a.ScanStd(data, rec) != nil {
		return nil, false
	}
	var key []byte
	if v := rec.Get(e2a.FRequestID); v.Type == e2a.String {
		key = append([]byte(nil), v.Str...)
	}
	return key, rec.Get(e2a.FMethod).Is("chat.interrupt")
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index after the value at i, or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

func skipString(b []byte, i int) int {
	i++
	for i < len(b) {
		switch b[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		}
		i++
	}
	return -1
}
