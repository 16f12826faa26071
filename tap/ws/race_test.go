//go:build race

package ws

// raceEnabled: the race detector's shadow memory would dwarf what the
// memory test measures, so its child process is built without it.
const raceEnabled = true
