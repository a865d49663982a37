//go:build amd64 && !purego

#include "textflag.h"

// The q2lut kernel in AVX2: nb blocks of one group added to its 16 rows'
// float lanes, the lanes and float steps of dotQ2_KAVX2 (ggml's AVX2
// q2_K_q8_K): its lane l holds, per block, the int32 sum of the code bytes
// k with k%8 == l, each times its sub-block's 4-bit scale (VPMADDUBSW and
// VPMADDWD by 4 columns), and the mins of sub-blocks 2l, 2l+1 times their
// activation sums; the lane takes -(y.d*dmin)*mins, then (y.d*d)*isum, as
// FMAs. Integer sums are exact in any order, so only those lanes, their
// FMAs and the final sum (q2lutGroupAVX2) must be the same.
//
// A 32-byte load of codes holds two code bytes k, k+1 (k even) of all 16
// rows, one per 128-bit lane, and a 32-byte load of tables holds the
// matching tables of both (buildQ2LUTTables lays them out so), so one
// VPSHUFB looks up 16 rows x 2 columns x 2 code bytes; with k%8 = 2c the
// two 128-bit lanes hold ggml's lanes 2c and 2c+1. The kernel therefore
// runs per block four classes c = 0..3 of code byte pairs k = 2c+8m, m =
// 0..7, both of sub-block 2m+c/2. Tables are T = 64*H + L: per pair the
// two L lookups (at most 126) and the two H lookups (at most 24 in
// magnitude) add up in bytes. Pairs m and m+1 (m even) are interleaved
// byte by byte, so that VPMADDUBSW with the interleaved scales of
// sub-blocks 2m+c/2 and 2m+2+c/2 gives each row's two products summed in
// int16 (L: at most 3780, added over the 4 pairs of pairs of a class; H:
// at most 720), and VPMADDWD of the L and H words interleaved with
// (1, 64) widens them to the rows' int32 sums L + 64*H, in row order.
//
// Registers in a class: Y15 bytes 0x0f; Y10/Y11 the L products of rows
// 0-7/8-15, Y8/Y7 the H products; Y0-Y6, Y12 scratch. 0(SP)..96(SP) hold
// the block's y.d*d of rows 4q..4q+3 (q = 0..3) in both 128-bit lanes,
// 128(SP)..224(SP) its y.d*dmin, so that one FMA takes lanes 2c and 2c+1
// of four rows; acc holds the lanes so, 128 bytes per class.

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

// One pair of code bytes at off(DX) with its tables at toff(R11): the sum
// of the L lookups to L, of the H lookups to H.
#define PAIR(off, toff, L, H) \
	VMOVDQU off(DX), Y0 \
	VPSRLW $4, Y0, Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VMOVDQU toff(R11), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VMOVDQU toff+64(R11), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y2, Y3, L \
	VMOVDQU toff+32(R11), Y2 \
	VPSHUFB Y0, Y2, Y2 \
	VMOVDQU toff+96(R11), Y3 \
	VPSHUFB Y1, Y3, Y3 \
	VPADDB Y2, Y3, H

// Pairs m and m+1 of a class (codes at DX and 128(DX), tables at R11 and
// 512(R11), scales of their sub-blocks at R10 and 32(R10)): the rows'
// lookups interleaved by pair, times the interleaved scales, added to
// Y10, Y11 (L) and Y8, Y7 (H).
#define PAIRS \
	PAIR(0, 0, Y4, Y5) \
	PAIR(128, 512, Y6, Y12) \
	VBROADCASTI128 (R10), Y0 \
	VBROADCASTI128 32(R10), Y1 \
	VPAND Y15, Y0, Y0 \
	VPAND Y15, Y1, Y1 \
	VPUNPCKLBW Y1, Y0, Y2 \
	VPUNPCKHBW Y1, Y0, Y3 \
	VPUNPCKLBW Y6, Y4, Y0 \
	VPMADDUBSW Y2, Y0, Y0 \
	VPADDW Y0, Y10, Y10 \
	VPUNPCKHBW Y6, Y4, Y1 \
	VPMADDUBSW Y3, Y1, Y1 \
	VPADDW Y1, Y11, Y11 \
	VPUNPCKLBW Y12, Y5, Y0 \
	VPMADDUBSW Y0, Y2, Y0 \
	VPADDW Y0, Y8, Y8 \
	VPUNPCKHBW Y12, Y5, Y1 \
	VPMADDUBSW Y1, Y3, Y1 \
	VPADDW Y1, Y7, Y7

// The factors y.d*x (x: 8 rows' f16 at off(SI); y.d broadcast in Y4),
// rounded once as ggml's VMULSS, stored as two four-row quarters, each in
// both 128-bit lanes, at soff(SP) and soff+32(SP).
#define FACTORS(off, soff) \
	VCVTPH2PS off(SI), Y5 \
	VMULPS Y5, Y4, Y5 \
	VPERM2F128 $0x00, Y5, Y5, Y6 \
	VMOVUPS Y6, soff(SP) \
	VPERM2F128 $0x11, Y5, Y5, Y6 \
	VMOVUPS Y6, soff+32(SP)

// Quarter q (rows 4q..4q+3) of a class's float steps: the mins words
// interleaved from lo and hi (sub-blocks 4c, 4c+1 in the low 128-bit lane,
// 4c+2, 4c+3 in the high) by unpck, times the activation sums in Y9, then
// acc -= (y.d*dmin)*mins and acc += (y.d*d)*isum (isum: the class's int32
// sums of these rows), each one FMA, as dotQ2_KAVX2.
#define QUARTER(isum, lo, hi, unpck, q) \
	unpck hi, lo, Y10 \
	VPMADDWD Y9, Y10, Y10 \
	VCVTDQ2PS Y10, Y10 \
	VMOVUPS (32*q)(R13), Y11 \
	VFNMADD231PS (128+32*q)(SP), Y10, Y11 \
	VCVTDQ2PS isum, isum \
	VFMADD231PS (32*q)(SP), isum, Y11 \
	VMOVUPS Y11, (32*q)(R13)

// Words (1, 64): VPMADDWD of interleaved L and H words gives L + 64*H.
DATA q2lutL64<>+0(SB)/8, $0x0040000100400001
DATA q2lutL64<>+8(SB)/8, $0x0040000100400001
DATA q2lutL64<>+16(SB)/8, $0x0040000100400001
DATA q2lutL64<>+24(SB)/8, $0x0040000100400001
GLOBL q2lutL64<>(SB), RODATA|NOPTR, $32

// func q2lutLanesAVX2(grp, tab, a *byte, nb int, acc *[128]float32)
TEXT ·q2lutLanesAVX2(SB), NOSPLIT, $256-40
	MOVQ grp+0(FP), SI
	MOVQ tab+8(FP), BX
	MOVQ a+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ acc+32(FP), DI
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15

block:
	TESTQ CX, CX
	JEQ  done
	PREFETCH2(SI)
	VBROADCASTSS (R8), Y4
	FACTORS(0, 0)
	FACTORS(16, 64)
	FACTORS(32, 128)
	FACTORS(48, 192)
	XORQ R12, R12 // class c
	MOVQ DI, R13  // its lanes in acc

class:
	MOVQ R12, AX
	SHLQ $5, AX
	LEAQ 320(SI)(AX*1), DX // codes of pair k = 2c
	SHLQ $2, AX
	LEAQ (BX)(AX*1), R11   // its tables
	MOVQ R12, AX
	SHRQ $1, AX
	SHLQ $4, AX
	LEAQ 64(SI)(AX*1), R10 // scales of sub-block c/2
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	VPXOR Y8, Y8, Y8
	VPXOR Y7, Y7, Y7
	MOVQ $4, R9

pairs:
	PAIRS
	ADDQ $256, DX
	ADDQ $1024, R11
	ADDQ $64, R10
	DECQ R9
	JNE  pairs

	// the rows' int32 sums L + 64*H, rows 0-3 (Y0), 4-7, 8-11, 12-15
	VPUNPCKLWD Y8, Y10, Y0
	VPMADDWD q2lutL64<>(SB), Y0, Y0
	VPUNPCKHWD Y8, Y10, Y1
	VPMADDWD q2lutL64<>(SB), Y1, Y1
	VPUNPCKLWD Y7, Y11, Y2
	VPMADDWD q2lutL64<>(SB), Y2, Y2
	VPUNPCKHWD Y7, Y11, Y3
	VPMADDWD q2lutL64<>(SB), Y3, Y3

	// the mins of sub-blocks 4c..4c+3 as words, [4c | 4c+2] and
	// [4c+1 | 4c+3], rows 0-7 (Y6, Y7) and 8-15 (Y4, Y5)
	MOVQ R12, AX
	SHLQ $6, AX
	LEAQ 64(SI)(AX*1), R10
	VMOVDQU (R10), X4
	VINSERTI128 $1, 32(R10), Y4, Y4
	VMOVDQU 16(R10), X5
	VINSERTI128 $1, 48(R10), Y5, Y5
	VPSRLW $4, Y4, Y4
	VPAND Y15, Y4, Y4
	VPSRLW $4, Y5, Y5
	VPAND Y15, Y5, Y5
	VPXOR Y9, Y9, Y9
	VPUNPCKLBW Y9, Y4, Y6
	VPUNPCKHBW Y9, Y4, Y4
	VPUNPCKLBW Y9, Y5, Y7
	VPUNPCKHBW Y9, Y5, Y5
	// activation sums (bsums[4c], bsums[4c+1]) | (bsums[4c+2], bsums[4c+3])
	MOVQ R12, AX
	SHLQ $3, AX
	VPBROADCASTD 260(R8)(AX*1), Y9
	VPBROADCASTD 264(R8)(AX*1), Y8
	VPERM2I128 $0x20, Y8, Y9, Y9
	QUARTER(Y0, Y6, Y7, VPUNPCKLWD, 0)
	QUARTER(Y1, Y6, Y7, VPUNPCKHWD, 1)
	QUARTER(Y2, Y4, Y5, VPUNPCKLWD, 2)
	QUARTER(Y3, Y4, Y5, VPUNPCKHWD, 3)

	ADDQ $128, R13
	INCQ R12
	CMPQ R12, $4
	JNE  class

	ADDQ $1344, SI
	ADDQ $4096, BX
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
