//go:build linux

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/frame"
)

// TestValidateInterruptedFile: SIGINT to `e2atap validate FILE` on a
// regular file ends the read at its next refill, as for standard input:
// what was read is judged and summed up, the streams the cut left open are
// not ended (no missing_final, no missing_done), status 2 and "interrupted in FILE after N
// records" with N fewer than the file holds, for JSON lines and frames, by
// one shard (one read(2) buffer) and by two (a split). Before, a regular
// file went through validate.Read's fast paths, which never looked at the
// signal: the whole file was read and judged first (a multi-GB capture
// for minutes), N was the file's count.
//
// The signal is sent while the child is known to be in the middle of the
// file: once it has read some of it (rchar in /proc/PID/io), the child is
// stopped (SIGSTOP), seen not to have read all of it, sent SIGINT and
// continued. No bound on the time the child takes.
func TestValidateInterruptedFile(t *testing.T) {
	t.Parallel() // waits on its children: main_test.go
	dir := t.TempDir()
	const streams = 64
	jsonl, jsonRecs := interruptJSONL(t, filepath.Join(dir, "cap.jsonl"), streams)
	frames, frameRecs := interruptFrames(t, filepath.Join(dir, "cap.frames"), streams)
	for _, c := range []struct {
		name, path string
		records    int
	}{{"jsonl", jsonl, jsonRecs}, {"frames", frames, frameRecs}} {
		for _, shards := range []string{"1", "2"} {
			t.Run(c.name+"/"+shards+" shards", func(t *testing.T) {
				interruptValidateFile(t, c.path, c.records, shards)
			})
		}
	}
}

// interruptJSONL writes a capture of complete streams, streams at a time
// interleaved (no finding when read whole), of some 60 MB.
func interruptJSONL(t *testing.T, path string, streams int) (string, int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const perStream = 20
	n := 0
	for round := 0; n < 200000; round++ {
		for seq := 0; seq < perStream; seq++ {
			for s := 0; s < streams; s++ {
				id := fmt.Sprintf("r%d-%d", round, s)
				final := seq == perStream-1
				kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"some text of a chunk, long enough to look like one"}`
				if final {
					kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
				}
				fmt.Fprintf(w, `{"protocol_version":"1.0","response_id":"%s-%d","request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`+"\n",
					id, seq, id, seq, final, status, kind, body)
				n++
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, n
}

// interruptFrames writes complete frame streams, interleaved, of some
// 30 MB.
func interruptFrames(t *testing.T, path string, streams int) (string, int) {
	t.Helper()
	var b []byte
	payload := bytes.Repeat([]byte("p"), 120)
	const perStream = 20
	n := 0
	for round := 0; n < 200000; round++ {
		for seq := 0; seq < perStream; seq++ {
			for s := 0; s < streams; s++ {
				flags := uint8(0)
				if seq == perStream-1 {
					flags = frame.FlagDone
				}
				var err error
				b, err = frame.AppendFrame(b, frame.TypeStreamChunk, flags, int32(seq),
					[]frame.Attr{{Name: "sid", Value: fmt.Sprintf("agent-1:%08d-%04d-4000-8000-000000000000", round, s)}, {Name: "etype", Value: "text"}}, payload)
				if err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, n
}

var interruptedAfter = regexp.MustCompile(`interrupted in (\S+) after (\d+) records`)

func interruptValidateFile(t *testing.T, path string, records int, shards string) {
	stdout, stderr, werr := interruptInRead(t, path, "validate", "--shards", shards, "--output", "json", path)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("exit %v, want status %d (interrupted); stderr:\n%s", werr, exitUsage, stderr)
	}
	m := interruptedAfter.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("stderr does not say the run was interrupted:\n%s", stderr)
	}
	if m[1] != path {
		t.Errorf("interrupted in %s, want %s", m[1], path)
	}
	n, _ := strconv.Atoi(m[2])
	t.Logf("interrupted after %d of %d records", n, records)
	if n == 0 || n >= records {
		t.Errorf("interrupted after %d of the file's %d records: want some, and fewer (the read stopped at the signal)", n, records)
	}
	if !strings.Contains(stderr, fmt.Sprintf("%d records", n)) {
		t.Errorf("no summary of the %d records judged:\n%s", n, stderr)
	}
	if strings.Contains(stdout, "missing_final") || strings.Contains(stdout, "missing_done") {
		t.Errorf("a stream the cut left open was judged as ended:\n%.2000s", stdout)
	}
}

// TestDecodeInterruptedFile: SIGINT to `e2atap decode FILE` ends it at the
// next refill of its read, with what was decoded printed, status 2 and
// "interrupted in FILE". Before, decode never looked at the signal (the
// process catches it for every command): it printed the whole file and
// exited 0, 14 s after a Ctrl-C on a 200 MB capture.
func TestDecodeInterruptedFile(t *testing.T) {
	t.Parallel() // waits on its child: main_test.go
	path, records := interruptJSONL(t, filepath.Join(t.TempDir(), "cap.jsonl"), 64)
	stdout, stderr, werr := interruptInRead(t, path, "decode", path)
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != exitUsage {
		t.Errorf("exit %v, want status %d (interrupted); stderr:\n%s", werr, exitUsage, stderr)
	}
	if !strings.Contains(stderr, "interrupted in "+path) {
		t.Errorf("stderr does not say decode was interrupted:\n%s", stderr)
	}
	lines := strings.Split(stdout, "\n")
	if n := len(lines) - 1; n == 0 || n >= records || lines[n] != "" {
		t.Errorf("%d lines printed of the file's %d records (last %.100q): want some whole ones, and fewer", n, records, lines[n])
	}
}

// interruptInRead runs e2atap args, which reads path, and sends it SIGINT
// while it is known to be in the middle of the file: once it has read
// some of it (rchar in /proc/PID/io), the child is stopped (SIGSTOP), seen
// not to have read all of it, sent SIGINT and continued. It returns how
// the child exited and what it printed. No bound on the time the child
// takes but a hang guard.
func interruptInRead(t *testing.T, path string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "E2ATAP_BE_MAIN=1")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
	}()
	// Past the first megabytes (the first buffers, the split's first
	// chunks), before the end.
	pid := cmd.Process.Pid
	var read int64
	for read < 4<<20 {
		select {
		case err := <-exited:
			t.Skipf("e2atap read all of the %d-byte file before it could be stopped (%v): too fast a machine for this file", st.Size(), err)
		default:
		}
		read = rchar(t, pid)
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	pollUntil(t, "e2atap stopped", 60*time.Second, func() bool { return procState(t, pid) == 'T' || procState(t, pid) == 'Z' })
	if procState(t, pid) == 'Z' || rchar(t, pid) >= st.Size() {
		t.Skipf("e2atap read all of the %d-byte file before it could be stopped: too fast a machine for this file", st.Size())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		return out.String(), errOut.String(), err
	case <-time.After(5 * time.Minute):
		t.Fatal("e2atap did not end within 5 minutes of SIGINT")
	}
	return "", "", nil
}

// rchar is what process pid has read by read(2) and pread(2) so far.
func rchar(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return 0 // gone: the caller sees it exit
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Fatalf("no rchar in /proc/%d/io", pid)
	return 0
}

// procState is process pid's state letter (/proc/PID/stat): T stopped, Z
// exited.
func procState(t *testing.T, pid int) byte {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 'Z'
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return b[i+2]
}
