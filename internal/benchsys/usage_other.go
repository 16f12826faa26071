//go:build !unix

package main

import (
	"os"
	"time"
)

// usage is a finished child's CPU time (user+sys); the peak RSS is not
// known here (0).
func usage(ps *os.ProcessState) (cpu time.Duration, maxRSS int64) {
	return ps.UserTime() + ps.SystemTime(), 0
}
