//go:build linux

package validate

import (
	"math/bits"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// rawReads: fileReader reads the page cache by a raw preadv2(RWF_NOWAIT)
// (Linux 4.14 for the flag, buffered reads of most file systems since
// 5.x; before, the call fails and ReadAt reads).
const rawReads = true

// rawRead is the raw connection's callback: one preadv2 of r.b at r.off
// that fails with EAGAIN rather than wait for the disk.
func (r *fileReader) rawRead(fd uintptr) {
	iov := unix.Iovec{Base: unsafe.SliceData(r.b)}
	iov.SetLen(len(r.b))
	lo, hi := uintptr(r.off), uintptr(uint64(r.off)>>(bits.UintSize-1)>>1)
	for {
		n, _, e := syscall.RawSyscall6(unix.SYS_PREADV2, fd, uintptr(unsafe.Pointer(&iov)), 1, lo, hi, unix.RWF_NOWAIT)
		if e == syscall.EINTR {
			continue
		}
		r.n, r.errno = int(n), e
		return
	}
}
