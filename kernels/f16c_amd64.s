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
