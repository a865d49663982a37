//go:build arm && !purego

#include "textflag.h"
#include "kernels_arm.h"

// The armv7 (GOARM=7) NEON sums of Q8_0 and Q4_K, as q8_0SumsNEON and
// q4_KSumsNEON compute them on arm64 (see kernels_arm64.s). Go's arm assembler has no NEON mnemonics, so every
// NEON instruction is WORD-encoded (Arm ARM A32; kernels_arm.h has the
// encodings shared with ternary_arm.s and q1lut_arm.s).

// VMOV.32 R(t), D(n)[1]
#define VMOVRD1(t, n) WORD $(0xEE300B10 | RN(n) | ((t)<<12))

// Q(acc/2) = pairwise int32 sums of the products of D(x)..D(x+3) and
// D(y)..D(y+3); Q10 and Q11 are scratch.
#define MAC32(acc, x, y) \
	VMULLS8(20, x, y) \
	VMULLS8(22, x+1, y+1) \
	VPADDLS16(acc, 20) \
	VPADALS16(acc, 22) \
	VMULLS8(20, x+2, y+2) \
	VMULLS8(22, x+3, y+3) \
	VPADALS16(acc, 20) \
	VPADALS16(acc, 22)

// func q8_0SumsNEON(w, a *byte, nb int, out *int32)
TEXT ·q8_0SumsNEON(SB), NOSPLIT, $0-16
	MOVW w+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	ADD $2, R0
	ADD $2, R1
loop:
	VLD1x4(0, 0)
	ADD $34, R0
	VLD1x4(4, 1)
	ADD $34, R1
	MAC32(12, 0, 4)
	VPADDI32(12, 12, 13)
	VPADDI32(12, 12, 12)
	VMOVRD(4, 12)
	MOVW R4, (R2)
	ADD $4, R2
	SUB.S $1, R3
	BNE loop
done:
	RET

// One quarter of a Q4_K super-block: 32 bytes of nibbles at R0, 64
// activations at R1 (both advanced); the low nibbles' sum (group 2j) and
// the high ones' (2j+1) are stored to (R2), advanced by 8. Q15 holds 0x0F.
#define Q4K_QUARTER \
	VLD1x4(0, 0) \
	ADD $32, R0 \
	VLD1x4(4, 1) \
	ADD $32, R1 \
	VLD1x4(8, 1) \
	ADD $32, R1 \
	VANDQ(12, 0, 30) \
	VANDQ(14, 2, 30) \
	VSHRU8x4(16, 0) \
	VSHRU8x4(18, 2) \
	MAC32(24, 12, 4) \
	MAC32(26, 16, 8) \
	VPADDI32(24, 24, 25) \
	VPADDI32(26, 26, 27) \
	VPADDI32(24, 24, 26) \
	VMOVRD(4, 24) \
	VMOVRD1(5, 24) \
	MOVW R4, (R2) \
	MOVW R5, 4(R2) \
	ADD $8, R2

// func q4_KSumsNEON(w, a *byte, nb int, out *int32)
TEXT ·q4_KSumsNEON(SB), NOSPLIT, $0-16
	MOVW w+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	VMOVI8x15(30)
	ADD $16, R0
	ADD $4, R1
loop:
	Q4K_QUARTER
	Q4K_QUARTER
	Q4K_QUARTER
	Q4K_QUARTER
	ADD $16, R0
	ADD $36, R1
	SUB.S $1, R3
	BNE loop
done:
	RET
