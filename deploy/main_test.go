package deploy

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// The end-to-end test runs an e2atap process, a WebSocket server, feeder
// goroutines and a Prometheus process; all must be gone when the tests end.
// The sidecar binary the tests share (buildSidecar) is removed after them.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
