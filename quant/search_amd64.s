//go:build amd64 && !purego

#include "textflag.h"

// The candidate-scale searches of make_qx_quants and make_qkx2/qkx3_quants
// with one candidate per AVX lane: every lane adds its terms in ggml's
// order with separate multiplies and adds (no FMA), so each lane computes
// the floats the scalar C loop computes for that candidate.

// LEVELI: MAX(lo, MIN(hi, nearest_int(v))) as int32 lanes, with
// nearest_int's bit trick: the float add of 1.5*2^23, then
// (bits & 0x7fffff) - 0x400000.
#define LEVELI(v) \
	VADDPS Y1, v, v; \
	VPAND  Y2, v, v; \
	VPSUBD Y3, v, v; \
	VPMAXSD Y4, v, v; \
	VPMINSD Y5, v, v

// LEVEL is LEVELI as a float.
#define LEVEL(v) \
	LEVELI(v); \
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

// func q3LanesAVX2(xt *[16][8]float32, lf *[16][8]float32, out *[2][8]float32)
// make_q3_quants (nmax 4, the weights x^2) for eight sub-blocks of 16 at
// once, sub-block k in lane k (xt[i][k] is its value i). Each lane runs
// the C steps in the C order: the first element of largest magnitude (NaN
// never wins), levels at -4/max, then up to five rounds of coordinate
// descent over i = 0..15, each change tested against the lane's running
// sums. A lane that made no change in a round would make none in the next
// (nothing it reads has moved), so rounds stop when no lane changed.
// Levels (-4..3) go to lf, out[0] = sumlx/suml2 (0 unless suml2 > 0),
// out[1] = the largest magnitude (the caller zeroes sub-blocks below
// GROUP_MAX_EPS).
TEXT ·q3LanesAVX2(SB), 0, $1024-24
	MOVQ xt+0(FP), SI
	MOVQ lf+8(FP), DI
	MOVQ out+16(FP), R11
	// Largest magnitude and its first element.
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	MOVL $0x7fffffff, DX
	VMOVD DX, X9
	VPBROADCASTD X9, Y9
	MOVL $0x7f800000, DX
	VMOVD DX, X10
	VPBROADCASTD X10, Y10
	XORQ AX, AX
q3max:
	VMOVUPS (SI)(AX*1), Y11
	VPAND Y9, Y11, Y12
	VPCMPGTD Y10, Y12, Y13
	VPANDN Y12, Y13, Y12
	VPCMPGTD Y0, Y12, Y13
	VPBLENDVB Y13, Y12, Y0, Y0
	VPBLENDVB Y13, Y11, Y1, Y1
	ADDQ $32, AX
	CMPQ AX, $512
	JLT  q3max
	VMOVUPS Y0, 32(R11)
	// iscale = -4/max.
	MOVL $0xc0800000, DX
	VMOVD DX, X0
	VBROADCASTSS X0, Y0
	VDIVPS Y1, Y0, Y0
	MOVQ $-4, AX
	MOVQ $3, BX
	CONSTS
	// Levels, weights w = x*x and w*x (at 0 and 512 of the frame), sums.
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX
q3init:
	VMOVUPS (SI)(AX*1), Y8
	VMULPS Y8, Y0, Y9
	LEVEL(Y9)
	VMOVUPS Y9, (DI)(AX*1)
	VMULPS Y8, Y8, Y10
	VMOVUPS Y10, 0(SP)(AX*1)
	VMULPS Y8, Y10, Y11
	VMOVUPS Y11, 512(SP)(AX*1)
	VMULPS Y9, Y11, Y12
	VADDPS Y12, Y6, Y6
	VMULPS Y9, Y10, Y12
	VMULPS Y9, Y12, Y12
	VADDPS Y12, Y7, Y7
	ADDQ $32, AX
	CMPQ AX, $512
	JLT  q3init
	MOVQ $5, CX
q3round:
	VXORPS Y14, Y14, Y14 // changed
	XORQ AX, AX
q3elem:
	VMOVUPS (DI)(AX*1), Y8           // li
	VMULPS 512(SP)(AX*1), Y8, Y12
	VSUBPS Y12, Y6, Y12              // slx = sumlx - wx*li
	VMULPS 0(SP)(AX*1), Y8, Y13
	VMULPS Y8, Y13, Y13
	VSUBPS Y13, Y7, Y13              // sl2 = suml2 - (w*li)*li
	VMULPS (SI)(AX*1), Y13, Y9
	VDIVPS Y12, Y9, Y9               // x*sl2/slx
	LEVEL(Y9)                        // newL
	VCMPPS $0x1e, zeros<>(SB), Y12, Y0 // slx > 0
	VCMPPS $0x04, Y8, Y9, Y10        // newL != li
	VANDPS Y10, Y0, Y0
	VMULPS 512(SP)(AX*1), Y9, Y10
	VADDPS Y10, Y12, Y12             // slx += wx*newL
	VMULPS 0(SP)(AX*1), Y9, Y11
	VMULPS Y9, Y11, Y11
	VADDPS Y11, Y13, Y13             // sl2 += (w*newL)*newL
	VCMPPS $0x1e, zeros<>(SB), Y13, Y10 // sl2 > 0
	VANDPS Y10, Y0, Y0
	VMULPS Y12, Y12, Y10
	VMULPS Y7, Y10, Y10              // slx*slx*suml2
	VMULPS Y6, Y6, Y11
	VMULPS Y13, Y11, Y11             // sumlx*sumlx*sl2
	VCMPPS $0x1e, Y11, Y10, Y10
	VANDPS Y10, Y0, Y0               // accept
	VBLENDVPS Y0, Y9, Y8, Y8
	VMOVUPS Y8, (DI)(AX*1)
	VBLENDVPS Y0, Y12, Y6, Y6
	VBLENDVPS Y0, Y13, Y7, Y7
	VORPS Y0, Y14, Y14
	ADDQ $32, AX
	CMPQ AX, $512
	JLT  q3elem
	VPTEST Y14, Y14
	JZ   q3done
	DECQ CX
	JNZ  q3round
q3done:
	// scale = suml2 > 0 ? sumlx/suml2 : 0.
	VDIVPS Y7, Y6, Y0
	VCMPPS $0x1e, zeros<>(SB), Y7, Y1
	VANDPS Y1, Y0, Y0
	VMOVUPS Y0, (R11)
	VZEROUPPER
	RET

GLOBL zeros<>(SB), RODATA|NOPTR, $32

// func requantAVX2(x *float32, nsub, sub int, d, add *float32, lo, hi, off int, L *uint8)
// The K-quants' last step, levels from the stored scales: for each of the
// nsub sub-blocks of sub values (a multiple of 8) whose d[s] is not 0,
// L = MAX(lo, MIN(hi, nearest_int((x + add[s])/d[s]))) + off; the others
// keep their levels.
TEXT ·requantAVX2(SB), NOSPLIT, $0-72
	MOVQ x+0(FP), SI
	MOVQ nsub+8(FP), CX
	MOVQ d+24(FP), R8
	MOVQ add+32(FP), R10
	MOVQ lo+40(FP), AX
	MOVQ hi+48(FP), BX
	MOVQ L+64(FP), DI
	CONSTS
	MOVQ off+56(FP), DX
	VMOVD DX, X6
	VPBROADCASTD X6, Y6
	VXORPS X7, X7, X7
rqsub:
	MOVQ sub+16(FP), R9
	VMOVSS (R8), X8
	VUCOMISS X7, X8
	JNE  rqdo
	JPS  rqdo
	// d == 0: skip the sub-block.
	LEAQ (SI)(R9*4), SI
	ADDQ R9, DI
	JMP  rqnext
rqdo:
	VBROADCASTSS X8, Y8
	VBROADCASTSS (R10), Y9
rqloop:
	VMOVUPS (SI), Y10
	VADDPS Y9, Y10, Y10
	VDIVPS Y8, Y10, Y10
	LEVELI(Y10)
	VPADDD Y6, Y10, Y10
	VEXTRACTI128 $1, Y10, X11
	VPACKUSDW X11, X10, X10
	VPACKUSWB X10, X10, X10
	VMOVQ X10, (DI)
	ADDQ $32, SI
	ADDQ $8, DI
	SUBQ $8, R9
	JNZ  rqloop
rqnext:
	ADDQ $4, R8
	ADDQ $4, R10
	DECQ CX
	JNZ  rqsub
	VZEROUPPER
	RET
