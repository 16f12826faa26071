package redact

// haveVec: the CPU has AVX2 and the OS saves its registers (hasAVX2).
var haveVec = hasAVX2()

// HasAVX2 reports whether AVX2 code may run here: e2a's classifier and
// validate's routing kernels ask it, so that one package probes the CPU.
func HasAVX2() bool { return haveVec }

// setMask64 returns the 64 bytes at p as a bit mask, bit k set where p[k]
// is in t (AVX2: two 32-byte halves, each table looked up by nibble).
//
//go:noescape
func setMask64(p *byte, t *byteSet) uint64

// setMasks64 is setMask64(p, a), setMask64(p, b) in one call.
//
//go:noescape
func setMasks64(p *byte, a, b *byteSet) (ma, mb uint64)

//go:noescape
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

//go:noescape
func xgetbv0() (eax, edx uint32)

// hasAVX2 reports whether the CPU has AVX2 and the OS saves the YMM
// registers across context switches (CPUID leaf 1: AVX and OSXSAVE; XCR0:
// the SSE and AVX state; leaf 7: AVX2), as the Intel manual prescribes.
// It is here, not golang.org/x/sys/cpu, so that redact imports only the
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
