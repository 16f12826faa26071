package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
	flag.Parse()
	if !testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		plain.start() // the whole suite: it builds beside the first tests
	}
	code := m.Run()
	plain.cleanup()
	os.Exit(code)
}

// plain is this package built as the e2atap command without the race
// detector (go build, once per package run). The children that only
// compute on a corpus whose output the test checks (validate, decode and
// run over the secret corpora, the model's captures) run it: under -race
// such a child took three to four times the CPU (the twelve heaviest tests:
// 124 s against 34 s), and these tests assert what the child prints, not
// how its goroutines meet: the same code runs under -race in process in
// this package's and validate's tests. The children whose concurrency is
// the point (signals, restarts, drains, reloads, taps against brokers)
// still run this race-built test binary (os.Args[0]).
var plain plainBuild

type plainBuild struct {
	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{} // closed once the build has ended
	dir    string
	path   string
	err    error
}

// start runs go build in the background, once; the go command is on
// PATH (go test puts it there), and this test binary's flags (-race) are
// not passed on.
func (b *plainBuild) start() {
	b.once.Do(func() {
		b.done = make(chan struct{})
		ctx, cancel := context.WithCancel(context.Background())
		b.cancel = cancel
		go func() {
			defer close(b.done)
			dir, err := os.MkdirTemp("", "e2atap-plain-")
			if err != nil {
				b.err = err
				return
			}
			b.dir = dir
			path := filepath.Join(dir, "e2atap")
			cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=false", "-o", path, ".")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.err = fmt.Errorf("go build of e2atap without -race: %v\n%s", err, out)
				return
			}
			b.path = path
		}()
	})
}

// cleanup stops a build still running (a run of a few tests that needed
// none) and removes the binary.
func (b *plainBuild) cleanup() {
	if b.done == nil {
		return
	}
	b.cancel()
	<-b.done
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// plainE2atap is the path of the e2atap command built without the race
// detector, waiting for the build; a failed build fails the test.
func plainE2atap(t *testing.T) string {
	t.Helper()
	plain.start()
	<-plain.done
	if plain.err != nil {
		t.Fatal(plain.err)
	}
	return plain.path
}

func contextWithSignals() context.Context {
	ctx, _ := signalContext()
	return ctx
}
