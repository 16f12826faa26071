//go:build unix

package main

import "syscall"

const (
	rOK = 0x4
	wOK = 0x2
	xOK = 0x1
)

// access is access(2): may this process read or write there? It answers
// for the real user, which is the user of a sidecar (no setuid), and says
// EROFS for a read-only mount.
func access(path string, mode uint32) error { return syscall.Access(path, mode) }
