package validate

import (
	"bytes"
	"fmt"
	"runtime/debug"
)

// TestingPanicOn, when not empty, makes the engines panic on every message
// that holds it, as a defect would: the hook of Config.OnPanic's tests
// (the real process's, whose test binary sets it before it starts the
// sidecar). Never set outside tests.
var TestingPanicOn []byte

// testingPanic panics where TestingPanicOn says to.
func testingPanic(in *Input) {
	if len(TestingPanicOn) > 0 && bytes.Contains(in.Data, TestingPanicOn) {
		panic("a panic planted by a test (validate.TestingPanicOn)")
	}
}

// survived is what a recovered panic while judging in costs
// (Config.OnPanic): in is skipped; what the engine changed for it before
// the panic stays, so the open streams of in's scope are gapped (a loss,
// RULES.md: not judged across it) and no verdict follows from a
// half-judged record. A panic of that too is swallowed. Then it is
// counted and handed to OnPanic.
func (s *Sharded) survived(e *Engine, in *Input, v any) {
	stack := debug.Stack()
	func() {
		defer func() { _ = recover() }()
		e.Gap(in)
	}()
	s.panics.Add(1)
	s.onPanic(in, v, stack)
}

// survivedRouted is survived for a panic on the reader's goroutine where
// no shard runs there (not Inline): the stream's gap is queued to the
// shards as any other (Gap), not marked on an engine another goroutine
// runs.
func (s *Sharded) survivedRouted(in *Input, v any) {
	stack := debug.Stack()
	func() {
		defer func() { _ = recover() }()
		s.Gap(in)
	}()
	s.panics.Add(1)
	s.onPanic(in, v, stack)
}

// InternalError is a panic while judging that could not cost one message
// alone (Config.OnPanic): the goroutines that walk a mapped file judge it
// as they read it, and a walk stops with this error.
type InternalError struct {
	Value any
	Stack []byte
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal error (a defect of e2atap): %v", e.Value)
}

// Abort ends a run that stops early because a panic on the caller's own
// goroutine (Inline) was recovered there: the other shards judge what they
// were handed, and Watermark then covers everything judged before the
// panic. Nothing is added to the run after it.
func (s *Sharded) Abort() {
	s.barrier()
	if s.inline {
		s.last.Store(s.done)
	}
}

// Panics is how many messages were skipped for a panic while they were
// judged (Config.OnPanic). Safe to call from any goroutine.
func (s *Sharded) Panics() uint64 { return s.panics.Load() }
