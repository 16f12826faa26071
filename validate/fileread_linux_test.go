//go:build linux

package validate

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// rawReadable says whether the kernel reads f, cached, by a
// preadv2(RWF_NOWAIT) (asked directly, not through fileReader): buffered
// reads of the file system take the flag.
func rawReadable(t *testing.T, f *os.File) bool {
	t.Helper()
	var b [1]byte
	if _, err := f.ReadAt(b[:], 0); err != nil { // cached now
		t.Fatal(err)
	}
	_, err := unix.Preadv2(int(f.Fd()), [][]byte{b[:]}, 0, unix.RWF_NOWAIT)
	return err == nil
}

// TestFileReaderCached: a file in the page cache is read by raw reads
// (no blocking system call the scheduler hands the P over for); one with
// pages evicted is read whole too, those pages by ReadAt, and the raw
// reads go on after them. Past the end is io.EOF.
func TestFileReaderCached(t *testing.T) {
	const size = 8<<20 + 12345
	want := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	f := syncedFile(t, want)
	readAll := func(r *fileReader) []byte {
		t.Helper()
		var got []byte
		buf := make([]byte, 256<<10)
		for off := int64(0); off < size; {
			n, err := r.read(buf[:min(int64(len(buf)), size-off)], off)
			if err != nil {
				t.Fatalf("read at %d: %v", off, err)
			}
			if n == 0 {
				t.Fatalf("read at %d: nothing", off)
			}
			got = append(got, buf[:n]...)
			off += int64(n)
		}
		return got
	}
	if !rawReadable(t, f) {
		t.Skip("this kernel or file system refuses RWF_NOWAIT reads")
	}
	r := newFileReader(f)
	if got := readAll(r); !bytes.Equal(got, want) {
		t.Fatal("cached: not the file's bytes")
	}
	if r.raws == 0 || r.waits != 0 {
		t.Errorf("cached: %d raw reads, %d by ReadAt; want all raw", r.raws, r.waits)
	}
	if n, err := r.read(make([]byte, 10), size); n != 0 || !errors.Is(err, io.EOF) {
		t.Errorf("past the end: %d, %v; want 0, EOF", n, err)
	}
	if n, err := r.read(make([]byte, 10), size-4); n != 4 || err != nil && !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %d, %v; want 4, nil or EOF", n, err)
	}

	// A run of pages in the middle evicted (2 MiB, aligned: the kernel
	// drops only whole folios): the raw read stops short of it (or is
	// refused), ReadAt reads it, raw reads go on.
	if dropPages(t, f, 2<<20, 2<<20, size) {
		t.Skip("the kernel kept the pages fadvise was asked to drop")
	}
	r = newFileReader(f)
	if got := readAll(r); !bytes.Equal(got, want) {
		t.Fatal("evicted: not the file's bytes")
	}
	if r.waits == 0 || r.raws == 0 || r.raw == nil {
		t.Errorf("evicted: %d raw reads, %d by ReadAt, raw reads on %t; want both, on", r.raws, r.waits, r.raw != nil)
	}
}
