//go:build linux

package validate

import "syscall"

// dropBehind tells the kernel that a walk is done with b, a page-aligned
// part of its own window: the pages leave the process (its RSS), not the
// page cache; touching them again would read them back in.
func dropBehind(b []byte) { _ = syscall.Madvise(b, syscall.MADV_DONTNEED) }
