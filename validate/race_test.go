//go:build race

package validate

// raceEnabled: the race detector is on (tests scale down what costs it
// ten times more).
const raceEnabled = true
