//go:build darwin || freebsd

package validate

import "syscall"

// mapFlags: pages are mapped as they are read.
const mapFlags = syscall.MAP_SHARED

// adviseWindow: package syscall has no madvise here; the kernel's own
// read-ahead applies.
func adviseWindow([]byte) bool { return false }

func populate([]byte) {}
