//go:build linux

package validate

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentAll is the exact question cachedSample samples: every page of
// b in the page cache (mincore of all of them).
func residentAll(t *testing.T, b []byte) bool {
	t.Helper()
	vec := make([]byte, (len(b)+os.Getpagesize()-1)/os.Getpagesize())
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for _, v := range vec {
		if v&1 == 0 {
			return false
		}
	}
	return true
}

// TestMappedCachedSample: a window is taken for cached (its page table
// then filled ahead of the reader) when the file is in the page cache,
// and not when it is not, or when a run of its pages in the middle or at
// its end was evicted: the sample of its pages finds them.
func TestMappedCachedSample(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	const size = 8<<20 + 12345
	if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil { // clean pages, which fadvise may drop
		t.Fatal(err)
	}
	load := func() {
		if _, err := f.ReadAt(make([]byte, size), 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name      string
		off, n    int64 // evicted: n bytes at off (0: none; -1: to the end)
		wantCache bool
	}{
		{"cached", 0, 0, true},
		{"all evicted", 0, size, false},
		{"a run in the middle", 3<<20 + 8192, cacheStride, false},
		{"the last pages", size - 1<<20, -1, false},
		{"the first page", 0, 4096, false},
	} {
		load()
		if c.n != 0 {
			if err := unix.Fadvise(int(f.Fd()), c.off, max(c.n, 0), unix.FADV_DONTNEED); err != nil {
				t.Fatal(err)
			}
		}
		// Asked before openMapped, which fills the first chunk's pages.
		b, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			t.Fatal(err)
		}
		all := residentAll(t, b)
		_ = unix.Munmap(b)
		if all != c.wantCache {
			t.Logf("%s: the kernel did not keep or drop the pages as asked; skipped", c.name)
			continue
		}
		if _, err := f.Seek(0, 0); err != nil {
			t.Fatal(err)
		}
		m := openMapped(f)
		if m == nil {
			t.Fatal("not mapped")
		}
		if m.cached != c.wantCache {
			t.Errorf("%s: taken for cached %t, want %t", c.name, m.cached, c.wantCache)
		}
		m.close(0)
	}
}
