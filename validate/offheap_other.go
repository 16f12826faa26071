//go:build !unix

package validate

import "unsafe"

// mapBytes: without mmap the tables live on the Go heap.
func mapBytes(n int) []byte { return make([]byte, n) }

func unmapBytes([]byte) {}

func unsafeBytes(p *byte, n int) []byte { return unsafe.Slice(p, n) }
