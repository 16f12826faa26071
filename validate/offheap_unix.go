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
	if !roomLeft() {
		_ = syscall.Munmap(b)
		return nil, false
	}
	return b, true
}

// roomLeft says whether, with the address space limited (RLIMIT_AS:
// ulimit -v), mapReserve of it is still free for the rest of the process:
// the Go runtime's own mappings failing is fatal, so the tables must not
// take the last of it (they stop one reserve short). One probe (a
// mapping with no access, unmapped at once) per piece, only under a
// limit: pieces are 64 KiB and more.
func roomLeft() bool {
	var r syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &r) != nil || uint64(r.Cur) >= rlimUnlimited {
		return true
	}
	p, err := syscall.Mmap(-1, 0, mapReserve, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_NORESERVE)
	if err != nil {
		return false
	}
	_ = syscall.Munmap(p)
	return true
}

// rlimUnlimited: RLIM_INFINITY is ^0 on Linux and 1<<63-1 on darwin and
// freebsd (where Rlimit.Cur is signed); a limit from 4 EiB up is none.
const rlimUnlimited = 1 << 62

// quarantine holds the poisoned pieces, oldest first: past quarantineMax
// the oldest is unmapped for real (its addresses may then be mapped
// again), so that a long fuzzing run stays within vm.max_map_count.
var quarantine struct {
	mu     sync.Mutex
	pieces [][]byte
	head   int
	total  int // pieces poisoned so far (tests)
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
	release(b)
	if err := protectNone(b); err != nil {
		_ = syscall.Munmap(b)
		return
	}
	q := &quarantine
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pieces = append(q.pieces, b)
	q.total++
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
