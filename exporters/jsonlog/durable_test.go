package jsonlog

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/e2atap/e2atap/validate"
)

// TestOpenCutsTornLine: a file left ending in a partial line (a crash in a
// write) is cut back to its last newline before anything is appended, for
// both logs; a whole file is left as it is.
func TestOpenCutsTornLine(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, before, kept string
	}{
		{"torn", "{\"a\":1}\n{\"b\":2}\n{\"c\":", "{\"a\":1}\n{\"b\":2}\n"},
		{"whole", "{\"a\":1}\n", "{\"a\":1}\n"},
		{"no-newline-at-all", "{\"a\":", ""},
		{"empty", "", ""},
		// A torn line longer than the read chunk.
		{"long-torn", "{\"a\":1}\n" + strings.Repeat("x", 100<<10), "{\"a\":1}\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, c.name+".jsonl")
			os.WriteFile(path, []byte(c.before), 0o644)
			fw, err := NewFindingWriter(path, NewRedactor(ContentMask, 65536, nil))
			if err != nil {
				t.Fatal(err)
			}
			fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "s", Source: "t:x", Message: "m"})
			if err := fw.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(path)
			if !strings.HasPrefix(string(b), c.kept) || strings.Count(string(b[len(c.kept):]), "\n") != 1 || !strings.HasPrefix(string(b[len(c.kept):]), `{"rule":"e2a.seq_gap"`) {
				t.Fatalf("file after reopen and one finding:\n%q\nwant %q then the finding", b, c.kept)
			}
			if got, want := fw.Cut(), int64(len(c.before)-len(c.kept)); got != want {
				t.Fatalf("Cut() = %d, want %d", got, want)
			}
		})
	}
}

// writes records every Write call.
type writes struct{ calls [][]byte }

func (w *writes) Write(p []byte) (int, error) {
	w.calls = append(w.calls, append([]byte(nil), p...))
	return len(p), nil
}

// TestWritesWholeLines: every write the log makes ends in a newline, so
// that a crash between two writes leaves whole lines (bufio would cut a
// line at its buffer's size).
func TestWritesWholeLines(t *testing.T) {
	var w writes
	fw := NewFindingWriterTo(&w, NewRedactor(ContentMask, 65536, nil))
	n := 0
	for i := 0; i < 3000; i++ {
		msg := strings.Repeat("m", i%700)
		if i%1000 == 999 {
			msg = strings.Repeat("L", 600<<10) // larger than the buffer
		}
		fw.Finding(&validate.Finding{Rule: "e2a.seq_gap", Severity: validate.Error, Stream: "s", Source: "t:x", Message: msg})
		n++
	}
	fw.Flush()
	lines := 0
	for i, c := range w.calls {
		if len(c) == 0 || c[len(c)-1] != '\n' {
			t.Fatalf("write %d of %d (%d bytes) does not end in a newline", i, len(w.calls), len(c))
		}
		lines += bytes.Count(c, []byte{'\n'})
	}
	if lines != n || len(w.calls) < 3 {
		t.Fatalf("%d lines in %d writes, want %d lines in several writes", lines, len(w.calls), n)
	}
}

// logOf runs inputs through an engine into a record log and returns its
// lines.
func logOf(t *testing.T, ins []validate.Input) [][]byte {
	return logWithKey(t, ins, []byte("0123456789abcdef0123"))
}

func logWithKey(t *testing.T, ins []validate.Input, key []byte) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentMask, 65536, key))
	cfg := validate.DefaultConfig()
	cfg.Profile = validate.JiuwenswarmProfile()
	e := validate.NewEngine(cfg, w)
	for i := range ins {
		in := ins[i]
		e.Observe(&in)
	}
	w.Flush()
	lines := bytes.SplitAfter(buf.Bytes(), []byte{'\n'})
	return lines[:len(lines)-1] // each with its newline
}

// replayFindings is what `e2atap validate` reports for a record log.
func replayFindings(t *testing.T, log []byte) []string {
	t.Helper()
	f, _ := replay(t, log)
	return f
}

// counted is findingsOf that also counts the records judged.
type counted struct {
	findingsOf
	records uint64
}

func (c *counted) Record(*validate.RecordInfo) { c.records++ }

// replay returns the findings and how many records were judged, the logs
// read one after the other as `e2atap validate` reads its files.
func replay(t *testing.T, logs ...[]byte) ([]string, uint64) {
	t.Helper()
	var f counted
	cfg := validate.DefaultConfig()
	cfg.Profile = validate.JiuwenswarmProfile()
	e := validate.NewEngine(cfg, &f)
	var mem validate.Replayed
	for i, log := range logs {
		if _, err := validate.Read(bytes.NewReader(log), fmt.Sprintf("records.jsonl.%d", len(logs)-i), validate.FormatAuto, validate.ReadOptions{Replayed: &mem}, e); err != nil {
			t.Fatal(err)
		}
	}
	e.Finish(validate.ReasonEOF, &validate.Input{})
	return f.keys(), f.records
}

// TestReplayJudgesReReadOnce: a record log where, as after a crash, the
// tap read the last lines again (same position, logged twice) replays
// with the live verdicts (none, for clean streams): the lines read again
// are recognised by their position. Without the position they would be
// judged twice (the control).
func TestReplayJudgesReReadOnce(t *testing.T) {
	g := gen.New(gen.Config{Seed: 3, Concurrent: 4, MinChunks: 3, MaxChunks: 8, Sessions: 4})
	var ins []validate.Input
	var off int64
	at := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	msgs := make([]gen.Message, 0, 600)
	for i := 0; i < 500; i++ {
		msgs = append(msgs, g.Next())
	}
	msgs = append(msgs, g.Drain()...)
	for i, m := range msgs {
		if i%5 == 0 { // a leaked credential, masked with a fingerprint (and e2a.secret)
			m.Data = bytes.Replace(m.Data, []byte("{"), []byte(fmt.Sprintf(`{"authorization":"Bearer tok%04d-abcdefghijklmnopqrstuvwxyz",`, i)), 1)
		}
		ins = append(ins, validate.Input{Tap: "logs", FromLog: true, Time: at.Add(time.Duration(i) * time.Millisecond),
			Pos:  validate.Position{Kind: validate.PosLine, Name: "/var/log/agent/a.jsonl", Line: int64(i + 1), Offset: off},
			Data: m.Data})
		off += int64(len(m.Data) + 1)
	}
	lines := logOf(t, ins)
	if len(lines) != len(ins) {
		t.Fatalf("%d log lines for %d records", len(lines), len(ins))
	}
	if _, a, ok := validate.ReadLoggedAt(lines[7]); !ok || a.Src != "/var/log/agent/a.jsonl" || a.Off != ins[7].Pos.Offset || a.Len != len(ins[7].Data) {
		t.Fatalf("line 8 has no usable resume point: %+v %v\n%s", a, ok, lines[7])
	}
	clean := strings.Join(replayFindings(t, bytes.Join(lines, nil)), "\n")
	for _, f := range strings.Split(clean, "\n") {
		if !strings.HasPrefix(f, "e2a.secret ") {
			t.Fatalf("the log before any crash has a finding other than the planted leaks: %s", f)
		}
	}
	// A crash after line 300 whose last save was at line 180: the next
	// run reads 181..300 again (logged again), then goes on.
	var crashed []byte
	crashed = append(crashed, bytes.Join(lines[:300], nil)...)
	crashed = append(crashed, bytes.Join(lines[180:], nil)...)
	if got := strings.Join(replayFindings(t, crashed), "\n"); got != clean {
		t.Fatalf("the log with re-read lines replays with other findings than the live run's:\n%s\nwant\n%s", got, clean)
	}
	// The log rotated at the crash: the re-read lines are in the next file.
	if got, n := replay(t, bytes.Join(lines[:300], nil), bytes.Join(lines[180:], nil)); strings.Join(got, "\n") != clean || n != uint64(len(ins)) {
		t.Fatalf("re-read lines in the next file: %d findings, %d records judged (want the live run's, %d)", len(got), n, len(ins))
	}
	// The next run had a fingerprint key of its own (none configured):
	// the re-read lines' credentials and e-mail addresses have other
	// fingerprints, and are still recognised.
	relogged := logWithKey(t, ins, []byte("another key, another run"))
	if bytes.Equal(bytes.Join(relogged, nil), bytes.Join(lines, nil)) {
		t.Fatal("the other key changed nothing: the generator's records hold no fingerprinted value")
	}
	rekeyed := append(bytes.Join(lines[:300], nil), bytes.Join(relogged[180:], nil)...)
	if got, n := replay(t, rekeyed); strings.Join(got, "\n") != clean || n != uint64(len(ins)) {
		t.Fatalf("re-read lines fingerprinted with another key: %d findings, %d records judged (want the live run's, %d)", len(got), n, len(ins))
	}
	// Not a re-read: the file was truncated and written again, lines of
	// the same length at the same offsets but other records (other ids).
	// (A line logged as the one it replaces, a push without ids or one
	// whose only change was masked, is indistinguishable from a re-read:
	// judged once.)
	var rewritten []validate.Input
	for _, in := range ins[:120] {
		in.Data = bytes.ReplaceAll(in.Data, []byte("req-"), []byte("rex-"))
		rewritten = append(rewritten, in)
	}
	relines := logOf(t, rewritten)
	changed := 0
	for i, l := range relines {
		if !bytes.Equal(l, lines[i]) {
			changed++
		}
	}
	again := append(bytes.Join(lines, nil), bytes.Join(relines, nil)...)
	if _, n := replay(t, again); n != uint64(len(ins)+changed) || changed < 100 {
		t.Fatalf("new lines at logged offsets: %d records judged, want %d (%d changed)", n, len(ins)+changed, changed)
	}
	// The control: the same lines without their position are judged
	// twice.
	var stripped []byte
	for _, l := range bytes.SplitAfter(crashed, []byte{'\n'}) {
		if i := bytes.Index(l, []byte(`,"at":{`)); i >= 0 {
			j := bytes.IndexByte(l[i+1:], '}')
			l = append(append([]byte(nil), l[:i]...), l[i+1+j+1:]...)
		}
		stripped = append(stripped, l...)
	}
	if got := replayFindings(t, stripped); strings.Join(got, "\n") == clean {
		t.Fatal("without positions the re-read lines gave the same findings: the test proves nothing")
	} else {
		t.Logf("without positions: %d findings, live %d", len(got), strings.Count(clean, "\n")+1)
	}
}

// TestResumePointOnlyWhereDurable: positions that a restart does not keep
// (a WebSocket connection, core NATS) are not written as resume points.
func TestResumePointOnlyWhereDurable(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":"r1","method":"chat.send","params":{"request_id":"r1"}}`)
	for _, c := range []struct {
		name string
		in   validate.Input
		want string
	}{
		{"logdir", validate.Input{Tap: "l", FromLog: true, Pos: validate.Position{Kind: validate.PosLine, Name: "f", Offset: 10, Line: 2}}, `"at":{"src":"f","off":10,"len":` + fmt.Sprint(len(data)) + `}`},
		{"kafka", validate.Input{Tap: "k", Pos: validate.Position{Kind: validate.PosKafka, Name: "t", Partition: 3, Offset: 99}}, `"at":{"src":"t/3","off":99,`},
		{"jetstream", validate.Input{Tap: "n", Pos: validate.Position{Kind: validate.PosSubject, Name: "agent.x", Offset: 7}}, `"at":{"src":"agent.x","off":7,`},
		{"core-nats", validate.Input{Tap: "n", Pos: validate.Position{Kind: validate.PosSubject, Name: "agent.x"}}, ""},
		{"ws", validate.Input{Tap: "w", Conn: "c1", Pos: validate.Position{Kind: validate.PosConn, Name: "c1", Offset: 4}}, ""},
	} {
		c.in.Data = data
		line := logOf(t, []validate.Input{c.in})[0]
		has := bytes.Contains(line, []byte(`"at":`))
		if c.want == "" && has || c.want != "" && !bytes.Contains(line, []byte(c.want)) {
			t.Errorf("%s: %s\nwant %q", c.name, line, c.want)
		}
	}
}
