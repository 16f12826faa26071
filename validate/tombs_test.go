package validate

import (
	"math/rand/v2"
	"testing"
)

// TestTombSetAgainstLog: random ends, drops and lookups (with ring wraps,
// index growth and backward-shift deletion, hashes crowded into few
// index slots) agree with a log of every operation: a hash's state is how
// its latest end still in the window of the last len(ring) ends says,
// unless it was dropped since; forgotEvicted is set once such an end of
// an evicted stream leaves the window.
func TestTombSetAgainstLog(t *testing.T) {
	t.Parallel() // sets no package state, reads none that a parallel test sets: main_test.go
	for _, size := range []int{1, 2, 7, 64, 300} {
		rnd := rand.New(rand.NewPCG(uint64(size), 9))
		ts := newTombSet(size)
		type op struct {
			h    uint64
			how  int // 0: a drop
			live bool
		}
		var log []op
		ends := 0
		forgot := false
		oracle := func(h uint64) int {
			for i := len(log) - 1; i >= 0; i-- {
				if log[i].h == h {
					if log[i].how == 0 || !log[i].live {
						return notEnded
					}
					return log[i].how
				}
			}
			return notEnded
		}
		hashes := make([]uint64, 3*size+5)
		for i := range hashes {
			// Crowded: many share their index home (the low bits above
			// the two of how), and their how bits are set. Half of them
			// differ only in bits 20-31, neither the home's nor the
			// index tag's (the top ones): the ring tells them apart.
			hashes[i] = uint64(rnd.IntN(4))<<2 | uint64(i)<<40 | uint64(rnd.IntN(4))
			if i%2 == 1 {
				hashes[i] = uint64(rnd.IntN(4))<<2 | uint64(i)<<20 | uint64(rnd.IntN(4)) | 7<<56
			}
		}
		for step := range 20000 {
			h := hashes[rnd.IntN(len(hashes))]
			switch r := rnd.IntN(10); {
			case r < 6:
				how := ended + rnd.IntN(3)
				if ends >= size {
					// The oldest end in the window leaves it.
					k := 0
					for k < len(log) && (log[k].how == 0 || !log[k].live) {
						k++
					}
					old := log[k]
					log[k].live = false
					latest := true
					for j := k + 1; j < len(log); j++ {
						if log[j].h == old.h {
							latest = false
						}
					}
					if latest && old.how == evicted {
						forgot = true
					}
				}
				ends++
				log = append(log, op{h: h, how: how, live: true})
				ts.add(h, how)
			case r < 7:
				log = append(log, op{h: h})
				ts.drop(h)
			default:
				if got, want := ts.state(h), oracle(h); got != want {
					t.Fatalf("size %d step %d: state(%x) = %d, want %d", size, step, h, got, want)
				}
			}
			if ts.forgotEvicted != forgot {
				t.Fatalf("size %d step %d: forgotEvicted %v, want %v", size, step, ts.forgotEvicted, forgot)
			}
		}
		for _, h := range hashes {
			if got, want := ts.state(h), oracle(h); got != want {
				t.Fatalf("size %d: state(%x) = %d at the end, want %d", size, h, got, want)
			}
		}
		if ts.live > size || len(ts.idx) > 4*max(size, minTombs) {
			t.Fatalf("size %d: %d hashes indexed in %d slots", size, ts.live, len(ts.idx))
		}
	}
}

// TestTombSetBytes: a full tomb set of the default size holds at most 24
// bytes a tombstone (ring and index).
func TestTombSetBytes(t *testing.T) {
	const n = 1 << 16
	ts := newTombSet(n)
	for i := range 3 * n {
		ts.add(uint64(i)*0x9e3779b97f4a7c15, ended)
	}
	if b := 8*len(ts.ring) + 4*len(ts.idx); b > 24*n {
		t.Fatalf("%d bytes for %d tombstones", b, n)
	}
	if ts.live != n {
		t.Fatalf("%d tombstones held, want %d", ts.live, n)
	}
}
