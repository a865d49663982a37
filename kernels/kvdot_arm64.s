//go:build arm64 && !purego

#include "textflag.h"
#include "kernels_arm64.h"

// SXTL2 Vd.8H, Vn.16B (sign extend the upper eight bytes)
#define SXTL2_8H(d, n) WORD $(0x4F08A400 | (n<<5) | d)

// func vdotsF16NEON(v, a *byte, vstride, m int, lanes *[8][4]float32)
// lanes[r] = dotF16NEON's four sums of row v + r*vstride with a over m
// halves (m a positive multiple of 8), for the eight rows r < 8 at once:
// the transposed F16 value cache's weighted sums, eight independent chains
// of adds where one row alone waits on each add's latency. The products
// are rounded (FMUL) then added (FADD): a product of two halves is exact
// in single precision, so this equals dotF16NEON's FMLA bit for bit.
TEXT ·vdotsF16NEON(SB), NOSPLIT, $0-40
	MOVD v+0(FP), R0
	MOVD a+8(FP), R8
	MOVD vstride+16(FP), R11
	MOVD m+24(FP), R9
	ADD  R11, R0, R1
	ADD  R11, R1, R2
	ADD  R11, R2, R3
	ADD  R11, R3, R4
	ADD  R11, R4, R5
	ADD  R11, R5, R6
	ADD  R11, R6, R7
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16

vf16loop:
	VLD1.P 16(R8), [V26.H8]
	FCVTL(24, 26)
	FCVTL2(25, 26)
	VLD1.P 16(R0), [V0.H8]
	VLD1.P 16(R1), [V1.H8]
	VLD1.P 16(R2), [V2.H8]
	VLD1.P 16(R3), [V3.H8]
	VLD1.P 16(R4), [V4.H8]
	VLD1.P 16(R5), [V5.H8]
	VLD1.P 16(R6), [V6.H8]
	VLD1.P 16(R7), [V7.H8]
	FCVTL(8, 0)
	FMUL4(8, 8, 24)
	FCVTL(9, 1)
	FMUL4(9, 9, 24)
	FCVTL(10, 2)
	FMUL4(10, 10, 24)
	FCVTL(11, 3)
	FMUL4(11, 11, 24)
	FCVTL(12, 4)
	FMUL4(12, 12, 24)
	FCVTL(13, 5)
	FMUL4(13, 13, 24)
	FCVTL(14, 6)
	FMUL4(14, 14, 24)
	FCVTL(15, 7)
	FMUL4(15, 15, 24)
	FADD4(16, 16, 8)
	FADD4(17, 17, 9)
	FADD4(18, 18, 10)
	FADD4(19, 19, 11)
	FADD4(20, 20, 12)
	FADD4(21, 21, 13)
	FADD4(22, 22, 14)
	FADD4(23, 23, 15)
	FCVTL2(8, 0)
	FMUL4(8, 8, 25)
	FCVTL2(9, 1)
	FMUL4(9, 9, 25)
	FCVTL2(10, 2)
	FMUL4(10, 10, 25)
	FCVTL2(11, 3)
	FMUL4(11, 11, 25)
	FCVTL2(12, 4)
	FMUL4(12, 12, 25)
	FCVTL2(13, 5)
	FMUL4(13, 13, 25)
	FCVTL2(14, 6)
	FMUL4(14, 14, 25)
	FCVTL2(15, 7)
	FMUL4(15, 15, 25)
	FADD4(16, 16, 8)
	FADD4(17, 17, 9)
	FADD4(18, 18, 10)
	FADD4(19, 19, 11)
	FADD4(20, 20, 12)
	FADD4(21, 21, 13)
	FADD4(22, 22, 14)
	FADD4(23, 23, 15)
	SUBS $8, R9
	BNE  vf16loop
	MOVD lanes+32(FP), R10
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R10)
	VST1 [V20.S4, V21.S4, V22.S4, V23.S4], (R10)
	RET

// func madQ8_0RowsNEON(out *float32, v *byte, vstride, nb, npos int, p *float32)
// out += sum over t < npos of p[t] * the dequantized Q8_0 row v + t*vstride
// (nb blocks), in order of t: MadQ8_0RowsAdd with each block's 32 sums in
// eight registers across all the rows, each value d*q then w*(d*q), both
// rounded, then added.
TEXT ·madQ8_0RowsNEON(SB), NOSPLIT, $0-48
	MOVD out+0(FP), R0
	MOVD v+8(FP), R1
	MOVD vstride+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD npos+32(FP), R4
	MOVD p+40(FP), R5

mq8blk:
	VLD1 (R0), [V16.S4, V17.S4, V18.S4, V19.S4]
	ADD  $64, R0, R6
	VLD1 (R6), [V20.S4, V21.S4, V22.S4, V23.S4]
	MOVD R1, R7
	MOVD R5, R8
	MOVD R4, R9

mq8pos:
	// the block's f16 scale d in every lane of V24, the weight w in V25
	FMOVS (R7), F24
	FCVTL(24, 24)
	VDUP  V24.S[0], V24.S4
	VLD1R (R8), [V25.S4]
	ADD   $4, R8
	ADD   $2, R7, R10
	VLD1  (R10), [V0.B16, V1.B16]
	SXTL8H(2, 0)
	SXTL2_8H(3, 0)
	SXTL8H(4, 1)
	SXTL2_8H(5, 1)
	SXTL4S(6, 2)
	SXTL2_4S(7, 2)
	SXTL4S(8, 3)
	SXTL2_4S(9, 3)
	SXTL4S(10, 4)
	SXTL2_4S(11, 4)
	SXTL4S(12, 5)
	SXTL2_4S(13, 5)
	SCVTF4(6, 6)
	SCVTF4(7, 7)
	SCVTF4(8, 8)
	SCVTF4(9, 9)
	SCVTF4(10, 10)
	SCVTF4(11, 11)
	SCVTF4(12, 12)
	SCVTF4(13, 13)
	FMUL4(6, 6, 24)
	FMUL4(7, 7, 24)
	FMUL4(8, 8, 24)
	FMUL4(9, 9, 24)
	FMUL4(10, 10, 24)
	FMUL4(11, 11, 24)
	FMUL4(12, 12, 24)
	FMUL4(13, 13, 24)
	FMUL4(6, 6, 25)
	FMUL4(7, 7, 25)
	FMUL4(8, 8, 25)
	FMUL4(9, 9, 25)
	FMUL4(10, 10, 25)
	FMUL4(11, 11, 25)
	FMUL4(12, 12, 25)
	FMUL4(13, 13, 25)
	FADD4(16, 16, 6)
	FADD4(17, 17, 7)
	FADD4(18, 18, 8)
	FADD4(19, 19, 9)
	FADD4(20, 20, 10)
	FADD4(21, 21, 11)
	FADD4(22, 22, 12)
	FADD4(23, 23, 13)
	ADD  R2, R7
	SUBS $1, R9
	BNE  mq8pos
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R0)
	VST1.P [V20.S4, V21.S4, V22.S4, V23.S4], 64(R0)
	ADD  $34, R1
	SUBS $1, R3
	BNE  mq8blk
	RET

// func scoresF16NEON(k, q *byte, kstride, hd, n4 int, lanes *[4]float32)
// For n4 groups of four keys kstride bytes apart from k: each key's four
// dotF16NEON sums with q over hd halves (a positive multiple of 8) into
// lanes, a key after the other; the four keys of a group at once, so that
// their dependent adds overlap. FMUL then FADD: the products of halves are
// exact, so the sums are dotF16NEON's.
TEXT ·scoresF16NEON(SB), NOSPLIT, $0-48
	MOVD k+0(FP), R0
	MOVD q+8(FP), R4
	MOVD kstride+16(FP), R5
	MOVD hd+24(FP), R6
	MOVD n4+32(FP), R7
	MOVD lanes+40(FP), R8

sf16grp:
	ADD  R5, R0, R1
	ADD  R5, R1, R2
	ADD  R5, R2, R3
	ADD  R5, R3, R12
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	MOVD R4, R9
	MOVD R6, R10

sf16loop:
	VLD1.P 16(R9), [V26.H8]
	FCVTL(24, 26)
	FCVTL2(25, 26)
	VLD1.P 16(R0), [V0.H8]
	VLD1.P 16(R1), [V1.H8]
	VLD1.P 16(R2), [V2.H8]
	VLD1.P 16(R3), [V3.H8]
	FCVTL(8, 0)
	FMUL4(8, 8, 24)
	FCVTL(9, 1)
	FMUL4(9, 9, 24)
	FCVTL(10, 2)
	FMUL4(10, 10, 24)
	FCVTL(11, 3)
	FMUL4(11, 11, 24)
	FADD4(16, 16, 8)
	FADD4(17, 17, 9)
	FADD4(18, 18, 10)
	FADD4(19, 19, 11)
	FCVTL2(8, 0)
	FMUL4(8, 8, 25)
	FCVTL2(9, 1)
	FMUL4(9, 9, 25)
	FCVTL2(10, 2)
	FMUL4(10, 10, 25)
	FCVTL2(11, 3)
	FMUL4(11, 11, 25)
	FADD4(16, 16, 8)
	FADD4(17, 17, 9)
	FADD4(18, 18, 10)
	FADD4(19, 19, 11)
	SUBS $8, R10
	BNE  sf16loop
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], 64(R8)
	MOVD R12, R0
	SUBS $1, R7
	BNE  sf16grp
	RET
