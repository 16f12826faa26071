package validate

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// bigFrameFile writes n frames (several streams, one with a sequence gap)
// after prefix, over the 1 MiB from which a file is mapped.
func bigFrameFile(t *testing.T, prefix []byte, n int, tail []byte) (string, []byte) {
	t.Helper()
	data := append([]byte(nil), prefix...)
	for i := 0; i < n; i++ {
		seq := int32(i / 4)
		if i/4 == 77 && i%4 == 1 {
			seq++ // a gap on one stream
		}
		b, err := frame.AppendFrame(nil, frame.TypeStreamChunk, 0, seq,
			[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("s-%d", i%4)}, {Name: "etype", Value: "text"}}, bytes.Repeat([]byte("x"), 100))
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, b...)
	}
	data = append(data, tail...)
	p := filepath.Join(t.TempDir(), "cap.frames")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, data
}

func renderFindings(c *collector) string {
	var b strings.Builder
	for _, f := range c.findings {
		fmt.Fprintf(&b, "%d %s %s %s %s\n", f.Index, f.Rule, f.Stream, f.Source, f.Message)
	}
	return b.String()
}

// TestMappedFramesReadAsRead: a frame file read through its mapping (an
// *os.File of some size) gives what the same bytes give through read(2),
// from where the file's offset was, a corrupt tail included; the offset is
// then past what was read.
func TestMappedFramesReadAsRead(t *testing.T) {
	junk := []byte("not frames\n")
	p, data := bigFrameFile(t, junk, 20000, []byte{frame.Magic, frame.Version, 2, 0})
	if len(data) < 1<<21 {
		t.Fatalf("file of %d bytes is too small to be mapped", len(data))
	}
	for _, format := range []Format{FormatAuto, FormatFrames} {
		want := &collector{}
		e := NewEngine(DefaultConfig(), want)
		if _, err := Read(bytes.NewReader(data[len(junk):]), "cap", format, ReadOptions{}, e); err != nil {
			t.Fatal(err)
		}
		e.Finish(ReasonEOF, &Input{})

		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Seek(int64(len(junk)), 0); err != nil {
			t.Fatal(err)
		}
		got := &collector{}
		e = NewEngine(DefaultConfig(), got)
		// Offsets of the mapped read count from the file's start.
		if _, err := Read(f, "cap", format, ReadOptions{}, e); err != nil {
			t.Fatal(err)
		}
		e.Finish(ReasonEOF, &Input{})
		pos, _ := f.Seek(0, 1)
		f.Close()
		if len(want.findings) < 2 || len(want.records) != len(got.records) {
			t.Fatalf("format %d: %d findings, %d and %d records", format, len(want.findings), len(want.records), len(got.records))
		}
		w, g := renderFindings(want), renderFindings(got)
		if g != shiftOffsets(t, w, len(junk)) {
			t.Errorf("format %d: mapped read\n%s\nread(2)\n%s", format, g, w)
		}
		if pos != int64(len(data)-4) {
			t.Errorf("file offset %d after the read, want %d", pos, len(data)-4)
		}
	}
}

// shiftOffsets adds d to every "cap@N" and "at byte N" of rendered findings.
func shiftOffsets(t *testing.T, s string, d int) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.SplitAfter(s, "\n") {
		var idx int
		var rest string
		for _, pre := range []string{"cap@", "at byte "} {
			for {
				i := strings.Index(line, pre)
				if i < 0 {
					break
				}
				j := i + len(pre)
				k := j
				for k < len(line) && line[k] >= '0' && line[k] <= '9' {
					k++
				}
				fmt.Sscan(line[j:k], &idx)
				rest = line[k:]
				out.WriteString(line[:j])
				out.WriteString(fmt.Sprint(idx + d))
				line = rest
			}
		}
		out.WriteString(line)
	}
	return out.String()
}

// shrinker truncates the file it reads after the first frame.
type shrinker struct {
	path string
	done bool
	n    int
}

func (s *shrinker) Observe(*Input) {}
func (s *shrinker) ObserveFrame(in *Input, f *frame.Frame) {
	s.n++
	if !s.done {
		s.done = true
		if err := os.Truncate(s.path, 2*int64(os.Getpagesize())); err != nil {
			panic(err)
		}
	}
}
func (s *shrinker) DecodeError(*Input, string, string) {}

// TestMappedFileShrinks: a frame file cut shorter while it is read through
// its mapping is an I/O error of the read, not a crash of the process.
func TestMappedFileShrinks(t *testing.T) {
	p, _ := bigFrameFile(t, nil, 40000, nil)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := &shrinker{path: p}
	_, err = Read(f, "cap", FormatFrames, ReadOptions{}, h)
	if err == nil || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("Read = %v after %d frames, want the file shrank", err, h.n)
	}
}

// TestMappedOnlyForPlainFrames: a regular file big enough to be mapped is
// read as frames only when it holds plain frames: a UTF-8 byte order mark
// (whose first byte is the frame magic) means JSON lines (read in place
// after the mark), a gzip stream is read decompressed, as through read(2).
func TestMappedOnlyForPlainFrames(t *testing.T) {
	t.Parallel() // sets no package state, reads none that a parallel test sets: main_test.go
	var jl bytes.Buffer
	jl.WriteString(utf8BOM)
	for i := 0; jl.Len() < 2<<20; i++ {
		fmt.Fprintf(&jl, `{"request_id":"r%d","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete"}`+"\n", i)
	}
	_, frames := bigFrameFile(t, nil, 20000, nil)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(frames)
	zw.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		data []byte
	}{{"bom.jsonl", jl.Bytes()}, {"frames.gz", gz.Bytes()}} {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		want := &collector{}
		e := NewEngine(DefaultConfig(), want)
		if _, err := Read(bytes.NewReader(c.data), c.name, FormatAuto, ReadOptions{}, e); err != nil {
			t.Fatal(err)
		}
		e.Finish(ReasonEOF, &Input{})
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		got := &collector{}
		e = NewEngine(DefaultConfig(), got)
		_, err = Read(f, c.name, FormatAuto, ReadOptions{}, e)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		e.Finish(ReasonEOF, &Input{})
		if len(got.records) < 1000 || strings.Join(got.records, ",") != strings.Join(want.records, ",") || renderFindings(got) != renderFindings(want) {
			t.Errorf("%s: %d records from the file, %d from its bytes (first %v)", c.name, len(got.records), len(want.records), got.records[:min(3, len(got.records))])
		}
	}
}
