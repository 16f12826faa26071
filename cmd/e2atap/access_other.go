//go:build !unix

package main

import "os"

const (
	rOK = 0x4
	wOK = 0x2
	xOK = 0x1
)

// access without access(2): only that path exists; whether it may be
// written is found out at start.
func access(path string, mode uint32) error {
	_, err := os.Stat(path)
	return err
}
