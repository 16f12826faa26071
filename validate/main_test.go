package validate

import (
	"testing"

	"go.uber.org/goleak"
)

// Sharded and Live runs start goroutines: every test must leave none.
//
// Parallel tests: a test that only computes on its own engines and data,
// sets none of the package's knobs (partitionStreams, splitChunk,
// mapWindow, failMaps, the caches' switches, TestingPanicOn...), reads no
// process-wide figure (MemStats, TableBytes, TableAllocFailures) and calls
// no helper with package state (resp's counter) may call t.Parallel().
// Go starts the parallel tests only once every serial one has returned,
// so the tests that set a knob or measure memory never overlap them. The
// long ones are parallel so that, at the end of make test, when this
// package runs alone, they use both cores.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
