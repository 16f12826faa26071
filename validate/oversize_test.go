package validate

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestOversizeHeadGapsOnlyItsStream: a live tap that skips an oversize
// line hands over its first 64 KiB (cut mid-way); the engine reports the
// one e2a.decode and gaps only the stream the head names: its next record
// is no seq_gap, while every other stream is judged as before (a real gap
// elsewhere is still a seq_gap, an unfinished stream still missing_final).
// Without a head (nothing to name the stream) the next record is a seq_gap,
// which is what the head prevents.
func TestOversizeHeadGapsOnlyItsStream(t *testing.T) {
	// In the reference's key order (request_id and sequence first, body
	// last), as the AgentServer writes it.
	big := refOrder("big", 1, strings.Repeat("语", 100_000))
	head := []byte(big[:MaxHeadBytes])
	for _, c := range []struct {
		name   string
		shards int
		data   []byte
		want   []string
	}{
		{"one-shard", 1, head, []string{"e2a.decode  @21", "e2a.missing_final s7 @end", "e2a.seq_gap s3 @46"}},
		{"four-shards", 4, head, []string{"e2a.decode  @21", "e2a.missing_final s7 @end", "e2a.seq_gap s3 @46"}},
		{"escaped-id", 4, []byte(strings.Replace(string(head), `"big"`, `"b\u0069g"`, 1)), []string{"e2a.decode  @21", "e2a.missing_final s7 @end", "e2a.seq_gap s3 @46"}},
		{"no-head", 4, nil, []string{"e2a.decode  @21", "e2a.missing_final s7 @end", "e2a.seq_gap big @22", "e2a.seq_gap s3 @46"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := time.Date(2026, 3, 29, 12, 0, 0, 0, time.UTC)
			cfg := DefaultLiveConfig()
			cfg.Shards, cfg.JoinWindow, cfg.FinishOnShutdown = c.shards, 0, true
			cfg.Now = func() time.Time { return base.Add(time.Hour) }
			// No look for idle streams while the test feeds them: by that
			// clock every stream is an hour idle (a machine slow enough to
			// let a 100 ms SweepCheck pass mid-test expired them all).
			cfg.SweepCheck, cfg.ExpireEvery = time.Hour, time.Hour
			col := &collector{}
			l := NewLive(cfg, col)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan Stats)
			go func() { done <- l.Run(ctx) }()
			at := time.Duration(0)
			submit := func(line string) {
				t.Helper()
				at += time.Millisecond
				if err := l.Submit(ctx, Input{Tap: "logs", Time: base.Add(at), Data: []byte(line)}); err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			for i := 0; i < 19; i++ {
				ids = append(ids, fmt.Sprintf("s%d", i))
			}
			submit(resp(0, "request_id", "big"))
			for _, id := range ids {
				submit(resp(0, "request_id", id))
			}
			// Record 21: big's sequence 1, skipped for its size.
			at += time.Millisecond
			if err := l.DecodeError(ctx, Input{Tap: "logs", Time: base.Add(at), Data: bytes.Clone(c.data)}, ProtoE2A, "line of 300041 bytes is over the 65536-byte limit"); err != nil {
				t.Fatal(err)
			}
			submit(resp(2, "request_id", "big")) // 22
			for _, id := range ids {             // 23..41
				submit(resp(1, "request_id", id))
			}
			submit(final(3, "request_id", "big")) // 42
			for _, id := range ids {              // 43..61: s3 jumps, s7 never ends
				switch id {
				case "s3":
					submit(final(3, "request_id", id))
				case "s7":
					submit(resp(2, "request_id", id))
				default:
					submit(final(2, "request_id", id))
				}
			}
			waitFor(t, func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.records) == 61 })
			cancel()
			<-done
			var got []string
			col.mu.Lock()
			for _, f := range col.findings {
				pos := "end"
				if f.Index != 0 {
					pos = fmt.Sprint(f.Index)
				}
				got = append(got, f.Rule+" "+f.Stream+" @"+pos)
			}
			col.mu.Unlock()
			sort.Strings(got)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("findings %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestOversizeLineOffline: the offline reader hands the head of an
// oversize line over as a live tap does, so validate gives the live
// verdict: one e2a.decode, no seq_gap on the line's stream.
func TestOversizeLineOffline(t *testing.T) {
	lines := []string{resp(0, "request_id", "big"), refOrder("big", 1, strings.Repeat("x", 2<<20)), final(2, "request_id", "big")}
	col := &collector{}
	cfg := DefaultConfig()
	cfg.IdleTimeout = 0
	s := NewSharded(2, cfg, col)
	if _, err := Read(strings.NewReader(strings.Join(lines, "\n")+"\n"), "cap", FormatJSONL, ReadOptions{MaxLineBytes: 1 << 20}, s); err != nil {
		t.Fatal(err)
	}
	s.Finish(ReasonEOF, &Input{})
	if len(col.findings) != 1 || col.findings[0].Rule != "e2a.decode" || col.findings[0].Index != 2 {
		t.Fatalf("findings %+v, want one e2a.decode at record 2", col.findings)
	}
}

// refOrder is a chunk of stream id written in the reference's key order.
func refOrder(id string, seq int, delta string) string {
	return fmt.Sprintf(`{"protocol_version":"1.0","response_id":"%s-%d","request_id":"%s","sequence":%d,"is_final":false,"status":"in_progress","response_kind":"e2a.chunk","timestamp":"2026-03-29T12:00:00Z","provenance":{"source_protocol":"e2a"},"body":{"delta_kind":"text","delta":%q}}`,
		id, seq, id, seq, delta)
}
