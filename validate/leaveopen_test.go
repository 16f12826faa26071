package validate

import (
	"fmt"
	"strings"
	"testing"
)

// TestReplayLeaveOpen: a record log's mark of streams left open at a
// shutdown (OpenMarker's, "open":true) drops the open streams with no
// outcome and no finding, counted as LeftOpen; a stream the log takes up
// again after the mark (a later run) starts afresh; the plain mark of
// lines lost ("all" alone) still only gaps them (missing_final, without a
// finding, at the end of input). One engine, and two and three shards.
func TestReplayLeaveOpen(t *testing.T) {
	resp := func(id string, seq int, final bool, extra string) string {
		kind, status, body := "e2a.chunk", "in_progress", `{"delta_kind":"text","delta":"x"}`
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{"content":"done"}}`
		}
		return fmt.Sprintf(`{"protocol_version":"1.0","response_id":%q,"request_id":%q,"sequence":%d,"is_final":%t,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":%s,"_e2atap":{"tap":"logs","source":"logs:a.jsonl:%d"%s}}`,
			id, id, seq, final, status, kind, body, seq, extra)
	}
	var before []string
	for _, id := range []string{"a", "b", "c", "d"} {
		before = append(before, resp(id, 0, false, ""), resp(id, 1, false, ""))
	}
	before = append(before, resp("a", 2, true, ""))
	// c goes on after the mark: its next record joined the later run.
	after := []string{resp("c", 2, false, `,"joined":true`), resp("c", 3, true, "")}
	cases := []struct {
		mark            string
		leftOpen        uint64
		succeeded, miss uint64
	}{
		{`{"_e2atap":{"tap":"","lost":true,"all":true,"open":true}}`, 3, 2, 0},
		{`{"_e2atap":{"tap":"","lost":true,"all":true}}`, 0, 2, 2},
	}
	for _, c := range cases {
		in := strings.Join(before, "\n") + "\n" + c.mark + "\n" + strings.Join(after, "\n") + "\n"
		for _, shards := range []int{0, 2, 3} {
			col := &collector{}
			var st Stats
			if shards == 0 {
				e := NewEngine(DefaultConfig(), col)
				if _, err := Read(strings.NewReader(in), "records.jsonl", FormatAuto, ReadOptions{}, e); err != nil {
					t.Fatal(err)
				}
				e.Finish(ReasonEOF, &Input{})
				st = *e.Stats()
			} else {
				s := NewSharded(shards, DefaultConfig(), col)
				if _, err := Read(strings.NewReader(in), "records.jsonl", FormatAuto, ReadOptions{}, s); err != nil {
					t.Fatal(err)
				}
				s.Finish(ReasonEOF, &Input{})
				st = s.Stats()
			}
			if len(col.findings) != 0 || st.LeftOpen != c.leftOpen ||
				st.Outcomes[OutcomeSucceeded] != c.succeeded || st.Outcomes[OutcomeMissingFinal] != c.miss {
				t.Errorf("mark %s, %d shards: findings %v, left open %d (want %d), succeeded %d (want %d), missing_final %d (want %d)",
					c.mark, shards, renderFindings(col), st.LeftOpen, c.leftOpen, st.Outcomes[OutcomeSucceeded], c.succeeded,
					st.Outcomes[OutcomeMissingFinal], c.miss)
			}
		}
	}
}
