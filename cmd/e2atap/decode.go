package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

const decodeUsage = `Usage: e2atap decode [flags] FILE

Prints each record or frame of FILE as one JSON line: where it came from,
what it is (response, request, event, jsonrpc, cloudevent; or the frame's
type, flags, sequence and attributes) and its content. FILE "-" is standard
input. Records that cannot be decoded print an "error" line and decoding
goes on where the format allows (a frame file stops at the first bad frame).

Exit status: 0, or 2 on a usage or I/O error.

Flags:
`

func cmdDecode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("decode", stderr)
	format := fs.String("format", "auto", "input format: auto (first byte 0xEF: frames, unless a UTF-8 byte order mark; else JSON lines), jsonl or frames")
	maxLine := fs.Int("max-line-bytes", 8<<20, "a longer JSON line prints an error and is skipped")
	if done, code := parseFlags(fs, decodeUsage, args, stdout); done {
		return code
	}
	f, err := validate.ParseFormat(*format)
	if err == nil && fs.NArg() != 1 {
		err = fmt.Errorf("want exactly one FILE (or - for standard input), got %d", fs.NArg())
	}
	if err != nil {
		fmt.Fprintf(stderr, "e2atap decode: %v\n", err)
		fs.Usage()
		return exitUsage
	}
	name := fs.Arg(0)
	rc, err := openInput(name, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "e2atap decode: %v\n", err)
		return exitUsage
	}
	defer rc.Close()
	label := name
	if name == "-" {
		label = "stdin"
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	d := &dissector{enc: json.NewEncoder(w)}
	d.enc.SetEscapeHTML(false)
	_, err = validate.Read(rc, label, f, validate.ReadOptions{MaxLineBytes: *maxLine}, d)
	w.Flush()
	if err != nil {
		fmt.Fprintf(stderr, "e2atap decode: reading %s: %v\n", name, err)
		return exitUsage
	}
	return exitOK
}

// dissector prints what the reader hands it (a validate.Handler).
type dissector struct {
	enc *json.Encoder
	rec e2a.Record
}

type decodedJSON struct {
	Source string          `json:"source"`
	Class  string          `json:"class"`
	Record json.RawMessage `json:"record"`
}

type decodedFrame struct {
	Source     string      `json:"source"`
	MsgType    uint8       `json:"msgType"`
	Type       string      `json:"type"`
	Flags      uint8       `json:"flags"`
	Done       bool        `json:"done"`
	HasError   bool        `json:"hasError"`
	HasMeta    bool        `json:"hasMeta"`
	Seq        int32       `json:"seq"`
	Attrs      [][2]string `json:"attrs"`
	Data       *string     `json:"data,omitempty"`
	DataBase64 *string     `json:"data_base64,omitempty"`
	Size       int         `json:"size"`
}

type decodeFailure struct {
	Source string `json:"source"`
	Error  string `json:"error"`
}

func (d *dissector) Observe(in *validate.Input) {
	if err := e2a.ScanStd(in.Data, &d.rec); err != nil {
		d.enc.Encode(decodeFailure{Source: in.Source(), Error: "not a JSON object: " + err.Error()})
		return
	}
	d.enc.Encode(decodedJSON{Source: in.Source(), Class: e2a.Classify(&d.rec).String(), Record: json.RawMessage(in.Data)})
}

func (d *dissector) ObserveFrame(in *validate.Input, f *frame.Frame) {
	out := decodedFrame{
		Source: in.Source(), MsgType: f.MsgType, Type: frameTypeName(f.MsgType), Flags: f.Flags,
		Done: f.Done(), HasError: f.HasError(), HasMeta: f.HasMeta(), Seq: f.Seq, Size: f.Size,
		Attrs: [][2]string{},
	}
	f.Attrs(func(name, value []byte) bool {
		out.Attrs = append(out.Attrs, [2]string{string(name), string(value)})
		return true
	})
	if utf8.Valid(f.Data) {
		s := string(f.Data)
		out.Data = &s
	} else {
		s := base64.StdEncoding.EncodeToString(f.Data)
		out.DataBase64 = &s
	}
	d.enc.Encode(out)
}

func (d *dissector) DecodeError(in *validate.Input, proto, msg string) {
	d.enc.Encode(decodeFailure{Source: in.Source(), Error: msg})
}

func frameTypeName(t uint8) string {
	switch t {
	case frame.TypeStreamReq:
		return "STREAM_REQ"
	case frame.TypeStreamChunk:
		return "STREAM_CHUNK"
	case frame.TypeEvent:
		return "EVENT"
	}
	return fmt.Sprintf("UNKNOWN(%d)", t)
}
