package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/e2atap/e2atap/internal/demo"
	"github.com/e2atap/e2atap/validate"
)

// TestDemoWholeSystem runs the demo's parts with e2atap's real taps for a
// bounded script (3000 messages at 1000/s) and checks the
// whole system: every injected fault found by the expected rule, tap and
// stream, and nothing else; the relay byte-identical and in order;
// /metrics agreeing with the findings; the redacted record log replaying
// to the same findings with `e2atap validate`; no goroutine left behind.
func TestDemoWholeSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-system test: about 10 s")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()

	o := defaultDemoOptions()
	o.Seed, o.FaultRate, o.Rate = 7, 0.12, 1000
	o.MetricsListen = "127.0.0.1:0"
	o.IdleTimeout = 3 * time.Second
	o.Dir = t.TempDir()
	o.Record = true
	o.Ping = 50 * time.Millisecond // control frames interleaved with the data
	d, err := startDemo(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			d.stop()
		}
	}()
	const messages = 3000
	if err := d.cond.Run(ctx, messages); err != nil {
		t.Fatalf("conductor: %v", err)
	}
	if err := d.finish(ctx); err != nil {
		t.Fatalf("drain: %v", err)
	}
	live := d.coll.Findings()

	// Metrics agree with the findings, per tap and rule.
	metricCounts := scrapeFindings(t, "http://"+d.metricsAddr+"/metrics")
	collected := map[string]int{}
	for _, f := range live {
		collected[f.Tap+" "+f.Rule]++
	}
	if fmt.Sprint(sortedCounts(metricCounts)) != fmt.Sprint(sortedCounts(collected)) {
		t.Errorf("e2atap_findings_total disagrees with the findings:\nmetrics:  %v\nfindings: %v", sortedCounts(metricCounts), sortedCounts(collected))
	}

	// The live view of this run, as a 100-column terminal shows it: per
	// tap what it found of the injected faults (the ledger's own count),
	// the last findings' messages whole, this run's next steps.
	view := newDemoView(d, 0, true, nil)
	screen := demo.RenderTTY(view.state(8), 100, 0)
	checkView(t, screen, d.ledger.Match(live), live, d)

	rep, err := d.stop()
	stopped = true
	if err != nil {
		t.Errorf("stop: %v", err)
	}
	var sb strings.Builder
	rep.Write(&sb)
	t.Logf("summary:\n%s", sb.String())

	// Every fault kind was exercised, found by its rule on every tap that
	// carried it, and nothing else was reported.
	if !rep.OK() {
		t.Errorf("findings do not match the injected faults")
	}
	for _, f := range rep.Faults {
		if f.Injected == 0 {
			t.Errorf("fault %s was never injected: pick another seed or more messages", f.Fault)
		}
		if f.FoundTotal() != f.Expected {
			t.Errorf("fault %s: expected %d findings, found %d", f.Fault, f.Expected, f.FoundTotal())
		}
		wantTaps := 2
		switch {
		case f.Fault.IsFrame(), f.Fault == demo.Fault("leaked_token"):
			wantTaps = 1
		}
		if f.Expected != wantTaps*f.Injected {
			t.Errorf("fault %s: %d expected findings for %d faults, want %d per fault", f.Fault, f.Expected, f.Injected, wantTaps)
		}
	}
	if len(live) != rep.Findings || rep.Findings == 0 {
		t.Errorf("%d findings live, %d matched", len(live), rep.Findings)
	}

	// The relay: what the AgentServer sent is what the Gateway received,
	// byte for byte, in one order (hence in order per stream), and the
	// other way round.
	c := &d.cond.C
	if n := c.Altered.Load(); n != 0 {
		t.Errorf("%d messages altered in relay", n)
	}
	if c.Messages.Load() < messages {
		t.Errorf("sent %d messages, want at least %d", c.Messages.Load(), messages)
	}
	sameSeq(t, "AgentServer → Gateway", d.as.Sent(), d.gw.Responses())
	sameSeq(t, "Gateway → AgentServer", d.gw.Sent(), d.as.Requests())
	if d.gw.Pushes() == 0 {
		t.Errorf("no server push frame reached the Gateway")
	}

	// The redacted record log, given to `e2atap validate` whole, gives the
	// live findings: the same rule, stream and source for each, e2a.secret
	// and the NATS tap's frame rules included.
	want := map[string]int{}
	for _, f := range live {
		want[f.Rule+" "+f.Stream+" "+f.Source]++
	}
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"validate", "--output", "json", "--fail-on", "never", filepath.Join(o.Dir, "records.jsonl")}, nil, &out, &errOut)
	if code != 0 {
		t.Fatalf("e2atap validate of the record log: exit %d: %s", code, errOut.String())
	}
	got := map[string]int{}
	for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var f validate.Finding
		if err := json.Unmarshal(line, &f); err != nil {
			t.Fatalf("validate --output json: %v: %s", err, line)
		}
		got[f.Rule+" "+f.Stream+" "+f.Source]++
	}
	if fmt.Sprint(sortedCounts(got)) != fmt.Sprint(sortedCounts(want)) {
		t.Errorf("the redacted log replays to other findings:\nreplay: %v\nlive:   %v", sortedCounts(got), sortedCounts(want))
	}
	for _, rule := range []string{"e2a.secret", "frame.seq_gap", "e2a.seq_gap"} {
		if !slices.ContainsFunc(live, func(f validate.Finding) bool { return f.Rule == rule }) {
			t.Errorf("no live %s finding to compare", rule)
		}
	}
	// The leaked token is in the AgentServer's log, never in e2atap's.
	for _, name := range []string{"records.jsonl", "findings.jsonl"} {
		b, err := os.ReadFile(filepath.Join(o.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("eyJhbGciOiJIUzI1NiJ9")) {
			t.Errorf("%s holds the leaked token", name)
		}
	}
}

// checkView checks a rendered live view against the run: each fault's
// row holds found/expected per tap as the ledger counts them, the newest
// findings' messages are there whole, and the next steps name this run's
// metrics address and record log.
func checkView(t *testing.T, screen string, rep demo.Report, live []validate.Finding, d *demoRun) {
	t.Helper()
	rows := map[string]string{}
	for _, ln := range strings.Split(screen, "\n") {
		if f := strings.Fields(ln); len(f) > 0 {
			rows[f[0]] = strings.Join(f, " ")
		}
	}
	for _, f := range rep.Faults {
		want := fmt.Sprintf("%s %d %s", f.Fault, f.Injected, f.Rule)
		for _, tap := range []string{demoTapWS, demoTapLog, demoTapNATS} {
			if n := f.ExpectedByTap[tap]; n > 0 {
				want += fmt.Sprintf(" %d/%d", f.Found[tap], n)
			}
		}
		if rows[string(f.Fault)] != want {
			t.Errorf("view row %q, want %q", rows[string(f.Fault)], want)
		}
		if f.Injected > 0 && f.Fault != "leaked_token" && !f.Fault.IsFrame() && f.ExpectedByTap[demoTapWS] != f.Injected {
			t.Errorf("%s: %d injected, %d expected of %s", f.Fault, f.Injected, f.ExpectedByTap[demoTapWS], demoTapWS)
		}
	}
	flat := strings.Join(strings.Fields(screen), " ")
	for _, f := range live[max(len(live)-3, 0):] {
		if msg := strings.Join(strings.Fields(d.policy.String(f.Message)), " "); !strings.Contains(flat, msg) {
			t.Errorf("view lacks the whole message %q:\n%s", msg, screen)
		}
	}
	for _, want := range []string{
		"Why found is twice injected",
		"e2atap observe --addr " + d.metricsAddr + " --streams=false",
		"curl -s http://" + d.metricsAddr + "/metrics",
		"e2atap validate " + filepath.Join(d.dir, "records.jsonl"),
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("view lacks %q:\n%s", want, screen)
		}
	}
}

var findingsLine = regexp.MustCompile(`^e2atap_findings_total\{([^}]*)\} ([0-9.e+]+)`)
var labelPair = regexp.MustCompile(`(\w+)="([^"]*)"`)

// scrapeFindings reads e2atap_findings_total per "tap rule" from /metrics.
func scrapeFindings(t *testing.T, url string) map[string]int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		m := findingsLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		labels := map[string]string{}
		for _, p := range labelPair.FindAllStringSubmatch(m[1], -1) {
			labels[p[1]] = p[2]
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("bad sample %q", sc.Text())
		}
		if v > 0 {
			out[labels["tap"]+" "+labels["rule"]] += int(v)
		}
	}
	return out
}

func sortedCounts(m map[string]int) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

func sameSeq(t *testing.T, what string, sent, got [][]byte) {
	t.Helper()
	if len(sent) != len(got) {
		t.Errorf("%s: %d messages sent, %d received", what, len(sent), len(got))
	}
	for i := 0; i < min(len(sent), len(got)); i++ {
		if !bytes.Equal(sent[i], got[i]) {
			t.Errorf("%s: message %d differs:\nsent %s\ngot  %s", what, i, sent[i], got[i])
			return
		}
	}
}

// TestDemoNextStepsAndFiles runs `e2atap demo` as a person would (the
// command, its flags, its output) and checks what it tells them to do:
// the metrics URL and `e2atap observe --addr` with this run's real
// address, both answering while it runs; the record log's path and the
// validate command for it; the files kept at the end in a printed
// e2atap-demo-* directory under the temporary directory, and replayable.
func TestDemoNextStepsAndFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo: about 8 s")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, errOut := &lockedBuffer{}, &lockedBuffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"demo", "--duration", "3s", "--idle-timeout", "1s", "--metrics-listen", "127.0.0.1:0", "--fault-rate", "0.2", "--rate", "300"}, nil, out, errOut)
	}()

	// While it runs: the printed commands work against this run.
	observeAt := regexp.MustCompile(`(?m)^  e2atap observe --addr (127\.0\.0\.1:\d+) --streams=false$`)
	var addr string
	if err := waitFor(ctx, 20*time.Second, func() bool {
		if m := observeAt.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	}); err != nil {
		t.Fatalf("no observe command printed: %v\n%s%s", err, out, errOut)
	}
	start := out.String()
	dirLine := regexp.MustCompile(`(?m)^files in (\S+), kept at the end \(--keep=false removes them\)$`).FindStringSubmatch(start)
	if dirLine == nil {
		t.Fatalf("the start does not say where the files are kept:\n%s", start)
	}
	dir := dirLine[1]
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "e2atap-demo-") {
		t.Errorf("files in %s, want a new e2atap-demo-* directory in %s", dir, tmp)
	}
	records := filepath.Join(dir, "records.jsonl")
	for _, want := range []string{
		fmt.Sprintf("  curl -s http://%s/metrics | grep '^e2atap_findings_total'\n", addr),
		fmt.Sprintf("\n  e2atap validate %s\n", records),
	} {
		if !strings.Contains(start, want) {
			t.Errorf("the start lacks %q:\n%s", want, start)
		}
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(b, []byte("e2atap_records_total")) {
		t.Errorf("the printed metrics URL serves no e2atap metrics")
	}
	var obs, obsErr bytes.Buffer
	if code := run(ctx, []string{"observe", "--addr", addr, "--streams=false", "--follow=false", "--output", "table"}, nil, &obs, &obsErr); code != 0 || !strings.HasPrefix(obs.String(), "TIME ") {
		t.Errorf("e2atap observe --addr %s: exit %d: %s%s", addr, code, obs.String(), obsErr.String())
	}

	var code int
	select {
	case code = <-done:
	case <-ctx.Done():
		t.Fatal("the demo did not end")
	}
	all := out.String()
	if code != exitOK && code != exitFindings {
		t.Fatalf("exit %d:\n%s%s", code, all, errOut)
	}
	// The view's lines (plain, as stdout is no terminal) and the summary
	// say per tap what was found of what was injected, and why twice.
	for _, want := range []string{"found/expected{agent-ws=", " agent-logs=", " mesh=", "expected = 2 × injected",
		"files kept in " + dir + ":", "  records.jsonl ", "  agent/agentserver.jsonl ",
		"next: replay the record log offline", "\n  e2atap validate " + records + "\n  rm -r " + dir + "\n"} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\n%s", want, all)
		}
	}
	// Kept: the files are there, and the record log replays.
	for _, f := range demoFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("not kept: %v", err)
		}
	}
	var val, valErr bytes.Buffer
	if code := run(ctx, []string{"validate", "--output", "json", records}, nil, &val, &valErr); code != exitFindings || !strings.Contains(val.String(), `"rule":`) {
		t.Errorf("e2atap validate %s: exit %d, %d bytes of findings: %s", records, code, val.Len(), valErr.String())
	}
	// A second run into the same --dir would mix two runs' streams.
	var again bytes.Buffer
	if code := run(ctx, []string{"demo", "--dir", dir, "--metrics-listen", "127.0.0.1:0"}, nil, io.Discard, &again); code != exitUsage || !strings.Contains(again.String(), "already holds a demo's records.jsonl") {
		t.Errorf("a second demo into %s: exit %d: %s", dir, code, again.String())
	}
}

// TestDemoKeepFalse: --keep=false removes what the demo wrote and says so:
// the whole directory it made, or only its own files in a --dir that was
// there before.
func TestDemoKeepFalse(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo twice: about 12 s")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mine := filepath.Join(tmp, "mine")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"a directory of its own", nil},
		{"a --dir that was there", []string{"--dir", mine}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			var out, errOut bytes.Buffer
			args := append([]string{"demo", "--keep=false", "--duration", "1s", "--idle-timeout", "1s", "--metrics-listen", "127.0.0.1:0"}, tc.args...)
			if code := run(ctx, args, nil, &out, &errOut); code != exitOK && code != exitFindings {
				t.Fatalf("exit %d:\n%s%s", code, out.String(), errOut.String())
			}
			m := regexp.MustCompile(`(?m)^files removed \(--keep=false\): (\S+)$`).FindStringSubmatch(out.String())
			if m == nil || !strings.Contains(out.String(), "files in "+m[1]+", removed at the end (--keep=false)\n") {
				t.Fatalf("the output does not say the files are removed:\n%s", out.String())
			}
			if tc.args == nil {
				if _, err := os.Stat(m[1]); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is still there: %v", m[1], err)
				}
				return
			}
			entries, err := os.ReadDir(mine)
			if err != nil || len(entries) != 1 || entries[0].Name() != "notes.txt" {
				t.Errorf("--dir %s after --keep=false: %v, %v; want only notes.txt", mine, entries, err)
			}
		})
	}
}

// TestDemoReplayHintListsRotatedParts: after the record log rotated, the
// demo's last hint replays its parts oldest first (a replay of
// records.jsonl alone, or of a shell glob that puts it first, judged the
// streams begun in a rotated part from their middle: e2a.seq_start
// findings the run had not reported), and says when a part was removed.
func TestDemoReplayHintListsRotatedParts(t *testing.T) {
	dir := t.TempDir()
	records := filepath.Join(dir, "records.jsonl")
	for _, f := range []string{records, records + ".1", records + ".2"} {
		os.WriteFile(f, nil, 0o644)
	}
	d := &demoRun{dir: dir, opts: demoOptions{Keep: true}, logKeep: 5}
	out := strings.Join(d.nextSteps(false), "\n")
	if want := "\n  e2atap validate " + records + ".2 " + records + ".1 " + records + "\n"; !strings.Contains(out, want) {
		t.Errorf("the replay hint does not list the parts oldest first (%q):\n%s", want, out)
	}
	if !strings.Contains(out, "the same findings") {
		t.Errorf("no part removed, but the hint does not promise the same findings:\n%s", out)
	}
	d.logKeep = 2
	if out := strings.Join(d.nextSteps(false), "\n"); !strings.Contains(out, "the oldest rotated part was removed") {
		t.Errorf("keep 2 with records.jsonl.2 there: the hint does not say a part may be gone:\n%s", out)
	}
}
