//go:build amd64 && !purego

#include "textflag.h"

// The 512-bit group kernels of the vnni set (repack512_amd64.go): two
// groups of the Q4_0, Q8_0 or Q4_K group layout at once, 16 rows in the 16
// lanes of a ZMM register, lanes 0-7 the first group's rows, 8-15 the
// second's. The pair kernels (*x16*) read the pair layout (repackPair: the
// two groups' blocks interleaved unit by unit, so a 64-byte vector holds
// both groups' 32-byte ones and the pair is one sequential stream; two
// groups read from two places ran slower from memory than the 256-bit
// kernels); a matrix's odd last group keeps the 8-row layout and
// kernels. Every lane's
// sums are the 8-row kernels' (gemvQ4_0Go, gemvQ8_0Go, gemvQ4_KGo): an
// exact integer dot per row and block, then acc += float32(isum) *
// (d_w * d_a), multiply and add rounded apart, blocks in order.
//
// Q8_0's signed weights have no 512-bit VPSIGNB: they are made unsigned
// (w XOR 0x80 = w + 128) for VPDPBUSD, and the aux value -128 times the
// activation block's sum (prepQ8_0Sum, after the nb scales: R8 holds
// 4*nb) takes the 128s off again; at most 32 * 255 * 128 in an int32,
// exact.
//
// Registers: SI the weight block, DI (and R10,
// R11, R12 for the four-row kernels) the activation blocks, BX (R13, DX,
// AX) their aux values; Z15 the 0x80 or 0x0f bytes, Z8 the 16 weight
// scales, Z0 (Z24, Z25, Z26) the float accumulators.

// P16_SCALES: Z8 = a pair block's 16 f16 weight scales as float32.
#define P16_SCALES \
	VCVTPH2PS (SI), Z8

// G16_ROW(aux, acc, acc2, facc): the int32 sums acc + acc2 of one
// activation row (scale at aux) times d_w * d_a into facc.
#define G16_ROW(aux, acc, acc2, facc) \
	VPADDD acc2, acc, acc \
	VBROADCASTSS (aux), Z9 \
	VMULPS Z9, Z8, Z9 \
	VCVTDQ2PS acc, acc \
	VMULPS Z9, acc, acc \
	VADDPS acc, facc, facc

// P16_W(off): Z4 = a pair block's 64-byte vector at off.
#define P16_W(off) \
	VMOVDQU64 off(SI), Z4

// The four-row kernels: gemv*x16AVX512 for the activation rows a,
// a+astride, a+2*astride, a+3*astride (aux rows auxstride apart), each
// weight vector loaded and unpacked once for the four; int32 sums Z16-Z19
// and Z20-Z23 (two per row), row i's results at out[16i:16i+16].

// P16_GEMV_ARGS(mask) loads a one-row kernel's arguments, clears its
// accumulator and broadcasts the byte mask into Z15.
#define P16_GEMV_ARGS(mask) \
	MOVQ grp+0(FP), SI \
	MOVQ a+8(FP), DI \
	MOVQ aux+16(FP), BX \
	MOVQ nb+24(FP), CX \
	VPXORD Z0, Z0, Z0 \
	MOVL mask, AX \
	VMOVD AX, X15 \
	VPBROADCASTD X15, Z15

#define P16_GEMV_STORE \
	MOVQ out+32(FP), DX \
	VMOVUPS Z0, (DX) \
	VZEROUPPER

// P16_ARGS loads the arguments and clears the accumulators.
#define P16_ARGS \
	MOVQ grp+0(FP), SI \
	MOVQ a+8(FP), DI \
	MOVQ aux+16(FP), BX \
	MOVQ astride+24(FP), R9 \
	LEAQ (DI)(R9*1), R10 \
	LEAQ (R10)(R9*1), R11 \
	LEAQ (R11)(R9*1), R12 \
	MOVQ auxstride+32(FP), R9 \
	LEAQ (BX)(R9*1), R13 \
	LEAQ (R13)(R9*1), DX \
	LEAQ (DX)(R9*1), AX \
	MOVQ nb+40(FP), CX \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26

#define P16_STORE \
	MOVQ out+48(FP), R9 \
	VMOVUPS Z0, 0(R9) \
	VMOVUPS Z24, 64(R9) \
	VMOVUPS Z25, 128(R9) \
	VMOVUPS Z26, 192(R9) \
	VZEROUPPER

// M16_START(c0, c1, c2, c3): a block's sums start at the rows' aux
// corrections, at c0-c3.
#define M16_START(c0, c1, c2, c3) \
	VPBROADCASTD c0, Z16 \
	VPBROADCASTD c1, Z17 \
	VPBROADCASTD c2, Z18 \
	VPBROADCASTD c3, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23

// M16_END(wb, xb): the four rows' sums into their accumulators; next
// block (wb weight bytes, xb aux bytes).
#define M16_END(wb, xb) \
	P16_SCALES \
	G16_ROW(BX, Z16, Z20, Z0) \
	G16_ROW(R13, Z17, Z21, Z24) \
	G16_ROW(DX, Z18, Z22, Z25) \
	G16_ROW(AX, Z19, Z23, Z26) \
	ADDQ $wb, SI \
	ADDQ $34, DI \
	ADDQ $34, R10 \
	ADDQ $34, R11 \
	ADDQ $34, R12 \
	ADDQ $xb, BX \
	ADDQ $xb, R13 \
	ADDQ $xb, DX \
	ADDQ $xb, AX

// P16Q4(w, lo, hi): Q4_0 pair vector at w, low nibbles times the
// activations at lo, high nibbles those at hi, into Z1 and Z3.
#define P16Q4(w, lo, hi) \
	P16_W(w) \
	VPSRLW $4, Z4, Z5 \
	VPANDD Z15, Z4, Z4 \
	VPANDD Z15, Z5, Z5 \
	VPDPBUSD.BCST lo(DI), Z4, Z1 \
	VPDPBUSD.BCST hi(DI), Z5, Z3

// func gemvQ4_0x16AVX512(grp, a, aux *byte, nb int, out *[16]float32)
TEXT ·gemvQ4_0x16AVX512(SB), NOSPLIT, $0-40
	P16_GEMV_ARGS($0x0f0f0f0f)
	TESTQ CX, CX
	JEQ  g16q4done
g16q4loop:
	VPBROADCASTD 4(BX), Z1
	VPXORD Z3, Z3, Z3
	P16Q4(32, 2, 18)
	P16Q4(96, 6, 22)
	P16Q4(160, 10, 26)
	P16Q4(224, 14, 30)
	P16_SCALES
	G16_ROW(BX, Z1, Z3, Z0)
	ADDQ $288, SI
	ADDQ $34, DI
	ADDQ $8, BX
	DECQ CX
	JNE  g16q4loop
g16q4done:
	P16_GEMV_STORE
	RET

// M16Q4(w, lo, hi): Q4_0 pair vector at w for the four rows: low nibbles
// into Z16-Z19, high nibbles into Z20-Z23.
#define M16Q4(w, lo, hi) \
	P16_W(w) \
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

// func gemmQ4_0x16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[64]float32)
TEXT ·gemmQ4_0x16x4AVX512(SB), NOSPLIT, $0-56
	P16_ARGS
	MOVL $0x0f0f0f0f, R9
	VMOVD R9, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  m16q4done
m16q4loop:
	M16_START(4(BX), 4(R13), 4(DX), 4(AX))
	M16Q4(32, 2, 18)
	M16Q4(96, 6, 22)
	M16Q4(160, 10, 26)
	M16Q4(224, 14, 30)
	M16_END(288, 8)
	DECQ CX
	JNE  m16q4loop
m16q4done:
	P16_STORE
	RET

// The Q4_K pair kernels (the pair layout of repack.go's Q4_K layout, 2368
// bytes per super-block: d at 0, dmin at 32, the scales of group g at
// 64+16g, the mins of pair h at 192+32h, nibble vector (j, p) at
// 320+512j+64p), as gemvQ4_Kx8VNNI with the 16 rows of two groups in the
// lanes, exactly gemvQ4_KGo's sums per lane. Z8 and Z10 hold the 16 rows' d and dmin (as
// float32), Z11 the mins' sum, Z12 the scaled sum of a super-block.

// G16K_HALF(off, z): z = the 16 f16 values at off as float32.
#define G16K_HALF(off, z) \
	VCVTPH2PS off(SI), z

// G16K_MINW(h): Z2 = the 16 rows' mins of pair h as int16 pairs.
#define G16K_MINW(h) \
	VPMOVZXBW 192+32*h(SI), Z2

// G16K_SC(j): Z6 and Z7 = the 16 rows' scales of groups 2j and 2j+1.
#define G16K_SC(j) \
	VPMOVZXBD 64+32*j(SI), Z6 \
	VPMOVZXBD 80+32*j(SI), Z7

// G16K_P(j, p, lo, hi): vector p of part j, low nibbles (group 2j) into
// lo, high nibbles (group 2j+1) into hi.
#define G16K_P(j, p, lo, hi) \
	P16_W(320+512*j+64*p) \
	VPSRLW $4, Z4, Z5 \
	VPANDD Z15, Z4, Z4 \
	VPANDD Z15, Z5, Z5 \
	VPDPBUSD.BCST 4+64*j+4*p(DI), Z4, lo \
	VPDPBUSD.BCST 36+64*j+4*p(DI), Z5, hi

// G16K_J(j, lo, hi): part j's dots times their scales into Z12.
#define G16K_J(j, lo, hi) \
	VPXORD lo, lo, lo \
	VPXORD hi, hi, hi \
	G16K_P(j, 0, lo, hi) \
	G16K_P(j, 1, lo, hi) \
	G16K_P(j, 2, lo, hi) \
	G16K_P(j, 3, lo, hi) \
	G16K_P(j, 4, lo, hi) \
	G16K_P(j, 5, lo, hi) \
	G16K_P(j, 6, lo, hi) \
	G16K_P(j, 7, lo, hi) \
	G16K_SC(j) \
	VPMULLD Z6, lo, lo \
	VPMULLD Z7, hi, hi \
	VPADDD lo, Z12, Z12 \
	VPADDD hi, Z12, Z12

// G16K_MIN(h, aux, acc): the mins of pair h (in Z2) times the activation
// row's group-sum pair at aux, added into acc.
#define G16K_MIN(h, aux, acc) \
	VPBROADCASTD 4+4*h(aux), Z3 \
	VPMADDWD Z3, Z2, Z3 \
	VPADDD Z3, acc, acc

// func gemvQ4_Kx16AVX512(grp, a, aux *byte, nb int, out *[16]float32)
TEXT ·gemvQ4_Kx16AVX512(SB), NOSPLIT, $0-40
	P16_GEMV_ARGS($0x0f0f0f0f)
	TESTQ CX, CX
	JEQ  g16q4kdone
g16q4kloop:
	G16K_HALF(0, Z8)
	VBROADCASTSS (BX), Z9
	VMULPS Z9, Z8, Z8
	G16K_HALF(32, Z10)
	VMULPS Z9, Z10, Z10
	VPXORD Z11, Z11, Z11
	G16K_MINW(0)
	G16K_MIN(0, BX, Z11)
	G16K_MINW(1)
	G16K_MIN(1, BX, Z11)
	G16K_MINW(2)
	G16K_MIN(2, BX, Z11)
	G16K_MINW(3)
	G16K_MIN(3, BX, Z11)
	VPXORD Z12, Z12, Z12
	G16K_J(0, Z16, Z17)
	G16K_J(1, Z18, Z19)
	G16K_J(2, Z20, Z21)
	G16K_J(3, Z22, Z23)
	VCVTDQ2PS Z12, Z12
	VMULPS Z8, Z12, Z12
	VCVTDQ2PS Z11, Z11
	VMULPS Z10, Z11, Z11
	VSUBPS Z11, Z12, Z12
	VADDPS Z12, Z0, Z0
	ADDQ $2368, SI
	ADDQ $292, DI
	ADDQ $32, BX
	DECQ CX
	JNE  g16q4kloop
g16q4kdone:
	P16_GEMV_STORE
	RET

// The Q4_K four-row kernel: per row i (aux at BX, R13, DX, AX) the float
// mins' term in Z27-Z30, the scaled sum in Z1, Z11, Z12, Z13, the part's
// dots in Z16-Z19 (low nibbles) and Z20-Z23 (high); Z8 and Z10 the raw d
// and dmin.

// M16K_P(j, p): vector p of part j for the four rows.
#define M16K_P(j, p) \
	P16_W(320+512*j+64*p) \
	VPSRLW $4, Z4, Z5 \
	VPANDD Z15, Z4, Z4 \
	VPANDD Z15, Z5, Z5 \
	VPDPBUSD.BCST 4+64*j+4*p(DI), Z4, Z16 \
	VPDPBUSD.BCST 4+64*j+4*p(R10), Z4, Z17 \
	VPDPBUSD.BCST 4+64*j+4*p(R11), Z4, Z18 \
	VPDPBUSD.BCST 4+64*j+4*p(R12), Z4, Z19 \
	VPDPBUSD.BCST 36+64*j+4*p(DI), Z5, Z20 \
	VPDPBUSD.BCST 36+64*j+4*p(R10), Z5, Z21 \
	VPDPBUSD.BCST 36+64*j+4*p(R11), Z5, Z22 \
	VPDPBUSD.BCST 36+64*j+4*p(R12), Z5, Z23

// M16K_SCALE(lo, hi, isum): a row's part dots times the scales into isum.
#define M16K_SCALE(lo, hi, isum) \
	VPMULLD Z6, lo, lo \
	VPMULLD Z7, hi, hi \
	VPADDD lo, isum, isum \
	VPADDD hi, isum, isum

// M16K_J(j): part j for the four rows.
#define M16K_J(j) \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	M16K_P(j, 0) \
	M16K_P(j, 1) \
	M16K_P(j, 2) \
	M16K_P(j, 3) \
	M16K_P(j, 4) \
	M16K_P(j, 5) \
	M16K_P(j, 6) \
	M16K_P(j, 7) \
	G16K_SC(j) \
	M16K_SCALE(Z16, Z20, Z1) \
	M16K_SCALE(Z17, Z21, Z11) \
	M16K_SCALE(Z18, Z22, Z12) \
	M16K_SCALE(Z19, Z23, Z13)

// M16K_MINS(h): pair h's mins into the four rows' sums.
#define M16K_MINS(h) \
	G16K_MINW(h) \
	G16K_MIN(h, BX, Z27) \
	G16K_MIN(h, R13, Z28) \
	G16K_MIN(h, DX, Z29) \
	G16K_MIN(h, AX, Z30)

// M16K_MTERM(aux, m): the mins' sum m as float32 times dmin * d_a.
#define M16K_MTERM(aux, m) \
	VBROADCASTSS (aux), Z9 \
	VMULPS Z9, Z10, Z9 \
	VCVTDQ2PS m, m \
	VMULPS Z9, m, m

// M16K_ROW(aux, isum, m, facc): the scaled sum times d * d_a less the mins'
// term, into facc.
#define M16K_ROW(aux, isum, m, facc) \
	VBROADCASTSS (aux), Z9 \
	VMULPS Z9, Z8, Z9 \
	VCVTDQ2PS isum, isum \
	VMULPS Z9, isum, isum \
	VSUBPS m, isum, isum \
	VADDPS isum, facc, facc

// func gemmQ4_Kx16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[64]float32)
TEXT ·gemmQ4_Kx16x4AVX512(SB), NOSPLIT, $0-56
	P16_ARGS
	MOVL $0x0f0f0f0f, R9
	VMOVD R9, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  m16q4kdone
m16q4kloop:
	G16K_HALF(0, Z8)
	G16K_HALF(32, Z10)
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	M16K_MINS(0)
	M16K_MINS(1)
	M16K_MINS(2)
	M16K_MINS(3)
	M16K_MTERM(BX, Z27)
	M16K_MTERM(R13, Z28)
	M16K_MTERM(DX, Z29)
	M16K_MTERM(AX, Z30)
	VPXORD Z1, Z1, Z1
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	M16K_J(0)
	M16K_J(1)
	M16K_J(2)
	M16K_J(3)
	M16K_ROW(BX, Z1, Z27, Z0)
	M16K_ROW(R13, Z11, Z28, Z24)
	M16K_ROW(DX, Z12, Z29, Z25)
	M16K_ROW(AX, Z13, Z30, Z26)
	ADDQ $2368, SI
	ADDQ $292, DI
	ADDQ $292, R10
	ADDQ $292, R11
	ADDQ $292, R12
	ADDQ $32, BX
	ADDQ $32, R13
	ADDQ $32, DX
	ADDQ $32, AX
	DECQ CX
	JNE  m16q4kloop
m16q4kdone:
	P16_STORE
	RET

// P16Q8(c, acc): Q8_0 pair vector c, unsigned, times the 4 activations
// broadcast, into acc.
#define P16Q8(c, acc) \
	VPXORD 32+64*c(SI), Z15, Z4 \
	VPDPBUSD.BCST 2+4*c(DI), Z4, acc

// func gemvQ8_0x16AVX512(grp, a, aux *byte, nb int, out *[16]float32)
TEXT ·gemvQ8_0x16AVX512(SB), NOSPLIT, $0-40
	P16_GEMV_ARGS($0x80808080)
	LEAQ (CX*4), R8
	TESTQ CX, CX
	JEQ  p16q8done
p16q8loop:
	VPBROADCASTD (BX)(R8*1), Z1
	VPXORD Z3, Z3, Z3
	P16Q8(0, Z1)
	P16Q8(1, Z3)
	P16Q8(2, Z1)
	P16Q8(3, Z3)
	P16Q8(4, Z1)
	P16Q8(5, Z3)
	P16Q8(6, Z1)
	P16Q8(7, Z3)
	P16_SCALES
	G16_ROW(BX, Z1, Z3, Z0)
	ADDQ $544, SI
	ADDQ $34, DI
	ADDQ $4, BX
	DECQ CX
	JNE  p16q8loop
p16q8done:
	P16_GEMV_STORE
	RET

// P16M_Q8(c, a0, a1, a2, a3): Q8_0 pair vector c, unsigned, for the four rows.
#define P16M_Q8(c, a0, a1, a2, a3) \
	VPXORD 32+64*c(SI), Z15, Z4 \
	VPDPBUSD.BCST 2+4*c(DI), Z4, a0 \
	VPDPBUSD.BCST 2+4*c(R10), Z4, a1 \
	VPDPBUSD.BCST 2+4*c(R11), Z4, a2 \
	VPDPBUSD.BCST 2+4*c(R12), Z4, a3

// func gemmQ8_0x16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[64]float32)
TEXT ·gemmQ8_0x16x4AVX512(SB), NOSPLIT, $0-56
	P16_ARGS
	LEAQ (CX*4), R8
	MOVL $0x80808080, R9
	VMOVD R9, X15
	VPBROADCASTD X15, Z15
	TESTQ CX, CX
	JEQ  p16mq8done
p16mq8loop:
	M16_START((BX)(R8*1), (R13)(R8*1), (DX)(R8*1), (AX)(R8*1))
	P16M_Q8(0, Z16, Z17, Z18, Z19)
	P16M_Q8(1, Z20, Z21, Z22, Z23)
	P16M_Q8(2, Z16, Z17, Z18, Z19)
	P16M_Q8(3, Z20, Z21, Z22, Z23)
	P16M_Q8(4, Z16, Z17, Z18, Z19)
	P16M_Q8(5, Z20, Z21, Z22, Z23)
	P16M_Q8(6, Z16, Z17, Z18, Z19)
	P16M_Q8(7, Z20, Z21, Z22, Z23)
	M16_END(544, 4)
	DECQ CX
	JNE  p16mq8loop
p16mq8done:
	P16_STORE
	RET

// The Q6_K pair kernels (the pair layout of repack.go's Q6_K layout, 3360
// bytes per super-block: d at 0, the scales of 16-value group g at
// 32+16g, then per half j and vector p the 192 bytes at 288+1536j+192p of
// ql s=0, ql s=1 and qh: one stream front to back), exactly gemvQ6_KGo's sums per lane. Z15 holds 0x0f, Z14 0x30. A 6-bit
// value vector is its qh bits shifted to bits 4-5 and masked, then
// VPTERNLOGD $0xf8 (A | B&C) merges in the ql nibble: 13 byte operations
// for the four value vectors of (j, p) where the 256-bit kernels spend 17
// on half as many rows. No software prefetch: with the sequential layout
// the hardware's keeps up, and PREFETCHT0 one or two blocks ahead made
// the head of Qwen3-0.6B 1.6-1.8x slower.

// Q6P_L(j, p) loads vector p of half j: ql s=0 into Z2, s=1 into Z3, qh
// into Z4.
#define Q6P_L(j, p) \
	VMOVDQU64 288+1536*j+192*p(SI), Z2 \
	VMOVDQU64 352+1536*j+192*p(SI), Z3 \
	VMOVDQU64 416+1536*j+192*p(SI), Z4

// Q6P_Vt(v, tmp): v = the 6-bit values t (low nibbles of s=0, s=1, high
// nibbles of s=0, s=1, qh bits 2t..2t+1) of the vectors Q6P_L loaded.
#define Q6P_V0(v, tmp) \
	VPSLLW $4, Z4, v \
	VPANDD Z14, v, v \
	VPTERNLOGD $0xf8, Z15, Z2, v
#define Q6P_V1(v, tmp) \
	VPSLLW $2, Z4, v \
	VPANDD Z14, v, v \
	VPTERNLOGD $0xf8, Z15, Z3, v
#define Q6P_V2(v, tmp) \
	VPSRLW $4, Z2, tmp \
	VPANDD Z14, Z4, v \
	VPTERNLOGD $0xf8, Z15, tmp, v
#define Q6P_V3(v, tmp) \
	VPSRLW $4, Z3, tmp \
	VPSRLW $2, Z4, v \
	VPANDD Z14, v, v \
	VPTERNLOGD $0xf8, Z15, tmp, v

// Q6P_MASKS: Z15 = 0x0f bytes, Z14 = 0x30 bytes (uses R9).
#define Q6P_MASKS \
	MOVL $0x0f0f0f0f, R9 \
	VPBROADCASTD R9, Z15 \
	MOVL $0x30303030, R9 \
	VPBROADCASTD R9, Z14

// Q6P_P(j, p, a0, a1, a2, a3): vector p of half j, values t times their 4
// activations broadcast, into at.
#define Q6P_P(j, p, a0, a1, a2, a3) \
	Q6P_L(j, p) \
	Q6P_V0(Z5, Z6) \
	VPDPBUSD.BCST 4+128*j+4*p(DI), Z5, a0 \
	Q6P_V1(Z7, Z6) \
	VPDPBUSD.BCST 36+128*j+4*p(DI), Z7, a1 \
	Q6P_V2(Z9, Z6) \
	VPDPBUSD.BCST 68+128*j+4*p(DI), Z9, a2 \
	Q6P_V3(Z10, Z11) \
	VPDPBUSD.BCST 100+128*j+4*p(DI), Z10, a3

// Q6P_G(g, aux, acc, isum): group g's dot in acc less 32 times its
// activation sum (at aux), times its scales, into isum.
#define Q6P_G(g, aux, acc, isum) \
	VPSUBD.BCST 4+4*g(aux), acc, acc \
	VPMOVSXBD 32+16*g(SI), Z6 \
	VPMULLD Z6, acc, acc \
	VPADDD acc, isum, isum

// Q6P_J(j, g0, ..., g7): half j of a super-block into Z12; g0-g7 are the
// groups 8j, 8j+2, 8j+4, 8j+6, 8j+1, ..., 8j+7 of the dots in Z16-Z23
// (literals: the assembler's macros substitute text, and 4*g of g = 8*j+2
// is no product).
#define Q6P_J(j, g0, g1, g2, g3, g4, g5, g6, g7) \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	Q6P_P(j, 0, Z16, Z17, Z18, Z19) \
	Q6P_P(j, 1, Z16, Z17, Z18, Z19) \
	Q6P_P(j, 2, Z16, Z17, Z18, Z19) \
	Q6P_P(j, 3, Z16, Z17, Z18, Z19) \
	Q6P_P(j, 4, Z20, Z21, Z22, Z23) \
	Q6P_P(j, 5, Z20, Z21, Z22, Z23) \
	Q6P_P(j, 6, Z20, Z21, Z22, Z23) \
	Q6P_P(j, 7, Z20, Z21, Z22, Z23) \
	Q6P_G(g0, BX, Z16, Z12) \
	Q6P_G(g1, BX, Z17, Z12) \
	Q6P_G(g2, BX, Z18, Z12) \
	Q6P_G(g3, BX, Z19, Z12) \
	Q6P_G(g4, BX, Z20, Z12) \
	Q6P_G(g5, BX, Z21, Z12) \
	Q6P_G(g6, BX, Z22, Z12) \
	Q6P_G(g7, BX, Z23, Z12)

// Q6P_ROW(aux, isum, facc): a row's super-block sum isum times d * d_a
// (d as float32 in Z8) into facc.
#define Q6P_ROW(aux, isum, facc) \
	VBROADCASTSS (aux), Z9 \
	VMULPS Z9, Z8, Z9 \
	VCVTDQ2PS isum, isum \
	VMULPS Z9, isum, isum \
	VADDPS isum, facc, facc

// func gemvQ6_Kx16AVX512(grp, a, aux *byte, nb int, out *[16]float32)
TEXT ·gemvQ6_Kx16AVX512(SB), NOSPLIT, $0-40
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ nb+24(FP), CX
	VPXORD Z0, Z0, Z0
	Q6P_MASKS
	TESTQ CX, CX
	JEQ  g16q6done
g16q6loop:
	VPXORD Z12, Z12, Z12
	Q6P_J(0, 0, 2, 4, 6, 1, 3, 5, 7)
	Q6P_J(1, 8, 10, 12, 14, 9, 11, 13, 15)
	VCVTPH2PS (SI), Z8
	Q6P_ROW(BX, Z12, Z0)
	ADDQ $3360, SI
	ADDQ $292, DI
	ADDQ $68, BX
	DECQ CX
	JNE  g16q6loop
g16q6done:
	P16_GEMV_STORE
	RET

// The Q6_K four-row kernel: vector (j, p) loaded and its four value
// vectors made once for the four activation rows (DI, R10, R11, R12; aux
// at BX, R13, DX, AX); per half j and 4-vector half h the dots of value t
// and row r in Z(16+4t+r), then scaled into row r's sum Z(8+r); the
// float sums in Z0, Z1, Z12, Z13.

// M6P_P(j, p): vector p of half j for the four rows.
#define M6P_P(j, p) \
	Q6P_L(j, p) \
	Q6P_V0(Z5, Z6) \
	VPDPBUSD.BCST 4+128*j+4*p(DI), Z5, Z16 \
	VPDPBUSD.BCST 4+128*j+4*p(R10), Z5, Z17 \
	VPDPBUSD.BCST 4+128*j+4*p(R11), Z5, Z18 \
	VPDPBUSD.BCST 4+128*j+4*p(R12), Z5, Z19 \
	Q6P_V1(Z7, Z6) \
	VPDPBUSD.BCST 36+128*j+4*p(DI), Z7, Z20 \
	VPDPBUSD.BCST 36+128*j+4*p(R10), Z7, Z21 \
	VPDPBUSD.BCST 36+128*j+4*p(R11), Z7, Z22 \
	VPDPBUSD.BCST 36+128*j+4*p(R12), Z7, Z23 \
	Q6P_V2(Z5, Z6) \
	VPDPBUSD.BCST 68+128*j+4*p(DI), Z5, Z24 \
	VPDPBUSD.BCST 68+128*j+4*p(R10), Z5, Z25 \
	VPDPBUSD.BCST 68+128*j+4*p(R11), Z5, Z26 \
	VPDPBUSD.BCST 68+128*j+4*p(R12), Z5, Z27 \
	Q6P_V3(Z7, Z6) \
	VPDPBUSD.BCST 100+128*j+4*p(DI), Z7, Z28 \
	VPDPBUSD.BCST 100+128*j+4*p(R10), Z7, Z29 \
	VPDPBUSD.BCST 100+128*j+4*p(R11), Z7, Z30 \
	VPDPBUSD.BCST 100+128*j+4*p(R12), Z7, Z31

// M6P_G(g, a0, a1, a2, a3): group g's dots of the four rows (in a0-a3)
// into their sums.
#define M6P_G(g, a0, a1, a2, a3) \
	VPSUBD.BCST 4+4*g(BX), a0, a0 \
	VPSUBD.BCST 4+4*g(R13), a1, a1 \
	VPSUBD.BCST 4+4*g(DX), a2, a2 \
	VPSUBD.BCST 4+4*g(AX), a3, a3 \
	VPMOVSXBD 32+16*g(SI), Z6 \
	VPMULLD Z6, a0, a0 \
	VPMULLD Z6, a1, a1 \
	VPMULLD Z6, a2, a2 \
	VPMULLD Z6, a3, a3 \
	VPADDD a0, Z8, Z8 \
	VPADDD a1, Z9, Z9 \
	VPADDD a2, Z10, Z10 \
	VPADDD a3, Z11, Z11

// M6P_H(j, p0, p1, p2, p3, g0, g1, g2, g3): the vectors p0-p3 (half h of
// half j) for the four rows; g0-g3 are 8j+h, 8j+2+h, 8j+4+h, 8j+6+h, the
// groups of their values 0-3 (literals, as in Q6P_J).
#define M6P_H(j, p0, p1, p2, p3, g0, g1, g2, g3) \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z28, Z28, Z28 \
	VPXORD Z29, Z29, Z29 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31 \
	M6P_P(j, p0) \
	M6P_P(j, p1) \
	M6P_P(j, p2) \
	M6P_P(j, p3) \
	M6P_G(g0, Z16, Z17, Z18, Z19) \
	M6P_G(g1, Z20, Z21, Z22, Z23) \
	M6P_G(g2, Z24, Z25, Z26, Z27) \
	M6P_G(g3, Z28, Z29, Z30, Z31)

// M6P_ROW(aux, isum, facc): as Q6P_ROW with d in Z4, Z5 scratch.
#define M6P_ROW(aux, isum, facc) \
	VBROADCASTSS (aux), Z5 \
	VMULPS Z5, Z4, Z5 \
	VCVTDQ2PS isum, isum \
	VMULPS Z5, isum, isum \
	VADDPS isum, facc, facc

// func gemmQ6_Kx16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[64]float32)
TEXT ·gemmQ6_Kx16x4AVX512(SB), NOSPLIT, $0-56
	MOVQ grp+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ aux+16(FP), BX
	MOVQ astride+24(FP), R9
	LEAQ (DI)(R9*1), R10
	LEAQ (R10)(R9*1), R11
	LEAQ (R11)(R9*1), R12
	MOVQ auxstride+32(FP), R9
	LEAQ (BX)(R9*1), R13
	LEAQ (R13)(R9*1), DX
	LEAQ (DX)(R9*1), AX
	MOVQ nb+40(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	Q6P_MASKS
	TESTQ CX, CX
	JEQ  m16q6done
m16q6loop:
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	M6P_H(0, 0, 1, 2, 3, 0, 2, 4, 6)
	M6P_H(0, 4, 5, 6, 7, 1, 3, 5, 7)
	M6P_H(1, 0, 1, 2, 3, 8, 10, 12, 14)
	M6P_H(1, 4, 5, 6, 7, 9, 11, 13, 15)
	VCVTPH2PS (SI), Z4
	M6P_ROW(BX, Z8, Z0)
	M6P_ROW(R13, Z9, Z1)
	M6P_ROW(DX, Z10, Z12)
	M6P_ROW(AX, Z11, Z13)
	ADDQ $3360, SI
	ADDQ $292, DI
	ADDQ $292, R10
	ADDQ $292, R11
	ADDQ $292, R12
	ADDQ $68, BX
	ADDQ $68, R13
	ADDQ $68, DX
	ADDQ $68, AX
	DECQ CX
	JNE  m16q6loop
m16q6done:
	MOVQ out+48(FP), R9
	VMOVUPS Z0, 0(R9)
	VMOVUPS Z1, 64(R9)
	VMOVUPS Z12, 128(R9)
	VMOVUPS Z13, 192(R9)
	VZEROUPPER
	RET

