package validate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// scribbler owns one record's Data the way a tap's pooled buffer does: on
// Recycle it writes over it (the buffer's next batch), so that a record
// read after its Recycle is judged as garbage.
type scribbler struct {
	data     []byte
	recycled *atomic.Int64
	twice    *atomic.Int64
	done     atomic.Bool
}

func (s *scribbler) Recycle() {
	if s.done.Swap(true) {
		s.twice.Add(1)
	}
	for i := range s.data {
		s.data[i] = 'x'
	}
	s.recycled.Add(1)
}

// TestLiveSubmitOwnedRecycles: a record submitted with its owner is
// recycled once, after it is judged (inline) or copied (for another
// shard), never before: its Data overwritten at Recycle changes no
// verdict, on one shard or two, for records judged while Run runs and
// for those left queued when it stops.
func TestLiveSubmitOwnedRecycles(t *testing.T) {
	for _, shards := range []int{1, 2} {
		t.Run(fmt.Sprintf("shards=%d", shards), func(t *testing.T) {
			col := &collector{}
			cfg := DefaultLiveConfig()
			cfg.Shards = shards
			cfg.JoinWindow = 0
			l := NewLive(cfg, col)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan Stats, 1)
			go func() { done <- l.Run(ctx) }()
			var recycled, twice atomic.Int64
			at := time.Unix(1000, 0)
			sent := 0
			for _, seq := range []int{0, 5, 6} {
				for k := range 8 {
					id := fmt.Sprintf("q%d", k)
					line := resp(seq, "request_id", id)
					if seq == 6 {
						line = final(seq, "request_id", id)
					}
					o := &scribbler{data: []byte(line), recycled: &recycled, twice: &twice}
					if err := l.SubmitOwned(context.Background(), Input{Tap: "t", Time: at, Data: o.data}, o); err != nil {
						t.Fatal(err)
					}
					sent++
				}
				if seq == 0 {
					// The first records judged while Run runs, the
					// rest (most likely) queued when it stops.
					waitFor(t, func() bool { return recycled.Load() == 8 })
				}
			}
			cancel()
			<-done
			if recycled.Load() != int64(sent) || twice.Load() != 0 {
				t.Errorf("recycled %d of %d records (%d twice)", recycled.Load(), sent, twice.Load())
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			var got []string
			for _, f := range col.findings {
				got = append(got, f.Rule+" "+f.Stream)
			}
			sort.Strings(got)
			var want []string
			for k := range 8 {
				want = append(want, fmt.Sprintf("e2a.seq_gap q%d", k))
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("findings %q, want %q", got, want)
			}
			if len(col.records) != sent {
				t.Errorf("%d records judged, want %d", len(col.records), sent)
			}
		})
	}
}
