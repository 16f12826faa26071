package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/e2atap/e2atap/e2a"
	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

const decodeUsage = `Usage: e2atap decode [flags] FILE

Prints each record or frame of FILE as one JSON line: where it came from,
what it is (response, request, event, jsonrpc, cloudevent; or the frame's
type, flags, sequence and attributes) and its content. FILE "-" is standard
input. Records that cannot be decoded print an "error" line and decoding
goes on where the format allows (a frame file stops at the first bad frame).

The output is redacted as the sidecar's record log is: credentials and
personal data are always masked (with the fingerprints of
E2ATAP_FINGERPRINT_KEY, or of a random key), and model output and user
text are masked with their length unless --show-content is given.

Exit status: 0, or 2 on a usage or I/O error, or interrupted: on SIGINT
or SIGTERM the input is read no further, and what was decoded is printed.

Flags:
`

func cmdDecode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	key := []byte(os.Getenv("E2ATAP_FINGERPRINT_KEY"))
	pol := newPolicy(key)
	stderr = redactingWriter{w: stderr, p: pol}
	fs := newFlagSet("decode", stderr)
	format := fs.String("format", "auto", "input format: auto (first byte 0xEF: frames, unless a UTF-8 byte order mark; else JSON lines), jsonl or frames")
	maxLine := fs.Int("max-line-bytes", 8<<20, "a longer JSON line prints an error and is skipped")
	showContent := fs.Bool("show-content", false, "print model output and user text (credentials and personal data stay masked): for a person debugging on their own machine")
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
	var in io.Reader = rc // a file stays an *os.File: Read's fast paths
	if name == "-" {
		label = "stdin"
		in = newInterruptible(ctx, rc)
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	content := jsonlog.ContentMask
	if *showContent {
		content = jsonlog.ContentKeep
	}
	d := &dissector{enc: json.NewEncoder(w), pol: pol, red: newRecordRedactor(content, key)}
	d.enc.SetEscapeHTML(false)
	_, err = validate.Read(in, label, f, validate.ReadOptions{MaxLineBytes: *maxLine, Stop: func() bool { return ctx.Err() != nil }}, d)
	w.Flush()
	if ctx.Err() != nil {
		where := name
		if name == "-" {
			where = "standard input"
		}
		fmt.Fprintf(stderr, "e2atap decode: interrupted in %s: the input was not read to its end\n", where)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "e2atap decode: reading %s: %v\n", name, err)
		return exitUsage
	}
	return exitOK
}

// dissector prints what the reader hands it (a validate.Handler), every
// value redacted: records and JSON frame data and attributes by the record
// log's Redactor, other text by the policy.
type dissector struct {
	enc *json.Encoder
	pol *policy
	red *jsonlog.Redactor
	rec e2a.Record
	buf []byte
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
	src := d.pol.String(in.Source())
	if validate.LineBOM(in) {
		j := *in
		j.Data = j.Data[3:] // JSON behind a byte order mark, as the first line
		in = &j
	}
	if err := e2a.ScanStd(in.Data, &d.rec); err != nil {
		d.enc.Encode(decodeFailure{Source: src, Error: d.pol.String("not a JSON object: " + err.Error())})
		return
	}
	out, _, err := d.red.Redact(d.buf[:0], in.Data)
	if err != nil {
		d.enc.Encode(decodeFailure{Source: src, Error: d.pol.String("not a JSON object: " + err.Error())})
		return
	}
	d.buf = out
	d.enc.Encode(decodedJSON{Source: src, Class: e2a.Classify(&d.rec).String(), Record: json.RawMessage(out)})
}

// text redacts a frame attribute or data that is text: JSON objects as
// records, anything else as free text.
func (d *dissector) text(b []byte) string {
	if len(b) > 0 && b[0] == '{' {
		if out, _, err := d.red.Redact(nil, b); err == nil {
			return string(out)
		}
	}
	return d.pol.String(string(b))
}

func (d *dissector) ObserveFrame(in *validate.Input, f *frame.Frame) {
	out := decodedFrame{
		Source: d.pol.String(in.Source()), MsgType: f.MsgType, Type: frameTypeName(f.MsgType), Flags: f.Flags,
		Done: f.Done(), HasError: f.HasError(), HasMeta: f.HasMeta(), Seq: f.Seq, Size: f.Size,
		Attrs: [][2]string{},
	}
	f.Attrs(func(name, value []byte) bool {
		out.Attrs = append(out.Attrs, [2]string{d.pol.String(string(name)), d.text(value)})
		return true
	})
	// Data is content: masked with its length unless shown; shown, its
	// credentials and personal data are still masked (in the bytes, for
	// binary data).
	switch {
	case len(f.Data) > 0 && f.Data[0] == '{' && utf8.Valid(f.Data):
		s := d.text(f.Data)
		out.Data = &s
	case d.red.Content() != jsonlog.ContentKeep && len(f.Data) > 0:
		s := fmt.Sprintf("******(len:%d)", len(f.Data))
		out.Data = &s
	case utf8.Valid(f.Data):
		s := d.pol.String(string(f.Data))
		out.Data = &s
	default:
		s := base64.StdEncoding.EncodeToString(d.pol.MaskText(nil, f.Data))
		out.DataBase64 = &s
	}
	d.enc.Encode(out)
}

func (d *dissector) DecodeError(in *validate.Input, proto, msg string) {
	d.enc.Encode(decodeFailure{Source: d.pol.String(in.Source()), Error: d.pol.String(msg)})
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
