//go:build linux

package logdir

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/logdir/positions"
)

// The descriptor-limit test (issue 8, fault e) runs the tailer in a child
// process (this test binary, re-executed) whose RLIMIT_NOFILE is 512, soft
// and hard, while this process appends to 700 files (1024 and 1500 until
// the suite's time mattered: the same limit crossed, at half the cost). Each file's lines
// are numbered: a line that comes twice (or out of order) is what the
// engine reports as e2a.after_final when a file is read again from 0, and
// a line that never comes is a loss. Before: a scan that hit EMFILE took
// every file it could not see as deleted, dropped its position and read it
// again from 0 (1011 false e2a.after_final with 1500 files), and every
// file held its descriptor for good.

const (
	fdChildEnv   = "LOGDIR_FD_CHILD"
	fdLimit      = 512
	fdFiles      = 700
	fdFirstLines = 4
	fdRounds     = 6
)

type fdResult struct {
	Lines     int    `json:"lines"`
	Repeated  int    `json:"repeated"` // lines that came again or out of order
	Skipped   int    `json:"skipped"`  // lines that never came before a later one
	MaxFDs    int    `json:"max_fds"`  // counted by the parent
	ErrScan   uint64 `json:"err_scan"`
	ErrPos    uint64 `json:"err_positions"`
	HeapKiB   uint64 `json:"heap_kib"` // live heap once everything was read
	Lost      int    `json:"lost"`     // Lost control messages
	IdleSaves int    `json:"idle_saves"`
	Done      bool   `json:"done"`
	Err       string `json:"err,omitempty"`
}

func TestDescriptorLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("1500 files in a child process")
	}
	for _, tc := range []struct {
		name    string
		maxOpen int
	}{
		{"default bound", 0},
		{"bound above the limit: EMFILE", 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			paths := make([]string, fdFiles)
			for i := range paths {
				paths[i] = filepath.Join(dir, fmt.Sprintf("agent-%04d.jsonl", i))
				var b bytes.Buffer
				for n := 1; n <= fdFirstLines; n++ {
					b.WriteString(numbered(i, n) + "\n")
				}
				if err := os.WriteFile(paths[i], b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fdChildEnv+"="+dir,
				"LOGDIR_FD_MAX_OPEN="+strconv.Itoa(tc.maxOpen),
				"LOGDIR_FD_EXPECT="+strconv.Itoa(fdFiles*(fdFirstLines+fdRounds)))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Descriptors are counted from here: the child may have none
			// to spare for looking at its own.
			peak := make(chan int, 1)
			stopCount := make(chan struct{})
			go func() {
				n := 0
				for {
					if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)); err == nil {
						n = max(n, len(ents))
					}
					select {
					case <-stopCount:
						peak <- n
						return
					case <-time.After(2 * time.Millisecond):
					}
				}
			}()
			// The writer: every file gets a line per round while the child
			// reads.
			for r := 1; r <= fdRounds; r++ {
				time.Sleep(150 * time.Millisecond)
				for i, p := range paths {
					appendFile(t, p, numbered(i, fdFirstLines+r)+"\n")
				}
			}
			err := cmd.Wait()
			close(stopCount)
			maxFDs := <-peak
			if err != nil {
				t.Fatalf("child: %v\n%s", err, stderr.String())
			}
			var res fdResult
			if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
				t.Fatalf("child output %q: %v\n%s", stdout.String(), err, stderr.String())
			}
			res.MaxFDs = maxFDs
			t.Logf("%+v", res)
			if res.Err != "" || !res.Done {
				t.Fatalf("child did not finish: %+v\n%s", res, stderr.String())
			}
			if res.Repeated != 0 || res.Skipped != 0 || res.Lines != fdFiles*(fdFirstLines+fdRounds) {
				t.Errorf("%d lines, %d read again (false e2a.after_final), %d skipped", res.Lines, res.Repeated, res.Skipped)
			}
			if res.Lost != 0 {
				t.Errorf("%d losses reported: nothing was lost", res.Lost)
			}
			bound := DefaultConfig().MaxOpenFiles
			if tc.maxOpen > 0 {
				bound = fdLimit
				if res.ErrScan == 0 {
					t.Error("no EMFILE counted: the test did not run into the limit")
				}
			}
			if slack := 32; res.MaxFDs > bound+slack {
				t.Errorf("%d descriptors open at most, bound %d", res.MaxFDs, bound)
			}
			// Quiet files hold no 64 KiB chunk each (before: 67 MiB here).
			if res.HeapKiB > 32<<10 {
				t.Errorf("%d KiB of heap for %d read files", res.HeapKiB, fdFiles)
			}
			if res.IdleSaves != 0 {
				t.Errorf("positions file written %d times while nothing changed", res.IdleSaves)
			}
		})
	}
}

// fdChild is the child's main: the tailer under RLIMIT_NOFILE 1024.
func fdChild(dir string) int {
	res := fdChildRun(dir)
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return 0
}

func fdChildRun(dir string) (res fdResult) {
	lim := syscall.Rlimit{Cur: fdLimit, Max: fdLimit}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		res.Err = err.Error()
		return res
	}
	expect, _ := strconv.Atoi(os.Getenv("LOGDIR_FD_EXPECT"))
	maxOpen, _ := strconv.Atoi(os.Getenv("LOGDIR_FD_MAX_OPEN"))
	cfg := DefaultConfig()
	cfg.Name = "logs"
	cfg.Paths = []string{filepath.Join(dir, "*.jsonl")}
	cfg.Positions = filepath.Join(dir, "positions.json")
	cfg.PollInterval, cfg.RescanInterval, cfg.SaveInterval = 20*time.Millisecond, 200*time.Millisecond, 50*time.Millisecond
	if maxOpen > 0 {
		cfg.MaxOpenFiles = maxOpen
	}
	stats := new(tap.Stats)
	tl, err := New(cfg, stats, nil)
	if err != nil {
		res.Err = err.Error()
		return res
	}
	var mu sync.Mutex
	last := make(map[int]int)
	got := make(chan struct{})
	emit := func(_ context.Context, m tap.Message) error {
		mu.Lock()
		defer mu.Unlock()
		if m.Lost {
			res.Lost++
		}
		if m.Data == nil {
			return nil
		}
		var gen, n int
		var pad string
		if _, err := fmt.Sscanf(string(m.Data), `{"gen":%d,"n":%d,"pad":%q}`, &gen, &n, &pad); err != nil {
			res.Err = fmt.Sprintf("bad line %q", m.Data)
			return nil
		}
		switch {
		case n <= last[gen]:
			res.Repeated++
		case n > last[gen]+1:
			res.Skipped += n - last[gen] - 1
		}
		last[gen] = max(last[gen], n)
		if res.Lines++; res.Lines == expect {
			close(got)
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- tl.Run(ctx, emit) }()
	select {
	case <-got:
		res.Done = true
	case <-time.After(time.Minute):
	case err := <-done:
		res.Err = fmt.Sprintf("Run returned early: %v", err)
		return res
	}
	// Idle: every line read, nothing changes; the positions file must not
	// be written again (after the save of the last offsets).
	// Idle once the positions file holds every line (a save may be slow:
	// fsync on a loaded disk), then 5 more save intervals for good measure.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		entries, _, _ := positions.Load(cfg.Positions)
		var lines int64
		for _, e := range entries {
			lines += e.Line
		}
		if lines == int64(expect) {
			break
		}
	}
	time.Sleep(5 * cfg.SaveInterval)
	// Each save renames a new file into place: count new inodes.
	ino := func() uint64 {
		fi, err := os.Stat(cfg.Positions)
		if err != nil {
			return 0
		}
		return fi.Sys().(*syscall.Stat_t).Ino
	}
	prev := ino()
	for deadline := time.Now().Add(20 * cfg.SaveInterval); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cur := ino(); cur != prev {
			res.IdleSaves++
			prev = cur
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	res.HeapKiB = ms.HeapAlloc >> 10
	cancel()
	if err := <-done; err != nil {
		res.Err = err.Error()
	}
	mu.Lock()
	defer mu.Unlock()
	res.ErrScan = stats.Errors[tap.ErrScan].Load()
	res.ErrPos = stats.Errors[tap.ErrPositions].Load()
	return res
}
