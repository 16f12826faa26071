//go:build linux

package validate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// residentAll is the exact question cachedSample samples: every page of
// b in the page cache (mincore of all of them: residentPages).
func residentAll(t *testing.T, b []byte) bool {
	t.Helper()
	return !slices.Contains(residentPages(t, b), false)
}

// syncedFile writes data to a new file and opens it, its pages written
// back: clean pages, which fadvise may drop.
func syncedFile(t *testing.T, data []byte) *os.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	return f
}

// dropPages asks the kernel to drop n bytes of f's cached pages at off
// (n 0: none; n < 0: to the end) and reports whether all size bytes of f
// are still in the page cache (it kept what it was asked to drop).
func dropPages(t *testing.T, f *os.File, off, n int64, size int) (allResident bool) {
	t.Helper()
	if n != 0 {
		if err := unix.Fadvise(int(f.Fd()), off, max(n, 0), unix.FADV_DONTNEED); err != nil {
			t.Fatal(err)
		}
	}
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	return residentAll(t, m)
}

// TestMappedCachedSample: a window is taken for cached (its page table
// then filled ahead of the reader) when the file is in the page cache,
// and not when it is not, or when a run of its pages in the middle or at
// its end was evicted: the sample of its pages finds them.
func TestMappedCachedSample(t *testing.T) {
	const size = 8<<20 + 12345
	f := syncedFile(t, make([]byte, size))
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
		// Asked before openMapped, which fills the first chunk's pages.
		if all := dropPages(t, f, c.off, c.n, size); all != c.wantCache {
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
