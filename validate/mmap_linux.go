package validate

import (
	"os"
	"syscall"
	"unsafe"
)

// mapFlags: a window is mapped as for any reader; adviseWindow fills its
// page table at once when the file is cached.
const mapFlags = syscall.MAP_SHARED

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): fault the range in
// now. Older kernels refuse it (EINVAL) and the pages fault in as read.
const madvPopulateRead = 22

// adviseWindow tells the kernel that b is read once, front to back (it
// reads ahead more and drops the pages behind sooner), and reports
// whether every page of b is in the page cache already; then the page
// table of its first populateChunk is filled in one call, and the rest a
// chunk at a time ahead of the reader (mappedFile.ahead): 5 % less CPU
// for a cached frame file than a fault every 16 pages in the middle of
// decoding. Not the whole window at once: its pages would all count in
// the process's RSS (64 MiB) while a reader gives back what it passed. Not for a window that still has to be read
// from disk: populating it would read all of it before the first frame is
// judged (no overlap of the disk and the CPU: a cold 200 MB file took 1.5×
// the wall time), where faults with read-ahead overlap them. A page the
// file no longer has (cut short) is left out and faults when it is read
// (SIGBUS: an I/O error).
func adviseWindow(b []byte) (cached bool) {
	_ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL)
	if len(b) == 0 {
		return false
	}
	ps := os.Getpagesize()
	vec := make([]byte, (len(b)+ps-1)/ps)
	if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		return false
	}
	for _, v := range vec {
		if v&1 == 0 {
			return false // not all cached
		}
	}
	populate(b[:min(len(b), populateChunk)])
	return true
}

// populate fills the page table of b, a page-aligned part of a window.
func populate(b []byte) { _ = syscall.Madvise(b, madvPopulateRead) }
