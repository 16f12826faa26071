package demo

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.uber.org/goleak"

	"github.com/e2atap/e2atap/frame"
	"github.com/e2atap/e2atap/validate"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseFaults(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		err  bool
	}{
		{"all", len(AllFaults), false},
		{"none", 0, false},
		{"lost_chunk, frame_missing_done", 2, false},
		{"nope", 0, true},
	} {
		got, err := ParseFaults(tc.in)
		if (err != nil) != tc.err || len(got) != tc.want {
			t.Errorf("ParseFaults(%q) = %v, %v", tc.in, got, err)
		}
	}
}

func TestLedgerMatch(t *testing.T) {
	l := NewLedger()
	l.Inject(Fault("double_final"), "req-1", "log", "ws")
	l.Inject(FrameMissingDone, "sid-1", "mesh")
	l.Inject(Fault("leaked_token"), "req-2", "log")
	findings := []validate.Finding{
		{Rule: "e2a.after_final", Tap: "ws", Stream: "req-1"},
		{Rule: "e2a.after_final", Tap: "log", Stream: "req-1"},
		{Rule: "e2a.after_final", Tap: "log", Stream: "req-1"}, // one too many
		{Rule: "frame.missing_done", Tap: "mesh", Stream: "sid-1"},
		{Rule: "e2a.seq_gap", Tap: "ws", Stream: "req-9"},
	}
	rep := l.Match(findings)
	if rep.OK() || len(rep.False) != 2 || len(rep.Missing) != 1 || rep.Missing[0].Stream != "req-2" {
		t.Fatalf("report: false %v, missing %v", rep.False, rep.Missing)
	}
	for _, f := range rep.Faults {
		switch f.Fault {
		case "double_final":
			if f.Injected != 1 || f.Expected != 2 || f.FoundTotal() != 2 {
				t.Errorf("double_final: %+v", f)
			}
		case "leaked_token":
			if f.Injected != 1 || f.Expected != 1 || f.FoundTotal() != 0 {
				t.Errorf("leaked_token: %+v", f)
			}
		}
	}
	var sb strings.Builder
	rep.Write(&sb)
	if !strings.Contains(sb.String(), "MISMATCH") || !strings.Contains(sb.String(), "false findings: 2") {
		t.Errorf("summary:\n%s", sb.String())
	}
}

// TestFrameGen: every stream starts with STREAM_REQ, chunks count from 0,
// and a labelled fault is exactly where the frames show it.
func TestFrameGen(t *testing.T) {
	g := NewFrameGen(FrameGenConfig{Seed: 3, Concurrent: 3, MinChunks: 3, MaxChunks: 8, FaultRate: 0.3, Faults: AllFaults})
	type st struct {
		req, done bool
		last      int32
	}
	streams := map[string]*st{}
	faults := map[Fault]int{}
	check := func(m FrameMsg) {
		f, _, err := frame.Decode(m.Data)
		if err != nil {
			t.Fatal(err)
		}
		s := streams[m.Stream]
		if f.MsgType == frame.TypeStreamReq {
			if s != nil || m.Subject != AgentSubject {
				t.Fatalf("request twice or on %s", m.Subject)
			}
			streams[m.Stream] = &st{req: true, last: -1}
			return
		}
		c, err := f.Chunk()
		if err != nil || s == nil || s.done || c.SessionID != m.Stream {
			t.Fatalf("chunk %+v of %q: %v, state %+v", c, m.Stream, err, s)
		}
		gap := c.Seq != s.last+1
		if gap != (m.Fault == FrameLostChunk) {
			t.Fatalf("stream %s: seq %d after %d, fault %q", m.Stream, c.Seq, s.last, m.Fault)
		}
		s.last, s.done = c.Seq, c.Done
		if m.Fault != "" {
			faults[m.Fault]++
		}
	}
	for i := 0; i < 3000; i++ {
		check(g.Next())
	}
	for _, m := range g.Drain() {
		check(m)
	}
	missing := 0
	for _, s := range streams {
		if !s.done {
			missing++
		}
	}
	if missing != faults[FrameMissingDone] || faults[FrameLostChunk] == 0 || missing == 0 {
		t.Errorf("%d streams without done, %d labelled; %d lost chunks", missing, faults[FrameMissingDone], faults[FrameLostChunk])
	}
}

func TestRender(t *testing.T) {
	const long = "sequence 3 after 1: 1 missing; this message is long on purpose so that a narrow terminal must wrap it over several lines, and every word of it must still be there at the end: tail-word"
	l := NewLedger()
	l.Inject(Fault("lost_chunk"), "req-1", "logs", "ws")
	l.Inject(Fault("leaked_token"), "req-2", "logs")
	l.Inject(FrameMissingDone, "sid-1", "mesh")
	c := NewCollector()
	c.Record(&validate.RecordInfo{In: &validate.Input{Tap: "ws"}})
	c.StreamStart(&validate.StreamInfo{Tap: "ws"})
	found := []validate.Finding{
		{Rule: "e2a.seq_gap", Tap: "ws", Stream: "req-1", Source: "ws:c1#4", Message: long, Time: time.Now()},
		{Rule: "e2a.seq_gap", Tap: "logs", Stream: "req-1", Source: "logs:/tmp/x/agentserver.jsonl:4", Message: long, Time: time.Now()},
		{Rule: "e2a.secret", Tap: "logs", Stream: "req-2", Source: "logs:/tmp/x/agentserver.jsonl:9", Message: "credential (authorization) in a logged record at body.delta", Time: time.Now()},
	}
	for i := range found {
		c.Finding(&found[i])
	}
	vs := ViewState{Elapsed: 5 * time.Second, Duration: time.Minute, Stats: c.Snapshot(5), Report: l.Match(c.Findings()),
		Taps: Taps{WS: "ws", Log: "logs", NATS: "mesh"}, IdleTimeout: 4 * time.Second,
		Next:   []string{"  e2atap observe --addr 127.0.0.1:9464", "  e2atap validate /tmp/d/records.jsonl"},
		Redact: func(s string) string { return s }}
	const width = 80
	tty := RenderTTY(vs, width, 0)
	lines := strings.Split(strings.TrimSuffix(strings.TrimPrefix(tty, clearHome), "\n"), "\n")
	for _, ln := range lines {
		if n := utf8.RuneCountInString(ln); n > width {
			t.Errorf("line of %d columns in a %d-column view: %q", n, width, ln)
		}
	}
	// The faults table: found/expected per tap, blank where a tap cannot
	// see the fault, and the totals per tap.
	rowOf := func(prefix string) []string {
		for _, ln := range lines {
			if f := strings.Fields(ln); len(f) > 0 && f[0] == prefix {
				return f
			}
		}
		t.Fatalf("no row %q in:\n%s", prefix, tty)
		return nil
	}
	for prefix, want := range map[string][]string{
		"lost_chunk":         {"lost_chunk", "1", "e2a.seq_gap", "1/1", "1/1"},
		"leaked_token":       {"leaked_token", "1", "e2a.secret", "1/1"},
		"frame_missing_done": {"frame_missing_done", "1", "frame.missing_done", "0/1"},
		"total":              {"total", "3", "1/1", "2/2", "0/1"},
		"logs":               {"logs", "0", "0", "2", "the", "AgentServer's", "own", "log", "file"},
	} {
		if got := rowOf(prefix); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("row %s: %q, want %q", prefix, got, want)
		}
	}
	// Whole messages, wrapped; the reason for found = 2 × injected; the
	// next steps.
	flat := strings.Join(strings.Fields(tty), " ")
	for _, want := range []string{long, "ws 1 1 1 the WebSocket between Gateway and AgentServer (e2atap's proxy)", "Why found is twice injected", "the ws and the logs tap each report it", "after the 4s idle timeout",
		"Findings no injected fault explains: 0", "e2atap observe --addr 127.0.0.1:9464", "e2atap validate /tmp/d/records.jsonl",
		"ws:c1#4", "logs:agentserver.jsonl:4", "55s left"} {
		if !strings.Contains(flat, want) {
			t.Errorf("view lacks %q:\n%s", want, tty)
		}
	}
	if n := strings.Count(flat, "tail-word"); n != 2 {
		t.Errorf("the long message is shown %d times whole, want 2:\n%s", n, tty)
	}
	// A short terminal shows fewer findings (the newest), never none.
	short := RenderTTY(vs, width, len(lines)-6)
	if n := strings.Count(short, "e2a.seq_gap  "); n >= 2 || !strings.Contains(short, "e2a.secret          req-2") {
		t.Errorf("short terminal: %d seq_gap findings shown:\n%s", n, short)
	}

	// An 80x24 terminal: nothing scrolls off; the title, the faults table
	// and the newest finding stay, the rest gives way.
	small := RenderTTY(vs, 80, 24)
	if n := strings.Count(small, "\n"); n > 23 {
		t.Errorf("%d lines in a 24-row terminal:\n%s", n, small)
	}
	for _, want := range []string{"e2atap demo   5s elapsed", "lost_chunk                1  e2a.seq_gap", "Why found is twice injected", "e2a.secret          req-2", "credential (authorization)"} {
		if !strings.Contains(small, want) {
			t.Errorf("24-row view lacks %q:\n%s", want, small)
		}
	}

	line := RenderLine(vs)
	for _, want := range []string{"e2a.seq_gap=2", "found/expected{ws=1/1 logs=2/2 mesh=0/1}", "injected=3", "unexplained=0", "credential (authorization) in a logged record at body.delta"} {
		if !strings.Contains(line, want) {
			t.Errorf("plain line lacks %q: %q", want, line)
		}
	}
	if strings.Contains(line, "\x1b") || strings.Count(line, "\n") != 1 {
		t.Errorf("plain line: %q", line)
	}
}

func TestWrapText(t *testing.T) {
	in := "summary\n  aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii jjjj kkkk llll mmmm\nend"
	want := "summary\n  aaaa bbbb cccc dddd eeee ffff gggg hhhh iiii\n    jjjj kkkk llll mmmm\nend"
	if got := WrapText(in, 48); got != want {
		t.Errorf("WrapText:\n%s\nwant\n%s", got, want)
	}
	if got := WrapText(in, 0); got != in {
		t.Errorf("WrapText with no width changed the text: %q", got)
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"short", 40, []string{"short"}},
		{"  aaaa bbbb cccc dddd eeee ffff gggg", 20, []string{"  aaaa bbbb cccc", "    dddd eeee ffff", "    gggg"}},
		{"  " + strings.Repeat("x", 45), 20, []string{"  " + strings.Repeat("x", 18), "    " + strings.Repeat("x", 16), "    " + strings.Repeat("x", 11)}},
		{"─── ─── ─── ─── ─── ─── ───", 20, []string{"─── ─── ─── ─── ───", "    ─── ───"}},
	} {
		got := wrap(tc.in, tc.width, "    ")
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("wrap(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
		for _, l := range got {
			if utf8.RuneCountInString(l) > tc.width {
				t.Errorf("wrap(%q, %d): line %q too long", tc.in, tc.width, l)
			}
		}
	}
}

// TestRenderRedacts: the view prints a finding's stream, source and message
// and the header only through ViewState.Redact; without one, masked whole.
func TestRenderRedacts(t *testing.T) {
	const secret = "sk-proj-Zq7XAbCdEfGhIjKlMnOp"
	c := NewCollector()
	c.Finding(&validate.Finding{Rule: "e2a.status", Tap: "ws", Stream: secret, Source: "ws:" + secret, Message: "status " + secret, Time: time.Now()})
	for _, red := range []func(string) string{nil, func(s string) string { return strings.ReplaceAll(s, secret, "MASK") }} {
		vs := ViewState{Stats: c.Snapshot(5), Header: []string{"nats://u:" + secret + "@h"}, Redact: red}
		for _, out := range []string{RenderTTY(vs, 200, 0), RenderLine(vs)} {
			if strings.Contains(out, secret) {
				t.Errorf("the view shows the secret:\n%s", out)
			}
			if red != nil && !strings.Contains(out, "MASK") {
				t.Errorf("the view does not use Redact:\n%s", out)
			}
		}
	}
}
