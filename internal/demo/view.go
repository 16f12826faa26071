package demo

import (
	"fmt"
	"strings"
	"time"
)

// ViewState is what the live view shows at one moment.
type ViewState struct {
	Elapsed, Duration time.Duration // Duration 0: until Ctrl-C
	Stats             Stats
	RecordsPerSec     float64
	SentPerSec        float64
	Sent              uint64 // messages the simulation sent
	Altered           uint64
	Injected          map[Fault]int
	Header            []string // addresses and settings
	// Redact is the process's redaction policy: every value the view
	// prints that comes from a record or the configuration (a finding's
	// stream, source and message; the header) passes it. Nil masks those
	// values whole.
	Redact func(string) string
}

// redact applies st.Redact, or masks s whole without one.
func (st *ViewState) redact(s string) string {
	switch {
	case s == "":
		return s
	case st.Redact == nil:
		return "******"
	}
	return st.Redact(s)
}

// ANSI: clear the screen and go home.
const clearHome = "\x1b[H\x1b[2J"

// RenderTTY draws the full-screen view (the caller writes it at once).
func RenderTTY(st ViewState, width int) string {
	if width < 60 {
		width = 100
	}
	var b strings.Builder
	b.WriteString(clearHome)
	left := "until Ctrl-C"
	if st.Duration > 0 {
		left = fmt.Sprintf("%s left", (st.Duration - st.Elapsed).Round(time.Second))
	}
	fmt.Fprintf(&b, "e2atap demo   %s elapsed, %s   (Ctrl-C ends it with a summary)\n", st.Elapsed.Round(time.Second), left)
	for _, h := range st.Header {
		fmt.Fprintf(&b, "  %s\n", st.redact(h))
	}
	b.WriteString(strings.Repeat("─", min(width, 100)) + "\n")
	fmt.Fprintf(&b, "records  %8.0f/s   total %-9d   sent by the simulation %8.0f/s (%d, altered in relay: %d)\n",
		st.RecordsPerSec, st.Stats.Records, st.SentPerSec, st.Sent, st.Altered)
	var taps []string
	for _, t := range sortedKeys(st.Stats.RecordsPerTap) {
		taps = append(taps, fmt.Sprintf("%s %d records, %d open streams", t, st.Stats.RecordsPerTap[t], st.Stats.Open[t]))
	}
	fmt.Fprintf(&b, "taps     %s\n", strings.Join(taps, " │ "))
	b.WriteString("\nfindings by rule                         injected faults\n")
	rules := sortedKeys(st.Stats.ByRule)
	n := max(len(rules), len(AllFaults))
	for i := 0; i < n; i++ {
		l, r := "", ""
		if i < len(rules) {
			l = fmt.Sprintf("%-22s %6d", rules[i], st.Stats.ByRule[rules[i]])
		}
		if i < len(AllFaults) {
			f := AllFaults[i]
			r = fmt.Sprintf("%-20s %5d  → %s", f, st.Injected[f], f.Rule())
		}
		fmt.Fprintf(&b, "  %-38s %s\n", l, r)
	}
	fmt.Fprintf(&b, "  %-22s %6d\n", "total", st.Stats.Findings)
	b.WriteString("\nlast findings\n")
	if len(st.Stats.Last) == 0 {
		b.WriteString("  (none yet)\n")
	}
	for i := len(st.Stats.Last) - 1; i >= 0; i-- {
		f := st.Stats.Last[i]
		line := fmt.Sprintf("  %s %-19s %-28s %-34s %s", f.Time.Format("15:04:05"), f.Rule, trunc(st.redact(f.Stream), 28), trunc(shortSource(st.redact(f.Source)), 34), st.redact(f.Message))
		b.WriteString(trunc(line, width) + "\n")
	}
	return b.String()
}

// RenderLine is the periodic plain line when stdout is not a terminal.
func RenderLine(st ViewState) string {
	var rules []string
	for _, r := range sortedKeys(st.Stats.ByRule) {
		rules = append(rules, fmt.Sprintf("%s=%d", r, st.Stats.ByRule[r]))
	}
	open := 0
	for _, v := range st.Stats.Open {
		open += v
	}
	inj := 0
	for _, v := range st.Injected {
		inj += v
	}
	s := fmt.Sprintf("[%5s] records=%d (%.0f/s) open_streams=%d injected=%d findings=%d",
		st.Elapsed.Round(time.Second), st.Stats.Records, st.RecordsPerSec, open, inj, st.Stats.Findings)
	if len(rules) > 0 {
		s += " {" + strings.Join(rules, " ") + "}"
	}
	if n := len(st.Stats.Last); n > 0 {
		f := st.Stats.Last[n-1]
		s += fmt.Sprintf(" last: %s stream=%s source=%s", f.Rule, st.redact(f.Stream), st.redact(f.Source))
	}
	return s + "\n"
}

// shortSource drops the directories of a file position, keeping the tap:
// "agent-logs:/tmp/x/agentserver.jsonl:12" → "agent-logs:agentserver.jsonl:12".
func shortSource(s string) string {
	i := strings.IndexByte(s, ':')
	j := strings.LastIndexByte(s, '/')
	if i < 0 || j < i {
		return s
	}
	return s[:i+1] + s[j+1:]
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < 2 {
		return s[:n]
	}
	return s[:n-1] + "…"
}
