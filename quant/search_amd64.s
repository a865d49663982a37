//go:build amd64 && !purego

#include "textflag.h"

// The candidate-scale searches of make_qx_quants and make_qkx2/qkx3_quants
// with one candidate per AVX lane: every lane adds its terms in ggml's
// order with separate multiplies and adds (no FMA), so each lane computes
// the floats the scalar C loop computes for that candidate.

// Levels: MAX(lo, MIN(hi, nearest_int(v))) with nearest_int's bit trick:
// the float add of 1.5*2^23, then (bits & 0x7fffff) - 0x400000.
#define LEVEL(v) \
	VADDPS Y1, v, v; \
	VPAND  Y2, v, v; \
	VPSUBD Y3, v, v; \
	VPMAXSD Y4, v, v; \
	VPMINSD Y5, v, v; \
	VCVTDQ2PS v, v

// CONSTS loads Y1..Y5 for LEVEL from the bounds in AX (lo) and BX (hi).
#define CONSTS \
	MOVL $0x4b400000, DX; \
	VMOVD DX, X1; \
	VPBROADCASTD X1, Y1; \
	MOVL $0x007fffff, DX; \
	VMOVD DX, X2; \
	VPBROADCASTD X2, Y2; \
	MOVL $0x00400000, DX; \
	VMOVD DX, X3; \
	VPBROADCASTD X3, Y3; \
	VMOVD AX, X4; \
	VPBROADCASTD X4, Y4; \
	VMOVD BX, X5; \
	VPBROADCASTD X5, Y5

// func qxLanesAVX2(x, ws, wx *float32, n int, isc *[8]float32, nmax int, lf *[32][8]float32, out *[2][8]float32)
// Per lane k: levels l = clamp(nearest(isc[k]*x[i]), -nmax, nmax-1) into
// lf[i][k], out[0][k] = sum of wx[i]*l, out[1][k] = sum of (ws[i]*l)*l.
TEXT ·qxLanesAVX2(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ ws+8(FP), DI
	MOVQ wx+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ isc+32(FP), R10
	MOVQ nmax+40(FP), BX
	MOVQ lf+48(FP), R9
	MOVQ out+56(FP), R11
	MOVQ BX, AX
	NEGQ AX
	DECQ BX
	CONSTS
	VMOVUPS (R10), Y0
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
qxloop:
	VBROADCASTSS (SI), Y8
	VMULPS Y8, Y0, Y8
	LEVEL(Y8)
	VMOVUPS Y8, (R9)
	VBROADCASTSS (R8), Y9
	VMULPS Y8, Y9, Y9
	VADDPS Y9, Y6, Y6
	VBROADCASTSS (DI), Y10
	VMULPS Y8, Y10, Y10
	VMULPS Y8, Y10, Y10
	VADDPS Y10, Y7, Y7
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $4, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  qxloop
	VMOVUPS Y6, (R11)
	VMOVUPS Y7, 32(R11)
	VZEROUPPER
	RET

// func qkxLanesAVX2(xm, x, ws *float32, n int, isc *[8]float32, nmax int, lf *[32][8]float32, out *[3][8]float32)
// Per lane k: levels l = clamp(nearest(isc[k]*xm[i]), 0, nmax) into
// lf[i][k]; with wl = ws[i]*l, out[0][k] = sum of wl, out[1][k] = sum of
// wl*l, out[2][k] = sum of wl*x[i].
TEXT ·qkxLanesAVX2(SB), NOSPLIT, $0-64
	MOVQ xm+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ ws+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ isc+32(FP), R10
	MOVQ nmax+40(FP), BX
	MOVQ lf+48(FP), R9
	MOVQ out+56(FP), R11
	XORQ AX, AX
	CONSTS
	VMOVUPS (R10), Y0
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y11, Y11, Y11
qkxloop:
	VBROADCASTSS (SI), Y8
	VMULPS Y8, Y0, Y8
	LEVEL(Y8)
	VMOVUPS Y8, (R9)
	VBROADCASTSS (R8), Y9
	VMULPS Y8, Y9, Y9
	VADDPS Y9, Y6, Y6
	VMULPS Y8, Y9, Y10
	VADDPS Y10, Y7, Y7
	VBROADCASTSS (DI), Y12
	VMULPS Y12, Y9, Y12
	VADDPS Y12, Y11, Y11
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $4, R8
	ADDQ $32, R9
	DECQ CX
	JNZ  qkxloop
	VMOVUPS Y6, (R11)
	VMOVUPS Y7, 32(R11)
	VMOVUPS Y11, 64(R11)
	VZEROUPPER
	RET

// func qkxMadsAVX2(x, ws *float32, n int, sc, mn *[8]float32, lf *[32][8]float32, useMad bool, out *[8]float32)
// Per lane k: out[k] = sum of ws[i]*f(sc[k]*l + mn[k] - x[i]) over the
// levels l = lf[i][k], f being |d| with useMad and d*d otherwise.
TEXT ·qkxMadsAVX2(SB), NOSPLIT, $0-64
	MOVQ x+0(FP), SI
	MOVQ ws+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ sc+24(FP), R10
	MOVQ mn+32(FP), R12
	MOVQ lf+40(FP), R9
	MOVBLZX useMad+48(FP), AX
	MOVQ out+56(FP), R11
	VMOVUPS (R10), Y0
	VMOVUPS (R12), Y1
	MOVL $0x7fffffff, DX
	VMOVD DX, X2
	VPBROADCASTD X2, Y2
	VXORPS Y6, Y6, Y6
	TESTQ AX, AX
	JZ   sqloop
madloop:
	VMULPS (R9), Y0, Y8
	VADDPS Y1, Y8, Y8
	VBROADCASTSS (SI), Y9
	VSUBPS Y9, Y8, Y8
	VANDPS Y2, Y8, Y8
	VBROADCASTSS (DI), Y10
	VMULPS Y8, Y10, Y10
	VADDPS Y10, Y6, Y6
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $32, R9
	DECQ CX
	JNZ  madloop
	JMP  maddone
sqloop:
	VMULPS (R9), Y0, Y8
	VADDPS Y1, Y8, Y8
	VBROADCASTSS (SI), Y9
	VSUBPS Y9, Y8, Y8
	VMULPS Y8, Y8, Y8
	VBROADCASTSS (DI), Y10
	VMULPS Y8, Y10, Y10
	VADDPS Y10, Y6, Y6
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $32, R9
	DECQ CX
	JNZ  sqloop
maddone:
	VMOVUPS Y6, (R11)
	VZEROUPPER
	RET
