//go:build arm && !purego

#include "textflag.h"
#include "kernels_arm.h"

// The armv7 NEON sums of TQ1_0, TQ2_0 and of the ter2 and ter2s128 layouts (the
// same code bytes: ternary.go; ter3 at the end), WORD-encoded (Arm ARM A32; Go's arm
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

// ter3: 13 code bytes per 64-weight group, byte m holding weights m, m+13,
// m+26, m+39, m+52 as trits (the 65th, a pad, dropped). The 16 bytes
// loaded end with the group's 13 (R0 starts 3 bytes before the group, so
// no load passes the last group's end: the bytes before a row's first
// group are its scales, 4 or more where the kernels run), the trits are
// decoded as TQ1_0's, and trit n of byte m (weight 13n+m) is lane m+3 of
// Q1+n (D2+2n, D3+2n). Each eight weights in order are one VEXT where
// they lie in one trit vector, one VTBL (indexes ter3tbl) where they
// cross into the next.

// VLD1.8 {D(v), D(v+1)}, [R(n)], R(m) (advancing R(n) by R(m))
#define VLD1x2R(v, n, m) WORD $(0xF4200A00 | ((n)<<16) | RD(v) | (m))
// VEXT.8 D(d), D(n), D(m), #imm: bytes imm..7 of D(n), then D(m)'s
#define VEXT8(d, n, m, imm) WORD $(0xF2B00000 | RN(n) | RD(d) | RM(m) | ((imm)<<8))
// VTBL.8 D(d), {D(n)-D(n+3)}, D(m)
#define VTBL4(d, n, m) WORD $(0xF3B00B00 | RN(n) | RD(d) | RM(m))

// ter3tbl: the VTBL indexes of weights 8-15, 24-31, 32-39 and 48-55 of a
// group, in the tables of trit vectors 0-1, 1-2, 2-3 and 3-4.
DATA ter3tbl<>+0(SB)/8, $0x1514130f0e0d0c0b
DATA ter3tbl<>+8(SB)/8, $0x1817161514130f0e
DATA ter3tbl<>+16(SB)/8, $0x130f0e0d0c0b0a09
DATA ter3tbl<>+24(SB)/8, $0x161514130f0e0d0c
GLOBL ter3tbl<>(SB), RODATA|NOPTR, $32

// The trits of the group at R0 (advanced by R7 = 13) into Q1-Q5: trit n
// of p = b*3^n mod 256 (Q0, times Q7: 3 bytes, each step) is
// (p + p>>1)/2 >> 6.
#define TER3_TRITS \
	VLD1x2R(0, 0, 7) \
	VSHRU8(2, 0, 1) \
	VHADDU8(2, 0, 2) \
	VSHRU8(2, 2, 6) \
	TER3_TRIT(4) \
	TER3_TRIT(6) \
	TER3_TRIT(8) \
	TER3_TRIT(10)
#define TER3_TRIT(t) \
	VMULI8(0, 0, 14) \
	VSHRU8(t, 0, 1) \
	VHADDU8(t, 0, t) \
	VSHRU8(t, t, 6)

// Weights 0-15, 16-31, 32-47, 48-63 of the group (two D registers each)
// into Q15 (D30, D31).
#define TER3_W01 \
	VEXT8(30, 2, 3, 3) \
	VTBL4(31, 2, 16)
#define TER3_W23 \
	VEXT8(30, 4, 5, 6) \
	VTBL4(31, 4, 17)
#define TER3_W45 \
	VTBL4(30, 6, 18) \
	VEXT8(31, 8, 9, 4)
#define TER3_W67 \
	VTBL4(30, 8, 19) \
	VEXT8(31, 10, 11, 7)

#define TER3_CONSTS \
	SUB $3, R0 \
	MOVW $13, R7 \
	VMOVI8(14, 3) \
	MOVW $ter3tbl<>(SB), R5 \
	VLD1x4(16, 5)

// Half a ter3 group (weights WA, WB) against its 32 Q8_K activations at
// R1 (advanced) into Q14: MUL VMULLS8 sets it, VMLALS8 adds.
#define TER3_KHALF(WA, WB, MUL) \
	VLD1x4P(20, 1) \
	WA \
	MUL(28, 30, 20) \
	VMLALS8(28, 31, 21) \
	WB \
	VMLALS8(28, 30, 22) \
	VMLALS8(28, 31, 23)

// One ter3 group against 64 Q8_K activations at R1 (advanced): sum q*y
// into D(d) as int32 pairs.
#define TER3_KGROUP(d) \
	TER3_TRITS \
	TER3_KHALF(TER3_W01, TER3_W23, VMULLS8) \
	TER3_KHALF(TER3_W45, TER3_W67, VMLALS8) \
	VPADDLS16(28, 28) \
	VPADDI32(d, 28, 29)

// func ter3SumsQ8KNEON(c, a *byte, nb int, out *int32): four sums per
// block of 256 weights (52 code bytes at c, whose 3 bytes before are
// readable), as ter2SumsQ8KNEON's.
TEXT ·ter3SumsQ8KNEON(SB), NOSPLIT, $0-16
	MOVW c+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	TER3_CONSTS
	ADD $4, R1
loop:
	TER3_KGROUP(24)
	TER3_KGROUP(25)
	TER3_KGROUP(26)
	TER3_KGROUP(27)
	VPADDI32(24, 24, 25)
	VPADDI32(25, 26, 27)
	VLD1x4P(0, 1)
	VPADDLS16(0, 0)
	VPADDLS16(2, 2)
	VPADDI32(0, 0, 1)
	VPADDI32(1, 2, 3)
	VSUBI32(24, 24, 0)
	VST1x2P(24, 2)
	ADD $4, R1
	SUB.S $1, R3
	BNE loop
done:
	RET

// Q14 (int16) gets the products of q-1 (Q15 less Q12's 1 bytes) and the
// 16 activations in D(y), D(y+1): mul VMULLS8 sets it, VMLALS8 adds.
#define TER3_MAC80(mul, y) \
	VSUBI8(30, 30, 24) \
	mul(28, 30, y) \
	VMLALS8(28, 31, y+1)

// Half a ter3 group (weights WA, WB) against its q8_0 block at R1
// (advanced): sum (q-1)*y into D(d) as int32 pairs.
#define TER3_Q80HALF(WA, WB, d) \
	VLD1x4(20, 1) \
	ADD $34, R1 \
	WA \
	TER3_MAC80(VMULLS8, 20) \
	WB \
	TER3_MAC80(VMLALS8, 22) \
	VPADDLS16(28, 28) \
	VPADDI32(d, 28, 29)

// func ter3SumsQ8_0NEON(c, a *byte, ng int, out *int32): two sums per
// group (13 code bytes at c, whose 3 bytes before are readable; two q8_0
// blocks at a), as ter2SumsQ8_0NEON's.
TEXT ·ter3SumsQ8_0NEON(SB), NOSPLIT, $0-16
	MOVW c+0(FP), R0
	MOVW a+4(FP), R1
	MOVW ng+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	TER3_CONSTS
	VMOVI8(24, 1)
	ADD $2, R1
loop:
	TER3_TRITS
	TER3_Q80HALF(TER3_W01, TER3_W23, 26)
	TER3_Q80HALF(TER3_W45, TER3_W67, 27)
	VPADDI32(26, 26, 27)
	VST1x1P(26, 2)
	SUB.S $1, R3
	BNE loop
done:
	RET
