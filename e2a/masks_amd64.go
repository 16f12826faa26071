package e2a

import "golang.org/x/sys/cpu"

// haveKernel: the AVX2 kernel runs here, and redact's anchors fit its
// nibble tables.
var haveKernel = cpu.X86.HasAVX2 && anchorNibbles

//go:noescape
func classifyAVX2(p *byte, nblocks int, out *block, t *kernelTables)
