package ws

// The memory fault of issue 8 (b), at process level: the tap runs in a
// process of its own (this test binary, re-executed in the role "memtap")
// under GOMEMLIMIT, with a slow engine behind it, and the test reads the
// child's peak RSS from /proc.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/e2atap/e2atap/tap"
)

// memTapReport is what the memtap child prints when it ends.
type memTapReport struct {
	Drops      map[string]uint64
	Mirrored   uint64 // copies the engine judged
	BudgetUsed int64  // after Run returned and the engine drained: 0, or a charge leaked
	PeakHeap   uint64 // largest HeapInuse seen (sampled)
}

// runMemTap is the memtap child's main: a Proxy in front of
// E2ATAP_WS_BENCH_UPSTREAM with a budget of E2ATAP_WS_BUDGET bytes (0:
// none), and an engine that judges a copy every 20 ms (a queue of 4096,
// like the engine's), releasing its charge once judged. It prints the URL,
// serves until stdin closes, then prints a memTapReport.
func runMemTap() {
	limit, _ := strconv.ParseInt(os.Getenv("E2ATAP_WS_BUDGET"), 10, 64)
	budget := tap.NewBudget(limit)
	cfg := DefaultConfig()
	cfg.Name, cfg.Listen, cfg.Upstream, cfg.Budget = "mem", "127.0.0.1:0", os.Getenv("E2ATAP_WS_BENCH_UPSTREAM"), budget
	stats := new(tap.Stats)
	p, err := New(cfg, stats, slog.New(slog.DiscardHandler))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	engine := make(chan tap.Message, 4096)
	var mirrored uint64
	judged := make(chan struct{})
	go func() {
		defer close(judged)
		for m := range engine {
			var sum byte
			for _, b := range m.Data {
				sum += b
			}
			_ = sum
			if len(m.Data) > 0 {
				mirrored++
				time.Sleep(20 * time.Millisecond)
			}
			budget.Release(m.Charged)
		}
	}()
	var peak uint64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.Run(ctx, func(ctx context.Context, m tap.Message) error {
			select {
			case engine <- m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	fmt.Println("ws://" + p.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin)
	cancel()
	if err := <-done; err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	close(engine)
	<-judged
	close(stopSampling)
	<-sampled
	rep := memTapReport{Drops: map[string]uint64{}, Mirrored: mirrored, BudgetUsed: budget.Used(), PeakHeap: peak}
	for r := range stats.Drops {
		rep.Drops[tap.DropReasonNames[r]] = stats.Drops[r].Load()
	}
	_ = json.NewEncoder(os.Stdout).Encode(rep)
}

// hashServer is the upstream of the memory test: for every message it
// answers the hex SHA-256 of what it received, streaming (it holds no
// message), so that the client can check every byte was relayed.
func hashServer() (url string, stop func()) {
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer c.CloseNow()
		c.SetReadLimit(64 << 20)
		ctx := context.Background()
		for {
			_, rd, err := c.Reader(ctx)
			if err != nil {
				return
			}
			h := sha256.New()
			if _, err := io.Copy(h, rd); err != nil {
				return
			}
			if err := c.Write(ctx, websocket.MessageText, []byte(hex.EncodeToString(h.Sum(nil)))); err != nil {
				return
			}
		}
	}))
	return "ws://" + srv.Listener.Addr().String(), func() { srv.CloseClientConnections(); srv.Close(); wg.Wait() }
}

// Issue 8's load: 2 connections × 60 messages of 7 MB, and 50 idle
// connections each holding an unfinished 7 MiB fragmented message.
const (
	memPushConns = 2
	memPerConn   = 60
	memMsgSize   = 7_000_000
	memIdleConns = 50
	memPartial   = 7 << 20
)

// runMemLoad is the memload child's main: the hash server and the
// clients, in a process of their own (so that under -race the load is not
// slowed by the detector). It prints "UPSTREAM url", reads the tap's URL
// from stdin, runs the load, prints one JSON line (the errors; the idle
// connections stay open), and ends when stdin closes.
func runMemLoad() {
	up, stop := hashServer()
	defer stop()
	fmt.Println("UPSTREAM", up)
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadString('\n')
	if err != nil {
		os.Exit(1)
	}
	url := strings.TrimSpace(line)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs = []string{}
		idle []*websocket.Conn
	)
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err.Error())
		mu.Unlock()
	}
	for i := range memIdleConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := websocket.Dial(ctx, url, nil)
			if err != nil {
				fail(err)
				return
			}
			mu.Lock()
			idle = append(idle, c)
			mu.Unlock()
			w, err := c.Writer(ctx, websocket.MessageBinary)
			if err != nil {
				fail(err)
				return
			}
			chunk := make([]byte, 64<<10)
			for j := range chunk {
				chunk[j] = byte(i + j)
			}
			for sent := 0; sent < memPartial; sent += len(chunk) {
				if _, err := w.Write(chunk); err != nil { // each Write is a frame without FIN
					fail(err)
					return
				}
			}
			// The message is never finished: the writer stays open.
		}()
	}
	for i := range memPushConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, _, err := websocket.Dial(ctx, url, nil)
			if err != nil {
				fail(err)
				return
			}
			defer c.CloseNow()
			msg := make([]byte, memMsgSize)
			rng := rand.New(rand.NewPCG(uint64(i), 8))
			for j := range msg {
				msg[j] = byte(rng.Uint32())
			}
			for k := range memPerConn {
				msg[k] ^= byte(k + 1) // every message differs
				want := sha256.Sum256(msg)
				if err := c.Write(ctx, websocket.MessageBinary, msg); err != nil {
					fail(err)
					return
				}
				_, got, err := c.Read(ctx)
				if err != nil {
					fail(err)
					return
				}
				if string(got) != hex.EncodeToString(want[:]) {
					fail(fmt.Errorf("connection %d, message %d: the upstream received different bytes", i, k))
					return
				}
			}
			_ = c.Close(websocket.StatusNormalClosure, "")
		}()
	}
	wg.Wait()
	_ = json.NewEncoder(os.Stdout).Encode(errs)
	_, _ = io.Copy(io.Discard, in)
	for _, c := range idle {
		c.CloseNow()
	}
}

// childProc is a re-executed test binary in a role.
type childProc struct {
	role  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

func startRole(t *testing.T, bin, role string, env ...string) *childProc {
	t.Helper()
	return startRoleTo(t, bin, role, os.Stderr, env...)
}

// startRoleTo is startRole with the child's stderr going to stderr.
func startRoleTo(t *testing.T, bin, role string, stderr io.Writer, env ...string) *childProc {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(append(os.Environ(), benchRoleEnv+"="+role), env...)
	cmd.Stderr = stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return &childProc{role: role, cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
}

func (c *childProc) line(t *testing.T) string {
	t.Helper()
	s, err := c.out.ReadString('\n')
	if err != nil {
		t.Fatalf("%s child: %v", c.role, err)
	}
	return strings.TrimSpace(s)
}

// childBinary is the test binary to run the children from: this one, or
// under -race one built without the race detector, whose shadow memory
// would be most of the RSS measured (and whose slowness most of the time).
func childBinary(t *testing.T) string {
	t.Helper()
	if !raceEnabled {
		return os.Args[0]
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to build the children without -race: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ws.test")
	out, err := exec.Command(goBin, "test", "-c", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go test -c: %v\n%s", err, out)
	}
	return bin
}

// vmHWM is a process's peak resident set, from /proc.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// memTapLoad runs the load through a memtap child with the given budget
// and returns the child's peak RSS and its report.
func memTapLoad(t *testing.T, budget int64) (int64, memTapReport) {
	t.Helper()
	bin := childBinary(t)
	load := startRole(t, bin, "memload")
	up, ok := strings.CutPrefix(load.line(t), "UPSTREAM ")
	if !ok {
		t.Fatal("memload child did not start")
	}
	relay := startRole(t, bin, "memtap", "E2ATAP_WS_BENCH_UPSTREAM="+up,
		"E2ATAP_WS_BUDGET="+strconv.FormatInt(budget, 10), "GOMEMLIMIT=256MiB")
	fmt.Fprintln(load.stdin, relay.line(t))
	var errs []string
	if err := json.Unmarshal([]byte(load.line(t)), &errs); err != nil {
		t.Fatal(err)
	}
	for _, e := range errs {
		t.Error(e)
	}
	// Every idle connection's partial message has been written: give the
	// relay a moment to take the last frames in, then read its peak.
	time.Sleep(500 * time.Millisecond)
	rss := vmHWM(t, relay.cmd.Process.Pid)
	load.stdin.Close()
	if err := load.cmd.Wait(); err != nil {
		t.Errorf("memload child: %v", err)
	}
	relay.stdin.Close()
	var rep memTapReport
	if err := json.Unmarshal([]byte(relay.line(t)), &rep); err != nil {
		t.Fatal(err)
	}
	if err := relay.cmd.Wait(); err != nil {
		t.Errorf("memtap child: %v", err)
	}
	return rss, rep
}

func TestMemoryBudgetBoundsTheProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("moves 1.2 GB through a child process: not with -short")
	}
	budget := int64(64 << 20)
	if s := os.Getenv("E2ATAP_WS_MEM_BUDGET"); s != "" { // 0: no budget, to see the fault
		budget, _ = strconv.ParseInt(s, 10, 64)
	}
	const bound = 300 << 20 // GOMEMLIMIT (256 MiB) plus slack for what is not heap
	rss, rep := memTapLoad(t, budget)
	t.Logf("budget %d MiB, GOMEMLIMIT=256MiB: peak RSS %d MiB, peak heap in use %d MiB, %d copies judged, drops %v",
		budget>>20, rss>>20, rep.PeakHeap>>20, rep.Mirrored, rep.Drops)
	if rss > bound {
		t.Errorf("peak RSS %d MiB, over the bound of %d MiB", rss>>20, bound>>20)
	}
	if rep.Drops["budget"] == 0 {
		t.Error("no copy was dropped for the budget")
	}
	if rep.BudgetUsed != 0 {
		t.Errorf("%d bytes of the budget still charged after the run: a charge leaked", rep.BudgetUsed)
	}
}
