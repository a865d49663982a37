//go:build amd64 && !purego

#include "textflag.h"

// Whole-row kernels for the Q8_0 and Q4_0 reference quantizers, one block
// of 32 floats in four YMM registers. Every float operation is the one the
// C code performs (IEEE, per lane), so the bytes are ggml's.

// FP16 converts the float32 in X0 to ggml's half bits in AX (the FP16
// library algorithm of ggml_compute_fp32_to_fp16, which ggml-base uses):
// |f|*2^112*2^-110 plus 2^(max(exp, -14)+13) rounds to ten mantissa bits.
// NaN becomes 0x7e00 with its sign. Clobbers DX, R8, R13, X13, X14.
#define FP16 \
	VMOVD X0, R13; \
	MOVL R13, DX; \
	ANDL $0x7fffffff, DX; \
	VMOVD DX, X13; \
	MOVL $0x77800000, DX; \
	VMOVD DX, X14; \
	VMULSS X14, X13, X13; \
	MOVL $0x08800000, DX; \
	VMOVD DX, X14; \
	VMULSS X14, X13, X13; \
	LEAL (R13)(R13*1), DX; \
	ANDL $0xff000000, DX; \
	MOVL $0x71000000, R8; \
	CMPL DX, R8; \
	CMOVLCS R8, DX; \
	SHRL $1, DX; \
	ADDL $0x07800000, DX; \
	VMOVD DX, X14; \
	VADDSS X13, X14, X14; \
	VMOVD X14, DX; \
	MOVL DX, AX; \
	SHRL $13, AX; \
	ANDL $0x7c00, AX; \
	ANDL $0x0fff, DX; \
	ADDL DX, AX; \
	MOVL R13, DX; \
	ANDL $0x7fffffff, DX; \
	MOVL $0x7e00, R8; \
	CMPL DX, $0x7f800000; \
	CMOVLHI R8, AX; \
	SHRL $16, R13; \
	ANDL $0x8000, R13; \
	ORL R13, AX

// ABSBITS sets Y4..Y7 to the magnitude bits of the block in Y0..Y3.
#define ABSBITS \
	VPAND absmask<>(SB), Y0, Y4; \
	VPAND absmask<>(SB), Y1, Y5; \
	VPAND absmask<>(SB), Y2, Y6; \
	VPAND absmask<>(SB), Y3, Y7

// HMAXU reduces the unsigned maximum of Y8's lanes into R12 (clobbers Y9).
#define HMAXU \
	VEXTRACTI128 $1, Y8, X9; \
	VPMAXUD X9, X8, X8; \
	VPSHUFD $0x4e, X8, X9; \
	VPMAXUD X9, X8, X8; \
	VPSHUFD $0xb1, X8, X9; \
	VPMAXUD X9, X8, X8; \
	VMOVD X8, R12

// PACKBYTES stores the low bytes of the int32 lanes of Y0..Y3 (32 values)
// at (DI) in order (clobbers Y0..Y3).
#define PACKBYTES \
	VPACKUSDW Y1, Y0, Y0; \
	VPACKUSDW Y3, Y2, Y2; \
	VPACKUSWB Y2, Y0, Y0; \
	VPERMD Y0, Y12, Y0; \
	VMOVDQU Y0, (DI)

// INT8S sign-extends the low byte of each int32 lane of Y0..Y3 (C's
// (int8_t) cast of the truncated value).
#define INT8S \
	VPSLLD $24, Y0, Y0; \
	VPSRAD $24, Y0, Y0; \
	VPSLLD $24, Y1, Y1; \
	VPSRAD $24, Y1, Y1; \
	VPSLLD $24, Y2, Y2; \
	VPSRAD $24, Y2, Y2; \
	VPSLLD $24, Y3, Y3; \
	VPSRAD $24, Y3, Y3

// ADDCVT adds Y14 to Y0..Y3 and truncates them to int32 (cvttss2si's
// INT_MIN for NaN and out-of-range values, like cvtt32).
#define ADDCVT \
	VADDPS Y14, Y0, Y0; \
	VADDPS Y14, Y1, Y1; \
	VADDPS Y14, Y2, Y2; \
	VADDPS Y14, Y3, Y3; \
	VCVTTPS2DQ Y0, Y0; \
	VCVTTPS2DQ Y1, Y1; \
	VCVTTPS2DQ Y2, Y2; \
	VCVTTPS2DQ Y3, Y3

// PACKNIBBLES stores qs[j] = (uint8)L[j] | (uint8)(L[j+16] << 4), j < 16,
// for the levels in Y0..Y3 (unmasked, as the Q4 C code packs them).
#define PACKNIBBLES(dst) \
	VPSLLD $4, Y2, Y2; \
	VPSLLD $4, Y3, Y3; \
	VPOR Y2, Y0, Y0; \
	VPOR Y3, Y1, Y1; \
	PACK16(dst)

// PACKNIBBLESMASKED stores qs[j] = (L[j] & 15) | (L[j+16] & 15) << 4, as
// the Q5 C code packs them.
#define PACKNIBBLESMASKED(dst) \
	MOVL $15, DX; \
	VMOVD DX, X14; \
	VPBROADCASTD X14, Y14; \
	VPAND Y14, Y0, Y0; \
	VPAND Y14, Y1, Y1; \
	VPAND Y14, Y2, Y2; \
	VPAND Y14, Y3, Y3; \
	VPSLLD $4, Y2, Y2; \
	VPSLLD $4, Y3, Y3; \
	VPOR Y2, Y0, Y0; \
	VPOR Y3, Y1, Y1; \
	PACK16(dst)

// PACK16 stores the low bytes of the 16 int32 lanes of Y0, Y1 in order.
#define PACK16(dst) \
	VPAND Y10, Y0, Y0; \
	VPAND Y10, Y1, Y1; \
	VPACKUSDW Y1, Y0, Y0; \
	VPERMQ $0xd8, Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPACKUSWB X1, X0, X0; \
	VMOVDQU X0, dst

// PACKQH stores the Q5 high bits: bit j of the 32-bit qh is bit 4 of
// level j (Y0..Y3 hold levels 0..31), moved to the sign bit and collected.
#define PACKQH(dst) \
	VPSLLD $27, Y0, Y4; \
	VMOVMSKPS Y4, AX; \
	VPSLLD $27, Y1, Y4; \
	VMOVMSKPS Y4, DX; \
	SHLL $8, DX; \
	ORL DX, AX; \
	VPSLLD $27, Y2, Y4; \
	VMOVMSKPS Y4, DX; \
	SHLL $16, DX; \
	ORL DX, AX; \
	VPSLLD $27, Y3, Y4; \
	VMOVMSKPS Y4, DX; \
	SHLL $24, DX; \
	ORL DX, AX; \
	MOVL AX, dst

// BLOCKCONSTS loads the constants both kernels use: Y11 = 0x7f800000 (the
// magnitude bits of infinity), Y10 = 0xff, Y12 = packperm.
#define BLOCKCONSTS \
	MOVL $0x7f800000, DX; \
	VMOVD DX, X14; \
	VPBROADCASTD X14, Y11; \
	MOVL $0x000000ff, DX; \
	VMOVD DX, X14; \
	VPBROADCASTD X14, Y10; \
	LEAQ packperm<>(SB), DX; \
	VMOVDQU (DX), Y12

// func q8BlocksAVX2(y *byte, x *float32, nb int, q81 bool) int
// quantize_row_q8_0_ref (q81 false) or quantize_row_q8_1_ref (q81 true,
// which also stores s = sum of the levels times d) over nb blocks; it stops
// before the first block holding a NaN (where C's MAX order matters) and
// returns how many blocks it did.
TEXT ·q8BlocksAVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVBLZX q81+24(FP), R10
	XORQ R11, R11
	BLOCKCONSTS
q8block:
	CMPQ R11, CX
	JGE  q8done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	ABSBITS
	// NaN: magnitude bits above those of infinity.
	VPCMPGTD Y11, Y4, Y8
	VPCMPGTD Y11, Y5, Y9
	VPOR Y9, Y8, Y8
	VPCMPGTD Y11, Y6, Y9
	VPOR Y9, Y8, Y8
	VPCMPGTD Y11, Y7, Y9
	VPOR Y9, Y8, Y8
	VPTEST Y8, Y8
	JNZ  q8done
	VPMAXUD Y5, Y4, Y8
	VPMAXUD Y7, Y6, Y9
	VPMAXUD Y9, Y8, Y8
	HMAXU
	// d = amax/127, id = d ? 1/d : 0.
	VMOVD R12, X0
	MOVL $0x42fe0000, DX
	VMOVD DX, X1
	VDIVSS X1, X0, X0
	VXORPS X2, X2, X2
	VMOVD X0, DX
	TESTL DX, DX
	JZ   q8zero
	MOVL $0x3f800000, DX
	VMOVD DX, X1
	VDIVSS X0, X1, X2
q8zero:
	VMOVD X0, R9 // d, for Q8_1's s
	FP16
	MOVW AX, (DI)
	ADDQ $2, DI
	TESTQ R10, R10
	JZ   q8noS
	ADDQ $2, DI
q8noS:
	VBROADCASTSS X2, Y13
	// roundf(v*id) as add-and-truncate: p + copysign(0.49999997, p).
	MOVL $0x3effffff, DX
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMULPS Y13, Y0, Y0
	VMULPS Y13, Y1, Y1
	VMULPS Y13, Y2, Y2
	VMULPS Y13, Y3, Y3
	VMOVDQU absmask<>(SB), Y9
	VPANDN Y0, Y9, Y4
	VPOR Y14, Y4, Y4
	VADDPS Y4, Y0, Y0
	VPANDN Y1, Y9, Y4
	VPOR Y14, Y4, Y4
	VADDPS Y4, Y1, Y1
	VPANDN Y2, Y9, Y4
	VPOR Y14, Y4, Y4
	VADDPS Y4, Y2, Y2
	VPANDN Y3, Y9, Y4
	VPOR Y14, Y4, Y4
	VADDPS Y4, Y3, Y3
	VCVTTPS2DQ Y0, Y0
	VCVTTPS2DQ Y1, Y1
	VCVTTPS2DQ Y2, Y2
	VCVTTPS2DQ Y3, Y3
	TESTQ R10, R10
	JZ   q8pack
	// Q8_1: s = (sum of the int8 levels) * d, at -2(DI).
	VPSLLD $24, Y0, Y4
	VPSRAD $24, Y4, Y4
	VPSLLD $24, Y1, Y5
	VPSRAD $24, Y5, Y5
	VPADDD Y5, Y4, Y4
	VPSLLD $24, Y2, Y5
	VPSRAD $24, Y5, Y5
	VPADDD Y5, Y4, Y4
	VPSLLD $24, Y3, Y5
	VPSRAD $24, Y5, Y5
	VPADDD Y5, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPADDD X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VPADDD X5, X4, X4
	VCVTDQ2PS X4, X4
	VMOVD R9, X5
	VMULSS X5, X4, X4
	VMOVAPS X4, X5
	VMOVAPS Y0, Y6
	VMOVAPS X5, X0
	FP16
	VMOVAPS Y6, Y0
	MOVW AX, -2(DI)
q8pack:
	VPAND Y10, Y0, Y0
	VPAND Y10, Y1, Y1
	VPAND Y10, Y2, Y2
	VPAND Y10, Y3, Y3
	PACKBYTES
	ADDQ $32, DI
	ADDQ $128, SI
	INCQ R11
	JMP  q8block
q8done:
	VZEROUPPER
	MOVQ R11, ret+32(FP)
	RET

// func symBlocksAVX2(y *byte, x *float32, nb int, bits int)
// quantize_row_q4_0_ref (bits 4) or quantize_row_q5_0_ref (bits 5) over nb
// blocks: max = the first element of largest magnitude (NaN never wins),
// d = max/-2^(bits-1), levels MIN(2^bits-1, (int8_t)(x/d + 2^(bits-1) +
// 0.5f)).
TEXT ·symBlocksAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ bits+24(FP), R10
	BLOCKCONSTS
	TESTQ CX, CX
	JZ   symdone
symblock:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	ABSBITS
	// NaN never wins: zero its magnitude.
	VPCMPGTD Y11, Y4, Y8
	VPANDN Y4, Y8, Y4
	VPCMPGTD Y11, Y5, Y8
	VPANDN Y5, Y8, Y5
	VPCMPGTD Y11, Y6, Y8
	VPANDN Y6, Y8, Y6
	VPCMPGTD Y11, Y7, Y8
	VPANDN Y7, Y8, Y7
	VPMAXUD Y5, Y4, Y8
	VPMAXUD Y7, Y6, Y9
	VPMAXUD Y9, Y8, Y8
	HMAXU
	// max = the first element of that magnitude (+0 if it is 0).
	VXORPS X0, X0, X0
	TESTL R12, R12
	JZ   symmax
	VMOVD R12, X8
	VPBROADCASTD X8, Y8
	VPCMPEQD Y8, Y4, Y4
	VPCMPEQD Y8, Y5, Y5
	VPCMPEQD Y8, Y6, Y6
	VPCMPEQD Y8, Y7, Y7
	VMOVMSKPS Y4, AX
	VMOVMSKPS Y5, DX
	SHLL $8, DX
	ORL DX, AX
	VMOVMSKPS Y6, DX
	SHLL $16, DX
	ORL DX, AX
	VMOVMSKPS Y7, DX
	SHLL $24, DX
	ORL DX, AX
	BSFL AX, AX
	VMOVSS (SI)(AX*4), X0
symmax:
	// d = max/-2^(bits-1), id = d ? 1/d : 0.
	MOVL $0xc1000000, DX // -8
	MOVL $0xc1800000, R9 // -16
	CMPQ R10, $4
	CMOVLNE R9, DX
	VMOVD DX, X1
	VDIVSS X1, X0, X0
	VXORPS X2, X2, X2
	VUCOMISS X2, X0
	JNE  syminv
	JPS  syminv
	JMP  symscale
syminv:
	MOVL $0x3f800000, DX
	VMOVD DX, X1
	VDIVSS X0, X1, X2
symscale:
	FP16
	MOVW AX, (DI)
	VBROADCASTSS X2, Y13
	// MIN(2^bits-1, (int8_t)(v*id + 2^(bits-1) + 0.5f)).
	MOVL $0x41080000, DX // 8.5
	MOVL $0x41840000, R9 // 16.5
	CMPQ R10, $4
	CMOVLNE R9, DX
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
	VMULPS (SI), Y13, Y0
	VMULPS 32(SI), Y13, Y1
	VMULPS 64(SI), Y13, Y2
	VMULPS 96(SI), Y13, Y3
	ADDCVT
	INT8S
	MOVL $15, DX
	MOVL $31, R9
	CMPQ R10, $4
	CMOVLNE R9, DX
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
	VPMINSD Y14, Y0, Y0
	VPMINSD Y14, Y1, Y1
	VPMINSD Y14, Y2, Y2
	VPMINSD Y14, Y3, Y3
	CMPQ R10, $4
	JNE  sym5
	PACKNIBBLES(2(DI))
	ADDQ $18, DI
	JMP  symnext
sym5:
	PACKQH(2(DI))
	PACKNIBBLESMASKED(6(DI))
	ADDQ $22, DI
symnext:
	ADDQ $128, SI
	DECQ CX
	JNZ  symblock
symdone:
	VZEROUPPER
	RET

// func minBlocksAVX2(y *byte, x *float32, nb int, bits int) int
// quantize_row_q4_1_ref (bits 4) or quantize_row_q5_1_ref (bits 5) over nb
// blocks: min and max as C's "if (v < min) min = v" loops find them (NaN
// never counts), d = (max-min)/(2^bits-1), levels (int8_t)((x-min)/d +
// 0.5f), Q4_1 capping them at 15. It stops before a block whose min or max
// is zero (C keeps the sign of the first zero it meets, which the lane
// order does not tell) or infinite, and returns how many blocks it did.
TEXT ·minBlocksAVX2(SB), NOSPLIT, $0-40
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ bits+24(FP), R10
	XORQ R11, R11
	BLOCKCONSTS
minblock:
	CMPQ R11, CX
	JGE  mindone
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	// Lane minima and maxima from +-FLT_MAX, each new value first (a NaN
	// leaves the accumulator), then across lanes.
	MOVL $0x7f7fffff, DX
	VMOVD DX, X4
	VPBROADCASTD X4, Y4
	MOVL $0xff7fffff, DX
	VMOVD DX, X5
	VPBROADCASTD X5, Y5
	VMINPS Y4, Y0, Y4
	VMAXPS Y5, Y0, Y5
	VMINPS Y4, Y1, Y4
	VMAXPS Y5, Y1, Y5
	VMINPS Y4, Y2, Y4
	VMAXPS Y5, Y2, Y5
	VMINPS Y4, Y3, Y4
	VMAXPS Y5, Y3, Y5
	VEXTRACTF128 $1, Y4, X6
	VMINPS X6, X4, X4
	VSHUFPS $0x4e, X4, X4, X6
	VMINPS X6, X4, X4
	VSHUFPS $0xb1, X4, X4, X6
	VMINPS X6, X4, X4
	VEXTRACTF128 $1, Y5, X6
	VMAXPS X6, X5, X5
	VSHUFPS $0x4e, X5, X5, X6
	VMAXPS X6, X5, X5
	VSHUFPS $0xb1, X5, X5, X6
	VMAXPS X6, X5, X5
	// Zero or infinite min or max: the Go path.
	VMOVD X4, DX
	ANDL $0x7fffffff, DX
	JZ   mindone
	CMPL DX, $0x7f800000
	JAE  mindone
	VMOVD X5, DX
	ANDL $0x7fffffff, DX
	JZ   mindone
	CMPL DX, $0x7f800000
	JAE  mindone
	// d = (max-min)/(2^bits-1), id = d ? 1/d : 0.
	VSUBSS X4, X5, X0
	MOVL $0x41700000, DX // 15
	MOVL $0x41f80000, R9 // 31
	CMPQ R10, $4
	CMOVLNE R9, DX
	VMOVD DX, X1
	VDIVSS X1, X0, X0
	VXORPS X2, X2, X2
	VUCOMISS X2, X0
	JNE  mininv
	JPS  mininv
	JMP  minscale
mininv:
	MOVL $0x3f800000, DX
	VMOVD DX, X1
	VDIVSS X0, X1, X2
minscale:
	FP16
	MOVW AX, (DI)
	VMOVAPS X4, X0
	FP16
	MOVW AX, 2(DI)
	VBROADCASTSS X4, Y6
	VBROADCASTSS X2, Y13
	MOVL $0x3f000000, DX // 0.5
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
	// Reload the block: FP16 wrote X0.
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VSUBPS Y6, Y0, Y0
	VSUBPS Y6, Y1, Y1
	VSUBPS Y6, Y2, Y2
	VSUBPS Y6, Y3, Y3
	VMULPS Y13, Y0, Y0
	VMULPS Y13, Y1, Y1
	VMULPS Y13, Y2, Y2
	VMULPS Y13, Y3, Y3
	ADDCVT
	CMPQ R10, $4
	JNE  min5
	INT8S
	MOVL $15, DX
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
	VPMINSD Y14, Y0, Y0
	VPMINSD Y14, Y1, Y1
	VPMINSD Y14, Y2, Y2
	VPMINSD Y14, Y3, Y3
	PACKNIBBLES(4(DI))
	ADDQ $20, DI
	JMP  minnext
min5:
	PACKQH(4(DI))
	PACKNIBBLESMASKED(8(DI))
	ADDQ $24, DI
minnext:
	ADDQ $128, SI
	INCQ R11
	JMP  minblock
mindone:
	VZEROUPPER
	MOVQ R11, ret+32(FP)
	RET

// packperm: after VPACKUSDW/VPACKUSWB of four 8-dword registers A, B, C,
// D the dwords hold bytes in the order A0-3 B0-3 C0-3 D0-3 | A4-7 B4-7
// C4-7 D4-7; this permutation restores A B C D.
DATA packperm<>+0(SB)/4, $0
DATA packperm<>+4(SB)/4, $4
DATA packperm<>+8(SB)/4, $1
DATA packperm<>+12(SB)/4, $5
DATA packperm<>+16(SB)/4, $2
DATA packperm<>+20(SB)/4, $6
DATA packperm<>+24(SB)/4, $3
DATA packperm<>+28(SB)/4, $7
GLOBL packperm<>(SB), RODATA|NOPTR, $32

DATA absmask<>+0(SB)/4, $0x7fffffff
DATA absmask<>+4(SB)/4, $0x7fffffff
DATA absmask<>+8(SB)/4, $0x7fffffff
DATA absmask<>+12(SB)/4, $0x7fffffff
DATA absmask<>+16(SB)/4, $0x7fffffff
DATA absmask<>+20(SB)/4, $0x7fffffff
DATA absmask<>+24(SB)/4, $0x7fffffff
DATA absmask<>+28(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

// func q8_KBlocksAVX2(y *byte, x *float32, nb int)
// quantize_row_q8_K_ref over nb blocks of 256: max = the first element of
// largest magnitude (NaN never wins), iscale = -127/max, q = MIN(127,
// nearest_int(iscale*x)) with nearest_int's bit trick, bsums of 16, d =
// 1/iscale; an all-zero block is stored as zeros.
TEXT ·q8_KBlocksAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	TESTQ CX, CX
	JZ   q8kdone
	BLOCKCONSTS
	MOVL $0x4b400000, DX
	VMOVD DX, X13
	VPBROADCASTD X13, Y13 // 1.5*2^23
	MOVL $0x007fffff, DX
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
q8kblock:
	// Largest magnitude (NaN as 0) over the 32 vectors.
	VPXOR Y8, Y8, Y8
	XORQ AX, AX
	VMOVDQU absmask<>(SB), Y9
q8kmax:
	VPAND (SI)(AX*1), Y9, Y4
	VPCMPGTD Y11, Y4, Y5
	VPANDN Y4, Y5, Y4
	VPMAXUD Y4, Y8, Y8
	ADDQ $32, AX
	CMPQ AX, $1024
	JLT  q8kmax
	HMAXU
	TESTL R12, R12
	JNZ  q8knonzero
	// amax == 0: the whole block is zeros.
	VPXOR Y0, Y0, Y0
	XORQ AX, AX
q8kzero:
	VMOVDQU Y0, (DI)(AX*1)
	ADDQ $32, AX
	CMPQ AX, $288
	JLT  q8kzero
	MOVL $0, 288(DI)
	JMP  q8knext
q8knonzero:
	// The first element with that magnitude.
	VMOVD R12, X8
	VPBROADCASTD X8, Y8
	XORQ AX, AX
	VMOVDQU absmask<>(SB), Y9
q8kfind:
	VPAND (SI)(AX*1), Y9, Y4
	VPCMPEQD Y8, Y4, Y4
	VMOVMSKPS Y4, DX
	TESTL DX, DX
	JNZ  q8kfound
	ADDQ $32, AX
	JMP  q8kfind
q8kfound:
	BSFL DX, DX
	LEAQ (AX)(DX*4), AX
	VMOVSS (SI)(AX*1), X0
	// iscale = -127/max, d = 1/iscale.
	MOVL $0xc2fe0000, DX
	VMOVD DX, X1
	VDIVSS X0, X1, X1
	MOVL $0x3f800000, DX
	VMOVD DX, X2
	VDIVSS X1, X2, X2
	VMOVSS X2, (DI)
	VBROADCASTSS X1, Y1
	MOVL $127, DX
	VMOVD DX, X3
	VPBROADCASTD X3, Y3
	MOVL $0x00400000, DX
	VMOVD DX, X12
	VPBROADCASTD X12, Y12
	// 16 groups of 16: levels, their bytes and their sum.
	XORQ AX, AX // group
q8kgroup:
	MOVQ AX, DX
	SHLQ $6, DX
	VMULPS (SI)(DX*1), Y1, Y4
	VMULPS 32(SI)(DX*1), Y1, Y5
	VADDPS Y13, Y4, Y4
	VADDPS Y13, Y5, Y5
	VPAND Y14, Y4, Y4
	VPAND Y14, Y5, Y5
	VPSUBD Y12, Y4, Y4
	VPSUBD Y12, Y5, Y5
	VPMINSD Y3, Y4, Y4
	VPMINSD Y3, Y5, Y5
	// bsums: the int8 levels (all in -128..127) added up.
	VPADDD Y5, Y4, Y6
	VEXTRACTI128 $1, Y6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0x4e, X6, X7
	VPADDD X7, X6, X6
	VPSHUFD $0xb1, X6, X7
	VPADDD X7, X6, X6
	VMOVD X6, DX
	MOVW DX, 260(DI)(AX*2)
	// qs: the low bytes, in order.
	VPAND Y10, Y4, Y4
	VPAND Y10, Y5, Y5
	VPACKUSDW Y5, Y4, Y4
	VPERMQ $0xd8, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPACKUSWB X5, X4, X4
	MOVQ AX, DX
	SHLQ $4, DX
	VMOVDQU X4, 4(DI)(DX*1)
	INCQ AX
	CMPQ AX, $16
	JLT  q8kgroup
q8knext:
	ADDQ $292, DI
	ADDQ $1024, SI
	DECQ CX
	JNZ  q8kblock
q8kdone:
	VZEROUPPER
	RET
