package ws

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// loadResult is what a burst of concurrent connections got.
type loadResult struct {
	ok       int
	failures map[string]int // by cause: "close 1014", "dial: …"
	slowest  time.Duration  // longest successful opening handshake
}

func (r loadResult) failed() int {
	n := 0
	for _, c := range r.failures {
		n += c
	}
	return n
}

func (r loadResult) String() string {
	causes := make([]string, 0, len(r.failures))
	for c, n := range r.failures {
		causes = append(causes, fmt.Sprintf("%d × %s", n, c))
	}
	sort.Strings(causes)
	return fmt.Sprintf("%d ok, %d failed [%s], slowest handshake %v", r.ok, r.failed(), strings.Join(causes, "; "), r.slowest.Round(time.Millisecond))
}

// connectBurst opens n WebSocket connections to url at once, as n Gateway
// clients would. Each waits for the server's first message (the
// reference's connection.ack), sends one message and reads its echo, then
// holds the connection until every other one has got that far (so that all
// n are open together), then closes with 1000. A client gives up after
// clientTimeout, as the reference Gateway's websockets client does (its
// open_timeout is 10 s).
func connectBurst(url string, n int, clientTimeout time.Duration) loadResult {
	var (
		mu      sync.Mutex
		res     = loadResult{failures: map[string]int{}}
		wg      sync.WaitGroup
		arrived sync.WaitGroup
		slowest atomic.Int64
	)
	fail := func(cause string) {
		mu.Lock()
		res.failures[cause]++
		mu.Unlock()
	}
	release := make(chan struct{})
	arrived.Add(n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done := sync.OnceFunc(arrived.Done)
			defer done()
			ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
			defer cancel()
			start := time.Now()
			c, _, err := websocket.Dial(ctx, url, nil)
			if err != nil {
				cause := "dial error"
				if ctx.Err() != nil {
					cause = "client timeout"
				} else if s := err.Error(); strings.Contains(s, "expected handshake response status code 101") {
					cause = "non-101 answer" + s[strings.LastIndex(s, " "):]
				}
				fail(cause)
				return
			}
			defer c.CloseNow()
			if d := int64(time.Since(start)); d > slowest.Load() {
				slowest.Store(d) // racy max: good enough for a figure
			}
			msg := fmt.Appendf(nil, `{"request_id":"load-%d","method":"chat.send"}`, i)
			_, _, err = c.Read(ctx) // connection.ack
			if err == nil {
				err = c.Write(ctx, websocket.MessageText, msg)
			}
			if err == nil {
				_, _, err = c.Read(ctx)
			}
			if err != nil {
				switch code := websocket.CloseStatus(err); {
				case code != -1:
					fail(fmt.Sprintf("close %d", code))
				case ctx.Err() != nil:
					fail("client timeout")
				default:
					fail("read/write error")
				}
				return
			}
			mu.Lock()
			res.ok++
			mu.Unlock()
			done()
			<-release
			_ = c.Close(websocket.StatusNormalClosure, "")
		}()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	res.slowest = time.Duration(slowest.Load())
	return res
}

// The figure of issue 8 (a): a loaded upstream that accepts 1000 concurrent
// connections directly must accept them through the tap too, with the
// tap's default timeouts.
func TestThousandConcurrentConnectionsPython(t *testing.T) {
	if testing.Short() {
		t.Skip("1000 connections: not with -short")
	}
	py := pythonWebsockets(t)
	up := startPythonServer(t, py, "5.5") // 5.5 ms of work per handshake: a burst of 1000 takes ~6 s
	const n = 1000
	// Clients wait long enough that only a timeout of the tap's own can
	// fail them; the tap runs as deployed, in a process of its own, with
	// its defaults (and without the race detector, whose cost is not the
	// tap's).
	direct := connectBurst(up+"/", n, 30*time.Second)
	t.Logf("direct:       %v", direct)
	relay := startRole(t, childBinary(t), "rawtap", "E2ATAP_WS_BENCH_UPSTREAM="+up)
	via := connectBurst(relay.line(t), n, 30*time.Second)
	t.Logf("through tap:  %v", via)
	if via.failed() > direct.failed() {
		t.Errorf("through the tap %d of %d connections failed, directly %d", via.failed(), n, direct.failed())
	}
}
