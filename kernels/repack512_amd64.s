//go:build amd64 && !purego

#include "textflag.h"

// The 512-bit group kernels of the vnni set (repack512_amd64.go): two
// adjacent groups of the Q4_0 or Q8_0 group layout at once, 16 rows in the
// 16 lanes of a ZMM register (lanes 0-7 the first group's rows, 8-15 the
// second's, gstride bytes further on: the 8-row layout of repack.go, so a
// vector is a 32-byte load and a VINSERTI64X4 of the other group's). Every
// lane's sums are the 8-row kernels' (gemvQ4_0Go, gemvQ8_0Go): an exact
// integer dot per row and block, then acc += float32(isum) * (d_w * d_a),
// multiply and add rounded apart, blocks in order.
//
// Q8_0's signed weights have no 512-bit VPSIGNB: they are made unsigned
// (w XOR 0x80 = w + 128) for VPDPBUSD, and the aux value -128 times the
// activation block's sum (prepQ8_0Sum) takes the 128s off again; at most
// 32 * 255 * 128 in an int32, exact.
//
// Registers: SI the first group's block, R8 the group stride, DI (and R10,
// R11, R12 for the four-row kernels) the activation blocks, BX (R13, DX,
// AX) their aux values; Z15 the 0x80 or 0x0f bytes, Z8 the 16 weight
// scales, Z0 (Z24, Z25, Z26) the float accumulators.

// G16_SCALES: Z8 = the two groups' 16 f16 weight scales as float32.
#define G16_SCALES \
	VMOVDQU (SI), X8 \
	VINSERTI128 $1, (SI)(R8*1), Y8, Y8 \
	VCVTPH2PS Y8, Z8

// G16_ROW(aux, acc, acc2, facc): the int32 sums acc + acc2 of one
// activation row (scale at aux) times d_w * d_a into facc.
#define G16_ROW(aux, acc, acc2, facc) \
	VPADDD acc2, acc, acc \
	VBROADCASTSS (aux), Z9 \
	VMULPS Z9, Z8, Z9 \
	VCVTDQ2PS acc, acc \
	VMULPS Z9, acc, acc \
	VADDPS acc, facc, facc

// G16_W(off, w): w = the two groups' vector at off.
#define G16_W(off, w) \
	VMOVDQU off(SI), Y4 \
	VINSERTI64X4 $1, off(SI)(R8*1), Z4, w

// G16Q8(c, acc): Q8_0 vector c, unsigned, times the 4 activations
// broadcast, into acc.
#define G16Q8(c, acc) \
	G16_W(16+32*c, Z4) \
	VPXORD Z15, Z4, Z4 \
	VPDPBUSD.BCST 2+4*c(DI), Z4, acc

// The four-row kernels: gemv*x16AVX512 for the activation rows a,
// a+astride, a+2*astride, a+3*astride (aux rows auxstride apart), each
// weight vector loaded and unpacked once for the four; int32 sums Z16-Z19
// and Z20-Z23 (two per row), row i's results at out[16i:16i+16].

// M16_ARGS loads the arguments and clears the accumulators.
#define M16_ARGS \
	MOVQ grp+0(FP), SI \
	MOVQ a+8(FP), DI \
	MOVQ aux+16(FP), BX \
	MOVQ gstride+24(FP), R8 \
	MOVQ astride+32(FP), R9 \
	LEAQ (DI)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	LEAQ (R11)(R9*1), R12 \
	MOVQ auxstride+40(FP), R9 \
	LEAQ (BX)(R9*1), R13 \
	LEAQ (R13)(R9*1), DX \
	LEAQ (DX)(R9*1), AX \
	MOVQ nb+48(FP), CX \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26

// M16_START: a block's sums start at the rows' aux corrections.
#define M16_START \
	VPBROADCASTD 4(BX), Z16 \
	VPBROADCASTD 4(R13), Z17 \
	VPBROADCASTD 4(DX), Z18 \
	VPBROADCASTD 4(AX), Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23

// M16_END(wb, ab): the four rows' sums into their accumulators; next
// block (wb weight bytes, ab activation bytes).
#define M16_END(wb) \
	G16_SCALES \
	G16_ROW(BX, Z16, Z20, Z0) \
	G16_ROW(R13, Z17, Z21, Z24) \
	G16_ROW(DX, Z18, Z22, Z25) \
	G16_ROW(AX, Z19, Z23, Z26) \
	ADDQ $wb, SI \
	ADDQ $34, DI \
	ADDQ $34, R10 \
	ADDQ $34, R11 \
	ADDQ $34, R12 \
	ADDQ $8, BX \
	ADDQ $8, R13 \
	ADDQ $8, DX \
	ADDQ $8, AX

#define M16_STORE \
	MOVQ out+56(FP), R9 \
	VMOVUPS Z0, 0(R9) \
	VMOVUPS Z24, 64(R9) \
	VMOVUPS Z25, 128(R9) \
	VMOVUPS Z26, 192(R9) \
	VZEROUPPER

// func gemvQ8_0x16AVX512(grp, a, aux *byte, gstride, nb int, out *[16]float32)
TEXT ·gemvQ8_0x16AVX512(SB), NOSPLIT, $0-48
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ gstride+24(FP), R8
	MOVQ nb+32(FP), CX
	VPXORD Z0, Z0, Z0
	MOVL $0x80808080, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  g16q8done
g16q8loop:
	VPBROADCASTD 4(BX), Z1
	VPXORD Z3, Z3, Z3
	G16Q8(0, Z1)
	G16Q8(1, Z3)
	G16Q8(2, Z1)
	G16Q8(3, Z3)
	G16Q8(4, Z1)
	G16Q8(5, Z3)
	G16Q8(6, Z1)
	G16Q8(7, Z3)
	G16_SCALES
	G16_ROW(BX, Z1, Z3, Z0)
	ADDQ $272, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNE  g16q8loop
g16q8done:
	MOVQ out+40(FP), DX
	VMOVUPS Z0, (DX)
	VZEROUPPER
	RET

// G16Q4(w, lo, hi): Q4_0 vector pair at w, low nibbles times the
// activations at lo, high nibbles those at hi, into Z1 and Z3.
#define G16Q4(w, lo, hi) \
	G16_W(w, Z4) \
	VPSRLW $4, Z4, Z5 \
	VPANDD Z15, Z4, Z4 \
	VPANDD Z15, Z5, Z5 \
	VPDPBUSD.BCST lo(DI), Z4, Z1 \
	VPDPBUSD.BCST hi(DI), Z5, Z3

// func gemvQ4_0x16AVX512(grp, a, aux *byte, gstride, nb int, out *[16]float32)
TEXT ·gemvQ4_0x16AVX512(SB), NOSPLIT, $0-48
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ gstride+24(FP), R8
	MOVQ nb+32(FP), CX
	VPXORD Z0, Z0, Z0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  g16q4done
g16q4loop:
	VPBROADCASTD 4(BX), Z1
	VPXORD Z3, Z3, Z3
	G16Q4(16, 2, 18)
	G16Q4(48, 6, 22)
	G16Q4(80, 10, 26)
	G16Q4(112, 14, 30)
	G16_SCALES
	G16_ROW(BX, Z1, Z3, Z0)
	ADDQ $144, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNE  g16q4loop
g16q4done:
	MOVQ out+40(FP), DX
	VMOVUPS Z0, (DX)
	VZEROUPPER
	RET

// M16Q8(c, a0, a1, a2, a3): Q8_0 vector c, unsigned, for the four rows.
#define M16Q8(c, a0, a1, a2, a3) \
	G16_W(16+32*c, Z4) \
	VPXORD Z15, Z4, Z4 \
	VPDPBUSD.BCST 2+4*c(DI), Z4, a0 \
	VPDPBUSD.BCST 2+4*c(R10), Z4, a1 \
	VPDPBUSD.BCST 2+4*c(R11), Z4, a2 \
	VPDPBUSD.BCST 2+4*c(R12), Z4, a3

// func gemmQ8_0x16x4AVX512(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[64]float32)
TEXT ·gemmQ8_0x16x4AVX512(SB), NOSPLIT, $0-64
	M16_ARGS
	MOVL $0x80808080, R9
	VMOVD R9, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  m16q8done
m16q8loop:
	M16_START
	M16Q8(0, Z16, Z17, Z18, Z19)
	M16Q8(1, Z20, Z21, Z22, Z23)
	M16Q8(2, Z16, Z17, Z18, Z19)
	M16Q8(3, Z20, Z21, Z22, Z23)
	M16Q8(4, Z16, Z17, Z18, Z19)
	M16Q8(5, Z20, Z21, Z22, Z23)
	M16Q8(6, Z16, Z17, Z18, Z19)
	M16Q8(7, Z20, Z21, Z22, Z23)
	M16_END(272)
	DECQ CX
	JNE  m16q8loop
m16q8done:
	M16_STORE
	RET

// M16Q4(w, lo, hi): Q4_0 vector pair at w for the four rows: low nibbles
// into Z16-Z19, high nibbles into Z20-Z23.
#define M16Q4(w, lo, hi) \
	G16_W(w, Z4) \
	VPSRLW $4, Z4, Z5 \
	VPANDD Z15, Z4, Z4 \
	VPANDD Z15, Z5, Z5 \
	VPDPBUSD.BCST lo(DI), Z4, Z16 \
	VPDPBUSD.BCST lo(R10), Z4, Z17 \
	VPDPBUSD.BCST lo(R11), Z4, Z18 \
	VPDPBUSD.BCST lo(R12), Z4, Z19 \
	VPDPBUSD.BCST hi(DI), Z5, Z20 \
	VPDPBUSD.BCST hi(R10), Z5, Z21 \
	VPDPBUSD.BCST hi(R11), Z5, Z22 \
	VPDPBUSD.BCST hi(R12), Z5, Z23

// func gemmQ4_0x16x4AVX512(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[64]float32)
TEXT ·gemmQ4_0x16x4AVX512(SB), NOSPLIT, $0-64
	M16_ARGS
	MOVL $0x0f0f0f0f, R9
	VMOVD R9, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  m16q4done
m16q4loop:
	M16_START
	M16Q4(16, 2, 18)
	M16Q4(48, 6, 22)
	M16Q4(80, 10, 26)
	M16Q4(112, 14, 30)
	M16_END(144)
	DECQ CX
	JNE  m16q4loop
m16q4done:
	M16_STORE
	RET
