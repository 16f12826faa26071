//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// usage is a finished child's CPU time (user+sys) and peak RSS in bytes.
func usage(ps *os.ProcessState) (cpu time.Duration, maxRSS int64) {
	ru := ps.SysUsage().(*syscall.Rusage)
	rss := int64(ru.Maxrss) * 1024 // KiB on Linux and the BSDs
	if runtime.GOOS == "darwin" {
		rss = int64(ru.Maxrss) // bytes
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), rss
}
