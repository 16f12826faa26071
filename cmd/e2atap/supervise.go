package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"regexp"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/e2atap/e2atap/tap"
)

// Taps are isolated (DESIGN.md, "Taps are isolated"): every tap runs under
// its own supervisor, and nothing a tap does stops another tap, the engine
// or the process. A tap that cannot be built or whose Run returns before
// the process stops is down (Stats.Up false), counted
// (e2atap_tap_errors_total{reason="start"}, or "other" when it had been
// running), logged when it starts failing and when it recovers (in
// between at most once a minute) and retried with exponential backoff and
// jitter until the process stops.

// backoff is the retry schedule of a failed tap.
type backoff struct {
	Initial, Max time.Duration
	// Settle is how long a new attempt must run (or report Up) to count as
	// recovered: the backoff starts again from Initial after that.
	Settle time.Duration
	// LogEvery rate-limits the "still failing" log of a tap. (An
	// upstream's outage is logged by the tap itself, which knows the
	// address and the error: ws, nats and kafka each log it once when it
	// begins and once when it ends; the supervisor only shows it in
	// /healthz and the metrics.)
	LogEvery time.Duration
}

// defaultBackoff: 1 s doubling to 60 s.
var defaultBackoff = backoff{Initial: time.Second, Max: time.Minute, Settle: 5 * time.Second, LogEvery: time.Minute}

// delay is the wait before retry n (0 first), with ±20 % jitter so that
// the taps of many pods do not retry a shared broker in step.
func (b backoff) delay(n int) time.Duration {
	d := b.Initial
	for i := 0; i < n && d < b.Max; i++ {
		d *= 2
	}
	d = min(d, b.Max)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// errStoppedItself: a tap's Run returned nil while the process runs.
var errStoppedItself = errors.New("the tap stopped by itself")

// tapSupervisor runs one tap for the life of the process (or until its
// context ends, which is how a reload would stop one tap alone).
type tapSupervisor struct {
	name, typ   string
	hasUpstream bool
	stats       *tap.Stats
	log         *slog.Logger
	policy      backoff
	// build makes a new source (a tap's Run is not always restartable:
	// the ws proxy listens in New and serves once).
	build func() (tap.Source, error)
	emit  tap.EmitFunc
	// started is called each time an attempt starts running.
	started func(ctx context.Context)
	// stopped is called each time an attempt ends (failed or stopped).
	stopped func()

	running atomic.Bool                // an attempt is running: built, Run entered, not returned
	cur     atomic.Pointer[tap.Source] // the running attempt's source (nil between attempts)

	mu           sync.Mutex
	failures     int       // consecutive failed attempts (0: healthy)
	failingSince time.Time // first failure of this run of failures
	lastErr      string    // redacted
	lastErrAt    time.Time
	lastLog      time.Time
	retryAt      time.Time
}

// tapHealth is what /healthz shows of a tap.
type tapHealth struct {
	Name         string            `json:"name"`
	Type         string            `json:"type"`
	State        string            `json:"state"` // ok, failing, starting, upstream_down, not_up
	Running      bool              `json:"running"`
	Up           bool              `json:"up"`
	UpstreamUp   *bool             `json:"upstream_up,omitempty"`
	Failures     int               `json:"failures,omitempty"`
	FailingSince *time.Time        `json:"failing_since,omitempty"`
	RetryAt      *time.Time        `json:"retry_at,omitempty"`
	LastError    string            `json:"last_error,omitempty"`
	LastErrorAt  *time.Time        `json:"last_error_at,omitempty"`
	Errors       map[string]uint64 `json:"errors,omitempty"`
	Drops        map[string]uint64 `json:"drops,omitempty"`
}

// run supervises until ctx is done. first/firstErr is the first build,
// made by newSidecar so that a ws tap's address is known before Run.
func (s *tapSupervisor) run(ctx context.Context, first tap.Source, firstErr error) {
	src, err := first, firstErr
	attempt := 0
	for {
		recovered := false
		if err == nil {
			recovered, err = s.runOnce(ctx, src)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errStoppedItself
		}
		if recovered {
			attempt = 0
		}
		wait := s.policy.delay(attempt)
		attempt++
		s.failed(err, recovered, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		src, err = s.build()
	}
}

// runOnce runs one attempt until its Run returns. It reports whether the
// attempt recovered (ran for Settle or reported Up) before it ended.
func (s *tapSupervisor) runOnce(ctx context.Context, src tap.Source) (recovered bool, err error) {
	s.running.Store(true)
	s.cur.Store(&src)
	if s.started != nil {
		s.started(ctx)
	}
	done := make(chan error, 1)
	go func() {
		// A panic on Run's own goroutine is this tap's failure, not the
		// process's: the relay of the other taps goes on. (Goroutines a
		// tap starts itself are its own to guard.)
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("tap panicked", "panic", redactSecrets(fmt.Sprint(r)), "stack", redactSecrets(string(debug.Stack())))
				done <- fmt.Errorf("panic: %v", r)
			}
		}()
		done <- src.Run(ctx, s.emit)
	}()
	defer func() {
		s.running.Store(false)
		s.cur.Store(nil)
		if s.stopped != nil {
			s.stopped()
		}
	}()
	settle := time.NewTimer(s.policy.Settle)
	defer settle.Stop()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return recovered, err
		case <-settle.C:
			if !recovered {
				recovered = true
				s.recovered()
			}
		case <-tick.C:
			if !recovered && s.stats.Up.Load() {
				recovered = true
				s.recovered()
			}
		}
	}
}

// source is the source of the attempt running now (nil: none runs).
func (s *tapSupervisor) source() tap.Source {
	if p := s.cur.Load(); p != nil {
		return *p
	}
	return nil
}

// failed records a failed attempt: down, counted, logged (rate-limited).
func (s *tapSupervisor) failed(err error, hadRun bool, wait time.Duration) {
	s.stats.Up.Store(false)
	reason := tap.ErrStart
	if hadRun {
		reason = tap.ErrOther
	}
	s.stats.Error(reason)
	msg := redactSecrets(err.Error())
	now := time.Now()
	s.mu.Lock()
	first := s.failures == 0
	s.failures++
	if first {
		s.failingSince = now
	}
	s.lastErr, s.lastErrAt, s.retryAt = msg, now, now.Add(wait)
	n, since := s.failures, s.failingSince
	logNow := first || now.Sub(s.lastLog) >= s.policy.LogEvery
	if logNow {
		s.lastLog = now
	}
	s.mu.Unlock()
	switch {
	case first:
		s.log.Error("tap failed; it is down and will be retried", "err", msg, "reason", tap.ErrorReasonNames[reason], "retry_in", wait.Round(time.Millisecond).String())
	case logNow:
		s.log.Warn("tap still failing", "err", msg, "failures", n, "failing_for", now.Sub(since).Round(time.Second).String(), "retry_in", wait.Round(time.Millisecond).String())
	default:
		s.log.Debug("tap failed again", "err", msg, "failures", n, "retry_in", wait.Round(time.Millisecond).String())
	}
}

// recovered ends a run of failures.
func (s *tapSupervisor) recovered() {
	s.mu.Lock()
	n, since := s.failures, s.failingSince
	s.failures = 0
	s.retryAt = time.Time{}
	s.mu.Unlock()
	if n > 0 {
		s.log.Info("tap recovered", "failures", n, "down_for", time.Since(since).Round(time.Millisecond).String())
	}
}

func (s *tapSupervisor) errorCounts() map[string]uint64 {
	out := map[string]uint64{}
	for r := range s.stats.Errors {
		if n := s.stats.Errors[r].Load(); n > 0 {
			out[tap.ErrorReasonNames[r]] = n
		}
	}
	return out
}

// health is the tap's /healthz entry.
func (s *tapSupervisor) health() tapHealth {
	h := tapHealth{Name: s.name, Type: s.typ, Running: s.running.Load(), Up: s.stats.Up.Load(), Errors: s.errorCounts(), Drops: map[string]uint64{}}
	for r := range s.stats.Drops {
		if n := s.stats.Drops[r].Load(); n > 0 {
			h.Drops[tap.DropReasonNames[r]] = n
		}
	}
	if s.hasUpstream {
		u := s.stats.UpstreamUp.Load()
		h.UpstreamUp = &u
	}
	s.mu.Lock()
	h.Failures, h.LastError = s.failures, s.lastErr
	if s.failures > 0 {
		since, retry := s.failingSince, s.retryAt
		h.FailingSince, h.RetryAt = &since, &retry
	}
	if !s.lastErrAt.IsZero() {
		at := s.lastErrAt
		h.LastErrorAt = &at
	}
	s.mu.Unlock()
	switch {
	case !h.Running && h.Failures > 0:
		h.State = "failing"
	case !h.Running:
		h.State = "starting"
	case h.UpstreamUp != nil && !*h.UpstreamUp:
		h.State = "upstream_down"
	case !h.Up:
		h.State = "not_up"
	default:
		h.State = "ok"
	}
	return h
}

// Credentials in error texts: a URL's user information (nats://user:pass@,
// nats://token@) and secret-looking query parameters. Compiled when first
// used, not at every command's start.
var (
	urlUserinfo = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@"']+@`)
	})
	secretQuery = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([?&;](?:[a-z0-9_-]*(?:pass|token|secret|key|auth|sig|credential)[a-z0-9_-]*)=)[^&;\s"']*`)
	})
)

// redactSecrets masks credentials in a text that is logged or served
// (errors from client libraries often quote the URL they were given).
func redactSecrets(s string) string {
	s = urlUserinfo().ReplaceAllString(s, "${1}******@")
	return secretQuery().ReplaceAllString(s, "${1}******")
}
