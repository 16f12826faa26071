//go:build unix

package validate

import (
	"syscall"
	"unsafe"
)

// mapBytes maps n zeroed bytes of private anonymous memory, off the Go
// heap; the kernel backs a page only once it is touched.
func mapBytes(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		// Out of address space or map count: the heap still works (and
		// unmapBytes of a heap slice is refused by the kernel, harmlessly).
		return make([]byte, n)
	}
	return b
}

func unmapBytes(b []byte) { _ = syscall.Munmap(b) }

func unsafeBytes(p *byte, n int) []byte { return unsafe.Slice(p, n) }
