//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateLogCannotBeWritten: `e2atap validate --log FILE` whose log
// cannot be written whole (here a file size limit, ulimit -f: as a full
// disk, the write fails) exits 2, an I/O error, whatever the findings:
// a script that keeps the log of a clean capture must not take a cut one
// for it. Before, the error was printed and the status was 0.
func TestValidateLogCannotBeWritten(t *testing.T) {
	t.Parallel() // waits on the child: main_test.go
	dir := t.TempDir()
	in := filepath.Join(dir, "clean.jsonl")
	var b strings.Builder
	for s := range 2000 {
		for seq := range 2 {
			kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
			if seq == 1 {
				kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
			}
			fmt.Fprintf(&b, `{"protocol_version":"1.0","response_id":"r%d","request_id":"q%d","sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`+"\n",
				s, s, seq, seq == 1, status, kind, body)
		}
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{"file", "stdin"} {
		t.Run(src, func(t *testing.T) {
			log := filepath.Join(dir, src+".log")
			arg := in
			if src == "stdin" {
				arg = "-"
			}
			// 64 blocks (32 or 64 KiB, by the shell): the log of 4000
			// records is over 1 MB; the input is read, not written.
			cmd := exec.Command("/bin/sh", "-c", `ulimit -f 64 && exec "$0" validate --quiet --log "$1" "$2" <"$3"`, os.Args[0], log, arg, in)
			cmd.Env = append(os.Environ(), "E2ATAP_BE_MAIN=1")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != exitUsage {
				t.Errorf("exit %v, want status %d: stdout %s stderr %s", err, exitUsage, out, stderr.String())
			}
			if !strings.Contains(stderr.String(), "--log:") {
				t.Errorf("stderr does not name the log's failure: %s", stderr.String())
			}
			if !strings.Contains(string(out), "4000 records, 0 findings") {
				t.Errorf("the verdicts are not those of the clean capture: %s", out)
			}
		})
	}
}
