package deploy

import (
	"testing"

	"go.uber.org/goleak"
)

// The end-to-end test runs an e2atap process, a WebSocket server, feeder
// goroutines and a Prometheus process; all must be gone when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
