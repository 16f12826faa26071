package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/exporters/metrics"
	"github.com/e2atap/e2atap/exporters/traces"
	"github.com/e2atap/e2atap/tap"
	kafkatap "github.com/e2atap/e2atap/tap/kafka"
	"github.com/e2atap/e2atap/tap/logdir"
	natstap "github.com/e2atap/e2atap/tap/nats"
	"github.com/e2atap/e2atap/tap/ws"
	"github.com/e2atap/e2atap/validate"
)

const runUsage = `Usage: e2atap run --config FILE

Runs the sidecar: the taps of the configuration (ws, logdir, nats, kafka),
the validation engine, and the exporters (findings log, redacted record log,
Prometheus metrics, OpenTelemetry traces configured by the OTEL_*
variables). Serves /metrics, /healthz and /readyz on the listen address.
SIGTERM or SIGINT drains and stops it.

Flags:
`

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	path := fs.String("config", "", "the YAML configuration file (required)")
	check := fs.Bool("check", false, "only load and validate the configuration, then exit")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	if done, code := parseFlags(fs, runUsage, args); done {
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
	cfg, err := LoadConfig(*path, os.Getenv)
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		fmt.Fprintf(stderr, "e2atap run: configuration %s:\n%v\n", *path, indent(err.Error()))
		return exitUsage
	}
	if *check {
		fmt.Fprintf(stdout, "configuration %s is valid: %d taps\n", *path, len(cfg.Taps))
		return exitOK
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	sc, err := newSidecar(ctx, cfg, logger, stdout)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return exitUsage
	}
	if err := sc.Run(ctx); err != nil {
		logger.Error("stopped with an error", "err", err)
		return exitFindings
	}
	return exitOK
}

func indent(s string) string { return "  " + strings.ReplaceAll(s, "\n", "\n  ") }

// tapRun is one configured tap with its health.
type tapRun struct {
	name    string
	stats   *tap.Stats
	src     tap.Source
	lagUnit string // metrics.LagBytes or LagMessages
}

// sidecar is the assembled process: taps → live engine → sinks, and the
// HTTP endpoints. The demo assembles the same thing.
type sidecar struct {
	cfg      Config
	logger   *slog.Logger
	reg      *prometheus.Registry
	live     *validate.Live
	taps     []*tapRun
	tracer   *traces.Tracer
	metrics  *metrics.Metrics
	recLog   *jsonlog.Writer
	findLog  *jsonlog.FindingWriter
	extra    []validate.Sink // added by the demo
	listener net.Listener
	ready    sync.Map // tap name → struct{} once its source started
}

func newSidecar(ctx context.Context, cfg Config, logger *slog.Logger, stdout io.Writer, extra ...validate.Sink) (*sidecar, error) {
	s := &sidecar{cfg: cfg, logger: logger, reg: prometheus.NewRegistry(), extra: extra}
	s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	tcfg, err := traces.FromEnv(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	if s.tracer, err = traces.New(ctx, tcfg, logger.With("component", "traces")); err != nil {
		return nil, fmt.Errorf("traces: %w", err)
	}
	s.metrics = metrics.New(s.reg, metrics.Options{Version: version, TraceID: s.tracer.TraceID})

	red := cfg.Outputs.Log.Redactor()
	sinks := validate.MultiSink{s.metrics, s.tracer}
	if cfg.Outputs.Log.Path != "" {
		if s.recLog, err = jsonlog.NewWriter(cfg.Outputs.Log); err != nil {
			return nil, fmt.Errorf("outputs.log: %w", err)
		}
		red = s.recLog.Redactor()
		sinks = append(sinks, s.recLog)
		if err := metrics.RegisterRedactions(s.reg, s.redactions); err != nil {
			return nil, err
		}
	}
	switch p := cfg.Outputs.Findings.Path; p {
	case "":
	case "-":
		s.findLog = jsonlog.NewFindingWriterTo(stdout, red)
	default:
		if s.findLog, err = jsonlog.NewFindingWriter(p, red); err != nil {
			return nil, fmt.Errorf("outputs.findings: %w", err)
		}
	}
	if s.findLog != nil {
		sinks = append(sinks, s.findLog)
	}
	sinks = append(sinks, extra...)

	prof, _ := validate.ProfileByName(cfg.Profile)
	prof, _ = prof.WithSeverities(cfg.Rules)
	lc := validate.DefaultLiveConfig()
	lc.Engine.Profile = prof
	lc.Engine.MaxStreams = cfg.Streams.Max
	lc.Engine.IdleTimeout = cfg.Streams.IdleTimeout
	lc.Engine.MaxRecordBytes = cfg.Streams.MaxRecordBytes
	lc.Shards = cfg.Streams.Shards
	lc.Queue = cfg.Streams.Queue
	lc.JoinWindow = cfg.Streams.JoinWindow
	lc.FinishOnShutdown = cfg.Streams.FinishOnShutdown
	s.live = validate.NewLive(lc, sinks)

	for _, t := range cfg.Taps {
		tr, err := s.buildTap(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("tap %s: %w", t.Name, err)
		}
		s.taps = append(s.taps, tr)
	}
	if err := metrics.RegisterTaps(s.reg, s.tapSnapshots); err != nil {
		return nil, err
	}
	// Listen now, so that a port in use is an error at start, not later.
	if s.listener, err = net.Listen("tcp", cfg.Listen); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return s, nil
}

func (s *sidecar) redactions() map[string]uint64 {
	counts := s.recLog.Redactions()
	out := make(map[string]uint64, len(counts))
	for i, n := range counts {
		out[jsonlog.RuleNames[i]] = n
	}
	return out
}

func (s *sidecar) tapSnapshots() []metrics.TapSnapshot {
	out := make([]metrics.TapSnapshot, 0, len(s.taps))
	for _, t := range s.taps {
		snap := metrics.TapSnapshot{Tap: t.name, Up: t.stats.Up.Load(),
			Messages: map[string]uint64{}, Bytes: map[string]uint64{}, Drops: map[string]uint64{},
			Lag: t.stats.Lag.Load(), LagUnit: t.lagUnit}
		for d := 0; d < tap.NumDirections; d++ {
			name := tap.Direction(d).String()
			snap.Messages[name] = t.stats.Messages[d].Load()
			snap.Bytes[name] = t.stats.Bytes[d].Load()
		}
		for r := 0; r < int(tap.NumDropReasons); r++ {
			snap.Drops[tap.DropReasonNames[r]] = t.stats.Drops[r].Load()
		}
		out = append(out, snap)
	}
	return out
}

func (s *sidecar) buildTap(ctx context.Context, t TapConfig) (*tapRun, error) {
	stats := &tap.Stats{}
	log := s.logger.With("tap", t.Name, "type", t.Type)
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
		src, err = ws.New(c, stats, log)
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
		c.OnOversize = func(pos tap.Position, n int64) {
			in := validate.Input{Tap: name, Pos: validate.Position(pos), Time: time.Now(), FromLog: true}
			_ = s.live.DecodeError(ctx, in, validate.ProtoE2A, fmt.Sprintf("log line of %d bytes is over the %d-byte limit: skipped", n, c.MaxLineBytes))
		}
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
		src, err = kafkatap.New(c, stats, log)
	default:
		err = fmt.Errorf("unknown type %q", t.Type)
	}
	if err != nil {
		return nil, err
	}
	lag := metrics.LagMessages // ws mirror queue, Kafka and JetStream pending
	if t.Type == "logdir" {
		lag = metrics.LagBytes
	}
	return &tapRun{name: t.Name, stats: stats, src: src, lagUnit: lag}, nil
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
		case m.Lost:
			tapName := m.Tap
			if tapName == "" {
				tapName = name
			}
			return s.live.Lost(ctx, tapName, m.Conn, m.Time)
		}
		in := validate.Input{
			Tap: m.Tap, Conn: m.Conn, Pos: validate.Position(m.Pos), Dir: uint8(m.Dir), Time: m.Time,
			Data: m.Data, FromLog: m.FromLog, Gap: m.Gap, Joined: m.Joined, Charged: m.Charged,
		}
		if in.Tap == "" {
			in.Tap = name
		}
		return s.live.Submit(ctx, in)
	}
}

// Run runs until ctx is done, then drains: the taps stop first, the engine
// judges what they handed over, the sinks flush, and the HTTP server stops
// last (so /metrics answers while draining).
func (s *sidecar) Run(ctx context.Context) error {
	srv := &http.Server{Handler: s.handler(), ReadHeaderTimeout: 5 * time.Second}
	httpDone := make(chan error, 1)
	go func() { httpDone <- srv.Serve(s.listener) }()
	s.logger.Info("e2atap running", "version", version, "listen", s.listener.Addr().String(), "taps", len(s.taps), "profile", s.cfg.Profile)

	engineCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan validate.Stats, 1)
	go func() { engineDone <- s.live.Run(engineCtx) }()

	g, gctx := errgroup.WithContext(ctx)
	for _, t := range s.taps {
		t := t
		g.Go(func() error {
			s.ready.Store(t.name, struct{}{})
			_ = s.live.Connected(gctx, t.name, time.Now())
			if err := t.src.Run(gctx, s.emit(t.name)); err != nil && !errors.Is(err, context.Canceled) {
				return fmt.Errorf("tap %s: %w", t.name, err)
			}
			return nil
		})
	}
	flushDone := make(chan struct{})
	go s.flushLoop(gctx, flushDone)
	tapErr := g.Wait()
	<-flushDone
	s.logger.Info("taps stopped; draining the engine")
	stopEngine()
	st := <-engineDone

	var errs []error
	if tapErr != nil {
		errs = append(errs, tapErr)
	}
	if s.recLog != nil {
		errs = append(errs, s.recLog.Close())
	}
	if s.findLog != nil {
		errs = append(errs, s.findLog.Close())
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	errs = append(errs, s.tracer.Shutdown(shutCtx))
	_ = srv.Shutdown(shutCtx)
	if err := <-httpDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
		errs = append(errs, err)
	}
	var findings uint64
	for _, n := range st.Findings {
		findings += n
	}
	s.logger.Info("e2atap stopped", "records", st.Records, "findings", findings)
	return errors.Join(errs...)
}

// flushLoop writes buffered log lines out every second.
func (s *sidecar) flushLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if s.recLog != nil {
				_ = s.recLog.Flush()
			}
			if s.findLog != nil {
				_ = s.findLog.Flush()
			}
		}
	}
}

func (s *sidecar) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{EnableOpenMetrics: true, Registry: s.reg}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		var down []string
		for _, t := range s.taps {
			if _, started := s.ready.Load(t.name); !started || !t.stats.Up.Load() {
				down = append(down, t.name)
			}
		}
		if len(down) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not ready: taps not up: %s\n", strings.Join(down, ", "))
			return
		}
		fmt.Fprintf(w, "ready: %d taps up (%s)\n", len(s.taps), runtime.Version())
	})
	return mux
}
