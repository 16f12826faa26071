package demo

import (
	"strings"
	"testing"
	"time"

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
	c := NewCollector()
	c.Record(&validate.RecordInfo{In: &validate.Input{Tap: "ws"}})
	c.StreamStart(&validate.StreamInfo{Tap: "ws"})
	c.Finding(&validate.Finding{Rule: "e2a.seq_gap", Tap: "ws", Stream: "req-1", Source: "ws:c1#4", Message: "sequence 3 after 1: 1 missing", Time: time.Now()})
	vs := ViewState{Elapsed: 5 * time.Second, Duration: time.Minute, Stats: c.Snapshot(5), Injected: map[Fault]int{"lost_chunk": 1},
		Redact: func(s string) string { return s }}
	tty := RenderTTY(vs, 120)
	for _, want := range []string{clearHome, "e2a.seq_gap", "req-1", "ws:c1#4", "55s left", "ws 1 records, 1 open streams"} {
		if !strings.Contains(tty, want) {
			t.Errorf("view lacks %q:\n%s", want, tty)
		}
	}
	line := RenderLine(vs)
	if strings.Contains(line, "\x1b") || !strings.Contains(line, "e2a.seq_gap=1") || strings.Count(line, "\n") != 1 {
		t.Errorf("plain line: %q", line)
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
		for _, out := range []string{RenderTTY(vs, 200), RenderLine(vs)} {
			if strings.Contains(out, secret) {
				t.Errorf("the view shows the secret:\n%s", out)
			}
			if red != nil && !strings.Contains(out, "MASK") {
				t.Errorf("the view does not use Redact:\n%s", out)
			}
		}
	}
}
