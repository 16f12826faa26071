package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// requestServer is a WebSocket AgentServer that hands each E2A request it
// reads (a message with a request_id) to serve, on the connection's
// goroutine; serve returns false to end the connection. It returns the
// server's ws:// URL.
func requestServer(t *testing.T, serve func(c *websocket.Conn, id string, msg []byte) bool) string {
	t.Helper()
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			_, b, err := c.ReadMessage()
			if err != nil {
				return
			}
			var req struct {
				RequestID string `json:"request_id"`
			}
			if json.Unmarshal(b, &req) != nil || req.RequestID == "" {
				continue
			}
			if !serve(c, req.RequestID, b) {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// streamUpstream is an AgentServer that answers each E2A request with the
// first chunk of its stream and no final (a long answer under way); a
// request whose params carry "hang_up" gets its chunk and then the
// AgentServer closes the connection (1000) with the stream still open.
func streamUpstream(t *testing.T) string {
	t.Helper()
	return requestServer(t, func(c *websocket.Conn, id string, msg []byte) bool {
		chunk := e2aStream(id, 0, 1, false, false)[0]
		if c.WriteMessage(websocket.TextMessage, []byte(chunk)) != nil {
			return false
		}
		var req struct {
			Params map[string]any `json:"params"`
		}
		if json.Unmarshal(msg, &req) == nil && req.Params["hang_up"] == true {
			c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "bye"), time.Now().Add(5*time.Second))
			return false
		}
		return true
	})
}

// openStream sends the request of stream id and waits for its first chunk.
func openStream(t *testing.T, c *websocket.Conn, id string, hangUp bool) {
	t.Helper()
	req := fmt.Sprintf(`{"protocol_version":"1.0","request_id":%q,"session_id":"sess","method":"chat.send","params":{"query":"hi","hang_up":%t},"timestamp":"2026-03-29T12:00:00Z","identity_origin":"user","is_stream":true}`, id, hangUp)
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := c.WriteMessage(websocket.TextMessage, []byte(req)); err != nil {
		t.Fatalf("request %s: %v", id, err)
	}
	if _, b, err := c.ReadMessage(); err != nil || !strings.Contains(string(b), `"request_id":"`+id+`"`) {
		t.Fatalf("first chunk of %s: %q, %v", id, b, err)
	}
}

// closedWith reads c until it closes and returns the close code its peer sent.
func closedWith(t *testing.T, c *websocket.Conn) int {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code
		}
		if err != nil {
			t.Fatalf("connection ended without a close frame: %v", err)
		}
	}
}

// TestTapCutStreamsAreNoMissingFinal: the real binary relays between a
// Gateway and an AgentServer while E2A streams are open. Where a peer ends
// the connection (the AgentServer hangs up), the open stream is
// e2a.missing_final, as RULES.md says. Where e2atap ends it itself (a
// SIGHUP reload that changes the tap retires it, and its drain_timeout
// ends the drain of its connections; SIGTERM drains), both
// peers get 1001 from e2atap and the streams it cut are no finding: their
// peers broke nothing (before, every rollout of the sidecar reported a
// missing_final for each stream open on a ws connection, whatever
// streams.finish_on_shutdown said). Also where Gateways never answer the
// close and the drain ends at CloseTimeout with their sockets closed (the
// loss was then dropped at random, 1 in 4 connections a missing_final).
func TestTapCutStreamsAreNoMissingFinal(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	dir := t.TempDir()
	upstream := streamUpstream(t)
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	findings := filepath.Join(dir, "findings.jsonl")
	records := filepath.Join(dir, "records.jsonl")
	config := func(upstream string) []byte {
		return []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {join_window: 0s}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q, drain_timeout: 1s}
outputs:
  findings: {path: %q}
  log: {path: %q}
`, listen, wsListen, upstream, findings, records))
	}
	os.WriteFile(cfgPath, config(upstream), 0o644)
	cmd, stderr := startProcessArgs(t, cfgPath, "--reload-interval", "0")
	waitReady(t, listen)

	// The AgentServer hangs up on an open stream: a finding.
	c0 := dialWS(t, wsListen)
	openStream(t, c0, "peer-cut", true)
	if code := closedWith(t, c0); code != 1000 {
		t.Fatalf("the AgentServer's close reached the Gateway as %d, want 1000", code)
	}
	c0.Close() // as a client does once the server has closed
	pollUntil(t, "the missing_final of the stream the AgentServer cut", 20*time.Second, func() bool {
		b, _ := os.ReadFile(findings)
		return strings.Contains(string(b), `"stream":"peer-cut"`)
	})

	// A reload that changes the tap (its upstream's path) retires it:
	// once its drain_timeout is up, e2atap closes the connection.
	c1 := dialWS(t, wsListen)
	openStream(t, c1, "reload-cut", false)
	os.WriteFile(cfgPath, config(upstream+"/v2"), 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	if code := closedWith(t, c1); code != 1001 {
		t.Fatalf("at the reload the Gateway got close %d, want 1001 (going away)", code)
	}
	c1.Close()
	pollUntil(t, "the reload to be logged", 20*time.Second, func() bool {
		return strings.Contains(stderr.String(), `"msg":"configuration reloaded"`)
	})

	// SIGTERM: e2atap drains and closes the connections. Gateways that
	// never answer its close hold the drain to its end (CloseTimeout, 5 s),
	// when it closes their sockets.
	c2 := dialWS(t, wsListen)
	openStream(t, c2, "term-cut", false)
	for i := range 16 {
		openStream(t, dialWS(t, wsListen), fmt.Sprintf("term-cut-silent-%d", i), false)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if code := closedWith(t, c2); code != 1001 {
		t.Fatalf("at SIGTERM the Gateway got close %d, want 1001 (going away)", code)
	}
	c2.Close()
	awaitExit(t, cmd)

	var got []string
	for _, f := range readFindings(t, findings) {
		got = append(got, f.Rule+" "+f.Stream)
	}
	if want := []string{"e2a.missing_final peer-cut"}; !slices.Equal(got, want) {
		t.Fatalf("findings %q, want %q: a stream e2atap cut is no violation of its peers", got, want)
	}
	// The record log says where the reload and the stop cut their
	// connections (a line with no record for each: no record of the
	// connection followed the loss), so that its replay judges none of
	// those streams either: it gives the live findings. Before, the line
	// was written only for a connection whose open stream was in the
	// partition of the stream tables a shard had used last, and the
	// replay reported most of the term-cut streams as missing_final.
	_, out, _ := runCLI(t, "validate", "--output", "json", "--fail-on", "never", records)
	var replayed []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var f struct{ Rule, Stream string }
		if json.Unmarshal([]byte(l), &f) == nil {
			replayed = append(replayed, f.Rule+" "+f.Stream)
		}
	}
	if !slices.Equal(replayed, got) {
		t.Errorf("validate of the record log: %q, want the live findings %q:\n%s", replayed, got, out)
	}
}

// TestTextWithByteOrderMarkIsE2ADecode: a producer that puts a UTF-8 byte
// order mark before its JSON (as some runtimes write text) sends a text
// message whose first byte is 0xEF, the EventMesh frame magic. The
// reference's peers parse a text message with json.loads, which rejects
// the mark ("Unexpected UTF-8 BOM"): the finding is e2a.decode, one per
// direction through the echo upstream, on one engine shard or two; never
// frame.decode (which the engine reported, sniffing the first byte of a
// message the tap knew was text).
//
// A log file is another matter: a mark that opens it is skipped, and a
// producer that writes one before every record (.NET and PowerShell
// loggers do) gets the same for each line, from the logdir tap and from
// validate and decode of the file: the one planted seq_gap, where each
// line after the first was a frame.decode and the stream a missing_final.
func TestTextWithByteOrderMarkIsE2ADecode(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	var marked []string
	for _, l := range e2aStream("bom-log", 0, 4, true, true, 2) {
		marked = append(marked, "\ufeff"+l)
	}
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			dir := t.TempDir()
			logs := filepath.Join(dir, "logs")
			os.Mkdir(logs, 0o755)
			upstream, _ := echoUpstream(t)
			listen, wsListen := freeAddr(t), freeAddr(t)
			cfgPath := filepath.Join(dir, "e2atap.yaml")
			findings := filepath.Join(dir, "findings.jsonl")
			os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
streams: {shards: %d}
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: %q}
  - {name: agent-logs, type: logdir, paths: [%q], positions: %q}
outputs:
  findings: {path: %q}
`, listen, shards, wsListen, upstream, filepath.Join(logs, "*.jsonl"), filepath.Join(dir, "pos.json"), findings)), 0o644)
			cmd := startProcess(t, cfgPath)
			c := dialWS(t, wsListen)
			roundTrip(t, c, "\ufeff"+e2aStream("bom-1", 0, 0, true, false)[0])
			appendLines(t, filepath.Join(logs, "agent.jsonl"), marked)
			pollUntil(t, "a finding per direction and the log's", 20*time.Second, func() bool {
				b, _ := os.ReadFile(findings)
				return strings.Count(string(b), "\n") >= 3
			})
			c.Close()
			stopProcess(t, cmd)
			var got []string
			for _, f := range readFindings(t, findings) {
				got = append(got, f.Rule+" "+f.Stream)
			}
			slices.Sort(got)
			if want := []string{"e2a.decode ", "e2a.decode ", "e2a.seq_gap bom-log"}; !slices.Equal(got, want) {
				t.Fatalf("findings %q, want %q", got, want)
			}
			// Offline, the same lines.
			_, out, _ := runCLI(t, "validate", "--output", "json", "--shards", strconv.Itoa(shards), filepath.Join(logs, "agent.jsonl"))
			if n := strings.Count(out, "\n"); n != 1 || !strings.Contains(out, `"e2a.seq_gap"`) {
				t.Fatalf("validate of the log: %d findings, want the seq_gap:\n%s", n, out)
			}
			if shards == 1 {
				_, out, _ := runCLI(t, "decode", filepath.Join(logs, "agent.jsonl"))
				if n := strings.Count(out, `"class":"`); n != len(marked) || strings.Contains(out, `"error"`) {
					t.Fatalf("decode of the log: %d records of %d:\n%s", n, len(marked), out)
				}
			}
		})
	}
}

// TestHungAgentServerIsDown: the real binary in front of an AgentServer
// that accepts connections and answers no handshake (hung: its kernel
// still accepts). The Gateway gets 504 after handshake_timeout, and
// e2atap_tap_upstream_up stays 0: before, the health probe's TCP connect
// ended the outage at once, and the metric said 1 while every Gateway's
// handshake timed out.
func TestHungAgentServerIsDown(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test")
	}
	t.Parallel() // waits more than it computes: main_test.go
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	defer func() {
		for {
			select {
			case c := <-accepted:
				c.Close()
			default:
				return
			}
		}
	}()
	dir := t.TempDir()
	listen, wsListen := freeAddr(t), freeAddr(t)
	cfgPath := filepath.Join(dir, "e2atap.yaml")
	os.WriteFile(cfgPath, []byte(fmt.Sprintf(`profile: jiuwenswarm
listen: %s
taps:
  - {name: agent-ws, type: ws, listen: %s, upstream: "ws://%s", handshake_timeout: 500ms}
`, listen, wsListen, ln.Addr())), 0o644)
	cmd := startProcess(t, cfgPath)
	waitReady(t, listen)
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	if _, resp, err := d.Dial("ws://"+wsListen+"/", nil); err == nil || resp == nil || resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("dial: %v, response %v; want 504", err, resp)
	}
	time.Sleep(1500 * time.Millisecond) // probes from 250 ms on
	up := strings.Contains(scrape(t, listen), `e2atap_tap_upstream_up{tap="agent-ws"} 1`)
	stopProcess(t, cmd)
	if up {
		t.Fatal("e2atap_tap_upstream_up 1 for an AgentServer that answers no handshake")
	}
}
