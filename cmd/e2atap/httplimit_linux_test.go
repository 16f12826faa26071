package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
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
// (the rest wait in the listen backlog), and a Gateway is relayed.
func TestHTTPClientsCannotTakeTheRelaysDescriptors(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
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
	for range clients {
		c, err := net.Dial("tcp", listen)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
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
	if answered.Load() > maxHTTPConns {
		t.Errorf("%d connections served at once, want at most %d", answered.Load(), maxHTTPConns)
	}
	stopProcess(t, cmd) // with the clients still there: Shutdown ends an Accept waiting for a slot
}
