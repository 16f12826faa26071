package ws

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A peer that resets its TCP connection (RST: a crash, a kill, a proxy or
// load balancer giving up) is passed on as a reset, in both directions and
// on a passed-through connection too, after what it sent before the reset.
// Before, the other peer got a FIN, the orderly end: a plain HTTP answer
// delimited by the connection's end, cut by the AgentServer's reset, read
// as a whole one, and a WebSocket peer saw an end it could not tell from a
// peer that shut down cleanly (with the real binary and a Python AgentServer
// that aborts with SO_LINGER 0: RST directly, FIN through e2atap).
func TestPeerResetIsPassedOnAsReset(t *testing.T) {
	for _, tt := range []struct {
		name      string
		upgrade   bool
		resetting string // "upstream" or "client"
		// behind: the Gateway reads nothing until the AgentServer has
		// reset, so that what it sent is still in the tap's socket.
		behind bool
	}{
		{"websocket, AgentServer resets", true, "upstream", false},
		{"websocket, Gateway resets", true, "client", false},
		{"passed through, upstream resets", false, "upstream", false},
		{"passed through, upstream resets, Gateway behind", false, "upstream", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.behind && runtime.GOOS != "linux" {
				t.Skip("the AgentServer cannot tell when the tap has read its answer (SIOCOUTQ)")
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			answer := "part of an answer whose end is the connection's end"
			if tt.behind {
				answer = strings.Repeat("x", 256<<10) + answer
			}
			resetNow := make(chan struct{})
			upEnd := make(chan error, 1)
			go func() {
				// The tap's health check connects too: the AgentServer
				// answers the first connection that sends a request.
				var c net.Conn
				var req *http.Request
				for req == nil {
					var err error
					if c, err = ln.Accept(); err != nil {
						upEnd <- err
						return
					}
					if req, err = http.ReadRequest(bufio.NewReader(c)); err != nil {
						c.Close()
					}
				}
				defer c.Close()
				var out []byte
				if key := req.Header.Get("Sec-WebSocket-Key"); key != "" {
					sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
					out = fmt.Appendf(nil, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n", base64.StdEncoding.EncodeToString(sum[:]))
					out = append(out, 0x81, byte(len(answer)))
				} else {
					out = []byte("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n")
				}
				out = append(out, answer...)
				if _, err := c.Write(out); err != nil {
					upEnd <- err
					return
				}
				if tt.resetting == "upstream" {
					if tt.behind {
						// Reset once the tap has read everything.
						for unsent(c) > 0 {
							time.Sleep(time.Millisecond)
						}
						close(resetNow)
					}
					<-resetNow
					_ = c.(*net.TCPConn).SetLinger(0)
					upEnd <- nil
					return
				}
				_, err = io.Copy(io.Discard, c)
				upEnd <- err
			}()
			h := startTap(t, "ws://"+ln.Addr().String(), nil, nil)

			c, err := net.Dial("tcp", h.p.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tt.behind {
				_ = c.(*net.TCPConn).SetReadBuffer(16 << 10)
			}
			head := "GET / HTTP/1.1\r\nHost: agent\r\n\r\n"
			if tt.upgrade {
				head = "GET / HTTP/1.1\r\nHost: agent\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
			}
			if _, err := c.Write([]byte(head)); err != nil {
				t.Fatal(err)
			}
			if tt.behind {
				if err := <-upEnd; err != nil {
					t.Fatal(err)
				}
			}
			var got []byte
			buf := make([]byte, 4096)
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			for !bytes.HasSuffix(got, []byte(answer)) {
				n, err := c.Read(buf)
				got = append(got, buf[:n]...)
				if err != nil {
					select {
					case uerr := <-upEnd:
						t.Fatalf("read %d of the %d bytes sent: %v (the AgentServer: %v)", len(got), len(answer), err, uerr)
					default:
						t.Fatalf("read %d of the %d bytes sent: %v", len(got), len(answer), err)
					}
				}
			}
			if tt.resetting == "client" {
				_ = c.(*net.TCPConn).SetLinger(0)
				c.Close()
				select {
				case err := <-upEnd:
					if !errors.Is(err, syscall.ECONNRESET) {
						t.Errorf("the AgentServer's read ended with %v, want a reset", err)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the AgentServer's read did not end")
				}
				return
			}
			if !tt.behind {
				close(resetNow)
				if err := <-upEnd; err != nil {
					t.Fatal(err)
				}
			}
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			n, err := c.Read(buf)
			if n != 0 || !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("after the answer the Gateway read %q, %v; want a reset", buf[:n], err)
			}
		})
	}
}
