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
