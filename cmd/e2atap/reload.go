package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/tap/ws"
	"github.com/e2atap/e2atap/validate"
)

// Reload, not restart (DESIGN.md). SIGHUP, or a change of the configuration
// file's content, loads the file again. An invalid file is logged (every
// problem) and the running configuration kept. A valid one is applied:
//
//   - profile and rules: the engines take the new severities for
//     everything read after (validate.Live.SetProfile);
//   - outputs: the findings and record logs are reopened if their settings
//     changed;
//   - taps: a tap whose settings did not change keeps running (a ws tap
//     keeps its connections); removed and changed taps stop, new and
//     changed taps start. A changed ws tap is a drain, not a cut: its
//     successor listens first, then the old one stops accepting and
//     relays its open connections to their end (retireTap);
//   - listen and streams take effect at the next start (said in the log).
//
// The file is polled by content hash, not watched: Kubernetes updates a
// mounted ConfigMap by swapping a symlink of the directory, which events
// on the file itself do not see.

// defaultReloadInterval is how often the configuration file is read for a
// change; --reload-interval sets it (0: only SIGHUP).
const defaultReloadInterval = 3 * time.Second

// reloadSettle is how long a changed file's content must hold still
// before it is applied. A file written in place (an editor, `cat >`, a
// configuration tool that does not rename) can be read half-written: a
// prefix that is valid YAML with a tap or an output fewer was applied at
// once, and stopped that tap (a ws tap's Gateways cut off) until the next
// poll; a prefix that is not valid was logged as rejected. A ConfigMap
// swap or a rename is whole at once and only waits this long.
const reloadSettle = time.Second

// outputs are the findings and record logs of one configuration. A
// reload that changes them opens new ones, switches to them and closes
// the old ones once every shard is past them.
type outputs struct {
	cfg  OutputsConfig
	rec  *jsonlog.Writer
	find *jsonlog.FindingWriter
	red  *jsonlog.Redactor // of the record log when there is one: fingerprints join
}

// outputsRedactor redacts with the Redactor of the outputs running now
// (they change at a reload), for the outputs that outlive a reload.
type outputsRedactor struct{ p *atomic.Pointer[outputs] }

func (r outputsRedactor) MaskText(dst, s []byte) []byte { return r.p.Load().red.MaskText(dst, s) }

func (r outputsRedactor) Redact(dst, rec []byte) ([]byte, []string, error) {
	return r.p.Load().red.Redact(dst, rec)
}

func openOutputs(cfg OutputsConfig, stdout io.Writer) (*outputs, error) {
	o := &outputs{cfg: cfg}
	red := cfg.Log.Redactor()
	var err error
	if cfg.Log.Path != "" {
		if o.rec, err = jsonlog.NewWriter(cfg.Log); err != nil {
			return nil, fmt.Errorf("outputs.log: %w", err)
		}
		red = o.rec.Redactor()
	}
	o.red = red
	switch p := cfg.Findings.Path; p {
	case "":
	case "-":
		o.find = jsonlog.NewFindingWriterTo(stdout, red)
	default:
		if o.find, err = jsonlog.NewFindingWriter(p, red); err != nil {
			o.close()
			return nil, fmt.Errorf("outputs.findings: %w", err)
		}
	}
	if o.rec != nil && o.find != nil {
		o.rec.FlushFirst(o.find)
	}
	return o, nil
}

// close flushes, fsyncs and closes (findings first).
func (o *outputs) close() error {
	var errs []error
	if o.find != nil {
		errs = append(errs, o.find.Close())
	}
	if o.rec != nil {
		errs = append(errs, o.rec.Close())
	}
	return errors.Join(errs...)
}

// outputSink is the validate.Sink of the current outputs.
type outputSink struct{ p *atomic.Pointer[outputs] }

func (o outputSink) Record(ri *validate.RecordInfo) {
	if w := o.p.Load().rec; w != nil {
		w.Record(ri)
	}
}

func (o outputSink) Finding(f *validate.Finding) {
	if w := o.p.Load().find; w != nil {
		w.Finding(f)
	}
}

// LossMark marks a loss in the record log (validate.LossMarker).
func (o outputSink) LossMark(in *validate.Input) {
	if w := o.p.Load().rec; w != nil {
		w.LossMark(in)
	}
}

// OpenLeft marks the streams a run left open in the record log
// (validate.OpenMarker).
func (o outputSink) OpenLeft() {
	if w := o.p.Load().rec; w != nil {
		w.OpenLeft()
	}
}

func (outputSink) StreamStart(*validate.StreamInfo) {}
func (outputSink) StreamEnd(*validate.StreamInfo)   {}

// reloadMetrics say which configuration is loaded and when.
type reloadMetrics struct {
	ok   prometheus.Gauge
	when prometheus.Gauge
	info *prometheus.GaugeVec
	// reloads counts reloads by result, so that a file rejected and
	// fixed between two scrapes still shows (the gauge is 1 again).
	reloads *prometheus.CounterVec
}

func newReloadMetrics(reg prometheus.Registerer) *reloadMetrics {
	m := &reloadMetrics{
		ok: prometheus.NewGauge(prometheus.GaugeOpts{Name: "e2atap_config_last_reload_successful",
			Help: "Whether the last configuration (re)load succeeded (1) or was rejected, the running configuration kept (0)."}),
		when: prometheus.NewGauge(prometheus.GaugeOpts{Name: "e2atap_config_last_reload_success_timestamp_seconds",
			Help: "When the configuration was last loaded successfully, in seconds since the epoch."}),
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "e2atap_config_info",
			Help: "The configuration in use: hash is a short SHA-256 of the configuration file's content."}, []string{"hash"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "e2atap_config_reloads_total",
			Help: "Configuration reloads (SIGHUP or a changed file) by result: success, or failure (rejected or not fully applied; the running configuration kept)."}, []string{"result"}),
	}
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	reg.MustRegister(m.ok, m.when, m.info, m.reloads)
	return m
}

func (m *reloadMetrics) loaded(hash string, at time.Time) {
	m.ok.Set(1)
	m.when.Set(float64(at.UnixNano()) / 1e9)
	m.info.Reset()
	m.info.WithLabelValues(hash).Set(1)
}

// configHash is the short hex hash of a configuration file's content.
func configHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// reloadLoop reloads on every signal from hup and whenever the file's
// content hash changes and then holds still for reloadSettle, until ctx
// is done.
func (s *sidecar) reloadLoop(ctx context.Context, hup <-chan os.Signal, every time.Duration) {
	var tick <-chan time.Time
	if every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	var (
		settled  = time.NewTimer(0)
		settling string // the changed content's hash, waiting to hold still
		// The file could not be read since unreadable (zero: it could);
		// told once it lasts reloadSettle (a ConfigMap's swap is a
		// moment), and once more when it can be read again.
		unreadable time.Time
		told       bool
	)
	settled.Stop()
	defer settled.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			// Sent by whoever wrote the file, once it is written.
			settling = ""
			settled.Stop()
			s.reload(ctx, "SIGHUP", nil)
		case <-tick:
			if settling != "" {
				continue // settled decides
			}
			b, err := os.ReadFile(s.cfgPath)
			if err != nil {
				// A ConfigMap update swaps the file: read it next time.
				// One that stays away (deleted, unmounted, its
				// permissions changed) is told once: a change written
				// later would otherwise be the first anyone heard of it.
				if unreadable.IsZero() {
					unreadable = time.Now()
				} else if !told && time.Since(unreadable) >= reloadSettle {
					told = true
					s.logger.Warn("the configuration file cannot be read; running on the one loaded last, and reading it again at every poll", "config", s.cfgPath, "err", err)
				}
				continue
			}
			if told {
				s.logger.Info("the configuration file can be read again", "config", s.cfgPath, "for", time.Since(unreadable).Round(time.Millisecond).String())
			}
			unreadable, told = time.Time{}, false
			if h := configHash(b); h != s.cfgHash && h != s.badHash {
				settling = h
				settled.Reset(reloadSettle)
			}
		case <-settled.C:
			b, err := os.ReadFile(s.cfgPath)
			if err != nil {
				settling = ""
				continue
			}
			switch h := configHash(b); {
			case h == s.cfgHash || h == s.badHash:
				settling = "" // changed back
			case h != settling:
				settling = h // still being written
				settled.Reset(reloadSettle)
			default:
				settling = ""
				s.reload(ctx, "file changed", b)
			}
		}
	}
}

// yamlValue matches a value that yaml quotes in its errors: it may be a
// secret put in the wrong key, and is left out of the log.
// Compiled when first used, not at every command's start.
var yamlValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`[^`]*`") })

// reload applies the configuration file's content b (nil: the file is
// read now), or logs why not. It runs on the reload goroutine only.
func (s *sidecar) reload(ctx context.Context, why string, b []byte) {
	log := s.logger.With("config", s.cfgPath, "trigger", why)
	var err error
	if b == nil {
		b, err = os.ReadFile(s.cfgPath)
	}
	var cfg Config
	if err == nil {
		// Every problem at once, and what new outputs need of the machine.
		var probs Problems
		if cfg, probs = parseChecked(b, os.Getenv); len(probs) == 0 && !reflect.DeepEqual(cfg.Outputs, s.cfg.Outputs) {
			probs = cfg.checkHost(atStart)
		}
		err = probs.errors().err()
	}
	hash := configHash(b)
	if err != nil {
		s.badHash = hash
		s.reloadM.ok.Set(0)
		s.reloadM.reloads.WithLabelValues("failure").Inc()
		msg := yamlValue().ReplaceAllString(err.Error(), "`…`")
		log.Error("configuration rejected; the running configuration is kept", "hash", hash, "problems", strings.Split(msg, "\n"))
		return
	}
	if err := s.apply(ctx, cfg, log); err != nil {
		s.badHash = hash
		s.reloadM.ok.Set(0)
		s.reloadM.reloads.WithLabelValues("failure").Inc()
		log.Error("configuration not fully applied", "hash", hash, "err", err)
		return
	}
	s.cfgHash, s.badHash = hash, ""
	now := time.Now()
	s.loadedAt.Store(now.UnixNano()) // /readyz and /healthz said the start's time for ever
	s.reloadM.loaded(hash, now)
	s.reloadM.reloads.WithLabelValues("success").Inc()
	log.Info("configuration reloaded", "hash", hash, "taps", len(cfg.Taps), "profile", cfg.Profile)
}

// apply makes cfg (valid) the running configuration.
func (s *sidecar) apply(ctx context.Context, cfg Config, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	old := s.cfg
	if cfg.Listen != old.Listen {
		log.Warn("listen changed: it takes effect at the next start", "running", old.Listen, "configured", cfg.Listen)
		cfg.Listen = old.Listen
	}
	if cfg.Streams != old.Streams {
		log.Warn("streams changed: they take effect at the next start")
		cfg.Streams = old.Streams
	}

	// The successors of changed ws taps first, listening: one that cannot
	// (its new address taken) rejects the reload with nothing changed,
	// the running tap still accepting. Then the outputs: opening them is
	// what else can fail.
	succ, err := s.buildSuccessors(cfg.Taps)
	if err != nil {
		return err
	}
	var next *outputs
	if !reflect.DeepEqual(cfg.Outputs, old.Outputs) {
		if next, err = openOutputs(cfg.Outputs, s.stdout); err != nil {
			discardTaps(succ)
			return err
		}
	}
	if cfg.Profile != old.Profile || !reflect.DeepEqual(cfg.Rules, old.Rules) {
		prof, _ := validate.ProfileByName(cfg.Profile)
		prof, _ = prof.WithSeverities(cfg.Rules)
		if err := s.live.SetProfile(ctx, prof); err != nil {
			if next != nil {
				next.close()
			}
			discardTaps(succ)
			return err
		}
		log.Info("profile and severities applied", "profile", cfg.Profile)
	}
	if next != nil {
		if s.ordered(next) && !s.ordered(s.outs.Load()) {
			// A record log from now on: interrupts in their order first.
			if err := s.live.SetOrdered(ctx, true); err != nil {
				next.close()
				discardTaps(succ)
				return err
			}
		}
		s.redMu.Lock()
		prev := s.outs.Swap(next)
		s.oldOuts = prev // its failed lines stay counted while it closes
		s.redMu.Unlock()
		// Every shard is past the old outputs once a barrier is through.
		err := s.live.Sync(ctx)
		s.keepRedactions(prev)
		cerr := prev.close()
		s.keepFailed(prev)
		if cerr != nil {
			log.Warn("closing the previous outputs", "err", cerr)
		}
		if err == nil && !s.ordered(next) && s.ordered(prev) {
			err = s.live.SetOrdered(ctx, false)
		}
		if err != nil {
			discardTaps(succ)
			return err
		}
		log.Info("outputs reopened")
	}
	s.cfg = cfg
	s.shutdownTimeout.Store(int64(cfg.ShutdownTimeout))
	return s.applyTaps(cfg.Taps, succ, log)
}

// buildSuccessors builds, listening, a successor for every running ws tap
// whose settings change to another ws tap's: applyTaps starts it and then
// retires its predecessor (retireTap), whose connections are not cut. A
// successor on the same address takes over its predecessor's socket
// (ws.Proxy.Inherit), as does one on the address of a ws tap this
// reload removes or moves. An error (an address in use) discards them all.
func (s *sidecar) buildSuccessors(after []TapConfig) (map[string]*tapRun, error) {
	succ := map[string]*tapRun{}
	running := map[string]*tapRun{}
	for _, tr := range s.tapList() {
		running[tr.name] = tr
	}
	// The ws listeners this reload frees (their tap removed, or moved to
	// another address), by address: a successor takes its socket over
	// too (two taps that swap their addresses).
	next := map[string]TapConfig{}
	for _, t := range after {
		next[t.Name] = t
	}
	freed := map[string]*tapRun{}
	for _, tr := range running {
		if t, ok := next[tr.name]; tr.typ == "ws" && !anyPort(tr.cfg.Listen) && (!ok || t.Type != "ws" || t.Listen != tr.cfg.Listen) {
			freed[tr.cfg.Listen] = tr
		}
	}
	for _, t := range after {
		prev := running[t.Name]
		if prev == nil || prev.typ != "ws" || t.Type != "ws" || sameTap(t, prev.cfg) {
			continue
		}
		holder := freed[t.Listen]
		if t.Listen == prev.cfg.Listen {
			holder = prev
		}
		var ln net.Listener
		if holder != nil && !anyPort(t.Listen) {
			if p, ok := holder.sup.source().(*ws.Proxy); ok {
				var err error
				if ln, err = p.Inherit(); err != nil {
					discardTaps(succ)
					return nil, fmt.Errorf("tap %s: taking over the listener of %s: %w", t.Name, t.Listen, err)
				}
			}
		}
		// The stats go on: the tap's counters do not start again, and
		// its connections gauge counts those of both while one drains.
		tr := s.newTapRunOn(s.runCtx, t, prev.stats, ln)
		if tr.firstErr != nil {
			discardTaps(succ)
			return nil, fmt.Errorf("tap %s: the new listener: %w (the tap runs on with its settings as they were)", t.Name, tr.firstErr)
		}
		succ[t.Name] = tr
	}
	return succ, nil
}

// discardTaps closes the listeners of successors never started.
func discardTaps(succ map[string]*tapRun) {
	for _, tr := range succ {
		if p, ok := tr.src.(*ws.Proxy); ok {
			p.Discard()
		}
	}
}

// retireTap ends a ws tap replaced by its successor (running under the
// same name by now) as a drain: its listener stops accepting and the
// connections open go on relaying and being judged until their peers
// close them, or for the tap's drain_timeout when it has one, or until
// the process stops (then closed with 1001, as at any stop).
func (s *sidecar) retireTap(prev *tapRun, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) {
	p, ok := prev.sup.source().(*ws.Proxy)
	if !ok {
		// Between two attempts: nothing relays.
		prev.stop()
		<-prev.done
		log.Info("tap stopped", "tap", prev.name)
		return
	}
	p.StopAccepting()
	bound := time.Duration(prev.drainTimeout.Load())
	log.Info("tap replaced: its previous listener stopped accepting; its open connections are relayed to their end",
		"tap", prev.name, "listen", prev.cfg.Listen, "drain_timeout", bound.String())
	s.retiring.Add(1)
	go func() {
		defer s.retiring.Done()
		var timeout <-chan time.Time
		if bound > 0 {
			t := time.NewTimer(bound)
			defer t.Stop()
			timeout = t.C
		}
		start := time.Now()
		select {
		case <-p.Idle():
			s.logger.Info("the replaced tap's connections were closed by their peers", "tap", prev.name, "took", time.Since(start).Round(time.Millisecond).String())
		case <-timeout:
			s.logger.Info("drain_timeout reached: closing the replaced tap's connections left with 1001", "tap", prev.name)
		case <-prev.done:
		}
		prev.stop()
		<-prev.done
	}()
}

// sameTap reports whether two tap settings are the same (where they are
// in the file aside, and drain_timeout, which applies at the stop: a
// change of it alone does not restart the tap and cut its connections).
func sameTap(a, b TapConfig) bool {
	a.line, b.line = 0, 0
	a.DrainTimeout, b.DrainTimeout = 0, 0
	return reflect.DeepEqual(a, b)
}

// applyTaps stops the running taps that are gone from after or changed,
// and starts the new and changed ones (and any that failed to start at an
// earlier reload); the others keep running untouched.
func (s *sidecar) applyTaps(after []TapConfig, succ map[string]*tapRun, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) error {
	want := map[string]TapConfig{}
	for _, t := range after {
		want[t.Name] = t
	}
	running := map[string]bool{}
	for _, tr := range s.tapList() {
		if t, ok := want[tr.name]; ok && sameTap(t, tr.cfg) {
			running[tr.name] = true
			tr.drainTimeout.Store(int64(t.DrainTimeout))
			continue
		}
		if succ[tr.name] != nil {
			continue // retired once its successor runs
		}
		s.stopTap(tr.name)
		log.Info("tap stopped", "tap", tr.name)
	}
	var errs []error
	for _, t := range after {
		if running[t.Name] {
			continue
		}
		if tr := succ[t.Name]; tr != nil {
			// Accepting before its predecessor stops: the Gateways'
			// connections open now are not cut.
			prev := s.startTap(tr)
			log.Info("tap started", "tap", t.Name, "type", t.Type, "listen", t.Listen)
			if prev != nil {
				s.retireTap(prev, log)
			}
			continue
		}
		// A tap that cannot be built is started all the same: its
		// supervisor reports the error and retries (supervise.go).
		tr := s.newTapRun(s.runCtx, t)
		if tr.firstErr != nil {
			errs = append(errs, fmt.Errorf("tap %s: %w", t.Name, tr.firstErr))
		}
		s.startTap(tr)
		log.Info("tap started", "tap", t.Name, "type", t.Type)
	}
	return errors.Join(errs...)
}

// keepRedactions adds the counts of outputs being closed to those kept,
// so that e2atap_redactions_total does not go back at a reload.
func (s *sidecar) keepRedactions(o *outputs) {
	if o.rec == nil {
		return
	}
	c := o.rec.Redactions()
	s.redMu.Lock()
	for i, n := range c {
		s.redBase[i] += n
	}
	s.redMu.Unlock()
}

// keepFailed adds the failed lines of outputs closed to those kept, so
// that e2atap_output_lines_failed_total does not go back at a reload.
func (s *sidecar) keepFailed(o *outputs) {
	s.redMu.Lock()
	defer s.redMu.Unlock()
	s.oldOuts = nil
	if o.find != nil {
		s.failBase[0] += o.find.Failed()
	}
	if o.rec != nil {
		s.failBase[1] += o.rec.Failed()
	}
}
