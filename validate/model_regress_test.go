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

// TestModelInterruptNeedsRequest (found by TestModelE2A, jiuwenswarm seed
// 8): a chat.interrupt ends the in-flight streams of its session as
// learnt from the request envelopes (RULES.md). A stream whose request was
// not seen (the capture started mid-way) but whose responses carry the
// session_id is not ended by it: its sequence rules, after_final and
// missing_final still apply. The engine took the session a response
// carried (kept for e2a.echo_mismatch) as the stream's and cancelled it,
// and then judged none of its later records.
func TestModelInterruptNeedsRequest(t *testing.T) {
	g := modelLines(t, ProfileJiuwenswarm,
		regressChunk(0, false), regressInterrupt, regressChunk(2, false), regressChunk(3, true), regressChunk(4, false))
	w := []string{key("e2a.after_final", "q1", 5), key("e2a.seq_gap", "q1", 3)}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("a stream known only from its responses, interrupted:\n got %q\nwant %q", g, w)
	}
	g = modelLines(t, ProfileJiuwenswarm, regressChunk(0, false), regressInterrupt, regressChunk(1, false))
	w = []string{key("e2a.missing_final", "q1", nil)}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("a stream known only from its responses, interrupted, no final:\n got %q\nwant %q", g, w)
	}
	// With its request seen, the same stream is cancelled.
	if g := modelLines(t, ProfileJiuwenswarm, regressRequest, regressChunk(0, false), regressInterrupt); len(g) != 0 {
		t.Errorf("an interrupted stream with its request: %q, want none", g)
	}
}

// TestModelInterruptRequestWithoutSession (found by TestModelE2A once the
// generator sent some requests without a session_id): a stream whose
// request carried no session_id is not ended by an interrupt of the
// session its responses carry; a stream whose request carried it is.
// The session a response carries still counts for e2a.echo_mismatch.
func TestModelInterruptRequestWithoutSession(t *testing.T) {
	noSession := strings.Replace(regressRequest, `"session_id": "s1", `, "", 1)
	g := modelLines(t, ProfileJiuwenswarm, noSession, regressChunk(0, false), regressInterrupt, regressChunk(2, false))
	w := []string{key("e2a.missing_final", "q1", nil), key("e2a.seq_gap", "q1", 4)}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("a request without a session, interrupted:\n got %q\nwant %q", g, w)
	}
	// The echo of the session between responses is unchanged.
	other := strings.Replace(regressChunk(1, false), `"session_id": "s1"`, `"session_id": "s2"`, 1)
	g = modelLines(t, ProfileJiuwenswarm, noSession, regressChunk(0, false), other, regressChunk(2, true))
	w = []string{key("e2a.echo_mismatch", "q1", 3)}
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("responses of two sessions:\n got %q\nwant %q", g, w)
	}
	g = modelLines(t, ProfileJiuwenswarm, regressRequest, regressChunk(0, false), other, regressChunk(2, true))
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("a response of another session than its request's:\n got %q\nwant %q", g, w)
	}
	if g := modelLines(t, ProfileJiuwenswarm, regressRequest, regressChunk(0, false), regressChunk(1, false), regressChunk(2, true)); len(g) != 0 {
		t.Errorf("responses of their request's session: %q, want none", g)
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

// TestSessTags: a session learnt from a response is never "none" nor one
// learnt from a request, and the two agree in the bits e2a.echo_mismatch
// compares, for every hash (1 included, whose low bit is its only one).
func TestSessTags(t *testing.T) {
	if sessFromRequest(0) != 0 {
		t.Error("no session_id must stay none")
	}
	for _, h := range []uint32{1, 2, 3, 4, 5, 0x80000000, 0xfffffffe, 0xffffffff, 0x9e3779b9} {
		r, s := sessFromRequest(h), sessFromResponse(h)
		if s == 0 || s&1 != 0 || r&1 != 1 || s|1 != r {
			t.Errorf("hash %#x: from a request %#x, from a response %#x", h, r, s)
		}
	}
}
