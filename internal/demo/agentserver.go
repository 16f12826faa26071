package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/e2atap/e2atap/internal/gen"
)

// connectionAck is the first frame the reference AgentServer sends on a
// new connection (not E2A; reference §7.2).
var connectionAck = []byte(`{"type":"event","event":"connection.ack","payload":{"status":"ready"}}`)

// Errors of the simulated peers.
var (
	// ErrNotConnected: no Gateway is connected to the AgentServer.
	ErrNotConnected = errors.New("demo: no gateway connected")
	// ErrCancelled: the response belongs to a chat the user interrupted;
	// the AgentServer sends nothing more for it.
	ErrCancelled = errors.New("demo: chat was interrupted")
	// ErrTimeout: a message was not delivered in time.
	ErrTimeout = errors.New("demo: message not delivered in time")
)

// AgentServerConfig configures the simulated AgentServer.
type AgentServerConfig struct {
	// Listen is host:port; port 0 picks a free port.
	Listen string
	// LogDir receives agentserver.jsonl, the server's own log: one JSON
	// line per request received and per response sent.
	LogDir string
	// PingInterval: the reference pings every 30 s; 0 sends no pings.
	PingInterval time.Duration
	// Compress negotiates permessage-deflate, as the reference's Python
	// websockets peers do by default.
	Compress bool
	// Record keeps every message sent and received, for tests.
	Record bool
	Logger *slog.Logger
}

// AgentServer is the simulated AgentServer: it accepts one Gateway at a
// time on any path, sends connection.ack, logs every request it receives
// and every response it sends, and cancels the in-flight chats of a
// session on chat.interrupt (intent cancel or supplement), after which it
// refuses to send for them (ErrCancelled).
type AgentServer struct {
	cfg     AgentServerConfig
	ln      net.Listener
	srv     *http.Server
	logPath string
	logf    *os.File
	recv    chan []byte
	upg     websocket.Upgrader

	mu        sync.Mutex // guards everything below, and serialises writes
	conn      *websocket.Conn
	connected chan struct{}
	inflight  map[string]string // streaming chat request_id → session_id
	cancelled map[string]bool
	sent      [][]byte
	received  [][]byte

	wg       sync.WaitGroup
	done     chan struct{}
	serveErr error
}

// NewAgentServer listens and opens the log; Start serves.
func NewAgentServer(cfg AgentServerConfig) (*AgentServer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
		return nil, fmt.Errorf("agentserver: log dir: %w", err)
	}
	p := filepath.Join(cfg.LogDir, "agentserver.jsonl")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("agentserver: log: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("agentserver: %w", err)
	}
	a := &AgentServer{
		cfg: cfg, ln: ln, logPath: p, logf: f,
		// Capacity: the Conductor has one message in flight; the rest is
		// slack for requests nobody waits for (they are dropped, counted
		// as not delivered by the waiter's timeout).
		recv:      make(chan []byte, 1024),
		connected: make(chan struct{}),
		inflight:  map[string]string{},
		cancelled: map[string]bool{},
		done:      make(chan struct{}),
		upg: websocket.Upgrader{
			EnableCompression: cfg.Compress,
			CheckOrigin:       func(*http.Request) bool { return true },
		},
	}
	a.srv = &http.Server{Handler: http.HandlerFunc(a.serveWS), ReadHeaderTimeout: 5 * time.Second}
	return a, nil
}

// Addr is where the server listens.
func (a *AgentServer) Addr() string { return a.ln.Addr().String() }

// URL is the ws:// URL of the server.
func (a *AgentServer) URL() string { return "ws://" + a.Addr() }

// LogPath is the server's JSON-lines log.
func (a *AgentServer) LogPath() string { return a.logPath }

// Start serves connections until Close.
func (a *AgentServer) Start() {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.serveErr = err
		}
	}()
}

// Connected is closed once a Gateway connected.
func (a *AgentServer) Connected() <-chan struct{} { return a.connected }

func (a *AgentServer) serveWS(w http.ResponseWriter, r *http.Request) {
	// Serve holds a count until Shutdown, so this Add never races Wait
	// at zero; hijacked connections are not waited for by Shutdown.
	a.wg.Add(1)
	defer a.wg.Done()
	c, err := a.upg.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade answered the client
	}
	c.EnableWriteCompression(a.cfg.Compress)
	c.SetReadLimit(8 << 20) // the reference's max_size
	a.mu.Lock()
	if a.conn != nil {
		a.mu.Unlock()
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "one gateway at a time"), time.Now().Add(time.Second))
		c.Close()
		return
	}
	err = c.WriteMessage(websocket.TextMessage, connectionAck)
	if err == nil {
		a.conn = c
		close(a.connected)
	}
	a.mu.Unlock()
	if err != nil {
		c.Close()
		return
	}
	stopPing := make(chan struct{})
	if a.cfg.PingInterval > 0 {
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			t := time.NewTicker(a.cfg.PingInterval)
			defer t.Stop()
			for {
				select {
				case <-stopPing:
					return
				case <-t.C:
					_ = c.WriteControl(websocket.PingMessage, []byte("demo"), time.Now().Add(time.Second))
				}
			}
		}()
	}
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			break
		}
		a.request(data)
	}
	close(stopPing)
	c.Close()
}

// request logs what the Gateway sent and applies interrupts.
func (a *AgentServer) request(data []byte) {
	var req struct {
		RequestID string `json:"request_id"`
		SessionID string `json:"session_id"`
		Method    string `json:"method"`
		IsStream  bool   `json:"is_stream"`
		Params    struct {
			Intent string `json:"intent"`
		} `json:"params"`
	}
	_ = json.Unmarshal(data, &req) // a bad request is logged as it came
	a.mu.Lock()
	a.logLocked(data)
	if a.cfg.Record {
		a.received = append(a.received, data)
	}
	if req.IsStream && req.RequestID != "" {
		a.inflight[req.RequestID] = req.SessionID
	}
	if req.Method == "chat.interrupt" && (req.Params.Intent == "" || req.Params.Intent == "cancel" || req.Params.Intent == "supplement") {
		for id, sess := range a.inflight {
			if sess == req.SessionID {
				delete(a.inflight, id)
				a.cancelled[id] = true
			}
		}
	}
	a.mu.Unlock()
	select {
	case a.recv <- data:
	default:
	}
}

func (a *AgentServer) logLocked(line []byte) {
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	if _, err := a.logf.Write(buf); err != nil {
		a.cfg.Logger.Warn("agentserver log", "err", err)
	}
}

// Received delivers every request the server read, in order.
func (a *AgentServer) Received() <-chan []byte { return a.recv }

// Send sends one response of the script: m.Data on the wire and in the
// log, or for a log-only record m.Wire on the wire (if any) and m.Data in
// the log. It reports whether something went on the wire.
func (a *AgentServer) Send(m gen.Message) (onWire bool, err error) {
	wire := m.Data
	if m.Log {
		wire = m.Wire
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn == nil {
		return false, ErrNotConnected
	}
	if m.Stream != "" && a.cancelled[m.Stream] {
		return false, ErrCancelled
	}
	if wire != nil {
		if err := a.conn.WriteMessage(websocket.TextMessage, wire); err != nil {
			return false, fmt.Errorf("agentserver: send: %w", err)
		}
		if a.cfg.Record {
			a.sent = append(a.sent, wire)
		}
	}
	a.logLocked(m.Data)
	if m.Stream != "" && bytes.Contains(m.Data, []byte(`"is_final": true`)) {
		delete(a.inflight, m.Stream)
	}
	return wire != nil, nil
}

// Sent returns what went on the wire (with Record).
func (a *AgentServer) Sent() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]byte(nil), a.sent...)
}

// Requests returns the requests read (with Record).
func (a *AgentServer) Requests() [][]byte {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([][]byte(nil), a.received...)
}

// Close says goodbye (1001) to the Gateway, stops serving and closes the log.
func (a *AgentServer) Close(ctx context.Context) error {
	a.mu.Lock()
	c := a.conn
	a.mu.Unlock()
	if c != nil {
		_ = c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, "shutdown"), time.Now().Add(time.Second))
	}
	err := a.srv.Shutdown(ctx)
	if c != nil {
		// The read loop ends when the peer answers the close, or now.
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
	}
	a.wg.Wait()
	if c != nil {
		c.Close()
	}
	return errors.Join(err, a.serveErr, a.logf.Close())
}
