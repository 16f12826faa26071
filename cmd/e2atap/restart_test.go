package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/internal/gen"
)

// startE2atap starts this test binary as the real process `e2atap ARGS`
// (E2ATAP_BE_MAIN=1) with env added to the environment; its stderr is
// collected, shown when the test fails, and the process is killed at the
// end of the test if it is still running.
func startE2atap(t *testing.T, env []string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	return startBinary(t, os.Args[0], env, args...)
}

// startBinary is startE2atap with the program to start: os.Args[0], or
// plainE2atap's build without the race detector.
func startBinary(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "E2ATAP_BE_MAIN=1"), env...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("e2atap (pid %d) stderr (tail):\n%s", cmd.Process.Pid, tailText(stderr.String(), 8000))
		}
	})
	return cmd, stderr
}

// startProcess starts `e2atap run --config cfg`.
func startProcess(t *testing.T, cfg string) *exec.Cmd {
	t.Helper()
	cmd, _ := startE2atap(t, nil, "run", "--config", cfg)
	return cmd
}

// startProcessArgs starts `e2atap run --config cfg ARGS`.
func startProcessArgs(t *testing.T, cfg string, args ...string) (*exec.Cmd, *lockedBuffer) {
	t.Helper()
	return startE2atap(t, nil, append([]string{"run", "--config", cfg}, args...)...)
}

// otlpEnv sends the process's spans over OTLP/HTTP to a receiver at url,
// exported within 200 ms.
func otlpEnv(url string) []string {
	return []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=" + url + "/v1/traces", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_BSP_SCHEDULE_DELAY=200"}
}

// waitReady waits until the sidecar listening on listen answers /readyz 200.
func waitReady(t *testing.T, listen string) {
	t.Helper()
	pollUntil(t, "e2atap ready", 20*time.Second, func() bool {
		resp, err := http.Get("http://" + listen + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// stopProcess sends SIGTERM (what `kill PID` sends) and requires exit 0.
func stopProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	awaitExit(t, cmd)
}

// awaitExit waits for a process told to stop and requires exit 0; a hang
// fails the test (and kills the process) instead of the suite's timeout.
func awaitExit(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("e2atap did not exit 0 on SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second): // a hang guard: under -race on a loaded machine a drain took 20 s
		cmd.Process.Kill()
		<-done // the cleanup must not Wait while this Wait runs
		t.Fatal("e2atap did not stop within 60s of SIGTERM")
	}
}

// sources counts the records of the redacted log by their source line.
func sources(t *testing.T, path string) map[string]int {
	t.Helper()
	out := map[string]int{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			E struct {
				Source string `json:"source"`
				Lost   bool   `json:"lost"`
			} `json:"_e2atap"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("records log line is not JSON: %v", err)
		}
		if !rec.E.Lost { // a mark, no record
			out[rec.E.Source]++
		}
	}
	return out
}

// TestRestartMidFile: the sidecar tails a log that is being written, is
// killed (SIGTERM) in the middle of the file, and starts again while the
// writer goes on: every line is processed exactly once across the two
// runs, and the findings are those of the whole file.
func TestRestartMidFile(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	logs := filepath.Join(dir, "agent")
	os.MkdirAll(logs, 0o755)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	records := filepath.Join(dir, "records.jsonl")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {idle_timeout: 0s, join_window: 0s}
taps:
  - {name: logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, freeAddr(t), filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "positions.json"), filepath.Join(dir, "findings.jsonl"), records)), 0o644)

	// The writer: 12000 lines in bursts of 100, about 1.5 s in all.
	total, burst := 12000, 100
	if raceEnabled {
		// A third, in bursts a third as large over the same time: under
		// the race detector each run judges ten times slower.
		total, burst = 4000, 40
	}
	g := gen.New(gen.Config{Seed: 5, Concurrent: 8, MinChunks: 3, MaxChunks: 10, FaultRate: 0.1, Faults: []gen.Fault{gen.LostChunk, gen.DoubleFinal, gen.FailedWrongKind}})
	lines := make([][]byte, total)
	for i := range lines {
		lines[i] = g.Next().Data
	}
	logFile, err := os.Create(filepath.Join(logs, "agent.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	written := make(chan int, total)
	// The second half waits for the first run to stop (a kill in the
	// middle of the file, however slowly that run starts); the writer
	// then goes on while the second run reads.
	resume := make(chan struct{})
	release := sync.OnceFunc(func() { close(resume) })
	defer release() // a test that failed before does not leave it waiting
	go func() {
		for i := 0; i < total; i += burst {
			if i == total/2 {
				<-resume
			}
			var b bytes.Buffer
			for _, l := range lines[i : i+burst] {
				b.Write(l)
				b.WriteByte('\n')
			}
			logFile.Write(b.Bytes())
			written <- i + burst
			time.Sleep(12 * time.Millisecond)
		}
		close(written)
	}()

	first := startProcess(t, cfgPath)
	// Kill it once it has processed part of the file but not all of it.
	pollUntil(t, "the first run to process some lines", 20*time.Second, func() bool {
		return fileLines(records) > 500
	})
	stopProcess(t, first)
	n1 := fileLines(records)
	release()
	for range written {
	}
	if n1 >= total {
		t.Fatalf("the first run processed the whole file (%d lines) before it was killed: the test proves nothing", n1)
	}
	second := startProcess(t, cfgPath)
	pollUntil(t, "every line to be processed", 60*time.Second, func() bool { return fileLines(records) >= total })
	stopProcess(t, second)

	seen := sources(t, records)
	var dup, missing []string
	for i := 1; i <= total; i++ {
		src := fmt.Sprintf("logs:%s:%d", filepath.Join(logs, "agent.jsonl"), i)
		switch seen[src] {
		case 1:
		case 0:
			missing = append(missing, src)
		default:
			dup = append(dup, src)
		}
	}
	if len(dup)+len(missing) > 0 || len(seen) != total {
		t.Fatalf("after a restart at line %d of %d: %d lines repeated (%v…), %d missing (%v…), %d sources", n1, total, len(dup), first3(dup), len(missing), first3(missing), len(seen))
	}
	t.Logf("killed after %d of %d lines; every line processed exactly once across the restart", n1, total)
}

// fileLines counts the lines of path; in a record log, its lines of
// records: not its mark of lines lost to everyone, nor the one that ends
// the log of a run stopped with streams open (validate.OpenMarker).
func fileLines(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n") - strings.Count(string(b), "\n"+allLostMark) - strings.Count(string(b), "\n"+openLeftMark)
}

// allLostMark is the record log's line with no record for lines lost to
// everyone (exporters/jsonlog).
const allLostMark = `{"_e2atap":{"tap":"","lost":true,"all":true}}` + "\n"

func first3(s []string) []string {
	if len(s) > 3 {
		return s[:3]
	}
	return s
}
