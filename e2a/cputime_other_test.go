//go:build !unix

package e2a

func cpuNanos() int64 { return 0 }
