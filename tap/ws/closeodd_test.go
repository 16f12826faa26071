package ws

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// TestOddCloseFramesPassThrough: close frames that break RFC 6455 pass
// byte for byte, in both directions, and cost the mirror nothing it had:
// a close code no peer may send (999, 1005, 5000) and a reason of 200
// bytes (a control payload over 125: the mirror's parser stops there,
// counted as a loss, and the relay goes on unchanged). The tap is not the
// one to enforce the peers' protocol: it is in their data path.
func TestOddCloseFramesPassThrough(t *testing.T) {
	for name, tc := range map[string]struct{ toServer, toClient []byte }{
		"code 999 up, 5000 down": {
			rawFrame(true, false, opClose, true, []byte{0x03, 0xE7, 'x'}),
			rawFrame(true, false, opClose, false, []byte{0x13, 0x88}),
		},
		"code 1005 on the wire": {
			rawFrame(true, false, opClose, true, []byte{0x03, 0xED}),
			rawFrame(true, false, opClose, false, []byte{0x03, 0xED}),
		},
		"reason of 200 bytes": {
			rawFrame(true, false, opClose, true, append([]byte{0x03, 0xE8}, bytes.Repeat([]byte("r"), 200)...)),
			rawFrame(true, false, opClose, false, append([]byte{0x03, 0xE8}, bytes.Repeat([]byte("s"), 200)...)),
		},
		"one-byte close payload": {
			rawFrame(true, false, opClose, true, []byte{0x03}),
			rawFrame(true, false, opClose, false, []byte{0x03}),
		},
	} {
		t.Run(name, func(t *testing.T) {
			toServer := append(rawFrame(true, false, opText, true, []byte(`{"up":1}`)), tc.toServer...)
			toClient := append(rawFrame(true, false, opText, false, []byte(`{"down":1}`)), tc.toClient...)
			up, serverGot := rawPeer(t, toClient, len(toServer))
			h := startTap(t, up, nil, nil)
			nc, err := net.Dial("tcp", h.p.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			nc.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(nc, "GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 101 {
				t.Fatalf("handshake: %v %v", resp, err)
			}
			nc.Write(toServer)
			clientGot := make([]byte, len(toClient))
			if _, err := io.ReadFull(br, clientGot); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(clientGot, toClient) {
				t.Error("client received different bytes than the server sent")
			}
			if got := <-serverGot; !bytes.Equal(got, toServer) {
				t.Error("server received different bytes than the client sent")
			}
			nc.Close()
			eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
			if got := h.dataOf(tap.DirUpstream); len(got) != 1 || string(got[0]) != `{"up":1}` {
				t.Errorf("mirror upstream %q", got)
			}
			if got := h.dataOf(tap.DirDownstream); len(got) != 1 || string(got[0]) != `{"down":1}` {
				t.Errorf("mirror downstream %q", got)
			}
		})
	}
}

// TestPingFloodPassesThrough: 100000 pings in a row from the client (and
// as many pongs back), interleaved with a fragmented message, pass byte
// for byte; the mirror gets the message, and nothing for the control
// frames. A ping is relayed and parsed in place: the mirror holds no
// copy of it.
func TestPingFloodPassesThrough(t *testing.T) {
	const n = 100000
	ping := rawFrame(true, false, opPing, true, []byte("p"))
	pong := rawFrame(true, false, opPong, false, []byte("p"))
	var toServer, toClient []byte
	toServer = append(toServer, rawFrame(false, false, opText, true, []byte(`{"up":`))...)
	toServer = append(toServer, bytes.Repeat(ping, n)...)
	toServer = append(toServer, rawFrame(true, false, opContinuation, true, []byte(`1}`))...)
	toClient = append(toClient, bytes.Repeat(pong, n)...)
	toClient = append(toClient, rawFrame(true, false, opText, false, []byte(`{"down":1}`))...)
	up, serverGot := rawPeer(t, toClient, len(toServer))
	h := startTap(t, up, nil, nil)
	nc, err := net.Dial("tcp", h.p.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(30 * time.Second))
	io.WriteString(nc, "GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	go nc.Write(toServer) // while the pongs are read
	clientGot := make([]byte, len(toClient))
	if _, err := io.ReadFull(br, clientGot); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(clientGot, toClient) {
		t.Error("client received different bytes than the server sent")
	}
	if got := <-serverGot; !bytes.Equal(got, toServer) {
		t.Error("server received different bytes than the client sent")
	}
	nc.Close()
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	if got := h.dataOf(tap.DirUpstream); len(got) != 1 || string(got[0]) != `{"up":1}` {
		t.Errorf("mirror upstream %q", got)
	}
	if got := h.dataOf(tap.DirDownstream); len(got) != 1 || string(got[0]) != `{"down":1}` {
		t.Errorf("mirror downstream %q", got)
	}
}
