package validate

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSpinWakeNoLostWakeUp: two goroutines that take turns, each waiting
// for the other's notify, never both wait (a lost wake-up hangs the test),
// whether a waiter polls first or parks at once.
func TestSpinWakeNoLostWakeUp(t *testing.T) {
	defer func(d time.Duration) { splitSpin = d }(splitSpin)
	rounds := int64(20000)
	if raceEnabled {
		rounds = 2000
	}
	for _, spin := range []time.Duration{0, time.Microsecond, 25 * time.Microsecond} {
		splitSpin = spin
		w := newSpinWake(2)
		var turn atomic.Int64
		var waits atomic.Int64
		var wg sync.WaitGroup
		for k := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					gen := w.seen() // before looking: a later notify changes it
					n := turn.Load()
					if n >= rounds {
						return
					}
					if int(n%2) == k {
						turn.Add(1)
						w.notify(k)
						continue
					}
					waits.Add(1)
					w.wait(k, gen)
				}
			}()
		}
		wg.Wait()
		if turn.Load() != rounds || waits.Load() == 0 {
			t.Fatalf("spin %v: %d turns, %d waits", spin, turn.Load(), waits.Load())
		}
	}
}

// TestSpinWakeParksAfterMisses: a shard whose polls keep ending in a park
// (the change it waits for comes only after it parked) stops polling
// after spinMisses of them and polls at every spinProbe-th wait only; a
// poll that sees the change has it poll at every wait again.
func TestSpinWakeParksAfterMisses(t *testing.T) {
	defer func(d time.Duration) { splitSpin = d }(splitSpin)
	splitSpin = time.Microsecond
	w := newSpinWake(2)
	w.spin = true // whatever GOMAXPROCS is
	parked := make(chan struct{})
	w.parkHook = func(int) { parked <- struct{}{} }
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range parked {
			w.notify(1) // only once the waiter parked: every poll misses
		}
	}()
	wait := func(n int) {
		for range n {
			w.wait(0, w.seen())
		}
	}
	m := &w.miss[0]
	waits := spinMisses + 4*spinProbe
	wait(waits)
	if want := uint64(spinMisses + 4); m.polls != want {
		t.Fatalf("%d waits that all parked polled %d times, want %d", waits, m.polls, want)
	}
	// A probe that sees the change (it came before the wait) ends the
	// run of misses.
	m.skipped = spinProbe - 1
	gen := w.seen()
	w.notify(1)
	<-w.ch[0] // the wake-up it left pending
	w.wait(0, gen)
	if m.polls != spinMisses+5 || m.run != 0 {
		t.Fatalf("after a hit: %d polls, a run of %d misses", m.polls, m.run)
	}
	wait(spinMisses)
	if m.polls != 2*spinMisses+5 {
		t.Fatalf("after a hit, %d waits polled %d times, want %d", spinMisses, m.polls-(spinMisses+5), spinMisses)
	}
	close(parked)
	<-done
}
