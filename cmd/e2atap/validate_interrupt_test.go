//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestValidateInterruptedStdin: SIGTERM (or the SIGINT of a Ctrl-C) to
// `producer | e2atap validate -` ends validate at once, even while the
// pipe's writer is alive and quiet, with the findings read so far, the
// summary and status 2; the streams the cut left open get no
// missing_final (their input was cut, not ended), and a line cut in the
// middle is no e2a.decode. Before, validate ignored the signal until its
// input ended (the process went on blocked in read(2)), and then judged
// the end of the pipe as the end of the capture: a missing_final for
// every open stream and status 1 or 0, as for a complete capture.
func TestValidateInterruptedStdin(t *testing.T) {
	t.Parallel() // waits on the child: main_test.go
	for _, output := range []string{"json", "text"} {
		t.Run(output, func(t *testing.T) {
			t.Parallel()
			interruptValidate(t, output)
		})
	}
}

func interruptValidate(t *testing.T, output string) {
	cmd := exec.Command(os.Args[0], "validate", "--shards", "1", "--output", output, "-")
	cmd.Env = append(os.Environ(), "E2ATAP_BE_MAIN=1")
	pr, stdin, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = pr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	var once sync.Once
	closeIn := func() { once.Do(func() { stdin.Close() }) }
	defer func() {
		closeIn()
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	rec := func(id string, seq int, final bool) string {
		kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
		}
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":"%s-%d","request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`+"\n",
			id, seq, id, seq, final, status, kind, body)
	}
	// A finished stream with a gap (a finding), two open ones, and half
	// of a line the cut leaves unfinished.
	input := rec("done", 0, false) + rec("done", 2, false) + rec("done", 3, true) +
		rec("open1", 0, false) + rec("open2", 0, false) + rec("open1", 1, false)
	half := rec("open2", 1, false)
	if _, err := io.WriteString(stdin, input+half[:len(half)/2]); err != nil {
		t.Fatal(err)
	}

	// Findings and summary are written at the end (stdout is buffered):
	// the event that says validate has read the input is the pipe
	// drained. The complete lines are then judged before the next read
	// (bufio hands them out of its buffer), and the signal cuts that
	// read, the one the half line waits in.
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		n, err := unix.IoctlGetInt(int(stdin.Fd()), unix.TIOCINQ) // FIONREAD
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Since(start) > 60*time.Second {
			t.Fatalf("validate did not read its input in 60 s (%d bytes left)", n)
		}
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var out []string

	// The writer stays open: only the signal can end validate.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		for l := range lines {
			out = append(out, l)
		}
		exited <- cmd.Wait()
	}()
	var werr error
	select {
	case werr = <-exited:
	case <-time.After(60 * time.Second):
		// The defect: still blocked in read(2). End the input as the
		// producer's death would, and judge what it then says.
		t.Error("validate did not end within 60 s of SIGTERM with its input open")
		closeIn()
		werr = <-exited
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("exit %v, want status %d (interrupted)", werr, exitUsage)
	}
	all := strings.Join(out, "\n")
	if strings.Contains(all, "missing_final") {
		t.Errorf("a stream the cut left open was judged as ended:\n%s", all)
	}
	if strings.Contains(all, "e2a.decode") {
		t.Errorf("the line the cut left unfinished was judged:\n%s", all)
	}
	summary := all // text: the summary follows the findings on stdout
	if output == "json" {
		summary = errOut.String()
	}
	if !strings.Contains(summary, "6 records, 1 findings") {
		t.Errorf("no summary of the 6 records read and their finding:\n%s", summary)
	}
	if !strings.Contains(errOut.String(), "interrupted in standard input after 6 records") {
		t.Errorf("stderr does not say the run was interrupted: %s", errOut.String())
	}
}
