//go:build arm && !purego

#include "textflag.h"
#include "kernels_arm.h"

// The armv7 NEON sums of TQ1_0, TQ2_0 and of the ter2 and ter2s128 layouts (the
// same code bytes: ternary.go), WORD-encoded (Arm ARM A32; Go's arm
// assembler has no NEON mnemonics): the 2-bit codes q split with VSHR and
// VAND, multiplied with VMULL/VMLAL.S8 into int16 lanes (a lane takes at
// most 32 products, |sum| <= 32*3*128 < 2^15), widened with VPADDL. Against
// Q8_K the sums are of q*y less the bsums (sum (q-1)*y), against Q8_0 of
// (q-1)*y. Go scales them (ternary_arm.go), in the portable kernels'
// float steps.

// VLD1.8 {D(v)-D(v+3)}, [R(n)]! and {D(v), D(v+1)}, [R(n)]! (advancing
// R(n) by 32, 16 bytes)
#define VLD1x4P(v, n) WORD $(0xF420020D | ((n)<<16) | RD(v))
#define VLD1x2P(v, n) WORD $(0xF4200A0D | ((n)<<16) | RD(v))
// VST1.8 {D(v), D(v+1)}, [R(n)]! and {D(v)}, [R(n)]!
#define VST1x2P(v, n) WORD $(0xF4000A0D | ((n)<<16) | RD(v))
#define VST1x1P(v, n) WORD $(0xF400070D | ((n)<<16) | RD(v))
// VMLAL.S8 Q(d/2), D(n), D(m)
#define VMLALS8(d, n, m) WORD $(0xF2800800 | RN(n) | RD(d) | RM(m))
// VSUB.I32 and VSUB.I8 Q(d/2), Q(n/2), Q(m/2)
#define VSUBI32(d, n, m) WORD $(0xF3200840 | RN(n) | RD(d) | RM(m))
#define VSUBI8(d, n, m) WORD $(0xF3000840 | RN(n) | RD(d) | RM(m))
// VSHR.U8 Q(d/2), Q(m/2), #sh
#define VSHRU8(d, m, sh) WORD $(0xF3800050 | ((16-(sh))<<16) | RD(d) | RM(m))
// VMOV.I8 Q(d/2), #imm
#define VMOVI8(d, imm) WORD $(0xF2800E50 | RD(d) | ((imm)&15) | ((((imm)>>4)&7)<<16) | ((((imm)>>7)&1)<<24))
// VMUL.I8 and VHADD.U8 Q(d/2), Q(n/2), Q(m/2)
#define VMULI8(d, n, m) WORD $(0xF2000950 | RN(n) | RD(d) | RM(m))
#define VHADDU8(d, n, m) WORD $(0xF3000040 | RN(n) | RD(d) | RM(m))
// VLD1.32 {D(v)[], D(v+1)[]}, [R(n)] (four bytes into every 32-bit lane)
#define VLD1R32(v, n) WORD $(0xF4A00CAF | ((n)<<16) | RD(v))

// The four fields of the 16 code bytes in Q(c/2) into Q10-Q13 (D20-D27;
// field l of byte j is weight 16l+j of a ter2 group; Q15: 0x03 bytes).
#define FIELDS(c) \
	VANDQ(20, c, 30) \
	VSHRU8(22, c, 2) \
	VSHRU8(24, c, 4) \
	VSHRU8(26, c, 6) \
	VANDQ(22, 22, 30) \
	VANDQ(24, 24, 30)

// Q14 (int16) = products of D(x)..D(x+3) and D(y)..D(y+3), summed by lane.
#define MUL4(x, y) \
	VMULLS8(28, x, y) \
	VMLALS8(28, x+1, y+1) \
	VMLALS8(28, x+2, y+2) \
	VMLALS8(28, x+3, y+3)
// Q14 (int16) += products of D(x), D(x+1) and D(y), D(y+1).
#define MLA2(x, y) \
	VMLALS8(28, x, y) \
	VMLALS8(28, x+1, y+1)
// Q14 (int16) += products of D(x)..D(x+3) and D(y)..D(y+3).
#define MLA4(x, y) \
	VMLALS8(28, x, y) \
	VMLALS8(28, x+1, y+1) \
	VMLALS8(28, x+2, y+2) \
	VMLALS8(28, x+3, y+3)

// One ter2 group of 64 weights (16 code bytes at R0) against 64 Q8_K
// activations at R1 (both advanced): sum q*y into D(d), as int32 pairs
// (two lanes, added later).
#define K_GROUP(d) \
	VLD1x2P(0, 0) \
	VLD1x4P(4, 1) \
	VLD1x4P(8, 1) \
	FIELDS(0) \
	VMULLS8(28, 20, 4) \
	VMLALS8(28, 21, 5) \
	VMLALS8(28, 22, 6) \
	VMLALS8(28, 23, 7) \
	MLA4(24, 8) \
	VPADDLS16(28, 28) \
	VPADDI32(d, 28, 29)

// Q8 = the four group sums of q*y of a block less their bsums (at R1,
// advanced): sum (q-1)*y per group.
#define K_BLOCK \
	K_GROUP(12) \
	K_GROUP(13) \
	K_GROUP(14) \
	K_GROUP(15) \
	VPADDI32(16, 12, 13) \
	VPADDI32(17, 14, 15) \
	VLD1x4P(0, 1) \
	VPADDLS16(0, 0) \
	VPADDLS16(2, 2) \
	VPADDI32(0, 0, 1) \
	VPADDI32(1, 2, 3) \
	VSUBI32(16, 16, 0)

// func ter2SumsQ8KNEON(c, a *byte, nb int, out *int32): four sums per
// block of 256 weights (64 code bytes at c).
TEXT ·ter2SumsQ8KNEON(SB), NOSPLIT, $0-16
	MOVW c+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	VMOVI8(30, 3)
	ADD $4, R1
loop:
	K_BLOCK
	VST1x2P(16, 2)
	ADD $4, R1
	SUB.S $1, R3
	BNE loop
done:
	RET

// One TQ2_0 half block: 32 code bytes at R0 (Q0, Q1; field l of byte j is
// weight 32l+j), its 128 activations at R1 (D4-D19), into Q14.
#define TQ2_HALF \
	VLD1x4P(0, 0) \
	VLD1x4P(4, 1) \
	VLD1x4P(8, 1) \
	VLD1x4P(12, 1) \
	VLD1x4P(16, 1) \
	FIELDS(0) \
	MLA2(20, 4) \
	MLA2(22, 8) \
	MLA2(24, 12) \
	MLA2(26, 16) \
	FIELDS(2) \
	MLA2(20, 6) \
	MLA2(22, 10) \
	MLA2(24, 14) \
	MLA2(26, 18)

// The sum of a TQ block: Q14's int16 lanes, widened, less the bsums at R1
// (advanced), stored to (R2) (advanced).
#define TQ_STORE \
	VPADDLS16(28, 28) \
	VLD1x4P(0, 1) \
	VPADDLS16(0, 0) \
	VPADALS16(0, 2) \
	VSUBI32(28, 28, 0) \
	VPADDI32(28, 28, 29) \
	VPADDI32(28, 28, 28) \
	VMOVRD(4, 28) \
	MOVW R4, (R2) \
	ADD $4, R2

// func tq2_0SumsNEON(w, a *byte, nb int, out *int32): one sum per block
// (66 bytes: qs[64], d; field l of qs byte 32h+j is weight 128h+32l+j).
TEXT ·tq2_0SumsNEON(SB), NOSPLIT, $0-16
	MOVW w+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	VMOVI8(30, 3)
	ADD $4, R1
loop:
	VMOVI8(28, 0)
	TQ2_HALF
	TQ2_HALF
	TQ_STORE
	ADD $2, R0
	ADD $4, R1
	SUB.S $1, R3
	BNE loop
done:
	RET

// func ter2SumsQ8_0NEON(c, a *byte, ng int, out *int32): two sums per
// group (16 code bytes at c, two q8_0 blocks at a).
TEXT ·ter2SumsQ8_0NEON(SB), NOSPLIT, $0-16
	MOVW c+0(FP), R0
	MOVW a+4(FP), R1
	MOVW ng+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	VMOVI8(30, 3)
	VMOVI8(18, 1)
	ADD $2, R1
loop:
	VLD1x2P(0, 0)
	VLD1x4(4, 1)
	ADD $34, R1
	VLD1x4(8, 1)
	ADD $34, R1
	FIELDS(0)
	VSUBI8(20, 20, 18)
	VSUBI8(22, 22, 18)
	VSUBI8(24, 24, 18)
	VSUBI8(26, 26, 18)
	MUL4(20, 4)
	VPADDLS16(28, 28)
	VPADDI32(12, 28, 29)
	MUL4(24, 8)
	VPADDLS16(28, 28)
	VPADDI32(13, 28, 29)
	VPADDI32(16, 12, 13)
	VST1x1P(16, 2)
	SUB.S $1, R3
	BNE loop
done:
	RET

// tq1qh: the multipliers of TQ1_0's qh trits (its four bytes in every
// 32-bit lane times 1, 3, 9, 27: weights 240+4n+j are trit n of byte j).
DATA tq1qh<>+0(SB)/8, $0x0303030301010101
DATA tq1qh<>+8(SB)/8, $0x1b1b1b1b09090909
GLOBL tq1qh<>(SB), RODATA|NOPTR, $16

// Trit 0 of the bytes of Q(s/2) into Q12 (D24, D25), and trit n (Q(p/2):
// 3^n bytes): ((b*3^n mod 256)*3)>>8 as (p + p>>1)/2 >> 6 (VHADD, exact);
// Q13 scratch.
#define TRIT0(s) \
	VSHRU8(26, s, 1) \
	VHADDU8(24, s, 26) \
	VSHRU8(24, 24, 6)
#define TRIT(s, p) \
	VMULI8(24, s, p) \
	VSHRU8(26, 24, 1) \
	VHADDU8(24, 24, 26) \
	VSHRU8(24, 24, 6)

// Q14 (int16) += products of the trits in D24, D25 and D(y), D(y+1).
#define TMLA(y) \
	VMLALS8(28, 24, y) \
	VMLALS8(28, 25, y+1)

// func tq1_0SumsNEON(w, a *byte, nb int, out *int32): one sum per block
// (54 bytes: qs[48], qh[4], d): trit n of qs bytes 0-15 (Q0) and 16-31
// (Q1) are weights 32n.. and 32n+16.., of bytes 32-47 (Q2) 160+16n.., of
// qh (Q3) 240... Q8-Q11: 3, 9, 27, 81; Q15: tq1qh.
TEXT ·tq1_0SumsNEON(SB), NOSPLIT, $0-16
	MOVW w+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	VMOVI8(16, 3)
	VMOVI8(18, 9)
	VMOVI8(20, 27)
	VMOVI8(22, 81)
	MOVW $tq1qh<>(SB), R5
	VLD1x2P(30, 5)
	ADD $4, R1
loop:
	VMOVI8(28, 0)
	VLD1x4P(0, 0)
	VLD1x2P(4, 0)
	VLD1R32(6, 0)
	ADD $6, R0
	VLD1x4P(8, 1)
	VLD1x4P(12, 1)
	TRIT0(0)
	TMLA(8)
	TRIT0(2)
	TMLA(10)
	TRIT(0, 16)
	TMLA(12)
	TRIT(2, 16)
	TMLA(14)
	VLD1x4P(8, 1)
	VLD1x4P(12, 1)
	TRIT(0, 18)
	TMLA(8)
	TRIT(2, 18)
	TMLA(10)
	TRIT(0, 20)
	TMLA(12)
	TRIT(2, 20)
	TMLA(14)
	VLD1x4P(8, 1)
	VLD1x4P(12, 1)
	TRIT(0, 22)
	TMLA(8)
	TRIT(2, 22)
	TMLA(10)
	TRIT0(4)
	TMLA(12)
	TRIT(4, 16)
	TMLA(14)
	VLD1x4P(8, 1)
	VLD1x4P(12, 1)
	TRIT(4, 18)
	TMLA(8)
	TRIT(4, 20)
	TMLA(10)
	TRIT(4, 22)
	TMLA(12)
	TRIT(6, 30)
	TMLA(14)
	TQ_STORE
	ADD $4, R1
	SUB.S $1, R3
	BNE loop
done:
	RET
