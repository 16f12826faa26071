package main

import "syscall"

// setRcvBuf sets the receive buffer of the socket fd (before it connects:
// the window it advertises stays small).
func setRcvBuf(fd uintptr, n int) {
	syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
