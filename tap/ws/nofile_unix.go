//go:build unix

package ws

import "syscall"

// nofileLimit is the process's descriptor limit now (it may be changed
// from outside, prlimit(2)); 0 if unknown.
func nofileLimit() uint64 {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return 0
	}
	cur := uint64(lim.Cur) // (int64 on some systems; infinity is then 1<<63-1)
	if cur >= 1<<62 {
		return 0 // unlimited
	}
	return cur
}
