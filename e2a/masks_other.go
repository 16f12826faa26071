//go:build !amd64

package e2a

const haveKernel = false

// HasAVX2 reports whether AVX2 code may run here: never off amd64.
func HasAVX2() bool { return false }

// classifyAVX2 is never called where haveKernel is false.
func classifyAVX2(p *byte, nblocks int, out *block, t *kernelTables) {
	panic("e2a: no vector kernel")
}
