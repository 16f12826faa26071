//go:build race

package deploy

// raceEnabled: the tests run with -race, so the end-to-end test builds the
// sidecar with -race too (the race-instrumented packages are then in the
// build cache already, and a data race in the running sidecar makes it exit
// non-zero, which the test reports).
const raceEnabled = true
