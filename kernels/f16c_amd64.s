//go:build amd64 && !purego

#include "textflag.h"

// func dotF16Lanes(w, a *byte, n int, out *[4]float32)
// out[k] = sum over j of w[4j+k]*a[4j+k] (halves), j < n/4, each product
// rounded to float32 and added in order: the four accumulators of dotF16.
TEXT ·dotF16Lanes(SB), NOSPLIT, $0-32
	MOVQ w+0(FP), SI
	MOVQ a+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ out+24(FP), DX
	VXORPS X0, X0, X0
	SHRQ $2, CX
	JZ   done

loop:
	VCVTPH2PS (SI), X1
	VCVTPH2PS (DI), X2
	VMULPS    X2, X1, X1
	VADDPS    X1, X0, X0
	ADDQ      $8, SI
	ADDQ      $8, DI
	DECQ      CX
	JNZ       loop

done:
	VMOVUPS X0, (DX)
	RET

// func scoresF16AVX(k, q *byte, kstride, hd, npos int, scale float32, out *float32) float32
// out[t] = dotF16(hd, k + t*kstride, q) * scale for t < npos, hd a multiple
// of 4: each key's four lanes summed in order as dotF16Lanes sums them,
// then (s0+s1)+(s2+s3) (two VHADDPS); four keys at a time so that their
// dependent adds overlap. Returns the maximum (-Inf for none).
TEXT ·scoresF16AVX(SB), NOSPLIT, $0-60
	MOVQ   k+0(FP), SI
	MOVQ   q+8(FP), DI
	MOVQ   kstride+16(FP), R8
	MOVQ   hd+24(FP), BX
	SHLQ   $1, BX
	MOVQ   npos+32(FP), CX
	VMOVSS scale+40(FP), X15
	MOVQ   out+48(FP), DX
	MOVL   $0xff800000, AX
	VMOVD  AX, X14

sf4key:
	CMPQ   CX, $4
	JLT    sf1key
	LEAQ   (SI)(R8*1), R10
	LEAQ   (R10)(R8*1), R11
	LEAQ   (R11)(R8*1), R12
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	XORQ   AX, AX

sf4loop:
	VCVTPH2PS (DI)(AX*1), X8
	VCVTPH2PS (SI)(AX*1), X4
	VCVTPH2PS (R10)(AX*1), X5
	VCVTPH2PS (R11)(AX*1), X6
	VCVTPH2PS (R12)(AX*1), X7
	VMULPS    X8, X4, X4
	VMULPS    X8, X5, X5
	VMULPS    X8, X6, X6
	VMULPS    X8, X7, X7
	VADDPS    X4, X0, X0
	VADDPS    X5, X1, X1
	VADDPS    X6, X2, X2
	VADDPS    X7, X3, X3
	ADDQ      $8, AX
	CMPQ      AX, BX
	JLT       sf4loop
	VHADDPS   X0, X0, X0
	VHADDPS   X0, X0, X0
	VMULSS    X15, X0, X0
	VMOVSS    X0, (DX)
	VMAXSS    X14, X0, X14
	VHADDPS   X1, X1, X1
	VHADDPS   X1, X1, X1
	VMULSS    X15, X1, X1
	VMOVSS    X1, 4(DX)
	VMAXSS    X14, X1, X14
	VHADDPS   X2, X2, X2
	VHADDPS   X2, X2, X2
	VMULSS    X15, X2, X2
	VMOVSS    X2, 8(DX)
	VMAXSS    X14, X2, X14
	VHADDPS   X3, X3, X3
	VHADDPS   X3, X3, X3
	VMULSS    X15, X3, X3
	VMOVSS    X3, 12(DX)
	VMAXSS    X14, X3, X14
	ADDQ      $16, DX
	LEAQ      (R12)(R8*1), SI
	SUBQ      $4, CX
	JMP       sf4key

sf1key:
	TESTQ  CX, CX
	JEQ    sfdone
	VXORPS X0, X0, X0
	XORQ   AX, AX

sf1loop:
	VCVTPH2PS (DI)(AX*1), X8
	VCVTPH2PS (SI)(AX*1), X4
	VMULPS    X8, X4, X4
	VADDPS    X4, X0, X0
	ADDQ      $8, AX
	CMPQ      AX, BX
	JLT       sf1loop
	VHADDPS   X0, X0, X0
	VHADDPS   X0, X0, X0
	VMULSS    X15, X0, X0
	VMOVSS    X0, (DX)
	VMAXSS    X14, X0, X14
	ADDQ      $4, DX
	ADDQ      R8, SI
	DECQ      CX
	JMP       sf1key

sfdone:
	VMOVSS X14, ret+56(FP)
	RET

// func vdotsF16Lanes(v, a *byte, vstride, m int, lanes *[8][4]float32)
// lanes[r] = dotF16Lanes' four sums of row v + r*vstride with a over m
// halves (m a positive multiple of 4), for the eight rows r < 8 at once:
// the transposed F16 value cache's weighted sums, eight independent chains
// of adds where one row alone waits on each add's latency.
TEXT ·vdotsF16Lanes(SB), NOSPLIT, $0-40
	MOVQ   v+0(FP), SI
	MOVQ   a+8(FP), DI
	MOVQ   vstride+16(FP), DX
	MOVQ   m+24(FP), BX
	SHLQ   $1, BX
	LEAQ   (SI)(DX*1), CX
	LEAQ   (CX)(DX*1), R8
	LEAQ   (R8)(DX*1), R9
	LEAQ   (R9)(DX*1), R10
	LEAQ   (R10)(DX*1), R11
	LEAQ   (R11)(DX*1), R12
	LEAQ   (R12)(DX*1), R13
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	VXORPS X4, X4, X4
	VXORPS X5, X5, X5
	VXORPS X6, X6, X6
	VXORPS X7, X7, X7
	XORQ   AX, AX

vfloop:
	VCVTPH2PS (DI)(AX*1), X15
	VCVTPH2PS (SI)(AX*1), X8
	VCVTPH2PS (CX)(AX*1), X9
	VCVTPH2PS (R8)(AX*1), X10
	VCVTPH2PS (R9)(AX*1), X11
	VCVTPH2PS (R10)(AX*1), X12
	VCVTPH2PS (R11)(AX*1), X13
	VCVTPH2PS (R12)(AX*1), X14
	VMULPS    X15, X8, X8
	VMULPS    X15, X9, X9
	VMULPS    X15, X10, X10
	VMULPS    X15, X11, X11
	VMULPS    X15, X12, X12
	VMULPS    X15, X13, X13
	VMULPS    X15, X14, X14
	VADDPS    X8, X0, X0
	VCVTPH2PS (R13)(AX*1), X8
	VMULPS    X15, X8, X8
	VADDPS    X9, X1, X1
	VADDPS    X10, X2, X2
	VADDPS    X11, X3, X3
	VADDPS    X12, X4, X4
	VADDPS    X13, X5, X5
	VADDPS    X14, X6, X6
	VADDPS    X8, X7, X7
	ADDQ      $8, AX
	CMPQ      AX, BX
	JLT       vfloop
	MOVQ      lanes+32(FP), DX
	VMOVUPS   X0, (DX)
	VMOVUPS   X1, 16(DX)
	VMOVUPS   X2, 32(DX)
	VMOVUPS   X3, 48(DX)
	VMOVUPS   X4, 64(DX)
	VMOVUPS   X5, 80(DX)
	VMOVUPS   X6, 96(DX)
	VMOVUPS   X7, 112(DX)
	RET
