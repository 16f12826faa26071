//go:build linux

package validate

import (
	"math/bits"
	"runtime"
	"syscall"
	"unsafe"
)

// rawReads: fileReader reads the page cache by a raw preadv2(RWF_NOWAIT)
// (Linux 4.14 for the flag, buffered reads of most file systems since
// 5.x; before, the call fails and ReadAt reads), on the architectures
// whose system call number sysPreadv2 knows.
var rawReads = sysPreadv2 != 0

// The package takes the standard library alone (internal/layers), whose
// syscall tables predate preadv2: its numbers and flag, from the kernel's
// tables.
var sysPreadv2 = func() uintptr {
	switch runtime.GOARCH {
	case "amd64":
		return 327
	case "arm64", "riscv64", "loong64":
		return 286
	case "s390x":
		return 376
	case "ppc64", "ppc64le":
		return 380
	case "386":
		return 378
	case "arm":
		return 392
	}
	return 0
}()

// rwfNowait is preadv2's RWF_NOWAIT: fail with EAGAIN rather than wait.
const rwfNowait = 0x8

// rawRead is the raw connection's callback: one preadv2 of r.b at r.off
// that fails with EAGAIN rather than wait for the disk.
func (r *fileReader) rawRead(fd uintptr) {
	iov := syscall.Iovec{Base: unsafe.SliceData(r.b)}
	iov.SetLen(len(r.b))
	lo, hi := uintptr(r.off), uintptr(uint64(r.off)>>(bits.UintSize-1)>>1)
	for {
		n, _, e := syscall.RawSyscall6(sysPreadv2, fd, uintptr(unsafe.Pointer(&iov)), 1, lo, hi, rwfNowait)
		if e == syscall.EINTR {
			continue
		}
		r.n, r.errno = int(n), e
		return
	}
}
