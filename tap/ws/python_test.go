package ws

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/tap"
)

// pythonWebsockets finds a python3 that can import websockets (the Debian
// package python3-websockets, the reference Gateway's and AgentServer's
// library), or skips.
func pythonWebsockets(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"python3", "/usr/bin/python3"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if exec.Command(path, "-c", "import websockets").Run() == nil {
			return path
		}
	}
	if os.Getenv("E2ATAP_REQUIRE_PACKAGES") == "1" {
		t.Fatal("python3-websockets is not installed (apt-get install python3-websockets): no reference peers to test against")
	}
	t.Skip("python3-websockets is not installed (apt-get install python3-websockets): no reference peers to test against")
	return ""
}

// startPythonServer runs testdata/py_server.py (with args) and returns its
// ws:// URL.
func startPythonServer(t *testing.T, py string, args ...string) string {
	t.Helper()
	cmd := exec.Command(py, append([]string{filepath.Join("testdata", "py_server.py")}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		port, ok := strings.CutPrefix(strings.TrimSpace(s), "PORT ")
		if !ok {
			t.Fatalf("python server said %q", s)
		}
		return "ws://127.0.0.1:" + port
	case <-time.After(20 * time.Second):
		t.Fatal("python server did not start")
	}
	return ""
}

// referenceMessages are E2A-like text frames (repetitive, so compression
// with context takeover matters), binary frames and one large message.
func referenceMessages() []wsMsg {
	var ms []wsMsg
	for i := range 40 {
		ms = append(ms, wsMsg{true, fmt.Appendf(nil,
			`{"protocol_version":"1.0","request_id":"req-%d","method":"chat.send","is_stream":true,"params":{"text":%q}}`,
			i, strings.Repeat("what is the weather in Zürich? ", i%5+1))})
	}
	ms = append(ms,
		wsMsg{false, []byte{0xEF, 0x01, 0x00, 0x10, 0xFF, 0x00}},
		wsMsg{true, []byte(`{"delta":"流式输出 ✓"}`)},
		wsMsg{true, bytes.Repeat([]byte(`{"k":"v"},`), 20000)}, // 200 kB
		wsMsg{false, bytes.Repeat([]byte{0, 1, 2, 3}, 1000)},
	)
	return ms
}

func TestPythonPeersPermessageDeflate(t *testing.T) {
	py := pythonWebsockets(t)
	up := startPythonServer(t, py)
	h := startTap(t, up, nil, nil)
	msgs := referenceMessages()

	var file bytes.Buffer
	plain := 0
	for _, m := range msgs {
		plain += len(m.Data)
		if m.Text {
			fmt.Fprintf(&file, "t %s\n", m.Data)
		} else {
			fmt.Fprintf(&file, "b %s\n", hex.EncodeToString(m.Data))
		}
	}
	path := filepath.Join(t.TempDir(), "messages.txt")
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join("testdata", "py_client.py"), h.url("/"), path)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python client: %v\n%s", err, out)
	}
	var res struct {
		Extensions []string
		Echoed     int
		Ack        string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("python client output %q: %v", out, err)
	}
	if res.Echoed != len(msgs) {
		t.Errorf("python client: %d of %d echoes identical", res.Echoed, len(msgs))
	}
	if len(res.Extensions) != 1 || !strings.HasPrefix(res.Extensions[0], "permessage-deflate") {
		t.Errorf("negotiated extensions = %q, want permessage-deflate", res.Extensions)
	}
	t.Logf("python peers negotiated %q", res.Extensions)

	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	var want [][]byte
	for _, m := range msgs {
		want = append(want, m.Data)
	}
	if diff := cmp.Diff(want, h.dataOf(tap.DirUpstream), cmpBytes); diff != "" {
		t.Errorf("inflated mirror upstream (-want +got):\n%.2000s", diff)
	}
	if diff := cmp.Diff(append([][]byte{[]byte(res.Ack)}, want...), h.dataOf(tap.DirDownstream), cmpBytes); diff != "" {
		t.Errorf("inflated mirror downstream (-want +got):\n%.2000s", diff)
	}
	if wire := h.stats.Bytes[tap.DirUpstream].Load(); wire*2 > uint64(plain) {
		t.Errorf("%d bytes on the wire for %d plain: compression was not in use", wire, plain)
	}
	for r := range h.stats.Drops {
		if n := h.stats.Drops[r].Load(); n != 0 {
			t.Errorf("%d drops (%s)", n, tap.DropReasonNames[r])
		}
	}
}

// A Go client with context takeover against the Python server: two
// implementations of permessage-deflate, with the tap between them.
func TestGoClientPythonServerDeflate(t *testing.T) {
	py := pythonWebsockets(t)
	up := startPythonServer(t, py)
	h := startTap(t, up, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, h.url("/"), &websocket.DialOptions{CompressionMode: websocket.CompressionContextTakeover})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(8 << 20)
	if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("extensions %q", ext)
	}
	if _, _, err := c.Read(ctx); err != nil { // connection.ack
		t.Fatal(err)
	}
	var want [][]byte
	for _, m := range referenceMessages() {
		typ := websocket.MessageBinary
		if m.Text {
			typ = websocket.MessageText
		}
		if err := c.Write(ctx, typ, m.Data); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, m.Data) {
			t.Fatalf("echo: %d bytes, %v", len(got), err)
		}
		want = append(want, m.Data)
	}
	c.Close(websocket.StatusNormalClosure, "")
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	if diff := cmp.Diff(want, h.dataOf(tap.DirUpstream), cmpBytes); diff != "" {
		t.Errorf("mirror upstream (-want +got):\n%.2000s", diff)
	}
	if got := h.dataOf(tap.DirDownstream); len(got) != len(want)+1 || !bytes.Equal(got[len(got)-1], want[len(want)-1]) {
		t.Errorf("mirror downstream: %d messages", len(got))
	}
}
