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

// func qxLanesAVX2(x, ws, wx *float32, n int, cand *[8]int32, max float32, nmax int, lf *[32][8]float32, out *[2][8]float32)
// Per lane k: iscale = -(nmax + 0.1*cand[k])/max, levels l = clamp(
// nearest(iscale*x[i]), -nmax, nmax-1) into lf[i][k], out[0][k] = sum of
// wx[i]*l, out[1][k] = sum of (ws[i]*l)*l.
TEXT ·qxLanesAVX2(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ ws+8(FP), DI
	MOVQ wx+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ cand+32(FP), R10
	MOVQ nmax+48(FP), BX
	MOVQ lf+56(FP), R9
	MOVQ out+64(FP), R11
	// iscale per lane.
	VCVTDQ2PS (R10), Y0
	MOVL $0x3dcccccd, DX // 0.1f
	VMOVD DX, X1
	VBROADCASTSS X1, Y1
	VMULPS Y1, Y0, Y0
	VMOVD BX, X1
	VCVTDQ2PS X1, X1
	VBROADCASTSS X1, Y1
	VADDPS Y0, Y1, Y0
	MOVL $0x80000000, DX
	VMOVD DX, X1
	VBROADCASTSS X1, Y1
	VXORPS Y1, Y0, Y0
	VBROADCASTSS max+40(FP), Y1
	VDIVPS Y1, Y0, Y0
	MOVQ BX, AX
	NEGQ AX
	DECQ BX
	CONSTS
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

// func qkxPassAVX2(xm, x, ws *float32, n int, nmax int, is int, rmin, rdelta, fnmax, span, sumW, sumX float32, useMad bool, lf *[32][8]float32, out *[4][8]float32)
// One pass of make_qkx2_quants' search with steps is..is+7 in the lanes:
// iscale = (rmin + rdelta*step + nmax)/span; levels l = clamp(nearest(
// iscale*xm[i]), 0, nmax) into lf; with wl = ws[i]*l the sums of wl, wl*l
// and wl*x[i]; the least-squares scale and min of those sums (ggml's D > 0
// in out[3] as an all-ones mask; a positive min becomes 0 with scale
// sumXL/sumL2) into out[1] and out[2]; and the weighted error (absolute
// with useMad, else squared) of the levels at that scale and min into
// out[0]. Every lane does in order what the scalar C does for its step.
TEXT ·qkxPassAVX2(SB), NOSPLIT, $0-96
	MOVQ xm+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ ws+16(FP), R8
	MOVQ n+24(FP), CX
	MOVQ nmax+32(FP), BX
	MOVQ lf+80(FP), R9
	MOVQ out+88(FP), R11
	// iscale per lane.
	MOVQ is+40(FP), DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
	VPADDD steplanes<>(SB), Y0, Y0
	VCVTDQ2PS Y0, Y0
	VBROADCASTSS rdelta+52(FP), Y1
	VMULPS Y1, Y0, Y0
	VBROADCASTSS rmin+48(FP), Y1
	VADDPS Y0, Y1, Y0
	VBROADCASTSS fnmax+56(FP), Y1
	VADDPS Y1, Y0, Y0
	VBROADCASTSS span+60(FP), Y1
	VDIVPS Y1, Y0, Y0
	XORQ AX, AX
	CONSTS
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y11, Y11, Y11
	MOVQ CX, R10
passloop:
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
	DECQ R10
	JNZ  passloop
	// The fit: D = sumW*sL2 - sL*sL, scale = (sumW*sXL - sumX*sL)/D,
	// min = (sL2*sumX - sL*sXL)/D; a positive min becomes 0 and the scale
	// sXL/sL2.
	VBROADCASTSS sumW+64(FP), Y1
	VBROADCASTSS sumX+68(FP), Y2
	VMULPS Y7, Y1, Y8
	VMULPS Y6, Y6, Y9
	VSUBPS Y9, Y8, Y8          // D
	VXORPS Y3, Y3, Y3
	VCMPPS $0x1e, Y3, Y8, Y13  // D > 0
	VMULPS Y11, Y1, Y9
	VMULPS Y6, Y2, Y10
	VSUBPS Y10, Y9, Y9
	VDIVPS Y8, Y9, Y9          // scale
	VMULPS Y2, Y7, Y10
	VMULPS Y11, Y6, Y12
	VSUBPS Y12, Y10, Y10
	VDIVPS Y8, Y10, Y10        // min
	VCMPPS $0x1e, Y3, Y10, Y12 // min > 0
	VDIVPS Y7, Y11, Y14        // sXL/sL2
	VBLENDVPS Y12, Y14, Y9, Y9
	VBLENDVPS Y12, Y3, Y10, Y10
	VMOVUPS Y9, 32(R11)
	VMOVUPS Y10, 64(R11)
	VMOVUPS Y13, 96(R11)
	// The error of each lane's levels at its scale and min.
	MOVQ x+8(FP), SI
	MOVQ ws+16(FP), DI
	MOVQ lf+80(FP), R9
	MOVL $0x7fffffff, DX
	VMOVD DX, X2
	VPBROADCASTD X2, Y2
	VXORPS Y6, Y6, Y6
	MOVBLZX useMad+72(FP), AX
	TESTQ AX, AX
	JZ   passsq
passmad:
	VMULPS (R9), Y9, Y8
	VADDPS Y10, Y8, Y8
	VBROADCASTSS (SI), Y11
	VSUBPS Y11, Y8, Y8
	VANDPS Y2, Y8, Y8
	VBROADCASTSS (DI), Y12
	VMULPS Y8, Y12, Y12
	VADDPS Y12, Y6, Y6
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $32, R9
	DECQ CX
	JNZ  passmad
	JMP  passdone
passsq:
	VMULPS (R9), Y9, Y8
	VADDPS Y10, Y8, Y8
	VBROADCASTSS (SI), Y11
	VSUBPS Y11, Y8, Y8
	VMULPS Y8, Y8, Y8
	VBROADCASTSS (DI), Y12
	VMULPS Y8, Y12, Y12
	VADDPS Y12, Y6, Y6
	ADDQ $4, SI
	ADDQ $4, DI
	ADDQ $32, R9
	DECQ CX
	JNZ  passsq
passdone:
	VMOVUPS Y6, (R11)
	VZEROUPPER
	RET

DATA steplanes<>+0(SB)/4, $0
DATA steplanes<>+4(SB)/4, $1
DATA steplanes<>+8(SB)/4, $2
DATA steplanes<>+12(SB)/4, $3
DATA steplanes<>+16(SB)/4, $4
DATA steplanes<>+20(SB)/4, $5
DATA steplanes<>+24(SB)/4, $6
DATA steplanes<>+28(SB)/4, $7
GLOBL steplanes<>(SB), RODATA|NOPTR, $32
