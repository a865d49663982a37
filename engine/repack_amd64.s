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
