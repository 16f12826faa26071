#include "textflag.h"

// func classifyAVX2(p *byte, nblocks int, out *block, t *kernelTables)
//
// For each 64-byte block of p, writes a block (see masks.go): one bit a
// byte for JSON whitespace, credential anchors, stop bytes ('"', '\\',
// bytes < 0x20) and stop bytes or bytes >= 0x80. Two 32-byte halves a
// block; the second half's bits are the high 32 of each mask, stored as
// the high half of its little-endian word (4 bytes on).
TEXT ·classifyAVX2(SB), NOSPLIT, $0-32
	MOVQ p+0(FP), SI
	MOVQ nblocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ t+24(FP), AX
	VMOVDQU 0(AX), Y8    // '"'
	VMOVDQU 32(AX), Y9   // '\\'
	VMOVDQU 64(AX), Y10  // 0x1f
	VMOVDQU 96(AX), Y11  // whitespace by low nibble
	VMOVDQU 128(AX), Y12 // anchor classes by low nibble
	VMOVDQU 160(AX), Y13 // anchor classes by high nibble
	VMOVDQU 192(AX), Y14 // 0x0f
	VPXOR   Y15, Y15, Y15
	TESTQ   CX, CX
	JEQ     done

loop:
	// First half: the low 32 bits of ws, anchor, stop and stopHigh.
	VMOVDQU   0(SI), Y0
	VPSHUFB   Y0, Y11, Y4
	VPCMPEQB  Y4, Y0, Y4
	VPMOVMSKB Y4, R8
	MOVL      R8, 0(DI)
	VPAND     Y0, Y14, Y5
	VPSRLW    $4, Y0, Y6
	VPAND     Y6, Y14, Y6
	VPSHUFB   Y5, Y12, Y5
	VPSHUFB   Y6, Y13, Y6
	VPAND     Y5, Y6, Y5
	VPCMPEQB  Y5, Y15, Y5
	VPMOVMSKB Y5, R9
	NOTL      R9
	MOVL      R9, 8(DI)
	VPCMPEQB  Y0, Y8, Y1
	VPCMPEQB  Y0, Y9, Y2
	VPMINUB   Y0, Y10, Y3
	VPCMPEQB  Y3, Y0, Y3
	VPOR      Y1, Y2, Y1
	VPOR      Y1, Y3, Y1
	VPMOVMSKB Y1, R10
	MOVL      R10, 16(DI)
	VPOR      Y1, Y0, Y1
	VPMOVMSKB Y1, R11
	MOVL      R11, 24(DI)

	// Second half: the high 32 bits.
	VMOVDQU   32(SI), Y0
	VPSHUFB   Y0, Y11, Y4
	VPCMPEQB  Y4, Y0, Y4
	VPMOVMSKB Y4, R8
	MOVL      R8, 4(DI)
	VPAND     Y0, Y14, Y5
	VPSRLW    $4, Y0, Y6
	VPAND     Y6, Y14, Y6
	VPSHUFB   Y5, Y12, Y5
	VPSHUFB   Y6, Y13, Y6
	VPAND     Y5, Y6, Y5
	VPCMPEQB  Y5, Y15, Y5
	VPMOVMSKB Y5, R9
	NOTL      R9
	MOVL      R9, 12(DI)
	VPCMPEQB  Y0, Y8, Y1
	VPCMPEQB  Y0, Y9, Y2
	VPMINUB   Y0, Y10, Y3
	VPCMPEQB  Y3, Y0, Y3
	VPOR      Y1, Y2, Y1
	VPOR      Y1, Y3, Y1
	VPMOVMSKB Y1, R10
	MOVL      R10, 20(DI)
	VPOR      Y1, Y0, Y1
	VPMOVMSKB Y1, R11
	MOVL      R11, 28(DI)

	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
