package validate

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestFinishOrder: Finish ends the open streams of a partition by start,
// then by table key, whatever the keys share: ids that are prefixes of
// one another, that differ past their first 8 bytes or only in their
// last, with NUL and 0xff bytes, on taps and connections whose names are
// prefixes of one another (so that the keys' common prefix varies), with
// and without capture times (ties on the start). The expected order is
// sorted here by the comparison Finish made before it kept the keys'
// first words in its sort array.
func TestFinishOrder(t *testing.T) {
	for _, timed := range []bool{false, true} {
		for _, taps := range [][2]string{{"", ""}, {"tap", "conn"}, {"t", "t\x00c"}} {
			rng := rand.New(rand.NewPCG(7, uint64(len(taps[0]))))
			cfg := DefaultConfig()
			cfg.IdleTimeout = 0
			cfg.MaxStreams = 5000 // one partition
			var c collector
			e := NewEngine(cfg, &c)
			type want struct {
				start int64
				key   []byte
				info  string
			}
			var wants []want
			seen := map[string]bool{}
			alpha := []byte{'a', 'b', 0, 0xff, '-', '9'}
			for len(wants) < 3000 {
				id := []byte("req-0000-0000-")
				if rng.IntN(3) == 0 {
					id = id[:rng.IntN(len(id))]
				}
				for n := rng.IntN(12); n > 0; n-- {
					id = append(id, alpha[rng.IntN(len(alpha))])
				}
				if len(id) == 0 {
					continue
				}
				in := &Input{Tap: taps[rng.IntN(2)], Conn: taps[1]}
				if timed {
					in.Time = time.Unix(1700000000, int64(rng.IntN(4))*int64(time.Millisecond))
				}
				key := e.composite(in, protoE2A, id)
				if seen[string(key)] {
					continue
				}
				seen[string(key)] = true
				i, created, _ := e.lookup(key, true, false, in)
				if !created {
					t.Fatalf("%q: not created", id)
				}
				e.tab.at(i).flags |= fResponded
				wants = append(wants, want{start: e.tab.at(i).startNs(), key: bytes.Clone(e.tab.key(i)), info: e.streamInfo(i, ProtoE2A).Key})
			}
			slices.SortFunc(wants, func(a, b want) int {
				if c := cmp.Compare(a.start, b.start); c != 0 {
					return c
				}
				return bytes.Compare(a.key, b.key)
			})
			e.Finish(ReasonEOF, &Input{})
			if len(c.ends) != len(wants) {
				t.Fatalf("timed %v, taps %q: %d ends, want %d", timed, taps, len(c.ends), len(wants))
			}
			for j, w := range wants {
				if got := c.ends[j].Key; got != w.info {
					t.Fatalf("timed %v, taps %q: end %d is %q, want %q", timed, taps, j, got, w.info)
				}
			}
		}
	}
}
