package validate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
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
	Lost      bool      `json:"lost"` // a loss with no record (Sink LossMarker)
	All       bool      `json:"all"`  // with Lost: lines of the log itself were lost, anyone's
	Open      bool      `json:"open"` // with All: the run stopped here with streams open (Sink OpenMarker)
	Joined    bool      `json:"joined"`
	FromLog   bool      `json:"from_log"`
	At        *LoggedAt `json:"at"`
	Secret    *struct {
		Kind  string `json:"kind"`
		Path  string `json:"path"`
		Split bool   `json:"split"`
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

// LoggedAt is where a logged record was read, in a form that survives a
// restart of its tap (Input.ResumePoint): the record log writes it as
// "at":{"src":…,"off":…,"len":…}, src passed through the log's text
// redaction like the source.
type LoggedAt struct {
	Src string `json:"src"`
	Off int64  `json:"off"`
	Len int    `json:"len"`
}

// ResumePoint is the part of a record's position that a tap reads again
// after a crash (DESIGN.md, "Durability order"): src names the sequence the
// tap resumes in (a log file, a Kafka topic/partition, a subject of a
// JetStream stream) and off the record's place in it (byte offset, Kafka
// offset, stream sequence). Positions that do not survive a restart (a
// WebSocket connection, core NATS) have none: ok is false. Nor has a line
// that validate read from a file (no tap): it is read once, and its
// position holds no byte offset, so that every line of a file had the same
// point and a replay of validate's record log took a line repeated as it
// was (a duplicated record: e2a.seq_dup) for the live run's re-read of one
// and skipped it.
func (in *Input) ResumePoint() (src string, off int64, ok bool) {
	p := &in.Pos
	switch {
	case p.Kind == PosLine && in.FromLog && p.Name != "" && in.Tap != "":
		return p.Name, p.Offset, true
	case p.Kind == PosKafka:
		return p.Name + "/" + strconv.FormatInt(int64(p.Partition), 10), p.Offset, true
	case p.Kind == PosSubject && p.Offset > 0:
		return p.Name, p.Offset, true
	}
	return "", 0, false
}

// ReadLoggedAt reads the tap and resume point of one record log line
// (false when the line has none: another writer, an older log, a position
// that does not survive a restart).
func ReadLoggedAt(line []byte) (tap string, at LoggedAt, ok bool) {
	m, ok := readLogged(line)
	if !ok || m.At == nil {
		return "", LoggedAt{}, false
	}
	return m.Tap, *m.At, true
}

// replayWindow is how many resume points a replay remembers: a record
// read again after a crash follows its first reading closely (by what the
// tap read after its last saved position), and the live run skips those it
// finds in its log's tail already (cmd/e2atap).
const replayWindow = 1 << 18

type seenKey struct {
	tap, src string
	off      int64
}

type seenVal struct {
	n int    // length of the input
	h uint64 // the logged content, fingerprints aside (contentHash)
}

// replaySeen recognises records of a record log read twice by the live run
// (at-least-once delivery across a crash): same tap, same resume point,
// same length and the same logged content. The content tells a re-read
// from a new file's line at a logged offset (a rotation or truncation to
// the same name), which may well have the same length. It forgets the
// oldest first (FIFO), so memory is bounded whatever the log's length.
type replaySeen struct {
	m    map[seenKey]seenVal
	ring []seenKey
	pos  int
	seed maphash.Seed
}

// again adds the point of line and reports whether it was there already.
func (r *replaySeen) again(tap string, at *LoggedAt, line []byte) bool {
	if r.m == nil {
		r.m = make(map[seenKey]seenVal, 1024)
		r.ring = make([]seenKey, replayWindow)
		r.seed = maphash.MakeSeed()
	}
	k := seenKey{tap: tap, src: at.Src, off: at.Off}
	v := seenVal{n: at.Len, h: contentHash(r.seed, line)}
	if old, ok := r.m[k]; ok && old == v {
		return true
	}
	if old := r.ring[r.pos]; old.src != "" || old.tap != "" {
		delete(r.m, old)
	}
	r.ring[r.pos] = k
	r.pos = (r.pos + 1) % len(r.ring)
	r.m[k] = v
	return false
}

// fpMark opens a fingerprint in a masked value: "******(fp:xxxxxxxx)".
var fpMark = []byte("(fp:")

// contentHash hashes a logged record, its "_e2atap" object and its
// fingerprints aside: a run without a fingerprint key has a key of its own,
// so the same credential is fingerprinted differently after a restart.
func contentHash(seed maphash.Seed, line []byte) uint64 {
	if i := bytes.LastIndex(line, loggedKey); i >= 0 {
		line = line[:i]
	}
	var h maphash.Hash
	h.SetSeed(seed)
	for {
		i := bytes.Index(line, fpMark)
		if i < 0 {
			h.Write(line)
			return h.Sum64()
		}
		h.Write(line[:i+len(fpMark)])
		line = line[i+len(fpMark):]
		if j := bytes.IndexByte(line, ')'); j >= 0 && j <= 16 {
			line = line[j:]
		}
	}
}

// gapper is the part of a Handler that marks a connection's loss (Engine
// and Sharded have it).
type gapper interface{ Gap(*Input) }

// allGapper marks every open stream's loss (Engine and Sharded).
type allGapper interface{ GapAll() }

// openLeaver drops every open stream unreported (Engine and Sharded).
type openLeaver interface{ LeaveOpen() }

// replayLine judges one line of a record log as the live run did. A line
// without a readable "_e2atap" object is judged as a plain record.
// A line whose resume point was seen already in this replay is the
// live run's at-least-once re-read after a crash and is skipped: judged
// once (RULES.md).
func replayLine(h Handler, in *Input, seen *replaySeen, name string, line int64, idx uint64, data []byte) {
	if isBlank(data) {
		return
	}
	m, ok := readLogged(data)
	if !ok {
		observeLine(h, in, name, line, idx, data, true)
		return
	}
	if m.Lost && m.All {
		if o, ok := h.(openLeaver); ok && m.Open {
			// The live run stopped here and judged its open streams
			// no further.
			o.LeaveOpen()
			return
		}
		// The live run wrote no line here for lines it judged: a
		// replay cannot judge across them.
		if g, ok := h.(allGapper); ok {
			g.GapAll()
		}
		return
	}
	if m.At != nil && seen.again(m.Tap, m.At, data) {
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
	if m.Gap || m.Lost {
		if g, ok := h.(gapper); ok {
			g.Gap(in)
		}
	}
	if m.Lost {
		return // no record
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
			in.Logged = &Logged{SecretKind: m.Secret.Kind, SecretPath: m.Secret.Path, SecretSplit: m.Secret.Split}
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
