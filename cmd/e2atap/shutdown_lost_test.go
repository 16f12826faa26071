package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestProcessReplayLossAtShutdown: with streams.finish_on_shutdown true, a
// loss that no later record carried (here the logdir tap's: the file
// truncated with no copy, after its lines were read) gaps the stream it
// may have cut, so that the live run ends it at SIGTERM with no
// missing_final; the record log must say so for its replay to agree.
// Before, the log had nothing of the loss (its "gap" goes on the next
// record of the scope, and there was none), and the replay reported
// e2a.missing_final for the stream.
func TestProcessReplayLossAtShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	records := filepath.Join(dir, "records.jsonl")
	findings := filepath.Join(dir, "findings.jsonl")
	listen := freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`listen: %s
streams: {finish_on_shutdown: true}
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings, records)), 0o644)
	agent := filepath.Join(logs, "agent.jsonl")
	// done ends; cut is still streaming when the file is truncated.
	lines := append(e2aStream("done", 0, 2, true, true), e2aStream("cut", 0, 2, true, false)...)
	appendLines(t, agent, lines)
	cmd := startProcess(t, cfgPath)
	pollUntil(t, "every line in the record log", 30*time.Second, func() bool {
		b, _ := os.ReadFile(records)
		return strings.Count(string(b), "\n") >= len(lines)
	})
	if err := os.Truncate(agent, 0); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "the truncation's loss", 30*time.Second, func() bool {
		return sumMetric(scrapeQuiet(listen), "e2atap_tap_dropped_total{", `reason="truncated"`) >= 1
	})
	stopProcess(t, cmd)

	if live, _ := os.ReadFile(findings); len(live) != 0 {
		t.Fatalf("live findings:\n%s", live)
	}
	code, out, summary := runCLI(t, "validate", "--output", "json", records)
	if code != 0 || out != "" {
		log, _ := os.ReadFile(records)
		t.Errorf("replay of the record log: status %d, findings:\n%s%s\nlog:\n%s", code, out, summary, log)
	}
}
