package validate

import (
	"testing"

	"go.uber.org/goleak"
)

// Sharded and Live runs start goroutines: every test must leave none.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
