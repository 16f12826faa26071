package ws

import (
	"net"
	"syscall"
	"unsafe"
)

// unsent is how many bytes written to c its peer has not acknowledged yet
// (SIOCOUTQ); 0 when unknown or closed.
func unsent(c net.Conn) int {
	tc, ok := tcpOf(c)
	if !ok {
		return 0
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	cerr := rc.Control(func(fd uintptr) {
		var v int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&v))); e == 0 {
			n = int(v)
		}
	})
	if cerr != nil {
		return 0
	}
	return n
}
