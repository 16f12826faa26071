//go:build darwin || freebsd

package validate

// adviseSequential: package syscall has no madvise here; the kernel's own
// read-ahead applies.
func adviseSequential([]byte) {}
