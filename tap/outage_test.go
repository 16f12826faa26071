package tap

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestOutageLogsOnceAtEachEnd: one line when the broker becomes
// unreachable, at most one reminder per OutageEvery, one line when it is
// back, with the outage's length and the failed attempts.
func TestOutageLogsOnceAtEachEnd(t *testing.T) {
	var buf bytes.Buffer
	o := NewOutage(slog.New(slog.NewTextHandler(&buf, nil)), "nats server", "nats://127.0.0.1:4222")
	now := time.Unix(1000, 0)
	o.now = func() time.Time { return now }
	o.Reachable("") // not in an outage: nothing
	for i := 0; i < 50; i++ {
		o.Failed(errors.New("connection refused"))
		now = now.Add(100 * time.Millisecond)
	}
	now = now.Add(OutageEvery)
	o.Failed(errors.New("connection refused")) // a reminder
	o.Reachable("nats://127.0.0.1:4222")
	o.Reachable("") // already back: nothing
	got := buf.String()
	for _, c := range []struct {
		msg  string
		want int
	}{{"nats server unreachable", 1}, {"nats server still unreachable", 1}, {"nats server reachable again", 1}} {
		if n := strings.Count(got, `msg="`+c.msg+`"`); n != c.want {
			t.Errorf("%q logged %d times, want %d:\n%s", c.msg, n, c.want, got)
		}
	}
	if !strings.Contains(got, "failed_attempts=51") {
		t.Errorf("the end of the outage does not count the attempts:\n%s", got)
	}
}
