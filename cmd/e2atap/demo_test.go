package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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
