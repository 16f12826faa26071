package deploy

import (
	"testing"

	"go.uber.org/goleak"
)

// The end-to-end test runs an HTTP server, a feeder goroutine and a
// Prometheus process; all must be gone when the tests end.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
