package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// GatewayConfig configures the simulated Gateway.
type GatewayConfig struct {
	// URL is where the Gateway connects: e2atap's WebSocket proxy.
	URL string
	// Compress offers permessage-deflate.
	Compress bool
	// AckTimeout bounds the wait for connection.ack (the reference: 5 s).
	AckTimeout time.Duration
	// Record keeps every message sent and received, for tests.
	Record bool
}

// Gateway is the simulated Gateway: one connection that carries every
// request, waits for connection.ack first, routes server push frames to
// its push handler (counted) and hands every message it receives to
// Received, in order.
type Gateway struct {
	cfg    GatewayConfig
	conn   *websocket.Conn
	recv   chan []byte
	pushes atomic.Uint64
	done   chan struct{}

	mu       sync.Mutex // serialises writes; guards sent and received
	sent     [][]byte
	received [][]byte
}

// DialGateway connects and waits for connection.ack.
func DialGateway(ctx context.Context, cfg GatewayConfig) (*Gateway, error) {
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 5 * time.Second
	}
	d := websocket.Dialer{HandshakeTimeout: 5 * time.Second, EnableCompression: cfg.Compress}
	h := http.Header{}
	h.Set("Origin", "http://"+hostOf(cfg.URL)) // the reference derives it from the ws URI
	c, resp, err := d.DialContext(ctx, cfg.URL, h)
	if err != nil {
		return nil, fmt.Errorf("gateway: dial %s: %w", cfg.URL, err)
	}
	if resp != nil && resp.Body != nil {
		resp.Body.Close()
	}
	c.EnableWriteCompression(cfg.Compress)
	c.SetReadLimit(8 << 20)
	_ = c.SetReadDeadline(time.Now().Add(cfg.AckTimeout))
	_, first, err := c.ReadMessage()
	if err != nil || !bytes.Equal(first, connectionAck) {
		c.Close()
		return nil, fmt.Errorf("gateway: no connection.ack within %s: %v", cfg.AckTimeout, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	g := &Gateway{cfg: cfg, conn: c, recv: make(chan []byte, 1024), done: make(chan struct{})}
	go g.readLoop()
	return g, nil
}

func hostOf(u string) string {
	for _, p := range []string{"ws://", "wss://"} {
		if len(u) > len(p) && u[:len(p)] == p {
			u = u[len(p):]
		}
	}
	if i := bytes.IndexByte([]byte(u), '/'); i >= 0 {
		u = u[:i]
	}
	return u
}

var pushMarker = []byte(`"_jiuwenswarm_server_push": true`)

func (g *Gateway) readLoop() {
	defer close(g.done)
	defer close(g.recv)
	for {
		_, data, err := g.conn.ReadMessage()
		if err != nil {
			return
		}
		if bytes.Contains(data, pushMarker) {
			// The reference routes push frames before looking at request_id.
			g.pushes.Add(1)
		}
		if g.cfg.Record {
			g.mu.Lock()
			g.received = append(g.received, data)
			g.mu.Unlock()
		}
		select {
		case g.recv <- data:
		default: // nobody waits for it: the waiter times out and says so
		}
	}
}

// Send writes one request.
func (g *Gateway) Send(data []byte) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err := g.conn.WriteMessage(websocket.TextMessage, data); err != nil {
		return fmt.Errorf("gateway: send: %w", err)
	}
	if g.cfg.Record {
		g.sent = append(g.sent, data)
	}
	return nil
}

// Received delivers every message the Gateway read after connection.ack;
// it is closed when the connection ends.
func (g *Gateway) Received() <-chan []byte { return g.recv }

// Pushes counts the server push frames received.
func (g *Gateway) Pushes() uint64 { return g.pushes.Load() }

// Sent returns the requests written (with Record).
func (g *Gateway) Sent() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]byte(nil), g.sent...)
}

// Responses returns what the Gateway read (with Record).
func (g *Gateway) Responses() [][]byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([][]byte(nil), g.received...)
}

// Close starts the closing handshake (1000) and waits for the server's
// answer, at most until ctx is done.
func (g *Gateway) Close(ctx context.Context) error {
	g.mu.Lock()
	err := g.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	g.mu.Unlock()
	select {
	case <-g.done:
	case <-ctx.Done():
	}
	g.conn.Close()
	<-g.done
	if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
		return err
	}
	return nil
}
