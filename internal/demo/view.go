package demo

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/e2atap/e2atap/validate"
)

// ViewState is what the live view shows at one moment.
type ViewState struct {
	Elapsed, Duration time.Duration // Duration 0: until Ctrl-C
	Stats             Stats
	RecordsPerSec     float64
	SentPerSec        float64
	Sent              uint64 // messages the simulation sent
	Altered           uint64
	// Report sets the faults injected so far beside the findings so far
	// (Ledger.Match). A finding comes after its fault is booked (a stream
	// that never ends only after the idle timeout): found < expected is
	// "not yet", and the summary at the end is the verdict.
	Report Report
	// Taps names the columns of the per-tap counts.
	Taps        Taps
	IdleTimeout time.Duration
	Header      []string // addresses and settings
	// Next says what to do with this run: commands with its real
	// addresses and paths. Printed as given (the caller redacts).
	Next []string
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

// taps lists the tap columns in order, with what each one watches.
func (st *ViewState) taps() []tapColumn {
	var out []tapColumn
	for _, t := range []tapColumn{
		{st.Taps.WS, "the WebSocket between Gateway and AgentServer (e2atap's proxy)"},
		{st.Taps.Log, "the AgentServer's own log file"},
		{st.Taps.NATS, "EventMesh frames on NATS"},
	} {
		if t.name != "" {
			out = append(out, t)
		}
	}
	return out
}

type tapColumn struct{ name, what string }

// ANSI: clear the screen and go home.
const clearHome = "\x1b[H\x1b[2J"

// lastShown is how many last findings the view shows when it does not
// know the terminal's height.
const lastShown = 8

// screen collects the lines of one section of the view, wrapped at the
// terminal's width so that the line count is the terminal's and nothing
// is cut.
type screen struct {
	width int
	lines []string
}

// add wraps s at the width; continuation lines start with cont.
func (sc *screen) add(s, cont string) {
	sc.lines = append(sc.lines, wrap(s, sc.width, cont)...)
}

func (sc *screen) addf(format string, args ...any) { sc.add(fmt.Sprintf(format, args...), "    ") }

// section is a part of the view; on a short terminal the sections of
// lower keep are shown first (0: always).
type section struct {
	keep  int
	lines []string
}

// RenderTTY draws the full-screen view (the caller writes it at once) for
// a terminal of width columns and height rows (0: unknown). Finding
// messages are shown whole, wrapped; the last findings fill the rows
// that are left. On a terminal too short for everything, the blank lines
// go first, then whole sections in this order: the header, the rates,
// the per-tap records, the next steps; the faults table stays.
func RenderTTY(st ViewState, width, height int) string {
	if width < 40 {
		width = 100
	}
	var secs []section
	add := func(keep int, fill func(sc *screen)) {
		sc := &screen{width: width}
		fill(sc)
		secs = append(secs, section{keep, sc.lines})
	}
	add(0, func(sc *screen) {
		left := "until Ctrl-C"
		if st.Duration > 0 {
			left = fmt.Sprintf("%s left", max(st.Duration-st.Elapsed, 0).Round(time.Second))
		}
		sc.addf("e2atap demo   %s elapsed, %s   (Ctrl-C ends it with a summary)", st.Elapsed.Round(time.Second), left)
	})
	add(5, func(sc *screen) {
		for _, h := range st.Header {
			sc.add("  "+st.redact(h), "      ")
		}
		sc.add(strings.Repeat("─", min(width, 100)), "")
	})
	add(4, func(sc *screen) {
		sc.addf("records %8.0f/s   total %-9d   sent by the simulation %6.0f/s (%d, altered in relay: %d)",
			st.RecordsPerSec, st.Stats.Records, st.SentPerSec, st.Sent, st.Altered)
	})
	taps := st.taps()
	add(3, func(sc *screen) {
		sc.add("", "")
		sc.addf("%-14s %9s %6s %9s   %s", "tap", "records", "open", "findings", "watches")
		for _, t := range taps {
			sc.addf("  %-12s %9d %6d %9d   %s", t.name, st.Stats.RecordsPerTap[t.name], st.Stats.Open[t.name], st.Stats.ByTap[t.name], t.what)
		}
	})
	add(0, func(sc *screen) {
		sc.add("", "")
		sc.add("injected faults and what each tap found of them (found/expected: one finding per tap that can see the fault)", "  ")
		// Columns as narrow as their contents, so that the table fits 80
		// columns with the demo's tap names.
		cell := func(name, v string) string { return fmt.Sprintf(" %*s", max(len(name), 7), v) }
		head := fmt.Sprintf("  %-18s %8s  %-18s", "fault", "injected", "rule")
		for _, t := range taps {
			head += cell(t.name, t.name)
		}
		sc.add(head, "")
		injected := 0
		for _, f := range st.Report.Faults {
			injected += f.Injected
			row := fmt.Sprintf("  %-18s %8d  %-18s", f.Fault, f.Injected, f.Rule)
			for _, t := range taps {
				row += cell(t.name, foundOf(f.Found[t.name], f.ExpectedByTap[t.name]))
			}
			sc.add(strings.TrimRight(row, " "), "")
		}
		found, expected := st.Report.ByTap()
		row := fmt.Sprintf("  %-18s %8d  %-18s", "total", injected, "")
		for _, t := range taps {
			row += cell(t.name, fmt.Sprintf("%d/%d", found[t.name], expected[t.name]))
		}
		sc.add(row, "")
		sc.add(fmt.Sprintf("  Why found is twice injected: an E2A fault crosses the wire and is written to the AgentServer's log, "+
			"so the %s and the %s tap each report it; a leaked token is only in the log, a frame fault only on NATS. "+
			"A stream that never ends is reported after the %s idle timeout.", st.Taps.WS, st.Taps.Log, st.IdleTimeout), "  ")
		sc.add(fmt.Sprintf("  Findings no injected fault explains: %d", len(st.Report.False)), "  ")
	})
	if len(st.Next) > 0 {
		add(2, func(sc *screen) {
			sc.add("", "")
			for _, n := range st.Next {
				sc.add(n, "      ")
			}
		})
	}

	// The findings get what is left, at least their title and one.
	var first []string
	if n := len(st.Stats.Last); n > 0 {
		first = findingLines(&st, &st.Stats.Last[n-1], width)
	}
	lines := fit(secs, height, 2+len(first))
	lines = append(lines, "", "last findings, newest first")
	if len(st.Stats.Last) == 0 {
		lines = append(lines, "  (none yet)")
	}
	for i, shown := len(st.Stats.Last)-1, 0; i >= 0; i, shown = i-1, shown+1 {
		fl := findingLines(&st, &st.Stats.Last[i], width)
		if shown > 0 && (height > 0 && len(lines)+len(fl) > height-1 || height <= 0 && shown == lastShown) {
			break
		}
		lines = append(lines, fl...)
	}
	var b strings.Builder
	b.WriteString(clearHome)
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// findingLines is one finding: where, then its whole message, wrapped.
func findingLines(st *ViewState, f *validate.Finding, width int) []string {
	const cont = "           "
	lines := wrap(fmt.Sprintf("  %s %-19s %s  at %s", f.Time.Format("15:04:05"), f.Rule, st.redact(f.Stream), shortSource(st.redact(f.Source))), width, cont)
	return append(lines, wrap(cont+st.redact(f.Message), width, cont)...)
}

// fit lays the sections out in order within height-1 rows less reserve
// (height 0: all of them): blank lines go first, then the sections of
// highest keep.
func fit(secs []section, height, reserve int) []string {
	count := func(skipBlank bool, upTo int) int {
		n := 0
		for _, s := range secs {
			if s.keep > upTo {
				continue
			}
			for _, l := range s.lines {
				if !skipBlank || l != "" {
					n++
				}
			}
		}
		return n
	}
	maxKeep := 0
	for _, s := range secs {
		maxKeep = max(maxKeep, s.keep)
	}
	budget := height - 1 - reserve
	skipBlank, upTo := false, maxKeep
	if height > 0 && count(false, upTo) > budget {
		skipBlank = true
		for upTo > 0 && count(true, upTo) > budget {
			upTo--
		}
	}
	var out []string
	for _, s := range secs {
		if s.keep > upTo {
			continue
		}
		for _, l := range s.lines {
			if !skipBlank || l != "" {
				out = append(out, l)
			}
		}
	}
	return out
}

// foundOf is one cell of the faults table: blank where the tap cannot
// see the fault (nothing expected, nothing found).
func foundOf(found, expected int) string {
	if found == 0 && expected == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", found, expected)
}

// RenderLine is the periodic plain line when stdout is not a terminal.
func RenderLine(st ViewState) string {
	open := 0
	for _, v := range st.Stats.Open {
		open += v
	}
	inj := 0
	for _, f := range st.Report.Faults {
		inj += f.Injected
	}
	found, expected := st.Report.ByTap()
	var taps []string
	for _, t := range st.taps() {
		taps = append(taps, fmt.Sprintf("%s=%d/%d", t.name, found[t.name], expected[t.name]))
	}
	s := fmt.Sprintf("[%5s] records=%d (%.0f/s) open_streams=%d injected=%d findings=%d found/expected{%s} unexplained=%d",
		st.Elapsed.Round(time.Second), st.Stats.Records, st.RecordsPerSec, open, inj, st.Stats.Findings, strings.Join(taps, " "), len(st.Report.False))
	var rules []string
	for _, r := range sortedKeys(st.Stats.ByRule) {
		rules = append(rules, fmt.Sprintf("%s=%d", r, st.Stats.ByRule[r]))
	}
	if len(rules) > 0 {
		s += " rules{" + strings.Join(rules, " ") + "}"
	}
	if n := len(st.Stats.Last); n > 0 {
		f := st.Stats.Last[n-1]
		s += fmt.Sprintf(" last: %s stream=%s source=%s message=%q", f.Rule, st.redact(f.Stream), st.redact(f.Source), st.redact(f.Message))
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

// wrap breaks s into lines of at most width runes, at spaces where it
// can (a word longer than a line is split); continuation lines start
// with cont. Nothing is dropped.
func wrap(s string, width int, cont string) []string {
	if width <= utf8.RuneCountInString(cont)+10 {
		return []string{s}
	}
	var out []string
	line := s
	for utf8.RuneCountInString(line) > width {
		cut := runeOffset(line, width) // bytes of the first width runes
		brk := strings.LastIndexByte(line[:cut+1], ' ')
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if brk <= indent || (len(out) > 0 && brk <= len(cont)) {
			brk = cut // one long word: split it
		}
		out = append(out, strings.TrimRight(line[:brk], " "))
		rest := strings.TrimLeft(line[brk:], " ")
		if rest == "" {
			return out
		}
		line = cont + rest
	}
	return append(out, line)
}

// runeOffset is the byte offset of the n-th rune of s (len(s) if fewer).
func runeOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// WrapText wraps every line of s at width columns (a terminal's), the
// continuation lines indented two more than their line: for the text
// printed once, before and after the view (settings, summary, next
// steps). Nothing is cut; width < 40 leaves s as it is.
func WrapText(s string, width int) string {
	if width < 40 {
		return s
	}
	var b strings.Builder
	for i, ln := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		indent := len(ln) - len(strings.TrimLeft(ln, " "))
		b.WriteString(strings.Join(wrap(ln, width, strings.Repeat(" ", indent+2)), "\n"))
	}
	return b.String()
}
