package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// serveLimited serves h on a limitListener of n slots, as run does (under
// TLS: the server sees *tls.Conn), with a header timeout long enough that
// only the listener can free a slot. It returns the base URL and a client.
func serveLimited(t *testing.T, n int, useTLS bool, h http.Handler) (string, *http.Client) {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	l := newLimitListener(ts.Listener, n, slog.New(slog.DiscardHandler))
	ts.Listener = l
	ts.Config.ReadHeaderTimeout = time.Minute
	ts.Config.ConnState = l.ConnState
	if useTLS {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	hc := ts.Client()
	hc.Timeout = 20 * time.Second
	return ts.URL, hc
}

// TestHTTPSlowlorisCannotTakeTheProbes: clients that open connections and
// send a head a byte at a time (slowloris) took every slot of the metrics
// port for ReadHeaderTimeout each: /metrics and /healthz, queued behind
// them, were not answered (with 300 such clients on the binary: no answer
// to curl -m 10 at all). Past the bound, the connection idle longest is
// now closed for a new one, and a probe is answered.
func TestHTTPSlowlorisCannotTakeTheProbes(t *testing.T) {
	url, hc := serveLimited(t, 4, false, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	for range 12 {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: e2atap\r\nX-a: "))
	}
	hc.Timeout = 5 * time.Second
	resp, err := hc.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("/healthz behind 12 slowloris connections on 4 slots: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %s", resp.Status)
	}
}

// TestHTTPSlowlorisBacklogCannotHoldTheProbes: slowloris clients that
// reconnect as soon as they are closed keep the listen backlog full, and a
// probe waits in it behind them. The connection idle longest could be
// closed only httpShedMinWait (250 ms) after its accept, so the backlog
// moved at slots/250 ms: with the binary's 64 slots and 1000 such clients
// a probe waited some 4 s, and 2 probes in 6 (1 s timeout) got no answer.
// A connection whose read waits for its client, with no request in
// progress, is now closed after httpShedReadWait. Here 8 slots and 300
// clients: a probe waited at least 9 s before (292 ahead × 250 ms / 8, a
// floor: a loaded machine is only slower) and about 0.75 s now (292 ×
// 20 ms / 8; up to 3 s under -race at load 14); each of 6 probes must be
// answered within 8 s. (TestHTTPShedRules checks the rules themselves,
// without timing.)
func TestHTTPSlowlorisBacklogCannotHoldTheProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("300 connections")
	}
	const slots, clients, probes = 8, 300, 6
	url, hc := serveLimited(t, slots, false, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	addr := strings.TrimPrefix(url, "http://")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened sync.WaitGroup // each client's first connection
	opened.Add(clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			for {
				select {
				case <-stop:
					if first {
						opened.Done()
					}
					return
				default:
				}
				c, err := net.Dial("tcp", addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				c.Write([]byte("GET /metrics HTTP/1.1\r\nHost: e2atap\r\nX-a: "))
				if first {
					first = false
					opened.Done()
				}
				// Closed by the listener (a read returns) or at the end.
				done := make(chan struct{})
				go func() {
					io.Copy(io.Discard, c)
					close(done)
				}()
				select {
				case <-done:
				case <-stop:
				}
				c.Close()
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	awaitOpened(t, &opened, clients)
	lat := probeHealthz(t, hc, url, probes, 8*time.Second, fmt.Sprintf("%d reconnecting slowloris clients on %d slots", clients, slots), true)
	t.Logf("%d probes answered behind %d slowloris clients on %d slots, in %v", probes, clients, slots, lat)
}

// TestHTTPClientsNotReadingCannotTakeTheProbes: clients that send many
// requests at once (pipelined) and read none of the answers keep their
// connections in a handler, blocked in a write once the socket buffers
// are full: closed for none, they held every slot for httpWriteTimeout
// (30 s; here none is set: for ever), and with 80 of them on the binary
// no /healthz probe in 8 (1 s timeout) was answered. A response write
// that waits httpShedWriteWait for its client now lets the connection be
// closed for a new one. Here 8 slots and 40 such clients that reconnect
// and do it again: before, no probe was ever answered; now each of 6 is
// within 15 s (0.25 s expected, 32 ahead × 50 ms / 8; the first took up
// to 2 s under -race on a machine at load 14).
func TestHTTPClientsNotReadingCannotTakeTheProbes(t *testing.T) {
	const slots, clients, probes = 8, 40, 6
	body := strings.Repeat("metric 1\n", 32<<10) // 288 KiB: more than the socket buffers take
	url, hc := serveLimited(t, slots, false, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, body)
	}))
	addr := strings.TrimPrefix(url, "http://")
	pipelined := []byte(strings.Repeat("GET /metrics HTTP/1.1\r\nHost: e2atap\r\n\r\n", 50))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened sync.WaitGroup
	opened.Add(clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := true
			defer func() {
				if first {
					opened.Done()
				}
			}()
			for {
				select {
				case <-stop:
					return
				default:
				}
				d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
					return rc.Control(func(fd uintptr) { setRcvBuf(fd, 4096) })
				}}
				c, err := d.Dial("tcp", addr)
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				c.Write(pipelined)
				if first {
					first = false
					opened.Done()
				}
				// Reads nothing; closed by the listener (a write fails)
				// or at the end.
				c.SetReadDeadline(time.Now())
				for {
					select {
					case <-stop:
						c.Close()
						return
					case <-time.After(20 * time.Millisecond):
					}
					var b [1]byte
					c.SetReadDeadline(time.Now())
					if _, err := c.Read(b[:]); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
						break // closed by the listener: again
					}
					// (a byte read leaves the window shut all the same)
				}
				c.Close()
			}
		}()
	}
	defer func() {
		close(stop)
		wg.Wait()
	}()
	awaitOpened(t, &opened, clients)
	lat := probeHealthz(t, hc, url, probes, 15*time.Second, fmt.Sprintf("%d clients not reading on %d slots", clients, slots), false)
	t.Logf("%d probes answered behind %d clients not reading on %d slots, in %v", probes, clients, slots, lat)
}

// TestHTTPSlowBodyCannotTakeTheProbes: clients that send a request with a
// declared body a byte every few seconds: net/http read the rest of the
// body before it answered, the connections stayed in a request (never
// closed for a new one), and /healthz behind them got no answer (300 of
// them on the binary: curl -m 10 /metrics timed out every time). A
// request with a body is now answered at once, its connection closed.
func TestHTTPSlowBodyCannotTakeTheProbes(t *testing.T) {
	url, hc := serveLimited(t, 4, false, closeWithBody(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	})))
	for range 12 {
		c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write([]byte("POST /metrics HTTP/1.1\r\nHost: e2atap\r\nContent-Length: 1000\r\n\r\nx"))
	}
	hc.Timeout = 5 * time.Second
	resp, err := hc.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("/healthz behind 12 slow bodies on 4 slots: %v", err)
	}
	resp.Body.Close()
}

// TestHTTPRequestsInProgressNotClosed: a full listener closes no
// connection whose request is in a handler (a scrape, an /observe
// stream), under TLS too: the new client waits for a slot.
func TestHTTPRequestsInProgressNotClosed(t *testing.T) {
	for _, useTLS := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[useTLS], func(t *testing.T) {
			release := make(chan struct{})
			var entered sync.WaitGroup
			entered.Add(4)
			url, hc := serveLimited(t, 4, useTLS, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hold" {
					entered.Done()
					<-release
				}
				io.WriteString(w, "ok\n")
			}))
			errs := make(chan error, 5)
			get := func(path string) {
				resp, err := hc.Get(url + path)
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				errs <- err
			}
			for range 4 {
				go get("/hold")
			}
			entered.Wait()
			go get("/healthz")
			// Not a synchronisation: the window in which a listener that
			// wrongly closed requests in progress would (250 ms after
			// their accept).
			time.Sleep(3 * httpShedMinWait)
			close(release)
			for range 5 {
				if err := <-errs; err != nil {
					t.Errorf("a request: %v", err)
				}
			}
		})
	}
}

// blockingCollector is a metrics collector whose Collect waits for
// release: a scrape in progress, held.
type blockingCollector struct {
	desc    *prometheus.Desc
	entered chan struct{}
	release chan struct{}
}

func (c *blockingCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *blockingCollector) Collect(ch chan<- prometheus.Metric) {
	select {
	case c.entered <- struct{}{}:
	case <-c.release: // a gather the test does not wait for
	}
	<-c.release
	ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1)
}

// TestMetricsScrapesInFlightBounded: at most maxScrapesInFlight /metrics
// requests are gathered at once, the next gets 503 at once, and /healthz
// is answered meanwhile. Without the bound, 80 clients that sent a few
// hundred /metrics requests each and read no answer had 64 gathers run
// at once, again and again, on every core of the machine: no /healthz
// probe in 8 (1 s timeout) was answered on the binary.
func TestMetricsScrapesInFlightBounded(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Listen = freeAddr(t)
	cfg.Taps = []TapConfig{{Name: "agent-logs", Type: "logdir", Paths: []string{filepath.Join(dir, "*.jsonl")},
		Positions: filepath.Join(dir, "pos.json")}}
	sc, _ := startSidecar(t, cfg)
	bc := &blockingCollector{desc: prometheus.NewDesc("e2atap_test_held", "A scrape held.", nil, nil),
		entered: make(chan struct{}), release: make(chan struct{})}
	sc.reg.MustRegister(bc)
	waitReady(t, cfg.Listen)
	hc := &http.Client{Timeout: 20 * time.Second}
	results := make(chan int, maxScrapesInFlight)
	for range maxScrapesInFlight {
		go func() {
			resp, err := hc.Get("http://" + cfg.Listen + "/metrics")
			if err != nil {
				results <- 0
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			results <- resp.StatusCode
		}()
	}
	for range maxScrapesInFlight {
		select {
		case <-bc.entered:
		case <-time.After(20 * time.Second):
			t.Fatal("the held scrapes did not start")
		}
	}
	resp, err := hc.Get("http://" + cfg.Listen + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("scrape %d while %d are gathered: %s, want 503", maxScrapesInFlight+1, maxScrapesInFlight, resp.Status)
	}
	resp, err = hc.Get("http://" + cfg.Listen + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz while the scrapes are held: %s", resp.Status)
	}
	close(bc.release)
	for range maxScrapesInFlight {
		if code := <-results; code != http.StatusOK {
			t.Errorf("a held scrape ended with %d, want 200", code)
		}
	}
}

// TestHTTPShedRules: which connection a full listener closes for a new
// one, at a given time (no timing): one idle for httpShedMinWait; one
// accepted just now whose read has waited httpShedReadWait for its client
// (not under TLS, whose handshake reads wait for round trips); one in a
// handler whose response write has waited httpShedWriteWait; never one in
// a handler that is not waiting for its client, and the wait until one
// may be closed otherwise.
func TestHTTPShedRules(t *testing.T) {
	now := time.Now()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	type conn struct {
		busy, tls          bool
		since, read, write time.Duration // ago; 0: not reading/writing
	}
	for _, c := range []struct {
		name   string
		conns  []conn
		victim int // index closed, -1: none
		wait   time.Duration
	}{
		{"idle long enough", []conn{{since: httpShedMinWait}}, 0, 0},
		{"new, not reading yet", []conn{{since: ms(30)}}, -1, httpShedMinWait - ms(30)},
		{"new, read waiting", []conn{{since: ms(30), read: httpShedReadWait + ms(5)}}, 0, 0},
		{"new, read waiting briefly", []conn{{since: ms(30), read: ms(5)}}, -1, httpShedReadWait - ms(5)},
		{"new, TLS read waiting", []conn{{since: ms(30), read: httpShedReadWait + ms(5), tls: true}}, -1, httpShedMinWait - ms(30)},
		{"in a handler", []conn{{busy: true, since: time.Second}}, -1, httpShedWriteWait},
		{"in a handler, write waiting", []conn{{busy: true, since: ms(10), write: httpShedWriteWait + ms(5)}}, 0, 0},
		{"the first that may go", []conn{{busy: true}, {since: ms(1)}, {since: ms(30), read: httpShedReadWait * 2}}, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLimitListener(nil, 4, slog.New(slog.DiscardHandler))
			var lcs []*limitConn
			for _, cc := range c.conns {
				lc := &limitConn{busy: cc.busy, tls: cc.tls, since: now.Add(-cc.since)}
				if cc.read > 0 {
					lc.reading.Store(now.Add(-cc.read).UnixNano())
				}
				if cc.write > 0 {
					lc.writing.Store(now.Add(-cc.write).UnixNano())
				}
				lc.elem = l.conns.PushBack(lc)
				lcs = append(lcs, lc)
			}
			victim, wait := l.idlest(now)
			switch {
			case c.victim < 0 && victim != nil:
				t.Errorf("closed connection %d, want none", slices.Index(lcs, victim))
			case c.victim >= 0 && victim != lcs[c.victim]:
				t.Errorf("closed connection %d, want %d", slices.Index(lcs, victim), c.victim)
			case c.victim < 0 && (wait < c.wait-time.Microsecond || wait > c.wait+time.Microsecond):
				t.Errorf("wait %v, want %v", wait, c.wait)
			}
		})
	}
}

// TestHTTPFullListenerClosesNoneForNobody: a full listener closes a
// connection only for a new one that is there. It made room before its
// accept: with every slot taken by clients whose request heads came late
// (a loaded client), it closed one of them although no other was waiting
// (20 ms after, by the read rule). Here 4 slots, 4 clients that send
// their requests 300 ms after connecting: all 4 are answered.
func TestHTTPFullListenerClosesNoneForNobody(t *testing.T) {
	url, _ := serveLimited(t, 4, false, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	addr := strings.TrimPrefix(url, "http://")
	var conns []net.Conn
	for range 4 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	// Not a synchronisation: the window in which a listener that closed
	// connections for nobody would (past httpShedMinWait).
	time.Sleep(httpShedMinWait + 50*time.Millisecond)
	for i, c := range conns {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		if _, err := c.Write([]byte("GET /healthz HTTP/1.1\r\nHost: e2atap\r\n\r\n")); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("client %d of 4 on 4 slots, no other waiting: %v (closed for nobody)", i, err)
		}
		resp.Body.Close()
	}
}

// awaitOpened waits until each of the clients has connected once (opened
// done for each), at most a minute: a hang guard.
func awaitOpened(t *testing.T, opened *sync.WaitGroup, clients int) {
	t.Helper()
	allOpen := make(chan struct{})
	go func() {
		opened.Wait()
		close(allOpen)
	}()
	select {
	case <-allOpen:
	case <-time.After(time.Minute):
		t.Fatalf("the %d clients did not all connect", clients)
	}
}

// probeHealthz sends probes GETs of /healthz one after the other, each on
// a new connection (as the kubelet's) and within timeout, and returns
// their latencies; behind says what they wait behind, in a failure.
// checkStatus: an answer other than 200 fails too.
func probeHealthz(t *testing.T, hc *http.Client, url string, probes int, timeout time.Duration, behind string, checkStatus bool) []time.Duration {
	t.Helper()
	hc.Timeout = timeout
	var lat []time.Duration
	for i := range probes {
		start := time.Now()
		resp, err := hc.Get(url + "/healthz")
		if err != nil {
			t.Fatalf("probe %d of %d behind %s: %v (answered before it: %v)", i+1, probes, behind, err, lat)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if checkStatus && resp.StatusCode != http.StatusOK {
			t.Fatalf("probe %d: %s", i+1, resp.Status)
		}
		lat = append(lat, time.Since(start).Round(time.Millisecond))
		hc.CloseIdleConnections()
	}
	return lat
}
