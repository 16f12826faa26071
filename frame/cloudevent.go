package frame

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// CloudEvent is a CloudEvents 1.0 event read from structured-mode JSON
// (application/cloudevents+json). Optional attributes are "" when absent.
type CloudEvent struct {
	SpecVersion     string // always "1.0"
	ID              string
	Source          string
	Type            string
	DataContentType string
	DataSchema      string
	Subject         string
	Time            string // as written (RFC 3339); FromCloudEvent rewrites it
	// Extensions in document order, values as the reference's CloudEvent
	// SDK stringifies them (JSON numbers and booleans as their Java
	// toString, strings unquoted).
	Extensions []Attr
	// Data is the event data: the decoded bytes of data_base64; the
	// compacted JSON of data when the content type is JSON (or absent);
	// the text of a JSON string data otherwise. nil when there is none.
	Data       []byte
	DataBase64 bool
}

// Extension returns the value of the extension name.
func (ce *CloudEvent) Extension(name string) (string, bool) {
	for i := range ce.Extensions {
		if ce.Extensions[i].Name == name {
			return ce.Extensions[i].Value, true
		}
	}
	return "", false
}

// CloudEventError says what is wrong with a CloudEvents JSON document or
// why it does not map to a frame. Attr is the attribute concerned ("" for
// the document as a whole); Offset is the byte offset in the input of the
// offending JSON member or syntax error, or -1 when it does not apply.
type CloudEventError struct {
	Attr   string
	Offset int
	Reason string
}

func (e *CloudEventError) Error() string {
	s := "cloudevents json: "
	if e.Attr != "" {
		s += strconv.Quote(e.Attr) + ": "
	}
	s += e.Reason
	if e.Offset >= 0 {
		s += " (offset " + strconv.Itoa(e.Offset) + ")"
	}
	return s
}

// ErrNotLegacyStream is returned by FromLegacyStreamEvent for an event
// whose type is neither stream.request nor stream.chunk.
var ErrNotLegacyStream = errors.New("not a legacy stream event (type stream.request or stream.chunk)")

func ceErr(attr string, off int, format string, args ...any) *CloudEventError {
	return &CloudEventError{Attr: attr, Offset: off, Reason: fmt.Sprintf(format, args...)}
}

type member struct {
	key string
	val json.RawMessage
	off int
}

// readObject returns the members of the single JSON object b in document
// order. A repeated key keeps its first position and its last value, as a
// Jackson ObjectNode does.
func readObject(b []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return ceErr("", int(se.Offset), "invalid JSON: %v", se)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return ceErr("", len(b), "invalid JSON: unexpected end of input")
		}
		return ceErr("", int(dec.InputOffset()), "invalid JSON: %v", err)
	}
	t, err := dec.Token()
	if err != nil {
		return nil, syntax(err)
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, ceErr("", 0, "not a JSON object")
	}
	var ms []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, syntax(err)
		}
		key, _ := t.(string)
		// Point at the value: past the colon and any blanks.
		off := int(dec.InputOffset())
		for off < len(b) && (b[off] == ':' || b[off] == ' ' || b[off] == '\t' || b[off] == '\n' || b[off] == '\r') {
			off++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, syntax(err)
		}
		dup := false
		for i := range ms {
			if ms[i].key == key {
				ms[i].val, ms[i].off, dup = raw, off, true
			}
		}
		if !dup {
			ms = append(ms, member{key, raw, off})
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, syntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, ceErr("", int(dec.InputOffset()), "trailing data after the JSON object")
	}
	return ms, nil
}

// jsonKind names a JSON value's type for messages.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// DecodeCloudEventJSON reads one CloudEvents 1.0 event in structured-mode
// JSON, as the reference's storage fallback and CloudEventsFrameAdaptor
// deserialize it, and checks what the CloudEvents SDK checks: specversion
// "1.0"; id, source and type non-empty strings; source and dataschema
// URI references; time an RFC 3339 date-time; optional attributes strings;
// extension names lowercase letters and digits; data and data_base64 not
// both. A JSON null counts as absent. Errors are *CloudEventError.
func DecodeCloudEventJSON(b []byte) (CloudEvent, error) {
	var ce CloudEvent
	if len(bytes.TrimSpace(b)) == 0 {
		return ce, ceErr("", 0, "empty CloudEvents body")
	}
	ms, err := readObject(b)
	if err != nil {
		return ce, err
	}
	var data, data64 *member
	for i := range ms {
		m := &ms[i]
		if string(m.val) == "null" {
			continue
		}
		var dst *string
		switch m.key {
		case "specversion":
			dst = &ce.SpecVersion
		case "id":
			dst = &ce.ID
		case "source":
			dst = &ce.Source
		case "type":
			dst = &ce.Type
		case "datacontenttype":
			dst = &ce.DataContentType
		case "dataschema":
			dst = &ce.DataSchema
		case "subject":
			dst = &ce.Subject
		case "time":
			dst = &ce.Time
		case "data":
			data = m
			continue
		case "data_base64":
			data64 = m
			continue
		default:
			v, err := extensionValue(m)
			if err != nil {
				return ce, err
			}
			ce.Extensions = append(ce.Extensions, Attr{m.key, v})
			continue
		}
		if m.val[0] != '"' {
			return ce, ceErr(m.key, m.off, "is %s, want a string", jsonKind(m.val))
		}
		if err := json.Unmarshal(m.val, dst); err != nil {
			return ce, ceErr(m.key, m.off, "bad string: %v", err)
		}
	}
	if err := checkContext(&ce, ms); err != nil {
		return ce, err
	}
	switch {
	case data != nil && data64 != nil:
		return ce, ceErr("data_base64", data64.off, "data and data_base64 are mutually exclusive")
	case data64 != nil:
		var s string
		if data64.val[0] != '"' || json.Unmarshal(data64.val, &s) != nil {
			return ce, ceErr("data_base64", data64.off, "is %s, want a base64 string", jsonKind(data64.val))
		}
		d, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			if d, err = base64.RawStdEncoding.DecodeString(s); err != nil {
				return ce, ceErr("data_base64", data64.off, "not valid base64: %v", err)
			}
		}
		ce.Data, ce.DataBase64 = d, true
	case data != nil:
		if !isJSONMediaType(ce.DataContentType) && data.val[0] == '"' {
			var s string
			if err := json.Unmarshal(data.val, &s); err != nil {
				return ce, ceErr("data", data.off, "bad string: %v", err)
			}
			ce.Data = []byte(s)
			break
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, data.val); err != nil {
			return ce, ceErr("data", data.off, "bad JSON: %v", err)
		}
		ce.Data = buf.Bytes()
	}
	return ce, nil
}

func checkContext(ce *CloudEvent, ms []member) error {
	off := func(key string) int {
		for i := range ms {
			if ms[i].key == key {
				return ms[i].off
			}
		}
		return -1
	}
	if ce.SpecVersion == "" {
		return ceErr("specversion", off("specversion"), "required attribute missing")
	}
	if ce.SpecVersion != "1.0" {
		return ceErr("specversion", off("specversion"), "unsupported version %q, want \"1.0\"", ce.SpecVersion)
	}
	for _, r := range [...]struct{ name, v string }{{"id", ce.ID}, {"source", ce.Source}, {"type", ce.Type}} {
		if r.v == "" {
			return ceErr(r.name, off(r.name), "required attribute missing or empty")
		}
	}
	if why := badURIRef(ce.Source); why != "" {
		return ceErr("source", off("source"), "not a URI reference: %s", why)
	}
	if ce.DataSchema != "" {
		if why := badURIRef(ce.DataSchema); why != "" {
			return ceErr("dataschema", off("dataschema"), "not a URI reference: %s", why)
		}
	}
	if ce.Time != "" {
		if _, err := javaTime(ce.Time); err != nil {
			return ceErr("time", off("time"), "%v", err)
		}
	}
	return nil
}

// extensionValue validates an extension's name and stringifies its value
// as the CloudEvents SDK's Jackson deserializer and toString() do.
func extensionValue(m *member) (string, error) {
	if m.key == "" {
		return "", ceErr(m.key, m.off, "empty extension name")
	}
	for i := 0; i < len(m.key); i++ {
		if c := m.key[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", ceErr(m.key, m.off, "invalid extension name: only lowercase letters and digits are allowed")
		}
	}
	switch m.val[0] {
	case '"':
		var s string
		if err := json.Unmarshal(m.val, &s); err != nil {
			return "", ceErr(m.key, m.off, "bad string: %v", err)
		}
		return s, nil
	case 't', 'f':
		return string(m.val), nil
	case '{', '[':
		var buf bytes.Buffer
		if err := json.Compact(&buf, m.val); err != nil {
			return "", ceErr(m.key, m.off, "bad JSON: %v", err)
		}
		return buf.String(), nil
	default:
		return javaNumber(string(m.val)), nil
	}
}

// javaNumber renders a JSON number as Jackson's numberValue().toString():
// integers in decimal, other numbers as Java's Double.toString.
func javaNumber(lit string) string {
	if !strings.ContainsAny(lit, ".eE") {
		if strings.TrimLeft(lit, "-0") == "" {
			return "0"
		}
		return lit
	}
	f, _ := strconv.ParseFloat(lit, 64)
	switch {
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	if a := math.Abs(f); a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(f, 'E', -1, 64) // 1.5E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}

// isJSONMediaType reports whether the CloudEvents SDK treats data with this
// datacontenttype as JSON: absent, application/json, text/json or a +json
// suffix, parameters allowed.
func isJSONMediaType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	typ, sub, ok := strings.Cut(mt, "/")
	if !ok || (typ != "application" && typ != "text") {
		return false
	}
	return sub == "json" || strings.HasSuffix(sub, "+json")
}

// badURIRef says why s would make java.net.URI reject it, or "".
func badURIRef(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c <= ' ' || c == 0x7F:
			return fmt.Sprintf("control or space character at index %d", i)
		case strings.IndexByte("\"<>\\^`{|}", c) >= 0:
			return fmt.Sprintf("illegal character %q at index %d", c, i)
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return fmt.Sprintf("malformed escape at index %d", i)
			}
		}
	}
	if strings.Count(s, "#") > 1 {
		return "more than one '#'"
	}
	return ""
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// javaTime parses an RFC 3339 date-time (seconds optional, as Java's
// ISO_OFFSET_DATE_TIME allows) and renders it as Java's
// OffsetDateTime.toString(): seconds dropped when they and the fraction are
// zero, the fraction in groups of three digits, "Z" for a zero offset.
func javaTime(s string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("not an RFC 3339 date-time (%s): %q", why, s)
	}
	num := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	at := func(i int, c byte) bool { return i < len(s) && s[i] == c }
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 2)
	day, ok3 := num(8, 2)
	if !ok1 || !ok2 || !ok3 || !at(4, '-') || !at(7, '-') || !(at(10, 'T') || at(10, 't')) {
		return bad("date")
	}
	hour, ok1 := num(11, 2)
	minute, ok2 := num(14, 2)
	if !ok1 || !ok2 || !at(13, ':') {
		return bad("time")
	}
	i, sec, nano := 16, 0, 0
	if at(i, ':') {
		var ok bool
		if sec, ok = num(i+1, 2); !ok {
			return bad("seconds")
		}
		i += 3
		if at(i, '.') {
			i++
			digits := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if digits < 9 {
					nano = nano*10 + int(s[i]-'0')
				}
				digits++
				i++
			}
			if digits == 0 || digits > 9 {
				return bad("fraction")
			}
			for ; digits < 9; digits++ {
				nano *= 10
			}
		}
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || sec > 59 {
		return bad("field out of range")
	}
	offset := 0
	switch {
	case at(i, 'Z') || at(i, 'z'):
		i++
	case at(i, '+') || at(i, '-'):
		oh, ok1 := num(i+1, 2)
		om, ok2 := num(i+4, 2)
		if !ok1 || !ok2 || !at(i+3, ':') || oh > 18 || om > 59 {
			return bad("offset")
		}
		offset = oh*60 + om
		if s[i] == '-' {
			offset = -offset
		}
		i += 6
	default:
		return bad("offset")
	}
	if i != len(s) {
		return bad("trailing characters")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%04d-%02d-%02dT%02d:%02d", year, month, day, hour, minute)
	if sec > 0 || nano > 0 {
		fmt.Fprintf(&b, ":%02d", sec)
		switch {
		case nano == 0:
		case nano%1000000 == 0:
			fmt.Fprintf(&b, ".%03d", nano/1000000)
		case nano%1000 == 0:
			fmt.Fprintf(&b, ".%06d", nano/1000)
		default:
			fmt.Fprintf(&b, ".%09d", nano)
		}
	}
	if offset == 0 {
		b.WriteByte('Z')
	} else {
		sign := byte('+')
		if offset < 0 {
			sign, offset = '-', -offset
		}
		fmt.Fprintf(&b, "%c%02d:%02d", sign, offset/60, offset%60)
	}
	return b.String(), nil
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// FromCloudEvent appends the EVENT frame the reference's fromCloudEvent
// builds: every context attribute that is set (specversion, id, source,
// type, datacontenttype, dataschema, subject, time) then every extension,
// values as strings (time as Java's OffsetDateTime.toString()), and the
// event data. The reference iterates the SDK's extension map, whose order
// is not defined; here it is the document order.
func FromCloudEvent(dst []byte, ce *CloudEvent) ([]byte, error) {
	attrs := make([]Attr, 0, 8+len(ce.Extensions))
	attrs = append(attrs, Attr{"specversion", "1.0"})
	attrs = appendIf(attrs, "id", ce.ID)
	attrs = appendIf(attrs, "source", ce.Source)
	attrs = appendIf(attrs, "type", ce.Type)
	attrs = appendIf(attrs, "datacontenttype", ce.DataContentType)
	attrs = appendIf(attrs, "dataschema", ce.DataSchema)
	attrs = appendIf(attrs, "subject", ce.Subject)
	if ce.Time != "" {
		t, err := javaTime(ce.Time)
		if err != nil {
			return dst, &CloudEventError{Attr: "time", Offset: -1, Reason: err.Error()}
		}
		attrs = append(attrs, Attr{"time", t})
	}
	attrs = append(attrs, ce.Extensions...)
	return AppendFrame(dst, TypeEvent, 0, 0, attrs, ce.Data)
}

// FromLegacyStreamEvent maps an event of the pre-frame CE-JSON streaming
// codec (StreamEventCodec) to the frame that carries the same thing now,
// so that old bodies still on a topic can be validated like frames:
//
//	stream.request → STREAM_REQ: sid=emsessionid, replyTo=emreplyto,
//	                 model=emmodel, conv=emconvid, data = prompt
//	stream.chunk   → STREAM_CHUNK: seq=emseq, done=emdone, sid=emsessionid,
//	                 err=emerror, etype=emeventtype, meta=emmeta, data = text
//
// Other types give ErrNotLegacyStream. A chunk needs an integer emseq;
// emdone, when present, must be true or false.
func FromLegacyStreamEvent(dst []byte, ce *CloudEvent) ([]byte, error) {
	ext := func(name string) string { v, _ := ce.Extension(name); return v }
	switch ce.Type {
	case "stream.request":
		return AppendStreamRequest(dst, &StreamRequest{
			SessionID: ext("emsessionid"),
			ReplyTo:   ext("emreplyto"),
			Model:     ext("emmodel"),
			Conv:      ext("emconvid"),
			Prompt:    ce.Data,
		})
	case "stream.chunk":
		c := StreamChunk{
			SessionID: ext("emsessionid"),
			Err:       ext("emerror"),
			EventType: ext("emeventtype"),
			Meta:      ext("emmeta"),
			Data:      ce.Data,
		}
		s, ok := ce.Extension("emseq")
		if !ok {
			return dst, ceErr("emseq", -1, "stream.chunk without emseq")
		}
		seq, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return dst, ceErr("emseq", -1, "not a 32-bit integer: %q", s)
		}
		c.Seq = int32(seq)
		if d, ok := ce.Extension("emdone"); ok {
			switch strings.ToLower(d) {
			case "true":
				c.Done = true
			case "false":
			default:
				return dst, ceErr("emdone", -1, "not a boolean: %q", d)
			}
		}
		return AppendStreamChunk(dst, &c)
	}
	return dst, ErrNotLegacyStream
}

// BodyFormat says what DecodeMQBody found in a message body.
type BodyFormat uint8

const (
	BodyFrame            BodyFormat = iota + 1 // an EventMeshFrame
	BodyCloudEventJSON                         // CE JSON, mapped like fromCloudEvent (EVENT)
	BodyLegacyStreamJSON                       // CE JSON of the old streaming codec (STREAM_REQ/CHUNK)
)

func (b BodyFormat) String() string {
	switch b {
	case BodyFrame:
		return "frame"
	case BodyCloudEventJSON:
		return "cloudevents-json"
	case BodyLegacyStreamJSON:
		return "legacy-stream-json"
	}
	return "unknown"
}

// DecodeMQBody reads a message body from a storage topic as the reference's
// poll() does: a frame if it decodes; otherwise, as the legacy fallback,
// CloudEvents JSON turned into a frame (an old streaming-codec event into
// its STREAM_REQ/STREAM_CHUNK frame, anything else into an EVENT frame).
// A converted frame is encoded into scratch (reused, grown as needed) and
// aliases the returned buffer; a real frame aliases b, and bytes after it
// are ignored as the reference ignores them. When both readings fail the
// error wraps the frame's *DecodeError and the *CloudEventError.
func DecodeMQBody(b, scratch []byte) (f Frame, format BodyFormat, buf []byte, err error) {
	f, _, ferr := Decode(b)
	if ferr == nil {
		return f, BodyFrame, scratch, nil
	}
	ce, cerr := DecodeCloudEventJSON(b)
	if cerr != nil {
		return Frame{}, 0, scratch, fmt.Errorf("%w; not CloudEvents JSON either: %w", ferr, cerr)
	}
	format = BodyLegacyStreamJSON
	buf, err = FromLegacyStreamEvent(scratch[:0], &ce)
	if errors.Is(err, ErrNotLegacyStream) {
		format = BodyCloudEventJSON
		buf, err = FromCloudEvent(scratch[:0], &ce)
	}
	if err != nil {
		return Frame{}, 0, scratch, fmt.Errorf("%w; as CloudEvents JSON: %w", ferr, err)
	}
	f, _, err = Decode(buf)
	return f, format, buf, err
}
