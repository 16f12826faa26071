package validate

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// framesAround writes small frames, one frame larger than the read buffer
// (frameReadBuf) and small frames again, then tail.
func framesAround(t *testing.T, big int, tail []byte) (string, []byte) {
	t.Helper()
	_, data := bigFrameFile(t, nil, 9000, nil)
	b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, frame.FlagDone, 0,
		[]frame.Attr{{Name: "sid", Value: "huge"}, {Name: "etype", Value: "tool"}}, bytes.Repeat([]byte("y"), big))
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, b...)
	_, more := bigFrameFile(t, nil, 9000, nil)
	data = append(data, more...) // the same streams again: sequence findings
	data = append(data, tail...)
	p := filepath.Join(t.TempDir(), "around.frames")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, data
}

// readAll reads r into an Engine or a run of one inline shard and returns
// the findings and records rendered.
func readAll(t *testing.T, r io.Reader, sharded bool) string {
	t.Helper()
	c := &collector{}
	if sharded {
		s := NewSharded(1, DefaultConfig(), c)
		s.Inline()
		if _, err := Read(r, "cap", FormatAuto, ReadOptions{}, s); err != nil {
			t.Fatal(err)
		}
		s.Finish(ReasonEOF, &Input{})
		s.Close()
	} else {
		e := NewEngine(DefaultConfig(), c)
		if _, err := Read(r, "cap", FormatAuto, ReadOptions{}, e); err != nil {
			t.Fatal(err)
		}
		e.Finish(ReasonEOF, &Input{})
	}
	if len(c.findings) < 3 || len(c.records) < 18000 {
		t.Fatalf("%d findings, %d records", len(c.findings), len(c.records))
	}
	var b bytes.Buffer
	b.WriteString(renderFindings(c))
	for _, r := range c.records {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestFramesFileRead: a frame file read by read(2) into the reused buffer
// (readFramesFile: an Engine, a run of one inline shard) gives what the
// same bytes give through a plain io.Reader, across a frame larger than the
// buffer (it grows, then shrinks back) and a corrupt tail; the file offset
// is then where the corrupt frame starts.
func TestFramesFileRead(t *testing.T) {
	tail := []byte{frame.Magic, frame.Version, 2, 0}
	p, data := framesAround(t, 3*frameReadBuf+123, tail)
	for _, sharded := range []bool{false, true} {
		want := readAll(t, bytes.NewReader(data), sharded)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, f, sharded)
		pos, _ := f.Seek(0, io.SeekCurrent)
		f.Close()
		if got != want {
			t.Errorf("sharded %t: read(2) of the file differs from an io.Reader:\n%s", sharded, firstDiff(want, got))
		}
		if pos != int64(len(data)-len(tail)) {
			t.Errorf("sharded %t: file offset %d after the read, want %d", sharded, pos, len(data)-len(tail))
		}
	}
}

// appender appends a copy of the file's first bytes to it at its first
// frame.
type appender struct {
	path string
	n    int
}

func (a *appender) Observe(*Input) {}
func (a *appender) ObserveFrame(in *Input, f *frame.Frame) {
	if a.n++; a.n == 1 {
		w, err := os.OpenFile(a.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			panic(err)
		}
		defer w.Close()
		if _, err := w.Write(in.Data); err != nil {
			panic(err)
		}
	}
}
func (a *appender) DecodeError(*Input, string, string) { panic("decode error") }

// TestFramesFileGrows: a frame file appended to while it is read is read
// up to the size it had when the read started, as a mapped read is.
func TestFramesFileGrows(t *testing.T) {
	p, _ := bigFrameFile(t, nil, 20000, nil)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := &appender{path: p}
	if _, err := Read(f, "cap", FormatFrames, ReadOptions{}, a); err != nil {
		t.Fatal(err)
	}
	if a.n != 20000 {
		t.Fatalf("%d frames read, want the 20000 there when the read started", a.n)
	}
}

// hiddenSharded is a Sharded behind the Handler interface only, so that
// decodeFrames takes the path of any handler (Sharded.ObserveFrame).
type hiddenSharded struct{ Handler }

// TestFramesInlineEngineSameAsSharded: a run of one inline shard whose
// engine decodeFrames calls directly (inlineEngine) reports what the same
// run does through Sharded.ObserveFrame, findings, records and the
// watermark, read by read(2) and from a plain io.Reader; the watermark
// seen during the read never passes the frame being judged.
func TestFramesInlineEngineSameAsSharded(t *testing.T) {
	tail := []byte{frame.Magic, frame.Version, 2, 0}
	p, data := framesAround(t, frameReadBuf+77, tail)
	run := func(direct, file bool) (string, uint64) {
		c := &collector{}
		ws := &watchSink{collector: c}
		s := NewSharded(1, DefaultConfig(), ws)
		s.Inline()
		var h Handler = hiddenSharded{s}
		if direct {
			h = s
			if s.inlineEngine() == nil {
				t.Fatal("no inline engine")
			}
		}
		var r io.Reader = bytes.NewReader(data)
		if file {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			r = f
		}
		ws.watch = func(in *Input) {
			if w := s.Watermark(); w >= in.Index && in.Index != 0 {
				t.Fatalf("watermark %d at input %d", w, in.Index)
			}
		}
		if _, err := Read(r, "cap", FormatAuto, ReadOptions{}, h); err != nil {
			t.Fatal(err)
		}
		ws.watch = nil
		w := s.Watermark()
		s.Finish(ReasonEOF, &Input{})
		s.Close()
		if len(c.findings) < 3 || len(c.records) < 18000 {
			t.Fatalf("%d findings, %d records", len(c.findings), len(c.records))
		}
		return renderFindings(c) + strings.Join(c.records, "\n"), w
	}
	for _, file := range []bool{false, true} {
		want, ww := run(false, file)
		got, gw := run(true, file)
		if got != want {
			t.Errorf("file %t: the direct engine differs from Sharded.ObserveFrame:\n%s", file, firstDiff(want, got))
		}
		if gw != ww {
			t.Errorf("file %t: watermark %d after the read, want %d", file, gw, ww)
		}
	}
}

// watchSink is a collector that calls watch at each record.
type watchSink struct {
	*collector
	watch func(*Input)
}

func (w *watchSink) Record(r *RecordInfo) {
	if w.watch != nil {
		w.watch(r.In)
	}
	w.collector.Record(r)
}
