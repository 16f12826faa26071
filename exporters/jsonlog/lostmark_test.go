package jsonlog

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// failable is a destination that fails its writes while fail is set (a
// full disk).
type failable struct {
	fail bool
	buf  bytes.Buffer
}

func (f *failable) Write(b []byte) (int, error) {
	if f.fail {
		return 0, errors.New("no space left on device")
	}
	return f.buf.Write(b)
}

// TestReplayAcrossLossesTheLogMarks: the record log marks what its replay
// cannot see, and the replay then gives the live verdicts:
//   - lines the log itself lost to a failed write (a full disk): the live
//     run judged them; the replay judged across them (e2a.seq_gap) until
//     the log marked the loss, a line with no record;
//   - a loss of a connection that no record of it followed (LossMark: the
//     connection ended first): the live run reported no e2a.missing_final
//     for its streams; the replay did.
func TestReplayAcrossLossesTheLogMarks(t *testing.T) {
	resp := func(id string, seq int, final bool) []byte {
		kind, status := "e2a.chunk", "in_progress"
		body := `{"delta_kind":"text","delta":"t"}`
		if final {
			kind, status, body = "e2a.complete", "succeeded", `{"result":{}}`
		}
		return fmt.Appendf(nil, `{"protocol_version":"1.0","response_id":%q,"request_id":%q,"sequence":%d,"is_final":%v,"status":%q,"response_kind":%q,"timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":%s}`,
			id, id, seq, final, status, kind, body)
	}
	cfg := validate.DefaultConfig()
	cfg.IdleTimeout = 0
	dst := &failable{}
	w := NewWriterTo(dst, NewRedactor(ContentMask, 65536, testKey))
	live := &findingsOf{}
	e := validate.NewEngine(cfg, validate.MultiSink{live, w})
	at := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	n := 0
	observe := func(conn, id string, seq int, final bool) {
		n++
		in := validate.Input{Tap: "agent-ws", Conn: conn, Dir: 2, Time: at, Data: resp(id, seq, final),
			Pos: validate.Position{Kind: validate.PosConn, Name: conn, Offset: int64(n)}}
		e.Observe(&in)
	}
	observe("c1", "full-disk", 0, false)
	observe("c1", "full-disk", 1, false)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	dst.fail = true
	for seq := 2; seq < 5; seq++ {
		observe("c1", "full-disk", seq, false)
	}
	if err := w.Flush(); err == nil {
		t.Fatal("the failing write went through")
	}
	dst.fail = false
	observe("c1", "full-disk", 5, true)

	observe("c2", "cut", 0, false)
	cut := validate.Input{Tap: "agent-ws", Conn: "c2", Time: at}
	e.Gap(&cut) // the tap's loss at the connection's end
	e.ConnClosed(&cut)
	w.LossMark(&cut)
	e.Finish(validate.ReasonEOF, &validate.Input{Tap: "agent-ws"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := live.keys(); len(got) != 0 {
		t.Fatalf("live findings %q, want none", got)
	}

	log := dst.buf.Bytes()
	replay := func(log []byte) []string {
		got := &findingsOf{}
		r := validate.NewEngine(cfg, got)
		if _, err := validate.Read(bytes.NewReader(log), "records.jsonl", validate.FormatAuto, validate.ReadOptions{FromLog: true}, r); err != nil {
			t.Fatal(err)
		}
		r.Finish(validate.ReasonEOF, &validate.Input{Pos: validate.Position{Name: "records.jsonl"}})
		return got.keys()
	}
	if got := replay(log); len(got) != 0 {
		t.Errorf("replay findings %q, want none, as live:\n%s", got, log)
	}
	// Without the marks, the replay judges across the losses: the marks
	// are what this test is about.
	var unmarked []string
	for _, l := range strings.SplitAfter(string(log), "\n") {
		if !strings.Contains(l, `"lost":true`) {
			unmarked = append(unmarked, l)
		}
	}
	if got := replay([]byte(strings.Join(unmarked, ""))); len(got) != 2 {
		t.Errorf("replay without the marks: %q, want a seq_gap and a missing_final", got)
	}
}
