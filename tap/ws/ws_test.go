package ws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/e2atap/e2atap/tap"
)

func TestMain(m *testing.M) {
	if runBenchRole() { // a child process of a benchmark
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// harness is a running Proxy whose mirror is collected.
type harness struct {
	p      *Proxy
	stats  *tap.Stats
	logBuf *syncBuffer
	cancel context.CancelFunc
	done   chan error
	once   sync.Once

	mu   sync.Mutex
	msgs []tap.Message
}

// startTap runs a Proxy in front of upstream (a ws:// URL). emit, when not
// nil, replaces the collector.
func startTap(t testing.TB, upstreamURL string, edit func(*Config), emit tap.EmitFunc) *harness {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Name = "test-ws"
	cfg.Listen = "127.0.0.1:0"
	cfg.Upstream = upstreamURL
	cfg.CloseTimeout = 2 * time.Second
	if edit != nil {
		edit(&cfg)
	}
	h := &harness{stats: new(tap.Stats), logBuf: new(syncBuffer), done: make(chan error, 1)}
	logger := slog.New(slog.NewTextHandler(h.logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := New(cfg, h.stats, logger)
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	if emit == nil {
		emit = func(_ context.Context, m tap.Message) error {
			h.mu.Lock()
			h.msgs = append(h.msgs, m)
			h.mu.Unlock()
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go func() { h.done <- p.Run(ctx, emit) }()
	t.Cleanup(func() { h.stop(t) })
	return h
}

// stop ends Run and checks it returns in time; safe to call twice.
func (h *harness) stop(t testing.TB) {
	t.Helper()
	h.once.Do(func() {
		h.cancel()
		select {
		case err := <-h.done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not return after cancel")
		}
	})
}

func (h *harness) url(path string) string { return "ws://" + h.p.Addr().String() + path }

func (h *harness) mirror() []tap.Message {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]tap.Message(nil), h.msgs...)
}

// dataOf returns the payloads mirrored in direction d, in order.
func (h *harness) dataOf(d tap.Direction) [][]byte {
	var out [][]byte
	for _, m := range h.mirror() {
		if m.Dir == d && !m.ConnClosed {
			out = append(out, m.Data)
		}
	}
	return out
}

// eventually polls cond until it holds or the time is up.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// goServer is a real WebSocket server (coder/websocket) on 127.0.0.1 that
// runs handle for each connection.
func goServer(t testing.TB, opts *websocket.AcceptOptions, handle func(r *http.Request, c *websocket.Conn)) string {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, opts)
		if err != nil {
			return
		}
		wg.Add(1)
		defer wg.Done()
		defer c.CloseNow()
		c.SetReadLimit(64 << 20)
		handle(r, c)
	}))
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
	})
	return "ws://" + srv.Listener.Addr().String()
}

// echo sends every message back as it came (type and bytes).
func echo(_ *http.Request, c *websocket.Conn) {
	ctx := context.Background()
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, typ, b); err != nil {
			return
		}
	}
}

func dial(t testing.TB, url string, opts *websocket.DialOptions) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

type wsMsg struct {
	Text bool
	Data []byte
}

func TestRelayMessagesEndToEnd(t *testing.T) {
	up := goServer(t, nil, echo)
	h := startTap(t, up, nil, nil)
	c := dial(t, h.url("/agent"), nil)
	ctx := context.Background()

	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16) // 64 KiB: frames longer than 65535 take the 8-byte length
	sent := []wsMsg{
		{true, []byte(`{"type":"event","event":"connection.ack","payload":{"status":"ready"}}`)},
		{false, []byte{0xEF, 0x00, 0x01, 0xFF, 0x80}},
		{true, []byte{}},
		{true, []byte(strings.Repeat("é", 200))}, // 126-byte length form
		{false, append(big, 'x')},                // 127-byte length form
		{true, []byte(`{"jsonrpc":"2.0","id":1,"method":"chat.send"}`)},
	}
	for i, m := range sent {
		typ := websocket.MessageBinary
		if m.Text {
			typ = websocket.MessageText
		}
		if err := c.Write(ctx, typ, m.Data); err != nil {
			t.Fatal(err)
		}
		gotTyp, got, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if gotTyp != typ || !bytes.Equal(got, m.Data) {
			t.Fatalf("message %d: echo differs (type %v, %d bytes; want %v, %d bytes)", i, gotTyp, len(got), typ, len(m.Data))
		}
	}
	// Fragmented: one message written as several frames.
	w, err := c.Writer(ctx, websocket.MessageText)
	if err != nil {
		t.Fatal(err)
	}
	frag := []string{`{"a":`, `"frag`, `mented"}`}
	for _, f := range frag {
		if _, err := w.Write([]byte(f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	joined := []byte(strings.Join(frag, ""))
	if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, joined) {
		t.Fatalf("fragmented echo = %q, %v", got, err)
	}
	sent = append(sent, wsMsg{true, joined})
	if err := c.Close(websocket.StatusNormalClosure, "done"); err != nil {
		t.Fatal(err)
	}

	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	msgs := h.mirror()
	var want [][]byte
	for _, m := range sent {
		want = append(want, m.Data)
	}
	for _, d := range []tap.Direction{tap.DirUpstream, tap.DirDownstream} {
		if diff := cmp.Diff(want, h.dataOf(d), cmpBytes); diff != "" {
			t.Errorf("mirror %v (-want +got):\n%s", d, diff)
		}
	}
	// Every message once, offsets a strict sequence, the close last.
	connID := msgs[0].Conn
	for i, m := range msgs {
		if m.Conn != connID || m.Tap != "test-ws" || m.Pos.Kind != tap.PosConn || m.Pos.Name != connID {
			t.Fatalf("message %d: identity %+v", i, m)
		}
		if m.ConnClosed {
			if i != len(msgs)-1 {
				t.Errorf("ConnClosed at %d of %d", i, len(msgs))
			}
			continue
		}
		if m.Pos.Offset != int64(i) {
			t.Errorf("message %d: offset %d", i, m.Pos.Offset)
		}
		if m.Gap || m.Time.IsZero() {
			t.Errorf("message %d: gap %v time %v", i, m.Gap, m.Time)
		}
	}
	if msgs[0].Format != tap.FormatJSON || msgs[2].Format != tap.FormatAuto {
		t.Errorf("formats: text %v, binary %v", msgs[0].Format, msgs[2].Format)
	}
	if got := h.stats.Messages[tap.DirUpstream].Load(); got != uint64(len(sent)) {
		t.Errorf("Stats.Messages upstream = %d, want %d", got, len(sent))
	}
	if !h.stats.Up.Load() {
		t.Error("Stats.Up false while serving with a reachable upstream")
	}
}

// cmpBytes treats nil and empty payloads alike.
var cmpBytes = cmp.Comparer(func(a, b []byte) bool { return bytes.Equal(a, b) })

func hasConnClosed(msgs []tap.Message) bool {
	for _, m := range msgs {
		if m.ConnClosed {
			return true
		}
	}
	return false
}

func TestHeadersAndSubprotocolReachUpstream(t *testing.T) {
	got := make(chan http.Header, 1)
	gotPath := make(chan string, 1)
	up := goServer(t, &websocket.AcceptOptions{Subprotocols: []string{"e2a.v1"}, InsecureSkipVerify: true},
		func(r *http.Request, c *websocket.Conn) {
			got <- r.Header.Clone()
			gotPath <- r.URL.RequestURI()
			echo(r, c)
		})
	h := startTap(t, up, nil, nil)
	const secret = "Bearer s3cr3t-token-value"
	hdr := http.Header{}
	hdr.Set("Authorization", secret)
	hdr.Set("Origin", "http://127.0.0.1:19001")
	hdr.Set("Cookie", "session=abc123; theme=dark")
	hdr.Set("X-E2a-Trace", "t-42")
	c := dial(t, h.url("/tui?x=1&y=%2F"), &websocket.DialOptions{HTTPHeader: hdr, Subprotocols: []string{"e2a.v1", "other"}})
	if c.Subprotocol() != "e2a.v1" {
		t.Errorf("subprotocol = %q, want e2a.v1 (negotiated end to end)", c.Subprotocol())
	}
	r := <-got
	for _, k := range []string{"Authorization", "Origin", "Cookie", "X-E2a-Trace"} {
		if r.Get(k) != hdr.Get(k) {
			t.Errorf("upstream got %s = %q, want %q", k, r.Get(k), hdr.Get(k))
		}
	}
	if p := <-gotPath; p != "/tui?x=1&y=%2F" {
		t.Errorf("upstream path = %q", p)
	}
	if err := c.Write(context.Background(), websocket.MessageText, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	h.stop(t)
	logs := h.logBuf.String()
	for _, s := range []string{"s3cr3t", "abc123", "Authorization", "Cookie"} {
		if strings.Contains(logs, s) {
			t.Errorf("log mentions %q:\n%s", s, logs)
		}
	}
}

func TestPingPongPassThrough(t *testing.T) {
	serverPinged := make(chan error, 1)
	up := goServer(t, nil, func(r *http.Request, c *websocket.Conn) {
		ctx := c.CloseRead(context.Background()) // reads (and answers pings) in the background
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		serverPinged <- c.Ping(pctx)
		<-ctx.Done()
	})
	h := startTap(t, up, nil, nil)
	c := dial(t, h.url("/"), nil)
	ctx := c.CloseRead(context.Background())
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.Ping(pctx); err != nil {
		t.Errorf("client ping through the tap: %v", err)
	}
	if err := <-serverPinged; err != nil {
		t.Errorf("server ping through the tap: %v", err)
	}
	c.Close(websocket.StatusNormalClosure, "")
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	if n := len(h.mirror()); n != 1 {
		t.Errorf("control frames were mirrored: %d messages", n)
	}
}

func TestCloseCodeAndReasonPassThrough(t *testing.T) {
	for _, tc := range []struct {
		name    string
		byProxy func(client, server *websocket.Conn) (closer, other *websocket.Conn)
	}{
		{"client closes", func(c, s *websocket.Conn) (*websocket.Conn, *websocket.Conn) { return c, s }},
		{"server closes", func(c, s *websocket.Conn) (*websocket.Conn, *websocket.Conn) { return s, c }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srvConn := make(chan *websocket.Conn, 1)
			release := make(chan struct{})
			up := goServer(t, nil, func(r *http.Request, c *websocket.Conn) {
				srvConn <- c
				<-release
			})
			defer close(release)
			h := startTap(t, up, nil, nil)
			c := dial(t, h.url("/"), nil)
			s := <-srvConn
			closer, other := tc.byProxy(c, s)
			readErr := make(chan error, 1)
			go func() {
				_, _, err := other.Read(context.Background())
				readErr <- err
			}()
			if err := closer.Close(4001, "agent says bye"); err != nil {
				t.Fatalf("close: %v", err)
			}
			var ce websocket.CloseError
			if err := <-readErr; !errors.As(err, &ce) || ce.Code != 4001 || ce.Reason != "agent says bye" {
				t.Errorf("other side read %v, want close 4001 %q", err, "agent says bye")
			}
			eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
		})
	}
}

func TestCompressionGoPeers(t *testing.T) {
	for _, mode := range []websocket.CompressionMode{websocket.CompressionContextTakeover, websocket.CompressionNoContextTakeover} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			up := goServer(t, &websocket.AcceptOptions{CompressionMode: mode, CompressionThreshold: 1}, echo)
			h := startTap(t, up, nil, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, h.url("/"), &websocket.DialOptions{CompressionMode: mode, CompressionThreshold: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if ext := resp.Header.Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
				t.Fatalf("compression not negotiated through the tap: %q", ext)
			}
			var sent [][]byte
			plain := 0
			for i := range 50 {
				m := fmt.Appendf(nil, `{"request_id":"r-%d","method":"chat.send","params":{"text":%q}}`, i, strings.Repeat("hello agent ", i%7+1))
				sent = append(sent, m)
				plain += len(m)
				if err := c.Write(ctx, websocket.MessageText, m); err != nil {
					t.Fatal(err)
				}
				if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, m) {
					t.Fatalf("echo %d = %q, %v", i, got, err)
				}
			}
			c.Close(websocket.StatusNormalClosure, "")
			eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
			for _, d := range []tap.Direction{tap.DirUpstream, tap.DirDownstream} {
				if diff := cmp.Diff(sent, h.dataOf(d), cmpBytes); diff != "" {
					t.Errorf("inflated mirror %v (-want +got):\n%s", d, diff)
				}
				if wire := h.stats.Bytes[d].Load(); wire >= uint64(plain) {
					t.Errorf("%v: %d bytes on the wire for %d plain: not compressed", d, wire, plain)
				}
			}
			if n := h.stats.Drops[tap.DropDecode].Load(); n != 0 {
				t.Errorf("%d decode drops", n)
			}
		})
	}
}

// A blocked emit must cost mirror copies, never relay time.
func TestStalledEmitNeverStallsRelay(t *testing.T) {
	const n = 10000
	received := make(chan int, 1)
	up := goServer(t, nil, func(r *http.Request, c *websocket.Conn) {
		ctx := context.Background()
		count := 0
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				received <- count
				return
			}
			if string(b) != fmt.Sprintf("m%05d", count) && !(count == n && string(b) == "after") {
				received <- -count
				return
			}
			count++
			if count == n {
				c.Write(ctx, websocket.MessageText, []byte("all"))
			}
		}
	})
	release := make(chan struct{})
	var mu sync.Mutex
	var got []tap.Message
	emit := func(ctx context.Context, m tap.Message) error {
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		return nil
	}
	h := startTap(t, up, func(c *Config) { c.QueueSize = 64 }, emit)
	c := dial(t, h.url("/"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	for i := range n {
		if err := c.Write(ctx, websocket.MessageText, fmt.Appendf(nil, "m%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, b, err := c.Read(ctx); err != nil || string(b) != "all" {
		t.Fatalf("upstream did not confirm all %d messages: %q %v", n, b, err)
	}
	t.Logf("%d messages relayed in %v with emit blocked", n, time.Since(start))
	drops := h.stats.Drops[tap.DropQueueFull].Load()
	if drops < n-64-2 { // at most the queue (plus the one the drain goroutine holds) got through
		t.Errorf("queue_full drops = %d, want ≥ %d", drops, n-64-2)
	}
	// Lag is the queue's depth: the relay refreshes it while the drain is
	// stuck in emit, and the drain brings it back to 0.
	if lag := h.stats.Lag.Load(); lag < 32 || lag > 64 {
		t.Errorf("lag with emit stalled = %d, want the queue nearly full (64)", lag)
	}

	close(release) // the engine recovers
	eventually(t, "queue drained", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= n-int(drops)
	})
	if err := c.Write(ctx, websocket.MessageText, []byte("after")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "message after the gap", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0 && string(got[len(got)-1].Data) == "after"
	})
	mu.Lock()
	last := got[len(got)-1]
	for _, m := range got[:len(got)-1] {
		if m.Gap {
			t.Errorf("message %s before any drop has Gap", m.Data)
		}
	}
	mu.Unlock()
	if !last.Gap {
		t.Error("first message after the drops lacks Gap")
	}
	if lag := h.stats.Lag.Load(); lag != 0 {
		t.Errorf("lag after the queue drained = %d, want 0", lag)
	}
	if last.Pos.Offset != n+1 { // n upstream messages and the "all" reply before it
		t.Errorf("offset after the gap = %d, want %d (dropped messages keep their index)", last.Pos.Offset, n+1)
	}
	c.Close(websocket.StatusNormalClosure, "")
	if cnt := <-received; cnt != n+1 {
		t.Errorf("upstream received %d messages in order, want %d", cnt, n+1)
	}
}

// The mirror sees a message before the peer can answer it: in queue order,
// every request's copy comes before its answer's, however the relay's two
// goroutines are scheduled. (Offsets are that order, per connection.)
func TestMirrorOrderIsCausal(t *testing.T) {
	up := goServer(t, nil, echo)
	h := startTap(t, up, nil, nil)
	c := dial(t, h.url("/"), nil)
	ctx := context.Background()
	const n = 2000
	for i := range n {
		m := fmt.Appendf(nil, "m%04d", i)
		if err := c.Write(ctx, websocket.MessageText, m); err != nil {
			t.Fatal(err)
		}
		if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, m) {
			t.Fatalf("echo %d: %q, %v", i, got, err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	var data []tap.Message
	for _, m := range h.mirror() {
		if len(m.Data) > 0 {
			data = append(data, m)
		}
	}
	if len(data) != 2*n {
		t.Fatalf("%d copies, want %d", len(data), 2*n)
	}
	for i, m := range data {
		want, dir := fmt.Sprintf("m%04d", i/2), tap.DirUpstream
		if i%2 == 1 {
			dir = tap.DirDownstream
		}
		if string(m.Data) != want || m.Dir != dir || m.Pos.Offset != int64(i) {
			t.Fatalf("copy %d: %s %q offset %d, want %s %q offset %d", i, m.Dir, m.Data, m.Pos.Offset, dir, want, i)
		}
	}
}

func TestOversizeIsRelayedButNotMirrored(t *testing.T) {
	up := goServer(t, nil, echo)
	h := startTap(t, up, func(c *Config) { c.MaxMessageBytes = 1000 }, nil)
	c := dial(t, h.url("/"), nil)
	ctx := context.Background()
	for _, m := range [][]byte{bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 1001), []byte("small")} {
		c.Write(ctx, websocket.MessageText, m)
		if _, got, err := c.Read(ctx); err != nil || !bytes.Equal(got, m) {
			t.Fatalf("echo of %d bytes: %d bytes, %v", len(m), len(got), err)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
	eventually(t, "ConnClosed", func() bool { return hasConnClosed(h.mirror()) })
	ups := h.mirror()
	var offs []int64
	var gaps []bool
	for _, m := range ups {
		if m.Dir == tap.DirUpstream {
			offs = append(offs, m.Pos.Offset)
			gaps = append(gaps, m.Gap)
		}
	}
	if diff := cmp.Diff([]int64{0, 4}, offs); diff != "" {
		t.Errorf("upstream offsets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, true}, gaps); diff != "" {
		t.Errorf("upstream gaps (-want +got):\n%s", diff)
	}
	if got := h.stats.Drops[tap.DropOversize].Load(); got != 2 {
		t.Errorf("oversize drops = %d, want 2 (one each way)", got)
	}
}

func TestUpstreamRefusalPassesThrough(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "origin not allowed", http.StatusForbidden)
	}))
	defer srv.Close()
	h := startTap(t, "ws://"+srv.Listener.Addr().String(), nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, resp, err := websocket.Dial(ctx, h.url("/"), nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("dial = %v, response %v; want the upstream's 403", err, resp)
	}
	if !h.stats.Up.Load() || !h.stats.UpstreamUp.Load() {
		t.Errorf("an upstream that answers: Up %v, UpstreamUp %v", h.stats.Up.Load(), h.stats.UpstreamUp.Load())
	}
}

func TestShutdownClosesBothSidesWith1001(t *testing.T) {
	serverErr := make(chan error, 1)
	up := goServer(t, nil, func(r *http.Request, c *websocket.Conn) {
		_, _, err := c.Read(context.Background())
		serverErr <- err
	})
	h := startTap(t, up, nil, nil)
	c := dial(t, h.url("/"), nil)
	clientErr := make(chan error, 1)
	go func() {
		_, _, err := c.Read(context.Background())
		clientErr <- err
	}()
	eventually(t, "connection registered", func() bool {
		h.p.mu.Lock()
		defer h.p.mu.Unlock()
		return len(h.p.conns) == 1
	})
	h.stop(t)
	if code := websocket.CloseStatus(<-clientErr); code != websocket.StatusGoingAway {
		t.Errorf("client saw %v, want 1001", code)
	}
	if code := websocket.CloseStatus(<-serverErr); code != websocket.StatusGoingAway {
		t.Errorf("server saw %v, want 1001", code)
	}
	if !hasConnClosed(h.mirror()) {
		t.Error("no ConnClosed for a connection closed by shutdown")
	}
	if h.stats.Up.Load() {
		t.Error("Stats.Up after Run returned")
	}
}

func TestConfigValidateJoinsProblems(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	bad := Config{Listen: "nope", Upstream: "http://x", QueueSize: 0, MaxMessageBytes: -1}
	err := bad.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{"name", "listen", "scheme", "queue_size", "max_message_bytes", "dial_timeout", "close_timeout"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error does not name %s: %v", s, err)
		}
	}
	if _, err := New(bad, nil, nil); err == nil {
		t.Error("New accepted a bad config")
	}
}

func TestParseUpstream(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want upstream
	}{
		{"ws://127.0.0.1:18092", upstream{addr: "127.0.0.1:18092", host: "127.0.0.1:18092", url: "ws://127.0.0.1:18092"}},
		{"ws://agent/", upstream{addr: "agent:80", host: "agent", url: "ws://agent/"}},
		{"wss://agent/base/", upstream{tls: true, addr: "agent:443", host: "agent", prefix: "/base", url: "wss://agent/base/"}},
	} {
		got, err := parseUpstream(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(upstream{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}
