//go:build linux

package validate

import (
	"os"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages says, for each page that b spans (from the page that
// holds its first byte), whether it is backed.
func residentPages(t *testing.T, b []byte) []bool {
	t.Helper()
	ps := uintptr(os.Getpagesize())
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start, end := p&^(ps-1), (p+uintptr(len(b))+ps-1)&^(ps-1)
	vec := make([]byte, (end-start)/ps)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, start, end-start, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	out := make([]bool, len(vec))
	for i, v := range vec {
		out[i] = v&1 != 0
	}
	return out
}

// hasPrefault skips a test on a kernel without MADV_POPULATE_WRITE, or
// where the advice is taken and nothing done (qemu-user's emulation of
// madvise returns success for advice it does not pass on: make
// test-bigendian).
func hasPrefault(t *testing.T) {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, os.Getpagesize(), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	if err := syscall.Madvise(b, unix.MADV_POPULATE_WRITE); err != nil {
		t.Skipf("no MADV_POPULATE_WRITE: %v", err)
	}
	if !residentPages(t, b)[0] {
		t.Skip("MADV_POPULATE_WRITE populated nothing (an emulator)")
	}
}

// TestPrefault: the pages a slice spans, the first and last partly, are
// backed, and no other.
func TestPrefault(t *testing.T) {
	hasPrefault(t)
	ps := os.Getpagesize()
	b, err := syscall.Mmap(-1, 0, 5*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	prefault(b[ps+100 : 2*ps+10])
	want := []bool{false, true, true, false, false}
	if got := residentPages(t, b); !equalBools(got, want) {
		t.Errorf("resident %v, want %v", got, want)
	}
}

// TestTablePrefaulted: a table's slot array, a new state segment's first
// page and a new key chunk's first page are backed before they are
// written (so that they take no page fault each: prefault), and a
// segment's other pages are not.
func TestTablePrefaulted(t *testing.T) {
	hasPrefault(t)
	tab := newTable(1000)
	if got := residentPages(t, asBytes(tab.slots)); !allTrue(got) {
		t.Errorf("slot array: resident %v, want all", got)
	}
	if !tab.room(0) {
		t.Fatal("no room")
	}
	seg := asBytes(tab.segs[0])
	if got := residentPages(t, seg); !got[0] || got[1] {
		t.Errorf("state segment: first two pages resident %v, want the first alone", got[:2])
	}
	if _, ok := tab.store(nil); !ok {
		t.Fatal("not stored")
	}
	if got := residentPages(t, tab.arena[0][:1]); !got[0] {
		t.Error("key chunk: first page not resident")
	}
}

// TestTombRingPrefaulted: a tombstone ring is backed as it is made (up to
// tombPrefault places), and so is an index grown to 512 places or more
// (one of 2048: 8 KiB, pages of its own).
func TestTombRingPrefaulted(t *testing.T) {
	hasPrefault(t)
	ts := newTombSet(tombPrefault) // a ring of 64 KiB: pages of its own
	if got := residentPages(t, asBytes(ts.ring)); !allTrue(got) {
		t.Errorf("ring: resident %v, want all", got)
	}
	for i := 0; len(ts.idx) < 2048; i++ {
		ts.add(uint64(i)*0x9e3779b97f4a7c15, ended)
	}
	if got := residentPages(t, asBytes(ts.idx)); !allTrue(got) {
		t.Errorf("index of %d: resident %v, want all", len(ts.idx), got)
	}
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func allTrue(a []bool) bool {
	for _, v := range a {
		if !v {
			return false
		}
	}
	return true
}
