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
