package e2a

// haveKernel: the AVX2 kernel runs here, and redact's anchors fit its
// nibble tables.
var haveKernel = avx2 && anchorNibbles

var avx2 = hasAVX2()

// HasAVX2 reports whether AVX2 code may run here (hasAVX2): validate's
// routing kernels ask it too, so that only e2a probes the CPU.
func HasAVX2() bool { return avx2 }

//go:noescape
func classifyAVX2(p *byte, nblocks int, out *block, t *kernelTables)

//go:noescape
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv0() (eax, edx uint32)

// hasAVX2 reports whether the CPU has AVX2 and the OS saves the YMM
// registers across context switches (CPUID leaf 1: AVX and OSXSAVE; XCR0:
// the SSE and AVX state; leaf 7: AVX2), as the Intel manual prescribes.
// It is here, not golang.org/x/sys/cpu, so that e2a imports only the
// standard library.
func hasAVX2() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv0(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0
}
