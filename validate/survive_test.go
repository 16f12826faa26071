package validate

import (
	"strings"
	"testing"
)

// A panic while one message is judged by a shard (planted with
// TestingPanicOn) costs that message alone when Config.OnPanic is set: it
// is counted and handed to OnPanic with its stack, the streams of its
// scope are not judged across it (no seq_gap for the record after it), and
// the shard judges on (another tap's violation is found). Without OnPanic
// the panic goes on.
func TestEnginePanicCostsOneMessage(t *testing.T) {
	TestingPanicOn = []byte("PLANTED")
	defer func() { TestingPanicOn = nil }()
	line := func(tap, id string, seq int, delta string) *Input {
		return &Input{Tap: tap, JSON: true, Data: []byte(`{"protocol_version":"1.0","response_id":"` + id + `","request_id":"` + id +
			`","sequence":` + string(rune('0'+seq)) + `,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":"` + delta + `"}}`)}
	}
	cfg := DefaultConfig()
	var got []string
	var stacks []string
	cfg.OnPanic = func(in *Input, v any, stack []byte) {
		got = append(got, in.Tap)
		stacks = append(stacks, string(stack))
	}
	sink := &collector{}
	// Not inline: every message is judged by a shard's goroutine
	// (judgeItems), where a panic costs one message.
	run := NewSharded(2, cfg, sink)
	run.Observe(line("t1", "a", 0, "x"))
	run.Observe(line("t1", "a", 1, "PLANTED"))
	run.Observe(line("t1", "a", 2, "x")) // after the skipped 1: no seq_gap
	run.Observe(line("t2", "b", 0, "x"))
	run.Observe(line("t2", "b", 2, "x")) // a real gap, on another tap
	run.Finish(ReasonEOF, &Input{})
	if run.Panics() != 1 || len(got) != 1 || got[0] != "t1" || !strings.Contains(stacks[0], "(*Engine).Observe") {
		t.Fatalf("panics %d, OnPanic calls %v: want one, for t1, with the engine's stack", run.Panics(), got)
	}
	var rules []string
	for _, f := range sink.findings {
		if f.Rule != "e2a.missing_final" {
			rules = append(rules, f.Rule+" "+f.Stream)
		}
	}
	if len(rules) != 1 || rules[0] != "e2a.seq_gap b" {
		t.Errorf("findings %q, want only b's seq_gap", rules)
	}

	cfg.OnPanic = nil
	e := NewEngine(cfg, &collector{})
	defer func() {
		if recover() == nil {
			t.Error("without OnPanic the engine swallowed the panic")
		}
	}()
	e.Observe(line("t1", "a", 0, "PLANTED"))
}
