package ws

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/e2atap/e2atap/tap"
)

// Data a peer sends after its close frame (RFC 6455 5.5.1: it may not) is
// relayed as it came and not mirrored: the receiving peer does not deliver
// it (Python websockets 10.4 as the Gateway got chunks 0 and 1 of an
// AgentServer that sent its final after its close, directly and through
// the tap). Mirrored, the final made the engine count a stream succeeded
// that the Gateway never saw end (with the real binary: streams_total
// succeeded 1, no missing_final).
func TestDataAfterCloseIsNotMirrored(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	wsFrame := func(op byte, payload string, mask bool) []byte {
		b := []byte{0x80 | op, byte(len(payload))}
		if !mask {
			return append(b, payload...)
		}
		b[1] |= 0x80
		b = append(b, 1, 2, 3, 4)
		for i := range len(payload) {
			b = append(b, payload[i]^byte(1+i%4))
		}
		return b
	}
	const opText, opClose = 1, 8
	closeBody := "\x03\xe8bye" // 1000
	upRead := make(chan []byte, 1)
	go func() {
		// The tap's health check connects too: the AgentServer answers
		// the first connection that sends a request.
		var c net.Conn
		var req *http.Request
		var br *bufio.Reader
		for req == nil {
			var err error
			if c, err = ln.Accept(); err != nil {
				upRead <- nil
				return
			}
			br = bufio.NewReader(c)
			if req, err = http.ReadRequest(br); err != nil {
				c.Close()
			}
		}
		defer c.Close()
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		out := fmt.Appendf(nil, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
		out = append(out, wsFrame(opText, `{"d":0}`, false)...)
		out = append(out, wsFrame(opClose, closeBody, false)...)
		out = append(out, wsFrame(opText, `{"d":1}`, false)...)
		if _, err := c.Write(out); err != nil {
			upRead <- nil
			return
		}
		_ = c.(*net.TCPConn).CloseWrite()
		b, _ := io.ReadAll(br)
		upRead <- b
	}()
	h := startTap(t, "ws://"+ln.Addr().String(), nil, nil)

	c, err := net.Dial("tcp", h.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sent := []byte("GET / HTTP/1.1\r\nHost: agent\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
	if _, err := c.Write(sent); err != nil {
		t.Fatal(err)
	}
	var frames []byte
	frames = append(frames, wsFrame(opText, `{"u":0}`, true)...)
	frames = append(frames, wsFrame(opClose, closeBody, true)...)
	frames = append(frames, wsFrame(opText, `{"u":1}`, true)...)
	if _, err := c.Write(frames); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	// Relayed unchanged, both ways.
	if want := wsFrame(opText, `{"d":1}`, false); len(got) < len(want) || string(got[len(got)-len(want):]) != string(want) {
		t.Errorf("the Gateway got %q: not the AgentServer's bytes to its end", got)
	}
	if b := <-upRead; string(b) != string(frames) {
		t.Errorf("the AgentServer got %q, want %q", b, frames)
	}
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	str := func(bs [][]byte) (s []string) {
		for _, b := range bs {
			s = append(s, string(b))
		}
		return s
	}
	if diff := cmp.Diff([]string{`{"u":0}`}, str(h.dataOf(tap.DirUpstream))); diff != "" {
		t.Errorf("mirrored upstream (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`{"d":0}`}, str(h.dataOf(tap.DirDownstream))); diff != "" {
		t.Errorf("mirrored downstream (-want +got):\n%s", diff)
	}
	for _, m := range h.mirror() {
		if m.Lost || m.Gap {
			t.Errorf("mirror has a loss: %+v", m)
		}
	}
}
