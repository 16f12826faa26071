//go:build unix

package validate

import (
	"sync"
	"syscall"
	"unsafe"
)

// mapBytes maps n zeroed bytes of private anonymous memory, off the Go
// heap; the kernel backs a page only once it is touched. It returns nil
// when the kernel refuses (out of address space or map count): the caller
// does without, never the Go heap instead (a heap the runtime cannot grow
// is a fatal error, not a panic).
func mapBytes(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return b, true
}

// quarantine holds the poisoned pieces, oldest first: past quarantineMax
// the oldest is unmapped for real (its addresses may then be mapped
// again), so that a long fuzzing run stays within vm.max_map_count.
var quarantine struct {
	mu     sync.Mutex
	pieces [][]byte
	head   int
}

const quarantineMax = 8192

func unmapBytes(b []byte) {
	if !poisonOn() {
		_ = syscall.Munmap(b)
		return
	}
	// The pages go back to the kernel (MADV_DONTNEED), the addresses stay
	// reserved with no access: a use after this faults (SIGSEGV) where it
	// happens, instead of reading whatever is mapped there next.
	_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
	if err := syscall.Mprotect(b, syscall.PROT_NONE); err != nil {
		_ = syscall.Munmap(b)
		return
	}
	q := &quarantine
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pieces = append(q.pieces, b)
	if len(q.pieces)-q.head > quarantineMax {
		_ = syscall.Munmap(q.pieces[q.head])
		q.pieces[q.head] = nil
		q.head++
		if q.head > quarantineMax {
			q.pieces = append(q.pieces[:0], q.pieces[q.head:]...)
			q.head = 0
		}
	}
}

func unsafeBytes(p *byte, n int) []byte { return unsafe.Slice(p, n) }
