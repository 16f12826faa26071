package validate

import (
	"testing"
	"time"
)

// TestTouch: a record with a capture time moves its stream's last
// activity forward (never back); one without (read offline) leaves it as
// it was.
func TestTouch(t *testing.T) {
	e := NewEngine(DefaultConfig(), &verdicts{})
	t0 := time.Unix(1_700_000_000, 0)
	in := &Input{Tap: "t", Time: t0}
	i, created, _ := e.lookup(e.composite(in, protoE2A, []byte("req-1")), true, false, in)
	if i < 0 || !created {
		t.Fatalf("lookup: %d, created %t", i, created)
	}
	for _, c := range []struct {
		at   time.Time
		want uint32
	}{{time.Time{}, 0}, {t0.Add(5 * time.Second), 5000}, {time.Time{}, 5000}, {t0.Add(time.Second), 5000}, {t0.Add(7 * time.Second), 7000}} {
		e.touch(i, &Input{Tap: "t", Time: c.at})
		if got := e.tab.at(i).lastMs; got != c.want {
			t.Fatalf("after a record at %v: last activity %d ms after the start, want %d", c.at, got, c.want)
		}
	}
}
