//go:build amd64 && !purego

#include "textflag.h"

// DOTF32 leaves in X0 the dot of the CX floats at SI and DI (both
// advance): four 8-lane FMA accumulators over 32 floats per step, then 8
// at a time, then a scalar tail. Its labels are local to the function that
// uses it, once.
#define DOTF32 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y1, Y1, Y1 \
	VXORPS Y2, Y2, Y2 \
	VXORPS Y3, Y3, Y3 \
loop32: \
	CMPQ CX, $32 \
	JLT  loop8 \
	VMOVUPS (SI), Y4 \
	VMOVUPS 32(SI), Y5 \
	VMOVUPS 64(SI), Y6 \
	VMOVUPS 96(SI), Y7 \
	VFMADD231PS (DI), Y4, Y0 \
	VFMADD231PS 32(DI), Y5, Y1 \
	VFMADD231PS 64(DI), Y6, Y2 \
	VFMADD231PS 96(DI), Y7, Y3 \
	ADDQ $128, SI \
	ADDQ $128, DI \
	SUBQ $32, CX \
	JMP  loop32 \
loop8: \
	CMPQ CX, $8 \
	JLT  reduce \
	VMOVUPS (SI), Y4 \
	VFMADD231PS (DI), Y4, Y0 \
	ADDQ $32, SI \
	ADDQ $32, DI \
	SUBQ $8, CX \
	JMP  loop8 \
reduce: \
	VADDPS Y1, Y0, Y0 \
	VADDPS Y3, Y2, Y2 \
	VADDPS Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X1, X0, X0 \
	VHADDPS X0, X0, X0 \
	VHADDPS X0, X0, X0 \
tail: \
	CMPQ CX, $0 \
	JEQ  tailed \
	VMOVSS (SI), X4 \
	VFMADD231SS (DI), X4, X0 \
	ADDQ $4, SI \
	ADDQ $4, DI \
	DECQ CX \
	JMP  tail \
tailed:

// func dotF32AVX2(x, y *float32, n int) float32
// DOTF32 on x and y. Requires n >= 8 only for speed; any n >= 0 works.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	DOTF32
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Horizontal sum of the 8 floats of Y0 into X0 in ggml's hsum_float_8
// order: halves added, then lanes (0+2)+(1+3).
#define HSUM_Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS X0, X1, X0 \
	VMOVHLPS X0, X0, X1 \
	VADDPS X1, X0, X0 \
	VMOVSHDUP X0, X1 \
	VADDSS X1, X0, X0

// Scale of block pair: f16 at (SI) times f16 at (DI), broadcast to Y1.
#define BLOCK_SCALE \
	MOVWLZX (SI), AX \
	VMOVD AX, X1 \
	VCVTPH2PS X1, X1 \
	MOVWLZX (DI), AX \
	VMOVD AX, X2 \
	VCVTPH2PS X2, X2 \
	VMULSS X2, X1, X1 \
	VBROADCASTSS X1, Y1

// Y0 += Y1 * sum of int8 products of Y2 (weights) and Y3 (activations);
// Y7 holds int16 ones.
#define DOT_I8 \
	VPSIGNB Y2, Y2, Y4 \
	VPSIGNB Y2, Y3, Y5 \
	VPMADDUBSW Y5, Y4, Y6 \
	VPMADDWD Y7, Y6, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VFMADD231PS Y6, Y1, Y0

// func dotQ8_0AVX2(x, y *byte, nb int) float32
TEXT ·dotQ8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
q8loop:
	TESTQ CX, CX
	JEQ  q8done
	BLOCK_SCALE
	VMOVDQU 2(SI), Y2
	VMOVDQU 2(DI), Y3
	DOT_I8
	ADDQ $34, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q8loop
q8done:
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotQ4_0AVX2(x, y *byte, nb int) float32
// Weights: 16 bytes of nibbles, low nibbles are elements 0-15, high 16-31,
// each minus 8.
TEXT ·dotQ4_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x08080808, AX
	VMOVD AX, X9
	VPBROADCASTD X9, Y9
q4loop:
	TESTQ CX, CX
	JEQ  q4done
	BLOCK_SCALE
	VMOVDQU 2(SI), X2
	VPSRLW $4, X2, X3
	VINSERTI128 $1, X3, Y2, Y2
	VPAND Y8, Y2, Y2
	VPSUBB Y9, Y2, Y2
	VMOVDQU 2(DI), Y3
	DOT_I8
	ADDQ $18, SI
	ADDQ $34, DI
	DECQ CX
	JMP  q4loop
q4done:
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q4K_NIBBLES decodes quarter j of a Q4_K block: its two scales
// broadcast as int16 in Y10 and Y11, its 32 low nibbles in Y3 and 32 high
// nibbles in Y2 (Y8 holds the 0x0f mask).
#define Q4K_NIBBLES(j) \
	MOVBLZX (2*j)(SP), AX \
	VMOVD AX, X10 \
	VPBROADCASTW X10, Y10 \
	MOVBLZX (2*j+1)(SP), AX \
	VMOVD AX, X11 \
	VPBROADCASTW X11, Y11 \
	VMOVDQU (16+32*j)(SI), Y2 \
	VPAND Y8, Y2, Y3 \
	VPSRLW $4, Y2, Y2 \
	VPAND Y8, Y2, Y2

// One 64-value quarter j of a Q4_K block: low nibbles times the next 32
// activations with scale byte 2j, high nibbles with scale byte 2j+1, into
// the int32 lanes of Y9 (ggml's AVX2 q4_K_q8_K inner loop).
#define Q4K_QUARTER(j) \
	Q4K_NIBBLES(j) \
	VMOVDQU (4+64*j)(DI), Y4 \
	VPMADDUBSW Y4, Y3, Y3 \
	VPMADDWD Y10, Y3, Y3 \
	VMOVDQU (36+64*j)(DI), Y5 \
	VPMADDUBSW Y5, Y2, Y2 \
	VPMADDWD Y11, Y2, Y2 \
	VPADDD Y3, Y9, Y9 \
	VPADDD Y2, Y9, Y9

// Q4K_UNPACK unpacks the 12 packed bytes of 6-bit scales and mins of the
// Q4_K super-block at SI (ggml's utmp shuffle): the 8 scales to 0(SP), the
// 8 mins as int16 lanes into X3. The mins go through a register, not the
// stack: an 8-byte load of two 4-byte stores cannot be forwarded from the
// store buffer and stalls. Clobbers R8-R13.
#define Q4K_UNPACK \
	MOVL 4(SI), R8 \
	MOVL 8(SI), R9 \
	MOVL 12(SI), R10 \
	MOVL R10, R11 \
	SHRL $4, R11 \
	ANDL $0x0f0f0f0f, R11 \
	MOVL R9, R12 \
	SHRL $6, R12 \
	ANDL $0x03030303, R12 \
	SHLL $4, R12 \
	ORL  R12, R11 \
	MOVL R9, R13 \
	ANDL $0x3f3f3f3f, R13 \
	MOVL R10, R9 \
	ANDL $0x0f0f0f0f, R9 \
	MOVL R8, R12 \
	SHRL $6, R12 \
	ANDL $0x03030303, R12 \
	SHLL $4, R12 \
	ORL  R12, R9 \
	ANDL $0x3f3f3f3f, R8 \
	MOVL R8, 0(SP) \
	MOVL R9, 4(SP) \
	SHLQ $32, R11 \
	ORQ  R13, R11 \
	VMOVQ R11, X3 \
	VPMOVZXBW X3, X3

// func dotQ4_KAVX2(x, y *byte, nb int) float32
// Per super-block: the 12 packed bytes of 6-bit scales and mins are
// unpacked (ggml's utmp shuffle): scales to the stack frame, mins into X3 (no
// store-to-load of a split qword); the mins term is
// accumulated in 4 float lanes (X12) from the activation block sums, the
// scaled nibble products in 8 float lanes (Y0); both reductions follow
// ggml's order.
TEXT ·dotQ4_KAVX2(SB), NOSPLIT, $16-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS X12, X12, X12
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
q4kloop:
	TESTQ CX, CX
	JEQ  q4kdone
	MOVWLZX (SI), AX
	VMOVD AX, X1
	VCVTPH2PS X1, X1
	VMOVSS (DI), X2
	VMULSS X1, X2, X13
	MOVWLZX 2(SI), AX
	VMOVD AX, X1
	VCVTPH2PS X1, X1
	VMULSS X1, X2, X14
	Q4K_UNPACK
	VMOVDQU 260(DI), Y4
	VEXTRACTI128 $1, Y4, X5
	VPHADDW X5, X4, X4
	VPMADDWD X4, X3, X3
	VCVTDQ2PS X3, X3
	VBROADCASTSS X14, X15
	VFNMADD231PS X3, X15, X12
	VPXOR Y9, Y9, Y9
	Q4K_QUARTER(0)
	Q4K_QUARTER(1)
	Q4K_QUARTER(2)
	Q4K_QUARTER(3)
	VCVTDQ2PS Y9, Y9
	VBROADCASTSS X13, Y13
	VFMADD231PS Y9, Y13, Y0
	ADDQ $144, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q4kloop
q4kdone:
	VMOVHLPS X12, X12, X1
	VADDPS X1, X12, X12
	VMOVSHDUP X12, X1
	VADDSS X1, X12, X12
	HSUM_Y0
	VADDSS X12, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// scaleShuf<>: for 32-value group k (0-7), a VPSHUFB pattern that spreads
// scale byte 2k over the low 8 bytes and 2k+1 over the high 8, so
// VPMOVSXBW gives the int16 multipliers of the group's 16 pair sums
// (ggml's get_scale_shuffle).
DATA scaleShuf<>+0(SB)/8, $0x0000000000000000
DATA scaleShuf<>+8(SB)/8, $0x0101010101010101
DATA scaleShuf<>+16(SB)/8, $0x0202020202020202
DATA scaleShuf<>+24(SB)/8, $0x0303030303030303
DATA scaleShuf<>+32(SB)/8, $0x0404040404040404
DATA scaleShuf<>+40(SB)/8, $0x0505050505050505
DATA scaleShuf<>+48(SB)/8, $0x0606060606060606
DATA scaleShuf<>+56(SB)/8, $0x0707070707070707
DATA scaleShuf<>+64(SB)/8, $0x0808080808080808
DATA scaleShuf<>+72(SB)/8, $0x0909090909090909
DATA scaleShuf<>+80(SB)/8, $0x0a0a0a0a0a0a0a0a
DATA scaleShuf<>+88(SB)/8, $0x0b0b0b0b0b0b0b0b
DATA scaleShuf<>+96(SB)/8, $0x0c0c0c0c0c0c0c0c
DATA scaleShuf<>+104(SB)/8, $0x0d0d0d0d0d0d0d0d
DATA scaleShuf<>+112(SB)/8, $0x0e0e0e0e0e0e0e0e
DATA scaleShuf<>+120(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL scaleShuf<>(SB), RODATA|NOPTR, $128

// One 32-value group of a K-quant block: unsigned weights in Y(w) times
// the 32 activations at off(DI), minus Y(sub) (the bias term or nothing),
// times the group's two scales from X11, into the int32 lanes of Y9.
#define KGROUP(w, off, k) \
	VMOVDQU off(DI), Y4 \
	VPMADDUBSW Y4, w, w \
	VPSHUFB scaleShuf<>+(16*(k))(SB), X11, X12 \
	VPMOVSXBW X12, Y12 \
	VPMADDWD Y12, w, w \
	VPADDD w, Y9, Y9

// The same for Q6_K: the weights are stored plus 32, so 32 times the
// activations (VPMADDUBSW with Y6 = 32s) is subtracted before scaling.
#define Q6GROUP(w, off, k) KSGROUP(w, Y6, off, k)

// KSGROUP is Q6GROUP with the subtracted weights in Y(sub): Q6_K's
// constant 32s, Q3_K's 4 where the high bit is clear.
#define KSGROUP(w, sub, off, k) \
	VMOVDQU off(DI), Y4 \
	VPMADDUBSW Y4, sub, Y5 \
	VPMADDUBSW Y4, w, w \
	VPSUBW Y5, w, w \
	VPSHUFB scaleShuf<>+(16*(k))(SB), X11, X12 \
	VPMOVSXBW X12, Y12 \
	VPMADDWD Y12, w, w \
	VPADDD w, Y9, Y9

// One 128-value half h of a Q6_K block: low nibbles from ql (64 bytes at
// 64h), two high bits from qh (32 bytes at 128+32h), groups 4h..4h+3.
// Q6_K weight building, per 128-value half h: Q6LOAD loads ql (Y1, Y2)
// and qh (Y3); Q6Wk leaves the 32 6-bit weights (plus 32) of group k of
// the half in Y14 (low 4 bits from ql, high 2 from qh), using Y13.
#define Q6LOAD(h) \
	VMOVDQU (64*h)(SI), Y1 \
	VMOVDQU (64*h+32)(SI), Y2 \
	VMOVDQU (128+32*h)(SI), Y3

#define Q6W0 \
	VPAND Y7, Y3, Y13 \
	VPSLLW $4, Y13, Y13 \
	VPAND Y8, Y1, Y14 \
	VPOR Y13, Y14, Y14

#define Q6W1 \
	VPSRLW $2, Y3, Y13 \
	VPAND Y7, Y13, Y13 \
	VPSLLW $4, Y13, Y13 \
	VPAND Y8, Y2, Y14 \
	VPOR Y13, Y14, Y14

#define Q6W2 \
	VPSRLW $4, Y3, Y13 \
	VPAND Y7, Y13, Y13 \
	VPSLLW $4, Y13, Y13 \
	VPSRLW $4, Y1, Y14 \
	VPAND Y8, Y14, Y14 \
	VPOR Y13, Y14, Y14

#define Q6W3 \
	VPSRLW $6, Y3, Y13 \
	VPAND Y7, Y13, Y13 \
	VPSLLW $4, Y13, Y13 \
	VPSRLW $4, Y2, Y14 \
	VPAND Y8, Y14, Y14 \
	VPOR Y13, Y14, Y14

#define Q6HALF(h) \
	Q6LOAD(h) \
	Q6W0 \
	Q6GROUP(Y14, 4+128*h, 4*h) \
	Q6W1 \
	Q6GROUP(Y14, 36+128*h, 4*h+1) \
	Q6W2 \
	Q6GROUP(Y14, 68+128*h, 4*h+2) \
	Q6W3 \
	Q6GROUP(Y14, 100+128*h, 4*h+3)

// func dotQ6_KAVX2(x, y *byte, nb int) float32
// ggml's AVX2 q6_K_q8_K: per super-block the integer sum in 8 int32 lanes,
// converted and accumulated with one FMA by d = y.d * x.d into 8 float
// lanes, reduced at the end.
TEXT ·dotQ6_KAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x03030303, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x20202020, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6
q6kloop:
	TESTQ CX, CX
	JEQ  q6kdone
	VMOVDQU 192(SI), X11
	VPXOR Y9, Y9, Y9
	Q6HALF(0)
	Q6HALF(1)
	MOVWLZX 208(SI), AX
	VMOVD AX, X1
	VCVTPH2PS X1, X1
	VMULSS (DI), X1, X1
	VBROADCASTSS X1, Y1
	VCVTDQ2PS Y9, Y9
	VFMADD231PS Y9, Y1, Y0
	ADDQ $210, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q6kloop
q6kdone:
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// One 128-value half h of a Q2_K block: 32 bytes of 2-bit values at
// 16+32h, four groups by shift, scales 8h..8h+7 (low nibbles in X11).
#define Q2HALF(h) \
	VMOVDQU (16+32*h)(SI), Y1 \
	VPAND Y7, Y1, Y2 \
	KGROUP(Y2, 4+128*h, 4*h) \
	VPSRLW $2, Y1, Y2 \
	VPAND Y7, Y2, Y2 \
	KGROUP(Y2, 36+128*h, 4*h+1) \
	VPSRLW $4, Y1, Y2 \
	VPAND Y7, Y2, Y2 \
	KGROUP(Y2, 68+128*h, 4*h+2) \
	VPSRLW $6, Y1, Y2 \
	VPAND Y7, Y2, Y2 \
	KGROUP(Y2, 100+128*h, 4*h+3)

// func dotQ2_KAVX2(x, y *byte, nb int) float32
// ggml's AVX2 q2_K_q8_K: per super-block the mins term (high nibbles of
// the scales times the activation block sums, VPMADDWD into 8 lanes) is
// accumulated first with -y.d * x.dmin, then the scaled 2-bit products
// with y.d * x.d, both into the same 8 float lanes.
TEXT ·dotQ2_KAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x03030303, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
q2kloop:
	TESTQ CX, CX
	JEQ  q2kdone
	VMOVDQU (SI), X10
	VPAND X8, X10, X11
	VPSRLW $4, X10, X10
	VPAND X8, X10, X10
	VPMOVZXBW X10, Y10
	VPMADDWD 260(DI), Y10, Y10
	VCVTDQ2PS Y10, Y10
	VMOVSS (DI), X1
	MOVWLZX 82(SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMULSS X2, X1, X2
	VBROADCASTSS X2, Y2
	VFNMADD231PS Y10, Y2, Y0
	VPXOR Y9, Y9, Y9
	Q2HALF(0)
	Q2HALF(1)
	MOVWLZX 80(SI), AX
	VMOVD AX, X2
	VCVTPH2PS X2, X2
	VMULSS (DI), X2, X2
	VBROADCASTSS X2, Y2
	VCVTDQ2PS Y9, Y9
	VFMADD231PS Y9, Y2, Y0
	ADDQ $84, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q2kloop
q2kdone:
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func dotF32x4AVX2(w, a *float32, stride, n int, out *[4]float32)
// Four dot products of one weight row w with the activation rows a,
// a+stride, a+2*stride and a+3*stride (stride in floats): each weight
// vector is loaded once for four rows (two 8-lane accumulators per row),
// the rows reduced together with horizontal adds, then a scalar tail.
TEXT ·dotF32x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ stride+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (DI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
x4loop16:
	CMPQ CX, $16
	JLT  x4loop8
	VMOVUPS (SI), Y8
	VMOVUPS 32(SI), Y9
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS 32(DI), Y9, Y1
	VFMADD231PS (R9), Y8, Y2
	VFMADD231PS 32(R9), Y9, Y3
	VFMADD231PS (R10), Y8, Y4
	VFMADD231PS 32(R10), Y9, Y5
	VFMADD231PS (R11), Y8, Y6
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	SUBQ $16, CX
	JMP  x4loop16
x4loop8:
	CMPQ CX, $8
	JLT  x4reduce
	VMOVUPS (SI), Y8
	VFMADD231PS (DI), Y8, Y0
	VFMADD231PS (R9), Y8, Y2
	VFMADD231PS (R10), Y8, Y4
	VFMADD231PS (R11), Y8, Y6
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	SUBQ $8, CX
x4reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y5, Y4, Y4
	VADDPS Y7, Y6, Y6
	VHADDPS Y2, Y0, Y0
	VHADDPS Y6, Y4, Y4
	VHADDPS Y4, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
x4tail:
	TESTQ CX, CX
	JEQ  x4done
	VBROADCASTSS (SI), X1
	VMOVSS (DI), X2
	VINSERTPS $0x10, (R9), X2, X2
	VINSERTPS $0x20, (R10), X2, X2
	VINSERTPS $0x30, (R11), X2, X2
	VFMADD231PS X2, X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ $4, R11
	DECQ CX
	JMP  x4tail
x4done:
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func scoresAVX2(q, k *float32, kstride, hd, npos int, scale float32, out *float32) float32
// Attention scores of one query head against npos keys kstride floats
// apart: out[t] = (k[t*kstride:] . q) * scale for hd a multiple of 8,
// each dot summed exactly as dotF32AVX2 sums it (so scores do not depend on
// which of the two computed them) without a call per key; returns the
// maximum score (-Inf when npos is 0).
TEXT ·scoresAVX2(SB), NOSPLIT, $0-60
	MOVQ q+0(FP), DI
	MOVQ k+8(FP), SI
	MOVQ kstride+16(FP), R8
	SHLQ $2, R8
	MOVQ hd+24(FP), BX
	SHLQ $2, BX
	MOVQ npos+32(FP), CX
	VMOVSS scale+40(FP), X15
	MOVQ out+48(FP), DX
	MOVL $0xff800000, AX
	VMOVD AX, X14
sckey:
	TESTQ CX, CX
	JEQ  scdone
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ AX, AX
sc32:
	LEAQ 128(AX), R9
	CMPQ R9, BX
	JGT  sc8
	VMOVUPS (SI)(AX*1), Y4
	VMOVUPS 32(SI)(AX*1), Y5
	VMOVUPS 64(SI)(AX*1), Y6
	VMOVUPS 96(SI)(AX*1), Y7
	VFMADD231PS (DI)(AX*1), Y4, Y0
	VFMADD231PS 32(DI)(AX*1), Y5, Y1
	VFMADD231PS 64(DI)(AX*1), Y6, Y2
	VFMADD231PS 96(DI)(AX*1), Y7, Y3
	MOVQ R9, AX
	JMP  sc32
sc8:
	CMPQ AX, BX
	JGE  screduce
	VMOVUPS (SI)(AX*1), Y4
	VFMADD231PS (DI)(AX*1), Y4, Y0
	ADDQ $32, AX
	JMP  sc8
screduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMULSS X15, X0, X0
	VMOVSS X0, (DX)
	VMAXSS X14, X0, X14
	ADDQ R8, SI
	ADDQ $4, DX
	DECQ CX
	JMP  sckey
scdone:
	VZEROUPPER
	MOVSS X14, ret+56(FP)
	RET

// One Q8_0 block of the four-row kernel: activation row at (reg), its
// scale times the weight scale in X1, the sign-adjusted products into the
// float lanes of acc, exactly as BLOCK_SCALE and DOT_I8 do for one row.
#define Q8ROW(reg, acc) \
	MOVWLZX (reg), AX \
	VMOVD AX, X3 \
	VCVTPH2PS X3, X3 \
	VMULSS X3, X1, X3 \
	VBROADCASTSS X3, Y3 \
	VMOVDQU 2(reg), Y5 \
	VPSIGNB Y2, Y5, Y5 \
	VPMADDUBSW Y5, Y4, Y6 \
	VPMADDWD Y7, Y6, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VFMADD231PS Y6, Y3, acc

// Q8ROWV is Q8ROW with VPMADDUBSW and VPMADDWD replaced by one AVX-512
// VNNI VPDPBUSD (ymm, EVEX): one multiply instead of two and the same
// int32 lanes, since VPMADDUBSW's int16 pairs never saturate here
// (|w| <= 128 times activations in [-127, 127]: at most 32512).
#define Q8ROWV(reg, acc) \
	MOVWLZX (reg), AX \
	VMOVD AX, X3 \
	VCVTPH2PS X3, X3 \
	VMULSS X3, X1, X3 \
	VBROADCASTSS X3, Y3 \
	VMOVDQU 2(reg), Y5 \
	VPSIGNB Y2, Y5, Y5 \
	VPXOR Y6, Y6, Y6 \
	VPDPBUSD Y5, Y4, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VFMADD231PS Y6, Y3, acc

// The four-row Q8_0 and Q4_0 kernels (X4_INIT, a block macro per weight
// block, X4_OUT): weights at SI, activation rows at DI, R9 (DI+R8), R10,
// R11, blocks in CX, their float accumulators Y0, Y8, Y9, Y10, int16 ones
// in Y7; X4_OUT stores the four results at DX.
#define X4_INIT \
	LEAQ (DI)(R8*1), R9 \
	LEAQ (R9)(R8*1), R10 \
	LEAQ (R10)(R8*1), R11 \
	VXORPS Y0, Y0, Y0 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	MOVL $0x00010001, AX \
	VMOVD AX, X7 \
	VPBROADCASTD X7, Y7

// The four rows' blocks with row macro ROW (Q8ROW or Q8ROWV), the weight
// block's signed values in Y2, absolute values in Y4 and scale in X1.
#define X4_ROWS(ROW) \
	VPSIGNB Y2, Y2, Y4 \
	ROW(DI, Y0) \
	ROW(R9, Y8) \
	ROW(R10, Y9) \
	ROW(R11, Y10) \
	ADDQ $34, DI \
	ADDQ $34, R9 \
	ADDQ $34, R10 \
	ADDQ $34, R11

#define X4_OUT \
	HSUM_Y0 \
	VMOVSS X0, (DX) \
	VMOVAPS Y8, Y0 \
	HSUM_Y0 \
	VMOVSS X0, 4(DX) \
	VMOVAPS Y9, Y0 \
	HSUM_Y0 \
	VMOVSS X0, 8(DX) \
	VMOVAPS Y10, Y0 \
	HSUM_Y0 \
	VMOVSS X0, 12(DX) \
	VZEROUPPER

// One Q8_0 weight block of the four-row kernel, its scale into X1.
#define Q8X4_BLOCK(ROW) \
	MOVWLZX (SI), AX \
	VMOVD AX, X1 \
	VCVTPH2PS X1, X1 \
	VMOVDQU 2(SI), Y2 \
	X4_ROWS(ROW) \
	ADDQ $34, SI

// func dotQ8_0x4AVX2(w, a *byte, astride, nb int, out *[4]float32)
// Four dotQ8_0AVX2 products of one weight row with the activation rows at
// a, a+astride, a+2*astride, a+3*astride (bytes): the weight block, its
// absolute values and its scale are loaded once for the four rows; each
// row's sums are the single-row kernel's, bit for bit.
TEXT ·dotQ8_0x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), R8
	MOVQ nb+24(FP), CX
	X4_INIT
q8x4loop:
	TESTQ CX, CX
	JEQ  q8x4done
	Q8X4_BLOCK(Q8ROW)
	DECQ CX
	JMP  q8x4loop
q8x4done:
	MOVQ out+32(FP), DX
	X4_OUT
	RET

// func dotQ8_0x4VNNI(w, a *byte, astride, nb int, out *[4]float32)
// dotQ8_0x4AVX2 with Q8ROWV: the same results, bit for bit.
TEXT ·dotQ8_0x4VNNI(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), R8
	MOVQ nb+24(FP), CX
	X4_INIT
q8x4vloop:
	TESTQ CX, CX
	JEQ  q8x4vdone
	Q8X4_BLOCK(Q8ROWV)
	DECQ CX
	JMP  q8x4vloop
q8x4vdone:
	MOVQ out+32(FP), DX
	X4_OUT
	RET

// One activation row's share of a Q4_K quarter in the two-row kernel:
// the nibbles in Y3 (low) and Y2 (high), scales in Y10/Y11, activations
// at (reg), int32 sums into acc (Q4K_QUARTER's arithmetic).
#define Q4K2ROW(j, reg, acc) \
	VMOVDQU (4+64*j)(reg), Y4 \
	VPMADDUBSW Y4, Y3, Y4 \
	VPMADDWD Y10, Y4, Y4 \
	VMOVDQU (36+64*j)(reg), Y5 \
	VPMADDUBSW Y5, Y2, Y5 \
	VPMADDWD Y11, Y5, Y5 \
	VPADDD Y4, acc, acc \
	VPADDD Y5, acc, acc

// A Q4_K quarter for both rows: scales and nibbles decoded once.
#define Q4K2_QUARTER(j) \
	Q4K_NIBBLES(j) \
	Q4K2ROW(j, DI, Y9) \
	Q4K2ROW(j, BX, Y1)

// The mins term of one row: bsums at 260(reg) against the mins in X3,
// scaled by the row's d times dmin (X14), subtracted from macc.
#define Q4K2MINS(reg, macc) \
	VMOVSS (reg), X15 \
	VMULSS X14, X15, X15 \
	VMOVDQU 260(reg), Y4 \
	VEXTRACTI128 $1, Y4, X5 \
	VPHADDW X5, X4, X4 \
	VPMADDWD X4, X3, X4 \
	VCVTDQ2PS X4, X4 \
	VBROADCASTSS X15, X15 \
	VFNMADD231PS X4, X15, macc

// The scaled block sum of one row: acc += float(iacc) * (row d * d).
#define Q4K2SUM(reg, iacc, acc) \
	VCVTDQ2PS iacc, iacc \
	VMOVSS (reg), X15 \
	VMULSS X13, X15, X15 \
	VBROADCASTSS X15, Y15 \
	VFMADD231PS iacc, Y15, acc

// Reduce the float lanes of Y0 and the mins lanes of X12 of one row
// as dotQ4_KAVX2 does and store the result at off(DX).
#define Q4K2OUT(off) \
	VMOVHLPS X12, X12, X1 \
	VADDPS X1, X12, X12 \
	VMOVSHDUP X12, X1 \
	VADDSS X1, X12, X12 \
	HSUM_Y0 \
	VADDSS X12, X0, X0 \
	VMOVSS X0, off(DX)

// func dotQ4_Kx2AVX2(w, a *byte, astride, nb int, out *[2]float32)
// Two dotQ4_KAVX2 products of one weight row with the activation rows at
// a and a+astride (bytes): the scales, mins and nibbles of each weight
// super-block are decoded once for both; each row's arithmetic is the
// single-row kernel's, bit for bit.
TEXT ·dotQ4_Kx2AVX2(SB), NOSPLIT, $16-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), BX
	ADDQ DI, BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y6, Y6, Y6
	VXORPS X12, X12, X12
	VXORPS X7, X7, X7
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
q4k2loop:
	TESTQ CX, CX
	JEQ  q4k2done
	MOVWLZX (SI), AX
	VMOVD AX, X13
	VCVTPH2PS X13, X13
	MOVWLZX 2(SI), AX
	VMOVD AX, X14
	VCVTPH2PS X14, X14
	Q4K_UNPACK
	Q4K2MINS(DI, X12)
	Q4K2MINS(BX, X7)
	VPXOR Y9, Y9, Y9
	VPXOR Y1, Y1, Y1
	Q4K2_QUARTER(0)
	Q4K2_QUARTER(1)
	Q4K2_QUARTER(2)
	Q4K2_QUARTER(3)
	Q4K2SUM(DI, Y9, Y0)
	Q4K2SUM(BX, Y1, Y6)
	ADDQ $144, SI
	ADDQ $292, DI
	ADDQ $292, BX
	DECQ CX
	JMP  q4k2loop
q4k2done:
	MOVQ out+32(FP), DX
	Q4K2OUT(0)
	VMOVAPS Y6, Y0
	VMOVAPS X7, X12
	Q4K2OUT(4)
	VZEROUPPER
	RET

// One Q6_K group for one row of the two-row kernel: weights (plus 32) in
// Y14, scales in Y12, activations read from memory at off(reg), int32
// sums into acc; tmp is clobbered (Q6GROUP's arithmetic).
#define Q6ROW(off, reg, tmp, acc) KSROW(Y6, off, reg, tmp, acc)

// KSROW is Q6ROW with the subtracted weights in sub (KSGROUP's
// arithmetic).
#define KSROW(sub, off, reg, tmp, acc) \
	VPMADDUBSW off(reg), sub, Y5 \
	VPMADDUBSW off(reg), Y14, tmp \
	VPSUBW Y5, tmp, tmp \
	VPMADDWD Y12, tmp, tmp \
	VPADDD tmp, acc, acc

// One Q6_K group for both rows: the weights and the group's scales are
// built once.
#define Q6GROUP2(off, k) \
	VPSHUFB scaleShuf<>+(16*(k))(SB), X11, X12 \
	VPMOVSXBW X12, Y12 \
	Q6ROW(off, DI, Y13, Y9) \
	Q6ROW(off, BX, Y15, Y4)

// Q6HALF for both rows (see Q6HALF).
#define Q6HALF2(h) \
	Q6LOAD(h) \
	Q6W0 \
	Q6GROUP2(4+128*h, 4*h) \
	Q6W1 \
	Q6GROUP2(36+128*h, 4*h+1) \
	Q6W2 \
	Q6GROUP2(68+128*h, 4*h+2) \
	Q6W3 \
	Q6GROUP2(100+128*h, 4*h+3)

// The scaled super-block sum of one row: acc += float(iacc) * (d * row d).
#define Q6SUM(reg, iacc, acc) \
	MOVWLZX 208(SI), AX \
	VMOVD AX, X1 \
	VCVTPH2PS X1, X1 \
	VMULSS (reg), X1, X1 \
	VBROADCASTSS X1, Y1 \
	VCVTDQ2PS iacc, iacc \
	VFMADD231PS iacc, Y1, acc

// func dotQ6_Kx2AVX2(w, a *byte, astride, nb int, out *[2]float32)
// Two dotQ6_KAVX2 products of one weight row with the activation rows at
// a and a+astride (bytes): each group's 6-bit weights and scales are built
// once for both; each row's arithmetic is the single-row kernel's, bit for
// bit.
TEXT ·dotQ6_Kx2AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), BX
	ADDQ DI, BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x03030303, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x20202020, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6
q6k2loop:
	TESTQ CX, CX
	JEQ  q6k2done
	VMOVDQU 192(SI), X11
	VPXOR Y9, Y9, Y9
	VPXOR Y4, Y4, Y4
	Q6HALF2(0)
	Q6HALF2(1)
	Q6SUM(DI, Y9, Y0)
	Q6SUM(BX, Y4, Y10)
	ADDQ $210, SI
	ADDQ $292, DI
	ADDQ $292, BX
	DECQ CX
	JMP  q6k2loop
q6k2done:
	MOVQ out+32(FP), DX
	HSUM_Y0
	VMOVSS X0, (DX)
	VMOVAPS Y10, Y0
	HSUM_Y0
	VMOVSS X0, 4(DX)
	VZEROUPPER
	RET

// kvIQ4NL<>: ggml's kvalues_iq4nl as 16 signed bytes, the table VPSHUFB
// looks IQ4_NL nibbles up in.
DATA kvIQ4NL<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA kvIQ4NL<>+8(SB)/8, $0x7159453526190d01
GLOBL kvIQ4NL<>(SB), RODATA|NOPTR, $16

// One IQ4_NL block at xo(SI) against the q8_0 block at yo(DI): nibbles
// looked up in the codebook (Y9; low nibbles are elements 0-15, high
// 16-31), sign-adjusted pair products summed to int32, converted and
// accumulated into acc with the product of the two scales (ggml's AVX2
// mul_add_epi8 and fmadd).
#define IQ4NL_BLOCK(xo, yo, acc) \
	MOVWLZX xo(SI), AX \
	VMOVD AX, X1 \
	VCVTPH2PS X1, X1 \
	MOVWLZX yo(DI), AX \
	VMOVD AX, X2 \
	VCVTPH2PS X2, X2 \
	VMULSS X1, X2, X1 \
	VBROADCASTSS X1, Y1 \
	VMOVDQU (xo+2)(SI), X2 \
	VPSRLW $4, X2, X3 \
	VINSERTI128 $1, X3, Y2, Y2 \
	VPAND Y8, Y2, Y2 \
	VPSHUFB Y2, Y9, Y2 \
	VMOVDQU (yo+2)(DI), Y3 \
	VPSIGNB Y2, Y2, Y4 \
	VPSIGNB Y2, Y3, Y5 \
	VPMADDUBSW Y5, Y4, Y6 \
	VPMADDWD Y7, Y6, Y6 \
	VCVTDQ2PS Y6, Y6 \
	VFMADD231PS Y6, Y1, acc

// func dotIQ4_NLAVX2(x, y *byte, npairs int) float32
// ggml's AVX2 iq4_nl x q8_0 dot over npairs pairs of blocks: even blocks
// accumulate in Y0, odd ones in Y10, added before the final horizontal
// sum (an odd last block is the caller's, as ggml's scalar tail).
TEXT ·dotIQ4_NLAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ npairs+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	VBROADCASTI128 kvIQ4NL<>(SB), Y9
iq4loop:
	TESTQ CX, CX
	JEQ  iq4done
	IQ4NL_BLOCK(0, 0, Y0)
	IQ4NL_BLOCK(18, 34, Y10)
	ADDQ $36, SI
	ADDQ $68, DI
	DECQ CX
	JMP  iq4loop
iq4done:
	VADDPS Y10, Y0, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q1SUB(k): q8_0 block k of a Q1_0 block (SI) against its 32 sign bits
// (bytes 4k-4k+3 of qs): each bit spread to a byte (Y9 picks the byte,
// Y10 the bit), 0xff where it is clear, which negates the activation
// (x^m - m); pair sums against byte ones (Y8) and int16 ones (Y7) give 8
// int32 lanes, converted into Y3; the block's scale broadcast into Y4
// (ggml's AVX2 q1_0 x q8_0 inner step).
#define Q1SUB(k) \
	VPBROADCASTD (2+4*k)(SI), Y2 \
	VPSHUFB Y9, Y2, Y2 \
	VPAND Y10, Y2, Y2 \
	VPCMPEQB Y11, Y2, Y2 \
	VPXOR (34*k+2)(DI), Y2, Y3 \
	VPSUBB Y2, Y3, Y3 \
	VPMADDUBSW Y3, Y8, Y3 \
	VPMADDWD Y7, Y3, Y3 \
	VCVTDQ2PS Y3, Y3 \
	MOVWLZX (34*k)(DI), AX \
	VMOVD AX, X4 \
	VCVTPH2PS X4, X4 \
	VBROADCASTSS X4, Y4

// func dotQ1_0AVX2(x, y *byte, nb int) float32
// ggml's AVX2 q1_0 x q8_0 dot over nb 128-value blocks: per block the four
// q8_0 blocks' lanes times their scales (a multiply, then three FMAs),
// that sum times the weight scale FMA'd into Y0, one horizontal sum at
// the end.
TEXT ·dotQ1_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x01010101, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	VMOVDQU scaleShuf<>(SB), Y9
	MOVQ $0x8040201008040201, AX
	VMOVQ AX, X10
	VPBROADCASTQ X10, Y10
	VPXOR Y11, Y11, Y11
q1loop:
	TESTQ CX, CX
	JEQ  q1done
	Q1SUB(0)
	VMULPS Y3, Y4, Y5
	Q1SUB(1)
	VFMADD231PS Y3, Y4, Y5
	Q1SUB(2)
	VFMADD231PS Y3, Y4, Y5
	Q1SUB(3)
	VFMADD231PS Y3, Y4, Y5
	MOVWLZX (SI), AX
	VMOVD AX, X6
	VCVTPH2PS X6, X6
	VBROADCASTSS X6, Y6
	VFMADD231PS Y5, Y6, Y0
	ADDQ $18, SI
	ADDQ $136, DI
	DECQ CX
	JMP  q1loop
q1done:
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q2SUB(xo, yo, acc): the 32 2-bit weights of the 8 bytes at xo(SI)
// against the q8_0 block at yo(DI): each byte zero-extended to a dword and
// its four fields moved to its four bytes (v | v<<6 | v<<12 | v<<18, then
// & 3), q*y - 1*y pair sums (Y8: byte ones) to int32 lanes, converted and
// FMA'd into acc with the weight scale (X5) times the block's scale
// (ggml's AVX2 q2_0 x q8_0 step).
#define Q2SUB(xo, yo, acc) \
	VPMOVZXBD (xo)(SI), Y2 \
	VPSLLD $12, Y2, Y3 \
	VPOR Y3, Y2, Y2 \
	VPSLLD $6, Y2, Y3 \
	VPOR Y3, Y2, Y2 \
	VPAND Y9, Y2, Y2 \
	VMOVDQU (yo+2)(DI), Y3 \
	VPMADDUBSW Y3, Y2, Y2 \
	VPMADDUBSW Y3, Y8, Y4 \
	VPSUBW Y4, Y2, Y2 \
	VPMADDWD Y7, Y2, Y2 \
	VCVTDQ2PS Y2, Y2 \
	MOVWLZX (yo)(DI), AX \
	VMOVD AX, X4 \
	VCVTPH2PS X4, X4 \
	VMULSS X4, X5, X4 \
	VBROADCASTSS X4, Y4 \
	VFMADD231PS Y2, Y4, acc

// Q2BLOCK: the Q2_0 block at xo(SI) (two q8_0 blocks from yo(DI)) into acc.
#define Q2BLOCK(xo, yo, acc) \
	MOVWLZX (xo)(SI), AX \
	VMOVD AX, X5 \
	VCVTPH2PS X5, X5 \
	Q2SUB(xo+2, yo, acc) \
	Q2SUB(xo+10, yo+34, acc)

// func dotQ2_0AVX2(x, y *byte, nb int) float32
// ggml's AVX2 q2_0 x q8_0 dot over nb 64-value blocks: even blocks
// accumulate in Y0, odd ones in Y10 (an odd last block in Y0), added
// before the horizontal sum.
TEXT ·dotQ2_0AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x01010101, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x03030303, AX
	VMOVD AX, X9
	VPBROADCASTD X9, Y9
q2loop:
	CMPQ CX, $2
	JLT  q2tail
	Q2BLOCK(0, 0, Y0)
	Q2BLOCK(18, 68, Y10)
	ADDQ $36, SI
	ADDQ $136, DI
	SUBQ $2, CX
	JMP  q2loop
q2tail:
	TESTQ CX, CX
	JEQ  q2done
	Q2BLOCK(0, 0, Y0)
q2done:
	VADDPS Y10, Y0, Y0
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// Q1SUB2(k, OP): sub-block k of a Q1_0 block for two activation rows (DI
// and DI+R8): the sign mask is spread once (Y2), each row's lanes and scale
// follow Q1SUB's steps into Y3/Y4 and Y13/Y14, and OP (VMULPS for the first
// sub-block, VFMADD231PS after) accumulates them into Y5 and Y6.
#define Q1SUB2(k, OP) \
	VPBROADCASTD (2+4*k)(SI), Y2 \
	VPSHUFB Y9, Y2, Y2 \
	VPAND Y10, Y2, Y2 \
	VPCMPEQB Y11, Y2, Y2 \
	VPXOR (34*k+2)(DI), Y2, Y3 \
	VPSUBB Y2, Y3, Y3 \
	VPMADDUBSW Y3, Y8, Y3 \
	VPMADDWD Y7, Y3, Y3 \
	VCVTDQ2PS Y3, Y3 \
	MOVWLZX (34*k)(DI), AX \
	VMOVD AX, X4 \
	VCVTPH2PS X4, X4 \
	VBROADCASTSS X4, Y4 \
	OP Y3, Y4, Y5 \
	VPXOR (34*k+2)(DI)(R8*1), Y2, Y13 \
	VPSUBB Y2, Y13, Y13 \
	VPMADDUBSW Y13, Y8, Y13 \
	VPMADDWD Y7, Y13, Y13 \
	VCVTDQ2PS Y13, Y13 \
	MOVWLZX (34*k)(DI)(R8*1), AX \
	VMOVD AX, X14 \
	VCVTPH2PS X14, X14 \
	VBROADCASTSS X14, Y14 \
	OP Y13, Y14, Y6

// func dotQ1_0x2AVX2(w, a *byte, astride, nb int, out *[2]float32)
// dotQ1_0AVX2 for the activation rows at a and a+astride, each weight
// block decoded once: each result is the single-row kernel's bit for bit.
TEXT ·dotQ1_0x2AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), R9
	VXORPS Y0, Y0, Y0
	VXORPS Y12, Y12, Y12
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x01010101, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	VMOVDQU scaleShuf<>(SB), Y9
	MOVQ $0x8040201008040201, AX
	VMOVQ AX, X10
	VPBROADCASTQ X10, Y10
	VPXOR Y11, Y11, Y11
q1x2loop:
	TESTQ CX, CX
	JEQ  q1x2done
	Q1SUB2(0, VMULPS)
	Q1SUB2(1, VFMADD231PS)
	Q1SUB2(2, VFMADD231PS)
	Q1SUB2(3, VFMADD231PS)
	MOVWLZX (SI), AX
	VMOVD AX, X15
	VCVTPH2PS X15, X15
	VBROADCASTSS X15, Y15
	VFMADD231PS Y5, Y15, Y0
	VFMADD231PS Y6, Y15, Y12
	ADDQ $18, SI
	ADDQ $136, DI
	DECQ CX
	JMP  q1x2loop
q1x2done:
	HSUM_Y0
	MOVSS X0, 0(R9)
	VMOVAPS Y12, Y0
	HSUM_Y0
	MOVSS X0, 4(R9)
	VZEROUPPER
	RET

// Q2ROW(ao, yo, acc): one activation row's part of Q2SUB: the decoded
// weights in Y2 against the q8_0 block at yo(DI)(ao), into acc.
#define Q2ROW(ao, yo, acc) \
	VMOVDQU (yo+2)(DI)(ao*1), Y3 \
	VPMADDUBSW Y3, Y2, Y4 \
	VPMADDUBSW Y3, Y8, Y3 \
	VPSUBW Y3, Y4, Y4 \
	VPMADDWD Y7, Y4, Y4 \
	VCVTDQ2PS Y4, Y4 \
	MOVWLZX (yo)(DI)(ao*1), AX \
	VMOVD AX, X3 \
	VCVTPH2PS X3, X3 \
	VMULSS X3, X5, X3 \
	VBROADCASTSS X3, Y3 \
	VFMADD231PS Y4, Y3, acc

// Q2SUB2(xo, yo, acc0, acc1): Q2SUB for two activation rows (DI and
// DI+R8), the 2-bit weights decoded once.
#define Q2SUB2(xo, yo, acc0, acc1) \
	VPMOVZXBD (xo)(SI), Y2 \
	VPSLLD $12, Y2, Y3 \
	VPOR Y3, Y2, Y2 \
	VPSLLD $6, Y2, Y3 \
	VPOR Y3, Y2, Y2 \
	VPAND Y9, Y2, Y2 \
	Q2ROW(R10, yo, acc0) \
	Q2ROW(R8, yo, acc1)

#define Q2BLOCK2(xo, yo, acc0, acc1) \
	MOVWLZX (xo)(SI), AX \
	VMOVD AX, X5 \
	VCVTPH2PS X5, X5 \
	Q2SUB2(xo+2, yo, acc0, acc1) \
	Q2SUB2(xo+10, yo+34, acc0, acc1)

// func dotQ2_0x2AVX2(w, a *byte, astride, nb int, out *[2]float32)
// dotQ2_0AVX2 for the activation rows at a and a+astride (even blocks in
// Y0 and Y12, odd ones in Y10 and Y13), each weight block decoded once:
// each result is the single-row kernel's bit for bit.
TEXT ·dotQ2_0x2AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), R8
	MOVQ nb+24(FP), CX
	MOVQ out+32(FP), R9
	XORQ R10, R10
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	MOVL $0x00010001, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x01010101, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x03030303, AX
	VMOVD AX, X9
	VPBROADCASTD X9, Y9
q2x2loop:
	CMPQ CX, $2
	JLT  q2x2tail
	Q2BLOCK2(0, 0, Y0, Y12)
	Q2BLOCK2(18, 68, Y10, Y13)
	ADDQ $36, SI
	ADDQ $136, DI
	SUBQ $2, CX
	JMP  q2x2loop
q2x2tail:
	TESTQ CX, CX
	JEQ  q2x2done
	Q2BLOCK2(0, 0, Y0, Y12)
q2x2done:
	VADDPS Y10, Y0, Y0
	HSUM_Y0
	MOVSS X0, 0(R9)
	VADDPS Y13, Y12, Y0
	HSUM_Y0
	MOVSS X0, 4(R9)
	VZEROUPPER
	RET

// Q3K_SCALES unpacks the 16 6-bit scales of the Q3_K super-block at SI
// (12 bytes at 96, ggml's aux shuffle: low nibbles from bytes 0-7, two
// high bits from bytes 8-11), minus 32, as int8 into X11 (X6 holds 32s).
// Clobbers R8-R13.
#define Q3K_SCALES \
	MOVL 96(SI), R8 \
	MOVL 100(SI), R9 \
	MOVL 104(SI), R10 \
	MOVL R8, R11 \
	ANDL $0x0f0f0f0f, R11 \
	MOVL R10, R12 \
	ANDL $0x03030303, R12 \
	SHLL $4, R12 \
	ORL  R12, R11 \
	MOVL R9, R13 \
	ANDL $0x0f0f0f0f, R13 \
	MOVL R10, R12 \
	SHRL $2, R12 \
	ANDL $0x03030303, R12 \
	SHLL $4, R12 \
	ORL  R12, R13 \
	SHLQ $32, R13 \
	ORQ  R13, R11 \
	SHRL $4, R8 \
	ANDL $0x0f0f0f0f, R8 \
	MOVL R10, R12 \
	SHRL $4, R12 \
	ANDL $0x03030303, R12 \
	SHLL $4, R12 \
	ORL  R12, R8 \
	SHRL $4, R9 \
	ANDL $0x0f0f0f0f, R9 \
	SHRL $6, R10 \
	ANDL $0x03030303, R10 \
	SHLL $4, R10 \
	ORL  R10, R9 \
	SHLQ $32, R9 \
	ORQ  R9, R8 \
	VMOVQ R11, X11 \
	VPINSRQ $1, R8, X11, X11 \
	VPSUBB X6, X11, X11

// Q3HIGH leaves in Y13 4 for each value whose hmask bit (bit b of the
// hmask in Y3) is clear, else 0: what ggml subtracts (Y8 holds 0x01
// bytes).
#define Q3HIGH(b) \
	VPSRLW $(b), Y3, Y13 \
	VPANDN Y8, Y13, Y13 \
	VPSLLW $2, Y13, Y13

// One Q3_K group of the single-row kernel: low bits in Y14, the
// subtracted 4s in Y13.
#define Q3GROUP(off, k) KSGROUP(Y14, Y13, off, k)

// One 128-value half h of a Q3_K block: 32 bytes of 2-bit values at
// 32+32h, four groups by shift (low 2 bits into Y14, Y7 holds 0x03
// bytes), groups 4h..4h+3, each multiplied by G (Q3GROUP or Q3GROUP2).
#define Q3HALF(h, G) \
	VMOVDQU (32+32*h)(SI), Y1 \
	VPAND Y7, Y1, Y14 \
	Q3HIGH(4*h) \
	G(4+128*h, 4*h) \
	VPSRLW $2, Y1, Y14 \
	VPAND Y7, Y14, Y14 \
	Q3HIGH(4*h+1) \
	G(36+128*h, 4*h+1) \
	VPSRLW $4, Y1, Y14 \
	VPAND Y7, Y14, Y14 \
	Q3HIGH(4*h+2) \
	G(68+128*h, 4*h+2) \
	VPSRLW $6, Y1, Y14 \
	VPAND Y7, Y14, Y14 \
	Q3HIGH(4*h+3) \
	G(100+128*h, 4*h+3)

// The scaled super-block sum of one row: acc += float(iacc) * (d * row d).
#define Q3SUM(reg, iacc, acc) \
	MOVWLZX 108(SI), AX \
	VMOVD AX, X1 \
	VCVTPH2PS X1, X1 \
	VMULSS (reg), X1, X1 \
	VBROADCASTSS X1, Y1 \
	VCVTDQ2PS iacc, iacc \
	VFMADD231PS iacc, Y1, acc

// func dotQ3_KAVX2(x, y *byte, nb int) float32
// ggml's AVX2 q3_K_q8_K: the low 2 bits times the activations minus 4
// times the activations where the high bit is clear, scaled per 16 values,
// in 8 int32 lanes per super-block; converted and accumulated with one FMA
// by d = y.d * x.d into 8 float lanes, reduced at the end.
TEXT ·dotQ3_KAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ nb+16(FP), CX
	VXORPS Y0, Y0, Y0
	MOVL $0x03030303, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x01010101, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x20202020, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6
q3kloop:
	TESTQ CX, CX
	JEQ  q3kdone
	Q3K_SCALES
	VMOVDQU (SI), Y3
	VPXOR Y9, Y9, Y9
	Q3HALF(0, Q3GROUP)
	Q3HALF(1, Q3GROUP)
	Q3SUM(DI, Y9, Y0)
	ADDQ $110, SI
	ADDQ $292, DI
	DECQ CX
	JMP  q3kloop
q3kdone:
	HSUM_Y0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// One Q3_K group for both rows: low bits in Y14, subtracted 4s in Y13,
// the group's scales built once.
#define Q3GROUP2(off, k) \
	VPSHUFB scaleShuf<>+(16*(k))(SB), X11, X12 \
	VPMOVSXBW X12, Y12 \
	KSROW(Y13, off, DI, Y2, Y9) \
	KSROW(Y13, off, BX, Y15, Y4)

// func dotQ3_Kx2AVX2(w, a *byte, astride, nb int, out *[2]float32)
// Two dotQ3_KAVX2 products of one weight row with the activation rows at
// a and a+astride (bytes): each group's weights and scales are built once
// for both; each row's arithmetic is the single-row kernel's, bit for
// bit.
TEXT ·dotQ3_Kx2AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), BX
	ADDQ DI, BX
	MOVQ nb+24(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y10, Y10, Y10
	MOVL $0x03030303, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	MOVL $0x01010101, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	MOVL $0x20202020, AX
	VMOVD AX, X6
	VPBROADCASTD X6, Y6
q3k2loop:
	TESTQ CX, CX
	JEQ  q3k2done
	Q3K_SCALES
	VMOVDQU (SI), Y3
	VPXOR Y9, Y9, Y9
	VPXOR Y4, Y4, Y4
	Q3HALF(0, Q3GROUP2)
	Q3HALF(1, Q3GROUP2)
	Q3SUM(DI, Y9, Y0)
	Q3SUM(BX, Y4, Y10)
	ADDQ $110, SI
	ADDQ $292, DI
	ADDQ $292, BX
	DECQ CX
	JMP  q3k2loop
q3k2done:
	MOVQ out+32(FP), DX
	HSUM_Y0
	VMOVSS X0, (DX)
	VMOVAPS Y10, Y0
	HSUM_Y0
	VMOVSS X0, 4(DX)
	VZEROUPPER
	RET

// One Q4_0 weight block of the four-row kernel: scale into X1, the
// nibbles less 8 into Y2 (Y11: 0x0f, Y12: 8s), then X4_ROWS.
#define Q4X4_BLOCK(ROW) \
	MOVWLZX (SI), AX \
	VMOVD AX, X1 \
	VCVTPH2PS X1, X1 \
	VMOVDQU 2(SI), X2 \
	VPSRLW $4, X2, X3 \
	VINSERTI128 $1, X3, Y2, Y2 \
	VPAND Y11, Y2, Y2 \
	VPSUBB Y12, Y2, Y2 \
	X4_ROWS(ROW) \
	ADDQ $18, SI

#define Q4X4_CONSTS \
	MOVL $0x0f0f0f0f, AX \
	VMOVD AX, X11 \
	VPBROADCASTD X11, Y11 \
	MOVL $0x08080808, AX \
	VMOVD AX, X12 \
	VPBROADCASTD X12, Y12

// func dotQ4_0x4AVX2(w, a *byte, astride, nb int, out *[4]float32)
// Four dotQ4_0AVX2 products of one weight row with the activation rows at
// a, a+astride, a+2*astride, a+3*astride (bytes): each weight block's
// nibbles are decoded, offset and made absolute once for the four rows,
// which then take dotQ8_0x4AVX2's per-row steps; each row's sums are the
// single-row kernel's, bit for bit.
TEXT ·dotQ4_0x4AVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), R8
	MOVQ nb+24(FP), CX
	X4_INIT
	Q4X4_CONSTS
q4x4loop:
	TESTQ CX, CX
	JEQ  q4x4done
	Q4X4_BLOCK(Q8ROW)
	DECQ CX
	JMP  q4x4loop
q4x4done:
	MOVQ out+32(FP), DX
	X4_OUT
	RET

// func dotQ4_0x4VNNI(w, a *byte, astride, nb int, out *[4]float32)
// dotQ4_0x4AVX2 with Q8ROWV: the same results, bit for bit.
TEXT ·dotQ4_0x4VNNI(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ astride+16(FP), R8
	MOVQ nb+24(FP), CX
	X4_INIT
	Q4X4_CONSTS
q4x4vloop:
	TESTQ CX, CX
	JEQ  q4x4vdone
	Q4X4_BLOCK(Q8ROWV)
	DECQ CX
	JMP  q4x4vloop
q4x4vdone:
	MOVQ out+32(FP), DX
	X4_OUT
	RET

// func vdotsAVX2(v, sc *float32, vstride, n, hd int, out *float32)
// out[d] = dotF32AVX2(v + d*vstride, sc, n) for d < hd, each summed exactly
// as dotF32AVX2 sums it, without a call per d: the attention's weighted
// sum over the cache's transposed values. Needs n >= 8 (dotF32's rule).
TEXT ·vdotsAVX2(SB), NOSPLIT, $0-48
	MOVQ v+0(FP), R10
	MOVQ sc+8(FP), R11
	MOVQ vstride+16(FP), R8
	SHLQ $2, R8
	MOVQ n+24(FP), R12
	MOVQ hd+32(FP), BX
	MOVQ out+40(FP), DX
vdrow:
	TESTQ BX, BX
	JEQ  vddone
	MOVQ R10, SI
	MOVQ R11, DI
	MOVQ R12, CX
	DOTF32
	VMOVSS X0, (DX)
	ADDQ $4, DX
	ADDQ R8, R10
	DECQ BX
	JMP  vdrow
vddone:
	VZEROUPPER
	RET

// func scoresQ8_0AVX2(k, q *byte, kstride, nb, npos int, scale float32, out *float32) float32
// out[t] = dotQ8_0AVX2(k + t*kstride, q, nb) * scale for t < npos, each
// key's blocks summed exactly as dotQ8_0AVX2 sums them, without a call per
// key; returns the maximum (-Inf for none).
TEXT ·scoresQ8_0AVX2(SB), NOSPLIT, $0-60
	MOVQ   k+0(FP), R10
	MOVQ   q+8(FP), R11
	MOVQ   kstride+16(FP), R8
	MOVQ   nb+24(FP), R12
	MOVQ   npos+32(FP), CX
	VMOVSS scale+40(FP), X15
	MOVQ   out+48(FP), DX
	MOVL   $0xff800000, AX
	VMOVD  AX, X14
	MOVL   $0x00010001, AX
	VMOVD  AX, X7
	VPBROADCASTD X7, Y7
sq8key:
	TESTQ  CX, CX
	JEQ    sq8done
	VXORPS Y0, Y0, Y0
	MOVQ   R10, SI
	MOVQ   R11, DI
	MOVQ   R12, BX
sq8blk:
	BLOCK_SCALE
	VMOVDQU 2(SI), Y2
	VMOVDQU 2(DI), Y3
	DOT_I8
	ADDQ   $34, SI
	ADDQ   $34, DI
	DECQ   BX
	JNZ    sq8blk
	HSUM_Y0
	VMULSS X15, X0, X0
	VMOVSS X0, (DX)
	VMAXSS X14, X0, X14
	ADDQ   $4, DX
	ADDQ   R8, R10
	DECQ   CX
	JMP    sq8key
sq8done:
	VZEROUPPER
	VMOVSS X14, ret+56(FP)
	RET

// Y(acc) += w (Y5) * (d (Y4) * the 8 int8 values at off(SI)), each
// product rounded: MadQ8_0's steps for 8 lanes (no fused multiply-add).
#define MAD_Q8(off, tmp, acc) \
	VPMOVSXBD off(SI), tmp \
	VCVTDQ2PS tmp, tmp \
	VMULPS Y4, tmp, tmp \
	VMULPS Y5, tmp, tmp \
	VADDPS tmp, acc, acc

// func madQ8_0RowsAVX2(out *float32, v *byte, vstride, nb, npos int, p *float32)
// out += sum over t < npos of p[t] * the dequantized Q8_0 row v + t*vstride
// (nb blocks), in order of t: MadQ8_0RowsAdd with each block's 32 sums in
// four registers across all the rows.
TEXT ·madQ8_0RowsAVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DX
	MOVQ v+8(FP), R10
	MOVQ vstride+16(FP), R8
	MOVQ nb+24(FP), BX
	MOVQ npos+32(FP), R12
	MOVQ p+40(FP), R11
mq8blk:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	MOVQ   R10, SI
	MOVQ   R11, DI
	MOVQ   R12, CX
mq8pos:
	VBROADCASTSS (DI), Y5
	MOVWLZX (SI), AX
	VMOVD   AX, X4
	VCVTPH2PS X4, X4
	VBROADCASTSS X4, Y4
	MAD_Q8(2, Y6, Y0)
	MAD_Q8(10, Y7, Y1)
	MAD_Q8(18, Y8, Y2)
	MAD_Q8(26, Y9, Y3)
	ADDQ   R8, SI
	ADDQ   $4, DI
	DECQ   CX
	JNZ    mq8pos
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ   $128, DX
	ADDQ   $34, R10
	DECQ   BX
	JNZ    mq8blk
	VZEROUPPER
	RET
