//go:build !(linux || darwin || freebsd)

package validate

import "os"

// mapWindow: reads are not mapped on this platform; it exists so that the
// tests that shrink the window build everywhere.
var mapWindow = 64 << 20

type mappedFile struct {
	size, at, start int64
	win             []byte
	populated       int
	cached          bool
}

func openMapped(*os.File) *mappedFile    { return nil }
func (m *mappedFile) remap(int64) error  { return nil }
func (m *mappedFile) eof() bool          { return true }
func (m *mappedFile) close(int64)        {}
func (m *mappedFile) ahead(int)          {}
func (m *mappedFile) detach() []byte     { return nil }
func (m *mappedFile) spare() *mappedFile { return &mappedFile{} }
func (m *mappedFile) unmap()             {}
func unmapWindow([]byte)                 {}

var populateChunk = 2 << 20

func populate([]byte) {}
