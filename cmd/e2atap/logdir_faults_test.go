package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/validate"
)

// e2aStream is one E2A stream as log lines: the request, chunks 0..n-1
// (skipping the sequences in skip) and a final record with sequence n.
func e2aStream(id string, from, n int, withRequest, final bool, skip ...int) []string {
	var out []string
	if withRequest {
		out = append(out, fmt.Sprintf(`{"protocol_version":"1.0","request_id":%q,"session_id":"sess","method":"chat.send","params":{"query":"hi"},"timestamp":"2026-03-29T12:00:00Z","identity_origin":"user","is_stream":true}`, id))
	}
	resp := func(seq int, last bool) string {
		kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
		if last {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{"content":"done"}}`
		}
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":%q,"request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":%s}`,
			id, id, seq, last, status, kind, body)
	}
	for seq := from; seq < n; seq++ {
		skipped := false
		for _, s := range skip {
			skipped = skipped || s == seq
		}
		if !skipped {
			out = append(out, resp(seq, false))
		}
	}
	if final {
		out = append(out, resp(n, true))
	}
	return out
}

func appendLines(t *testing.T, path string, lines []string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// TestRunLogdirCopyTruncate (issue 8, fault g): streams open across a
// copy-truncate rotation stay judged across it when the copy holds what
// the tap had not read yet: a sequence gap planted after the rotation is
// found, and nothing else. Without a copy, the rotation is a loss: counted,
// and no finding at all (no false seq_gap or missing_final for the streams
// whose records were lost). Before: every truncation was a loss, so the
// planted gap was never reported.
func TestRunLogdirCopyTruncate(t *testing.T) {
	for _, withCopy := range []bool{true, false} {
		t.Run(fmt.Sprintf("copy=%v", withCopy), func(t *testing.T) {
			dir := t.TempDir()
			logs := filepath.Join(dir, "agent")
			os.MkdirAll(logs, 0o755)
			path := filepath.Join(logs, "agent.jsonl")
			cfg := DefaultConfig()
			cfg.Listen = freeAddr(t)
			cfg.Outputs.Findings.Path = filepath.Join(dir, "findings.jsonl")
			cfg.Outputs.Log.Path = filepath.Join(dir, "records.jsonl")
			cfg.Taps = []TapConfig{{Name: "agent-logs", Type: "logdir", Paths: []string{filepath.Join(logs, "*.jsonl")}, Positions: filepath.Join(dir, "pos.json")}}
			live := &findingSink{}
			sc, stop := startSidecar(t, cfg, live)
			stats := sc.taps[0].stats

			const streams = 20
			var first []string
			for i := range streams {
				first = append(first, e2aStream(fmt.Sprintf("r%02d", i), 0, 4, true, false)...)
			}
			appendLines(t, path, first)
			// The writer waits for the tap (it has read everything), then
			// appends a little more and rotates at once.
			pollUntil(t, "the first records", 10*time.Second, func() bool { return stats.Messages[tap.DirNone].Load() >= uint64(len(first)) })
			var more []string
			for i := range streams {
				more = append(more, e2aStream(fmt.Sprintf("r%02d", i), 4, 6, false, false)...)
			}
			appendLines(t, path, more)
			if withCopy {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path+".1", data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			var after []string
			for i := range streams {
				var skip []int
				if i == 3 && withCopy {
					skip = []int{7} // the planted fault: r03 jumps from 6 to 8
				}
				after = append(after, e2aStream(fmt.Sprintf("r%02d", i), 6, 9, false, true, skip...)...)
			}
			appendLines(t, path, after)
			want := uint64(len(first) + len(more) + len(after))
			if !withCopy {
				want = uint64(len(first) + len(after)) // at least; some of "more" may have been read
			}
			pollUntil(t, "every record", 10*time.Second, func() bool { return stats.Messages[tap.DirNone].Load() >= want })
			time.Sleep(300 * time.Millisecond)
			stop()

			got := live.keys()
			if withCopy {
				if len(got) != 1 || !strings.HasPrefix(got[0], "e2a.seq_gap ") || !strings.Contains(got[0], "r03") {
					t.Fatalf("findings %v, want the planted seq_gap of r03 only", got)
				}
				if d := stats.Drops[tap.DropTruncated].Load(); d != 0 {
					t.Errorf("%d truncation losses counted: the copy held everything", d)
				}
				return
			}
			if len(got) != 0 {
				t.Fatalf("findings %v after a loss: none happened", got)
			}
			if d := stats.Drops[tap.DropTruncated].Load(); d != 1 {
				t.Errorf("truncation losses = %d, want 1", d)
			}
		})
	}
}

// invalidSink keeps the data of the records the engine could not decode.
type invalidSink struct {
	findingSink
	heads [][]byte
}

func (s *invalidSink) Record(ri *validate.RecordInfo) {
	if ri.Kind == "invalid" {
		s.mu.Lock()
		s.heads = append(s.heads, append([]byte(nil), ri.In.Data...))
		s.mu.Unlock()
	}
}

// TestRunLogdirOversizeLine (issue 8, fault h, the tap's side): a log line
// over max_line_bytes is skipped without a loss for the whole tap (another
// stream's planted gap after it is still found), reported once as
// e2a.decode, and its head (where its request_id and sequence are) is what
// the engine is handed, so that it can gap that line's stream alone.
func TestRunLogdirOversizeLine(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	path := filepath.Join(logs, "agent.jsonl")
	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Outputs.Findings.Path = filepath.Join(dir, "findings.jsonl")
	cfg.Outputs.Log.Path = filepath.Join(dir, "records.jsonl")
	cfg.Taps = []TapConfig{{Name: "agent-logs", Type: "logdir", Paths: []string{filepath.Join(logs, "*.jsonl")},
		Positions: filepath.Join(dir, "pos.json"), MaxLineBytes: 4096}}
	sink := &invalidSink{}
	sc, stop := startSidecar(t, cfg, sink)
	stats := sc.taps[0].stats

	lines := append(e2aStream("big", 0, 2, true, false), e2aStream("other", 0, 2, true, false)...)
	big := fmt.Sprintf(`{"protocol_version":"1.0","response_id":"big","request_id":"big","sequence":2,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","body":{"delta_kind":"text","delta":"%s"}}`, strings.Repeat("y", 100<<10))
	lines = append(lines, big)
	lines = append(lines, e2aStream("big", 3, 5, false, true)...)
	lines = append(lines, e2aStream("other", 2, 5, false, true, 3)...) // planted: other jumps from 2 to 4
	appendLines(t, path, lines)
	pollUntil(t, "every line", 10*time.Second, func() bool { return stats.Messages[tap.DirNone].Load() >= uint64(len(lines)) })
	time.Sleep(300 * time.Millisecond)
	stop()

	t.Logf("findings: %v", sink.keys())
	var decode, otherGap int
	for _, k := range sink.keys() {
		switch {
		case strings.HasPrefix(k, "e2a.decode "):
			decode++
		case k == "e2a.seq_gap other":
			otherGap++
		}
	}
	if decode != 1 || otherGap != 1 {
		t.Fatalf("findings %v: want one e2a.decode and the planted seq_gap of other", sink.keys())
	}
	if d := stats.Drops[tap.DropOversize].Load(); d != 1 {
		t.Errorf("oversize drops = %d", d)
	}
	// The oversize line's own stream ("big") also shows a seq_gap until the
	// engine reads request_id and sequence from the head it is handed (the
	// engine's side of fault h); that is not asserted here.
	if len(sink.heads) != 1 || !strings.HasPrefix(string(sink.heads[0]), big[:100]) || len(sink.heads[0]) != 64<<10 {
		t.Fatalf("the engine got %d undecodable inputs; want the oversize line's 64 KiB head", len(sink.heads))
	}
}

// TestRunLogdirCrashResidue: a writer that crashed leaves NUL bytes where
// its last writes were (a preallocated or extended tail whose data never
// reached the disk; a record torn by them), and appends after them when it
// comes back. The NULs are no record (JSON holds no raw NUL): what they
// replaced is a loss, counted, before the line after them, which is judged
// as the record it is; the streams open at the crash are not judged across
// it (no missing_final at their idle timeout). A run of NULs longer than
// max_line_bytes takes the record after it along, as a loss too. Before:
// each was an e2a.decode finding, the record after the NULs was lost
// within it, and the open streams were reported missing_final.
//
// The record log replays to the same verdict: the record after a loss is
// marked "gap" there. So does validate of the application's log itself
// (the same bytes the tap read), which gave the e2a.decode, seq_gap and
// missing_final findings the live run does not. Before, the log kept no trace of a loss of the whole
// tap, and its replay reported what the live run had not judged across
// the loss (e2a.missing_final for torn and cut).
func TestRunLogdirCrashResidue(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	path := filepath.Join(logs, "agent.jsonl")
	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Streams.IdleTimeout = 300 * time.Millisecond
	cfg.Outputs.Findings.Path = filepath.Join(dir, "findings.jsonl")
	cfg.Outputs.Log.Path = filepath.Join(dir, "records.jsonl")
	cfg.Taps = []TapConfig{{Name: "agent-logs", Type: "logdir", Paths: []string{filepath.Join(logs, "*.jsonl")},
		Positions: filepath.Join(dir, "pos.json"), MaxLineBytes: 4096}}
	live := &findingSink{}
	sc, stop := startSidecar(t, cfg, live)
	stats := sc.taps[0].stats

	// All in one write, so that the records' capture times (and so their
	// streams' idle timeouts) do not depend on when the tailer reads.
	var file strings.Builder
	add := func(lines []string) { file.WriteString(strings.Join(lines, "\n") + "\n") }
	torn := e2aStream("torn", 0, 4, true, true)
	add(append(torn[:3], e2aStream("cut", 0, 2, true, false)...))
	crash := func(nuls int, after []string) {
		// torn's next record, cut short by the crash, then its lost tail.
		file.WriteString(torn[3][:40] + strings.Repeat("\x00", nuls))
		add(after)
	}
	crash(300, e2aStream("after", 0, 3, true, true))
	crash(5000, e2aStream("later", 0, 3, false, true)) // the NULs and later's sequence 0: one line over the limit
	add(e2aStream("planted", 0, 4, true, true, 2))
	if err := os.WriteFile(path, []byte(file.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the planted gap", 10*time.Second, func() bool {
		for _, k := range live.keys() {
			if k == "e2a.seq_gap planted" {
				return true
			}
		}
		return false
	})
	time.Sleep(time.Second) // torn and cut idle past their timeout
	stop()

	if got := live.keys(); len(got) != 1 || got[0] != "e2a.seq_gap planted" {
		t.Errorf("findings %v, want only the planted seq_gap", got)
	}
	if n := stats.Drops[tap.DropUpstreamGap].Load(); n != 2 {
		t.Errorf("%d losses, want one for each crash", n)
	}
	_, out, _ := runCLI(t, "validate", "--output", "json", "--fail-on", "never", cfg.Outputs.Log.Path)
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, `"rule":"e2a.seq_gap","severity":"error","stream":"planted"`) {
		t.Errorf("validate of the record log: %d findings, want only the planted seq_gap:\n%s", n, out)
	}
	// validate of the application's log itself reads the NULs as the tap
	// does: the same verdicts, and no e2a.decode. Before: an e2a.decode for
	// each crash, a seq_gap for torn across the first, and missing_final
	// for torn and cut.
	_, out, _ = runCLI(t, "validate", "--output", "json", "--fail-on", "never", path)
	if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, `"rule":"e2a.seq_gap","severity":"error","stream":"planted"`) {
		t.Errorf("validate of the application's log: %d findings, want the live run's, only the planted seq_gap:\n%s", n, out)
	}
}

// TestRunLogdirCorruptPositions (issue 8, fault c): a corrupt positions
// file no longer stops the sidecar (before: `run` exited 1 with "positions
// file is corrupt: EOF", taking every other tap with it). The tap moves it
// aside, counts it, starts from the files' ends (what was already there is
// not judged again: no e2a.after_final) and judges what comes next.
func TestRunLogdirCorruptPositions(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	path := filepath.Join(logs, "agent.jsonl")
	// Already judged by an earlier run whose positions are now unreadable.
	appendLines(t, path, e2aStream("old", 0, 3, true, true))
	pos := filepath.Join(dir, "pos.json")
	if err := os.WriteFile(pos, []byte(`{"version":1,"files":[{"pa`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Outputs.Findings.Path = filepath.Join(dir, "findings.jsonl")
	cfg.Outputs.Log.Path = filepath.Join(dir, "records.jsonl")
	cfg.Taps = []TapConfig{{Name: "agent-logs", Type: "logdir", Paths: []string{filepath.Join(logs, "*.jsonl")}, Positions: pos}}
	live := &findingSink{}
	sc, stop := startSidecar(t, cfg, live)
	stats := sc.taps[0].stats
	pollUntil(t, "the tap up", 10*time.Second, stats.Up.Load)
	lines := e2aStream("new", 0, 4, true, true, 2) // planted: sequence 2 missing
	appendLines(t, path, lines)
	pollUntil(t, "the new records", 10*time.Second, func() bool { return stats.Messages[tap.DirNone].Load() >= uint64(len(lines)) })
	time.Sleep(300 * time.Millisecond)
	stop() // fails the test if the sidecar stopped with an error

	if got := live.keys(); len(got) != 1 || got[0] != "e2a.seq_gap new" {
		t.Fatalf("findings %v, want only the planted seq_gap of the new stream", got)
	}
	if n := stats.Messages[tap.DirNone].Load(); n != uint64(len(lines)) {
		t.Errorf("%d records read, want the %d new ones only", n, len(lines))
	}
	if n := stats.Errors[tap.ErrPositions].Load(); n != 1 {
		t.Errorf("positions errors = %d, want 1", n)
	}
	if aside, _ := filepath.Glob(pos + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("corrupt file kept aside: %v", aside)
	}
}

// TestProcessLogdirCorruptPositions (issue 8, fault c, process level): the
// real binary with an empty positions file keeps running, judges what is
// written next, and exits 0 on SIGTERM. Before: it exited 1 at once
// ("positions file is corrupt: EOF"), and on a persistent volume the pod
// crash-looped.
func TestProcessLogdirCorruptPositions(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	pos := filepath.Join(dir, "positions.json")
	os.WriteFile(pos, nil, 0o644) // empty: cut short by a full disk, say
	records := filepath.Join(dir, "records.jsonl")
	findings := filepath.Join(dir, "findings.jsonl")
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, filepath.Join(logs, "*.jsonl"), pos, findings, records)), 0o644)
	cmd := startProcess(t, cfgPath)
	healthy := func() bool {
		resp, err := http.Get("http://" + listen + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	}
	pollUntil(t, "the process up", 10*time.Second, healthy)
	// The tap up: it has made its first scan (the recovery reads the files
	// found then from their end), so the file written next is a new one,
	// read from its start. Without this wait a loaded machine could let the
	// file appear before that scan.
	pollUntil(t, "the logdir tap up", 20*time.Second, func() bool {
		resp, err := http.Get("http://" + listen + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `e2atap_tap_up{tap="logs"} 1`)
	})
	lines := e2aStream("after", 0, 3, true, true, 1) // planted: sequence 1 missing
	appendLines(t, filepath.Join(logs, "agent.jsonl"), lines)
	pollUntil(t, "the planted finding", 30*time.Second, func() bool {
		b, _ := os.ReadFile(findings)
		return strings.Contains(string(b), `"e2a.seq_gap"`)
	})
	if !healthy() {
		t.Fatal("e2atap is not serving any more")
	}
	stopProcess(t, cmd) // requires exit 0
	if aside, _ := filepath.Glob(pos + ".corrupt-*"); len(aside) != 1 {
		t.Errorf("corrupt positions kept aside: %v", aside)
	}
}

// TestRunLogdirPreallocatedTail: a writer that preallocates its log file
// (ftruncate to 1 MiB: a NUL-filled tail) and writes its lines into it in
// place, front to back, as the file's size never changes. The tailer read
// the first batch, took the NULs after it for a line being written, went
// past them as an oversize one, and read nothing more: 40 of 44 streams
// never judged, with no loss counted and nothing logged. A tail of NULs
// up to the end of the file is now left unread until it is written (NULs
// that data follows are still a crashed writer's residue,
// TestRunLogdirCrashResidue): every line is read once, no finding.
func TestRunLogdirPreallocatedTail(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	path := filepath.Join(logs, "agent.jsonl")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	listen := freeAddr(t)
	findings := filepath.Join(dir, "findings.jsonl")
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 30s, join_window: 0s}
taps:
  - {name: agent-logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
`, listen, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings)), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)

	read := func() string {
		for l := range strings.Lines(scrape(t, listen)) {
			if v, ok := strings.CutPrefix(l, `e2atap_tap_messages_total{direction="none",tap="agent-logs"} `); ok {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	var off int64
	lines := 0
	for batch := range 4 {
		var b strings.Builder
		for i := range 11 {
			ls := e2aStream(fmt.Sprintf("b%d-%d", batch, i), 0, 3, true, true)
			lines += len(ls)
			b.WriteString(strings.Join(ls, "\n") + "\n")
		}
		if _, err := f.WriteAt([]byte(b.String()), off); err != nil {
			t.Fatal(err)
		}
		off += int64(b.Len())
		want := strconv.Itoa(lines)
		pollUntil(t, fmt.Sprintf("the %d lines written in place by batch %d", lines, batch), 10*time.Second, func() bool { return read() == want })
	}
	stopProcess(t, cmd)
	if got := readFindings(t, findings); len(got) != 0 {
		t.Errorf("findings %v, want none", got)
	}
	if strings.Contains(stderr.String(), "NUL bytes in a log file") {
		t.Error("the unwritten tail was taken for a crashed writer's residue")
	}
}
