package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestProcessRecordLogFullAtTheEnd: the record log's file reaches its
// size limit (RLIMIT_FSIZE set on the running process with prlimit(2): the
// write fails with EFBIG, as on a full disk with ENOSPC) and stays so until
// the stop. Stream b's request and first chunk still get into the room a
// failed write's cut gave back, its final does not. The live run saw the
// final (no finding); the replay of the log must not judge b whole
// (RULES.md: a loss is never a finding). Before, the mark of lines lost
// waited for the next line that got in, none did, and the replay reported
// e2a.missing_final for b; the log now takes the mark at the failure.
func TestProcessRecordLogFullAtTheEnd(t *testing.T) {
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
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings, records)), 0o644)
	agent := filepath.Join(logs, "agent.jsonl")
	cmd := startProcess(t, cfgPath)
	logged := func() string { b, _ := os.ReadFile(records); return string(b) }
	failed := func() int {
		for _, l := range strings.Split(metric(t, listen, "e2atap_output_lines_failed_total"), "\n") {
			if strings.Contains(l, `output="records"`) {
				n, _ := strconv.Atoi(l[strings.LastIndexByte(l, ' ')+1:])
				return n
			}
		}
		return 0
	}

	a := e2aStream("a", 0, 3, true, true)
	appendLines(t, agent, a)
	pollUntil(t, "stream a in the record log", 30*time.Second, func() bool { return strings.Count(logged(), "\n") == len(a) })
	lim := unix.Rlimit{Cur: uint64(len(logged()) + 1500), Max: unix.RLIM_INFINITY}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		t.Skipf("prlimit RLIMIT_FSIZE: %v", err)
	}
	// A stream longer than the room left: lost.
	appendLines(t, agent, padded(e2aStream("c", 0, 8, true, true), 400))
	pollUntil(t, "a failed write of the record log", 30*time.Second, func() bool { return failed() > 0 })
	// b's beginning fits, its final does not.
	appendLines(t, agent, e2aStream("b", 0, 1, true, false))
	pollUntil(t, "b's first chunk in the record log", 30*time.Second, func() bool {
		return strings.Contains(logged(), `"request_id":"b","sequence":0`)
	})
	before := failed()
	appendLines(t, agent, padded(e2aStream("b", 1, 1, false, true), 3000))
	pollUntil(t, "b's final lost", 30*time.Second, func() bool { return failed() > before })
	stopProcess(t, cmd)

	if live, _ := os.ReadFile(findings); len(live) != 0 {
		t.Fatalf("live findings:\n%s", live)
	}
	code, out, summary := runCLI(t, "validate", "--output", "json", records)
	if code != 0 || out != "" {
		t.Errorf("replay of the record log: status %d, findings:\n%s%s\nlog:\n%s", code, out, summary, logged())
	}
}

// padded gives each E2A response a metadata object of n number members:
// bytes that the record log keeps as they are (no mask shortens them).
func padded(lines []string, n int) []string {
	var b strings.Builder
	b.WriteString(`{"metadata":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"n%d":%d`, i, i)
	}
	b.WriteString(`},`)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l
		if strings.Contains(l, `"response_id"`) {
			out[i] = b.String() + l[1:]
		}
	}
	return out
}

// TestProcessLogsWorkAgainOnlyWhenTheyDo: the record log's file at its
// size limit (RLIMIT_FSIZE by prlimit(2)) loses a record whose finding the
// findings log, with room, takes. The sidecar logged "writing the logs out
// works again" at its next look, on the findings log's line alone, while
// the record log took nothing. It now waits until every output that lost
// lines has written some since: here, once the limit is lifted.
func TestProcessLogsWorkAgainOnlyWhenTheyDo(t *testing.T) {
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
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings, records)), 0o644)
	agent := filepath.Join(logs, "agent.jsonl")
	cmd, stderr := startE2atap(t, nil, "run", "--config", cfgPath)
	logged := func() string { b, _ := os.ReadFile(records); return string(b) }
	a := e2aStream("a", 0, 2, true, true)
	appendLines(t, agent, a)
	pollUntil(t, "stream a in the record log", 30*time.Second, func() bool { return strings.Count(logged(), "\n") == len(a) })
	lim := unix.Rlimit{Cur: uint64(len(logged()) + 100), Max: unix.RLIM_INFINITY}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		t.Skipf("prlimit RLIMIT_FSIZE: %v", err)
	}
	const failing, again = "writing the logs out failed", "writing the logs out works again"
	appendLines(t, agent, e2aStream("b", 0, 2, true, true))
	pollUntil(t, "the record log failing", 30*time.Second, func() bool { return strings.Contains(stderr.String(), failing) })
	// c starts at sequence 1: e2a.seq_start, in the findings log.
	appendLines(t, agent, e2aStream("c", 1, 2, true, true))
	pollUntil(t, "c's finding", 30*time.Second, func() bool {
		b, _ := os.ReadFile(findings)
		return strings.Contains(string(b), `"e2a.seq_start"`)
	})
	// Three looks (one a second) with nothing more to write.
	time.Sleep(3 * time.Second)
	if strings.Contains(stderr.String(), again) {
		t.Fatalf("said to work again while the record log takes nothing:\n%s", stderr)
	}
	lim.Cur = unix.RLIM_INFINITY
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	appendLines(t, agent, e2aStream("d", 0, 2, true, true))
	pollUntil(t, "works again", 30*time.Second, func() bool { return strings.Contains(stderr.String(), again) })
	stopProcess(t, cmd)
	if n := strings.Count(stderr.String(), failing); n != 1 {
		t.Errorf("the failure logged %d times, want once:\n%s", n, stderr)
	}
}
