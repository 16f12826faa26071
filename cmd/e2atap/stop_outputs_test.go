package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFullFindingsLogAtStopExitsZero: e2atap run with its findings log on
// /dev/full (every write ENOSPC, as on a full disk): the seq_start of a
// stream is lost while running, the missing_final that finish_on_shutdown
// gives it at SIGTERM is lost at the stop. Both are counted and logged,
// and the stop is clean: exit 0 (DESIGN.md), its last line saying how many
// lines were lost; and a flush with nothing to write does not say the log
// works again. Before, the exit status was 1 ("stopped with an error":
// "sync /dev/full: invalid argument", an fsync a device cannot do, or the
// ENOSPC of a write that came at the stop rather than before it), no line
// said how many were lost, and the next flush logged "writing the logs out
// works again", "lines_lost":0.
func TestFullFindingsLogAtStopExitsZero(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	os.Mkdir(logs, 0o755)
	appendLines(t, filepath.Join(logs, "a.jsonl"), e2aStream("cut", 3, 4, false, false))
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 10m, join_window: 0s, finish_on_shutdown: true}
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: /dev/full}
`, listen, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "positions.json"))), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	defer func() {
		if t.Failed() {
			for l := range strings.Lines(scrape(t, listen)) {
				if strings.Contains(l, "records_total") || strings.Contains(l, "findings_total") || strings.Contains(l, "tap_up") || strings.Contains(l, "output") {
					t.Log("at the failure:", strings.TrimSpace(l))
				}
			}
		}
	}()
	pollUntil(t, "the seq_start lost", 20*time.Second, func() bool {
		return len(stderr.lines("writing the logs out failed; lines are lost until it works again (e2atap_output_lines_failed_total), logged once")) == 1
	})
	// Two flushes more with nothing to write: not "works again" (it was
	// said, "lines_lost":0, at the next flush).
	time.Sleep(2500 * time.Millisecond)
	if again := stderr.lines("writing the logs out works again"); len(again) > 0 {
		t.Errorf("%v: /dev/full took no line since it failed", again)
	}
	stopProcess(t, cmd) // exit 0
	warn := stderr.lines("outputs failed at the stop: what they did not take is lost, counted (e2atap_output_lines_failed_total, trace_spans_failed)")
	stop := stderr.lines("e2atap stopped")
	if len(warn) != 1 || len(stop) != 1 || stop[0]["output_lines_failed"] != 2.0 || warn[0]["output_lines_failed"] != 2.0 {
		t.Fatalf("at the stop: %v, then %v; want the failure logged and 2 lines lost (the seq_start, the missing_final)", warn, stop)
	}
}
