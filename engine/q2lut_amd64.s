//go:build amd64 && !purego

#include "textflag.h"

// The q2lut kernel in AVX2 (q2lutSumsGo and q2lutAdd are the
// specification): nb blocks of one group added to its 16 rows' float sums. A
// 32-byte load of codes holds two code bytes k, k+1 of all 16 rows, one
// per 128-bit lane, and a 32-byte load of tables holds the matching tables
// of both (buildQ2LUTTables lays them out so), so one VPSHUFB looks up 16
// rows x 2 columns x 2 code bytes. The tables are T = 64*H + L: the L
// lookups of one 16-column sub-block (4 per lane, at most 252) add up in
// bytes, the H lookups (8 once the lanes are added, at most 96 in
// magnitude) too; then they are widened to 16 int16 sub-block sums, one
// per row. Two sub-blocks j, j+1 are done at a time: their sums, scales
// and mins interleaved per row, one VPMADDWD gives each row's
// scale_j*sum_j + scale_j+1*sum_j+1 (or the mins times the two activation
// block sums) in int32.
//
// Registers: Y15 bytes 0x0f, Y14 words 0x000f; Y10/Y11 isum of rows 0-3,
// 8-11 / 4-7, 12-15 (the lanes of VPUNPCK*WD), Y12/Y9 summs likewise; Y8
// the first sub-block's sums; Y0-Y7 scratch.

// One pair of code bytes at off(DX) with its tables at toff(BX): the sum
// of the L lookups to l, of the H lookups to h.
#define PAIR(off, toff, l, h) \
	VMOVDQU off(DX), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VMOVDQU toff(BX), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VMOVDQU toff+64(BX), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y2, Y3, l \
	VMOVDQU toff+32(BX), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VMOVDQU toff+96(BX), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y2, Y3, h

// One sub-block (codes at off(DX), tables at toff(BX)): the 16 rows' int16
// sums to dst, L bytes zero-extended plus H bytes (both lanes added first)
// sign-extended times 64.
#define SUB(off, toff, dst) \
	PAIR(off, toff, Y4, Y5) \
	PAIR(off+32, toff+128, Y6, Y7) \
	VPADDB Y6, Y4, Y4 \
	VPADDB Y7, Y5, Y5 \
	VEXTRACTI128 $1, Y4, X6 \
	VPMOVZXBW X4, Y4 \
	VPMOVZXBW X6, Y6 \
	VPADDW Y6, Y4, Y4 \
	VEXTRACTI128 $1, Y5, X6 \
	VPADDB X6, X5, X5 \
	VPMOVSXBW X5, Y5 \
	VPSLLW $6, Y5, Y5 \
	VPADDW Y5, Y4, dst

// func q2lutBlocksAVX2(grp, tab, a *byte, nb int, acc *float32)
TEXT ·q2lutBlocksAVX2(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ tab+8(FP), BX
	MOVQ a+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ acc+32(FP), DI
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x000f000f, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

block:
	TESTQ CX, CX
	JEQ  done
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y12, Y12, Y12
	VPXOR Y9, Y9, Y9
	LEAQ 320(SI), DX  // codes of sub-block j
	LEAQ 64(SI), R10  // scales of sub-block j
	LEAQ 260(R8), R11 // bsums[j]
	MOVQ $8, R9

sub:
	SUB(0, 0, Y8)
	SUB(64, 256, Y4)

	// per row (sum_j, sum_j+1) with (scale_j, scale_j+1) and (min_j,
	// min_j+1) with (bsums[j], bsums[j+1])
	VPUNPCKLWD Y4, Y8, Y6
	VPUNPCKHWD Y4, Y8, Y7
	VPMOVZXBW (R10), Y0
	VPMOVZXBW 16(R10), Y1
	VPUNPCKLWD Y1, Y0, Y2
	VPUNPCKHWD Y1, Y0, Y3
	VPAND Y14, Y2, Y0
	VPMADDWD Y0, Y6, Y0
	VPADDD Y0, Y10, Y10
	VPAND Y14, Y3, Y1
	VPMADDWD Y1, Y7, Y1
	VPADDD Y1, Y11, Y11
	VPSRLW $4, Y2, Y2
	VPSRLW $4, Y3, Y3
	VPBROADCASTD (R11), Y5
	VPMADDWD Y5, Y2, Y2
	VPADDD Y2, Y12, Y12
	VPMADDWD Y5, Y3, Y3
	VPADDD Y3, Y9, Y9

	ADDQ $128, DX
	ADDQ $512, BX
	ADDQ $32, R10
	ADDQ $4, R11
	DECQ R9
	JNE  sub

	// rows 0-7 are the low lanes of Y10, Y11, rows 8-15 the high ones;
	// then ggml's float steps per row, acc += yd*d*isum - yd*dmin*summs,
	// each product rounded (no FMA), as q2_KAddScaled
	VPERM2I128 $0x20, Y11, Y10, Y0
	VPERM2I128 $0x31, Y11, Y10, Y1
	VPERM2I128 $0x20, Y9, Y12, Y2
	VPERM2I128 $0x31, Y9, Y12, Y3
	VCVTDQ2PS Y0, Y0
	VCVTDQ2PS Y1, Y1
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VBROADCASTSS (R8), Y4
	VCVTPH2PS (SI), Y5
	VMULPS Y5, Y4, Y5
	VMULPS Y5, Y0, Y0
	VCVTPH2PS 16(SI), Y6
	VMULPS Y6, Y4, Y6
	VMULPS Y6, Y1, Y1
	VCVTPH2PS 32(SI), Y7
	VMULPS Y7, Y4, Y7
	VMULPS Y7, Y2, Y2
	VCVTPH2PS 48(SI), Y8
	VMULPS Y8, Y4, Y8
	VMULPS Y8, Y3, Y3
	VSUBPS Y2, Y0, Y0
	VSUBPS Y3, Y1, Y1
	VADDPS (DI), Y0, Y0
	VADDPS 32(DI), Y1, Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)

	ADDQ $1344, SI
	ADDQ $292, R8
	DECQ CX
	JMP  block

done:
	VZEROUPPER
	RET

// The pair codes' factors (c&3, c>>2) for c = 0..15, as the unsigned bytes
// of VPMADDUBSW: word c of the product with the broadcast pair (a0, a1) is
// the table entry (c&3)*a0 + (c>>2)*a1.
DATA q2lutPairs<>+0(SB)/8, $0x0003000200010000
DATA q2lutPairs<>+8(SB)/8, $0x0103010201010100
DATA q2lutPairs<>+16(SB)/8, $0x0203020202010200
DATA q2lutPairs<>+24(SB)/8, $0x0303030203010300
GLOBL q2lutPairs<>(SB), RODATA|NOPTR, $32

// One table pair: T of the activation pairs at aoff(SI) (code byte k) and
// aoff+4(SI) (k+1), L and H bytes stored as buildQ2LUTTables lays them out
// at toff(DI) and toff+32(DI).
#define TABLES(aoff, toff) \
	VPBROADCASTW aoff(SI), Y0 \
	VPMADDUBSW Y0, Y15, Y0 \
	VPBROADCASTW aoff+4(SI), Y1 \
	VPMADDUBSW Y1, Y15, Y1 \
	VPAND Y14, Y0, Y2 \
	VPAND Y14, Y1, Y3 \
	VPACKUSWB Y3, Y2, Y2 \
	VPERMQ $0xd8, Y2, Y2 \
	VMOVDQU Y2, toff(DI) \
	VPSRAW $6, Y0, Y0 \
	VPSRAW $6, Y1, Y1 \
	VPACKSSWB Y1, Y0, Y0 \
	VPERMQ $0xd8, Y0, Y0 \
	VMOVDQU Y0, toff+32(DI)

// func q2lutTablesAVX2(tab, a *byte, nb int)
// buildQ2LUTTables in AVX2: VPMADDUBSW of the factors with each broadcast
// activation pair gives a table's 16 int16 entries exactly (at most
// 3*128*2, far from saturation).
TEXT ·q2lutTablesAVX2(SB), NOSPLIT, $0-24
	MOVQ tab+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ nb+16(FP), CX
	VMOVDQU q2lutPairs<>(SB), Y15
	MOVL $0x003f003f, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14

tblock:
	TESTQ CX, CX
	JEQ  tdone
	ADDQ $4, SI // the block's int8 activations
	MOVQ $32, R9

tpair:
	TABLES(0, 0)
	TABLES(2, 64)
	ADDQ $8, SI
	ADDQ $128, DI
	DECQ R9
	JNE  tpair
	ADDQ $32, SI // past the block sums
	DECQ CX
	JMP  tblock

tdone:
	VZEROUPPER
	RET
