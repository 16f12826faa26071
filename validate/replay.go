package validate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/e2atap/e2atap/frame"
)

// Replaying e2atap's own record log. Every line of that log ends with an
// "_e2atap" object (exporters/jsonlog): the tap, connection and source the
// live run saw the record on, its direction and capture time, whether it
// was read from a log, whether messages were lost before it or it arrived
// in a join window, and what the redaction took away that a rule reads (a
// credential's kind and path; an undecodable input's reason). A file whose
// first line carries one is read in replay mode: each record is judged in
// the scope it had live (streams per tap and connection), with the live
// source in its findings, so that `e2atap validate` of the log gives the
// live run's findings. Frames, logged as JSON objects, are rebuilt and
// judged as frames.

// loggedKey opens the object; the log writes it last in the line.
var loggedKey = []byte(`"_e2atap":{`)

// isRecordLog reports whether a first line is one of e2atap's record log.
func isRecordLog(line []byte) bool { return bytes.Contains(line, loggedKey) }

// loggedMeta is the "_e2atap" object of a record log line.
type loggedMeta struct {
	Tap       string    `json:"tap"`
	Direction string    `json:"direction"`
	Time      time.Time `json:"time"`
	Source    string    `json:"source"`
	Conn      string    `json:"conn"`
	Format    string    `json:"format"`
	Invalid   bool      `json:"invalid"`
	Reason    string    `json:"reason"`
	Proto     string    `json:"proto"`
	Gap       bool      `json:"gap"`
	Joined    bool      `json:"joined"`
	FromLog   bool      `json:"from_log"`
	Secret    *struct {
		Kind string `json:"kind"`
		Path string `json:"path"`
	} `json:"secret"`
}

var dirByName = map[string]uint8{"none": 0, "upstream": 1, "downstream": 2}

// readLogged parses the "_e2atap" object at the end of line.
func readLogged(line []byte) (loggedMeta, bool) {
	var m loggedMeta
	i := bytes.LastIndex(line, loggedKey)
	if i < 0 {
		return m, false
	}
	dec := json.NewDecoder(bytes.NewReader(line[i+len(loggedKey)-1:]))
	if err := dec.Decode(&m); err != nil {
		return m, false
	}
	return m, true
}

// gapper is the part of a Handler that marks a connection's loss (Engine
// and Sharded have it).
type gapper interface{ Gap(*Input) }

// replayLine judges one line of a record log as the live run did. A line
// without a readable "_e2atap" object is judged as a plain record.
func replayLine(h Handler, in *Input, name string, line int64, idx uint64, data []byte) {
	if isBlank(data) {
		return
	}
	m, ok := readLogged(data)
	if !ok {
		observeLine(h, in, name, line, idx, data, true)
		return
	}
	*in = Input{
		Tap:     m.Tap,
		Conn:    m.Conn,
		Pos:     Position{Kind: PosVerbatim, Name: strings.TrimPrefix(m.Source, m.Tap+":")},
		Dir:     dirByName[m.Direction],
		Time:    m.Time,
		Data:    data,
		FromLog: m.FromLog,
		Joined:  m.Joined,
		Index:   idx,
	}
	if m.Source == "" {
		in.Pos = Position{Kind: PosLine, Name: name, Line: line}
	}
	if m.Gap {
		if g, ok := h.(gapper); ok {
			g.Gap(in)
		}
	}
	switch {
	case m.Invalid:
		proto := ProtoE2A
		if m.Proto == ProtoEventMesh {
			proto = ProtoEventMesh
		}
		h.DecodeError(in, proto, "undecodable when the live run read it ("+m.Reason+"; the log keeps none of its content)")
	case m.Format == "frame":
		b, f, err := rebuildFrame(data)
		if err != nil {
			h.DecodeError(in, ProtoEventMesh, "logged frame: "+err.Error())
			return
		}
		in.Data = b // a shard decodes the frame again from its bytes
		h.ObserveFrame(in, &f)
	default:
		if m.Secret != nil {
			in.Logged = &Logged{SecretKind: m.Secret.Kind, SecretPath: m.Secret.Path}
		} else if m.FromLog {
			in.Logged = &Logged{}
		}
		h.Observe(in)
	}
}

// loggedFrame is a frame as the record log writes it.
type loggedFrame struct {
	MsgType      uint8           `json:"msgType"`
	Flags        uint8           `json:"flags"`
	Seq          int32           `json:"seq"`
	Attrs        json.RawMessage `json:"attrs"`
	Data         string          `json:"data"`
	DataEncoding string          `json:"data_encoding"`
}

// rebuildFrame encodes a logged frame again (attributes in their logged
// order, duplicates kept) and decodes it, for the frame rules.
func rebuildFrame(line []byte) ([]byte, frame.Frame, error) {
	var lf loggedFrame
	if err := json.Unmarshal(line, &lf); err != nil {
		return nil, frame.Frame{}, err
	}
	var attrs []frame.Attr
	if len(lf.Attrs) > 0 {
		dec := json.NewDecoder(bytes.NewReader(lf.Attrs))
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil, frame.Frame{}, errors.New("attrs is not an object")
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, frame.Frame{}, err
			}
			var v string
			if err := dec.Decode(&v); err != nil {
				return nil, frame.Frame{}, fmt.Errorf("attribute %q: %w", k, err)
			}
			attrs = append(attrs, frame.Attr{Name: k.(string), Value: v})
		}
		if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
			return nil, frame.Frame{}, err
		}
	}
	data := []byte(lf.Data)
	if lf.DataEncoding == "base64" {
		var err error
		if data, err = base64.StdEncoding.DecodeString(lf.Data); err != nil {
			return nil, frame.Frame{}, err
		}
	}
	b, err := frame.AppendFrameUnchecked(nil, lf.MsgType, lf.Flags, lf.Seq, attrs, data)
	if err != nil {
		return nil, frame.Frame{}, err
	}
	f, _, err := frame.Decode(b)
	return b, f, err
}
