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
// woken shard runs). When the cores are shared with other processes, the
// shard waited for is often not running: at load 7-10 on 2 cores all but
// 3 of 1069 polls of a split walk of gen-200M ended in a park (a ring
// full: one shard a ring ahead of the other), and polling was 7 % of the
// run's CPU (perf: spinPause); so a shard whose polls keep missing parks
// at once (spinMiss).
type spinWake struct {
	gen atomic.Uint64
	_   [56]byte
	ch  []chan struct{} // per shard: capacity 1, a send that finds it full is dropped
	// spin: there is more than one P (GOMAXPROCS). With one, a waiter
	// that polls holds the only P, and the shard it waits for cannot run
	// until it parks: the poll was 8 % of the CPU of --shards 2 pinned to
	// one core (gen-300M).
	spin bool
	miss []spinMiss // per shard
	// parkHook, when set (tests), is called as a waiter parks.
	parkHook func(k int)
}

// A spinMiss is how many of a shard's polls in a row ended in a park (the
// change came later than splitSpin) and how many waits it has parked at
// once since. After spinMisses such polls a shard parks at once, and polls
// again at every spinProbe-th wait: a poll that sees the change has it
// poll at every wait again. Each shard touches only its own.
type spinMiss struct {
	run, skipped uint32
	polls        uint64 // the waits that polled (tests)
	_            [48]byte
}

// spinMisses is how many polls in a row end in a park before a shard
// parks at once; spinProbe how often such a shard polls still.
const (
	spinMisses = 3
	spinProbe  = 8
)

// splitSpin is how long a waiter polls before it parks (a variable for
// tests).
var splitSpin = 25 * time.Microsecond

func newSpinWake(n int) *spinWake {
	w := &spinWake{ch: make([]chan struct{}, n), spin: runtime.GOMAXPROCS(0) > 1, miss: make([]spinMiss, n)}
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

// wait has shard k wait until progress passes gen: it polls, then parks
// (at once while its polls keep missing: spinMiss). It may return early (a
// wake-up of an earlier change left pending): the caller looks again.
func (w *spinWake) wait(k int, gen uint64) {
	m := &w.miss[k]
	poll := w.spin
	if poll && m.run >= spinMisses {
		m.skipped++
		poll = m.skipped%spinProbe == 0
	}
	if poll {
		m.polls++
		var start time.Time
		for n := 0; ; n++ {
			if w.gen.Load() != gen {
				m.run, m.skipped = 0, 0
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
		m.run++
	}
	if w.gen.Load() != gen {
		return
	}
	if w.parkHook != nil {
		w.parkHook(k)
	}
	<-w.ch[k]
}
