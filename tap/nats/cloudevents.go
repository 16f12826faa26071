package natstap

import (
	"encoding/base64"
	"encoding/json"
	"mime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/e2atap/e2atap/tap"
	"github.com/nats-io/nats.go"
)

// payload turns a NATS message into the bytes and format hint the engine
// reads. Only a CloudEvents binary-mode message (a ce-specversion header) is
// rewritten; everything else is passed on as it is.
func payload(h nats.Header, data []byte) ([]byte, tap.Format) {
	if len(h) > 0 && hasCEBinary(h) {
		return structuredFromBinary(h, data), tap.FormatJSON
	}
	return data, sniff(data)
}

// noRecord says that a message carries no record: an empty body that is
// not a CloudEvents binary-mode event (whose attributes are its headers).
// NATS sends such messages as signals (a status such as 503 no responders
// or 100 idle heartbeat, a KV delete marker, an application's headers-only
// notice): they are no E2A message and no frame, as a blank line of a log
// is none, and judging them gave an e2a.decode that no peer had broken.
func noRecord(h nats.Header, data []byte) bool {
	return len(data) == 0 && !(len(h) > 0 && hasCEBinary(h))
}

// sniff is the format hint from the first byte; FormatAuto leaves it to the
// engine (empty or unknown payloads).
func sniff(b []byte) tap.Format {
	for _, c := range b {
		switch c {
		case 0xEF:
			return tap.FormatFrame
		case '{', '[':
			return tap.FormatJSON
		case ' ', '\t', '\r', '\n':
			continue
		}
		return tap.FormatAuto
	}
	return tap.FormatAuto
}

// NATS headers keep the case they were sent with, and the binding's header
// names are case-insensitive, so lookups fold case.
func hasCEBinary(h nats.Header) bool {
	for k := range h {
		if strings.EqualFold(k, "ce-specversion") {
			return true
		}
	}
	return false
}

// ceFirst are the attributes written first, in this order.
var ceFirst = [...]string{"specversion", "id", "source", "type"}

// structuredFromBinary builds the CloudEvents structured JSON object of a
// binary-mode message (NATS protocol binding): one string member per ce-*
// header, datacontenttype from Content-Type when no ce-datacontenttype, and
// the body as data, data (string) or data_base64.
func structuredFromBinary(h nats.Header, body []byte) []byte {
	attrs := make(map[string]string, len(h))
	contentType := ""
	for k, v := range h {
		if len(v) == 0 {
			continue
		}
		switch lk := strings.ToLower(k); {
		case strings.HasPrefix(lk, "ce-") && len(lk) > 3:
			attrs[lk[3:]] = v[0]
		case lk == "content-type":
			contentType = v[0]
		}
	}
	if _, ok := attrs["datacontenttype"]; !ok && contentType != "" {
		attrs["datacontenttype"] = contentType
	}
	// data and data_base64 are members of the structured form, not
	// attributes: a header that claims them must not clash with the body.
	delete(attrs, "data")
	delete(attrs, "data_base64")

	names := make([]string, 0, len(attrs))
	for k := range attrs {
		if !slices.Contains(ceFirst[:], k) {
			names = append(names, k)
		}
	}
	slices.Sort(names)

	out := make([]byte, 0, 64+len(body)*4/3+32*len(attrs))
	out = append(out, '{')
	member := func(name string) {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendJSONString(out, name)
		out = append(out, ':')
	}
	for _, k := range ceFirst {
		if v, ok := attrs[k]; ok {
			member(k)
			out = appendJSONString(out, v)
		}
	}
	for _, k := range names {
		member(k)
		out = appendJSONString(out, attrs[k])
	}
	if len(body) > 0 {
		switch dataKind(attrs["datacontenttype"], body) {
		case dataJSON:
			member("data")
			out = append(out, body...)
		case dataText:
			member("data")
			out = appendJSONString(out, string(body))
		default:
			member("data_base64")
			out = append(out, '"')
			out = base64.StdEncoding.AppendEncode(out, body)
			out = append(out, '"')
		}
	}
	return append(out, '}')
}

const (
	dataBinary = iota
	dataJSON
	dataText
)

// dataKind decides how the body is carried (CloudEvents JSON format §3.1):
// JSON content (declared, or undeclared but valid) is embedded, text is a
// string, the rest is base64.
func dataKind(contentType string, body []byte) int {
	mt := ""
	if contentType != "" {
		if t, _, err := mime.ParseMediaType(contentType); err == nil {
			mt = t
		} else {
			mt = strings.ToLower(strings.TrimSpace(contentType))
		}
	}
	isJSON := mt == "application/json" || mt == "text/json" || strings.HasSuffix(mt, "+json")
	switch {
	case (mt == "" || isJSON) && json.Valid(body):
		return dataJSON
	case (mt == "" || isJSON || strings.HasPrefix(mt, "text/")) && utf8.Valid(body) && body[0] != 0xEF:
		return dataText
	}
	return dataBinary
}

// appendJSONString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD,
// as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}
