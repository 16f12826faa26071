package ws

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"time"

	"github.com/e2atap/e2atap/tap"
	"github.com/e2atap/e2atap/tap/tlsfiles"
)

// Config is one WebSocket tap.
type Config struct {
	// Name is the tap's name: Message.Tap and the metric label.
	Name string
	// Listen is where the Gateway connects (host:port).
	Listen string
	// Upstream is the AgentServer, ws:// or wss://. A path in it is put in
	// front of the path the client asked for.
	Upstream string
	// QueueSize is the capacity of the mirror queue, in messages, shared by
	// all connections. When it is full, mirror copies are dropped and
	// counted (tap.DropQueueFull); the relay never waits.
	QueueSize int
	// MaxMessageBytes is the largest message (after inflating) that is
	// mirrored. Bigger messages are relayed all the same; their copy is
	// dropped (tap.DropOversize). The default is the reference
	// AgentServer's max_size, 8 MiB.
	MaxMessageBytes int
	// DialTimeout bounds connecting to the upstream (TCP, and TLS for
	// wss://). The default is longer than a client's own timeout (the
	// reference Gateway's websockets client gives the whole opening
	// handshake 10 s), so that the client, not the tap, decides when to give
	// up, as it would directly: a loaded upstream whose listen backlog
	// overflows answers a SYN only on its retransmission, 1 s, 3 s, 7 s
	// later.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the wait for a client's request head, and for
	// the upstream's answer to it once connected. The default is longer
	// than common clients' (gorilla's 45 s), for the same reason; a
	// client that gives up earlier closes its connection, and the tap then
	// stops waiting for the upstream at once.
	HandshakeTimeout time.Duration
	// Budget is the byte budget that mirror copies draw on (nil:
	// unlimited): every copy is charged for its bytes while it waits for the
	// engine, and so is a fragmented message while it is being assembled.
	// A copy that does not fit is dropped (tap.DropBudget); the relay never
	// waits for it.
	Budget *tap.Budget
	// TLS, when its files are named, serves the listener over TLS (the
	// Gateway connects with wss://), the certificate reloaded when the
	// files are renewed. The upstream is independent: ws:// or wss://.
	TLS tlsfiles.Files
	// CloseTimeout bounds the closing handshakes when Run stops, and how long
	// a connection half-closed by one peer after its close frame waits for
	// the other (a half-close without a close frame waits as long as the
	// other peer goes on).
	CloseTimeout time.Duration
	// BehindAfter is how long a write to a peer that does not read may
	// block before the connection is told behind (Message.Progress): what
	// the other peer sends meanwhile waits unread in the sockets, so the
	// connection's streams must not go idle. The connection is looked at
	// twice in that time. The sidecar sets it to a quarter of
	// streams.idle_timeout (at most 1 s, at least 50 ms); zero is 1 s.
	BehindAfter time.Duration

	// Health probing (tests shorten it): the first and longest pause
	// between probes of an unreachable upstream, and how long it must keep
	// answering before the outage is logged as over. Zero: the defaults.
	probeMin, probeMax, settle time.Duration
}

// DefaultConfig is the reference deployment: Gateway → :19092 → AgentServer
// on 127.0.0.1:18092.
func DefaultConfig() Config {
	return Config{
		Name:             "agent-ws",
		Listen:           "127.0.0.1:19092",
		Upstream:         "ws://127.0.0.1:18092",
		QueueSize:        4096,
		MaxMessageBytes:  8 << 20,
		DialTimeout:      30 * time.Second,
		HandshakeTimeout: 60 * time.Second,
		CloseTimeout:     5 * time.Second,
		BehindAfter:      time.Second,
	}
}

// Validate reports every problem of the configuration at once.
func (c Config) Validate() error {
	var errs []error
	if c.Name == "" {
		errs = append(errs, errors.New("ws: name is empty"))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		errs = append(errs, fmt.Errorf("ws: listen %q: %w", c.Listen, err))
	}
	if _, err := parseUpstream(c.Upstream); err != nil {
		errs = append(errs, err)
	}
	if c.QueueSize <= 0 {
		errs = append(errs, fmt.Errorf("ws: queue_size %d: must be positive", c.QueueSize))
	}
	if c.MaxMessageBytes <= 0 {
		errs = append(errs, fmt.Errorf("ws: max_message_bytes %d: must be positive", c.MaxMessageBytes))
	}
	if c.DialTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ws: dial_timeout %v: must be positive", c.DialTimeout))
	}
	if c.HandshakeTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ws: handshake_timeout %v: must be positive", c.HandshakeTimeout))
	}
	if c.CloseTimeout <= 0 {
		errs = append(errs, fmt.Errorf("ws: close_timeout %v: must be positive", c.CloseTimeout))
	}
	if c.BehindAfter < 0 {
		errs = append(errs, fmt.Errorf("ws: behind_after %v: must not be negative", c.BehindAfter))
	}
	return errors.Join(errs...)
}

// upstream is the parsed Config.Upstream.
type upstream struct {
	tls    bool
	addr   string // host:port to dial
	host   string // the Host header, as written in the URL
	prefix string // path put in front of the client's request target
	url    string // as logged: scheme, host and path only (never userinfo)
}

func parseUpstream(s string) (upstream, error) {
	u, err := url.Parse(s)
	if err != nil {
		// url.Error quotes the URL: print the URL without userinfo, and
		// its reason only when it cannot quote a part of one.
		return upstream{}, fmt.Errorf("ws: upstream %q: %s", tap.RedactURL(s), tap.URLReason(s, err))
	}
	s = u.Redacted()
	var up upstream
	port := ""
	switch u.Scheme {
	case "ws":
		port = "80"
	case "wss":
		up.tls, port = true, "443"
	default:
		return upstream{}, fmt.Errorf("ws: upstream %q: scheme must be ws or wss", tap.RedactURL(s))
	}
	if u.Hostname() == "" {
		return upstream{}, fmt.Errorf("ws: upstream %q: no host", tap.RedactURL(s))
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return upstream{}, fmt.Errorf("ws: upstream %q: only scheme, host, port and path are allowed", tap.RedactURL(s))
	}
	if u.Port() != "" {
		port = u.Port()
	}
	up.addr = net.JoinHostPort(u.Hostname(), port)
	up.url = (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
	up.host = u.Host
	if p := u.EscapedPath(); p != "/" {
		up.prefix = p
		for len(up.prefix) > 0 && up.prefix[len(up.prefix)-1] == '/' {
			up.prefix = up.prefix[:len(up.prefix)-1]
		}
	}
	return up, nil
}
