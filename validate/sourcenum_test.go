package validate

import (
	"strings"
	"testing"
	"time"
)

// TestFindingSourceNum: a finding's source ends in its position's number
// (SourceNum bytes), which the outputs print unredacted: an eleven-digit
// Kafka offset or line number is no phone number. A position without a
// number (a NATS subject with no sequence) has none, and a subject that
// ends in digits keeps them in the redacted text.
func TestFindingSourceNum(t *testing.T) {
	for _, c := range []struct {
		pos       Position
		text, num string
	}{
		{Position{Kind: PosKafka, Name: "agent.out", Partition: 3, Offset: 13800138000}, "agent.out/3/", "13800138000"},
		{Position{Kind: PosLine, Name: "cap.jsonl", Line: 13912345678}, "cap.jsonl:", "13912345678"},
		{Position{Kind: PosByte, Name: "cap.frames", Offset: 42}, "cap.frames@", "42"},
		{Position{Kind: PosSubject, Name: "agent.13912345678"}, "agent.13912345678", ""},
		{Position{Kind: PosSubject, Name: "agent.x", Offset: 7}, "agent.x#", "7"},
	} {
		col := &collector{}
		e := NewEngine(DefaultConfig(), col)
		l := resp(5, "request_id", "q1", "body.delta", "x") // a stream that starts at 5: e2a.seq_gap
		e.Observe(&Input{Tap: "t", Data: []byte(l), Pos: c.pos, Time: time.Unix(100, 0)})
		if len(col.findings) == 0 {
			t.Fatalf("%v: no finding", c.pos)
		}
		f := col.findings[0]
		if text, num := f.SourceParts(); text+num != f.Source || num != c.num || !strings.HasSuffix(text, c.text) {
			t.Errorf("%v: source %q split %q %q, want …%q %q", c.pos, f.Source, text, num, c.text, c.num)
		}
	}
}
