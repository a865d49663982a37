//go:build amd64 && !purego

#include "textflag.h"

// The q2lut kernel in AVX2 (q2lutSumsGo and q2lutAdd are the
// specification): nb blocks of one group added to its 16 rows' float sums.
// A 32-byte load of codes holds two code bytes k, k+1 of all 16 rows, one
// per 128-bit lane, and a 32-byte load of tables holds the matching tables
// of both (buildQ2LUTTables lays them out so), so one VPSHUFB looks up 16
// rows x 2 columns x 2 code bytes. The tables are T = 64*H + L: per lane
// the 4 L lookups of one 16-column sub-block (at most 252) and its 4 H
// lookups (at most 48 in magnitude) add up in bytes. VPMADDUBSW with the
// sub-block's scales of only the even or only the odd rows multiplies
// them into int16 (L: at most 3780, accumulated over 8 sub-blocks; H: at
// most 720, over all 16), and VPMADDWD with (1, 0), (0, 1), (64, 0) and
// (0, 64) widens them to int32 at the end, so the only shuffles per
// sub-block are the lookups. The mins take two sub-blocks j, j+1 at a
// time: interleaved per row, one VPMADDWD with (bsums[j], bsums[j+1])
// gives two products in int32.
//
// Registers: Y15 bytes 0x0f, Y14 words 0x000f (even rows' scales), Y13
// words 0x0f00 (odd rows'); Y10/Y11 the L products of even/odd rows,
// Y8/Y7 the H products (int16, both lanes apart); Y12/Y9 summs of rows
// 0-3, 8-11 / 4-7, 12-15; Y0-Y6 scratch; 0(SP)..127(SP) the int32 L
// products of the first 8 sub-blocks.

// The 21 cache lines of the group's block two blocks ahead of r (two
// blocks past the group's end are the next group's, which runGroups
// computes next): without it the lookups wait for memory, since the 16
// rows of a block are read in two streams and the hardware prefetcher
// falls behind (measured 2.3x slower than Q2_K on a 19 MB expert).
#define PREFETCH2(r) \
	PREFETCHT0 2688(r) \
	PREFETCHT0 2752(r) \
	PREFETCHT0 2816(r) \
	PREFETCHT0 2880(r) \
	PREFETCHT0 2944(r) \
	PREFETCHT0 3008(r) \
	PREFETCHT0 3072(r) \
	PREFETCHT0 3136(r) \
	PREFETCHT0 3200(r) \
	PREFETCHT0 3264(r) \
	PREFETCHT0 3328(r) \
	PREFETCHT0 3392(r) \
	PREFETCHT0 3456(r) \
	PREFETCHT0 3520(r) \
	PREFETCHT0 3584(r) \
	PREFETCHT0 3648(r) \
	PREFETCHT0 3712(r) \
	PREFETCHT0 3776(r) \
	PREFETCHT0 3840(r) \
	PREFETCHT0 3904(r) \
	PREFETCHT0 3968(r)

// One pair of code bytes at off(DX) with its tables at toff(BX): the sum
// of the L lookups to Y4, of the H lookups to Y5.
#define PAIR(off, toff) \
	VMOVDQU off(DX), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VMOVDQU toff(BX), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VMOVDQU toff+64(BX), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y2, Y3, Y4 \
	VMOVDQU toff+32(BX), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VMOVDQU toff+96(BX), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y2, Y3, Y5

// PAIR adding to Y4 and Y5.
#define PAIRADD(off, toff) \
	VMOVDQU off(DX), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VMOVDQU toff(BX), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VPADDB Y2, Y4, Y4 \
	VMOVDQU toff+64(BX), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y3, Y4, Y4 \
	VMOVDQU toff+32(BX), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VPADDB Y2, Y5, Y5 \
	VMOVDQU toff+96(BX), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y3, Y5, Y5

// One sub-block (codes at off(DX), tables at toff(BX), scales at
// soff(R10)): its lookups times its scales added to Y10, Y11, Y8, Y7.
#define SUB(off, toff, soff) \
	PAIR(off, toff) \
	PAIRADD(off+32, toff+128) \
	VBROADCASTI128 soff(R10), Y0 \
	VPAND Y14, Y0, Y1 \
	VPAND Y13, Y0, Y0 \
	VPMADDUBSW Y1, Y4, Y2 \
	VPADDW Y2, Y10, Y10 \
	VPMADDUBSW Y0, Y4, Y2 \
	VPADDW Y2, Y11, Y11 \
	VPMADDUBSW Y5, Y1, Y2 \
	VPADDW Y2, Y8, Y8 \
	VPMADDUBSW Y5, Y0, Y2 \
	VPADDW Y2, Y7, Y7

// The mins of sub-blocks j, j+1 (at (R10), 16(R10)) times bsums[j],
// bsums[j+1] (at (R11)) added to Y12, Y9.
#define MINS \
	VPMOVZXBW (R10), Y0 \
	VPMOVZXBW 16(R10), Y1 \
	VPUNPCKLWD Y1, Y0, Y2 \
	VPUNPCKHWD Y1, Y0, Y3 \
	VPSRLW $4, Y2, Y2 \
	VPSRLW $4, Y3, Y3 \
	VPBROADCASTD (R11), Y6 \
	VPMADDWD Y6, Y2, Y2 \
	VPADDD Y2, Y12, Y12 \
	VPMADDWD Y6, Y3, Y3 \
	VPADDD Y3, Y9, Y9

DATA q2lutW10<>+0(SB)/8, $0x0000000100000001
DATA q2lutW10<>+8(SB)/8, $0x0000000100000001
DATA q2lutW10<>+16(SB)/8, $0x0000000100000001
DATA q2lutW10<>+24(SB)/8, $0x0000000100000001
GLOBL q2lutW10<>(SB), RODATA|NOPTR, $32
DATA q2lutW01<>+0(SB)/8, $0x0001000000010000
DATA q2lutW01<>+8(SB)/8, $0x0001000000010000
DATA q2lutW01<>+16(SB)/8, $0x0001000000010000
DATA q2lutW01<>+24(SB)/8, $0x0001000000010000
GLOBL q2lutW01<>(SB), RODATA|NOPTR, $32
DATA q2lutW40<>+0(SB)/8, $0x0000004000000040
DATA q2lutW40<>+8(SB)/8, $0x0000004000000040
DATA q2lutW40<>+16(SB)/8, $0x0000004000000040
DATA q2lutW40<>+24(SB)/8, $0x0000004000000040
GLOBL q2lutW40<>(SB), RODATA|NOPTR, $32
DATA q2lutW04<>+0(SB)/8, $0x0040000000400000
DATA q2lutW04<>+8(SB)/8, $0x0040000000400000
DATA q2lutW04<>+16(SB)/8, $0x0040000000400000
DATA q2lutW04<>+24(SB)/8, $0x0040000000400000
GLOBL q2lutW04<>(SB), RODATA|NOPTR, $32

// func q2lutBlocksAVX2(grp, tab, a *byte, nb int, acc *float32)
TEXT ·q2lutBlocksAVX2(SB), NOSPLIT, $128-40
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
	MOVL $0x0f000f00, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13

block:
	TESTQ CX, CX
	JEQ  done
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y8, Y8, Y8
	VPXOR Y7, Y7, Y7
	VPXOR Y12, Y12, Y12
	VPXOR Y9, Y9, Y9
	LEAQ 320(SI), DX  // codes of sub-block j
	LEAQ 64(SI), R10  // scales of sub-block j
	LEAQ 260(R8), R11 // bsums[j]
	MOVQ $2, R12
	PREFETCH2(SI)

half:
	MOVQ $4, R9

pairs:
	SUB(0, 0, 0)
	SUB(64, 256, 16)
	MINS
	ADDQ $128, DX
	ADDQ $512, BX
	ADDQ $32, R10
	ADDQ $4, R11
	DECQ R9
	JNE  pairs

	// the L products of 8 sub-blocks to int32: dword i of each lane is
	// row 4i (Y0), 4i+2 (Y1), 4i+1 (Y2), 4i+3 (Y3)
	VPMADDWD q2lutW10<>(SB), Y10, Y0
	VPMADDWD q2lutW01<>(SB), Y10, Y1
	VPMADDWD q2lutW10<>(SB), Y11, Y2
	VPMADDWD q2lutW01<>(SB), Y11, Y3
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	DECQ R12
	JEQ  last
	VMOVDQU Y0, 0(SP)
	VMOVDQU Y1, 32(SP)
	VMOVDQU Y2, 64(SP)
	VMOVDQU Y3, 96(SP)
	JMP  half

last:
	VPADDD 0(SP), Y0, Y0
	VPADDD 32(SP), Y1, Y1
	VPADDD 64(SP), Y2, Y2
	VPADDD 96(SP), Y3, Y3
	// plus 64 times the H products
	VPMADDWD q2lutW40<>(SB), Y8, Y4
	VPADDD Y4, Y0, Y0
	VPMADDWD q2lutW04<>(SB), Y8, Y4
	VPADDD Y4, Y1, Y1
	VPMADDWD q2lutW40<>(SB), Y7, Y4
	VPADDD Y4, Y2, Y2
	VPMADDWD q2lutW04<>(SB), Y7, Y4
	VPADDD Y4, Y3, Y3
	// the two lanes (code bytes k and k+1) added, rows put in order
	VEXTRACTI128 $1, Y0, X4
	VPADDD X4, X0, X0
	VEXTRACTI128 $1, Y1, X4
	VPADDD X4, X1, X1
	VEXTRACTI128 $1, Y2, X4
	VPADDD X4, X2, X2
	VEXTRACTI128 $1, Y3, X4
	VPADDD X4, X3, X3
	VPUNPCKLDQ X2, X0, X4 // rows 0 1 4 5
	VPUNPCKHDQ X2, X0, X5 // rows 8 9 12 13
	VPUNPCKLDQ X3, X1, X6 // rows 2 3 6 7
	VPUNPCKHDQ X3, X1, X7 // rows 10 11 14 15
	VPUNPCKLQDQ X6, X4, X0
	VPUNPCKHQDQ X6, X4, X1
	VPUNPCKLQDQ X7, X5, X2
	VPUNPCKHQDQ X7, X5, X3
	VINSERTI128 $1, X1, Y0, Y0 // isum of rows 0-7
	VINSERTI128 $1, X3, Y2, Y1 // rows 8-15
	VPERM2I128 $0x20, Y9, Y12, Y2 // summs of rows 0-7
	VPERM2I128 $0x31, Y9, Y12, Y3 // rows 8-15

	// ggml's float steps per row, acc += yd*d*isum - yd*dmin*summs,
	// each product rounded (no FMA), as q2_KAddScaled
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
