//go:build !amd64

package redact

import "unsafe"

const haveVec = false

// HasAVX2 reports whether AVX2 code may run here: never off amd64.
func HasAVX2() bool { return false }

// setMask64 is the kernel's result a byte at a time: never called where
// haveVec is false but by the tests that hold the kernel to has.
func setMask64(p *byte, t *byteSet) uint64 {
	s := unsafe.Slice(p, 64)
	var m uint64
	for k, c := range s {
		if t.has(c) {
			m |= 1 << k
		}
	}
	return m
}

// setMasks64 is setMask64(p, a), setMask64(p, b).
func setMasks64(p *byte, a, b *byteSet) (ma, mb uint64) {
	return setMask64(p, a), setMask64(p, b)
}
