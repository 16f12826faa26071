package jsonlog

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/e2atap/e2atap/validate"
)

// TestReplayGapsTheStreamOfAnUndecodableRecord: a record the engine
// cannot decode (broken JSON after its request_id; a line over the size
// limit, whose head names its stream) gaps that stream, live: no
// sequence rule for its next record. The log line of such a record keeps
// no content but the stream key, so that the replay gaps the same
// stream; it kept nothing, and the replay reported an e2a.seq_start (or
// seq_gap) the live run did not: an error on a log of correct traffic.
func TestReplayGapsTheStreamOfAnUndecodableRecord(t *testing.T) {
	rec := func(id string, seq int, final bool, delta string) string {
		kind, status, body := "e2a.chunk", "in_progress", fmt.Sprintf(`{"delta_kind":"text","delta":%q}`, delta)
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
		}
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":"%s-%d","request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{},"body":%s}`,
			id, seq, id, seq, final, status, kind, body)
	}
	cfg := validate.DefaultConfig()
	cfg.IdleTimeout = 0
	cfg.MaxRecordBytes = 4096
	lines := []string{
		// Its first record broken: the next is no seq_start.
		`{"request_id":"first","sequence":0,"body":{"delta":"` + sSK + "\x00\"}}",
		rec("first", 1, false, "a"), rec("first", 2, true, ""),
		// A broken record mid-stream: the next is no seq_gap.
		rec("mid", 0, false, "a"),
		`{"request_id":"mid","sequence":1,"body":{"delta":"` + sPassword,
		rec("mid", 2, false, "b"), rec("mid", 3, true, ""),
		// Over the size limit.
		rec("big", 0, false, "a"), rec("big", 1, false, strings.Repeat("x", 5000)), rec("big", 2, true, ""),
		// Escaped: the key as the engine reads it.
		`{"request_id":"e\u0073c","sequence":0,"broken`, rec("esc", 1, true, ""),
	}
	var buf bytes.Buffer
	w := NewWriterTo(&buf, NewRedactor(ContentMask, 65536, testKey))
	live := &findingsOf{}
	e := validate.NewEngine(cfg, validate.MultiSink{live, w})
	for i, l := range lines {
		in := validate.Input{Tap: "logs", Pos: validate.Position{Kind: validate.PosLine, Name: "app.jsonl", Line: int64(i + 1)}, Data: []byte(l), FromLog: true}
		e.Observe(&in)
	}
	e.Finish(validate.ReasonEOF, &validate.Input{Tap: "logs"})
	w.Flush()
	if got := leaked(t, buf.Bytes()); len(got) > 0 {
		t.Errorf("leaked %q", got)
	}
	want := live.keys()
	if len(want) != 4 || strings.Count(strings.Join(want, "\n"), "e2a.decode") != 4 {
		t.Fatalf("live findings %q, want the four e2a.decode only", want)
	}
	replayed := &findingsOf{}
	r := validate.NewEngine(cfg, replayed)
	if _, err := validate.Read(bytes.NewReader(buf.Bytes()), "records.jsonl", validate.FormatAuto, validate.ReadOptions{FromLog: true}, r); err != nil {
		t.Fatal(err)
	}
	r.Finish(validate.ReasonEOF, &validate.Input{Pos: validate.Position{Name: "records.jsonl"}})
	if got := replayed.keys(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("replay findings:\n%s\nlive:\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), buf.String())
	}
}
