//go:build !linux

package ws

import (
	"fmt"
	"os"
)

// runFDTap: the out-of-descriptors child needs Linux's RLIMIT_NOFILE
// semantics; elsewhere the role exits at once (its test is Linux-only).
func runFDTap() {
	fmt.Fprintln(os.Stderr, "fdtap: Linux only")
	os.Exit(2)
}
