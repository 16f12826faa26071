#include "textflag.h"

// func routeMarksAVX2(p *byte, blocks int, out *uint64)
//
// For each 64-byte block of p, out gets a word with bit k set where byte k
// is 'q', '.' or '\\' (the bytes quickRoute looks at).
TEXT ·routeMarksAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ $0x7171717171717171, AX // 'q'
	VMOVQ AX, X1
	VPBROADCASTQ X1, Y1
	MOVQ $0x2e2e2e2e2e2e2e2e, AX // '.'
	VMOVQ AX, X2
	VPBROADCASTQ X2, Y2
	MOVQ $0x5c5c5c5c5c5c5c5c, AX // '\\'
	VMOVQ AX, X3
	VPBROADCASTQ X3, Y3
	TESTQ CX, CX
	JZ   done

loop:
	VMOVDQU   (SI), Y4
	VMOVDQU   32(SI), Y5
	VPCMPEQB  Y1, Y4, Y6
	VPCMPEQB  Y2, Y4, Y7
	VPOR      Y6, Y7, Y6
	VPCMPEQB  Y3, Y4, Y7
	VPOR      Y6, Y7, Y6
	VPMOVMSKB Y6, AX
	VPCMPEQB  Y1, Y5, Y8
	VPCMPEQB  Y2, Y5, Y9
	VPOR      Y8, Y9, Y8
	VPCMPEQB  Y3, Y5, Y9
	VPOR      Y8, Y9, Y8
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, (DI)
	ADDQ      $64, SI
	ADDQ      $8, DI
	DECQ      CX
	JNZ       loop

done:
	VZEROUPPER
	RET

// func structMarksAVX2(p *byte, blocks int, out *uint64)
//
// For each 64-byte block of p, out gets a word with bit k set where byte k
// is a quote, a backslash or a bracket ('{', '}', '[', ']': with bit 5
// set, '[' and ']' read as '{' and '}').
TEXT ·structMarksAVX2(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	MOVQ blocks+8(FP), CX
	MOVQ out+16(FP), DI
	MOVQ $0x2222222222222222, AX // '"'
	VMOVQ AX, X1
	VPBROADCASTQ X1, Y1
	MOVQ $0x5c5c5c5c5c5c5c5c, AX // '\\'
	VMOVQ AX, X2
	VPBROADCASTQ X2, Y2
	MOVQ $0x7b7b7b7b7b7b7b7b, AX // '{'
	VMOVQ AX, X3
	VPBROADCASTQ X3, Y3
	MOVQ $0x7d7d7d7d7d7d7d7d, AX // '}'
	VMOVQ AX, X10
	VPBROADCASTQ X10, Y10
	MOVQ $0x2020202020202020, AX // bit 5
	VMOVQ AX, X11
	VPBROADCASTQ X11, Y11
	TESTQ CX, CX
	JZ   sdone

sloop:
	VMOVDQU   (SI), Y4
	VPCMPEQB  Y1, Y4, Y6
	VPCMPEQB  Y2, Y4, Y7
	VPOR      Y6, Y7, Y6
	VPOR      Y11, Y4, Y5
	VPCMPEQB  Y3, Y5, Y7
	VPOR      Y6, Y7, Y6
	VPCMPEQB  Y10, Y5, Y7
	VPOR      Y6, Y7, Y6
	VPMOVMSKB Y6, AX
	VMOVDQU   32(SI), Y4
	VPCMPEQB  Y1, Y4, Y8
	VPCMPEQB  Y2, Y4, Y9
	VPOR      Y8, Y9, Y8
	VPOR      Y11, Y4, Y5
	VPCMPEQB  Y3, Y5, Y9
	VPOR      Y8, Y9, Y8
	VPCMPEQB  Y10, Y5, Y9
	VPOR      Y8, Y9, Y8
	VPMOVMSKB Y8, BX
	SHLQ      $32, BX
	ORQ       BX, AX
	MOVQ      AX, (DI)
	ADDQ      $64, SI
	ADDQ      $8, DI
	DECQ      CX
	JNZ       sloop

sdone:
	VZEROUPPER
	RET
