package demo

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/e2atap/e2atap/internal/gen"
	"github.com/e2atap/e2atap/validate"
)

// Fault is an injected fault: the E2A faults of internal/gen and the frame
// faults of the FrameGen.
type Fault string

// The frame faults.
const (
	FrameLostChunk   Fault = "frame_lost_chunk"   // a chunk never published: frame.seq_gap
	FrameMissingDone Fault = "frame_missing_done" // no done chunk: frame.missing_done
)

// AllFaults lists every fault in a fixed order (the summary's).
var AllFaults = func() []Fault {
	var out []Fault
	for _, f := range gen.AllFaults {
		out = append(out, Fault(f))
	}
	return append(out, FrameLostChunk, FrameMissingDone)
}()

// Rule is the rule that must report the fault.
func (f Fault) Rule() string {
	switch f {
	case FrameLostChunk:
		return "frame.seq_gap"
	case FrameMissingDone:
		return "frame.missing_done"
	}
	return gen.Fault(f).Rule()
}

// IsFrame tells the faults of the frame publisher from those of gen.
func (f Fault) IsFrame() bool { return f == FrameLostChunk || f == FrameMissingDone }

// ParseFaults reads a comma-separated list of fault names, "all" or "none".
func ParseFaults(s string) ([]Fault, error) {
	switch strings.TrimSpace(s) {
	case "all", "":
		return append([]Fault(nil), AllFaults...), nil
	case "none":
		return []Fault{}, nil
	}
	var out []Fault
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		ok := false
		for _, f := range AllFaults {
			if string(f) == name {
				out, ok = append(out, f), true
			}
		}
		if !ok {
			return nil, fmt.Errorf("unknown fault %q (want %s, all or none)", name, FaultNames())
		}
	}
	return out, nil
}

// FaultNames lists the fault names for usage text.
func FaultNames() string {
	var s []string
	for _, f := range AllFaults {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// Expect is a finding e2atap must report for an injected fault.
type Expect struct {
	Fault  Fault
	Rule   string
	Tap    string
	Stream string
}

type findingKey struct{ rule, tap, stream string }

// Ledger books injected faults: one Inject per fault actually sent, with
// the findings it must cause. Safe for concurrent use.
type Ledger struct {
	mu       sync.Mutex
	injected map[Fault]int
	expects  []Expect
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{injected: map[Fault]int{}} }

// Inject books one fault and the taps that must see it (one finding each,
// on stream, by the fault's rule).
func (l *Ledger) Inject(f Fault, stream string, taps ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.injected[f]++
	for _, t := range taps {
		l.expects = append(l.expects, Expect{Fault: f, Rule: f.Rule(), Tap: t, Stream: stream})
	}
}

// Injected returns the count of injected faults by kind.
func (l *Ledger) Injected() map[Fault]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[Fault]int, len(l.injected))
	for k, v := range l.injected {
		out[k] = v
	}
	return out
}

// Expects returns the expected findings so far.
func (l *Ledger) Expects() []Expect {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Expect(nil), l.expects...)
}

// FaultResult is the summary line of one fault kind.
type FaultResult struct {
	Fault    Fault
	Rule     string
	Injected int // faults sent
	Expected int // findings they must cause (one per observing tap)
	// ExpectedByTap splits Expected by tap: an E2A fault is on the wire
	// and in the AgentServer's log, so the ws tap and the log tap each
	// must report it; a leaked token is only in the log; a frame fault
	// only on NATS.
	ExpectedByTap map[string]int
	Found         map[string]int // tap → findings found by the rule, on the stream
}

// FoundTotal sums Found.
func (r FaultResult) FoundTotal() int {
	n := 0
	for _, v := range r.Found {
		n += v
	}
	return n
}

// Report sets the injected faults beside the findings.
type Report struct {
	Faults []FaultResult
	// Missing are expected findings e2atap did not report.
	Missing []Expect
	// False are findings no injected fault explains.
	False []validate.Finding
	// Findings is the total number of findings matched.
	Findings int
}

// ByTap sums, per tap, the findings that matched an injected fault and
// the findings expected.
func (r *Report) ByTap() (found, expected map[string]int) {
	found, expected = map[string]int{}, map[string]int{}
	for _, f := range r.Faults {
		for t, n := range f.Found {
			found[t] += n
		}
		for t, n := range f.ExpectedByTap {
			expected[t] += n
		}
	}
	return found, expected
}

// OK is true when every expected finding was reported and nothing else.
func (r *Report) OK() bool { return len(r.Missing) == 0 && len(r.False) == 0 }

// Match compares the ledger with the findings e2atap reported. A finding
// matches an expectation with the same rule, tap and stream; each
// expectation takes one finding.
func (l *Ledger) Match(findings []validate.Finding) Report {
	exp := l.Expects()
	inj := l.Injected()
	want := map[findingKey][]int{}
	for i, e := range exp {
		k := findingKey{e.Rule, e.Tap, e.Stream}
		want[k] = append(want[k], i)
	}
	matched := make([]bool, len(exp))
	rep := Report{Findings: len(findings)}
	byFault := map[Fault]*FaultResult{}
	for _, f := range AllFaults {
		byFault[f] = &FaultResult{Fault: f, Rule: f.Rule(), Injected: inj[f], ExpectedByTap: map[string]int{}, Found: map[string]int{}}
	}
	for _, e := range exp {
		byFault[e.Fault].Expected++
		byFault[e.Fault].ExpectedByTap[e.Tap]++
	}
	for _, f := range findings {
		k := findingKey{f.Rule, f.Tap, f.Stream}
		if idx := want[k]; len(idx) > 0 {
			i := idx[0]
			want[k] = idx[1:]
			matched[i] = true
			byFault[exp[i].Fault].Found[f.Tap]++
			continue
		}
		rep.False = append(rep.False, f)
	}
	for i, m := range matched {
		if !m {
			rep.Missing = append(rep.Missing, exp[i])
		}
	}
	for _, f := range AllFaults {
		rep.Faults = append(rep.Faults, *byFault[f])
	}
	return rep
}

// Write prints the summary: per fault kind, injected N, found M by rule X
// (per tap); then the misses and false findings, listed.
func (r *Report) Write(sb *strings.Builder) {
	fmt.Fprintf(sb, "%-20s %8s %9s %6s  %-20s %s\n", "fault", "injected", "expected", "found", "rule", "found/expected by tap")
	for _, f := range r.Faults {
		var taps []string
		for t, n := range f.ExpectedByTap {
			taps = append(taps, fmt.Sprintf("%s %d/%d", t, f.Found[t], n))
		}
		sort.Strings(taps)
		fmt.Fprintf(sb, "%-20s %8d %9d %6d  %-20s %s\n", f.Fault, f.Injected, f.Expected, f.FoundTotal(), f.Rule, strings.Join(taps, ", "))
	}
	fmt.Fprintf(sb, "missed findings: %d\n", len(r.Missing))
	for i, m := range r.Missing {
		if i == 20 {
			fmt.Fprintf(sb, "  ... and %d more\n", len(r.Missing)-i)
			break
		}
		fmt.Fprintf(sb, "  %s: want %s on tap %s, stream %s\n", m.Fault, m.Rule, m.Tap, m.Stream)
	}
	fmt.Fprintf(sb, "false findings: %d\n", len(r.False))
	for i, f := range r.False {
		if i == 20 {
			fmt.Fprintf(sb, "  ... and %d more\n", len(r.False)-i)
			break
		}
		fmt.Fprintf(sb, "  %s [%s] stream %q at %s: %s\n", f.Rule, f.Tap, f.Stream, f.Source, f.Message)
	}
	if r.OK() {
		sb.WriteString("verdict: every injected fault found, no false finding\n")
	} else {
		sb.WriteString("verdict: MISMATCH between injected faults and findings\n")
	}
}
