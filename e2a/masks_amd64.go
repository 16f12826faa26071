package e2a

import "github.com/e2atap/e2atap/redact"

// haveKernel: the AVX2 kernel runs here, and redact's anchors fit its
// nibble tables.
var haveKernel = avx2 && anchorNibbles

var avx2 = redact.HasAVX2()

// HasAVX2 reports whether AVX2 code may run here (redact.HasAVX2, which
// probes the CPU once for redact, e2a and validate's routing kernels).
func HasAVX2() bool { return avx2 }

//go:noescape
func classifyAVX2(p *byte, nblocks int, out *block, t *kernelTables)
