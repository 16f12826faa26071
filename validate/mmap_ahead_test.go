//go:build linux

package validate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMappedPopulateAhead: a cached window's page table is filled a chunk
// at a time ahead of its reader, never all at once (its pages would all
// count in RSS), and all of it by the time the reader reaches its end.
func TestMappedPopulateAhead(t *testing.T) {
	defer func(w, c int) { mapWindow, populateChunk = w, c }(mapWindow, populateChunk)
	mapWindow, populateChunk = 1<<20, 64<<10
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _ = f.Read(make([]byte, 3<<20))      // now in the page cache
	if _, err := f.Seek(0, 0); err != nil { // a mapped read starts at the offset
		t.Fatal(err)
	}
	m := openMapped(f)
	if m == nil {
		t.Fatal("not mapped")
	}
	defer m.close(0)
	if !m.cached {
		t.Skip("the kernel did not keep the file cached")
	}
	if m.populated != populateChunk {
		t.Fatalf("populated %d at open, want one chunk (%d)", m.populated, populateChunk)
	}
	for off := 0; off < len(m.win); off += 4096 {
		m.ahead(off)
		if m.populated < min(off+populateChunk/2, len(m.win)) || m.populated > off+2*populateChunk {
			t.Fatalf("reader at %d: populated %d, want within [%d, %d]", off, m.populated, off+populateChunk/2, off+2*populateChunk)
		}
	}
	if m.populated != len(m.win) {
		t.Fatalf("populated %d of %d at the end", m.populated, len(m.win))
	}
	if err := m.remap(int64(len(m.win))); err != nil {
		t.Fatal(err)
	}
	if m.populated != populateChunk {
		t.Fatalf("populated %d after remap, want one chunk", m.populated)
	}
}
