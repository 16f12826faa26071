//go:build unix

package e2a

import "syscall"

// cpuNanos is the process's CPU time (user+sys) so far: benchmarks report
// it beside wall time, which on a loaded machine says more about the load.
func cpuNanos() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
