//go:build amd64 && !purego

#include "textflag.h"

// The Q4_0 group kernels (repack.go): 8 interleaved rows against one q8_0
// activation row, one float lane per row. Per block: the 8 weight scales
// (f16, converted together) times the activation scale (aux), the 8 rows'
// integer dots (unsigned nibbles times the activations broadcast 4 at a
// time, plus aux's -8 * sum), then acc += float(isum) * scale, multiply
// and add rounded apart, exactly as gemvQ4_0Go.

// Common per-block start: Y8 = 8 weight scales * activation scale.
#define GQ4_SCALES \
	VCVTPH2PS (SI), Y8 \
	VBROADCASTSS (BX), Y9 \
	VMULPS Y9, Y8, Y8

// Common per-block end: int32 row sums in Y1 plus the correction, then
// into the float accumulator Y0; next block.
#define GQ4_ACC \
	VPBROADCASTD 4(BX), Y2 \
	VPADDD Y2, Y1, Y1 \
	VCVTDQ2PS Y1, Y1 \
	VMULPS Y8, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	ADDQ $144, SI \
	ADDQ $34, DI \
	ADDQ $8, BX

// Pair p of the AVX2 kernel (vector p at w, chunks p and p+4 of the
// activations at lo and hi): vector p's low nibbles (chunk p) and high
// nibbles (chunk p+4) times their activations, the int16 pair sums of both
// added into acc (at most 8 * 2 * 15 * 127 = 30480 over the four pairs:
// no saturation).
#define GQ4_PAIR(w, lo, hi, acc) \
	VMOVDQU w(SI), Y4 \
	VPSRLW $4, Y4, Y5 \
	VPAND Y15, Y4, Y4 \
	VPAND Y15, Y5, Y5 \
	VPBROADCASTD lo(DI), Y6 \
	VPBROADCASTD hi(DI), Y7 \
	VPMADDUBSW Y6, Y4, Y4 \
	VPMADDUBSW Y7, Y5, Y5 \
	VPADDW Y5, Y4, Y4 \
	VPADDW Y4, acc, acc

// func gemvQ4_0x8AVX2(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ4_0x8AVX2(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	TESTQ CX, CX
	JEQ  gq4done
gq4loop:
	GQ4_SCALES
	VPXOR Y1, Y1, Y1
	VPXOR Y3, Y3, Y3
	GQ4_PAIR(16, 2, 18, Y1)
	GQ4_PAIR(48, 6, 22, Y3)
	GQ4_PAIR(80, 10, 26, Y1)
	GQ4_PAIR(112, 14, 30, Y3)
	VPADDW Y3, Y1, Y1
	VPMADDWD Y14, Y1, Y1
	GQ4_ACC
	DECQ CX
	JNE  gq4loop
gq4done:
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// Pair p of the VNNI kernel: VPDPBUSD with the 4 activations broadcast
// from memory, into two int32 accumulators (two dependency chains).
#define GQ4_PAIRV(w, lo, hi) \
	VMOVDQU w(SI), Y4 \
	VPSRLW $4, Y4, Y5 \
	VPAND Y15, Y4, Y4 \
	VPAND Y15, Y5, Y5 \
	VPDPBUSD.BCST lo(DI), Y4, Y1 \
	VPDPBUSD.BCST hi(DI), Y5, Y3

// func gemvQ4_0x8VNNI(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ4_0x8VNNI(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	TESTQ CX, CX
	JEQ  gq4vdone
gq4vloop:
	GQ4_SCALES
	VPXOR Y1, Y1, Y1
	VPXOR Y3, Y3, Y3
	GQ4_PAIRV(16, 2, 18)
	GQ4_PAIRV(48, 6, 22)
	GQ4_PAIRV(80, 10, 26)
	GQ4_PAIRV(112, 14, 30)
	VPADDD Y3, Y1, Y1
	GQ4_ACC
	DECQ CX
	JNE  gq4vloop
gq4vdone:
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// The Q4_K group kernels (repack.go's Q4_K layout): 8 interleaved rows
// against one q8_K activation row, a float lane per row, exactly as
// gemvQ4_KGo. Registers: SI the group's super-block, DI the activation
// block, BX its aux values (scale, group-sum pairs); Y0 and Y1 the float
// accumulators of the scaled sums and of the mins, Y12 and Y11 their
// int32 sums in a super-block, Y15 the 0x0f mask.

// Start of a super-block: Y8 = d * d_a and Y10 = dmin * d_a per row, and
// the mins' sum in Y11 (mins as int16 pairs times the group-sum pairs).
#define GQ4K_START \
	VCVTPH2PS (SI), Y8 \
	VBROADCASTSS (BX), Y9 \
	VMULPS Y9, Y8, Y8 \
	VCVTPH2PS 16(SI), Y10 \
	VMULPS Y9, Y10, Y10 \
	VPMOVZXBW 96(SI), Y2 \
	VPBROADCASTD 4(BX), Y3 \
	VPMADDWD Y3, Y2, Y11 \
	VPMOVZXBW 112(SI), Y2 \
	VPBROADCASTD 8(BX), Y3 \
	VPMADDWD Y3, Y2, Y2 \
	VPADDD Y2, Y11, Y11 \
	VPMOVZXBW 128(SI), Y2 \
	VPBROADCASTD 12(BX), Y3 \
	VPMADDWD Y3, Y2, Y2 \
	VPADDD Y2, Y11, Y11 \
	VPMOVZXBW 144(SI), Y2 \
	VPBROADCASTD 16(BX), Y3 \
	VPMADDWD Y3, Y2, Y2 \
	VPADDD Y2, Y11, Y11

// End of a super-block: both sums into the float accumulators; next.
#define GQ4K_END \
	VCVTDQ2PS Y12, Y12 \
	VMULPS Y8, Y12, Y12 \
	VADDPS Y12, Y0, Y0 \
	VCVTDQ2PS Y11, Y11 \
	VMULPS Y10, Y11, Y11 \
	VADDPS Y11, Y1, Y1 \
	ADDQ $1184, SI \
	ADDQ $292, DI \
	ADDQ $32, BX

// Vector p of part j (AVX2): its low nibbles (group 2j) and high nibbles
// (group 2j+1) times their 4 activations, broadcast, as int16 pair sums
// added into Y4 and Y5 (at most 8 * 2 * 15 * 127 = 30480: no saturation).
#define GQ4K_P(j, p) \
	VMOVDQU 160+256*j+32*p(SI), Y6 \
	VPSRLW $4, Y6, Y7 \
	VPAND Y15, Y6, Y6 \
	VPAND Y15, Y7, Y7 \
	VPBROADCASTD 4+64*j+4*p(DI), Y2 \
	VPBROADCASTD 36+64*j+4*p(DI), Y3 \
	VPMADDUBSW Y2, Y6, Y6 \
	VPMADDUBSW Y3, Y7, Y7 \
	VPADDW Y6, Y4, Y4 \
	VPADDW Y7, Y5, Y5

// Part j (AVX2): groups 2j and 2j+1, their dots to int32, times their
// scales (a byte per row), into Y12.
#define GQ4K_J(j) \
	VPXOR Y4, Y4, Y4 \
	VPXOR Y5, Y5, Y5 \
	GQ4K_P(j, 0) \
	GQ4K_P(j, 1) \
	GQ4K_P(j, 2) \
	GQ4K_P(j, 3) \
	GQ4K_P(j, 4) \
	GQ4K_P(j, 5) \
	GQ4K_P(j, 6) \
	GQ4K_P(j, 7) \
	VPMADDWD Y14, Y4, Y4 \
	VPMADDWD Y14, Y5, Y5 \
	VPMOVZXBD 32+16*j(SI), Y6 \
	VPMOVZXBD 40+16*j(SI), Y7 \
	VPMULLD Y6, Y4, Y4 \
	VPMULLD Y7, Y5, Y5 \
	VPADDD Y4, Y12, Y12 \
	VPADDD Y5, Y12, Y12

// func gemvQ4_Kx8AVX2(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ4_Kx8AVX2(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	TESTQ CX, CX
	JEQ  gq4kdone
gq4kloop:
	GQ4K_START
	VPXOR Y12, Y12, Y12
	GQ4K_J(0)
	GQ4K_J(1)
	GQ4K_J(2)
	GQ4K_J(3)
	GQ4K_END
	DECQ CX
	JNE  gq4kloop
gq4kdone:
	VSUBPS Y1, Y0, Y0
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// Vector p of part j (VNNI): VPDPBUSD of the nibbles with the 4
// activations broadcast from memory, into the int32 dots lo and hi.
#define GQ4KV_P(j, p, lo, hi) \
	VMOVDQU 160+256*j+32*p(SI), Y6 \
	VPSRLW $4, Y6, Y7 \
	VPAND Y15, Y6, Y6 \
	VPAND Y15, Y7, Y7 \
	VPDPBUSD.BCST 4+64*j+4*p(DI), Y6, lo \
	VPDPBUSD.BCST 36+64*j+4*p(DI), Y7, hi

// Part j (VNNI), its own accumulators (EVEX registers) so the four parts'
// chains overlap.
#define GQ4KV_J(j, lo, hi) \
	VPXORD lo, lo, lo \
	VPXORD hi, hi, hi \
	GQ4KV_P(j, 0, lo, hi) \
	GQ4KV_P(j, 1, lo, hi) \
	GQ4KV_P(j, 2, lo, hi) \
	GQ4KV_P(j, 3, lo, hi) \
	GQ4KV_P(j, 4, lo, hi) \
	GQ4KV_P(j, 5, lo, hi) \
	GQ4KV_P(j, 6, lo, hi) \
	GQ4KV_P(j, 7, lo, hi) \
	VPMOVZXBD 32+16*j(SI), Y6 \
	VPMOVZXBD 40+16*j(SI), Y7 \
	VPMULLD Y6, lo, lo \
	VPMULLD Y7, hi, hi \
	VPADDD lo, Y12, Y12 \
	VPADDD hi, Y12, Y12

// func gemvQ4_Kx8VNNI(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ4_Kx8VNNI(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	TESTQ CX, CX
	JEQ  gq4kvdone
gq4kvloop:
	GQ4K_START
	VPXOR Y12, Y12, Y12
	GQ4KV_J(0, Y16, Y17)
	GQ4KV_J(1, Y18, Y19)
	GQ4KV_J(2, Y20, Y21)
	GQ4KV_J(3, Y22, Y23)
	GQ4K_END
	DECQ CX
	JNE  gq4kvloop
gq4kvdone:
	VSUBPS Y1, Y0, Y0
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// The Q6_K group kernels (repack.go's Q6_K layout), exactly as
// gemvQ6_KGo: SI the group's super-block, DI the q8_K activation block, BX
// its aux values (scale, 32 times each 16-value group sum); Y0 the float
// accumulator, Y12 a super-block's int32 sum; Y15 holds 0x0f, Y14 0x30.
// GQ6_V(t) leaves in Y5 the 6-bit values t of the ql vectors in Y2 (s=0)
// and Y3 (s=1) and the qh vector Y4 (t = 0-3: low nibbles of s=0, s=1,
// high nibbles of s=0, s=1, with qh bits 2t..2t+1 as bits 4-5), using Y6.
#define GQ6_V0 \
	VPAND Y15, Y2, Y5 \
	VPSLLW $4, Y4, Y6 \
	VPAND Y14, Y6, Y6 \
	VPOR Y6, Y5, Y5
#define GQ6_V1 \
	VPAND Y15, Y3, Y5 \
	VPSLLW $2, Y4, Y6 \
	VPAND Y14, Y6, Y6 \
	VPOR Y6, Y5, Y5
#define GQ6_V2 \
	VPSRLW $4, Y2, Y5 \
	VPAND Y15, Y5, Y5 \
	VPAND Y14, Y4, Y6 \
	VPOR Y6, Y5, Y5
#define GQ6_V3 \
	VPSRLW $4, Y3, Y5 \
	VPAND Y15, Y5, Y5 \
	VPSRLW $2, Y4, Y6 \
	VPAND Y14, Y6, Y6 \
	VPOR Y6, Y5, Y5

// GQ6_LOAD(j, p) loads vector p of half j: ql s=0 and s=1, qh.
#define GQ6_LOAD(j, p) \
	VMOVDQU 144+512*j+32*p(SI), Y2 \
	VMOVDQU 400+512*j+32*p(SI), Y3 \
	VMOVDQU 1168+256*j+32*p(SI), Y4

// GQ6_G(g, acc): group g's int32 dot in acc less 32 times its activation
// sum, times its scale (signed byte per row), into Y12.
#define GQ6_G(g, acc) \
	VPBROADCASTD 4+4*g(BX), Y5 \
	VPSUBD Y5, acc, acc \
	VPMOVSXBD 16+8*g(SI), Y6 \
	VPMULLD Y6, acc, acc \
	VPADDD acc, Y12, Y12

// Super-block end: Y12 times d * d_a into Y0; next.
#define GQ6_END \
	VCVTPH2PS (SI), Y8 \
	VBROADCASTSS (BX), Y9 \
	VMULPS Y9, Y8, Y8 \
	VCVTDQ2PS Y12, Y12 \
	VMULPS Y8, Y12, Y12 \
	VADDPS Y12, Y0, Y0 \
	ADDQ $1680, SI \
	ADDQ $292, DI \
	ADDQ $68, BX

// AVX2 (GQ6_Tt for t = 0-3): values t of vector (j, p) times their 4 activations, broadcast,
// to int32 pair sums added into acc (Y13 holds int16 ones).
#define GQ6_T0(j, p, acc) \
	GQ6_V0 \
	VPBROADCASTD 4+128*j+0+4*p(DI), Y7 \
	VPMADDUBSW Y7, Y5, Y5 \
	VPMADDWD Y13, Y5, Y5 \
	VPADDD Y5, acc, acc
#define GQ6_T1(j, p, acc) \
	GQ6_V1 \
	VPBROADCASTD 4+128*j+32+4*p(DI), Y7 \
	VPMADDUBSW Y7, Y5, Y5 \
	VPMADDWD Y13, Y5, Y5 \
	VPADDD Y5, acc, acc
#define GQ6_T2(j, p, acc) \
	GQ6_V2 \
	VPBROADCASTD 4+128*j+64+4*p(DI), Y7 \
	VPMADDUBSW Y7, Y5, Y5 \
	VPMADDWD Y13, Y5, Y5 \
	VPADDD Y5, acc, acc
#define GQ6_T3(j, p, acc) \
	GQ6_V3 \
	VPBROADCASTD 4+128*j+96+4*p(DI), Y7 \
	VPMADDUBSW Y7, Y5, Y5 \
	VPMADDWD Y13, Y5, Y5 \
	VPADDD Y5, acc, acc

// func gemvQ6_Kx8AVX2(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ6_Kx8AVX2(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x00010001, AX
	VMOVD AX, X13
	VPBROADCASTD X13, Y13
	TESTQ CX, CX
	JEQ  gq6done
gq6loop:
	VPXOR Y12, Y12, Y12
	VPXOR Y1, Y1, Y1
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	GQ6_LOAD(0, 0)
	GQ6_T0(0, 0, Y1)
	GQ6_T1(0, 0, Y8)
	GQ6_T2(0, 0, Y9)
	GQ6_T3(0, 0, Y10)
	GQ6_LOAD(0, 1)
	GQ6_T0(0, 1, Y1)
	GQ6_T1(0, 1, Y8)
	GQ6_T2(0, 1, Y9)
	GQ6_T3(0, 1, Y10)
	GQ6_LOAD(0, 2)
	GQ6_T0(0, 2, Y1)
	GQ6_T1(0, 2, Y8)
	GQ6_T2(0, 2, Y9)
	GQ6_T3(0, 2, Y10)
	GQ6_LOAD(0, 3)
	GQ6_T0(0, 3, Y1)
	GQ6_T1(0, 3, Y8)
	GQ6_T2(0, 3, Y9)
	GQ6_T3(0, 3, Y10)
	GQ6_G(0, Y1)
	GQ6_G(2, Y8)
	GQ6_G(4, Y9)
	GQ6_G(6, Y10)
	VPXOR Y1, Y1, Y1
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	GQ6_LOAD(0, 4)
	GQ6_T0(0, 4, Y1)
	GQ6_T1(0, 4, Y8)
	GQ6_T2(0, 4, Y9)
	GQ6_T3(0, 4, Y10)
	GQ6_LOAD(0, 5)
	GQ6_T0(0, 5, Y1)
	GQ6_T1(0, 5, Y8)
	GQ6_T2(0, 5, Y9)
	GQ6_T3(0, 5, Y10)
	GQ6_LOAD(0, 6)
	GQ6_T0(0, 6, Y1)
	GQ6_T1(0, 6, Y8)
	GQ6_T2(0, 6, Y9)
	GQ6_T3(0, 6, Y10)
	GQ6_LOAD(0, 7)
	GQ6_T0(0, 7, Y1)
	GQ6_T1(0, 7, Y8)
	GQ6_T2(0, 7, Y9)
	GQ6_T3(0, 7, Y10)
	GQ6_G(1, Y1)
	GQ6_G(3, Y8)
	GQ6_G(5, Y9)
	GQ6_G(7, Y10)
	VPXOR Y1, Y1, Y1
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	GQ6_LOAD(1, 0)
	GQ6_T0(1, 0, Y1)
	GQ6_T1(1, 0, Y8)
	GQ6_T2(1, 0, Y9)
	GQ6_T3(1, 0, Y10)
	GQ6_LOAD(1, 1)
	GQ6_T0(1, 1, Y1)
	GQ6_T1(1, 1, Y8)
	GQ6_T2(1, 1, Y9)
	GQ6_T3(1, 1, Y10)
	GQ6_LOAD(1, 2)
	GQ6_T0(1, 2, Y1)
	GQ6_T1(1, 2, Y8)
	GQ6_T2(1, 2, Y9)
	GQ6_T3(1, 2, Y10)
	GQ6_LOAD(1, 3)
	GQ6_T0(1, 3, Y1)
	GQ6_T1(1, 3, Y8)
	GQ6_T2(1, 3, Y9)
	GQ6_T3(1, 3, Y10)
	GQ6_G(8, Y1)
	GQ6_G(10, Y8)
	GQ6_G(12, Y9)
	GQ6_G(14, Y10)
	VPXOR Y1, Y1, Y1
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	GQ6_LOAD(1, 4)
	GQ6_T0(1, 4, Y1)
	GQ6_T1(1, 4, Y8)
	GQ6_T2(1, 4, Y9)
	GQ6_T3(1, 4, Y10)
	GQ6_LOAD(1, 5)
	GQ6_T0(1, 5, Y1)
	GQ6_T1(1, 5, Y8)
	GQ6_T2(1, 5, Y9)
	GQ6_T3(1, 5, Y10)
	GQ6_LOAD(1, 6)
	GQ6_T0(1, 6, Y1)
	GQ6_T1(1, 6, Y8)
	GQ6_T2(1, 6, Y9)
	GQ6_T3(1, 6, Y10)
	GQ6_LOAD(1, 7)
	GQ6_T0(1, 7, Y1)
	GQ6_T1(1, 7, Y8)
	GQ6_T2(1, 7, Y9)
	GQ6_T3(1, 7, Y10)
	GQ6_G(9, Y1)
	GQ6_G(11, Y8)
	GQ6_G(13, Y9)
	GQ6_G(15, Y10)
	GQ6_END
	DECQ CX
	JNE  gq6loop
gq6done:
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// VNNI (GQ6V_Tt): values t of vector (j, p) times their 4 activations broadcast
// from memory, VPDPBUSD into acc.
#define GQ6V_T0(j, p, acc) \
	GQ6_V0 \
	VPDPBUSD.BCST 4+128*j+0+4*p(DI), Y5, acc
#define GQ6V_T1(j, p, acc) \
	GQ6_V1 \
	VPDPBUSD.BCST 4+128*j+32+4*p(DI), Y5, acc
#define GQ6V_T2(j, p, acc) \
	GQ6_V2 \
	VPDPBUSD.BCST 4+128*j+64+4*p(DI), Y5, acc
#define GQ6V_T3(j, p, acc) \
	GQ6_V3 \
	VPDPBUSD.BCST 4+128*j+96+4*p(DI), Y5, acc

// func gemvQ6_Kx8VNNI(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ6_Kx8VNNI(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	MOVL $0x30303030, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	TESTQ CX, CX
	JEQ  gq6vdone
gq6vloop:
	VPXOR Y12, Y12, Y12
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23
	GQ6_LOAD(0, 0)
	GQ6V_T0(0, 0, Y16)
	GQ6V_T1(0, 0, Y17)
	GQ6V_T2(0, 0, Y18)
	GQ6V_T3(0, 0, Y19)
	GQ6_LOAD(0, 1)
	GQ6V_T0(0, 1, Y16)
	GQ6V_T1(0, 1, Y17)
	GQ6V_T2(0, 1, Y18)
	GQ6V_T3(0, 1, Y19)
	GQ6_LOAD(0, 2)
	GQ6V_T0(0, 2, Y16)
	GQ6V_T1(0, 2, Y17)
	GQ6V_T2(0, 2, Y18)
	GQ6V_T3(0, 2, Y19)
	GQ6_LOAD(0, 3)
	GQ6V_T0(0, 3, Y16)
	GQ6V_T1(0, 3, Y17)
	GQ6V_T2(0, 3, Y18)
	GQ6V_T3(0, 3, Y19)
	GQ6_LOAD(0, 4)
	GQ6V_T0(0, 4, Y20)
	GQ6V_T1(0, 4, Y21)
	GQ6V_T2(0, 4, Y22)
	GQ6V_T3(0, 4, Y23)
	GQ6_LOAD(0, 5)
	GQ6V_T0(0, 5, Y20)
	GQ6V_T1(0, 5, Y21)
	GQ6V_T2(0, 5, Y22)
	GQ6V_T3(0, 5, Y23)
	GQ6_LOAD(0, 6)
	GQ6V_T0(0, 6, Y20)
	GQ6V_T1(0, 6, Y21)
	GQ6V_T2(0, 6, Y22)
	GQ6V_T3(0, 6, Y23)
	GQ6_LOAD(0, 7)
	GQ6V_T0(0, 7, Y20)
	GQ6V_T1(0, 7, Y21)
	GQ6V_T2(0, 7, Y22)
	GQ6V_T3(0, 7, Y23)
	GQ6_G(0, Y16)
	GQ6_G(2, Y17)
	GQ6_G(4, Y18)
	GQ6_G(6, Y19)
	GQ6_G(1, Y20)
	GQ6_G(3, Y21)
	GQ6_G(5, Y22)
	GQ6_G(7, Y23)
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23
	GQ6_LOAD(1, 0)
	GQ6V_T0(1, 0, Y16)
	GQ6V_T1(1, 0, Y17)
	GQ6V_T2(1, 0, Y18)
	GQ6V_T3(1, 0, Y19)
	GQ6_LOAD(1, 1)
	GQ6V_T0(1, 1, Y16)
	GQ6V_T1(1, 1, Y17)
	GQ6V_T2(1, 1, Y18)
	GQ6V_T3(1, 1, Y19)
	GQ6_LOAD(1, 2)
	GQ6V_T0(1, 2, Y16)
	GQ6V_T1(1, 2, Y17)
	GQ6V_T2(1, 2, Y18)
	GQ6V_T3(1, 2, Y19)
	GQ6_LOAD(1, 3)
	GQ6V_T0(1, 3, Y16)
	GQ6V_T1(1, 3, Y17)
	GQ6V_T2(1, 3, Y18)
	GQ6V_T3(1, 3, Y19)
	GQ6_LOAD(1, 4)
	GQ6V_T0(1, 4, Y20)
	GQ6V_T1(1, 4, Y21)
	GQ6V_T2(1, 4, Y22)
	GQ6V_T3(1, 4, Y23)
	GQ6_LOAD(1, 5)
	GQ6V_T0(1, 5, Y20)
	GQ6V_T1(1, 5, Y21)
	GQ6V_T2(1, 5, Y22)
	GQ6V_T3(1, 5, Y23)
	GQ6_LOAD(1, 6)
	GQ6V_T0(1, 6, Y20)
	GQ6V_T1(1, 6, Y21)
	GQ6V_T2(1, 6, Y22)
	GQ6V_T3(1, 6, Y23)
	GQ6_LOAD(1, 7)
	GQ6V_T0(1, 7, Y20)
	GQ6V_T1(1, 7, Y21)
	GQ6V_T2(1, 7, Y22)
	GQ6V_T3(1, 7, Y23)
	GQ6_G(8, Y16)
	GQ6_G(10, Y17)
	GQ6_G(12, Y18)
	GQ6_G(14, Y19)
	GQ6_G(9, Y20)
	GQ6_G(11, Y21)
	GQ6_G(13, Y22)
	GQ6_G(15, Y23)
	GQ6_END
	DECQ CX
	JNE  gq6vloop
gq6vdone:
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// The Q8_0 group kernels (repack.go's Q8_0 layout), exactly as gemvQ8_0Go:
// per vector c the weights' absolute values times the 4 activations
// broadcast and given the weights' signs (at most 2 * 128 * 127 = 32512 in
// an int16 pair: no saturation). SI the group block, DI the activation
// block, BX its scale; Y0 the float accumulator, Y1/Y3 int32 sums.
// GQ8_C(c, acc): vector c into acc (AVX2: VPMADDUBSW, VPMADDWD by the
// int16 ones in Y14).
#define GQ8_C(c, acc) \
	VMOVDQU 16+32*c(SI), Y4 \
	VPBROADCASTD 2+4*c(DI), Y5 \
	VPSIGNB Y4, Y5, Y5 \
	VPABSB Y4, Y4 \
	VPMADDUBSW Y5, Y4, Y4 \
	VPMADDWD Y14, Y4, Y4 \
	VPADDD Y4, acc, acc

// GQ8V_C(c, acc): vector c into acc with VPDPBUSD.
#define GQ8V_C(c, acc) \
	VMOVDQU 16+32*c(SI), Y4 \
	VPBROADCASTD 2+4*c(DI), Y5 \
	VPSIGNB Y4, Y5, Y5 \
	VPABSB Y4, Y4 \
	VPDPBUSD Y5, Y4, acc

#define GQ8_END \
	VPADDD Y3, Y1, Y1 \
	VCVTPH2PS (SI), Y8 \
	VBROADCASTSS (BX), Y9 \
	VMULPS Y9, Y8, Y8 \
	VCVTDQ2PS Y1, Y1 \
	VMULPS Y8, Y1, Y1 \
	VADDPS Y1, Y0, Y0 \
	ADDQ $272, SI \
	ADDQ $34, DI \
	ADDQ $4, BX

// func gemvQ8_0x8AVX2(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ8_0x8AVX2(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	TESTQ CX, CX
	JEQ  gq8done
gq8loop:
	VPXOR Y1, Y1, Y1
	VPXOR Y3, Y3, Y3
	GQ8_C(0, Y1)
	GQ8_C(1, Y3)
	GQ8_C(2, Y1)
	GQ8_C(3, Y3)
	GQ8_C(4, Y1)
	GQ8_C(5, Y3)
	GQ8_C(6, Y1)
	GQ8_C(7, Y3)
	GQ8_END
	DECQ CX
	JNE  gq8loop
gq8done:
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET

// func gemvQ8_0x8VNNI(grp, a, aux *byte, nb int, out *[8]float32)
TEXT ·gemvQ8_0x8VNNI(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X14
	VPBROADCASTD X14, Y14
	TESTQ CX, CX
	JEQ  gq8vdone
gq8vloop:
	VPXOR Y1, Y1, Y1
	VPXOR Y3, Y3, Y3
	GQ8V_C(0, Y1)
	GQ8V_C(1, Y3)
	GQ8V_C(2, Y1)
	GQ8V_C(3, Y3)
	GQ8V_C(4, Y1)
	GQ8V_C(5, Y3)
	GQ8V_C(6, Y1)
	GQ8V_C(7, Y3)
	GQ8_END
	DECQ CX
	JNE  gq8vloop
gq8vdone:
	MOVQ out+32(FP), DX
	VMOVUPS Y0, (DX)
	VZEROUPPER
	RET
