//go:build linux

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestValidateUnderMemoryLimits: `e2atap validate` over more open
// streams than its memory holds finishes with the verdicts of clean
// traffic and the planted fault found, never a panic or a fault: the
// stream tables, that may take at most half of GOMEMLIMIT, evict (counted
// in the summary) instead of growing past it. (A failed
// mmap under ulimit -v is tested in validate, TestTablesUnderAddressLimit:
// this binary, linked with cgo, cannot even start a thread under it.)
func TestValidateUnderMemoryLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("child processes with 300000 streams")
	}
	t.Parallel() // a child that computes, beside tests that wait: main_test.go
	// 300000 streams with 200-byte ids take about 75 MB of tables.
	// Without the tables' ceiling nothing is evicted (and the peak RSS,
	// logged, is about 116 MiB where it is about 63 MiB with it on an idle
	// machine; it is not asserted: a collector starved of CPU by a loaded
	// machine lets the heap overshoot a soft limit).
	limit, n := "48MiB", 300_000
	if raceEnabled {
		// The child is ten times slower under the race detector: 100000
		// streams, 25 MB of tables, still over their share of a 32 MiB
		// limit.
		limit, n = "32MiB", 100_000
	}
	out, _ := validateUnderLimit(t, n, []string{"GOMEMLIMIT=" + limit})
	if !strings.Contains(out, "evicted:") {
		t.Fatal("the summary does not say streams were evicted: the tables grew past their share of the limit")
	}
}

// validateUnderLimit runs `e2atap validate -` with env over clean traffic
// with n streams open at its peak and a planted gap at the end. It
// returns stdout and the peak RSS.
func validateUnderLimit(t *testing.T, n int, env []string) (string, int64) {
	cmd := exec.Command(os.Args[0], "validate", "--fail-on", "warning", "-")
	cmd.Env = append(append(os.Environ(), "E2ATAP_BE_MAIN=1"), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	w := bufio.NewWriterSize(stdin, 1<<20)
	id := "q" + strings.Repeat("x", 190) + "%08x"
	line := func(n, seq int, final bool) {
		kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
		}
		fmt.Fprintf(w, `{"protocol_version":"1.0","response_id":"r%d-%d","request_id":"`+id+`","sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`+"\n",
			n, seq, n, seq, final, status, kind, body)
	}
	for s := 0; s < n; s++ {
		line(s, 0, false)
	}
	for s := 0; s < n; s++ {
		line(s, 1, true)
	}
	// The planted fault, once the pressure is gone: a gap.
	line(1<<30, 0, false)
	line(1<<30, 2, false)
	line(1<<30, 3, true)
	w.Flush()
	stdin.Close()
	err = cmd.Wait()
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss << 10
	}
	t.Logf("peak RSS %d MiB; stdout:\n%s\nstderr:\n%s", rss>>20, tailText(out.String(), 2000), headText(errOut.String(), 3000))
	for _, bad := range []string{"panic", "SIGSEGV", "fatal error", "unexpected fault"} {
		if strings.Contains(errOut.String(), bad) {
			t.Fatalf("stderr has %q", bad)
		}
	}
	// The planted gap is an error finding: exit 1 (exitFindings), and it
	// is the only finding.
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitFindings {
		t.Fatalf("exit: %v, want code %d", err, exitFindings)
	}
	if c := strings.Count(out.String(), "seq_gap"); c < 1 || strings.Contains(out.String(), "seq_start") || strings.Contains(out.String(), "missing_final") {
		t.Fatal("want the planted e2a.seq_gap and no other finding")
	}
	return out.String(), rss
}

func headText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
