package validate

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A spinWake lets the shards of a split wait for each other: a waiter polls
// a counter of the others' progress for up to splitSpin before it parks.
// Most waits are short (the other shard ends a chunk's scan or judgement:
// 10 µs median, 40-50 µs at the 90th percentile, gen-150M, go tool
// trace), shorter than what waking a parked thread takes on a VM, where an
// idle vCPU is woken through the hypervisor (some 80-100 µs before the
// woken shard runs).
type spinWake struct {
	gen atomic.Uint64
	_   [56]byte
	ch  []chan struct{} // per shard: capacity 1, a send that finds it full is dropped
	// spin: there is more than one P (GOMAXPROCS). With one, a waiter
	// that polls holds the only P, and the shard it waits for cannot run
	// until it parks: the poll was 8 % of the CPU of --shards 2 pinned to
	// one core (gen-300M).
	spin bool
}

// splitSpin is how long a waiter polls before it parks (a variable for
// tests).
var splitSpin = 25 * time.Microsecond

func newSpinWake(n int) *spinWake {
	w := &spinWake{ch: make([]chan struct{}, n), spin: runtime.GOMAXPROCS(0) > 1}
	for i := range w.ch {
		w.ch[i] = make(chan struct{}, 1)
	}
	return w
}

// seen is the progress so far: a waiter reads it before it looks for
// something to do, and waits for it to change.
func (w *spinWake) seen() uint64 { return w.gen.Load() }

// notify tells every shard but k that something they may wait for
// happened.
func (w *spinWake) notify(k int) {
	w.gen.Add(1)
	for i, ch := range w.ch {
		if i == k {
			continue
		}
		select {
		case ch <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
}

// wait has shard k wait until progress passes gen: it polls, then parks.
// It may return early (a wake-up of an earlier change left pending): the
// caller looks again.
func (w *spinWake) wait(k int, gen uint64) {
	var start time.Time
	for n := 0; w.spin; n++ {
		if w.gen.Load() != gen {
			return
		}
		spinPause()
		if n&63 == 0 {
			if n == 0 {
				start = time.Now()
			} else if time.Since(start) > splitSpin {
				break
			}
		}
	}
	if w.gen.Load() != gen {
		return
	}
	<-w.ch[k]
}
