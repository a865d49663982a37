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
