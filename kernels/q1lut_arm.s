//go:build arm && !purego

#include "textflag.h"
#include "kernels_arm.h"

// The Q1_0 lookup kernel in armv7 NEON (q1lutGroupLH is the specification,
// as for arm64's q1lut_arm64.s): 16 rows of a group per Q register, on the
// same byte tables (q1lutTablesLH: T = 64*H + L). Per sign byte vector v,
// VTBL looks up 8 rows' L or H bytes of one 4-column group (a two-register
// table, 16 entries); the L lookups of a q8_0 block add up in bytes in
// Q8 (vectors 0, 1) and Q9 (2, 3), at most 4*63 each, the H ones in Q10.
// VADDL.U8 and VSHLL.S8 #6 widen them to the rows' exact int16 sums,
// VMOVL.S16 and VCVT to float32, then the generic float steps: sumi +=
// d_k*sum (Q12-Q15), and per block sumf += d_w*sumi (sumf kept in out),
// the weight scales d_w converted through f16tab (armv7 NEON need not
// convert f16) and moved into Q0-Q3 one by one. NEON float32
// arithmetic flushes subnormals to zero, which these steps never meet: f16
// scales are multiples of 2^-24, so every nonzero product and sum is at
// least 2^-94 in magnitude, a normal float32. Go's arm assembler has no
// NEON mnemonics: every NEON instruction is WORD-encoded (Arm ARM A32;
// kernels_arm.h has those kernels_arm.s uses too).

// VLD1.8 {D(v), D(v+1)}, [R(n)]! and {D(v)-D(v+3)}, [R(n)]! (post-increment)
#define VLD1x2P(v, n) WORD $(0xF4200A0D | ((n)<<16) | RD(v))
#define VLD1x4P(v, n) WORD $(0xF420020D | ((n)<<16) | RD(v))
// VST1.8 {D(v)-D(v+3)}, [R(n)]
#define VST1x4(v, n) WORD $(0xF400020F | ((n)<<16) | RD(v))
// VTBL.8 D(d), {D(n), D(n+1)}, D(m)
#define VTBL2(d, n, m) WORD $(0xF3B00900 | RN(n) | RD(d) | RM(m))
// VADD.I8, VADD.I16, VADD.F32, VMUL.F32 Q(d/2), Q(n/2), Q(m/2)
#define VADDI8Q(d, n, m) WORD $(0xF2000840 | RN(n) | RD(d) | RM(m))
#define VADDI16Q(d, n, m) WORD $(0xF2100840 | RN(n) | RD(d) | RM(m))
#define VADDF32Q(d, n, m) WORD $(0xF2000D40 | RN(n) | RD(d) | RM(m))
#define VMULF32Q(d, n, m) WORD $(0xF3000D50 | RN(n) | RD(d) | RM(m))
// VMUL.F32 Q(d/2), Q(n/2), D(m)[x] (m < 16)
#define VMULF32S(d, n, m, x) WORD $(0xF3A00940 | RN(n) | RD(d) | ((x)<<5) | (m))
// VMOV.I8 Q(d/2), #0
#define VMOVI8x0(d) WORD $(0xF2800E50 | RD(d))
// VADDL.U8 Q(d/2), D(n), D(m)
#define VADDLU8(d, n, m) WORD $(0xF3800000 | RN(n) | RD(d) | RM(m))
// VSHLL.S8 Q(d/2), D(m), #6
#define VSHLLS8x6(d, m) WORD $(0xF28E0A10 | RD(d) | RM(m))
// VMOVL.S16 Q(d/2), D(m)
#define VMOVLS16(d, m) WORD $(0xF2900A10 | RD(d) | RM(m))
// VCVT.F32.S32 Q(d/2), Q(m/2)
#define VCVTF32S32(d, m) WORD $(0xF3BB0640 | RD(d) | RM(m))

// CODE(la): the next sign byte vector (R0) and its tables (R1): the L
// lookups added to Q(la/2), the H ones to Q10. Q0-Q3 tables, Q4 the codes
// then their high nibbles, Q6 the low nibbles, Q7 scratch, Q11 0x0f bytes.
#define CODE(la) \
	VLD1x2P(8, 0) \
	VLD1x4P(0, 1) \
	VLD1x4P(4, 1) \
	VANDQ(12, 8, 22) \
	VSHRU8x4(8, 8) \
	VTBL2(14, 0, 12) \
	VTBL2(15, 0, 13) \
	VADDI8Q(la, la, 14) \
	VTBL2(14, 2, 8) \
	VTBL2(15, 2, 9) \
	VADDI8Q(la, la, 14) \
	VTBL2(14, 4, 12) \
	VTBL2(15, 4, 13) \
	VADDI8Q(20, 20, 14) \
	VTBL2(14, 6, 8) \
	VTBL2(15, 6, 9) \
	VADDI8Q(20, 20, 14)

// QBLOCK(dm, x): q8_0 block k (its scale D(dm)[x]) into sumi Q12-Q15.
#define QBLOCK(dm, x) \
	VMOVI8x0(16) \
	VMOVI8x0(18) \
	VMOVI8x0(20) \
	CODE(16) \
	CODE(16) \
	CODE(18) \
	CODE(18) \
	VADDLU8(0, 16, 18) \
	VADDLU8(2, 17, 19) \
	VSHLLS8x6(4, 20) \
	VSHLLS8x6(6, 21) \
	VADDI16Q(0, 0, 4) \
	VADDI16Q(2, 2, 6) \
	VMOVLS16(4, 0) \
	VMOVLS16(6, 1) \
	VMOVLS16(8, 2) \
	VMOVLS16(12, 3) \
	VCVTF32S32(4, 4) \
	VCVTF32S32(6, 6) \
	VCVTF32S32(8, 8) \
	VCVTF32S32(12, 12) \
	VMULF32S(4, 4, dm, x) \
	VMULF32S(6, 6, dm, x) \
	VMULF32S(8, 8, dm, x) \
	VMULF32S(12, 12, dm, x) \
	VADDF32Q(24, 24, 4) \
	VADDF32Q(26, 26, 6) \
	VADDF32Q(28, 28, 8) \
	VADDF32Q(30, 30, 12)

// DW(r, d, x): row r's weight scale (f16 at R4), converted through f16tab
// (R8), into D(d)[x].
#define DW(r, d, x) \
	MOVHU (2*(r))(R4), R7 \
	MOVW  R7<<2(R8), R7 \
	WORD  $(0xEE000B10 | ((x)<<21) | ((d)<<16) | (7<<12))

// func q1lutGroupNEONv7(grp, tab *byte, nb int, out *float32)
TEXT ·q1lutGroupNEONv7(SB), NOSPLIT, $0-16
	MOVW grp+0(FP), R0
	MOVW tab+4(FP), R1
	MOVW nb+8(FP), R2
	MOVW out+12(FP), R5
	ADD  $32, R5, R6
	MOVW $·f16tab(SB), R8
	VMOVI8x15(22)
	VMOVI8x0(0)
	VMOVI8x0(2)
	VST1x4(0, 5) // sumf, kept in out
	VST1x4(0, 6)

block:
	MOVW R0, R4 // the block's weight scales
	ADD  $32, R0
	VMOVI8x0(24)
	VMOVI8x0(26)
	VMOVI8x0(28)
	VMOVI8x0(30)
	VLD1x2P(10, 1) // the four activation scales: D10[0], D10[1], D11[0], D11[1]
	QBLOCK(10, 0)
	QBLOCK(10, 1)
	QBLOCK(11, 0)
	QBLOCK(11, 1)
	DW(0, 0, 0)
	DW(1, 0, 1)
	DW(2, 1, 0)
	DW(3, 1, 1)
	DW(4, 2, 0)
	DW(5, 2, 1)
	DW(6, 3, 0)
	DW(7, 3, 1)
	DW(8, 4, 0)
	DW(9, 4, 1)
	DW(10, 5, 0)
	DW(11, 5, 1)
	DW(12, 6, 0)
	DW(13, 6, 1)
	DW(14, 7, 0)
	DW(15, 7, 1)
	VLD1x4(8, 5)
	VLD1x4(12, 6)
	VMULF32Q(0, 0, 24)
	VMULF32Q(2, 2, 26)
	VMULF32Q(4, 4, 28)
	VMULF32Q(6, 6, 30)
	VADDF32Q(8, 8, 0)
	VADDF32Q(10, 10, 2)
	VADDF32Q(12, 12, 4)
	VADDF32Q(14, 14, 6)
	VST1x4(8, 5)
	VST1x4(12, 6)
	SUB.S $1, R2
	BNE   block
	RET
