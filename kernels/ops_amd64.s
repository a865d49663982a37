//go:build amd64 && !purego

#include "textflag.h"

// Four lanes of expf (ops.go) at a time: the same float64 steps (range
// reduction with the 1.5*2^52 rounding trick, the degree-9 Horner
// polynomial, the power of two built in the exponent bits), each a
// separate IEEE multiply or add as the Go compiler emits them on amd64, so
// every result is bit-identical to expf's; softmax and SiLU spend most of
// their time there.
#define F_LOG2E expd<>+0(SB)
DATA expd<>+0(SB)/8, $0x3ff71547652b82fe
DATA expd<>+8(SB)/8, $0x3ff71547652b82fe
DATA expd<>+16(SB)/8, $0x3ff71547652b82fe
DATA expd<>+24(SB)/8, $0x3ff71547652b82fe
#define F_LN2 expd<>+32(SB)
DATA expd<>+32(SB)/8, $0x3fe62e42fefa39ef
DATA expd<>+40(SB)/8, $0x3fe62e42fefa39ef
DATA expd<>+48(SB)/8, $0x3fe62e42fefa39ef
DATA expd<>+56(SB)/8, $0x3fe62e42fefa39ef
#define F_MAGIC expd<>+64(SB)
DATA expd<>+64(SB)/8, $0x4338000000000000
DATA expd<>+72(SB)/8, $0x4338000000000000
DATA expd<>+80(SB)/8, $0x4338000000000000
DATA expd<>+88(SB)/8, $0x4338000000000000
#define F_C9 expd<>+96(SB)
DATA expd<>+96(SB)/8, $0x3ec71de3a556c734
DATA expd<>+104(SB)/8, $0x3ec71de3a556c734
DATA expd<>+112(SB)/8, $0x3ec71de3a556c734
DATA expd<>+120(SB)/8, $0x3ec71de3a556c734
#define F_C8 expd<>+128(SB)
DATA expd<>+128(SB)/8, $0x3efa01a01a01a01a
DATA expd<>+136(SB)/8, $0x3efa01a01a01a01a
DATA expd<>+144(SB)/8, $0x3efa01a01a01a01a
DATA expd<>+152(SB)/8, $0x3efa01a01a01a01a
#define F_C7 expd<>+160(SB)
DATA expd<>+160(SB)/8, $0x3f2a01a01a01a01a
DATA expd<>+168(SB)/8, $0x3f2a01a01a01a01a
DATA expd<>+176(SB)/8, $0x3f2a01a01a01a01a
DATA expd<>+184(SB)/8, $0x3f2a01a01a01a01a
#define F_C6 expd<>+192(SB)
DATA expd<>+192(SB)/8, $0x3f56c16c16c16c17
DATA expd<>+200(SB)/8, $0x3f56c16c16c16c17
DATA expd<>+208(SB)/8, $0x3f56c16c16c16c17
DATA expd<>+216(SB)/8, $0x3f56c16c16c16c17
#define F_C5 expd<>+224(SB)
DATA expd<>+224(SB)/8, $0x3f81111111111111
DATA expd<>+232(SB)/8, $0x3f81111111111111
DATA expd<>+240(SB)/8, $0x3f81111111111111
DATA expd<>+248(SB)/8, $0x3f81111111111111
#define F_C4 expd<>+256(SB)
DATA expd<>+256(SB)/8, $0x3fa5555555555555
DATA expd<>+264(SB)/8, $0x3fa5555555555555
DATA expd<>+272(SB)/8, $0x3fa5555555555555
DATA expd<>+280(SB)/8, $0x3fa5555555555555
#define F_C3 expd<>+288(SB)
DATA expd<>+288(SB)/8, $0x3fc5555555555555
DATA expd<>+296(SB)/8, $0x3fc5555555555555
DATA expd<>+304(SB)/8, $0x3fc5555555555555
DATA expd<>+312(SB)/8, $0x3fc5555555555555
#define F_C2 expd<>+320(SB)
DATA expd<>+320(SB)/8, $0x3fe0000000000000
DATA expd<>+328(SB)/8, $0x3fe0000000000000
DATA expd<>+336(SB)/8, $0x3fe0000000000000
DATA expd<>+344(SB)/8, $0x3fe0000000000000
#define F_C1 expd<>+352(SB)
DATA expd<>+352(SB)/8, $0x3ff0000000000000
DATA expd<>+360(SB)/8, $0x3ff0000000000000
DATA expd<>+368(SB)/8, $0x3ff0000000000000
DATA expd<>+376(SB)/8, $0x3ff0000000000000
#define F_BIAS expd<>+384(SB)
DATA expd<>+384(SB)/8, $1023
DATA expd<>+392(SB)/8, $1023
DATA expd<>+400(SB)/8, $1023
DATA expd<>+408(SB)/8, $1023
#define F_LO expd<>+416(SB)
DATA expd<>+416(SB)/8, $0xc2d00000c2d00000
DATA expd<>+424(SB)/8, $0xc2d00000c2d00000
DATA expd<>+432(SB)/8, $0xc2d00000c2d00000
DATA expd<>+440(SB)/8, $0xc2d00000c2d00000
#define F_HI expd<>+448(SB)
DATA expd<>+448(SB)/8, $0x42b175c342b175c3
DATA expd<>+456(SB)/8, $0x42b175c342b175c3
DATA expd<>+464(SB)/8, $0x42b175c342b175c3
DATA expd<>+472(SB)/8, $0x42b175c342b175c3
#define F_INF expd<>+480(SB)
DATA expd<>+480(SB)/8, $0x7f8000007f800000
DATA expd<>+488(SB)/8, $0x7f8000007f800000
DATA expd<>+496(SB)/8, $0x7f8000007f800000
DATA expd<>+504(SB)/8, $0x7f8000007f800000
GLOBL expd<>(SB), RODATA|NOPTR, $512
DATA one32<>+0(SB)/8, $0x3f8000003f800000
DATA one32<>+8(SB)/8, $0x3f8000003f800000
GLOBL one32<>(SB), RODATA|NOPTR, $16

// EXPF4 sets X0 to expf(X0), lane by lane. Clobbers Y1-Y6.
#define EXPF4 \
	VCVTPS2PD X0, Y1 \
	VMULPD F_LOG2E, Y1, Y2 \
	VADDPD F_MAGIC, Y2, Y2 \
	VSUBPD F_MAGIC, Y2, Y2 \
	VMULPD F_LN2, Y2, Y3 \
	VSUBPD Y3, Y1, Y3 \
	VMULPD F_C9, Y3, Y4 \
	VADDPD F_C8, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C7, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C6, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C5, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C4, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C3, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C2, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C1, Y4, Y4 \
	VMULPD Y3, Y4, Y4 \
	VADDPD F_C1, Y4, Y4 \
	VCVTTPD2DQY Y2, X5 \
	VPMOVSXDQ X5, Y5 \
	VPADDQ F_BIAS, Y5, Y5 \
	VPSLLQ $52, Y5, Y5 \
	VMULPD Y5, Y4, Y4 \
	VCVTPD2PSY Y4, X4 \
	VCMPPS $0x01, F_LO, X0, X6 \
	VANDNPS X4, X6, X4 \
	VCMPPS $0x1e, F_HI, X0, X6 \
	VBLENDVPS X6, F_INF, X4, X4 \
	VCMPPS $0x03, X0, X0, X6 \
	VBLENDVPS X6, X0, X4, X0

// func expfAVX2(dst, src *float32, quads int, shift float32)
// dst[i] = expf(src[i] - shift) for quads groups of 4 floats.
TEXT ·expfAVX2(SB), NOSPLIT, $0-28
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ quads+16(FP), CX
	VBROADCASTSS shift+24(FP), X15
exploop:
	TESTQ CX, CX
	JEQ  expend
	VMOVUPS (SI), X0
	VSUBPS X15, X0, X0
	EXPF4
	VMOVUPS X0, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JMP  exploop
expend:
	VZEROUPPER
	RET

// func siluMulAVX2(x, y *float32, quads int)
// x[i] = x[i] / (1 + expf(-x[i])) * y[i] for quads groups of 4 floats.
TEXT ·siluMulAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ quads+16(FP), CX
	VXORPS X15, X15, X15
siluloop:
	TESTQ CX, CX
	JEQ  siluend
	VMOVUPS (DI), X14
	VSUBPS X14, X15, X0
	EXPF4
	VADDPS one32<>(SB), X0, X0
	VDIVPS X0, X14, X14
	VMULPS (SI), X14, X14
	VMOVUPS X14, (DI)
	ADDQ $16, SI
	ADDQ $16, DI
	DECQ CX
	JMP  siluloop
siluend:
	VZEROUPPER
	RET

// func madFMA(y, x *float32, octs int, a float32)
// y[i] = fma(x[i], a, y[i]) eight lanes at a time, as ggml_vec_mad_f32's
// AVX2 loop (GGML_F32_VEC_FMA).
TEXT ·madFMA(SB), NOSPLIT, $0-28
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ octs+16(FP), CX
	VBROADCASTSS a+24(FP), Y1
madloop:
	TESTQ CX, CX
	JEQ  madend
	VMOVUPS (DI), Y0
	VFMADD231PS (SI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JMP  madloop
madend:
	VZEROUPPER
	RET

// func dot32FMA(x, y *float32, n int) float32
// ggml_vec_dot_f32's AVX2 loop for n a multiple of 32: four 8-lane FMA
// accumulators, reduced as GGML_F32x8_REDUCE does, (acc0+acc2) +
// (acc1+acc3), then the halves added and two horizontal adds.
TEXT ·dot32FMA(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
dotloop:
	CMPQ CX, $32
	JLT  dotreduce
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
	JMP  dotloop
dotreduce:
	VADDPS Y2, Y0, Y0
	VADDPS Y3, Y1, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func scaleAVX2(x *float32, octs int, a float32)
// x[i] *= a eight lanes at a time (ggml_vec_scale_f32's AVX2 loop).
TEXT ·scaleAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), DI
	MOVQ octs+8(FP), CX
	VBROADCASTSS a+16(FP), Y1
scaleloop:
	TESTQ CX, CX
	JEQ  scaleend
	VMULPS (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ CX
	JMP  scaleloop
scaleend:
	VZEROUPPER
	RET
