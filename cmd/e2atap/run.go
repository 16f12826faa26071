package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/exporters/metrics"
	"github.com/e2atap/e2atap/exporters/observe"
	"github.com/e2atap/e2atap/exporters/traces"
	"github.com/e2atap/e2atap/tap"
	kafkatap "github.com/e2atap/e2atap/tap/kafka"
	"github.com/e2atap/e2atap/tap/logdir"
	natstap "github.com/e2atap/e2atap/tap/nats"
	"github.com/e2atap/e2atap/tap/tlsfiles"
	"github.com/e2atap/e2atap/tap/ws"
	"github.com/e2atap/e2atap/validate"
)

const runUsage = `Usage: e2atap run --config FILE

Runs the sidecar: the taps of the configuration (ws, logdir, nats, kafka),
the validation engine, and the exporters (findings log, redacted record log,
Prometheus metrics, OpenTelemetry traces configured by the OTEL_*
variables). Serves /metrics, /healthz and /readyz on the listen address.
SIGTERM or SIGINT drains and stops it. SIGHUP, or a change of the
configuration file's content, reloads the configuration: an invalid one is
logged and the running one kept.

Flags:
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	path := fs.String("config", "", "the YAML configuration file (required)")
	check := fs.Bool("check", false, "check the configuration, the OTEL_* variables and what they need of this machine (directories, ports), list every problem, and exit (2 if any); creates nothing")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	reloadEvery := fs.Duration("reload-interval", defaultReloadInterval, "how often the configuration file is checked for a change, applied once it has held still for 1s (0: only on SIGHUP)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the whole run to this file, until it stops (for performance reports: make bench-system -live-cpuprofile)")
	traceFile := fs.String("trace", "", "write an execution trace of the whole run to this FILE, until it stops (go tool trace: where the taps, the engine and the shards wait)")
	if done, code := parseFlags(fs, runUsage, args, stdout); done {
		return code
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "e2atap run: --config FILE is required (and nothing else)")
		fs.Usage()
		return exitUsage
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		fmt.Fprintf(stderr, "e2atap run: --log-level: %v\n", err)
		return exitUsage
	}
	// Caught from the start: SIGHUP's default action ends the process.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// A reader of stdout or stderr that goes away (a log shipper that
	// restarts, `| head`) must not end the sidecar: SIGPIPE's default
	// action did, resetting every connection it relayed. Ignored, the
	// write fails with EPIPE, and a failed output is counted and logged.
	signal.Ignore(syscall.SIGPIPE)
	raw, _ := os.ReadFile(*path)
	mode := atStart
	if *check {
		mode = forCheck
	}
	cfg, probs := checkConfig(*path, os.Getenv, os.Environ(), mode)
	pol := newPolicy(cfg.Outputs.Log.FingerprintKey)
	if errs := probs.errors(); len(errs) > 0 {
		fmt.Fprintf(stderr, "e2atap run: configuration %s: %s:\n", *path, countProblems(probs))
		printProblems(stderr, pol, *path, probs)
		return exitUsage
	}
	if *check {
		printProblems(stderr, pol, *path, probs)
		fmt.Fprintf(stdout, "configuration %s is valid: %d taps\n", *path, len(cfg.Taps))
		return exitOK
	}
	logger := pol.logger(stderr, level)
	for _, p := range probs { // warnings only, here
		logger.Warn("configuration: "+p.Msg, "config", *path, "line", p.Line)
	}
	cfg.Memory.BudgetBytes = applyMemoryLimits(cfg.Memory, logger)
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			logger.Error("cannot start", "err", fmt.Errorf("--cpuprofile: %w", err))
			return exitUsage
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			logger.Error("cannot start", "err", fmt.Errorf("--trace: %w", err))
			return exitUsage
		}
		defer f.Close()
		defer trace.Stop()
	}
	sc, err := newSidecar(ctx, cfg, logger, stdout)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return exitUsage
	}
	sc.watchConfig(*path, configHash(raw), hup, *reloadEvery)
	if err := sc.Run(ctx); err != nil {
		logger.Error("stopped with an error", "err", err)
		return exitFindings
	}
	return exitOK
}

// countProblems says "3 problems" or "1 problem and 2 warnings".
func countProblems(probs Problems) string {
	n := len(probs.errors())
	plural := func(n int, what string) string {
		if n == 1 {
			return "1 " + what
		}
		return fmt.Sprintf("%d %ss", n, what)
	}
	if w := len(probs) - n; w > 0 {
		return plural(n, "problem") + " and " + plural(w, "warning")
	}
	return plural(n, "problem")
}

// printProblems lists problems one a line as FILE:LINE: MESSAGE (the
// form editors and CI annotate), warnings marked, through the redaction
// policy: a value quoted from the file or the environment may be a secret.
func printProblems(w io.Writer, pol *policy, path string, probs Problems) {
	for _, p := range probs {
		where := path
		if p.Line > 0 {
			where = fmt.Sprintf("%s:%d", path, p.Line)
		}
		msg := p.Msg
		if p.Env != "" {
			where, msg = p.Env, p.Msg+" (from the environment)"
		} else if strings.HasPrefix(p.Msg, "traces: ") {
			where = "environment"
		}
		if p.Warning {
			msg = "warning: " + msg
		}
		fmt.Fprintf(w, "  %s: %s\n", where, pol.String(msg))
	}
}

// applyMemoryLimits chooses the byte budget (memory.go) and, when the
// container has a memory limit and GOMEMLIMIT is not set, sets the Go
// memory limit to goLimitPercent of it, and, unless GOGC is set, keeps
// the collector's heap goal at gcFloor or above. It logs what it chose and
// why, and
// returns the budget in bytes (-1: unlimited).
func applyMemoryLimits(mc MemoryConfig, logger *slog.Logger) int64 {
	c := chooseBudget(mc.BudgetBytes, os.DirFS("/"), debug.SetMemoryLimit(-1))
	if c.GoLimit > 0 {
		debug.SetMemoryLimit(c.GoLimit)
	}
	// The stream tables live off the Go heap: the collector's limit is the
	// limit less what they hold (validate/offheap.go).
	validate.ChargeTablesToMemoryLimit()
	attrs := []any{"budget_bytes", c.Budget, "budget", mib(c.Budget), "source", c.Source}
	if c.Budget <= 0 {
		attrs[3] = "unlimited"
	}
	if c.CgroupLimit > 0 {
		attrs = append(attrs, "cgroup_limit_bytes", c.CgroupLimit)
	}
	if c.GoLimit > 0 {
		attrs = append(attrs, "go_memory_limit_bytes", c.GoLimit, "go_memory_limit_source", fmt.Sprintf("%d%% of the cgroup limit (GOMEMLIMIT not set)", goLimitPercent))
	} else if l := debug.SetMemoryLimit(-1); l < math.MaxInt64 {
		attrs = append(attrs, "go_memory_limit_bytes", l, "go_memory_limit_source", "GOMEMLIMIT")
	}
	// The collector's pace under the memory limit (memory.go, gcFloor).
	if floor, source := gcChoice(os.Getenv("GOGC"), c.Limit); floor > 0 {
		startGCFloor(floor)
		attrs = append(attrs, "gc_heap_floor_bytes", floor, "gc_source", source)
	} else {
		attrs = append(attrs, "gc_source", source)
	}
	logger.Info("memory budget", attrs...)
	if c.Limit > 0 && (c.Budget <= 0 || c.Budget > c.Limit/2) {
		logger.Warn("memory.budget_bytes leaves less than half of the memory limit for everything else: the process may run out of memory", "budget_bytes", c.Budget, "memory_limit_bytes", c.Limit)
	}
	if c.Budget <= 0 {
		return -1
	}
	return c.Budget
}

// tapRun is one configured tap with its health.
type tapRun struct {
	name     string
	typ      string
	stats    *tap.Stats
	src      tap.Source // the first build (nil if it failed: firstErr)
	firstErr error
	sup      *tapSupervisor
	lagUnit  string // metrics.LagBytes or LagMessages
	cfg      TapConfig
	// drainTimeout is cfg.DrainTimeout, which a reload changes without a
	// restart of the tap (drain.go reads it while a reload may run).
	drainTimeout atomic.Int64
	stop         context.CancelFunc
	done         chan struct{} // closed when the supervisor returned
}

// sidecar is the assembled process: taps → live engine → sinks, and the
// HTTP endpoints. The demo assembles the same thing.
type sidecar struct {
	cfg    Config
	logger *slog.Logger
	reg    *prometheus.Registry
	live   *validate.Live
	// shutdownTimeout: cfg.ShutdownTimeout, which Run reads when ctx ends
	// while a reload may be setting it.
	shutdownTimeout atomic.Int64
	tapsMu          sync.Mutex // taps changes at a reload
	taps            []*tapRun
	tracer          *traces.Tracer
	metrics         *metrics.Metrics
	outs            atomic.Pointer[outputs] // findings and record logs (reload.go)
	stdout          io.Writer
	redMu           sync.Mutex
	redBase         [jsonlog.NumRules]uint64 // redactions of outputs closed at reloads
	failBase        [2]uint64                // failed lines (findings, records) of outputs closed at reloads
	oldOuts         *outputs                 // the outputs a reload replaced, while they close
	resume          *resumeMarks             // records the log holds already (durable.go)
	rereadMarked    atomic.Uint64            // records a tap said were judged by an earlier run (tap.Message.Reread)
	panicLog        atomic.Int64             // when an engine panic was last logged (unix ns; enginePanic)
	panicsLogged    atomic.Uint64            // engine panics counted when it was
	observe         *observe.Hub
	extra           []validate.Sink // added by the demo
	listener        net.Listener
	httpConns       *limitListener // under listener (TLS), its ConnState hook
	ready           sync.Map       // tap name → struct{} while its source runs
	draining        atomic.Bool    // the stop's drain runs (drain.go): /readyz says 503
	// budget is the one byte budget of the process (nil: unlimited).
	budget   *tap.Budget
	loadedAt atomic.Int64 // when the running configuration was loaded (unix ns): at start, at each reload
	// backoff is the retry schedule of failed taps (tests shorten it).
	backoff backoff

	runCtx    context.Context // of the taps, set by Run
	tapsWG    sync.WaitGroup
	retiring  sync.WaitGroup // retireTap's goroutines
	reloading sync.WaitGroup
	// Reload (reload.go): the file, the hash of what runs, of what was
	// rejected last, the signal and the poll interval.
	cfgPath          string
	cfgHash, badHash string
	hup              <-chan os.Signal
	reloadEvery      time.Duration
	reloadM          *reloadMetrics
}

// ordered says whether the sinks, with outputs o, depend on the order of
// calls across the engine's shards: a record log is replayed in its own
// order, so a chat.interrupt must be written after the records of the
// streams it cancels on other shards (validate.LiveConfig.Unordered).
func (s *sidecar) ordered(o *outputs) bool { return o.rec != nil || len(s.extra) > 0 }

func newSidecar(ctx context.Context, cfg Config, logger *slog.Logger, stdout io.Writer, extra ...validate.Sink) (*sidecar, error) {
	s := &sidecar{cfg: cfg, logger: logger, reg: prometheus.NewRegistry(), extra: extra, stdout: stdout, backoff: defaultBackoff}
	s.shutdownTimeout.Store(int64(cfg.ShutdownTimeout))
	s.loadedAt.Store(time.Now().UnixNano())
	switch b := cfg.Memory.BudgetBytes; {
	case b > 0:
		s.budget = tap.NewBudget(b)
	case b == 0: // not chosen by cmdRun (the demo, tests): derive it, leave the Go limit alone
		s.budget = tap.NewBudget(chooseBudget(0, os.DirFS("/"), debug.SetMemoryLimit(-1)).Budget)
	}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	tcfg, err := traces.FromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	tcfg.Redactor = newPolicy(cfg.Outputs.Log.FingerprintKey)
	tcfg.Taps = s.traceTap
	if s.tracer, err = traces.New(ctx, tcfg, logger.With("component", "traces")); err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	s.metrics = metrics.New(s.reg, metrics.Options{Version: version, TraceID: s.tracer.TraceID})
	s.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "e2atap_trace_spans_exported_total",
			Help: "Stream spans the OTLP collector accepted.",
		}, func() float64 { return float64(s.tracer.Stats().Exported) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "e2atap_trace_spans_failed_total",
			Help: "Stream spans lost to failed OTLP exports (a collector down, refusing or not answering within OTEL_EXPORTER_OTLP_TIMEOUT).",
		}, func() float64 { return float64(s.tracer.Stats().ExportFailed) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "e2atap_trace_spans_dropped_total",
			Help: "Stream spans dropped because OTEL_BSP_MAX_QUEUE_SIZE spans (default 8192) waited for export already (a collector slower than the streams end).",
		}, func() float64 { return float64(s.tracer.Stats().Dropped) }))

	s.reloadM = newReloadMetrics(s.reg)
	outs, err := openOutputs(cfg.Outputs, stdout)
	if err != nil {
		return nil, err
	}
	s.outs.Store(outs)
	if err := s.openedOutputs(outs); err != nil {
		return nil, err
	}
	if err := metrics.RegisterRedactions(s.reg, s.redactions); err != nil {
		return nil, err
	}
	for _, name := range []string{"findings", "records"} {
		s.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "e2atap_output_lines_failed_total",
			Help:        "Lines of the findings or record log lost to a failed write (a full disk, a file over its size limit, a closed pipe): the verdicts stand, their lines are not written.",
			ConstLabels: prometheus.Labels{"output": name},
		}, func() float64 { return float64(s.outputFailed()[name]) }))
	}
	sinks := validate.MultiSink{s.metrics, s.tracer, outputSink{&s.outs}}
	// The live view (e2atap observe) redacts with the logs' Redactor,
	// whichever the outputs of the running configuration are.
	s.observe = observe.NewHub(outputsRedactor{&s.outs}, observe.DefaultOptions())
	if err := s.observe.Register(s.reg); err != nil {
		return nil, err
	}
	sinks = append(sinks, s.observe)
	sinks = append(sinks, extra...)

	prof, _ := validate.ProfileByName(cfg.Profile)
	prof, _ = prof.WithSeverities(cfg.Rules)
	lc := validate.DefaultLiveConfig()
	lc.Engine.Profile = prof
	lc.Engine.MaxStreams = cfg.Streams.Max
	lc.Engine.IdleTimeout = cfg.Streams.IdleTimeout
	lc.Engine.MaxRecordBytes = cfg.Streams.MaxRecordBytes
	// A defect of the engine that one record sets off costs that record,
	// not the relay: the process goes on (survive.go).
	lc.Engine.OnPanic = s.enginePanic
	lc.Shards = cfg.Streams.Shards
	lc.Queue = cfg.Streams.Queue
	lc.JoinWindow = cfg.Streams.JoinWindow
	lc.FinishOnShutdown = cfg.Streams.FinishOnShutdown
	// The queue to the engine holds charged inputs (emit charges what a
	// tap did not): it is bounded in bytes by the budget, and in count by
	// streams.queue.
	lc.Release = s.budget.Release
	// Only a record log needs interrupts in their order across shards
	// (and the sinks a test or the demo adds, which may compare orders).
	lc.Unordered = !s.ordered(outs)
	s.live = validate.NewLive(lc, sinks)

	// A tap that cannot be built is not an error of the process: its
	// supervisor reports it and retries (supervise.go).
	for _, t := range cfg.Taps {
		s.taps = append(s.taps, s.newTapRun(ctx, t))
	}
	if err := metrics.RegisterTaps(s.reg, s.tapSnapshots); err != nil {
		return nil, err
	}
	if err := metrics.RegisterEngine(s.reg, func() metrics.EngineSnapshot {
		return metrics.EngineSnapshot{Untracked: s.live.Untracked(), Panics: s.live.Panics()}
	}); err != nil {
		return nil, err
	}
	if err := metrics.RegisterBudget(s.reg, func() metrics.BudgetSnapshot {
		return metrics.BudgetSnapshot{Limit: s.budget.Limit(), Used: s.budget.Used()}
	}); err != nil {
		return nil, err
	}
	// Listen now, so that a port in use is an error at start, not later.
	if s.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	s.httpConns = newLimitListener(s.listener, maxHTTPConns, logger.With("component", "http"))
	s.listener = s.httpConns // under TLS: the server sees *tls.Conn
	if cfg.TLS.Enabled() {
		if s.listener, err = s.tlsListener(s.listener); err != nil {
			s.listener.Close()
			return nil, fmt.Errorf("tls: %w", err)
		}
	}
	return s, nil
}

// outputFailed is, by output, the lines lost to failed writes, those of
// outputs closed at reloads included.
func (s *sidecar) outputFailed() map[string]uint64 {
	s.redMu.Lock()
	defer s.redMu.Unlock()
	o := s.outs.Load() // under the lock: a reload swaps it so
	out := map[string]uint64{"findings": s.failBase[0], "records": s.failBase[1]}
	for _, o := range []*outputs{o, s.oldOuts} {
		if o == nil {
			continue
		}
		if o.find != nil {
			out["findings"] += o.find.Failed()
		}
		if o.rec != nil {
			out["records"] += o.rec.Failed()
		}
	}
	return out
}

func (s *sidecar) redactions() map[string]uint64 {
	var counts [jsonlog.NumRules]uint64
	if w := s.outs.Load().rec; w != nil {
		counts = w.Redactions()
	}
	s.redMu.Lock()
	defer s.redMu.Unlock()
	out := make(map[string]uint64, len(counts))
	for i, n := range counts {
		out[jsonlog.RuleNames[i]] = n + s.redBase[i]
	}
	return out
}

func (s *sidecar) tapSnapshots() []metrics.TapSnapshot {
	taps := s.tapList()
	out := make([]metrics.TapSnapshot, 0, len(taps))
	for _, t := range taps {
		snap := metrics.TapSnapshot{Tap: t.name, Up: t.stats.Up.Load(),
			Messages: map[string]uint64{}, Bytes: map[string]uint64{}, Drops: map[string]uint64{}, Errors: map[string]uint64{},
			HasUpstream: t.sup.hasUpstream, UpstreamUp: t.stats.UpstreamUp.Load(),
			Lag: t.stats.Lag.Load(), LagUnit: t.lagUnit,
			HasConns: t.typ == "ws", Conns: t.stats.Conns.Load(), ConnsBehind: t.stats.ConnsBehind.Load()}
		for d := 0; d < tap.NumDirections; d++ {
			name := tap.Direction(d).String()
			snap.Messages[name] = t.stats.Messages[d].Load()
			snap.Bytes[name] = t.stats.Bytes[d].Load()
		}
		for r := 0; r < int(tap.NumDropReasons); r++ {
			snap.Drops[tap.DropReasonNames[r]] = t.stats.Drops[r].Load()
		}
		for r := 0; r < int(tap.NumErrorReasons); r++ {
			snap.Errors[tap.ErrorReasonNames[r]] = t.stats.Errors[r].Load()
		}
		out = append(out, snap)
	}
	return out
}

// newTapRun prepares a tap and its supervisor, and builds it a first time.
func (s *sidecar) newTapRun(ctx context.Context, t TapConfig) *tapRun {
	return s.newTapRunOn(ctx, t, &tap.Stats{}, nil)
}

// newTapRunOn is newTapRun with the tap's stats given and, for a ws tap,
// the listener of its first build (nil: it binds its address; the
// retries always bind).
func (s *sidecar) newTapRunOn(ctx context.Context, t TapConfig, stats *tap.Stats, ln net.Listener) *tapRun {
	// Every tap adds its own "tap" attribute to the logger it is given.
	log := s.logger.With("type", t.Type)
	lag := metrics.LagMessages // ws mirror queue, Kafka and JetStream pending
	if t.Type == "logdir" {
		lag = metrics.LagBytes
	}
	tr := &tapRun{name: t.Name, typ: t.Type, stats: stats, lagUnit: lag, cfg: t}
	tr.drainTimeout.Store(int64(t.DrainTimeout))
	name := t.Name
	tr.sup = &tapSupervisor{
		name: t.Name, typ: t.Type, hasUpstream: t.Type != "logdir",
		stats: stats, log: log.With("tap", t.Name), policy: s.backoff,
		build: func() (tap.Source, error) { return s.buildSource(ctx, t, stats, log) },
		emit:  s.emit(name),
		started: func(ctx context.Context) {
			s.ready.Store(name, struct{}{})
			_ = s.live.Connected(ctx, name, time.Now())
		},
		stopped: func() {
			// A tap retired by a reload (its successor runs under the
			// same name) leaves the name's readiness to the successor.
			if s.isCurrent(tr) {
				s.ready.Delete(name)
			}
		},
	}
	if ln != nil {
		tr.src, tr.firstErr = s.buildSourceOn(ctx, t, stats, log, ln)
	} else {
		tr.src, tr.firstErr = tr.sup.build()
	}
	return tr
}

// buildSource makes the source of a tap. Every call makes a new one
// (sharing stats), so that a failed tap can be built again.
func (s *sidecar) buildSource(ctx context.Context, t TapConfig, stats *tap.Stats, log *slog.Logger) (tap.Source, error) {
	return s.buildSourceOn(ctx, t, stats, log, nil)
}

// buildSourceOn is buildSource on a ws listener already bound (ws.NewOn).
func (s *sidecar) buildSourceOn(ctx context.Context, t TapConfig, stats *tap.Stats, log *slog.Logger, ln net.Listener) (tap.Source, error) {
	var src tap.Source
	var err error
	switch t.Type {
	case "ws":
		c := ws.DefaultConfig()
		c.Name, c.Listen, c.Upstream = t.Name, t.Listen, t.Upstream
		if t.QueueSize > 0 {
			c.QueueSize = t.QueueSize
		}
		if t.MaxMessageBytes > 0 {
			c.MaxMessageBytes = t.MaxMessageBytes
		}
		if t.DialTimeout > 0 {
			c.DialTimeout = t.DialTimeout
		}
		if t.HandshakeTimeout > 0 {
			c.HandshakeTimeout = t.HandshakeTimeout
		}
		if idle := s.cfg.Streams.IdleTimeout; idle > 0 {
			// A connection whose relay is blocked is told behind well
			// before its open streams could go idle (Message.Progress).
			c.BehindAfter = min(c.BehindAfter, max(idle/4, 50*time.Millisecond))
		}
		c.Budget = s.budget
		c.TLS = t.TLS
		var p *ws.Proxy
		if p, err = ws.NewOn(c, ln, stats, log); err == nil {
			// The address it got: with port 0 in the configuration, the
			// only place a user learns it.
			log.Info("ws: listening", "tap", t.Name, "addr", p.Addr().String(), "upstream", tap.RedactURL(t.Upstream))
			src = p
		}
	case "logdir":
		c := logdir.DefaultConfig()
		c.Name, c.Paths, c.Positions = t.Name, t.Paths, t.Positions
		if t.MaxLineBytes > 0 {
			c.MaxLineBytes = t.MaxLineBytes
		}
		if t.StartAt != "" {
			c.StartAt = t.StartAt
		}
		name := t.Name
		if t.MaxOpenFiles > 0 {
			c.MaxOpenFiles = t.MaxOpenFiles
		}
		c.OnOversize = func(pos tap.Position, n int64, head []byte) {
			// The head lets the engine gap only the line's own stream (its
			// request_id and sequence are near the start of a record).
			in := validate.Input{Tap: name, Pos: validate.Position(pos), Time: time.Now(), FromLog: true, Data: head}
			if s.resume.seen(&in) {
				return // read again after a crash: reported already
			}
			_ = s.live.DecodeError(ctx, in, validate.ProtoE2A, fmt.Sprintf("log line of %d bytes is over the %d-byte limit: skipped", n, c.MaxLineBytes))
		}
		c.Budget = s.budget
		// Durability order: positions are saved only once what was read
		// is judged and in the record log (durable.go).
		c.BeforeSave = s.sync
		src, err = logdir.New(c, stats, log)
	case "nats":
		c := natstap.DefaultConfig()
		c.Name, c.URL, c.Subjects, c.Queue = t.Name, t.URL, t.Subjects, t.Queue
		for _, js := range t.JetStream {
			c.Streams = append(c.Streams, natstap.StreamConfig{Stream: js.Stream, FilterSubjects: js.FilterSubjects, StartSeq: js.StartSeq})
		}
		if t.PendingBytes > 0 {
			c.PendingBytes = t.PendingBytes
		}
		if t.MaxMessageBytes > 0 {
			c.MaxMessageBytes = t.MaxMessageBytes
		}
		c.TLS, c.Auth = t.TLS, t.natsAuth()
		c.Budget = s.budget
		// Durability order: cursors are saved only once what was read is
		// judged and in the record log (durable.go).
		c.Positions = t.Positions
		name := t.Name
		c.BeforeSave = func(ctx context.Context) (natstap.OpenFirst, error) { return s.syncOpenJS(ctx, name) }
		src, err = natstap.New(c, stats, log)
	case "kafka":
		c := kafkatap.DefaultConfig()
		c.Name, c.Brokers, c.Topics, c.Regex = t.Name, t.Brokers, t.Topics, t.Regex
		if t.Group != "" {
			c.Group = t.Group
		}
		if t.Start != "" {
			c.Start = t.Start
		}
		if t.Isolation != "" {
			c.Isolation = t.Isolation
		}
		if t.CommitInterval > 0 {
			c.CommitInterval = t.CommitInterval
		}
		c.SessionTimeout = t.SessionTimeout
		c.TLS, c.SASL = t.TLS, t.kafkaSASL()
		c.JoinWindow = s.cfg.Streams.JoinWindow
		if idle := s.cfg.Streams.IdleTimeout; idle > 0 {
			// A partition found behind is told well before its open
			// streams could go idle (Message.Progress).
			c.EndCheck = min(c.EndCheck, max(idle/4, 50*time.Millisecond))
		}
		c.Budget = s.budget
		// Durability order and the commit policy: commit only once what
		// was read is judged and written out, and never past an open
		// stream (durable.go).
		name := t.Name
		c.BeforeCommit = func(ctx context.Context) (kafkatap.OpenFirst, error) { return s.syncOpen(ctx, name) }
		src, err = kafkatap.New(c, stats, log)
	default:
		err = fmt.Errorf("unknown type %q", t.Type)
	}
	if err != nil {
		return nil, err
	}
	return src, nil
}

// emit turns a tap's messages into engine input (the one place where
// tap.Message becomes validate.Input).
func (s *sidecar) emit(name string) tap.EmitFunc {
	return func(ctx context.Context, m tap.Message) error {
		switch {
		case m.ConnClosed:
			return s.live.ConnClosed(ctx, m.Tap, m.Conn, m.Time)
		case m.Reconnected:
			return s.live.Connected(ctx, m.Tap, m.Time)
		case m.Progress:
			tapName := m.Tap
			if tapName == "" {
				tapName = name
			}
			if m.Pos.Kind == tap.PosConn {
				return s.live.ConnBehind(ctx, tapName, m.Conn, m.Behind, m.Time)
			}
			return s.live.Behind(ctx, tapName, m.Pos.Name, m.Pos.Partition, m.Behind, m.Time)
		case m.Lost:
			tapName := m.Tap
			if tapName == "" {
				tapName = name
			}
			if m.Pos.Kind == tap.PosKafka || (m.Pos.Kind == tap.PosSubject && m.Pos.Partition > 0) {
				// A partition (a JetStream stream) handed over to its
				// next reader: its streams are dropped, no other is
				// touched.
				return s.live.Handover(ctx, tapName, m.Pos.Name, m.Pos.Partition, m.Time)
			}
			s.resume.lost(tapName, m.Conn)
			return s.live.Lost(ctx, tapName, m.Conn, m.Time)
		}
		in := validate.Input{
			Tap: m.Tap, Conn: m.Conn, Pos: validate.Position(m.Pos), Dir: uint8(m.Dir), Time: m.Time,
			Data: m.Data, JSON: m.Format == tap.FormatJSON, FromLog: m.FromLog, Gap: m.Gap, Joined: m.Joined, Charged: m.Charged,
		}
		if in.Tap == "" {
			in.Tap = name
		}
		// Read again after a crash and in the record log already, or
		// below the judged mark the tap saved with its cursor: judged for
		// its stream's state only, reported and logged no second time.
		in.Silent = s.resume.seen(&in)
		if m.Reread && !in.Silent {
			in.Silent = true
			s.rereadMarked.Add(1)
		}
		// What a tap did not charge is charged here, waiting (emit may
		// block: backpressure), so that the queue to the engine is bounded
		// in bytes whatever the tap does.
		charged := 0
		if in.Charged == 0 && len(in.Data) > 0 && s.budget != nil {
			if err := s.budget.Acquire(ctx, len(in.Data)); err != nil {
				return err
			}
			charged = len(in.Data)
			in.Charged = charged
		}
		var err error
		if m.Recycle != nil {
			err = s.live.SubmitOwned(ctx, in, m.Recycle)
		} else {
			err = s.live.Submit(ctx, in)
		}
		if err != nil && charged > 0 {
			s.budget.Release(charged)
		}
		return err
	}
}

// Run runs until ctx is done, then drains: the taps stop first, the engine
// judges what they handed over, the sinks flush, and the HTTP server stops
// last (so /metrics answers while draining). A drain that takes longer
// than shutdown_timeout is left (its goroutines blocked for good, until
// the process exits) with an error: a sidecar that does not stop holds its
// pod's rollout until the kubelet kills it.
func (s *sidecar) Run(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	bound := s.stopBound()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		s.logger.Error("stopping took longer than shutdown_timeout: exiting without the rest of the drain "+
			"(an output that takes no writes, such as a standard output nobody reads, or a tap that does not stop)",
			"shutdown_timeout", bound.String())
		return fmt.Errorf("the drain did not end within shutdown_timeout %s", bound)
	}
}

// stopBound is shutdown_timeout, as Run reads it when ctx ends.
func (s *sidecar) stopBound() time.Duration {
	bound := time.Duration(s.shutdownTimeout.Load())
	if bound <= 0 { // a Config not from DefaultConfig (demo, tests)
		bound = DefaultConfig().ShutdownTimeout
	}
	return bound
}

// traceStopWait bounds the export of the last spans at a stop: a
// collector that takes them in time takes them well within it (the
// exporter's own default timeout).
const traceStopWait = 10 * time.Second

func (s *sidecar) run(ctx context.Context) error {
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: httpIdleTimeout,
		ConnState: s.httpConns.ConnState,
		// net/http's own errors (a failed TLS handshake, an accept error
		// while descriptors run out) as lines of the process's JSON log,
		// through its redaction, not plain text on stderr.
		ErrorLog: slog.NewLogLogger(s.logger.With("component", "http").Handler(), slog.LevelWarn)}
	httpDone := make(chan error, 1)
	go func() { httpDone <- srv.Serve(s.listener) }()
	s.logger.Info("e2atap running", "version", version, "listen", s.listener.Addr().String(), "taps", len(s.taps), "profile", s.cfg.Profile)

	engineCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan validate.Stats, 1)
	go func() { engineDone <- s.live.Run(engineCtx) }()

	// Every tap under its own supervisor (supervise.go), with a context
	// of its own so that a reload can stop one: a tap's failure stops
	// nothing else. They all stop when ctx is done.
	gctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
			// The stop: the ws taps' connections drain first
			// (drain.go), then every tap stops.
			s.drain(gctx)
			cancel()
		case <-gctx.Done():
		}
	}()
	s.runCtx = gctx
	for _, t := range s.tapList() {
		s.startTap(t)
	}
	flushDone := make(chan struct{})
	go s.flushLoop(gctx, flushDone)
	if s.cfgPath != "" {
		s.reloading.Add(1)
		go func() {
			defer s.reloading.Done()
			s.reloadLoop(gctx, s.hup, s.reloadEvery)
		}()
	}
	<-gctx.Done()
	// What is left of shutdown_timeout (Run's bound) when the last
	// outputs close, with a margin for the rest of the stop.
	bound := s.stopBound()
	stopBy := time.Now().Add(bound - min(time.Second, bound/5))
	s.reloading.Wait() // no reload starts or stops taps from here on
	s.tapsWG.Wait()
	s.retiring.Wait()
	<-flushDone
	s.logger.Info("taps stopped; draining the engine")
	stopEngine()
	st := <-engineDone

	// Outputs that fail at the stop (a full disk, a removed file, a
	// collector that refuses the last spans) lose what they could not
	// take: counted and logged, as while running, where the same failure
	// never stopped anything. It is no failure of the stop: the exit
	// status says whether the stop was clean (DESIGN.md: 0), and whether
	// a failing output's last write came before the stop or at it would
	// otherwise decide it.
	outErr := s.outs.Load().close()
	// A collector that does not answer loses the spans not exported
	// yet (counted, logged by the tracer), and does not hold the stop
	// past shutdown_timeout.
	shutCtx, cancel := context.WithTimeout(context.Background(), min(time.Until(stopBy), traceStopWait))
	defer cancel()
	traceErr := s.tracer.Shutdown(shutCtx)
	s.observe.Close()
	_ = srv.Shutdown(shutCtx)
	var err error
	if herr := <-httpDone; herr != nil && !errors.Is(herr, http.ErrServerClosed) {
		err = herr
	}
	var findings, linesFailed uint64
	for _, n := range st.Findings {
		findings += n
	}
	for _, n := range s.outputFailed() {
		linesFailed += n
	}
	ts := s.tracer.Stats()
	if outErr != nil || traceErr != nil {
		s.logger.Warn("outputs failed at the stop: what they did not take is lost, counted (e2atap_output_lines_failed_total, trace_spans_failed)",
			"err", errors.Join(outErr, traceErr), "output_lines_failed", linesFailed, "trace_spans_failed", ts.ExportFailed)
	}
	s.logger.Info("e2atap stopped", "records", st.Records, "findings", findings, "reread_skipped", s.resume.skippedCount()+s.rereadMarked.Load(),
		"output_lines_failed", linesFailed, "trace_spans", ts.Spans, "trace_spans_failed", ts.ExportFailed, "trace_spans_dropped", ts.Dropped)
	return err
}

// flushLoop writes buffered log lines out every second, at a point where
// everything handed over is judged (sync), findings before records.
func (s *sidecar) flushLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	// A failing output is logged when it starts failing and when it works
	// again, not at every flush (a full disk logged a line a second);
	// e2atap_output_lines_failed_total counts what it cost.
	// A failure is what a sync returns, or lines lost since the last
	// look: a tap's own sync before it saves its positions (BeforeSave)
	// may meet the failure first, and the flush after it finds nothing
	// to write (a full disk was then never logged). It works again once
	// a sync has written lines out, not merely found none to write (a
	// full disk took nothing for seconds and was said to work again);
	// what it lost counts from the last look before it failed, so that
	// the lines of the write that failed first are in it. Each output
	// that lost lines must have written lines since its last loss: the
	// findings log taking a line while the record log, on a full disk,
	// lost that record's was said to work again.
	failing := false
	var failedBefore, lastFailed, writtenAt uint64
	lastBy := map[string]uint64{}
	staleAt := map[string]uint64{} // outputs that lost lines while failing: what they had written then
	current := s.outs.Load
	written := func() map[string]uint64 { // lines handed to each output and not lost
		o, n := current(), map[string]uint64{}
		if o.find != nil {
			n["findings"] = o.find.Lines() - o.find.Failed()
		}
		if o.rec != nil {
			n["records"] = o.rec.Lines() - o.rec.Failed()
		}
		return n
	}
	again := func(w map[string]uint64) bool {
		for name, at := range staleAt {
			if w[name] == at {
				return false
			}
		}
		return sumCounts(w) != writtenAt
	}
	firstErr := func() error {
		o := current()
		var errs []error
		if o.find != nil {
			errs = append(errs, o.find.Err())
		}
		if o.rec != nil {
			errs = append(errs, o.rec.Err())
		}
		return errors.Join(errs...)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			err := s.sync(ctx)
			by, w := s.outputFailed(), written()
			f := sumCounts(by)
			for name, n := range by {
				if n != lastBy[name] {
					staleAt[name] = w[name]
				}
				lastBy[name] = n
			}
			lost := f != lastFailed
			lastFailed = f
			switch {
			case ctx.Err() != nil:
			case (err != nil || lost) && !failing:
				if err == nil {
					err = firstErr()
				}
				failing, writtenAt = true, sumCounts(w)
				s.logger.Warn("writing the logs out failed; lines are lost until it works again (e2atap_output_lines_failed_total), logged once", "err", err)
			case !failing:
				failedBefore = f
				clear(staleAt)
			case err == nil && !lost && again(w):
				failing = false
				clear(staleAt)
				s.logger.Info("writing the logs out works again", "lines_lost", f-failedBefore)
			}
		}
	}
}

// sumCounts adds up the values of m.
func sumCounts(m map[string]uint64) uint64 {
	n := uint64(0)
	for _, v := range m {
		n += v
	}
	return n
}

// tlsListener serves l over TLS from the configured files, reloaded when
// they are renewed (a failed reload is logged and the old certificate kept).
func (s *sidecar) tlsListener(l net.Listener) (net.Listener, error) {
	r, err := tlsfiles.New(s.cfg.TLS)
	if err != nil {
		return nil, err
	}
	log := s.logger.With("component", "tls", "cert_file", s.cfg.TLS.CertFile)
	r.OnError = func(err error) { log.Warn("cannot reload the certificate; serving the previous one", "err", err) }
	r.OnReload = func() { log.Info("certificate reloaded") }
	tc, err := r.Config()
	if err != nil {
		return nil, err
	}
	return tls.NewListener(l, tc), nil
}

// startTap runs a tap under its supervisor until it is stopped or the run
// ends: a tap that fails is retried, never the end of the run.
// isCurrent reports whether t is the running tap of its name (not one
// stopped or retired by a reload).
func (s *sidecar) isCurrent(t *tapRun) bool {
	s.tapsMu.Lock()
	defer s.tapsMu.Unlock()
	return slices.Contains(s.taps, t)
}

// startTap runs t, in place of the tap of its name if there is one, and
// returns that one (still running: stopping it is the caller's).
func (s *sidecar) startTap(t *tapRun) (replaced *tapRun) {
	ctx, stop := context.WithCancel(s.runCtx)
	t.stop, t.done = stop, make(chan struct{})
	s.tapsWG.Add(1)
	go func() {
		defer s.tapsWG.Done()
		defer close(t.done)
		t.sup.run(ctx, t.src, t.firstErr)
	}()
	s.tapsMu.Lock()
	defer s.tapsMu.Unlock()
	for i, o := range s.taps {
		if o == t {
			return nil // a tap of the configuration at start
		}
		if o.name == t.name {
			s.taps[i] = t
			return o
		}
	}
	s.taps = append(s.taps, t)
	return nil
}

// stopTap stops a tap and waits until it has returned.
func (s *sidecar) stopTap(name string) {
	s.tapsMu.Lock()
	var t *tapRun
	for i, o := range s.taps {
		if o.name == name {
			t = o
			s.taps = append(s.taps[:i:i], s.taps[i+1:]...)
			break
		}
	}
	s.tapsMu.Unlock()
	if t == nil || t.stop == nil {
		return
	}
	s.ready.Delete(name)
	t.stop()
	<-t.done
}

// traceTap describes a running tap to the Tracer (span kind, network
// attributes). tapsMu is never held while the engine waits.
func (s *sidecar) traceTap(name string) (traces.Tap, bool) {
	s.tapsMu.Lock()
	defer s.tapsMu.Unlock()
	for _, t := range s.taps {
		if t.name == name {
			return traces.Tap{Type: t.typ, Upstream: t.cfg.Upstream}, true
		}
	}
	return traces.Tap{}, false
}

func (s *sidecar) tapList() []*tapRun {
	s.tapsMu.Lock()
	defer s.tapsMu.Unlock()
	return append([]*tapRun(nil), s.taps...)
}

// watchConfig makes Run reload the configuration file path on hup and
// when its content changes (hash is that of the loaded content).
func (s *sidecar) watchConfig(path, hash string, hup <-chan os.Signal, every time.Duration) {
	s.cfgPath, s.cfgHash, s.hup, s.reloadEvery = path, hash, hup, every
	s.reloadM.loaded(hash, time.Now())
}

// openedOutputs logs what opening the outputs cut (a torn last line left
// by a crash) and learns what the record log holds for the taps that read
// again after a crash.
func (s *sidecar) openedOutputs(o *outputs) error {
	if o.find != nil && o.find.Cut() > 0 {
		s.logger.Warn("the findings log ended in a torn line (a crash): cut", "path", o.cfg.Findings.Path, "bytes", o.find.Cut())
	}
	if o.rec == nil {
		return nil
	}
	if o.rec.Cut() > 0 {
		s.logger.Warn("the record log ended in a torn line (a crash): cut", "path", o.cfg.Log.Path, "bytes", o.rec.Cut())
	}
	rec := o.rec
	var err error
	if s.resume, err = loadResumeMarks(o.cfg.Log.Path, rec.ResumeSource); err != nil {
		s.logger.Warn("cannot read the record log's tail: records read again after a crash are judged again", "err", err)
	}
	s.resume.done = func(n uint64) {
		s.logger.Info("taps past what the record log held: records read again after a crash were recognised, not judged twice", "reread_skipped", n)
	}
	return nil
}

func (s *sidecar) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", writeDeadline(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{EnableOpenMetrics: true, Registry: s.reg, MaxRequestsInFlight: maxScrapesInFlight})))
	mux.Handle("/observe", s.observe)
	mux.Handle("/healthz", writeDeadline(http.HandlerFunc(s.serveHealth)))
	mux.Handle("/readyz", writeDeadline(http.HandlerFunc(s.serveReady)))
	return closeWithBody(mux)
}
