//go:build linux

package ws

// Out of file descriptors (the tap's own fault, not the upstream's): the
// tap runs in a process of its own with a low RLIMIT_NOFILE and a burst of
// clients larger than it can hold.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/taptest"
)

type fdTapReport struct {
	Errors     map[string]uint64
	UpstreamUp bool
	Up         bool
}

// runFDTap is the fdtap child's main: RLIMIT_NOFILE set to
// E2ATAP_WS_NOFILE, a tap with its defaults in front of
// E2ATAP_WS_BENCH_UPSTREAM logging to stderr; it prints the URL, serves
// until stdin closes, then prints an fdTapReport.
func runFDTap() {
	n, _ := strconv.ParseUint(os.Getenv("E2ATAP_WS_NOFILE"), 10, 64)
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg := DefaultConfig()
	cfg.Name, cfg.Listen, cfg.Upstream = "fd", "127.0.0.1:0", os.Getenv("E2ATAP_WS_BENCH_UPSTREAM")
	stats := new(tap.Stats)
	p, err := New(cfg, stats, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, func(context.Context, tap.Message) error { return nil }) }()
	fmt.Println("ws://" + p.Addr().String())
	buf := make([]byte, 1)
	for {
		if _, err := os.Stdin.Read(buf); err != nil {
			break
		}
	}
	rep := fdTapReport{Errors: map[string]uint64{}, UpstreamUp: stats.UpstreamUp.Load(), Up: stats.Up.Load()}
	for r := range stats.Errors {
		rep.Errors[tap.ErrorReasonNames[r]] = stats.Errors[r].Load()
	}
	cancel()
	<-done
	_ = json.NewEncoder(os.Stdout).Encode(rep)
}

// syncWriter collects a child's stderr.
type syncWriter = taptest.LockedBuffer

func TestOutOfDescriptorsIsNotAnUpstreamOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("a child process under a descriptor limit: not with -short")
	}
	up := goServer(t, nil, echo)
	logs := new(syncWriter)
	child := startRoleTo(t, childBinary(t), "fdtap", logs, "E2ATAP_WS_BENCH_UPSTREAM="+up, "E2ATAP_WS_NOFILE=32")
	url := child.line(t)

	const clients = 60
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, url, nil)
			outcome := "ok"
			switch {
			case err != nil && resp != nil:
				outcome = "HTTP " + strconv.Itoa(resp.StatusCode)
			case err != nil:
				outcome = "dial: " + err.Error()
			default:
				msg := fmt.Appendf(nil, "m%d", i)
				if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
					outcome = "write: " + err.Error()
				} else if _, b, err := c.Read(ctx); err != nil || !bytes.Equal(b, msg) {
					outcome = fmt.Sprintf("echo: %q %v", b, err)
				} else {
					time.Sleep(50 * time.Millisecond) // hold the descriptors a while
					c.Close(websocket.StatusNormalClosure, "")
				}
			}
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("%d clients against a tap with RLIMIT_NOFILE=32: %v", clients, outcomes)
	for o, n := range outcomes {
		if o != "ok" && o != "HTTP 503" {
			t.Errorf("%d clients: %s (want an upgrade, or a clean 503 before any)", n, o)
		}
	}
	// The burst is over: the tap serves as before, once the burst's
	// connections have closed and given their descriptors back (on a
	// loaded machine that takes a moment: until then a clean 503 is right).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		c, resp, err := websocket.Dial(ctx, url, nil)
		if err == nil {
			c.Close(websocket.StatusNormalClosure, "")
			break
		}
		if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || ctx.Err() != nil {
			t.Fatalf("after the burst: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	child.stdin.Close()
	var rep fdTapReport
	if err := json.Unmarshal([]byte(child.line(t)), &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("tap: %+v", rep)
	if !rep.Up || !rep.UpstreamUp {
		t.Errorf("after the burst: Up %v, UpstreamUp %v (descriptors here are not the upstream's health)", rep.Up, rep.UpstreamUp)
	}
	if rep.Errors["dial"] != 0 || rep.Errors["handshake"] != 0 {
		t.Errorf("the tap's own exhaustion counted against the upstream: %v", rep.Errors)
	}
	if outcomes["ok"] < clients && rep.Errors["other"] == 0 {
		t.Errorf("clients were refused but no error counted: %v", rep.Errors)
	}
	if err := child.cmd.Wait(); err != nil {
		t.Errorf("fdtap child: %v", err)
	}
	out := logs.String()
	t.Logf("tap's log:\n%s", out)
	if strings.Contains(out, "outage begins") {
		t.Error("the tap's own exhaustion logged as an upstream outage")
	}
	for _, msg := range []string{"accept failed", "out of file descriptors"} {
		if n := strings.Count(out, msg); n > 1 {
			t.Errorf("%q logged %d times within a minute", msg, n)
		}
	}
}
