//go:build race

package metrics

// The race detector's instrumentation allocates; allocation tests skip.
const raceEnabled = true
