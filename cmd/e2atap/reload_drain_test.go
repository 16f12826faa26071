package main

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// readRest reads records 1..3 of a stream of heldUpstream (its first chunk
// was read by openStream) and requires each.
func readRest(t *testing.T, c *websocket.Conn, id string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	for seq := 1; seq <= 3; seq++ {
		_, b, err := c.ReadMessage()
		if err != nil || !strings.Contains(string(b), fmt.Sprintf(`"sequence":%d`, seq)) || !strings.Contains(string(b), `"request_id":"`+id+`"`) {
			t.Fatalf("record %d of %s after the reload: %q, %v", seq, id, b, err)
		}
	}
}

// closeNormally closes c as a Gateway done with it does, and requires the
// AgentServer's 1000 back (relayed, not e2atap's 1001).
func closeNormally(t *testing.T, c *websocket.Conn) {
	t.Helper()
	c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(5*time.Second))
	if code := closedWith(t, c); code != websocket.CloseNormalClosure {
		t.Fatalf("the close went back as %d, want the AgentServer's 1000", code)
	}
	c.Close()
}

// TestReloadDrainsTheReplacedListener: with the real binary, real signals
// and real WebSocket peers, a SIGHUP reload that changes a ws tap's
// settings is a drain, not a cut. Moving the tap to another address: the
// new address accepts, the old one refuses, and the stream open on a
// connection through the old address is relayed to its final after the
// reload and judged (no finding; the connection ends with the peers'
// 1000). Changing its upstream on the same address: the new tap takes
// over the socket, so that a Gateway dialling throughout is never
// refused, and the connection open then goes on. A reload whose new
// address is taken is rejected with nothing changed: the old address
// still relays. Before, such a reload stopped the tap and closed every
// connection with 1001 (a Gateway's streams cut mid-answer at each
// configuration change).
func TestReloadDrainsTheReplacedListener(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	dir := t.TempDir()
	release := make(chan struct{})
	upstream := heldUpstream(t, release)
	listen, wsA, wsB := freeAddr(t), freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	config := func(wsListen, upstream string) []byte {
		return []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
outputs:
  findings: {path: %q}
`, listen, wsListen, upstream, findings))
	}
	os.WriteFile(cfgPath, config(wsA, upstream), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	reloads := 0
	reload := func(b []byte, want string) {
		t.Helper()
		os.WriteFile(cfgPath, b, 0o644)
		reloads++
		n := reloads
		cmd.Process.Signal(syscall.SIGHUP)
		outcome := func(log string) int {
			return strings.Count(log, `"msg":"configuration reloaded"`) + strings.Count(log, `"msg":"configuration not fully applied"`) +
				strings.Count(log, `"msg":"configuration rejected`)
		}
		pollUntil(t, fmt.Sprintf("reload %d to be logged", n), 20*time.Second, func() bool { return outcome(stderr.String()) >= n })
		log := stderr.String()
		last := log[:strings.LastIndex(log, `"trigger":"SIGHUP"`)]
		last = log[strings.LastIndexByte(last, '\n')+1:]
		if outcome(log) != n || !strings.HasPrefix(last[:strings.IndexByte(last, '\n')+1], "{") || !strings.Contains(last[:strings.IndexByte(last, '\n')], want) {
			t.Fatalf("reload %d: want %s: %s", n, want, tail([]byte(log), 3000))
		}
	}
	waitReady(t, listen)

	// 1. Another address.
	c1 := dialWS(t, wsA)
	openStream(t, c1, "moved", false)
	reload(config(wsB, upstream), `"msg":"configuration reloaded"`)
	if !strings.Contains(stderr.String(), `"msg":"tap replaced: its previous listener stopped accepting`) {
		t.Errorf("no log of the retired listener: %s", tail([]byte(stderr.String()), 2000))
	}
	pollUntil(t, "the old address to refuse", 20*time.Second, func() bool {
		nc, err := net.DialTimeout("tcp", wsA, time.Second)
		if err == nil {
			nc.Close()
		}
		return err != nil
	})
	c2 := dialWS(t, wsB)
	openStream(t, c2, "new-address", false)
	if n := sumMetric(scrapeQuiet(listen), "e2atap_tap_connections{", `tap="agent-ws"`); n != 2 {
		t.Errorf("e2atap_tap_connections %v while the old listener's connection drains, want 2 (one each)", n)
	}

	// 2. The same address, another upstream: the socket is handed over.
	var dials, refused atomic.Int64
	stopDials := make(chan struct{})
	dialsDone := make(chan struct{})
	go func() {
		defer close(dialsDone)
		for i := 0; i < 2000; i++ { // bounded: the reload is logged long before
			select {
			case <-stopDials:
				return
			default:
			}
			d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
			c, _, err := d.Dial("ws://"+wsB+"/", nil)
			dials.Add(1)
			if err != nil {
				refused.Add(1)
				continue
			}
			c.Close()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	pollUntil(t, "dials under way", 20*time.Second, func() bool { return dials.Load() >= 5 })
	reload(config(wsB, upstream+"/v2"), `"msg":"configuration reloaded"`)
	before := dials.Load()
	pollUntil(t, "dials after the handover", 20*time.Second, func() bool {
		select {
		case <-dialsDone:
			return true
		default:
			return dials.Load() >= before+5
		}
	})
	close(stopDials)
	<-dialsDone
	if dials.Load() < before+5 {
		t.Errorf("%d WebSocket dials after the reload, want 5 or more", dials.Load()-before)
	}
	if n := refused.Load(); n > 0 {
		t.Errorf("%d of %d WebSocket dials to %s failed across a reload that kept the address", n, dials.Load(), wsB)
	}
	t.Logf("dials across the same-address reload: %d, failed %d", dials.Load(), refused.Load())

	// 3. A new address that is taken: rejected, the old tap untouched.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	reload(config(taken.Addr().String(), upstream), `"msg":"configuration not fully applied"`)
	if got := metric(t, listen, "e2atap_config_last_reload_successful"); !strings.HasSuffix(got, " 0") {
		t.Errorf("after a reload whose address is taken: %s", got)
	}
	c3 := dialWS(t, wsB)
	openStream(t, c3, "after-rejected", false)

	// The streams open across the reloads end as their peers end them.
	close(release)
	for _, s := range []struct {
		c  *websocket.Conn
		id string
	}{{c1, "moved"}, {c2, "new-address"}, {c3, "after-rejected"}} {
		readRest(t, s.c, s.id)
		closeNormally(t, s.c)
	}
	pollUntil(t, "the retired listeners' connections to end", 20*time.Second, func() bool {
		return strings.Count(stderr.String(), `"msg":"the replaced tap's connections were closed by their peers"`) >= 2
	})
	pollUntil(t, "no connection left", 20*time.Second, func() bool {
		return sumMetric(scrapeQuiet(listen), "e2atap_tap_connections{", `tap="agent-ws"`) == 0
	})
	stopProcess(t, cmd)
	if fs := readFindings(t, findings); len(fs) > 0 {
		t.Errorf("findings %+v, want none: every stream was relayed whole", fs)
	}
	if strings.Contains(stderr.String(), `"msg":"drain_timeout reached`) {
		t.Errorf("a drain was cut: %s", tail([]byte(stderr.String()), 2000))
	}
}

// TestReloadHandsOverATLSListener: a ws tap served over TLS whose
// certificate files change at a reload (same address) hands its socket
// over: the connection open goes on under the old certificate, a new one
// gets the new certificate, and a Gateway dialling throughout is never
// refused.
func TestReloadHandsOverATLSListener(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	dir := t.TempDir()
	var certs [2][2]string
	for i := range certs {
		certs[i] = [2]string{filepath.Join(dir, fmt.Sprintf("tls%d.crt", i)), filepath.Join(dir, fmt.Sprintf("tls%d.key", i))}
		if _, err := tlsfiles.WriteSelfSigned(certs[i][0], certs[i][1], int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	upstream, upConns := echoUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	config := func(i int) []byte {
		return []byte(fmt.Sprintf(`listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q, tls: {cert_file: %q, key_file: %q}}
`, listen, wsListen, upstream, certs[i][0], certs[i][1]))
	}
	os.WriteFile(cfgPath, config(0), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	dial := func() (*websocket.Conn, int64, error) {
		c, _, err := d.Dial("wss://"+wsListen+"/", nil)
		if err != nil {
			return nil, 0, err
		}
		tc, ok := c.UnderlyingConn().(*tls.Conn)
		if !ok {
			c.Close()
			return nil, 0, fmt.Errorf("not TLS: %T", c.UnderlyingConn())
		}
		return c, tc.ConnectionState().PeerCertificates[0].SerialNumber.Int64(), nil
	}
	old, serial, err := dial()
	if err != nil || serial != 1 {
		t.Fatalf("first dial: serial %d, %v", serial, err)
	}
	defer old.Close()
	roundTrip(t, old, "before")

	var dials, failed atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ { // bounded: the reload is logged long before
			select {
			case <-stop:
				return
			default:
			}
			c, _, err := dial()
			dials.Add(1)
			if err != nil {
				failed.Add(1)
				continue
			}
			c.Close()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	pollUntil(t, "dials under way", 20*time.Second, func() bool { return dials.Load() >= 5 })
	os.WriteFile(cfgPath, config(1), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	pollUntil(t, "the reload", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"msg":"configuration reloaded"`)
	})
	before := dials.Load()
	pollUntil(t, "dials after the reload", 20*time.Second, func() bool {
		select {
		case <-done:
			return true
		default:
			return dials.Load() >= before+5
		}
	})
	close(stop)
	<-done
	if n := failed.Load(); n > 0 {
		t.Errorf("%d of %d wss dials failed across a reload that kept the address", n, dials.Load())
	}
	roundTrip(t, old, "after") // the old connection, on the old certificate
	c, serial, err := dial()
	if err != nil || serial != 2 {
		t.Fatalf("a dial after the reload: serial %d, %v, want the new certificate's 2", serial, err)
	}
	roundTrip(t, c, "new")
	c.Close()
	old.Close()
	if n := upConns.Load(); n < 3 {
		t.Errorf("the upstream saw %d connections", n)
	}
	stopProcess(t, cmd)
}

// TestReloadSwapsTwoTapsAddresses: two ws taps that swap their addresses
// in one reload each take the other's socket over (neither address can
// be bound anew while the other tap holds it): the reload is applied,
// both addresses accept, and the connections open on either go on.
// Before, the first new listener could not be bound and the reload was
// rejected.
func TestReloadSwapsTwoTapsAddresses(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	dir := t.TempDir()
	upA, connsA := echoUpstream(t)
	upB, connsB := echoUpstream(t)
	listen, x, y := freeAddr(t), freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	config := func(addrA, addrB string) []byte {
		return []byte(fmt.Sprintf(`listen: %s
taps:
  - {name: a, type: ws, listen: %s, upstream: %q}
  - {name: b, type: ws, listen: %s, upstream: %q}
`, listen, addrA, upA, addrB, upB))
	}
	os.WriteFile(cfgPath, config(x, y), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)
	onX, onY := dialWS(t, x), dialWS(t, y)
	roundTrip(t, onX, "x before")
	roundTrip(t, onY, "y before")
	os.WriteFile(cfgPath, config(y, x), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	pollUntil(t, "the reload's outcome", 20*time.Second, func() bool {
		log := stderr.String()
		return strings.Contains(log, `"msg":"configuration reloaded"`) || strings.Contains(log, `"msg":"configuration not fully applied"`)
	})
	if log := stderr.String(); !strings.Contains(log, `"msg":"configuration reloaded"`) {
		t.Fatalf("the swap was not applied: %s", tail([]byte(log), 2000))
	}
	roundTrip(t, onX, "x after") // tap a's old connection, to a's upstream
	roundTrip(t, onY, "y after")
	// New connections: x is tap b's now, y tap a's.
	nx, ny := dialWS(t, x), dialWS(t, y)
	roundTrip(t, nx, "new x")
	roundTrip(t, ny, "new y")
	if a, b := connsA.Load(), connsB.Load(); a != 2 || b != 2 {
		t.Errorf("upstream connections a %d, b %d, want 2 each (the old one and the swapped new one)", a, b)
	}
	for _, c := range []*websocket.Conn{onX, onY, nx, ny} {
		c.Close()
	}
	stopProcess(t, cmd)
}
