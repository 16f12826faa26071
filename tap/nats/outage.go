package natstap

import (
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"
)

// outageEvery is how often a reminder is logged while an outage lasts.
const outageEvery = time.Minute

// outage turns the client's connection events into the log an operator
// reads: one line when the server becomes unreachable, one when it is back
// (with how long it was away and how many attempts failed), and at most one
// reminder every outageEvery in between. Safe for concurrent use.
type outage struct {
	log  *slog.Logger
	what string // "nats server"
	addr string // redacted: no credentials
	now  func() time.Time

	mu       sync.Mutex
	since    time.Time // zero: reachable
	attempts int       // failed attempts since the outage began
	lastLog  time.Time
}

func newOutage(log *slog.Logger, what, addr string) *outage {
	return &outage{log: log, what: what, addr: addr, now: time.Now}
}

// failed records a failed attempt, or the loss of a connection.
func (o *outage) failed(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if o.since.IsZero() {
		o.since, o.attempts, o.lastLog = now, 1, now
		o.log.Warn(o.what+" unreachable", "addr", o.addr, "err", err)
		return
	}
	o.attempts++
	if now.Sub(o.lastLog) >= outageEvery {
		o.lastLog = now
		o.log.Warn(o.what+" still unreachable", "addr", o.addr, "err", err,
			"for", now.Sub(o.since).Round(time.Millisecond).String(), "failed_attempts", o.attempts)
	}
}

// reachable records a successful connection; addr is where (redacted).
func (o *outage) reachable(addr string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.since.IsZero() {
		return
	}
	if addr == "" {
		addr = o.addr
	}
	d := o.now().Sub(o.since)
	o.log.Info(o.what+" reachable again", "addr", addr,
		"outage", d.Round(time.Millisecond).String(), "outage_seconds", d.Seconds(), "failed_attempts", o.attempts)
	o.since, o.attempts = time.Time{}, 0
}

// redactURLs returns a server URL, or a comma-separated list of them, with
// any user, password or token removed.
func redactURLs(s string) string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		p = strings.TrimSpace(p)
		u, err := url.Parse(p)
		switch {
		case err == nil && u.Host != "":
			u.User = nil
			parts[i] = u.String()
		case strings.Contains(p, "@"):
			// Not a URL we can parse (host:port with credentials, say):
			// keep only what follows the last '@'.
			parts[i] = p[strings.LastIndexByte(p, '@')+1:]
		default:
			parts[i] = p
		}
	}
	return strings.Join(parts, ",")
}
