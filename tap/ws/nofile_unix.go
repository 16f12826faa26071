//go:build unix

package ws

import "syscall"

// nofileLimit is the process's descriptor limit now (it may be changed
// from outside, prlimit(2)); 0 if unknown.
func nofileLimit() uint64 {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil || lim.Cur == ^uint64(0) {
		return 0
	}
	return uint64(lim.Cur)
}
