package validate

import (
	"strconv"
	"strings"
	"testing"
)

// modelLines validates JSON lines under profile and returns the findings
// as rule, stream and 1-based line.
func modelLines(t *testing.T, profile string, lines ...string) []string {
	t.Helper()
	col := runCapture(t, profile, []byte(strings.Join(lines, "\n")+"\n"), FormatJSONL)
	return got(col.findings, 0)
}

const (
	regressInterrupt = `{"protocol_version": "1.0", "request_id": "q9", "session_id": "s1", "method": "chat.interrupt", "params": {"intent": "cancel"}, "is_stream": false, "timestamp": "2026-03-29T12:00:00+00:00", "identity_origin": "user", "provenance": {"source_protocol": "e2a"}}`
	regressRequest   = `{"protocol_version": "1.0", "request_id": "q1", "session_id": "s1", "method": "chat.send", "params": {"query": "hi"}, "is_stream": true, "timestamp": "2026-03-29T12:00:00+00:00", "identity_origin": "user", "provenance": {"source_protocol": "e2a"}}`
)

func regressChunk(seq int, final bool) string {
	kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind": "text", "delta": "x"}`
	if final {
		kind, status, body = "e2a.complete", "succeeded", `{"result": {}}`
	}
	return `{"protocol_version": "1.0", "response_id": "q1", "request_id": "q1", "sequence": ` + strconv.Itoa(seq) + `, "is_final": ` + strconv.FormatBool(final) +
		`, "status": "` + status + `", "response_kind": "` + kind + `", "timestamp": "2026-03-29T12:00:00+00:00", "provenance": {"source_protocol": "e2a"}, "body": ` + body + `, "session_id": "s1"}`
}

// TestInterruptSessionFromResponses: a chat.interrupt ends the in-flight
// streams of its session, the one a stream's request envelope carried or,
// where that carried none or was not seen (the capture started mid-way),
// the one its responses carry: the AgentServer runs the stream's task in
// it and sends no final once it is cancelled, so a missing_final would
// report a violation that did not happen. An interrupt of another session
// ends nothing.
func TestInterruptSessionFromResponses(t *testing.T) {
	noSession := strings.Replace(regressRequest, `"session_id": "s1", `, "", 1)
	for _, c := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"responses only", []string{regressChunk(0, false), regressChunk(1, false), regressInterrupt}, nil},
		{"request without a session", []string{noSession, regressChunk(0, false), regressInterrupt}, nil},
		{"request with the session", []string{regressRequest, regressChunk(0, false), regressInterrupt}, nil},
		{"responses only, another session interrupted",
			[]string{regressChunk(0, false), strings.Replace(regressInterrupt, `"s1"`, `"s2"`, 1), regressChunk(2, false)},
			[]string{key("e2a.missing_final", "q1", nil), key("e2a.seq_gap", "q1", 3)}},
		{"request's session wins over its responses'",
			[]string{strings.Replace(regressRequest, `"s1"`, `"s2"`, 1), regressChunk(0, false), regressInterrupt, regressChunk(1, true)},
			[]string{key("e2a.echo_mismatch", "q1", 2), key("e2a.echo_mismatch", "q1", 4)}},
	} {
		if g := modelLines(t, ProfileJiuwenswarm, c.lines...); strings.Join(g, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", c.name, g, c.want)
		}
	}
	// The echo of the session between responses is unchanged.
	other := strings.Replace(regressChunk(1, false), `"session_id": "s1"`, `"session_id": "s2"`, 1)
	w := []string{key("e2a.echo_mismatch", "q1", 3)}
	if g := modelLines(t, ProfileJiuwenswarm, noSession, regressChunk(0, false), other, regressChunk(2, true)); strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("responses of two sessions:\n got %q\nwant %q", g, w)
	}
}

// TestModelLossBeforeFirstChunk (found by TestModelLive, jiuwenswarm seed
// 37): a loss on a connection while a stream there has its request but
// no tracked response yet spares only its next record (RULES.md: no
// sequence rule for its next record, no missing_final): a chunk 0, then
// a chunk 2, is a gap. The engine let the record after the 0 go unjudged
// too.
func TestModelLossBeforeFirstChunk(t *testing.T) {
	col := &collector{}
	e := NewEngine(modelConfig(t, ProfileJiuwenswarm), col)
	at := func(n int, data string) *Input {
		return &Input{Tap: "ws", Conn: "c1", Pos: Position{Kind: PosConn, Name: "c1", Offset: int64(n)}, Index: uint64(n), Data: []byte(data)}
	}
	e.Observe(at(1, regressRequest))
	e.Gap(&Input{Tap: "ws", Conn: "c1"})
	e.Observe(at(2, regressChunk(0, false)))
	e.Observe(at(3, regressChunk(2, false)))
	e.Observe(at(4, regressChunk(3, true)))
	e.Finish(ReasonDisconnect, &Input{Tap: "ws", Conn: "c1"})
	if g, w := got(col.findings, 0), []string{key("e2a.seq_gap", "q1", 3)}; strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("a loss, then chunks 0, 2, 3 and the final:\n got %q\nwant %q", g, w)
	}
	// The record right after the loss is not judged across it, and the
	// stream is not missing its final.
	col = &collector{}
	e = NewEngine(modelConfig(t, ProfileJiuwenswarm), col)
	e.Observe(at(1, regressRequest))
	e.Observe(at(2, regressChunk(0, false)))
	e.Gap(&Input{Tap: "ws", Conn: "c1"})
	e.Observe(at(3, regressChunk(4, false)))
	e.Observe(at(4, regressChunk(5, false)))
	e.Finish(ReasonDisconnect, &Input{Tap: "ws", Conn: "c1"})
	if g := got(col.findings, 0); len(g) != 0 {
		t.Errorf("a loss in the middle of a stream, no final: %q, want none", g)
	}
}
