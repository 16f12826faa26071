package main

import (
	"fmt"
	"time"

	"github.com/e2atap/e2atap/validate"
)

// enginePanicMsg is the log line of enginePanic.
const enginePanicMsg = "engine panic: a record was skipped (a defect of e2atap: please report it with this line); the relay and the other records go on"

// enginePanic is the live engine's validate.Config.OnPanic: a record that
// made the engine panic (a defect of e2atap) is skipped, a loss for the
// streams of its scope, and the process goes on relaying and judging.
// It is logged with the panic and its stack (function names and lines:
// never the record), the first time and then at most once a minute with
// how many since; e2atap_engine_panics_total counts every one. Called on
// an engine's goroutine.
func (s *sidecar) enginePanic(in *validate.Input, v any, stack []byte) {
	now := time.Now().UnixNano()
	last := s.panicLog.Load()
	if last != 0 && now-last < int64(time.Minute) || !s.panicLog.CompareAndSwap(last, now) {
		return
	}
	total := s.live.Panics()
	since := total - s.panicsLogged.Swap(total)
	s.logger.Error(enginePanicMsg,
		"tap", in.Tap, "source", in.Source(), "panic", fmt.Sprint(v), "stack", string(stack),
		"panics_since_last_log", since, "panics_total", total)
}
