package validate

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/frame"
)

// linesAround is a JSON-lines corpus with a byte order mark, odd lines,
// lines longer than the read buffer (lineReadBuf) within limit (it grows
// twice), lines over it (one shorter than the grown buffer, one longer:
// skipped in pieces), CRLF on some, and no newline at the end.
func linesAround(limit int) []byte {
	var data []byte
	data = append(data, utf8BOM...)
	data = append(data, walkJSONCorpus(31, 3000, 60, 4000, allOdds)...)
	for i, n := range []int{300 << 10, limit - 60, lineReadBuf - 1, lineReadBuf + 1, limit + 10, 3 * limit, 2*lineReadBuf - 40} {
		eol := "\n"
		if i%2 == 1 {
			eol = "\r\n"
		}
		rec := fmt.Sprintf(`{"request_id":"long-%d","sequence":0,"is_final":true,"pad":"`, i)
		data = append(data, rec...)
		data = append(data, bytes.Repeat([]byte("p"), max(0, n-len(rec)-2))...)
		data = append(data, `"}`+eol...)
		data = append(data, walkJSONCorpus(uint64(40+i), 300, 20, 4000, allOdds)...)
	}
	return append(data, `{"request_id":"no-newline-at-end","sequence":0}`...)
}

// readLines reads r (from offset 0) into an Engine, or a run of one
// inline shard, and renders what they found and logged.
func readLines(t *testing.T, r io.Reader, sharded bool, opts ReadOptions) string {
	t.Helper()
	c := &collector{}
	var last uint64
	var err error
	if sharded {
		s := NewSharded(1, DefaultConfig(), c)
		s.Inline()
		last, err = Read(r, "cap", FormatAuto, opts, s)
		s.Finish(ReasonEOF, &Input{})
		s.Close()
	} else {
		e := NewEngine(DefaultConfig(), c)
		last, err = Read(r, "cap", FormatAuto, opts, e)
		e.Finish(ReasonEOF, &Input{})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "last %d err %v\n", last, err)
	b.WriteString(renderFindings(c))
	for _, r := range c.records {
		b.WriteString(r)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestLinesFileRead: a JSON-lines file read by read(2) into the reused
// buffer (readLinesFile: an Engine, a run of one inline shard) gives what
// the same bytes give through a plain io.Reader (readJSONL), across lines
// longer than the buffer (it grows, then shrinks back), lines over the
// limit, CRLF and a byte order mark; the file offset is then its end. In
// the poison mode every line is overwritten once its handler returns: the
// same verdicts say that nothing judged later (a split secret's tail, a
// stream's pending state) refers into the buffer.
func TestLinesFileRead(t *testing.T) {
	t.Parallel() // sets no package state, reads none that a parallel test sets: main_test.go
	const limit = 600 << 10
	data := linesAround(limit)
	p := writeTemp(t, "around.jsonl", data)
	opts := ReadOptions{MaxLineBytes: limit, FromLog: true}
	poisonOn()
	defer func(was bool) { poison.Store(was) }(poison.Load())
	for _, sharded := range []bool{false, true} {
		want := readLines(t, bytes.NewReader(data), sharded, opts)
		for _, rule := range []string{"e2a.decode", "e2a.seq_gap", "e2a.secret", "over the"} {
			if !strings.Contains(want, rule) {
				t.Fatalf("the corpus gives no %s:\n%.2000s", rule, want)
			}
		}
		for _, poisoned := range []bool{false, true} {
			poison.Store(poisoned)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			got := readLines(t, f, sharded, opts)
			pos, _ := f.Seek(0, io.SeekCurrent)
			f.Close()
			if got != want {
				t.Errorf("sharded %t, poison %t: read(2) of the file differs from an io.Reader: %s", sharded, poisoned, firstDiff(want, got))
			}
			if pos != int64(len(data)) {
				t.Errorf("sharded %t, poison %t: file offset %d after the read, want %d", sharded, poisoned, pos, len(data))
			}
		}
	}
}

// keeper keeps the bytes of the first record it is handed, as a handler
// must not, and a copy of them.
type keeper struct{ kept, copied []byte }

func (k *keeper) Observe(in *Input) {
	if k.kept == nil {
		k.kept, k.copied = in.Data, bytes.Clone(in.Data)
	}
}
func (k *keeper) ObserveFrame(*Input, *frame.Frame)  {}
func (k *keeper) DecodeError(*Input, string, string) {}

// TestLinesFilePoison: the poison mode does catch a handler that keeps a
// reference into the read buffer (so that TestLinesFileRead proves
// something): the bytes it kept are no longer the record's.
func TestLinesFilePoison(t *testing.T) {
	p := writeTemp(t, "keep.jsonl", walkJSONCorpus(61, 50, 5, 4000, walkOdds{}))
	poisonOn()
	defer func(was bool) { poison.Store(was) }(poison.Load())
	for _, poisoned := range []bool{false, true} {
		poison.Store(poisoned)
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		k := &keeper{}
		_, err, ok := readLinesFile(f, "cap", FormatAuto, ReadOptions{MaxLineBytes: 1 << 20}, k)
		f.Close()
		if !ok || err != nil || k.kept == nil {
			t.Fatalf("poison %t: readLinesFile = %v, %t, kept %d bytes", poisoned, err, ok, len(k.kept))
		}
		if same := bytes.Equal(k.kept, k.copied); same == poisoned {
			t.Errorf("poison %t: the kept bytes are the record's: %t", poisoned, same)
		}
	}
}

// lineAppender appends a copy of its first record to the file.
type lineAppender struct {
	path string
	n    int
}

func (a *lineAppender) Observe(in *Input) {
	if a.n++; a.n == 1 {
		w, err := os.OpenFile(a.path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			panic(err)
		}
		defer w.Close()
		if _, err := w.Write(append(bytes.Clone(in.Data), '\n')); err != nil {
			panic(err)
		}
	}
}
func (a *lineAppender) ObserveFrame(*Input, *frame.Frame)  {}
func (a *lineAppender) DecodeError(*Input, string, string) {}

// TestLinesFileGrows: a JSON-lines file appended to while it is read is
// read up to the size it had when the read started (as a mapped read is),
// and the offset is left there.
func TestLinesFileGrows(t *testing.T) {
	var data []byte
	for i := 0; i < 20000; i++ {
		data = fmt.Appendf(data, `{"request_id":"r%d","sequence":0,"is_final":true}`+"\n", i)
	}
	p := writeTemp(t, "grows.jsonl", data)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a := &lineAppender{path: p}
	last, err := Read(f, "cap", FormatAuto, ReadOptions{}, a)
	if err != nil {
		t.Fatal(err)
	}
	pos, _ := f.Seek(0, io.SeekCurrent)
	if a.n != 20000 || last != 20000 || pos != int64(len(data)) {
		t.Fatalf("%d records read (last %d, offset %d), want the 20000 there when the read started (offset %d)", a.n, last, pos, len(data))
	}
}

// TestLinesFileNotTaken: what readLinesFile leaves to Read as before
// (gzip, frames, a record log, a first line longer than the buffer) is
// not read, and the offset not moved.
func TestLinesFileNotTaken(t *testing.T) {
	long := append([]byte(`{"request_id":"x","pad":"`), bytes.Repeat([]byte("p"), lineReadBuf)...)
	for name, data := range map[string][]byte{
		"gzip":       {0x1f, 0x8b, 8, 0, 0, 0, 0, 0},
		"frames":     {frame.Magic, frame.Version, 2, 0},
		"record log": []byte(`{"_e2atap":{"tap":"t"},"record":{}}` + "\n"),
		"long first": append(long, "\"}\n{}\n"...),
		"empty":      nil,
	} {
		f, err := os.Open(writeTemp(t, "x", data))
		if err != nil {
			t.Fatal(err)
		}
		_, err, ok := readLinesFile(f, "cap", FormatAuto, ReadOptions{MaxLineBytes: 8 << 20}, &keeper{})
		pos, _ := f.Seek(0, io.SeekCurrent)
		f.Close()
		if ok || err != nil || pos != 0 {
			t.Errorf("%s: readLinesFile = %v, %t at offset %d, want it left to Read", name, err, ok, pos)
		}
	}
}

// TestLinesFileSmallBuffer: with a read buffer of a few bytes every line
// is cut by its end, moved to its front and read on, the buffer grown for
// the longer lines and given back after them; what the handlers find is
// still what readJSONL finds, with limits below, at and above the lines'
// lengths.
func TestLinesFileSmallBuffer(t *testing.T) {
	defer func(n int) { lineReadBuf = n }(lineReadBuf)
	data := append([]byte(utf8BOM), walkJSONCorpus(71, 600, 40, 3000, allOdds)...)
	p := writeTemp(t, "small.jsonl", data)
	for _, n := range []int{1, 7, 64, 1000} {
		lineReadBuf = n
		for _, limit := range []int{200, 1000, 3000} {
			opts := ReadOptions{MaxLineBytes: limit, FromLog: true}
			want := readLines(t, bytes.NewReader(data), false, opts)
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			got := readLines(t, f, false, opts)
			pos, _ := f.Seek(0, io.SeekCurrent)
			f.Close()
			if got != want || pos != int64(len(data)) {
				t.Errorf("buffer %d, limit %d: offset %d of %d, differs from an io.Reader: %s", n, limit, pos, len(data), firstDiff(want, got))
			}
		}
	}
}

// FuzzLinesFile: readLinesFile, with a small buffer, reads any bytes into
// the records readJSONL reads from them.
func FuzzLinesFile(f *testing.F) {
	f.Add([]byte(`{"request_id":"a","sequence":0}`+"\n\r\n  \n"+`{"request_id":"a","sequence":2,"is_final":true}`), uint16(40), uint8(5))
	f.Add([]byte(utf8BOM+`{"request_id":"b"}`+"\r\n"+`{"request_id":"b","x":"`+strings.Repeat("z", 300)+`"}`), uint16(100), uint8(16))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte, limit uint16, buf uint8) {
		defer func(n int) { lineReadBuf = n }(lineReadBuf)
		lineReadBuf = int(buf) + 1
		opts := ReadOptions{MaxLineBytes: int(limit) + 1}
		p := filepath.Join(dir, "fuzz.jsonl")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		want := readLines(t, bytes.NewReader(data), false, opts)
		fl, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer fl.Close()
		if got := readLines(t, fl, false, opts); got != want {
			t.Fatalf("differs from an io.Reader: %s", firstDiff(want, got))
		}
	})
}
