//go:build amd64 && !purego

#include "textflag.h"

// FP4IDX sets Y(b) to ggml's best_index_mxfp4 for the 8 floats in x, given
// the non-negative codebook values times the scale at 0(SP)..28(SP): the
// first entry with the smallest |v - |x||, moved to the negative half
// (+8) for x < 0 unless it is entry 0, and 0 for NaN (see fp4Levels.indices
// for why this equals ggml's search over all 16 entries). Y8 holds
// 0x7fffffff, Y9 0x7f800000, Y10 the dword 8; clobbers Y11..Y14.
#define FP4IDX(x, b) \
	VPAND Y8, x, Y11; \
	VMOVDQA Y11, Y12; \
	VPXOR b, b, b; \
	FP4STEP(4, 1, b); \
	FP4STEP(8, 2, b); \
	FP4STEP(12, 3, b); \
	FP4STEP(16, 4, b); \
	FP4STEP(20, 5, b); \
	FP4STEP(24, 6, b); \
	FP4STEP(28, 7, b); \
	VPXOR Y13, Y13, Y13; \
	VPCMPGTD Y13, b, Y13; \
	VPSRAD $31, x, Y14; \
	VPAND Y14, Y13, Y13; \
	VPAND Y10, Y13, Y13; \
	VPOR Y13, b, b; \
	VPCMPGTD Y9, Y11, Y13; \
	VPANDN b, Y13, b

// FP4STEP: entry k (value at off(SP)) replaces the best so far in b (error
// bits in Y12) when strictly closer to |x| (Y11).
#define FP4STEP(off, k, b) \
	VBROADCASTSS off(SP), Y13; \
	VSUBPS Y11, Y13, Y13; \
	VPAND Y8, Y13, Y13; \
	VPCMPGTD Y13, Y12, Y14; \
	VPMINSD Y13, Y12, Y12; \
	MOVL $k, DX; \
	VMOVD DX, X13; \
	VPBROADCASTD X13, Y13; \
	VPBLENDVB Y14, Y13, b, b

// func mxfp4BlocksAVX2(y *byte, x *float32, nb int) int
// quantize_row_mxfp4_ref over nb blocks; it stops before a block whose
// largest magnitude is subnormal, infinite or within 1% below a power of
// two (where the exponent needs log2f) and returns how many blocks it did.
TEXT ·mxfp4BlocksAVX2(SB), NOSPLIT, $32-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ nb+16(FP), CX
	XORQ R11, R11
	VMOVDQU fp4c<>+0(SB), Y8
	VMOVDQU fp4c<>+32(SB), Y9
	VMOVDQU fp4c<>+64(SB), Y10
fp4block:
	CMPQ R11, CX
	JGE  fp4done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	// amax over the magnitudes, NaN counting as 0.
	VPAND Y8, Y0, Y4
	VPCMPGTD Y9, Y4, Y12
	VPANDN Y4, Y12, Y4
	VPAND Y8, Y1, Y5
	VPCMPGTD Y9, Y5, Y12
	VPANDN Y5, Y12, Y5
	VPAND Y8, Y2, Y6
	VPCMPGTD Y9, Y6, Y12
	VPANDN Y6, Y12, Y6
	VPAND Y8, Y3, Y7
	VPCMPGTD Y9, Y7, Y12
	VPANDN Y7, Y12, Y7
	VPMAXUD Y5, Y4, Y4
	VPMAXUD Y7, Y6, Y6
	VPMAXUD Y6, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPMAXUD X5, X4, X4
	VPSHUFD $0x4e, X4, X5
	VPMAXUD X5, X4, X4
	VPSHUFD $0xb1, X4, X5
	VPMAXUD X5, X4, X4
	VMOVD X4, R12
	// e = 0 for amax 0, else the exponent minus 2 where that is what
	// floorf(log2f(amax)) - 2 + 127 gives.
	XORL AX, AX
	TESTL R12, R12
	JZ   fp4e
	MOVL R12, DX
	ANDL $0x7fffff, DX
	CMPL DX, $0x7f0000
	JAE  fp4done
	MOVL R12, AX
	SHRL $23, AX
	CMPL AX, $1
	JB   fp4done
	CMPL AX, $255
	JAE  fp4done
	SUBL $2, AX
	MOVBLZX AL, AX
fp4e:
	MOVB AL, (DI)
	// d = ggml_e8m0_to_fp32_half(e).
	CMPL AX, $2
	JAE  fp4big
	MOVL AX, CX
	MOVL $0x00200000, DX
	SHLL CX, DX
	MOVQ nb+16(FP), CX
	JMP  fp4d
fp4big:
	LEAL -1(AX), DX
	SHLL $23, DX
fp4d:
	VMOVD DX, X4
	VBROADCASTSS X4, Y4
	VMULPS fp4c<>+96(SB), Y4, Y4
	VMOVUPS Y4, 0(SP)
	FP4IDX(Y0, Y4)
	FP4IDX(Y1, Y5)
	FP4IDX(Y2, Y6)
	FP4IDX(Y3, Y7)
	// qs[j] = idx[j] | idx[16+j]<<4.
	VPSLLD $4, Y6, Y6
	VPSLLD $4, Y7, Y7
	VPOR Y6, Y4, Y4
	VPOR Y7, Y5, Y5
	VPACKUSDW Y5, Y4, Y4
	VPERMQ $0xd8, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPACKUSWB X5, X4, X4
	VMOVDQU X4, 1(DI)
	ADDQ $17, DI
	ADDQ $128, SI
	INCQ R11
	JMP  fp4block
fp4done:
	VZEROUPPER
	MOVQ R11, ret+24(FP)
	RET

DATA fp4c<>+0(SB)/4, $0x7fffffff
DATA fp4c<>+4(SB)/4, $0x7fffffff
DATA fp4c<>+8(SB)/4, $0x7fffffff
DATA fp4c<>+12(SB)/4, $0x7fffffff
DATA fp4c<>+16(SB)/4, $0x7fffffff
DATA fp4c<>+20(SB)/4, $0x7fffffff
DATA fp4c<>+24(SB)/4, $0x7fffffff
DATA fp4c<>+28(SB)/4, $0x7fffffff
DATA fp4c<>+32(SB)/4, $0x7f800000
DATA fp4c<>+36(SB)/4, $0x7f800000
DATA fp4c<>+40(SB)/4, $0x7f800000
DATA fp4c<>+44(SB)/4, $0x7f800000
DATA fp4c<>+48(SB)/4, $0x7f800000
DATA fp4c<>+52(SB)/4, $0x7f800000
DATA fp4c<>+56(SB)/4, $0x7f800000
DATA fp4c<>+60(SB)/4, $0x7f800000
DATA fp4c<>+64(SB)/4, $8
DATA fp4c<>+68(SB)/4, $8
DATA fp4c<>+72(SB)/4, $8
DATA fp4c<>+76(SB)/4, $8
DATA fp4c<>+80(SB)/4, $8
DATA fp4c<>+84(SB)/4, $8
DATA fp4c<>+88(SB)/4, $8
DATA fp4c<>+92(SB)/4, $8
// kvalues_mxfp4[0..7] as floats: 0 1 2 3 4 6 8 12.
DATA fp4c<>+96(SB)/4, $0x00000000
DATA fp4c<>+100(SB)/4, $0x3f800000
DATA fp4c<>+104(SB)/4, $0x40000000
DATA fp4c<>+108(SB)/4, $0x40400000
DATA fp4c<>+112(SB)/4, $0x40800000
DATA fp4c<>+116(SB)/4, $0x40c00000
DATA fp4c<>+120(SB)/4, $0x41000000
DATA fp4c<>+124(SB)/4, $0x41400000
GLOBL fp4c<>(SB), RODATA|NOPTR, $128

// func iq4LanesAVX2(x, w *float32, ids *[8]float32, lo, hi *[256]float32, out *[2][8]float32)
// For each lane's inverse scale id and the 32 values x with weights w:
// v = id*x, q = the nearest kvalues_iq4nl entry to v (ties up; 113 for
// NaN), out[0] = sum of (w*q)*x, out[1] = sum of (w*q)*q, in index order.
// q comes from the two entries around floor(clamp(v, -127, 112)),
// gathered from lo and hi, as in bestIndexIQ4NL.
TEXT ·iq4LanesAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ ids+16(FP), R8
	MOVQ lo+24(FP), R9
	MOVQ hi+32(FP), R10
	MOVQ out+40(FP), R11
	VMOVUPS (R8), Y0
	MOVL $0x42e00000, DX // 112
	VMOVD DX, X1
	VBROADCASTSS X1, Y1
	MOVL $0xc2fe0000, DX // -127
	VMOVD DX, X2
	VBROADCASTSS X2, Y2
	MOVL $127, DX
	VMOVD DX, X3
	VPBROADCASTD X3, Y3
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ $32, CX
iq4loop:
	VBROADCASTSS (SI), Y8
	VMULPS Y8, Y0, Y9          // v = id*x
	VMINPS Y1, Y9, Y10         // v < 112 ? v : 112 (NaN -> 112)
	VMAXPS Y2, Y10, Y10        // then at least -127
	VROUNDPS $1, Y10, Y10      // floor
	VCVTTPS2DQ Y10, Y10
	VPADDD Y3, Y10, Y10        // table index 0..239
	VPCMPEQD Y11, Y11, Y11
	VPGATHERDD Y11, (R9)(Y10*4), Y12  // lo
	VPCMPEQD Y11, Y11, Y11
	VPGATHERDD Y11, (R10)(Y10*4), Y13 // hi
	VSUBPS Y9, Y13, Y14        // hi - v
	VSUBPS Y12, Y9, Y5        // v - lo
	VCMPPS $0x1e, Y5, Y14, Y14 // hi - v > v - lo (ordered)
	VBLENDVPS Y14, Y12, Y13, Y13 // q
	VBROADCASTSS (DI), Y14
	VMULPS Y13, Y14, Y14       // w*q
	VMULPS Y8, Y14, Y5
	VADDPS Y5, Y6, Y6         // += (w*q)*x
	VMULPS Y13, Y14, Y14
	VADDPS Y14, Y7, Y7         // += (w*q)*q
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JNZ  iq4loop
	VMOVUPS Y6, (R11)
	VMOVUPS Y7, 32(R11)
	VZEROUPPER
	RET
