//go:build linux

package validate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/e2atap/e2atap/frame"
)

// strayHandler reads a page it may not read at its tenth input:
// a bug in a handler (memory used after it was given back, as off-heap
// state could be), not a fault on the reader's mapping.
type strayHandler struct {
	n    int
	page []byte // not readable
	got  byte
}

func (h *strayHandler) Observe(in *Input) {
	if h.n++; h.n == 10 {
		h.got = *(*byte)(unsafe.Pointer(unsafe.SliceData(h.page)))
	}
}
func (h *strayHandler) ObserveFrame(in *Input, _ *frame.Frame) { h.Observe(in) }
func (h *strayHandler) DecodeError(*Input, string, string)     {}

// strayWindowed is a strayHandler told the windows of a mapped frame read
// (frames for a handler that judges each before the next is read are read
// by read(2), not mapped: readFramesFile).
type strayWindowed struct{ *strayHandler }

func (strayWindowed) SetWindow([]byte) error { return nil }

// TestMappedReadStrayFaultPanics: only a fault on a page of the mapped
// window is taken for a file that shrank; a fault elsewhere during a
// mapped read (JSON lines or frames), a handler's bug, still panics
// instead of being reported as an I/O error.
func TestMappedReadStrayFaultPanics(t *testing.T) {
	// A first line longer than readLinesFile's buffer: the lines are then
	// read through a mapping (readLinesInline) even for an Engine.
	var jl bytes.Buffer
	fmt.Fprintf(&jl, `{"request_id":"long","sequence":0,"is_final":true,"pad":"%s"}`+"\n", bytes.Repeat([]byte("p"), lineReadBuf))
	for i := 0; jl.Len() < 2<<20; i++ {
		fmt.Fprintf(&jl, `{"request_id":"r%d","sequence":0,"is_final":true,"status":"succeeded","response_kind":"e2a.complete"}`+"\n", i)
	}
	jp := writeTemp(t, "cap.jsonl", jl.Bytes())
	fp, _ := bigFrameFile(t, nil, 20000, nil)
	for _, p := range []string{jp, fp} {
		// The middle page of three made unreadable: nothing else can be
		// mapped there meanwhile, as an unmapped hole could be reused.
		ps := os.Getpagesize()
		pages, err := syscall.Mmap(-1, 0, 3*ps, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
		if err != nil {
			t.Fatal(err)
		}
		defer syscall.Munmap(pages)
		page := pages[ps : 2*ps]
		if err := syscall.Mprotect(page, syscall.PROT_NONE); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				r := recover()
				if _, fault := r.(interface{ Addr() uintptr }); !fault {
					t.Errorf("%s: recovered %v, want the handler's fault", filepath.Base(p), r)
				}
			}()
			var h Handler = &strayHandler{page: page}
			if p == fp {
				h = strayWindowed{h.(*strayHandler)}
			}
			_, err := Read(f, "cap", FormatAuto, ReadOptions{}, h)
			t.Errorf("%s: Read returned (%v) past a handler's stray fault", filepath.Base(p), err)
		}()
		f.Close()
	}
}
