package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/e2atap/e2atap/exporters/jsonlog"
	"github.com/e2atap/e2atap/validate"
)

const validateUsage = `Usage: e2atap validate [flags] FILE...

Checks captures and logs of E2A traffic (JSON lines: responses, requests,
event frames, JSON-RPC, CloudEvents) or files of EventMesh frames against
the rule catalogue, with the verdicts the live sidecar gives. FILE "-" is
standard input; a gzip-compressed FILE is read decompressed. Several files
are one capture, read in order.

Exit status: 0 no finding at or above --fail-on, 1 some, 2 usage or I/O error
(a --log that could not be written is one), or interrupted: on SIGINT or
SIGTERM, the input being read (standard input or a file) is read no
further and the files after it are skipped; the findings so far and the
summary are printed,
and the streams still open are not judged (no missing_final: their input
was cut, not ended).

Flags:
`

type validateFlags struct {
	profile, format, output, failOn string
	maxLine, maxStreams, shards     int
	quiet                           bool
	cpuProfile, trace               string
	logPath, logContent             string
}

func cmdValidate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// One policy for everything this command prints (findings in both
	// formats, errors), keyed as the --log writer and the sidecar are, so
	// that a value shows the same fingerprint here and in their outputs.
	fpKey := []byte(os.Getenv("E2ATAP_FINGERPRINT_KEY"))
	pol := newPolicy(fpKey)
	stderr = redactingWriter{w: stderr, p: pol}
	var vf validateFlags
	fs := newFlagSet("validate", stderr)
	fs.StringVar(&vf.profile, "profile", validate.ProfileJiuwenswarm, "rule profile: spec (the E2A document) or jiuwenswarm (the reference implementation's real behaviour)")
	fs.StringVar(&vf.format, "format", "auto", "input format: auto (first byte 0xEF: frames, unless a UTF-8 byte order mark; else JSON lines), jsonl or frames")
	fs.StringVar(&vf.output, "output", "text", "text (findings, then a summary) or json (one finding per line on stdout, summary on stderr)")
	fs.StringVar(&vf.failOn, "fail-on", "error", "exit 1 when a finding is at or above this severity: error, warning, info or never")
	fs.IntVar(&vf.maxLine, "max-line-bytes", 8<<20, "a longer JSON line is an e2a.decode finding and is skipped")
	fs.IntVar(&vf.maxStreams, "max-streams", 1_000_000, "streams held at once over all shards; beyond it the stalest is evicted (outcome evicted), the same streams for any --shards")
	fs.IntVar(&vf.shards, "shards", runtime.GOMAXPROCS(0), "worker goroutines (streams are sharded by key; at most 4 per CPU and 256)")
	fs.BoolVar(&vf.quiet, "quiet", false, "text output: print the summary only")
	fs.StringVar(&vf.cpuProfile, "cpuprofile", "", "write a CPU profile to this file (for performance reports)")
	fs.StringVar(&vf.trace, "trace", "", "write an execution trace to this FILE (go tool trace: where the reader and the shards wait)")
	fs.StringVar(&vf.logPath, "log", "", "also write the redacted record log, as e2atap run does, to this FILE")
	fs.StringVar(&vf.logContent, "log-content", "mask", "with --log: model output and user text: mask, keep or drop (credentials are always masked)")
	if done, code := parseFlags(fs, validateUsage, args, stdout); done {
		return code
	}
	files := fs.Args()
	cfg, format, failOn, err := vf.config()
	if err == nil && len(files) == 0 {
		err = fmt.Errorf("no input: name at least one FILE (or - for standard input)")
	}
	if err != nil {
		fmt.Fprintf(stderr, "e2atap validate: %v\n", err)
		fs.Usage()
		return exitUsage
	}

	if vf.cpuProfile != "" {
		f, err := os.Create(vf.cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "e2atap validate: --cpuprofile: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "e2atap validate: --cpuprofile: %v\n", err)
			return exitUsage
		}
		defer pprof.StopCPUProfile()
	}
	if vf.trace != "" {
		f, err := os.Create(vf.trace)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintf(stderr, "e2atap validate: --trace: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		defer trace.Stop()
	}
	// The stream tables live off the Go heap: a GOMEMLIMIT counts them
	// (validate/offheap.go).
	defer validate.ChargeTablesToMemoryLimit()()
	// The collector's pace, unless GOGC is set: a heap floor, as in run,
	// but a smaller one (memory.go, validateGCFloor).
	if floor, _ := gcChoice(os.Getenv("GOGC"), chooseBudget(0, os.DirFS("/"), debug.SetMemoryLimit(-1)).Limit); floor > 0 {
		defer startGCFloor(min(floor, validateGCFloor))()
	}
	sink := newOfflineSink()
	sink.discard = vf.quiet && vf.output == "text"
	var handler validate.Sink = sink
	if vf.logPath != "" {
		lc := jsonlog.DefaultConfig()
		lc.Path, lc.Content, lc.RotateBytes = vf.logPath, vf.logContent, 0
		lc.FingerprintKey = fpKey
		err := lc.Validate()
		var lw *jsonlog.Writer
		if err == nil {
			err = truncateOutput(vf.logPath)
		}
		if err == nil {
			lw, err = jsonlog.NewWriter(lc)
		}
		if err != nil {
			fmt.Fprintf(stderr, "e2atap validate: --log: %v\n", err)
			return exitUsage
		}
		defer func() {
			// The log asked for is incomplete (a full disk, a file size
			// limit): an I/O error, whatever the findings. Also where the
			// writes after a failed one got in (the log cuts its torn
			// line and marks the loss): Close then has nothing to say.
			err := lw.Close()
			if lost := lw.Failed(); lost > 0 {
				err = fmt.Errorf("%w (%d lines lost)", cmp.Or(lw.Err(), err, errors.New("lines lost")), lost)
			}
			if err != nil {
				fmt.Fprintf(stderr, "e2atap validate: --log: %v\n", err)
				code = max(code, exitUsage)
			}
		}()
		handler = validate.MultiSink{sink, lw}
	}
	shards, capped := validate.ShardsFor(vf.shards, cfg.MaxStreams)
	if capped {
		fmt.Fprintf(stderr, "e2atap validate: --shards %d capped at %d (at most 4 per CPU of GOMAXPROCS %d, %d in all, one per 16384 streams of --max-streams)\n",
			vf.shards, shards, runtime.GOMAXPROCS(0), validate.MaxPartitions)
	}
	// A record that makes the engine panic (a defect of e2atap) is
	// skipped and said, not the end of the run: the rest is judged, and
	// the status says the verdicts are incomplete (exitInternal).
	var panics atomic.Uint64
	var panicMu sync.Mutex
	cfg.OnPanic = func(in *validate.Input, v any, stack []byte) {
		n := panics.Add(1)
		if n > maxPanicReports {
			return
		}
		panicMu.Lock()
		defer panicMu.Unlock()
		fmt.Fprintf(stderr, "e2atap validate: internal error judging %s (a defect of e2atap: please report it with this message): %v; the record was skipped and its streams are not judged across it\n", in.Source(), v)
		if n == 1 {
			stderr.Write(stack)
		}
	}
	run := validate.NewSharded(shards, cfg, handler)
	if vf.logPath == "" {
		run.Unordered() // findings print by index: interrupts need no barrier
	}
	run.Inline() // the reader judges shard 0's partitions itself (one shard: all, no copy, no queue)
	w := bufio.NewWriterSize(stdout, 64<<10)
	printer := newFindingPrinter(w, vf.output, vf.quiet, pol)
	// Findings are printed in input order as every shard passes them, so
	// that memory does not grow with the number of findings either.
	printDone := make(chan struct{})
	stopPrint := make(chan struct{})
	go func() {
		defer close(printDone)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPrint:
				return
			case <-t.C:
				sink.release(run.Watermark(), printer.print)
			}
		}
	}()
	start := time.Now()
	var idx uint64
	var replayed validate.Replayed // re-reads across rotated files too
	ioFailed := false
	opened := 0
	interrupted := false
	current := ""
	// judgeFiles reads and judges every file. A panic on this goroutine
	// (the reader judges shard 0's records itself: Inline) cannot skip one
	// record as the other shards do (cfg.OnPanic): aborted stops the run
	// there, what was judged before it is printed, and the status says so
	// (exitInternal).
	judgeFiles := func() {
		for _, name := range files {
			if ctx.Err() != nil {
				interrupted = true
				break
			}
			current = name
			rc, err := openInput(name, stdin)
			if err != nil {
				fmt.Fprintf(stderr, "e2atap validate: %v\n", err)
				ioFailed = true
				continue
			}
			opened++
			label := name
			var in io.Reader = rc // a file stays an *os.File: Read's fast paths
			if name == "-" {
				label = "stdin"
				in = newInterruptible(ctx, rc)
			}
			if looksLikeConfig(name) {
				fmt.Fprintf(stderr, "e2atap validate: %s looks like a configuration file; to check one, run: e2atap run --config %s --check\n", name, name)
			}
			idx, err = validate.Read(in, label, format, validate.ReadOptions{MaxLineBytes: vf.maxLine, FromLog: true, Index: idx, Replayed: &replayed, Stop: func() bool { return ctx.Err() != nil }}, run)
			rc.Close()
			var internal *validate.InternalError
			if errors.As(err, &internal) {
				// A walk of the file stopped at a defect: as a panic here.
				panic(internalAbort{internal})
			}
			if ctx.Err() != nil {
				// The input was cut here (an EOF too may be the signal's:
				// the producer of a pipe killed by the same Ctrl-C).
				interrupted = true
				break
			}
			if err != nil {
				fmt.Fprintf(stderr, "e2atap validate: reading %s: %v\n", name, err)
				ioFailed = true
			}
		}
		if interrupted {
			// What was read is judged; the open streams are not ended:
			// no missing_final for a stream whose input was cut.
			run.Close()
			return
		}
		run.Finish(validate.ReasonEOF, &validate.Input{Pos: validate.Position{Name: strings.Join(files, ",")}})
	}
	aborted := func() (aborted bool) {
		defer func() {
			if r := recover(); r != nil {
				aborted = true
				panics.Add(1)
				stack := debug.Stack()
				if ia, ok := r.(internalAbort); ok {
					r, stack = ia.Value, ia.Stack
				}
				panicMu.Lock()
				defer panicMu.Unlock()
				fmt.Fprintf(stderr, "e2atap validate: internal error judging %s (a defect of e2atap: please report it with this message): %v; stopped there: the findings before it are printed, the verdicts are incomplete\n", current, r)
				stderr.Write(stack)
			}
		}()
		judgeFiles()
		return false
	}
	if aborted() {
		run.Abort()
		close(stopPrint)
		<-printDone
		sink.release(run.Watermark(), printer.print)
		w.Flush()
		fmt.Fprintf(stderr, "e2atap validate: %d records skipped for an internal error (see above): the verdicts are incomplete\n", panics.Load())
		return exitInternal
	}
	close(stopPrint)
	<-printDone
	sink.release(^uint64(0), printer.print) // everything, end-of-input findings last
	if opened == 0 {
		// Nothing was read: a summary of nothing would only look like a
		// clean result to a script reading stdout.
		return exitUsage
	}
	stats := run.Stats()
	elapsed := time.Since(start)
	if vf.output == "json" {
		w.Flush()
		writeSummary(stderr, &stats, sink, elapsed)
	} else {
		if printer.n > 0 && !vf.quiet {
			fmt.Fprintln(w)
		}
		writeSummary(w, &stats, sink, elapsed)
		w.Flush()
	}
	if n := panics.Load(); n > 0 {
		fmt.Fprintf(stderr, "e2atap validate: %d records skipped for an internal error (see above): the verdicts are incomplete\n", n)
		return exitInternal
	}
	if interrupted {
		where := current
		if where == "-" {
			where = "standard input"
		}
		fmt.Fprintf(stderr, "e2atap validate: interrupted in %s after %d records: the input was not read to its end, and the streams still open were not judged\n", where, stats.Records)
		return exitUsage
	}
	if ioFailed {
		return exitUsage
	}
	if failOn != validate.Off && sink.worst >= failOn {
		return exitFindings
	}
	return exitOK
}

// internalAbort carries a walk's InternalError to validate's recovery.
type internalAbort struct{ *validate.InternalError }

// maxPanicReports is how many skipped records validate names (the first
// with its stack); the rest are counted.
const maxPanicReports = 3

// looksLikeConfig: a YAML file (by name) is most likely e2atap's own
// configuration given to the wrong command.
func looksLikeConfig(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

func (vf *validateFlags) config() (validate.Config, validate.Format, validate.Severity, error) {
	var errs []string
	cfg := validate.DefaultConfig()
	cfg.IdleTimeout = 0 // offline: streams end at the end of input
	p, err := validate.ProfileByName(vf.profile)
	if err != nil {
		errs = append(errs, "--profile: "+err.Error())
	}
	cfg.Profile = p
	cfg.MaxStreams = vf.maxStreams
	cfg.MaxRecordBytes = vf.maxLine
	format, err := validate.ParseFormat(vf.format)
	if err != nil {
		errs = append(errs, "--format: "+err.Error())
	}
	if vf.output != "text" && vf.output != "json" {
		errs = append(errs, fmt.Sprintf("--output: unknown output %q (want text or json)", vf.output))
	}
	failOn := validate.Off
	if vf.failOn != "never" {
		s, ok := validate.ParseSeverity(vf.failOn)
		if !ok || s == validate.Off {
			errs = append(errs, fmt.Sprintf("--fail-on: unknown severity %q (want error, warning, info or never)", vf.failOn))
		}
		failOn = s
	}
	if vf.maxLine < 1 {
		errs = append(errs, fmt.Sprintf("--max-line-bytes: %d, want at least 1", vf.maxLine))
	}
	if vf.maxStreams < 1 {
		errs = append(errs, fmt.Sprintf("--max-streams: %d, want at least 1", vf.maxStreams))
	}
	if vf.shards < 1 {
		errs = append(errs, fmt.Sprintf("--shards: %d, want at least 1", vf.shards))
	}
	if len(errs) > 0 {
		return cfg, format, failOn, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return cfg, format, failOn, nil
}

// findingJSON is the RULES.md shape of a finding.
type findingJSON struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Stream   string `json:"stream"`
	Source   string `json:"source"`
	Message  string `json:"message"`
}

func jsonFinding(f *validate.Finding) findingJSON {
	return findingJSON{Rule: f.Rule, Severity: f.Severity.String(), Stream: f.Stream, Source: f.Source, Message: f.Message}
}

// offlineSink holds findings until the shards have all passed them (so
// they print in input order) and counts them; it is called from every
// shard.
type offlineSink struct {
	mu sync.Mutex
	// discard: the findings are not printed (--quiet text output), so
	// none is held, only counted; end-of-input findings of a million open
	// streams would otherwise be held for ordering.
	discard bool
	pending []validate.Finding
	worst   validate.Severity
	sev     map[string]validate.Severity // rule → highest severity seen
}

func newOfflineSink() *offlineSink { return &offlineSink{sev: map[string]validate.Severity{}} }

func (s *offlineSink) Record(*validate.RecordInfo)      {}
func (s *offlineSink) StreamStart(*validate.StreamInfo) {}
func (s *offlineSink) StreamEnd(*validate.StreamInfo)   {}

// StreamsIgnored: the engine builds no StreamInfo for this sink.
func (s *offlineSink) StreamsIgnored() bool { return true }

// RecordsIgnored: nor a RecordInfo.
func (s *offlineSink) RecordsIgnored() bool { return true }

func (s *offlineSink) Finding(f *validate.Finding) {
	s.mu.Lock()
	if !s.discard {
		s.pending = append(s.pending, *f)
	}
	s.worst = max(s.worst, f.Severity)
	s.sev[f.Rule] = max(s.sev[f.Rule], f.Severity)
	s.mu.Unlock()
}

// release prints, in input order, the held findings with an index up to
// upTo; end-of-input findings (index 0) only when everything is released.
func (s *offlineSink) release(upTo uint64, print func(*validate.Finding)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := upTo == ^uint64(0)
	sort.SliceStable(s.pending, func(i, j int) bool { return validate.FindingBefore(&s.pending[i], &s.pending[j]) })
	n := 0
	for n < len(s.pending) && (all || (s.pending[n].Index != 0 && s.pending[n].Index <= upTo)) {
		print(&s.pending[n])
		n++
	}
	s.pending = append(s.pending[:0], s.pending[n:]...)
}

// findingPrinter writes findings as text or JSON lines. A finding's stream,
// source and message pass the redaction policy in both formats, as they do
// in the sidecar's findings log.
type findingPrinter struct {
	w     *bufio.Writer
	enc   *json.Encoder
	quiet bool
	pol   *policy
	n     int
}

func newFindingPrinter(w *bufio.Writer, output string, quiet bool, pol *policy) *findingPrinter {
	p := &findingPrinter{w: w, quiet: quiet, pol: pol}
	if output == "json" {
		p.enc = json.NewEncoder(w)
		p.enc.SetEscapeHTML(false)
	}
	return p
}

func (p *findingPrinter) print(f *validate.Finding) {
	p.n++
	red := *f
	text, num := f.SourceParts()
	red.Stream, red.Source, red.Message = p.pol.String(f.Stream), p.pol.String(text)+num, p.pol.String(f.Message)
	f = &red
	switch {
	case p.enc != nil:
		p.enc.Encode(jsonFinding(f))
	case !p.quiet:
		// One finding a line, whatever the traffic's values hold
		// (termSafe).
		stream := ""
		if f.Stream != "" {
			stream = " [" + termSafe(f.Stream) + "]"
		}
		fmt.Fprintf(p.w, "%s: %s %s%s: %s\n", termSafe(f.Source), f.Severity, f.Rule, stream, termSafe(f.Message))
	}
}

func writeSummary(w io.Writer, st *validate.Stats, sink *offlineSink, elapsed time.Duration) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	var total uint64
	for _, n := range st.Findings {
		total += n
	}
	rate := float64(st.Records) / elapsed.Seconds()
	fmt.Fprintf(tw, "%d records, %d findings in %s (%.0f records/s)\n", st.Records, total, elapsed.Round(time.Millisecond), rate)
	if total > 0 {
		fmt.Fprintln(tw, "\nrule\tseverity\tfindings")
		type row struct {
			rule string
			n    uint64
		}
		var rows []row
		for r, n := range st.Findings {
			if n > 0 {
				rows = append(rows, row{validate.RuleIDs[r], n})
			}
		}
		sort.Slice(rows, func(i, j int) bool {
			return rows[i].n > rows[j].n || (rows[i].n == rows[j].n && rows[i].rule < rows[j].rule)
		})
		sink.mu.Lock()
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%d\n", r.rule, sink.sev[r.rule], r.n)
		}
		sink.mu.Unlock()
	}
	var streams uint64
	for _, n := range st.Outcomes {
		streams += n
	}
	if streams+st.LeftOpen > 0 {
		fmt.Fprintln(tw, "\nstream outcome\tstreams\t")
		for o, n := range st.Outcomes {
			if n > 0 {
				fmt.Fprintf(tw, "%s\t%d\t\n", validate.Outcome(o), n)
			}
		}
		if st.LeftOpen > 0 {
			// A replayed record log's streams its run stopped with: no
			// outcome (the live run gave them none), no finding.
			fmt.Fprintf(tw, "open\t%d\t(left open by the run that logged them)\n", st.LeftOpen)
		}
	}
	if st.Joined > 0 || st.Evicted > 0 || st.Untracked > 0 {
		fmt.Fprintf(tw, "\njoined mid-stream: %d, evicted: %d", st.Joined, st.Evicted)
		if st.Untracked > 0 {
			// The stream tables could not get memory (validate/offheap.go).
			fmt.Fprintf(tw, ", records of untracked streams (no memory for them): %d", st.Untracked)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// redactingWriter passes what a command writes to stderr (errors that may
// quote input, flags or configuration) through the policy. Each Write is
// masked on its own: callers write whole messages.
type redactingWriter struct {
	w io.Writer
	p *policy
}

func (r redactingWriter) Write(b []byte) (int, error) {
	if _, err := r.w.Write(r.p.MaskText(nil, b)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// truncateOutput starts an output file of this run afresh (the sidecar's
// writer appends, which is right across restarts, not here). Only a
// regular file is cut: /dev/stdout, /dev/null, a FIFO or a terminal has
// nothing to cut and is written as it is (truncate(2) refuses them with
// EINVAL, which used to end the run with a usage error). "-" is standard
// output, and a path that does not exist yet is created by the writer.
func truncateOutput(path string) error {
	if path == "-" {
		return nil
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return nil
	}
	return os.Truncate(path, 0)
}
