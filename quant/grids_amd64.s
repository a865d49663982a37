//go:build amd64 && !purego

#include "textflag.h"

// func nearestAVX2(nb *uint16, count int, kgrid *uint16, gmask int, dim int, bits int, sv *[8]float32, xval, weight *float32) int
// lattice.nearest over 8 neighbours per step. First the table of terms
// e[8*i+l] = (weight[i]*d)*d with d = sv[l] - xval[i], one row of 8 levels
// per coordinate, on the stack. Then each lane gathers its point's packed
// levels from kgrid and adds the terms e[8*i+level_i] for i = 0..dim-1 in
// order (VPERMPS looks each up in row i), as the scalar loop does. Lanes
// past count and NaN sums become +Inf; a step's smallest sum, if below the
// best so far (MaxFloat32 at first), replaces it with its first lane. It
// returns the position in nb, or -1.
TEXT ·nearestAVX2(SB), NOSPLIT, $256-80
	MOVQ sv+48(FP), AX
	VMOVUPS (AX), Y4
	MOVQ xval+56(FP), AX
	MOVQ weight+64(FP), BX
	MOVQ dim+32(FP), CX
	MOVQ SP, R9
nearrow:
	VBROADCASTSS (AX), Y5
	VSUBPS Y5, Y4, Y5
	VBROADCASTSS (BX), Y6
	VMULPS Y5, Y6, Y6
	VMULPS Y5, Y6, Y6
	VMOVUPS Y6, (R9)
	ADDQ $4, AX
	ADDQ $4, BX
	ADDQ $32, R9
	DECQ CX
	JNZ  nearrow
	MOVQ SP, R9
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
	MOVQ AX, ret+72(FP)
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

// func iq1mSplitSumsAVX2(terms *[16][3][8]float32, sums *[153][8]float32)
// iq1mSplitSumsGo with the eight running sums in Y0 (prefix at level 0),
// Y1 (then level 1) and Y2 (then the level-2 tail). terms[j][l] is at
// (3*j+l)*32 bytes.
TEXT ·iq1mSplitSumsAVX2(SB), NOSPLIT, $0-16
	MOVQ terms+0(FP), SI
	MOVQ sums+8(FP), DI
	VXORPS Y0, Y0, Y0
	XORQ R8, R8 // i1
splitI1:
	CMPQ R8, $0
	JEQ  splitMid
	LEAQ -3(R8)(R8*2), AX // 3*(i1-1): terms[i1-1][0]
	SHLQ $5, AX
	VADDPS (SI)(AX*1), Y0, Y0
splitMid:
	VMOVAPS Y0, Y1
	MOVQ R8, R9 // i2
splitI2:
	CMPQ R9, R8
	JEQ  splitTail
	LEAQ -2(R9)(R9*2), AX // 3*(i2-1)+1: terms[i2-1][1]
	SHLQ $5, AX
	VADDPS (SI)(AX*1), Y1, Y1
splitTail:
	VMOVAPS Y1, Y2
	MOVQ R9, R10 // j
	LEAQ 2(R9)(R9*2), AX // 3*j+2: terms[j][2]
	SHLQ $5, AX
splitJ:
	CMPQ R10, $16
	JGE  splitStore
	VADDPS (SI)(AX*1), Y2, Y2
	ADDQ $96, AX
	INCQ R10
	JMP  splitJ
splitStore:
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	INCQ R9
	CMPQ R9, $16
	JLE  splitI2
	INCQ R8
	CMPQ R8, $16
	JLE  splitI1
	VZEROUPPER
	RET

// func iq1mNextBetterAVX2(sums *[153][8]float32, from int, bestScore float32) int
// The first candidate c >= from (split c/4: sumqx in lanes 0..3, sumq2 in
// lanes 4..7 of sums[c/4]) with sumq2 > 0 && sumqx*sumqx > bestScore*sumq2,
// or -1.
TEXT ·iq1mNextBetterAVX2(SB), NOSPLIT, $0-32
	MOVQ sums+0(FP), SI
	MOVQ from+8(FP), CX
	VBROADCASTSS bestScore+16(FP), X2
	VXORPS X3, X3, X3
	MOVQ CX, R8
	SHRQ $2, R8 // split
	ANDQ $3, CX // first combination of that split
	MOVL $15, DX
	SHLL CX, DX // lanes >= from%4
	MOVQ R8, AX
	SHLQ $5, AX
	ADDQ AX, SI
nbloop:
	CMPQ R8, $153
	JGE  nbnone
	VMOVUPS (SI), X0 // sumqx
	VMOVUPS 16(SI), X1 // sumq2
	VMULPS X0, X0, X0
	VMULPS X1, X2, X4
	VCMPPS $0x1e, X4, X0, X0 // sumqx^2 > bestScore*sumq2
	VCMPPS $0x1e, X3, X1, X1 // sumq2 > 0
	VANDPS X1, X0, X0
	VMOVMSKPS X0, AX
	ANDL DX, AX
	JNZ  nbfound
	MOVL $15, DX
	ADDQ $32, SI
	INCQ R8
	JMP  nbloop
nbfound:
	BSFL AX, AX
	LEAQ (AX)(R8*4), AX
	MOVQ AX, ret+24(FP)
	RET
nbnone:
	MOVQ $-1, ret+24(FP)
	RET
