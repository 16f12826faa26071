package validate

import (
	"testing"
)

// TestAppendSource: AppendSource appends what Source returns, for every
// kind of position, with and without a tap, and Numbered is true exactly
// where the position's text holds a record's number.
func TestAppendSource(t *testing.T) {
	positions := []Position{
		{},
		{Kind: PosNone, Name: "n"},
		{Kind: PosLine, Name: "/var/log/a.jsonl", Line: 12},
		{Kind: PosLine, Line: 0},
		{Kind: PosByte, Name: "cap.frames", Offset: 4096},
		{Kind: PosSubject, Name: "agent.out"},
		{Kind: PosSubject, Name: "agent.out", Offset: 7},
		{Kind: PosSubject, Offset: -1, Partition: 2},
		{Kind: PosSubject},
		{Kind: PosKafka, Name: "topic", Partition: 3, Offset: 99},
		{Kind: PosConn, Name: "conn-1", Offset: 5},
		{Kind: PosVerbatim, Name: "mesh:agent.out#3"},
		{Kind: PosVerbatim},
		{Kind: 200, Name: "x"},
	}
	numbered := map[int]bool{2: true, 3: true, 4: true, 6: true, 9: true, 10: true}
	for i, p := range positions {
		for _, tap := range []string{"", "mesh"} {
			in := &Input{Tap: tap, Pos: p}
			want := in.Source()
			got := string(in.AppendSource([]byte("prefix|")))
			if got != "prefix|"+want {
				t.Errorf("position %d (%+v), tap %q: AppendSource %q, Source %q", i, p, tap, got, want)
			}
		}
		if got := p.Numbered(); got != numbered[i] {
			t.Errorf("position %d (%+v): Numbered %v, want %v", i, p, got, numbered[i])
		}
	}
}
