#include "textflag.h"

// func prefetch(p uintptr)
//
// PREFETCHT0: brings p's cache line towards the core, without waiting for
// it and without a fault (any address will do).
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET

// func prefetchFrames(base uintptr, list *chunkFrame, n int)
//
// PREFETCHT0 of each of n chunkFrames' first byte (base+off) and last
// byte of its attribute section (base+off+attrs-1): prefetch for a batch
// of a split's frames at the cost of one call (the offsets of chunkFrame:
// TestChunkFrameLayout).
#define cfOff 0
#define cfAttrs 8
#define cfSize 24
TEXT ·prefetchFrames(SB), NOSPLIT, $0-24
	MOVQ base+0(FP), AX
	MOVQ list+8(FP), BX
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done
loop:
	MOVLQZX cfOff(BX), DX
	ADDQ AX, DX
	PREFETCHT0 (DX)
	MOVLQZX cfAttrs(BX), SI
	PREFETCHT0 -1(DX)(SI*1)
	ADDQ $cfSize, BX
	DECQ CX
	JNZ loop
done:
	RET
