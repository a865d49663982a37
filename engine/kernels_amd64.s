//go:build amd64 && !purego

#include "textflag.h"

// func dotF32AVX2(x, y *float32, n int) float32
// Four 8-lane FMA accumulators over 32 floats per step, then 8 at a time,
// then a scalar tail. Requires n >= 8 only for speed; any n >= 0 works.
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
loop32:
	CMPQ CX, $32
	JLT  loop8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32
loop8:
	CMPQ CX, $8
	JLT  reduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8
reduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
tail:
	CMPQ CX, $0
	JEQ  done
	VMOVSS (SI), X4
	VFMADD231SS (DI), X4, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  tail
done:
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

// One 64-value quarter j of a Q4_K block: low nibbles times the next 32
// activations with scale byte 2j, high nibbles with scale byte 2j+1, into
// the int32 lanes of Y9 (ggml's AVX2 q4_K_q8_K inner loop).
#define Q4K_QUARTER(j) \
	MOVBLZX (2*j)(SP), AX \
	VMOVD AX, X10 \
	VPBROADCASTW X10, Y10 \
	MOVBLZX (2*j+1)(SP), AX \
	VMOVD AX, X11 \
	VPBROADCASTW X11, Y11 \
	VMOVDQU (16+32*j)(SI), Y2 \
	VPAND Y8, Y2, Y3 \
	VPSRLW $4, Y2, Y2 \
	VPAND Y8, Y2, Y2 \
	VMOVDQU (4+64*j)(DI), Y4 \
	VPMADDUBSW Y4, Y3, Y3 \
	VPMADDWD Y10, Y3, Y3 \
	VMOVDQU (36+64*j)(DI), Y5 \
	VPMADDUBSW Y5, Y2, Y2 \
	VPMADDWD Y11, Y2, Y2 \
	VPADDD Y3, Y9, Y9 \
	VPADDD Y2, Y9, Y9

// func dotQ4_KAVX2(x, y *byte, nb int) float32
// Per super-block: the 12 packed bytes of 6-bit scales and mins are
// unpacked (ggml's utmp shuffle) into the 16-byte frame, the mins term is
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
	MOVL 4(SI), R8
	MOVL 8(SI), R9
	MOVL 12(SI), R10
	MOVL R10, R11
	SHRL $4, R11
	ANDL $0x0f0f0f0f, R11
	MOVL R9, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL  R12, R11
	MOVL R9, R13
	ANDL $0x3f3f3f3f, R13
	MOVL R10, R9
	ANDL $0x0f0f0f0f, R9
	MOVL R8, R12
	SHRL $6, R12
	ANDL $0x03030303, R12
	SHLL $4, R12
	ORL  R12, R9
	ANDL $0x3f3f3f3f, R8
	MOVL R8, 0(SP)
	MOVL R9, 4(SP)
	MOVL R13, 8(SP)
	MOVL R11, 12(SP)
	VPMOVZXBW 8(SP), X3
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
