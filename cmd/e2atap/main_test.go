package main

import (
	"context"
	"os"
	"testing"

	"github.com/e2atap/e2atap/validate"
)

// TestMain lets a test start this very binary as the real e2atap process
// (E2ATAP_BE_MAIN=1): process-level tests (signals, restarts) need a
// process, and re-executing the test binary needs no build step.
//
// Parallel tests: a process-level test that spends most of its time
// waiting (for a broker's session timeout, a reconnect, a reload poll, a
// drain bound) calls t.Parallel(), so that its waits overlap; measured by
// CPU against wall time, each used under half a core. Two long ones whose
// child process computes (TestCorpusRun, TestValidateUnderMemoryLimits)
// are parallel too: their work fills the others' waits. Only tests whose
// e2atap runs as a child process may: an in-process run sets the
// process's memory limit, GC percent and signal handlers (run.go), which
// another test's run would share. Tests bound by a latency (the metrics
// port's probes under slowloris, the zip bomb's relay time) stay serial,
// and so do the Kafka scale-out tests: their replicas' 1 s session timeout
// is a latency too (a replica starved of CPU misses its heartbeats, and
// the group rebalances until the test times out: seen with -parallel 4 on
// a machine at load 12).
// make test runs them four at a time (-parallel 4): with two cores, two
// would leave the machine idle while they wait.
func TestMain(m *testing.M) {
	if os.Getenv("E2ATAP_BE_MAIN") == "1" {
		if mark := os.Getenv("E2ATAP_TEST_PANIC_ON"); mark != "" {
			validate.TestingPanicOn = []byte(mark) // TestEnginePanicCostsOneRecord
		}
		os.Exit(run(contextWithSignals(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func contextWithSignals() context.Context {
	ctx, _ := signalContext()
	return ctx
}
