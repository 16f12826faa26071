package ws

// The benchmark contract: the tap against a direct connection, in the same
// run, 200-byte messages on loopback, echo round trips. As deployed, the
// tap is a process of its own: the echo server and every relay run in
// child processes (this test binary, re-executed in a role), the client in
// the benchmark's. Two other designs (message-level proxies built on
// gorilla/websocket and coder/websocket, each with the same bounded mirror
// queue) are measured the same way: the numbers in doc.go come from here.
//
//	go test -run '^$' -bench . -benchtime 20000x -count 3 ./tap/ws/

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	coderws "github.com/coder/websocket"
	gorillaws "github.com/gorilla/websocket"

	"github.com/e2atap/e2atap/tap"
)

const benchMsgSize = 200

// echoServer is the upstream for every design: gorilla, echoing each
// message with one reusable buffer, so the server costs little and the same.
func echoServer() (url string, stop func(), err error) {
	upg := gorillaws.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096, CheckOrigin: func(*http.Request) bool { return true }}
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := upg.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer c.Close()
		buf := make([]byte, 64<<10)
		for {
			typ, rd, err := c.NextReader()
			if err != nil {
				return
			}
			n, _ := readAll(rd, buf)
			if err := c.WriteMessage(typ, buf[:n]); err != nil {
				return
			}
		}
	}))
	return "ws://" + srv.Listener.Addr().String(), func() { srv.CloseClientConnections(); srv.Close(); wg.Wait() }, nil
}

func readAll(r interface{ Read([]byte) (int, error) }, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, nil
		}
	}
	return n, nil
}

// benchClient is a gorilla client that does echo round trips.
type benchClient struct {
	c    *gorillaws.Conn
	msg  []byte
	buf  []byte
	once sync.Once
}

func newBenchClient(b *testing.B, url string) *benchClient {
	b.Helper()
	d := gorillaws.Dialer{ReadBufferSize: 4096, WriteBufferSize: 4096}
	c, _, err := d.Dial(url, http.Header{"Origin": {"http://127.0.0.1"}})
	if err != nil {
		b.Fatalf("dial %s: %v", url, err)
	}
	msg := bytes.Repeat([]byte("x"), benchMsgSize)
	copy(msg, `{"request_id":"bench","method":"chat.send","params":{"text":"`)
	msg[len(msg)-2], msg[len(msg)-1] = '"', '}'
	bc := &benchClient{c: c, msg: msg, buf: make([]byte, 4096)}
	b.Cleanup(bc.close)
	return bc
}

// close ends the connection with a close frame; safe to call twice.
func (bc *benchClient) close() {
	bc.once.Do(func() {
		bc.c.WriteControl(gorillaws.CloseMessage, gorillaws.FormatCloseMessage(1000, ""), time.Now().Add(time.Second))
		bc.c.Close()
	})
}

func (bc *benchClient) send() error { return bc.c.WriteMessage(gorillaws.TextMessage, bc.msg) }

func (bc *benchClient) recv() error {
	_, rd, err := bc.c.NextReader()
	if err != nil {
		return err
	}
	_, err = readAll(rd, bc.buf)
	return err
}

func (bc *benchClient) roundTrip(b *testing.B) time.Duration {
	start := time.Now()
	if err := bc.send(); err != nil {
		b.Fatal(err)
	}
	if err := bc.recv(); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// benchWindow is how many messages the pipelined client keeps in flight:
// enough to keep every stage busy, bounded so that the rate measures the
// path and not how TCP buffers fill.
const benchWindow = 32

// pipelined sends n messages while reading n echoes, at most benchWindow in
// flight, and returns how long that took.
func (bc *benchClient) pipelined(b *testing.B, n int) time.Duration {
	errc := make(chan error, 1)
	window := make(chan struct{}, benchWindow)
	start := time.Now()
	go func() {
		for range n {
			window <- struct{}{}
			if err := bc.send(); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for range n {
		if err := bc.recv(); err != nil {
			b.Fatal(err)
		}
		<-window
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// designs are the ways to put a tap between client and server; each
// returns the URL to dial and how to stop it.
var designs = []struct {
	name  string
	start func(upstream string) (url string, stop func(), err error)
}{
	{"rawtap", startRawTap},
	{"gorilla", startGorillaProxy},
	{"coder", startCoderProxy},
}

// startRawTap is this package, with an engine that keeps up: the copies are
// made and queued, and the drain discards them.
func startRawTap(upstream string) (string, func(), error) {
	cfg := DefaultConfig()
	cfg.Name, cfg.Listen, cfg.Upstream = "bench", "127.0.0.1:0", upstream
	p, err := New(cfg, new(tap.Stats), slog.New(slog.DiscardHandler))
	if err != nil {
		return "", nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, func(context.Context, tap.Message) error { return nil }) }()
	return "ws://" + p.Addr().String() + "/", func() { cancel(); <-done }, nil
}

// mirrorQueue is the alternatives' bounded queue with a consumer that keeps
// up, as in the tap.
func mirrorQueue() (chan<- []byte, func()) {
	q := make(chan []byte, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range q {
		}
	}()
	return q, func() { close(q); <-done }
}

// startGorillaProxy: a message-level relay on gorilla/websocket: accept the
// client, dial the upstream, then per direction read a whole message,
// write it on, queue the copy.
func startGorillaProxy(upstream string) (string, func(), error) {
	q, stopQ := mirrorQueue()
	upg := gorillaws.Upgrader{ReadBufferSize: 32 << 10, WriteBufferSize: 32 << 10, CheckOrigin: func(*http.Request) bool { return true }}
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hdr := http.Header{}
		for _, k := range []string{"Origin", "Authorization", "Cookie"} {
			if v := r.Header.Values(k); len(v) > 0 {
				hdr[k] = v
			}
		}
		uc, _, err := gorillaws.DefaultDialer.Dial(upstream, hdr)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		cc, err := upg.Upgrade(w, r, nil)
		if err != nil {
			uc.Close()
			return
		}
		wg.Add(1)
		defer wg.Done()
		pipe := func(dst, src *gorillaws.Conn) {
			for {
				typ, m, err := src.ReadMessage()
				if err != nil {
					dst.Close()
					return
				}
				if err := dst.WriteMessage(typ, m); err != nil {
					src.Close()
					return
				}
				select {
				case q <- m:
				default:
				}
			}
		}
		done := make(chan struct{})
		go func() { pipe(uc, cc); close(done) }()
		pipe(cc, uc)
		<-done
	}))
	return "ws://" + srv.Listener.Addr().String(), func() { srv.CloseClientConnections(); srv.Close(); wg.Wait(); stopQ() }, nil
}

// startCoderProxy: the same relay on coder/websocket.
func startCoderProxy(upstream string) (string, func(), error) {
	q, stopQ := mirrorQueue()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.Background()
		uc, _, err := coderws.Dial(ctx, upstream, &coderws.DialOptions{HTTPHeader: http.Header{"Origin": r.Header.Values("Origin")}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		cc, err := coderws.Accept(w, r, &coderws.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			uc.CloseNow()
			return
		}
		wg.Add(1)
		defer wg.Done()
		pipe := func(dst, src *coderws.Conn) {
			for {
				typ, m, err := src.Read(ctx)
				if err != nil {
					dst.CloseNow()
					return
				}
				if err := dst.Write(ctx, typ, m); err != nil {
					src.CloseNow()
					return
				}
				select {
				case q <- m:
				default:
				}
			}
		}
		done := make(chan struct{})
		go func() { pipe(uc, cc); close(done) }()
		pipe(cc, uc)
		<-done
	}))
	return "ws://" + srv.Listener.Addr().String(), func() { srv.CloseClientConnections(); srv.Close(); wg.Wait(); stopQ() }, nil
}

// benchRoleEnv names the role of a re-executed test binary: "echo", or a
// design's name with the upstream URL as E2ATAP_WS_BENCH_UPSTREAM.
const benchRoleEnv = "E2ATAP_WS_BENCH_ROLE"

// runBenchRole is the child's main: it starts its role, prints the URL to
// dial on stdout and serves until stdin is closed. It reports whether a
// role was asked for.
func runBenchRole() bool {
	role := os.Getenv(benchRoleEnv)
	if role == "" {
		return false
	}
	switch role {
	case "memtap":
		runMemTap()
		return true
	case "memload":
		runMemLoad()
		return true
	case "fdtap":
		runFDTap()
		return true
	}
	start := echoServer
	if role != "echo" {
		i := slices.IndexFunc(designs, func(d struct {
			name  string
			start func(string) (string, func(), error)
		}) bool {
			return d.name == role
		})
		if i < 0 {
			fmt.Fprintf(os.Stderr, "%s=%q: no such role\n", benchRoleEnv, role)
			os.Exit(2)
		}
		start = func() (string, func(), error) { return designs[i].start(os.Getenv("E2ATAP_WS_BENCH_UPSTREAM")) }
	}
	url, stop, err := start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(url)
	_, _ = io.Copy(io.Discard, os.Stdin)
	stop()
	return true
}

// child is a role running in its own process.
type child struct {
	url   string
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// startChild re-executes the test binary in role, with upstream for a
// design, and waits for the URL it serves. The child ends with the
// benchmark.
func startChild(b *testing.B, role, upstream string) *child {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchRoleEnv+"="+role, "E2ATAP_WS_BENCH_UPSTREAM="+upstream)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := &child{cmd: cmd, stdin: stdin}
	b.Cleanup(func() { c.stop(b) })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatalf("%s child: %v", role, err)
	}
	c.url = strings.TrimSpace(line)
	return c
}

// stop ends the child and returns the CPU time it used; safe to call twice.
func (c *child) stop(b *testing.B) time.Duration {
	if c.cmd.ProcessState == nil {
		c.stdin.Close()
		if err := c.cmd.Wait(); err != nil {
			b.Errorf("child: %v", err)
		}
	}
	return c.cmd.ProcessState.UserTime() + c.cmd.ProcessState.SystemTime()
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := min(int(float64(len(s))*p), len(s)-1)
	return float64(s[i].Nanoseconds()) / 1e3
}

// BenchmarkEchoLatency alternates one direct round trip and one through the
// design, so that both see the same machine load; it reports both and the
// difference at p50 and p99 (µs).
func BenchmarkEchoLatency(b *testing.B) {
	for _, d := range designs {
		b.Run(d.name, func(b *testing.B) {
			upstream := startChild(b, "echo", "").url
			direct := newBenchClient(b, upstream)
			via := newBenchClient(b, startChild(b, d.name, upstream).url)
			for range 200 { // warm up both paths
				direct.roundTrip(b)
				via.roundTrip(b)
			}
			dd := make([]time.Duration, 0, b.N)
			vd := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				dd = append(dd, direct.roundTrip(b))
				vd = append(vd, via.roundTrip(b))
			}
			b.StopTimer()
			b.ReportMetric(percentile(dd, 0.50), "direct-p50-µs")
			b.ReportMetric(percentile(dd, 0.99), "direct-p99-µs")
			b.ReportMetric(percentile(vd, 0.50), "p50-µs")
			b.ReportMetric(percentile(vd, 0.99), "p99-µs")
			b.ReportMetric(percentile(vd, 0.50)-percentile(dd, 0.50), "added-p50-µs")
			b.ReportMetric(percentile(vd, 0.99)-percentile(dd, 0.99), "added-p99-µs")
		})
	}
}

// BenchmarkEchoThroughput pipelines b.N messages (a writer and a reader on
// one connection) directly and through the design, in alternating rounds
// of 1000 so that both see the same machine load, and reports both rates
// and their ratio.
func BenchmarkEchoThroughput(b *testing.B) {
	for _, d := range designs {
		b.Run(d.name, func(b *testing.B) {
			upstream := startChild(b, "echo", "").url
			direct := newBenchClient(b, upstream)
			relay := startChild(b, d.name, upstream)
			via := newBenchClient(b, relay.url)
			direct.pipelined(b, 1000)
			via.pipelined(b, 1000)
			b.ReportAllocs()
			b.ResetTimer()
			var dt, vt time.Duration
			for done := 0; done < b.N; done += 1000 {
				n := min(1000, b.N-done)
				dt += direct.pipelined(b, n)
				vt += via.pipelined(b, n)
			}
			b.StopTimer()
			directRate := float64(b.N) / dt.Seconds()
			viaRate := float64(b.N) / vt.Seconds()
			b.ReportMetric(directRate, "direct-msgs/s")
			b.ReportMetric(viaRate, "msgs/s")
			b.ReportMetric(viaRate/directRate, "ratio")
			// The relay's CPU (user and system) per message relayed both
			// ways, warm-up included in the count.
			via.close()
			b.ReportMetric(float64(relay.stop(b).Nanoseconds())/1e3/float64(b.N+1000), "relay-cpu-µs/msg")
		})
	}
}
