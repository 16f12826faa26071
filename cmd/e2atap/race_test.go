//go:build race

package main

// raceEnabled: the race detector is on (its runtime grows the heap a test
// process starts with).
const raceEnabled = true
