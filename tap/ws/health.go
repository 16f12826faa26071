package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// Upstream health: Stats.UpstreamUp, a metric and /healthz detail, never
// readiness (Stats.Up is the listener alone). A connection whose dial or
// handshake fails marks the upstream down; the tap then probes it by
// itself, a TCP connect with backoff, so that it learns of the recovery
// even when no client comes. A connect ends only an outage that began
// with a failed dial: one that began with a handshake the upstream did
// not answer (a hung server, whose kernel still accepts) ends when a
// client's handshake is answered. An outage is logged twice: when it begins and
// once it has ended and stayed over for healthSettle; failures in between
// (of connections or probes) are counted, not logged, and an outage that
// begins again within healthSettle of its end is the same outage.
const (
	probeMin     = 250 * time.Millisecond
	probeMax     = 10 * time.Second
	healthSettle = 5 * time.Second
)

type health struct {
	stats *tap.Stats
	log   logger
	up    upstream
	dial  time.Duration

	probeMin, probeMax, settle time.Duration

	mu    sync.Mutex
	state healthState
	cause string // "dial" or "handshake": what began the outage
	err   error  // the first failure's
	since time.Time
	back  time.Time // when the upstream answered again (settling)
	// Failed dials and handshakes of connections during this outage, and
	// failed probes.
	failed, probesFailed uint64
	wake                 chan struct{} // capacity 1: the state changed

	lastProbeErr error // run's goroutine only
}

type healthState uint8

const (
	healthUnknown  healthState = iota // before the first probe or dial
	healthUp                          // answering, no outage open
	healthDown                        // an outage is open
	healthSettling                    // answered again; the outage ends after settle
)

// logger is the part of slog.Logger the health reports use.
type logger interface {
	Warn(msg string, args ...any)
	Info(msg string, args ...any)
}

func newHealth(stats *tap.Stats, log logger, up upstream, cfg Config) *health {
	h := &health{stats: stats, log: log, up: up, dial: cfg.DialTimeout,
		probeMin: probeMin, probeMax: probeMax, settle: healthSettle, wake: make(chan struct{}, 1)}
	if cfg.probeMin > 0 {
		h.probeMin, h.probeMax, h.settle = cfg.probeMin, cfg.probeMax, cfg.settle
	}
	return h
}

func (h *health) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// fail records a connection's failed dial (cause "dial") or handshake
// ("handshake"). It never logs except at the start of an outage.
func (h *health) fail(cause string, err error) {
	if cause == "dial" {
		h.stats.Error(tap.ErrDial)
	} else {
		h.stats.Error(tap.ErrHandshake)
	}
	h.down(cause, err, false)
}

func (h *health) down(cause string, err error, probe bool) {
	if exhausted(err) {
		// This process is out of descriptors (a probe or a dial could not
		// even make a socket): the tap's own fault, never an outage of the
		// upstream (fd_test.go).
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if probe {
		h.probesFailed++
	} else {
		h.failed++
	}
	h.stats.UpstreamUp.Store(false)
	switch h.state {
	case healthDown:
		return
	case healthSettling:
		h.state = healthDown // the same outage goes on
		h.poke()
		return
	}
	h.state, h.cause, h.err, h.since = healthDown, cause, err, time.Now()
	h.log.Warn("ws: upstream outage begins: clients get 502 (504 when it connects but does not answer) until it answers; probing it",
		"upstream", h.up.url, "cause", cause, "err", err)
	h.poke()
}

// hung says whether the open outage began with a handshake the upstream
// did not answer (it connected): a probe's connect cannot end it.
func (h *health) hung() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state == healthDown && h.cause == "handshake"
}

// answered records that the upstream answered (a handshake's response, or
// a probe's connect).
func (h *health) answered() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stats.UpstreamUp.Store(true)
	switch h.state {
	case healthUnknown:
		h.state = healthUp
	case healthDown:
		h.state, h.back = healthSettling, time.Now()
		h.poke()
	}
}

// run probes the upstream while an outage is open and closes outages that
// have settled; it returns when ctx ends. The first probe is at once, so
// that UpstreamUp is known before any client comes.
func (h *health) run(ctx context.Context) {
	if h.probe(ctx) {
		h.answered()
	} else if ctx.Err() == nil {
		h.down("dial", h.lastProbeErr, true)
	}
	backoff := h.probeMin
	for {
		h.mu.Lock()
		state, back := h.state, h.back
		h.mu.Unlock()
		var wait <-chan time.Time
		switch state {
		case healthDown:
			wait = time.After(backoff)
		case healthSettling:
			backoff = h.probeMin
			wait = time.After(time.Until(back.Add(h.settle)))
		}
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
			continue
		case <-wait:
		}
		switch state {
		case healthDown:
			if h.probe(ctx) {
				if h.hung() {
					// It connects but did not answer a handshake: a
					// connect says nothing of that (a hung server's
					// kernel still accepts). A client's answered
					// handshake ends this outage.
					continue
				}
				h.answered()
				continue
			}
			if ctx.Err() != nil {
				return
			}
			h.down("dial", h.lastProbeErr, true)
			backoff = min(2*backoff, h.probeMax)
		case healthSettling:
			h.mu.Lock()
			if h.state == healthSettling && time.Since(h.back) >= h.settle {
				h.log.Info("ws: upstream answers again: outage over",
					"upstream", h.up.url, "cause", h.cause, "outage", h.back.Sub(h.since).Round(time.Millisecond),
					"failed_connections", h.failed, "failed_probes", h.probesFailed)
				h.state, h.failed, h.probesFailed, h.err = healthUp, 0, 0, nil
			}
			h.mu.Unlock()
		}
	}
}

// probe connects to the upstream (TCP, and TLS for wss://) and hangs up. It
// sends nothing: the upstream sees a connection that closes, as from a TCP
// health check, and no request.
func (h *health) probe(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, h.dial)
	defer cancel()
	nc, err := dialUpstream(ctx, h.up)
	h.lastProbeErr = err
	if err != nil {
		return false
	}
	nc.Close()
	return true
}

// exhausted reports an error of this process running out of descriptors
// or buffers: the tap's own fault, never the upstream's.
func exhausted(err error) bool {
	return errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS)
}

// dialUpstream connects to the upstream, with TLS for wss://.
func dialUpstream(ctx context.Context, up upstream) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", up.addr)
	if err != nil {
		return nil, err
	}
	if up.tls {
		host, _, _ := net.SplitHostPort(up.addr)
		tc := tls.Client(nc, &tls.Config{ServerName: host, NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, err
		}
		nc = tc
	}
	return nc, nil
}
