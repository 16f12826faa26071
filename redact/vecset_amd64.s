#include "textflag.h"

// func setMask64(p *byte, t *byteSet) uint64
TEXT ·setMask64(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ t+8(FP), AX
	VMOVDQU 0(AX), Y1  // lo
	VMOVDQU 32(AX), Y2 // hi
	MOVL    $0x0f0f0f0f, CX
	MOVL    CX, X3
	VPBROADCASTD X3, Y3
	VPXOR   Y7, Y7, Y7

	VMOVDQU  0(SI), Y0
	VPAND    Y0, Y3, Y4
	VPSRLW   $4, Y0, Y5
	VPAND    Y5, Y3, Y5
	VPSHUFB  Y4, Y1, Y4
	VPSHUFB  Y5, Y2, Y5
	VPAND    Y4, Y5, Y4
	VPCMPEQB Y4, Y7, Y4
	VPMOVMSKB Y4, R8

	VMOVDQU  32(SI), Y0
	VPAND    Y0, Y3, Y4
	VPSRLW   $4, Y0, Y5
	VPAND    Y5, Y3, Y5
	VPSHUFB  Y4, Y1, Y4
	VPSHUFB  Y5, Y2, Y5
	VPAND    Y4, Y5, Y4
	VPCMPEQB Y4, Y7, Y4
	VPMOVMSKB Y4, R9

	SHLQ $32, R9
	ORQ  R9, R8
	NOTQ R8
	VZEROUPPER
	MOVQ R8, ret+16(FP)
	RET

// func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv0() (eax, edx uint32)
TEXT ·xgetbv0(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET
