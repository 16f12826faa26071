//go:build unix && !linux

package validate

// release: where madvise is not in package syscall, a poisoned piece
// keeps its pages (the poison mode is for tests).
func release([]byte) {}
