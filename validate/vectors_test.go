package validate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

type streamCase struct {
	Name     string   `json:"name"`
	Profile  string   `json:"profile"`
	Lines    []string `json:"lines"`
	Hex      string   `json:"hex"`
	Findings [][]any  `json:"findings"`
	Note     string   `json:"note"`
}

func loadCases(t *testing.T, file string) []streamCase {
	t.Helper()
	cases, err := readVectors(file)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

func readVectors(file string) ([]streamCase, error) {
	b, err := os.ReadFile("testdata/vectors/" + file)
	if err != nil {
		return nil, err
	}
	// The copy must stay byte-identical to the shared vectors.
	if shared, err := os.ReadFile("../../shared/vectors/streams/" + file); err == nil && !bytes.Equal(shared, b) {
		return nil, fmt.Errorf("testdata/vectors/%s differs from ../shared/vectors/streams/%s: copy it again", file, file)
	}
	var cases []streamCase
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c streamCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// key renders a finding as the vectors list it: rule stream position.
func key(rule, stream string, pos any) string {
	if pos == nil {
		return fmt.Sprintf("%s %q end", rule, stream)
	}
	return fmt.Sprintf("%s %q %v", rule, stream, pos)
}

func want(c streamCase) []string {
	var out []string
	for _, f := range c.Findings {
		var pos any
		if f[2] != nil {
			pos = int(f[2].(float64))
		}
		out = append(out, key(f[0].(string), f[1].(string), pos))
	}
	sort.Strings(out)
	return out
}

func got(fs []Finding, offset int) []string {
	var out []string
	for _, f := range fs {
		var pos any
		if f.Index != 0 {
			pos = int(f.Index) - offset
		}
		out = append(out, key(f.Rule, f.Stream, pos))
	}
	sort.Strings(out)
	return out
}

// runCapture validates a capture the way `e2atap validate` does.
func runCapture(t *testing.T, profile string, data []byte, format Format) *collector {
	t.Helper()
	p, err := ProfileByName(profile)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Profile = p
	cfg.IdleTimeout = 0
	col := &collector{}
	e := NewEngine(cfg, col)
	if _, err := Read(bytes.NewReader(data), "capture", format, ReadOptions{FromLog: true}, e); err != nil {
		t.Fatal(err)
	}
	e.Finish(ReasonEOF, &Input{Pos: Position{Name: "capture"}})
	return col
}

func TestE2AStreamVectors(t *testing.T) {
	for _, c := range loadCases(t, "e2a_streams.jsonl") {
		t.Run(c.Name, func(t *testing.T) {
			data := []byte(strings.Join(c.Lines, "\n") + "\n")
			col := runCapture(t, c.Profile, data, FormatAuto)
			if g, w := got(col.findings, 0), want(c); strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("%s (%s)\n got: %q\nwant: %q", c.Name, c.Note, g, w)
				for _, f := range col.findings {
					t.Logf("  %s %s %s: %s", f.Rule, f.Severity, f.Source, f.Message)
				}
			}
		})
	}
}

// A UTF-8 byte order mark before JSON lines (some editors and Windows
// tools write one) is skipped, not read as a frame file of version 0xBB;
// the verdicts are those of the same lines without it.
func TestByteOrderMarkBeforeJSONLines(t *testing.T) {
	for _, c := range loadCases(t, "e2a_streams.jsonl") {
		data := []byte(strings.Join(c.Lines, "\n") + "\n")
		plain := got(runCapture(t, c.Profile, data, FormatAuto).findings, 0)
		for _, format := range []Format{FormatAuto, FormatJSONL} {
			bom := runCapture(t, c.Profile, append([]byte(utf8BOM), data...), format)
			if g := got(bom.findings, 0); strings.Join(g, "\n") != strings.Join(plain, "\n") {
				t.Errorf("%s, format %v, with a BOM:\n got: %q\nwant: %q", c.Name, format, g, plain)
			}
		}
	}
	// 0xEF alone, or not followed by BB BF, is still a frame file.
	for _, data := range []string{"\xef", "\xef\xbb", "\xef\x01\x02"} {
		col := runCapture(t, ProfileJiuwenswarm, []byte(data), FormatAuto)
		if len(col.findings) != 1 || col.findings[0].Rule != "frame.decode" {
			t.Errorf("%q: %v, want one frame.decode", data, col.findings)
		}
	}
}

// A gzip-compressed capture, JSON lines or frames, gets the verdicts of
// the same bytes uncompressed; a corrupt one is an I/O error, not findings.
func TestGzipInput(t *testing.T) {
	t.Parallel() // sets no package state, reads none that a parallel test sets: main_test.go
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	for _, c := range loadCases(t, "e2a_streams.jsonl") {
		data := []byte(strings.Join(c.Lines, "\n") + "\n")
		plain := got(runCapture(t, c.Profile, data, FormatAuto).findings, 0)
		if g := got(runCapture(t, c.Profile, gz(data), FormatAuto).findings, 0); strings.Join(g, "\n") != strings.Join(plain, "\n") {
			t.Errorf("%s gzipped:\n got: %q\nwant: %q", c.Name, g, plain)
		}
	}
	for _, c := range loadCases(t, "frame_streams.jsonl") {
		data, err := hex.DecodeString(c.Hex)
		if err != nil {
			t.Fatal(err)
		}
		plain := got(runCapture(t, ProfileJiuwenswarm, data, FormatAuto).findings, 0)
		if g := got(runCapture(t, ProfileJiuwenswarm, gz(data), FormatAuto).findings, 0); strings.Join(g, "\n") != strings.Join(plain, "\n") {
			t.Errorf("%s gzipped:\n got: %q\nwant: %q", c.Name, g, plain)
		}
	}
	corrupt := gz([]byte(`{"a":1}` + "\n"))
	corrupt = corrupt[:len(corrupt)-6]
	if _, err := Read(bytes.NewReader(corrupt), "x.gz", FormatAuto, ReadOptions{}, NewEngine(DefaultConfig(), &collector{})); err == nil {
		t.Error("a truncated gzip stream read without error")
	}
}

func TestFrameStreamVectors(t *testing.T) {
	for _, c := range loadCases(t, "frame_streams.jsonl") {
		t.Run(c.Name, func(t *testing.T) {
			data, err := hex.DecodeString(c.Hex)
			if err != nil {
				t.Fatal(err)
			}
			col := runCapture(t, ProfileJiuwenswarm, data, FormatFrames)
			// Frame indexes in the vectors are 0-based; Input.Index is 1-based.
			if g, w := got(col.findings, 1), want(c); strings.Join(g, "\n") != strings.Join(w, "\n") {
				t.Errorf("%s (%s)\n got: %q\nwant: %q", c.Name, c.Note, g, w)
				for _, f := range col.findings {
					t.Logf("  %s %s %s: %s", f.Rule, f.Severity, f.Source, f.Message)
				}
			}
		})
	}
}
