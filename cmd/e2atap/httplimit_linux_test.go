package main

import (
	"fmt"
	"github.com/gorilla/websocket"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHTTPClientsCannotTakeTheRelaysDescriptors: under a real descriptor
// limit (RLIMIT_NOFILE 128, set with prlimit(2)), 150 clients of the
// metrics port that send a request and keep their connection (a scraper
// that leaks them) took a descriptor each until the process had none: the
// ws tap accepted no Gateway (the relay down) and net/http logged an accept
// error every few ms. The HTTP listener now holds at most maxHTTPConns
// (the rest wait in the listen backlog, and an idle one is closed for
// them), and a Gateway is relayed.
func TestHTTPClientsCannotTakeTheRelaysDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
`, listen, wsListen, upstream)), 0o644)
	cmd := startProcess(t, cfgPath)
	waitReady(t, listen)
	lim := unix.Rlimit{Cur: 128, Max: 128}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	const clients = 150
	var answered atomic.Int64
	var wg sync.WaitGroup
	var conns []net.Conn
	for range clients {
		c, err := net.Dial("tcp", listen)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
		if _, err := c.Write([]byte("GET /readyz HTTP/1.1\r\nHost: e2atap\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Served or not, within 2 s: then the clients keep their
			// connections, idle.
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			if n, _ := c.Read(make([]byte, 512)); n > 0 {
				answered.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d of %d idle clients of the metrics port served", answered.Load(), clients)
	c := dialWS(t, wsListen)
	roundTrip(t, c, "relayed while the metrics port's clients wait")
	c.Close()
	// The connections the process still holds: a read that times out
	// (one it closed reads EOF).
	var open atomic.Int64
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			if _, err := io.Copy(io.Discard, c); err != nil {
				open.Add(1)
			}
		}()
	}
	wg.Wait()
	if open.Load() > maxHTTPConns {
		t.Errorf("%d connections held at once, want at most %d", open.Load(), maxHTTPConns)
	}
	stopProcess(t, cmd) // with the clients still there: Shutdown ends an Accept waiting for a slot
}

// TestHTTPAcceptFailuresLoggedOnce: the process runs out of descriptors
// (RLIMIT_NOFILE 128 by prlimit, relayed connections held open on the ws
// tap's port) while a client of the metrics port waits. The HTTP listener's
// failed accepts are logged once when they start and once when it accepts
// again, with their count; net/http logged each retry ("http: Accept
// error: ... too many open files; retrying in 1s"), a line a second or
// faster for as long as it lasted.
func TestHTTPAcceptFailuresLoggedOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
`, listen, wsListen, upstream)), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath)
	waitReady(t, listen)
	lim := unix.Rlimit{Cur: 128, Max: 128}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	// Relayed connections (two descriptors each) until the descriptors
	// run out; the rest wait in the ws tap's backlog. (Connections that
	// send no head no longer can: TestHeadlessClientsCannotTakeTheRelaysDescriptors.)
	var held []net.Conn
	var gateways []*websocket.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
		for _, c := range gateways {
			c.Close()
		}
	}()
	d := websocket.Dialer{HandshakeTimeout: 2 * time.Second}
	for !strings.Contains(stderr.String(), "ws: accept failed") && len(gateways) < 200 {
		c, _, err := d.Dial("ws://"+wsListen+"/", nil)
		if err != nil {
			break // out of descriptors: 503, or left in the backlog
		}
		gateways = append(gateways, c)
	}
	for range 20 {
		c, err := net.Dial("tcp", wsListen)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	pollUntil(t, "the ws tap to run out of descriptors", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), "ws: accept failed")
	})
	// A scrape waits in the metrics port's backlog while its accepts fail.
	// Each on a connection of its own: http.Get's shared pool may still
	// hold waitReady's connection (kept when its body had been read to the
	// end before Close), and a scrape that reused it needed no accept (a CI
	// run failed so).
	scrape := func() chan error {
		done := make(chan error, 1)
		go func() {
			c := http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
			resp, err := c.Get("http://" + listen + "/healthz")
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		return done
	}
	first := scrape()
	pollUntil(t, "the HTTP listener's accepts to fail", 20*time.Second, func() bool {
		s := stderr.String()
		return strings.Contains(s, "Accept error") || strings.Contains(s, "the HTTP listener cannot accept")
	})
	// Linux takes the descriptor before it looks for a waiting
	// connection, so an accept with no client waiting fails too: the
	// first scrape may have been served in a moment when a descriptor was
	// free, and the failure logged was the server's next accept, with no
	// client behind it (a CI run failed so: no "accepts again" because no
	// client came). A second scrape now certainly arrives while the
	// descriptors are gone, and waits.
	second := scrape()
	time.Sleep(500 * time.Millisecond) // retries 5 ms apart, then 10, 20, ...
	for _, c := range held {
		c.Close()
	}
	for _, c := range gateways {
		c.Close()
	}
	held, gateways = nil, nil
	for i, done := range []chan error{first, second} {
		if err := <-done; err != nil {
			t.Fatalf("scrape %d, which waited: %v", i+1, err)
		}
	}
	// And one more with descriptors to spare, after which no failure is
	// left open: each run of failed accepts ends in a successful one.
	if err := <-scrape(); err != nil {
		t.Fatalf("a scrape after the descriptors came back: %v", err)
	}
	stopProcess(t, cmd)
	if n := strings.Count(stderr.String(), "Accept error"); n > 0 {
		t.Errorf("net/http logged %d accept errors, want them logged once by the listener", n)
	}
	// One line when a run of failed accepts begins and one when it ends,
	// with their count. The ws tap's own accepts, 503s and closes free a
	// descriptor now and then while the others are held, so a second run
	// may begin; what must not happen is a line a retry.
	failing, again := stderr.lines("the HTTP listener cannot accept; retrying with backoff, logged again when it accepts (its clients wait in the listen backlog)"), stderr.lines("the HTTP listener accepts again")
	if len(failing) == 0 || len(failing) != len(again) || len(failing) > 3 {
		t.Fatalf("%d lines when the accepts began failing and %d when they worked again, want as many of each, 1 to 3", len(failing), len(again))
	}
	var total float64
	for _, l := range again {
		n, _ := l["failed_accepts"].(float64)
		if n < 1 {
			t.Errorf("failed_accepts %v, want the failed accepts counted", l["failed_accepts"])
		}
		total += n
	}
	t.Logf("%d runs of failed accepts, %v failed accepts", len(again), total)
	if total < 2 {
		t.Errorf("%v failed accepts in all, want the retries counted (a scrape waited through them)", total)
	}
}

// TestHeadlessClientsCannotTakeTheRelaysDescriptors: under RLIMIT_NOFILE
// 256 (prlimit(2)), 600 connections to the ws tap that send part of a
// request head and stall (slowloris; idle TCP connections are the same)
// took every descriptor for handshake_timeout (60 s), then were passed
// through to the upstream with their partial heads, two descriptors each,
// for as long as the upstream kept them: no Gateway was relayed and
// /readyz could not be accepted. At most a quarter of the descriptors now
// wait for a head; past that the oldest waiter of 250 ms or more is
// closed, and a Gateway queued behind all 600 in the listen backlog is
// relayed, /readyz answers.
func TestHeadlessClientsCannotTakeTheRelaysDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream, _ := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
`, listen, wsListen, upstream)), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	lim := unix.Rlimit{Cur: 256, Max: 256}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_NOFILE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 600 {
		c, err := net.DialTimeout("tcp", wsListen, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET /chat HTTP/1.1\r\nHost: agent\r\n"))
		held = append(held, c)
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	c, _, err := d.Dial("ws://"+wsListen+"/", nil)
	if err != nil {
		t.Fatalf("a Gateway behind 600 stalled connections: %v", err)
	}
	roundTrip(t, c, "relayed while stalled connections wait")
	c.Close()
	hc := http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://" + listen + "/readyz")
	if err != nil {
		t.Fatalf("/readyz while stalled connections wait: %v", err)
	}
	resp.Body.Close()
	for _, c := range held {
		c.Close()
	}
	held = nil
	stopProcess(t, cmd)
	if n := len(stderr.lines("ws: too many connections without a request head: the oldest closed (logged at most once a minute)")); n != 1 {
		t.Errorf("the closing of stalled connections logged %d times, want once", n)
	}
}
