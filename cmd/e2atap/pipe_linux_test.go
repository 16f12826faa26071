package main

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// pipeNearlyFull reports whether the pipe whose read end is r holds so
// much unread that a writer of lines up to 4 KiB long is blocked: its
// unread bytes (FIONREAD, TIOCINQ) are within 4 KiB of its capacity
// (F_GETPIPE_SZ).
func pipeNearlyFull(r *os.File) bool {
	fd := int(r.Fd())
	unread, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	if err != nil {
		return false
	}
	size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		return false
	}
	return unread >= size-4096
}

// pipeState is what pipeNearlyFull looks at, for a failure's message.
func pipeState(r *os.File) string {
	fd := int(r.Fd())
	unread, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
	size, err2 := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	return fmt.Sprintf("%d bytes unread of %d (%v, %v)", unread, size, err, err2)
}
