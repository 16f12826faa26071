//go:build unix

package validate

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestPrefetchAnyAddress: prefetch is a hint that never faults, on nil or
// on memory unmapped already (lookup and insert ask for lines that may lie
// one past a full key chunk or a segment), and a table whose key chunk is
// full to the byte, prefetched and then inserted into, holds every key.
func TestPrefetchAnyAddress(t *testing.T) {
	b, err := syscall.Mmap(-1, 0, 4096, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	p := uintptr(unsafe.Pointer(&b[0]))
	if err := syscall.Munmap(b); err != nil {
		t.Fatal(err)
	}
	prefetch(p)
	prefetch(p + 4095)
	prefetch(0)

	tb := newTable(0)
	key := make([]byte, 127) // 128 bytes in the arena: 512 fill a chunk exactly
	for k := 0; k < 2*arenaChunk/128+3; k++ {
		key[0], key[1] = byte(k), byte(k>>8)
		tb.prefetchInsert()
		if i := tb.insert(key, tb.hash(key)); i != int32(k) {
			t.Fatalf("insert %d: %d", k, i)
		}
		if k == arenaChunk/128-1 {
			if a := tb.arena[len(tb.arena)-1]; len(a) != cap(a) || len(a) != arenaChunk {
				t.Fatalf("chunk not full: %d of %d", len(a), cap(a))
			}
		}
	}
	for k := 0; k < tb.len(); k++ {
		key[0], key[1] = byte(k), byte(k>>8)
		if i := tb.find(key, tb.hash(key)); i != int32(k) {
			t.Fatalf("find %d: %d", k, i)
		}
	}
}

// TestChunkFrameLayout: prefetchFrames (prefetch_amd64.s) reads a
// chunkFrame's off and attrs at these offsets, and steps by its size.
func TestChunkFrameLayout(t *testing.T) {
	var c chunkFrame
	if o, a, s := unsafe.Offsetof(c.off), unsafe.Offsetof(c.attrs), unsafe.Sizeof(c); o != 0 || a != 8 || s != 24 {
		t.Fatalf("chunkFrame: off at %d, attrs at %d, %d bytes; prefetch_amd64.s has 0, 8, 24", o, a, s)
	}
	// Any frames, nil and none included: a hint, never a fault.
	list := []chunkFrame{{off: 0, attrs: 20}, {off: 1 << 31, attrs: 1 << 30}}
	prefetchFrames(0, &list[0], len(list))
	prefetchFrames(0, nil, 0)
}
