package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/e2atap/e2atap/internal/demo"
	"github.com/e2atap/e2atap/internal/gen"
	"github.com/e2atap/e2atap/tap/ws"
)

const demoUsage = `Usage: e2atap demo [flags]

Everything on one machine with no setup: an embedded NATS server, a
simulated AgentServer and Gateway talking E2A over a real WebSocket (as the
reference implementation does: connection.ack, streaming chats with
keepalives, unary calls, server push, user interrupts), an agent publishing
EventMesh stream frames on NATS, and the AgentServer's own JSON-lines log,
with a small labelled rate of injected faults. e2atap runs between and
beside them with its real taps (the WebSocket proxy, the NATS tap, the
log-directory tap), its engine and its exporters; /metrics, /healthz and
/readyz are served on --metrics-listen.

A live view redraws while it runs (plain periodic lines when standard
output is not a terminal). --duration or Ctrl-C ends it: the traffic is
drained, streams are given the idle timeout to be judged, and a summary
sets the injected faults beside what e2atap found. The exit status is 0
when every injected fault was found and nothing else, 1 otherwise.

The view shows, per tap, what it found of the injected faults: an E2A
fault crosses the wire and is written to the AgentServer's log, so the
WebSocket tap and the log tap each report it (twice the injected count);
a leaked token is only in the log, a frame fault only on NATS. It prints
what to try while it runs (curl the metrics, 'e2atap observe --addr'
against this run) and, at the end, where the files are: they are kept
(in --dir, or a new e2atap-demo-* directory under the temporary
directory) unless --keep=false, so 'e2atap validate DIR/records.jsonl'
replays e2atap's redacted record log offline (after a rotation, its parts
oldest first, as the last lines print them).

Faults: ` + "%s" + `.

Flags:
`

// demoOptions are the demo's settings (flags).
type demoOptions struct {
	Rate          float64
	FaultRate     float64
	Faults        []demo.Fault
	Seed          uint64
	Concurrent    int
	FrameShare    float64
	MetricsListen string
	NATSPort      int
	WSPort        int
	AgentPort     int
	IdleTimeout   time.Duration
	Dir           string // "": a new e2atap-demo-* directory under os.TempDir()
	Keep          bool   // keep the files at the end (false: remove what the demo wrote)
	Record        bool   // peers keep what they send and receive (tests)
	Ping          time.Duration
}

func defaultDemoOptions() demoOptions {
	return demoOptions{
		Rate: 200, FaultRate: 0.05, Faults: demo.AllFaults, Seed: 1, Concurrent: 8, FrameShare: 0.2,
		MetricsListen: "127.0.0.1:9464", IdleTimeout: 4 * time.Second, Ping: 10 * time.Second, Keep: true,
	}
}

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("demo", stderr)
	o := defaultDemoOptions()
	fs.Float64Var(&o.Rate, "rate", o.Rate, "messages per second, all peers together")
	fs.Float64Var(&o.FaultRate, "fault-rate", o.FaultRate, "share of streams that carry an injected fault (0 to 1)")
	faults := fs.String("faults", "all", "comma-separated faults to inject, all or none")
	fs.Uint64Var(&o.Seed, "seed", o.Seed, "random seed (the same seed sends the same script)")
	fs.IntVar(&o.Concurrent, "concurrent", o.Concurrent, "chats interleaved on the WebSocket")
	fs.Float64Var(&o.FrameShare, "frame-share", o.FrameShare, "share of messages that are EventMesh frames on NATS (0 to 1)")
	duration := fs.Duration("duration", 0, "stop after this long with the summary (0: until Ctrl-C)")
	fs.StringVar(&o.MetricsListen, "metrics-listen", o.MetricsListen, "where /metrics, /healthz and /readyz are served")
	fs.IntVar(&o.NATSPort, "nats-port", 0, "port of the embedded NATS server on 127.0.0.1 (0: a free one)")
	fs.IntVar(&o.WSPort, "ws-port", 0, "port of e2atap's WebSocket proxy on 127.0.0.1, where the Gateway connects (0: a free one)")
	fs.IntVar(&o.AgentPort, "agent-port", 0, "port of the simulated AgentServer on 127.0.0.1 (0: a free one)")
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", o.IdleTimeout, "streams silent this long are judged (missing final)")
	fs.StringVar(&o.Dir, "dir", "", "write the files (AgentServer log, e2atap's redacted record log, findings, e2atap's log) in this directory (default: a new e2atap-demo-* directory under "+os.TempDir()+")")
	fs.BoolVar(&o.Keep, "keep", o.Keep, "keep the files at the end (--keep=false removes what the demo wrote)")
	plain := fs.Bool("plain", false, "periodic plain lines even on a terminal")
	refresh := fs.Duration("refresh", time.Second, "how often the view redraws")
	if done, code := parseFlags(fs, fmt.Sprintf(demoUsage, demo.FaultNames()), args, stdout); done {
		return code
	}
	var errs []string
	var err error
	if o.Faults, err = demo.ParseFaults(*faults); err != nil {
		errs = append(errs, "--faults: "+err.Error())
	}
	if o.Rate < 1 || o.Rate > 100000 {
		errs = append(errs, fmt.Sprintf("--rate: %g, want 1 to 100000 messages/s", o.Rate))
	}
	if o.FaultRate < 0 || o.FaultRate > 1 {
		errs = append(errs, fmt.Sprintf("--fault-rate: %g is not between 0 and 1", o.FaultRate))
	}
	if o.FrameShare < 0 || o.FrameShare > 1 {
		errs = append(errs, fmt.Sprintf("--frame-share: %g is not between 0 and 1", o.FrameShare))
	}
	if o.Concurrent < 1 {
		errs = append(errs, fmt.Sprintf("--concurrent: %d, want at least 1", o.Concurrent))
	}
	if o.IdleTimeout < time.Second {
		errs = append(errs, fmt.Sprintf("--idle-timeout: %s, want at least 1s", o.IdleTimeout))
	}
	if *duration < 0 {
		errs = append(errs, "--duration: negative")
	}
	if *refresh < 100*time.Millisecond {
		errs = append(errs, "--refresh: want at least 100ms")
	}
	for _, p := range []struct {
		name string
		v    int
	}{{"--nats-port", o.NATSPort}, {"--ws-port", o.WSPort}, {"--agent-port", o.AgentPort}} {
		if p.v < 0 || p.v > 65535 {
			errs = append(errs, fmt.Sprintf("%s: %d is not a port", p.name, p.v))
		}
	}
	if len(errs) > 0 || fs.NArg() > 0 {
		if fs.NArg() > 0 {
			errs = append(errs, fmt.Sprintf("unexpected arguments %q", fs.Args()))
		}
		fmt.Fprintf(stderr, "e2atap demo: %s\n", strings.Join(errs, "; "))
		fs.Usage()
		return exitUsage
	}

	d, err := startDemo(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "e2atap demo: %v\n", err)
		return exitUsage
	}
	tty := !*plain && isTerminal(stdout)
	v := newDemoView(d, *duration, tty, stdout)
	// say prints text once (not the view), wrapped at a terminal's width.
	say := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		if tty {
			w, _ := v.size()
			s = demo.WrapText(s, w)
		}
		fmt.Fprint(stdout, s)
	}
	say("e2atap demo: seed %d, %g messages/s, fault rate %g; metrics on http://%s/metrics; files in %s\n",
		o.Seed, o.Rate, o.FaultRate, d.metricsAddr, d.dir)
	say("%s\n", strings.Join(d.nextSteps(true), "\n"))

	runCtx := ctx
	if *duration > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	condDone := make(chan error, 1)
	go func() { condDone <- d.cond.Run(runCtx, 0) }()
	tick := time.NewTicker(*refresh)
	var runErr error
loop:
	for {
		select {
		case runErr = <-condDone:
			break loop
		case <-tick.C:
			fmt.Fprint(stdout, v.render())
		}
	}
	tick.Stop()
	fmt.Fprint(stdout, v.render())
	if runErr != nil {
		say("\nthe simulation stopped: %v\n", runErr)
	}
	say("\nending: draining the traffic, then up to %s until the streams left open are judged by the %s idle timeout...\n", d.settleTime(), o.IdleTimeout)
	if err := d.finish(context.Background()); err != nil && runErr == nil {
		runErr = err
		say("draining: %v\n", err)
	}
	rep, stopErr := d.stop()
	say("%s\n%s\n", d.summary(rep), strings.Join(d.nextSteps(false), "\n"))
	if stopErr != nil {
		fmt.Fprintf(stderr, "e2atap demo: stopping: %v\n", stopErr)
	}
	if runErr != nil || !rep.OK() || d.cond.C.Altered.Load() > 0 {
		return exitFindings
	}
	return exitOK
}

// isTerminal: a character device is a terminal (no x/term in go.mod).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// demoRun is the assembled demo: the simulated peers, the embedded NATS
// server and the sidecar (assembled by newSidecar, as `e2atap run` does).
type demoRun struct {
	opts        demoOptions
	dir         string
	createdDir  bool // the demo made dir (it may remove it whole)
	ns          *server.Server
	as          *demo.AgentServer
	gw          *demo.Gateway
	pub         *demo.FramePublisher
	sc          *sidecar
	policy      *policy // the redaction policy of everything the view prints
	cond        *demo.Conductor
	ledger      *demo.Ledger
	coll        *demo.Collector
	stopSC      context.CancelFunc
	scDone      chan error
	metricsAddr string
	wsAddr      string
	natsURL     string
	started     time.Time
	stopped     bool
	logf        *os.File // the sidecar's own log
	logKeep     int      // the record log's rotated parts kept (outputs.log.keep)
}

// The demo's tap names.
const (
	demoTapWS   = "agent-ws"
	demoTapLog  = "agent-logs"
	demoTapNATS = "mesh"
)

// startDemo starts everything and connects the Gateway through e2atap's
// proxy. On error, what was started is stopped.
func startDemo(ctx context.Context, o demoOptions) (d *demoRun, err error) {
	d = &demoRun{opts: o, ledger: demo.NewLedger(), coll: demo.NewCollector(), started: time.Now()}
	started := d // the returns below set d to nil
	defer func() {
		if err != nil {
			started.stop()
			if started.createdDir {
				os.RemoveAll(started.dir) // nothing ran: nothing to keep
			}
		}
	}()
	if d.dir, d.createdDir, err = demoDir(o.Dir, d.started); err != nil {
		return nil, err
	}
	if d.ns, err = demo.StartNATS(o.NATSPort); err != nil {
		return nil, err
	}
	d.natsURL = d.ns.ClientURL()
	if d.as, err = demo.NewAgentServer(demo.AgentServerConfig{
		Listen: fmt.Sprintf("127.0.0.1:%d", o.AgentPort), LogDir: filepath.Join(d.dir, "agent"),
		PingInterval: o.Ping, Compress: true, Record: o.Record,
	}); err != nil {
		return nil, err
	}
	d.as.Start()

	// The sidecar's own log goes to a file: the terminal is the view's.
	logf, err := os.Create(filepath.Join(d.dir, "e2atap.log"))
	if err != nil {
		return nil, err
	}
	cfg := demoConfig(o, d.dir, d.as.URL(), d.natsURL)
	d.logKeep = cfg.Outputs.Log.Keep
	d.policy = newPolicy(cfg.Outputs.Log.FingerprintKey)
	logger := d.policy.logger(logf, slog.LevelInfo)
	subsBefore := d.ns.NumSubscriptions()
	d.logf = logf
	if d.sc, err = newSidecar(ctx, cfg, logger, io.Discard, d.coll); err != nil {
		return nil, err
	}
	d.metricsAddr = d.sc.listener.Addr().String()
	for _, t := range d.sc.taps {
		if p, ok := t.src.(*ws.Proxy); ok {
			d.wsAddr = p.Addr().String()
		}
	}
	scCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	d.stopSC, d.scDone = stop, make(chan error, 1)
	go func() { d.scDone <- d.sc.Run(scCtx) }()

	// Ready: every tap up, and the NATS tap's subscriptions registered
	// (frames published before would be lost to it).
	if err = waitFor(ctx, 10*time.Second, func() bool {
		for _, t := range d.sc.taps {
			if _, ok := d.sc.ready.Load(t.name); !ok || !t.stats.Up.Load() {
				return false
			}
		}
		return d.ns.NumSubscriptions() >= subsBefore+uint32(len(cfg.Taps[2].Subjects))
	}); err != nil {
		return nil, fmt.Errorf("e2atap's taps did not come up: %w", err)
	}
	if d.gw, err = demo.DialGateway(ctx, demo.GatewayConfig{URL: "ws://" + d.wsAddr + "/", Compress: true, Record: o.Record}); err != nil {
		return nil, err
	}
	if d.pub, err = demo.DialPublisher(d.natsURL); err != nil {
		return nil, err
	}
	gc := gen.DefaultConfig()
	gc.Seed, gc.FaultRate, gc.Concurrent = o.Seed, o.FaultRate, o.Concurrent
	gc.Faults = []gen.Fault{}
	for _, f := range o.Faults {
		if !f.IsFrame() {
			gc.Faults = append(gc.Faults, gen.Fault(f))
		}
	}
	d.cond = demo.NewConductor(demo.ConductorConfig{
		Gen:            gc,
		Frames:         demo.FrameGenConfig{Seed: o.Seed, Concurrent: 3, MinChunks: 3, MaxChunks: 10, FaultRate: o.FaultRate, Faults: o.Faults},
		FrameShare:     o.FrameShare,
		Rate:           o.Rate,
		KeepaliveAfter: o.IdleTimeout / 4,
		Taps:           demo.Taps{WS: demoTapWS, Log: demoTapLog, NATS: demoTapNATS},
	}, d.gw, d.as, d.pub, d.ledger)
	return d, nil
}

// demoConfig is the sidecar configuration of the demo: the three taps, a
// short idle timeout so that streams that never end are reported while
// the demo runs, the findings and the redacted record log in dir.
func demoConfig(o demoOptions, dir, agentURL, natsURL string) Config {
	cfg := DefaultConfig()
	cfg.Listen = o.MetricsListen
	cfg.Streams.IdleTimeout = o.IdleTimeout
	// The taps start before any traffic: every stream is seen from its
	// start, so a late start is a finding, not a join.
	cfg.Streams.JoinWindow = 0
	cfg.Taps = []TapConfig{
		{Name: demoTapWS, Type: "ws", Listen: fmt.Sprintf("127.0.0.1:%d", o.WSPort), Upstream: agentURL},
		{Name: demoTapLog, Type: "logdir", Paths: []string{filepath.Join(dir, "agent", "*.jsonl")}, Positions: filepath.Join(dir, "positions.json"), StartAt: "beginning"},
		{Name: demoTapNATS, Type: "nats", URL: natsURL, Subjects: []string{"agent.>", "client.>"}},
	}
	cfg.Outputs.Findings.Path = filepath.Join(dir, "findings.jsonl")
	cfg.Outputs.Log.Path = filepath.Join(dir, "records.jsonl")
	return cfg
}

// settleTime bounds the wait, after the last message, for every stream
// left open to be judged: the idle timeout, then slack. The engine's
// expiry runs every second but has been seen to judge an idle stream up
// to 4 s after its timeout on a loaded machine, so the wait ends as soon
// as no stream is open rather than after a fixed time.
func (d *demoRun) settleTime() time.Duration { return d.opts.IdleTimeout + 10*time.Second }

// finish drains the traffic and waits until every stream left open was
// judged by the idle timeout (no stream open on any tap), at most
// settleTime.
func (d *demoRun) finish(ctx context.Context) error {
	err := d.cond.Drain(ctx)
	// The last messages reach the taps (the log tap polls) before the
	// open streams are counted.
	t := time.NewTimer(time.Second)
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	t.Stop()
	waitFor(ctx, d.settleTime(), func() bool {
		for _, n := range d.coll.Snapshot(0).Open {
			if n > 0 {
				return false
			}
		}
		return true
	})
	return err
}

// stop closes everything, in order: the Gateway's connection (its end
// reaches e2atap), the AgentServer, the publisher, the sidecar (it drains
// its taps and engine), NATS; then it matches findings with faults.
func (d *demoRun) stop() (demo.Report, error) {
	if d.stopped {
		return demo.Report{}, nil
	}
	d.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	if d.gw != nil {
		errs = append(errs, d.gw.Close(ctx))
	}
	if d.as != nil {
		errs = append(errs, d.as.Close(ctx))
	}
	if d.pub != nil {
		d.pub.Close()
	}
	if d.stopSC != nil {
		d.stopSC()
		errs = append(errs, <-d.scDone)
	}
	if d.logf != nil {
		errs = append(errs, d.logf.Close())
	}
	if d.ns != nil {
		d.ns.Shutdown()
		d.ns.WaitForShutdown()
	}
	rep := d.ledger.Match(d.coll.Findings())
	if !d.opts.Keep && d.dir != "" {
		errs = append(errs, d.removeFiles())
	}
	return rep, errors.Join(errs...)
}

// The files the demo writes in its directory.
var (
	demoFiles = []string{"records.jsonl", "findings.jsonl", "e2atap.log", "positions.json", filepath.Join("agent", "agentserver.jsonl")}
	// The files that tell a directory holds a finished demo's output:
	// a second run would append to them, and its stream ids (the same
	// seed, the same ids) would turn the replay into after_final findings.
	demoOutputs = []string{"records.jsonl", "findings.jsonl", filepath.Join("agent", "agentserver.jsonl")}
)

// demoDir makes the demo's directory: dir, or a new e2atap-demo-<time>-*
// under os.TempDir(). A dir that holds a previous demo's files is refused.
func demoDir(dir string, now time.Time) (path string, created bool, err error) {
	if dir == "" {
		path, err = os.MkdirTemp("", "e2atap-demo-"+now.Format("20060102-150405")+"-")
		return path, err == nil, err
	}
	for _, f := range demoOutputs {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return "", false, fmt.Errorf("--dir %s already holds a demo's %s: remove it, or give another directory", dir, f)
		}
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		created = true
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false, err
	}
	return dir, created, nil
}

// removeFiles removes what the demo wrote (--keep=false): the whole
// directory when the demo made it, else only its own files.
func (d *demoRun) removeFiles() error {
	if d.createdDir {
		return os.RemoveAll(d.dir)
	}
	var errs []error
	for _, f := range demoFiles {
		if err := os.Remove(filepath.Join(d.dir, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if err := os.Remove(filepath.Join(d.dir, "agent")); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// nextSteps says what to do with this run, with its real addresses and
// paths: while it runs (the metrics, `e2atap observe` on the same
// listener), and with its files (kept or not). They are printed as they
// are, not through the redaction policy: they hold nothing from a record
// or a credential (the listen address, the directory the demo made or
// was given), and a fingerprinted path (a temporary directory's random
// name can look like a token) would be a command that does not work.
func (d *demoRun) nextSteps(running bool) []string {
	records := filepath.Join(d.dir, "records.jsonl")
	if running {
		files := fmt.Sprintf("files in %s, kept at the end (--keep=false removes them)", d.dir)
		if !d.opts.Keep {
			files = fmt.Sprintf("files in %s, removed at the end (--keep=false)", d.dir)
		}
		return []string{
			"try, in another terminal (the findings per tap and rule; live; the record log replayed offline):",
			fmt.Sprintf("  curl -s http://%s/metrics | grep '^e2atap_findings_total'", d.metricsAddr),
			fmt.Sprintf("  e2atap observe --addr %s --streams=false", d.metricsAddr),
			fmt.Sprintf("  e2atap validate %s", records),
			files,
		}
	}
	if !d.opts.Keep {
		return []string{fmt.Sprintf("files removed (--keep=false): %s", d.dir)}
	}
	logs, dropped := recordLogFiles(records, d.logKeep)
	same := "the same findings"
	if dropped {
		same = "the oldest rotated part was removed: streams that began in it are judged from their middle"
	}
	desc := "  records.jsonl             e2atap's redacted record log"
	if len(logs) > 1 {
		desc += fmt.Sprintf(" (and %d rotated parts, records.jsonl.1 the newest)", len(logs)-1)
	}
	return []string{
		fmt.Sprintf("files kept in %s:", d.dir),
		desc,
		"  findings.jsonl            the findings, one JSON line each",
		"  agent/agentserver.jsonl   the AgentServer's own log, the log tap's input (it holds the leaked test tokens)",
		"  e2atap.log                e2atap's own log",
		fmt.Sprintf("next: replay the record log offline, oldest part first (%s), and remove the files when done (or run with --keep=false):", same),
		"  e2atap validate " + strings.Join(logs, " "),
		fmt.Sprintf("  rm -r %s", d.dir),
	}
}

// recordLogFiles lists the record log's files in the order they were
// written: path.N (the oldest kept) ... path.1, then path. A replay of
// path alone after a rotation judged every stream that began in a rotated
// part from its middle (e2a.seq_start findings the run did not report),
// and a shell glob (path*) puts path first. dropped: the rotation may
// have removed a part (path.keep exists).
func recordLogFiles(path string, keep int) (files []string, dropped bool) {
	n := 0
	for {
		if _, err := os.Stat(fmt.Sprintf("%s.%d", path, n+1)); err != nil {
			break
		}
		n++
	}
	for i := n; i >= 1; i-- {
		files = append(files, fmt.Sprintf("%s.%d", path, i))
	}
	return append(files, path), keep > 0 && n >= keep
}

func (d *demoRun) summary(rep demo.Report) string {
	var b strings.Builder
	c := &d.cond.C
	st := d.coll.Snapshot(0)
	fmt.Fprintf(&b, "\n=== e2atap demo summary (%s, seed %d) ===\n", time.Since(d.started).Round(time.Second), d.opts.Seed)
	fmt.Fprintf(&b, "sent: %d messages (%d requests, %d responses on the WebSocket, %d log records with a leaked token (clean on the wire), %d keepalives for slow chats, %d frames on NATS); %d server push frames reached the Gateway\n",
		c.Messages.Load(), c.Requests.Load(), c.Responses.Load(), c.LogOnly.Load(), c.Keepalives.Load(), c.Frames.Load(), d.gw.Pushes())
	fmt.Fprintf(&b, "relayed by the proxy unchanged: %v (%d altered)\n", c.Altered.Load() == 0, c.Altered.Load())
	var taps []string
	for _, t := range []string{demoTapWS, demoTapLog, demoTapNATS} {
		taps = append(taps, fmt.Sprintf("%s %d", t, st.RecordsPerTap[t]))
	}
	fmt.Fprintf(&b, "records judged by e2atap: %d (%s)\n", st.Records, strings.Join(taps, ", "))
	fmt.Fprintf(&b, "expected: one finding per tap that can see a fault. An E2A fault crosses the wire and is written to the AgentServer's log, so %s and %s each report it (expected = 2 × injected); a leaked token is only in the log (%s), a frame fault only on NATS (%s).\n\n",
		demoTapWS, demoTapLog, demoTapLog, demoTapNATS)
	// The report quotes findings (stream, source, message): the policy.
	var r strings.Builder
	rep.Write(&r)
	b.WriteString(d.policy.String(r.String()))
	return b.String()
}

// demoView computes rates between redraws.
type demoView struct {
	d        *demoRun
	duration time.Duration
	tty      bool
	out      io.Writer // the terminal, for its size
	lastAt   time.Time
	lastRec  uint64
	lastSent uint64
}

func newDemoView(d *demoRun, duration time.Duration, tty bool, out io.Writer) *demoView {
	return &demoView{d: d, duration: duration, tty: tty, out: out, lastAt: time.Now()}
}

// size is the terminal's columns and rows, asked at every redraw (the
// window may change); 120 columns and an unknown height when it cannot be
// asked.
func (v *demoView) size() (width, height int) {
	if f, ok := v.out.(*os.File); ok && v.tty {
		if w, h, ok := terminalSize(f); ok {
			return w, h
		}
	}
	return 120, 0
}

func (v *demoView) render() string {
	width, height := v.size()
	vs := v.state(max(height, 8))
	if v.tty {
		return demo.RenderTTY(vs, width, height)
	}
	return demo.RenderLine(vs)
}

// state is the view's state now, with the last n findings.
func (v *demoView) state(n int) demo.ViewState {
	now := time.Now()
	dt := now.Sub(v.lastAt).Seconds()
	st := v.d.coll.Snapshot(n)
	sent := v.d.cond.C.Messages.Load()
	vs := demo.ViewState{
		Elapsed: now.Sub(v.d.started), Duration: v.duration, Stats: st, Sent: sent,
		Altered: v.d.cond.C.Altered.Load(),
		Report:  v.d.ledger.Match(v.d.coll.Findings()),
		Taps:    demo.Taps{WS: demoTapWS, Log: demoTapLog, NATS: demoTapNATS}, IdleTimeout: v.d.opts.IdleTimeout,
		Redact: v.d.policy.String,
		Header: []string{
			fmt.Sprintf("Gateway → e2atap ws proxy %s → AgentServer %s   NATS %s", v.d.wsAddr, v.d.as.Addr(), v.d.natsURL),
			fmt.Sprintf("seed %d   %g msg/s   fault rate %g   idle timeout %s", v.d.opts.Seed, v.d.opts.Rate, v.d.opts.FaultRate, v.d.opts.IdleTimeout),
		},
		Next: v.d.nextSteps(true),
	}
	if dt > 0 {
		vs.RecordsPerSec = float64(st.Records-v.lastRec) / dt
		vs.SentPerSec = float64(sent-v.lastSent) / dt
	}
	v.lastAt, v.lastRec, v.lastSent = now, st.Records, sent
	return vs
}

// waitFor polls cond until it holds, ctx ends or limit passes.
func waitFor(ctx context.Context, limit time.Duration, cond func() bool) error {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}
