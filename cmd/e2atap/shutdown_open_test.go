package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcessReplayOpenAtShutdown: a live run with
// streams.finish_on_shutdown false drops the streams open at SIGTERM
// unreported, and the replay of its record log (`e2atap validate` of it)
// gives the same verdict: no e2a.missing_final for them. The log ends with
// its mark of lines lost to everyone, which the replay reads as a loss of
// every open stream. Before, the log kept no trace of the shutdown, and the
// replay ended those streams at the end of its input as missing_final.
// With finish_on_shutdown true the live run reports them (reason
// shutdown), and so does the replay: no mark is written.
func TestProcessReplayOpenAtShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	for _, finish := range []bool{false, true} {
		t.Run(fmt.Sprintf("finish_on_shutdown %t", finish), func(t *testing.T) {
			t.Parallel()
			replayOpenAtShutdown(t, finish)
		})
	}
}

func replayOpenAtShutdown(t *testing.T, finish bool) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	records := filepath.Join(dir, "records.jsonl")
	findings := filepath.Join(dir, "findings.jsonl")
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`listen: %s
streams: {finish_on_shutdown: %t}
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, freeAddr(t), finish, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings, records)), 0o644)
	// done ends; open is still streaming when the sidecar stops.
	lines := append(e2aStream("done", 0, 2, true, true), e2aStream("open", 0, 3, true, false)...)
	appendLines(t, filepath.Join(logs, "agent.jsonl"), lines)
	cmd := startProcess(t, cfgPath)
	pollUntil(t, "every line in the record log", 30*time.Second, func() bool {
		b, _ := os.ReadFile(records)
		return strings.Count(string(b), "\n") >= len(lines)
	})
	stopProcess(t, cmd) // SIGTERM, exit 0

	live, _ := os.ReadFile(findings)
	liveMissing := strings.Contains(string(live), `"e2a.missing_final"`)
	if liveMissing != finish {
		t.Fatalf("live findings (finish_on_shutdown %t):\n%s", finish, live)
	}
	_, out, summary := runCLI(t, "validate", "--output", "json", "--fail-on", "never", records)
	replayMissing := strings.Contains(out, `"rule":"e2a.missing_final","severity":"warning","stream":"open"`)
	if replayMissing != liveMissing || strings.Count(out, "\n") != strings.Count(string(live), "\n") {
		t.Errorf("replay of the record log:\n%s\nwant the live run's findings:\n%s", out, live)
	}
	// The summary's outcomes: the stream the live run left open is no
	// missing_final there either (it was, without a finding, before
	// "open" was marked apart).
	want := map[string]int{"succeeded": 1, "missing_final": 1}
	if !finish {
		want = map[string]int{"succeeded": 1, "open": 1}
	}
	if got := summaryOutcomes(summary); !maps.Equal(got, want) {
		t.Errorf("replay's stream outcomes %v, want %v:\n%s", got, want, summary)
	}
	log, _ := os.ReadFile(records)
	mark := strings.HasSuffix(string(log), openLeftMark)
	if mark == finish {
		t.Errorf("record log ends with the mark of streams left open: %t, want %t:\n%s", mark, !finish, log)
	}
	if finish {
		return
	}

	// A second run goes on reading the file: the open stream's final
	// arrives, in its join window (no seq_start, live or replayed). It
	// knew nothing of the stream before: neither does the replay (one
	// stream left open by the first run, one that succeeded in the second).
	appendLines(t, filepath.Join(logs, "agent.jsonl"), e2aStream("open", 3, 3, false, true))
	cmd = startProcess(t, cfgPath)
	pollUntil(t, "the final in the record log", 30*time.Second, func() bool {
		b, _ := os.ReadFile(records)
		return strings.Count(string(b), "\n") >= len(lines)+2
	})
	stopProcess(t, cmd)
	live, _ = os.ReadFile(findings)
	code, out, summary := runCLI(t, "validate", "--output", "json", records)
	if code != 0 || out != "" || len(live) != 0 {
		t.Errorf("replay after the second run: status %d, findings:\n%s\nlive findings:\n%s", code, out, live)
	}
	want = map[string]int{"succeeded": 2, "open": 1}
	if got := summaryOutcomes(summary); !maps.Equal(got, want) {
		t.Errorf("replay's stream outcomes after the second run %v, want %v:\n%s", got, want, summary)
	}
}

// openLeftMark is the record log's last line after a run that stopped with
// streams open (exporters/jsonlog).
const openLeftMark = `{"_e2atap":{"tap":"","lost":true,"all":true,"open":true}}` + "\n"

// summaryOutcomes reads the stream outcome table of validate's summary.
func summaryOutcomes(summary string) map[string]int {
	got := map[string]int{}
	_, table, ok := strings.Cut(summary, "stream outcome")
	if !ok {
		return got
	}
	lines := strings.Split(table, "\n")[1:]
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 2 {
			break
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			break
		}
		got[f[0]] = n
	}
	return got
}
