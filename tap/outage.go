package tap

import (
	"log/slog"
	"sync"
	"time"
)

// OutageEvery is how often a reminder is logged while an outage lasts.
const OutageEvery = time.Minute

// Outage turns a broker client's connection events into the log an
// operator reads: one line when the server becomes unreachable, one when it is back
// (with how long it was away and how many attempts failed), and at most one
// reminder every OutageEvery in between. Safe for concurrent use.
type Outage struct {
	log  *slog.Logger
	what string // "nats server", "kafka broker"
	addr string // redacted: no credentials
	now  func() time.Time

	mu       sync.Mutex
	since    time.Time // zero: reachable
	attempts int       // failed attempts since the outage began
	lastLog  time.Time
}

// NewOutage logs for the broker addr (already without credentials).
func NewOutage(log *slog.Logger, what, addr string) *Outage {
	return &Outage{log: log, what: what, addr: addr, now: time.Now}
}

// Failed records a failed attempt, or the loss of a connection.
func (o *Outage) Failed(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if o.since.IsZero() {
		o.since, o.attempts, o.lastLog = now, 1, now
		o.log.Warn(o.what+" unreachable", "addr", o.addr, "err", err)
		return
	}
	o.attempts++
	if now.Sub(o.lastLog) >= OutageEvery {
		o.lastLog = now
		o.log.Warn(o.what+" still unreachable", "addr", o.addr, "err", err,
			"for", now.Sub(o.since).Round(time.Millisecond).String(), "failed_attempts", o.attempts)
	}
}

// Reachable records a successful connection; addr is where (without
// credentials; "" for the address the Outage was made with).
func (o *Outage) Reachable(addr string) {
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
