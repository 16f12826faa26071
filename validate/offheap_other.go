//go:build !unix

package validate

import "unsafe"

// mapBytes: without mmap the tables live on the Go heap (not charged to
// the memory limit: the collector sees them).
func mapBytes(n int) ([]byte, bool) { return make([]byte, n), false }

func unmapBytes([]byte) {}

func unsafeBytes(p *byte, n int) []byte { return unsafe.Slice(p, n) }
