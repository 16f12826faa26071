package frame

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
)

// Legacy MeshMessage TCP package layout (the reference's tcp Codec):
//
//	"EventMesh" (9) | "0000" (4) | length:i32 | headerLen:i32 | header JSON | body
//
// length counts magic, version, header and body (13 + headerLen + bodyLen)
// but not the two length fields, so a package is length+8 bytes on the
// wire.
const (
	PackageMagic     = "EventMesh"
	PackageVersion   = "0000"
	PackagePrefixLen = 21      // magic, version and both length fields
	MaxPackageLength = 4 << 20 // the codec's frame limit, on the length field
)

// Command is a legacy TCP command. The header carries its enum name.
type Command uint8

// Commands, with the reference's codes.
const (
	CmdHeartbeatRequest Command = iota
	CmdHeartbeatResponse
	CmdHelloRequest
	CmdHelloResponse
	CmdClientGoodbyeRequest
	CmdClientGoodbyeResponse
	CmdServerGoodbyeRequest
	CmdServerGoodbyeResponse
	CmdSubscribeRequest
	CmdSubscribeResponse
	CmdUnsubscribeRequest
	CmdUnsubscribeResponse
	CmdListenRequest
	CmdListenResponse
	CmdRequestToServer
	CmdRequestToClient
	CmdRequestToClientAck
	CmdResponseToServer
	CmdResponseToClient
	CmdResponseToClientAck
	CmdAsyncMessageToServer
	CmdAsyncMessageToServerAck
	CmdAsyncMessageToClient
	CmdAsyncMessageToClientAck
	CmdBroadcastMessageToServer
	CmdBroadcastMessageToServerAck
	CmdBroadcastMessageToClient
	CmdBroadcastMessageToClientAck
	CmdSysLogToLogServer
	CmdTraceLogToLogServer
	CmdRedirectToClient
	CmdRegisterRequest
	CmdRegisterResponse
	CmdUnregisterRequest
	CmdUnregisterResponse
	CmdRecommendRequest
	CmdRecommendResponse
	numCommands
)

var commandNames = [numCommands]string{
	"HEARTBEAT_REQUEST", "HEARTBEAT_RESPONSE", "HELLO_REQUEST", "HELLO_RESPONSE",
	"CLIENT_GOODBYE_REQUEST", "CLIENT_GOODBYE_RESPONSE", "SERVER_GOODBYE_REQUEST", "SERVER_GOODBYE_RESPONSE",
	"SUBSCRIBE_REQUEST", "SUBSCRIBE_RESPONSE", "UNSUBSCRIBE_REQUEST", "UNSUBSCRIBE_RESPONSE",
	"LISTEN_REQUEST", "LISTEN_RESPONSE", "REQUEST_TO_SERVER", "REQUEST_TO_CLIENT",
	"REQUEST_TO_CLIENT_ACK", "RESPONSE_TO_SERVER", "RESPONSE_TO_CLIENT", "RESPONSE_TO_CLIENT_ACK",
	"ASYNC_MESSAGE_TO_SERVER", "ASYNC_MESSAGE_TO_SERVER_ACK", "ASYNC_MESSAGE_TO_CLIENT", "ASYNC_MESSAGE_TO_CLIENT_ACK",
	"BROADCAST_MESSAGE_TO_SERVER", "BROADCAST_MESSAGE_TO_SERVER_ACK", "BROADCAST_MESSAGE_TO_CLIENT", "BROADCAST_MESSAGE_TO_CLIENT_ACK",
	"SYS_LOG_TO_LOGSERVER", "TRACE_LOG_TO_LOGSERVER", "REDIRECT_TO_CLIENT", "REGISTER_REQUEST",
	"REGISTER_RESPONSE", "UNREGISTER_REQUEST", "UNREGISTER_RESPONSE", "RECOMMEND_REQUEST",
	"RECOMMEND_RESPONSE",
}

// String returns the command's enum name as the header carries it.
func (c Command) String() string {
	if c < numCommands {
		return commandNames[c]
	}
	return "Command(" + strconv.Itoa(int(c)) + ")"
}

// ParseCommand looks a command up by its enum name.
func ParseCommand(name string) (Command, bool) {
	for i, n := range commandNames {
		if n == name {
			return Command(i), true
		}
	}
	return 0, false
}

// CarriesMessage reports whether the command's body is an EventMeshMessage.
func (c Command) CarriesMessage() bool {
	switch c {
	case CmdRequestToServer, CmdRequestToClient, CmdResponseToServer, CmdResponseToClient,
		CmdAsyncMessageToServer, CmdAsyncMessageToClient,
		CmdBroadcastMessageToServer, CmdBroadcastMessageToClient:
		return true
	}
	return false
}

// PackageHeader is the header JSON of a legacy package.
type PackageHeader struct {
	Command    Command
	Code       int
	Desc       string
	Seq        string
	Properties []Attr // document order; non-string values as JSON text
}

// Package is one decoded legacy TCP package. Body aliases the input.
type Package struct {
	Header PackageHeader
	Body   []byte
	// BodyOffset is where Body starts in the input; Size is the bytes the
	// package took on the wire.
	BodyOffset int
	Size       int
}

func pkgErr(off int, c Code, reason string) *PackageError {
	return &PackageError{Offset: off, Code: c, Reason: reason}
}

// DecodePackage reads one legacy MeshMessage TCP package from the front of
// b and returns it with the bytes that follow. Errors are *PackageError; a
// package cut short is ErrPackageTruncated, so a stream reader can wait for
// more bytes and try again. The header is parsed; the body is not (see
// Package.MeshMessage).
func DecodePackage(b []byte) (p Package, rest []byte, err error) {
	if len(b) < PackagePrefixLen {
		return p, nil, pkgErr(len(b), ErrPackageTruncated,
			"need at least 21 bytes, have "+strconv.Itoa(len(b)))
	}
	if string(b[:9]) != PackageMagic || string(b[9:13]) != PackageVersion {
		off := 0
		if string(b[:9]) == PackageMagic {
			off = 9
		}
		return p, nil, pkgErr(off, ErrPackageMagic, "invalid magic flag or version: flag="+
			strconv.Quote(javaString(b[:9]))+" version="+strconv.Quote(javaString(b[9:13])))
	}
	length := int32(binary.BigEndian.Uint32(b[13:17]))
	headerLen := int32(binary.BigEndian.Uint32(b[17:21]))
	if length > MaxPackageLength {
		return p, nil, pkgErr(13, ErrPackageTooLarge, "package length "+strconv.Itoa(int(length))+
			" exceeds limit 4194304 (message size is exceed limit)")
	}
	if length < 13 {
		return p, nil, pkgErr(13, ErrPackageLength, "package length "+strconv.Itoa(int(length))+
			" is less than the 13 bytes of magic and version")
	}
	if headerLen < 0 || headerLen > length-13 {
		return p, nil, pkgErr(17, ErrPackageLength, "header length "+strconv.Itoa(int(headerLen))+
			" does not fit package length "+strconv.Itoa(int(length)))
	}
	total := int(length) + 8
	if len(b) < total {
		return p, nil, pkgErr(len(b), ErrPackageTruncated, "package length "+strconv.Itoa(int(length))+
			" needs "+strconv.Itoa(total)+" bytes, have "+strconv.Itoa(len(b)))
	}
	hEnd := PackagePrefixLen + int(headerLen)
	h, perr := decodePackageHeader(b[PackagePrefixLen:hEnd])
	if perr != nil {
		perr.Offset += PackagePrefixLen
		return p, nil, perr
	}
	p = Package{Header: h, Body: b[hEnd:total:total], BodyOffset: hEnd, Size: total}
	return p, b[total:], nil
}

// jsonScalarText returns a scalar JSON value as Jackson coerces it to a
// String: strings unquoted, numbers and booleans as written.
func jsonScalarText(raw json.RawMessage) (string, bool) {
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case '{', '[', 'n':
		return "", false
	}
	return string(raw), true
}

func decodePackageHeader(b []byte) (PackageHeader, *PackageError) {
	var h PackageHeader
	ms, err := readObject(b)
	if err != nil {
		var ce *CloudEventError
		errors.As(err, &ce)
		return h, pkgErr(max(ce.Offset, 0), ErrPackageHeader, "header: "+ce.Reason)
	}
	haveCmd := false
	for _, m := range ms {
		if string(m.val) == "null" {
			continue
		}
		switch m.key {
		case "cmd":
			var name string
			if m.val[0] != '"' || json.Unmarshal(m.val, &name) != nil {
				return h, pkgErr(m.off, ErrPackageCommand, "header cmd is "+jsonKind(m.val)+", want a command name")
			}
			c, ok := ParseCommand(name)
			if !ok {
				return h, pkgErr(m.off, ErrPackageCommand, "unknown command "+strconv.Quote(name))
			}
			h.Command, haveCmd = c, true
		case "code":
			s, ok := jsonScalarText(m.val)
			code, err := strconv.ParseInt(s, 10, 32)
			if !ok || err != nil {
				return h, pkgErr(m.off, ErrPackageHeader, "header code "+string(m.val)+" is not a 32-bit integer")
			}
			h.Code = int(code)
		case "desc", "seq":
			s, ok := jsonScalarText(m.val)
			if !ok {
				return h, pkgErr(m.off, ErrPackageHeader, "header "+m.key+" is "+jsonKind(m.val)+", want a string")
			}
			if m.key == "desc" {
				h.Desc = s
			} else {
				h.Seq = s
			}
		case "properties":
			props, perr := stringMap(m.val, "header properties")
			if perr != nil {
				perr.Offset += m.off
				return h, perr
			}
			h.Properties = props
		}
	}
	if !haveCmd {
		return h, pkgErr(0, ErrPackageCommand, "header has no cmd")
	}
	return h, nil
}

// stringMap reads a JSON object of scalars in document order; nested values
// are kept as JSON text. Offsets in errors are relative to raw.
func stringMap(raw json.RawMessage, what string) ([]Attr, *PackageError) {
	if raw[0] != '{' {
		return nil, pkgErr(0, ErrPackageHeader, what+" is "+jsonKind(raw)+", want an object")
	}
	ms, err := readObject(raw)
	if err != nil {
		var ce *CloudEventError
		errors.As(err, &ce)
		return nil, pkgErr(max(ce.Offset, 0), ErrPackageHeader, what+": "+ce.Reason)
	}
	out := make([]Attr, 0, len(ms))
	for _, m := range ms {
		if string(m.val) == "null" {
			continue
		}
		v, ok := jsonScalarText(m.val)
		if !ok {
			var buf bytes.Buffer
			_ = json.Compact(&buf, m.val)
			v = buf.String()
		}
		out = append(out, Attr{m.key, v})
	}
	return out, nil
}

// AppendPackage appends a legacy TCP package with the given header and
// body, for tests and the demo.
func AppendPackage(dst []byte, h *PackageHeader, body []byte) ([]byte, error) {
	if h.Command >= numCommands {
		return dst, pkgErr(0, ErrPackageCommand, "unknown command "+h.Command.String())
	}
	hdr := []byte(`{"cmd":"` + h.Command.String() + `","code":` + strconv.Itoa(h.Code) + `,"desc":`)
	hdr = appendJSONString(hdr, h.Desc)
	hdr = append(hdr, `,"seq":`...)
	hdr = appendJSONString(hdr, h.Seq)
	hdr = append(hdr, `,"properties":`...)
	hdr = appendJSONObject(hdr, h.Properties)
	hdr = append(hdr, '}')
	length := 13 + len(hdr) + len(body)
	if length > MaxPackageLength {
		return dst, pkgErr(13, ErrPackageTooLarge, "package length "+strconv.Itoa(length)+" exceeds limit 4194304")
	}
	dst = append(dst, PackageMagic+PackageVersion...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(length))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(hdr)))
	dst = append(dst, hdr...)
	return append(dst, body...), nil
}

func appendJSONString(dst []byte, s string) []byte {
	b, _ := json.Marshal(s)
	return append(dst, b...)
}

func appendJSONObject(dst []byte, kv []Attr) []byte {
	dst = append(dst, '{')
	for i, a := range kv {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, a.Name)
		dst = append(dst, ':')
		dst = appendJSONString(dst, a.Value)
	}
	return append(dst, '}')
}

// MeshMessage is the EventMeshMessage JSON body of a message command.
type MeshMessage struct {
	Topic      string
	Properties []Attr
	Headers    []Attr
	Body       string
}

// MeshMessage parses the package body as an EventMeshMessage
// ({topic, properties, headers, body}). Offsets in errors are offsets in
// the package.
func (p *Package) MeshMessage() (MeshMessage, error) {
	m, err := DecodeMeshMessage(p.Body)
	if err != nil {
		var pe *PackageError
		if errors.As(err, &pe) {
			pe.Offset += p.BodyOffset
		}
	}
	return m, err
}

// DecodeMeshMessage parses an EventMeshMessage JSON body. Errors are
// *PackageError with code ErrPackageBody and offsets within body.
func DecodeMeshMessage(body []byte) (MeshMessage, error) {
	var m MeshMessage
	ms, err := readObject(body)
	if err != nil {
		var ce *CloudEventError
		errors.As(err, &ce)
		return m, pkgErr(max(ce.Offset, 0), ErrPackageBody, "body: "+ce.Reason)
	}
	for _, mb := range ms {
		if string(mb.val) == "null" {
			continue
		}
		switch mb.key {
		case "topic", "body":
			s, ok := jsonScalarText(mb.val)
			if !ok {
				return m, pkgErr(mb.off, ErrPackageBody, "body "+mb.key+" is "+jsonKind(mb.val)+", want a string")
			}
			if mb.key == "topic" {
				m.Topic = s
			} else {
				m.Body = s
			}
		case "properties", "headers":
			kv, perr := stringMap(mb.val, "body "+mb.key)
			if perr != nil {
				perr.Code = ErrPackageBody
				perr.Offset += mb.off
				return m, perr
			}
			for _, a := range kv {
				if v := a.Value; v != "" && (v[0] == '{' || v[0] == '[') {
					return m, pkgErr(mb.off, ErrPackageBody, "body "+mb.key+" "+strconv.Quote(a.Name)+
						" is not a string")
				}
			}
			if mb.key == "properties" {
				m.Properties = kv
			} else {
				m.Headers = kv
			}
		}
	}
	return m, nil
}

// FromMeshMessage appends the EVENT frame the reference's
// MeshMessageFrameAdaptor.toFrame builds: specversion=1.0,
// type=eventmeshmessage, source=/, emorigin=meshmessage, id=header seq (if
// set), subject=topic (if set), then the message properties, then its
// headers; a later name overwrites an earlier one in place. Data is the
// body text.
func FromMeshMessage(dst []byte, h *PackageHeader, m *MeshMessage) ([]byte, error) {
	attrs := make([]Attr, 0, 6+len(m.Properties)+len(m.Headers))
	put := func(name, value string) {
		for i := range attrs {
			if attrs[i].Name == name {
				attrs[i].Value = value
				return
			}
		}
		attrs = append(attrs, Attr{name, value})
	}
	put("specversion", "1.0")
	put("type", "eventmeshmessage")
	put("source", "/")
	put("emorigin", "meshmessage")
	if h != nil && h.Seq != "" {
		put("id", h.Seq)
	}
	if m.Topic != "" {
		put("subject", m.Topic)
	}
	for _, a := range m.Properties {
		put(a.Name, a.Value)
	}
	for _, a := range m.Headers {
		put(a.Name, a.Value)
	}
	return AppendFrame(dst, TypeEvent, 0, 0, attrs, []byte(m.Body))
}

// ToFrame maps a message-carrying package to its EVENT frame
// (MeshMessage then FromMeshMessage).
func (p *Package) ToFrame(dst []byte) ([]byte, error) {
	if !p.Header.Command.CarriesMessage() {
		return dst, pkgErr(0, ErrPackageCommand, p.Header.Command.String()+" does not carry a message")
	}
	m, err := p.MeshMessage()
	if err != nil {
		return dst, err
	}
	return FromMeshMessage(dst, &p.Header, &m)
}
