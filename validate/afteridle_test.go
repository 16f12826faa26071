package validate

import (
	"strings"
	"testing"
	"time"

	"github.com/e2atap/e2atap/frame"
)

// TestAfterIdleTimeoutSaysSo: a record of a stream the idle timeout ended
// (missing_final) is after_final (after_done for frames), as a record
// after the final is: the rule and the verdict are the contract's. What
// the finding says is what happened: the stream was ended by the idle
// timeout with no final (it said "after the stream's final record", a
// final that never came).
func TestAfterIdleTimeoutSaysSo(t *testing.T) {
	cfg := DefaultConfig()
	cfg.IdleTimeout = time.Minute
	col := &collector{}
	e := NewEngine(cfg, col)
	base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
	obs := func(at time.Duration, data []byte) {
		e.Observe(&Input{Tap: "agent-ws", Conn: "c1", Time: base.Add(at), Data: data})
	}
	obs(0, []byte(resp(0, "request_id", "idled")))
	obs(0, chunk(t, 0, 0, "sid", "idled-frames"))
	obs(0, []byte(resp(0, "request_id", "done")))
	obs(0, []byte(final(1, "request_id", "done")))
	obs(0, chunk(t, 0, 0, "sid", "done-frames"))
	obs(0, chunk(t, frame.FlagDone, 1, "sid", "done-frames"))
	e.Expire(base.Add(2 * time.Minute))
	obs(3*time.Minute, []byte(resp(1, "request_id", "idled")))
	obs(3*time.Minute, chunk(t, 0, 1, "sid", "idled-frames"))
	obs(3*time.Minute, []byte(resp(2, "request_id", "done")))
	obs(3*time.Minute, chunk(t, 0, 2, "sid", "done-frames"))
	want := map[string]string{
		"e2a.missing_final idled":         "no final record",
		"frame.missing_done idled-frames": "no done chunk",
		"e2a.after_final idled":           "sequence 1 after the stream was ended by the idle timeout with no final record",
		"frame.after_done idled-frames":   "chunk seq 1 after the stream was ended by the idle timeout with no done chunk",
		"e2a.after_final done":            "sequence 2 after the stream's final record",
		"frame.after_done done-frames":    "chunk seq 2 after the done chunk",
	}
	got := map[string]string{}
	for _, f := range col.findings {
		got[f.Rule+" "+f.Stream] = f.Message
	}
	for k, msg := range want {
		if !strings.Contains(got[k], msg) {
			t.Errorf("%s: message %q, want it to say %q", k, got[k], msg)
		}
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want those of %v", got, want)
	}
}
