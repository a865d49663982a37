//go:build amd64 && !purego

#include "textflag.h"

// func nearestAVX2(nb *uint16, count int, kgrid *uint16, gmask int, dim int, bits int, e *[64]float32) int
// The neighbour search of lattice.nearest over 8 neighbours per step: each
// lane gathers its point's packed levels from kgrid, then adds the terms
// e[8*i+level_i] for i = 0..dim-1 in order (VPERMPS looks each up in row i
// of e), as the scalar loop does. Lanes past count and NaN sums become +Inf;
// a step's smallest sum, if below the best so far (MaxFloat32 at first),
// replaces it with its first lane. It returns the position in nb, or -1.
TEXT ·nearestAVX2(SB), NOSPLIT, $0-64
	MOVQ nb+0(FP), SI
	MOVQ kgrid+16(FP), R8
	MOVQ gmask+24(FP), DX
	VMOVD DX, X13
	VPBROADCASTD X13, Y13
	MOVQ bits+40(FP), R11
	MOVL $1, DX
	MOVQ R11, CX
	SHLL CX, DX
	DECL DX
	VMOVD DX, X12
	VPBROADCASTD X12, Y12
	MOVQ count+8(FP), CX
	MOVQ e+48(FP), R9
	VMOVDQU nearlanes<>(SB), Y11
	MOVL $0x7f800000, DX
	VMOVD DX, X10
	VPBROADCASTD X10, Y10
	MOVL $0x7f7fffff, DX
	VMOVD DX, X9
	MOVQ $-1, AX
	XORQ BX, BX
nearblock:
	CMPQ BX, CX
	JGE  neardone
	VPMOVZXWD (SI), Y1
	VPAND Y13, Y1, Y1
	VPCMPEQD Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPGATHERDD Y2, (R8)(Y1*2), Y3
	VXORPS Y0, Y0, Y0
	XORL DX, DX
	MOVQ R9, R12
	MOVQ dim+32(FP), R13
nearcoord:
	VMOVD DX, X4
	VPSRLD X4, Y3, Y4
	VPAND Y12, Y4, Y4
	VPERMPS (R12), Y4, Y5
	VADDPS Y5, Y0, Y0
	ADDL R11, DX
	ADDQ $32, R12
	DECQ R13
	JNZ  nearcoord
	// Lanes past the list and NaN sums never win.
	MOVQ CX, DX
	SUBQ BX, DX
	VMOVD DX, X6
	VPBROADCASTD X6, Y6
	VPCMPGTD Y11, Y6, Y7
	VCMPPS $0, Y0, Y0, Y8
	VPAND Y8, Y7, Y7
	VBLENDVPS Y7, Y0, Y10, Y0
	VEXTRACTF128 $1, Y0, X1
	VMINPS X1, X0, X1
	VSHUFPS $0x4e, X1, X1, X2
	VMINPS X2, X1, X1
	VSHUFPS $0xb1, X1, X1, X2
	VMINPS X2, X1, X1
	VUCOMISS X9, X1
	JCC  nearnext
	VMOVAPS X1, X9
	VBROADCASTSS X1, Y2
	VCMPPS $0, Y2, Y0, Y3
	VMOVMSKPS Y3, DX
	BSFL DX, DX
	LEAQ (BX)(DX*1), AX
nearnext:
	ADDQ $16, SI
	ADDQ $8, BX
	JMP  nearblock
neardone:
	VZEROUPPER
	MOVQ AX, ret+56(FP)
	RET

DATA nearlanes<>+0(SB)/4, $0
DATA nearlanes<>+4(SB)/4, $1
DATA nearlanes<>+8(SB)/4, $2
DATA nearlanes<>+12(SB)/4, $3
DATA nearlanes<>+16(SB)/4, $4
DATA nearlanes<>+20(SB)/4, $5
DATA nearlanes<>+24(SB)/4, $6
DATA nearlanes<>+28(SB)/4, $7
GLOBL nearlanes<>(SB), RODATA|NOPTR, $32
