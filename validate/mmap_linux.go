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
//
// Whether the window is cached is asked of a sample of its pages
// (cachedSample): mincore(2) of every page of a 64 MiB window cost 1.4 ms
// (the kernel looks each up in the page cache), 4 % of a two-shard run
// on 1 M frames; a window the sample takes for cached that still lacks
// some pages reads those few when their chunk is filled.
func adviseWindow(b []byte) (cached bool) {
	_ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL)
	if len(b) == 0 || !cachedSample(b) {
		return false
	}
	populate(b[:min(len(b), populateChunk)])
	return true
}

// cacheStride is how far apart the pages cachedSample asks about lie.
const cacheStride = 256 << 10

// cachedSample reports whether the page cache holds b's first and last
// pages and one every cacheStride between them: a file read from disk
// lacks most of its pages, one partly cached whole runs of them (the
// kernel reads and evicts in runs of pages), so that a run of cacheStride
// or more is not missed.
func cachedSample(b []byte) bool {
	ps := os.Getpagesize()
	var vec [1]byte
	for off := 0; ; off += cacheStride {
		if off >= len(b) {
			off = (len(b) - 1) &^ (ps - 1) // the last page
		}
		if _, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(&b[off])), uintptr(ps), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 || vec[0]&1 == 0 {
			return false
		}
		if off >= len(b)-ps {
			return true
		}
	}
}

// populate fills the page table of b, a page-aligned part of a window.
func populate(b []byte) { _ = syscall.Madvise(b, madvPopulateRead) }
