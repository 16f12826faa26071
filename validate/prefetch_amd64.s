#include "textflag.h"

// func prefetch(p uintptr)
//
// PREFETCHT0: brings p's cache line towards the core, without waiting for
// it and without a fault (any address will do).
TEXT ·prefetch(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	RET
