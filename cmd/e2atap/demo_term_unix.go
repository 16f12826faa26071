//go:build linux || darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalSize asks the terminal behind f for its columns and rows (the
// TIOCGWINSZ ioctl; no x/term in go.mod).
func terminalSize(f *os.File) (cols, rows int, ok bool) {
	var ws struct{ Row, Col, X, Y uint16 }
	sc, err := f.SyscallConn()
	if err != nil {
		return 0, 0, false
	}
	var errno syscall.Errno
	if err := sc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	}); err != nil || errno != 0 || ws.Col == 0 {
		return 0, 0, false
	}
	return int(ws.Col), int(ws.Row), true
}
