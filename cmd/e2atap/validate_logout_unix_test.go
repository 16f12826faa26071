//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestValidateLogToDevicesAndFIFOs: --log names where the record log
// goes, and that need not be a regular file: /dev/null, /dev/stdout or a
// FIFO that a reader drains are written as they are (truncate(2) refuses
// them with EINVAL, which ended the run with a usage error), while a
// regular file is still started afresh.
func TestValidateLogToDevicesAndFIFOs(t *testing.T) {
	good := `{"protocol_version":"1.0","response_id":"q","request_id":"q","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete","timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":{"result":{}}}` + "\n"
	validateLog := func(t *testing.T, log string) {
		t.Helper()
		var out, errb bytes.Buffer
		code := run(context.Background(), []string{"validate", "--quiet", "--log", log, "-"}, strings.NewReader(good), &out, &errb)
		if code != exitOK {
			t.Fatalf("--log %s: exit %d: %s", log, code, errb.String())
		}
	}
	t.Run("devnull", func(t *testing.T) { validateLog(t, os.DevNull) })
	t.Run("fifo", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "records")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo) // blocks until the writer opens it
			if err != nil {
				got <- "open: " + err.Error()
				return
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			got <- string(b)
		}()
		validateLog(t, fifo)
		if s := <-got; !strings.Contains(s, `"request_id":"q"`) {
			t.Fatalf("the FIFO's reader got no record line: %q", s)
		}
	})
	t.Run("regular file is started afresh", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "records.jsonl")
		if err := os.WriteFile(path, []byte(`{"old":"line"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		validateLog(t, path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"old"`) || !strings.Contains(string(b), `"request_id":"q"`) {
			t.Fatalf("want only this run's record lines, got:\n%s", b)
		}
	})
}
