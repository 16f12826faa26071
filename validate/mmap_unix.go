//go:build linux || darwin || freebsd

package validate

import (
	"fmt"
	"os"
	"syscall"
)

// mapWindow is how much of a file a mapped read holds mapped at once: more
// than the largest frame (maxFrameBuffer), so that a frame never needs
// more than one window, and little enough not to pin a large capture.
var mapWindow = 64 << 20 // a variable so that tests can cross windows

// mappedFile reads a regular file through windows of a read-only shared
// mapping: the kernel does not copy the bytes out of its page cache, as
// read(2) does. Bytes handed out alias the mapping and stay valid until
// the next remap.
type mappedFile struct {
	f         *os.File
	size, at  int64 // file size; file offset of win[0]
	win       []byte
	pageAlign int64
	start     int64 // the file offset the read starts at
	// populated: the page table of win[:populated] is filled, or will
	// fault in as read (len(win) unless cached: every page of win was in
	// the page cache when it was mapped).
	populated int
	cached    bool
}

// populateChunk is how much of a cached window's page table is filled at
// a time, ahead of its reader: the reader gives back a dropChunk behind
// itself, so that the window's RSS stays near two chunks.
var populateChunk = 2 << 20

// ahead fills the page table of a cached window's next chunk once the
// reader at win offset off is half a chunk from the filled end.
func (m *mappedFile) ahead(off int) {
	if off+populateChunk/2 >= m.populated {
		m.populateNext()
	}
}

func (m *mappedFile) populateNext() {
	if !m.cached || m.populated >= len(m.win) {
		return
	}
	end := min(len(m.win), m.populated+populateChunk)
	populate(m.win[m.populated:end])
	m.populated = end
}

// openMapped returns a mapping reader for f from its current offset, or
// nil when f is not a regular file of some size (a pipe, a terminal, a
// small file: read(2) then).
func openMapped(f *os.File) *mappedFile {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 1<<20 {
		return nil
	}
	pos, err := f.Seek(0, 1)
	if err != nil {
		return nil
	}
	m := &mappedFile{f: f, size: st.Size(), start: pos, pageAlign: int64(os.Getpagesize())}
	if err := m.remap(pos); err != nil {
		return nil
	}
	return m
}

// remap maps the window that starts at the page holding file offset from.
func (m *mappedFile) remap(from int64) error {
	m.unmap()
	start := from &^ (m.pageAlign - 1)
	n := min(int64(mapWindow), m.size-start)
	if n <= 0 {
		m.at, m.win = from, nil
		return nil
	}
	b, err := syscall.Mmap(int(m.f.Fd()), start, int(n), syscall.PROT_READ, mapFlags)
	if err != nil {
		return fmt.Errorf("mmap: %w", err)
	}
	m.cached = adviseWindow(b)
	m.populated = len(b)
	if m.cached {
		m.populated = min(len(b), populateChunk)
	}
	m.at, m.win = start, b
	return nil
}

// spare is a reader of m's file with no window yet, for a second window
// beside m's (walkMap).
func (m *mappedFile) spare() *mappedFile {
	return &mappedFile{f: m.f, size: m.size, pageAlign: m.pageAlign, start: m.start, at: m.at}
}

// detach hands the window over to the caller, who unmaps it
// (unmapWindow); the next remap maps a new one beside it.
func (m *mappedFile) detach() []byte {
	b := m.win
	m.win = nil
	return b
}

// unmapWindow unmaps a window detached from its mappedFile.
func unmapWindow(b []byte) { _ = syscall.Munmap(b) }

func (m *mappedFile) unmap() {
	if m.win != nil {
		_ = syscall.Munmap(m.win)
		m.win = nil
	}
}

// eof reports whether the window reaches the end of the file.
func (m *mappedFile) eof() bool { return m.at+int64(len(m.win)) >= m.size }

// close unmaps and moves the file offset past what was read, as a read
// would have.
func (m *mappedFile) close(read int64) {
	m.unmap()
	_, _ = m.f.Seek(read, 0)
}
