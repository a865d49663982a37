//go:build arm64 && !purego

#include "textflag.h"
#include "kernels_arm64.h"

// The q2lut kernel in NEON (q2lutSumsGo and q2lutAdd are the
// specification): nb blocks of one group added to its 16 rows' float sums,
// ARMv8.0 only, so both arm64 kernel sets run them. One TBL looks up 16
// rows' nibbles of one code byte in a 16-byte table (the L or H bytes of
// buildQ2LUTTables: T = 64*H + L). Per 16-column sub-block (4 code bytes)
// the L lookups of two code bytes add up in bytes (at most 4*63), the H
// lookups of all four too (at most 96 in magnitude); UADDL and SSHLL #6
// widen them to the rows' int16 sums, SMLAL multiplies those by the 4-bit
// scales into int32, and the 4-bit mins by the broadcast activation block
// sum; the float steps take four rows per instruction. Go's assembler has
// none of UADDL, SSHLL, USHLL, SMLAL, FCVTL, SCVTF and the vector FMUL,
// FSUB and FADD, so they are encoded with WORD (Arm ARM C7.2); the operands are register numbers.

// UADDL Vd.8H, Vn.8B, Vm.8B and UADDL2 (upper halves)
#define UADDL(d, n, m) WORD $(0x2E200000 | (m<<16) | (n<<5) | d)
#define UADDL2(d, n, m) WORD $(0x6E200000 | (m<<16) | (n<<5) | d)
// SSHLL Vd.8H, Vn.8B, #6 and SSHLL2
#define SSHLL6(d, n) WORD $(0x0F0EA400 | (n<<5) | d)
#define SSHLL6_2(d, n) WORD $(0x4F0EA400 | (n<<5) | d)
// USHLL Vd.8H, Vn.8B, #0 (UXTL) and USHLL2

// SCVTF Vd.4S, Vn.4S; FMUL and FSUB (n - m) Vd.4S, Vn.4S, Vm.4S (SMLAL4S,
// SMLAL2_4S, FCVTL, FCVTL2 and FADD4 are in kernels_arm64.h, SMULL and
// SMULL2 too)

// Four rows' float step: V(t) = (yd*d)*isum - (yd*dmin)*summs with d in
// V(d), dmin in V(dm), isum in V(is), summs in V(sm), yd in V12; V13, V14
// scratch.
#define ROWS4(d, dm, is, sm, t) \
	FMUL4(d, 12, d) \
	FMUL4(dm, 12, dm) \
	SCVTF4(13, is) \
	SCVTF4(14, sm) \
	FMUL4(13, d, 13) \
	FMUL4(14, dm, 14) \
	FSUB4(t, 13, 14)

// The 21 cache lines of the group's block two blocks ahead of r (past the
// group's end: the next group's, which runGroups computes next), as the
// AVX2 kernel does: the two streams of a block's reads leave the hardware
// prefetcher behind.
#define PREFETCH2(r) \
	PRFM 2688(r), PLDL1KEEP \
	PRFM 2752(r), PLDL1KEEP \
	PRFM 2816(r), PLDL1KEEP \
	PRFM 2880(r), PLDL1KEEP \
	PRFM 2944(r), PLDL1KEEP \
	PRFM 3008(r), PLDL1KEEP \
	PRFM 3072(r), PLDL1KEEP \
	PRFM 3136(r), PLDL1KEEP \
	PRFM 3200(r), PLDL1KEEP \
	PRFM 3264(r), PLDL1KEEP \
	PRFM 3328(r), PLDL1KEEP \
	PRFM 3392(r), PLDL1KEEP \
	PRFM 3456(r), PLDL1KEEP \
	PRFM 3520(r), PLDL1KEEP \
	PRFM 3584(r), PLDL1KEEP \
	PRFM 3648(r), PLDL1KEEP \
	PRFM 3712(r), PLDL1KEEP \
	PRFM 3776(r), PLDL1KEEP \
	PRFM 3840(r), PLDL1KEEP \
	PRFM 3904(r), PLDL1KEEP \
	PRFM 3968(r), PLDL1KEEP

// One code byte (the next 16 bytes at R3) against the tables in V(l0),
// V(h0) (its low nibbles) and V(l1), V(h1) (high nibbles): L lookups added
// to V(la), H lookups to V30. V24-V27 scratch, V31 holds 0x0f bytes.
#define CODE(l0, h0, l1, h1, la) \
	VLD1.P 16(R3), [V24.B16] \
	VAND V31.B16, V24.B16, V25.B16 \
	VUSHR $4, V24.B16, V26.B16 \
	VTBL V25.B16, [l0.B16], V27.B16 \
	VADD V27.B16, la.B16, la.B16 \
	VTBL V26.B16, [l1.B16], V27.B16 \
	VADD V27.B16, la.B16, la.B16 \
	VTBL V25.B16, [h0.B16], V27.B16 \
	VADD V27.B16, V30.B16, V30.B16 \
	VTBL V26.B16, [h1.B16], V27.B16 \
	VADD V27.B16, V30.B16, V30.B16

// func q2lutBlocksNEON(grp, tab, a *byte, nb int, acc *float32)
TEXT ·q2lutBlocksNEON(SB), NOSPLIT, $0-40
	MOVD grp+0(FP), R0
	MOVD tab+8(FP), R4
	MOVD a+16(FP), R2
	MOVD nb+24(FP), R8
	MOVD acc+32(FP), R7
	VMOVI $15, V31.B16

block:
	CBZ R8, done
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	VEOR V20.B16, V20.B16, V20.B16
	VEOR V21.B16, V21.B16, V21.B16
	VEOR V22.B16, V22.B16, V22.B16
	VEOR V23.B16, V23.B16, V23.B16
	ADD $320, R0, R3 // codes
	ADD $64, R0, R5  // scales
	ADD $260, R2, R6 // bsums
	MOVD $16, R9
	PREFETCH2(R0)

sub:
	// tables of code bytes 4j..4j+3: L0 L0' H0 H0' L1 L1' H1 H1' per pair
	VLD1.P 64(R4), [V0.B16, V1.B16, V2.B16, V3.B16]
	VLD1.P 64(R4), [V4.B16, V5.B16, V6.B16, V7.B16]
	VLD1.P 64(R4), [V8.B16, V9.B16, V10.B16, V11.B16]
	VLD1.P 64(R4), [V12.B16, V13.B16, V14.B16, V15.B16]
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16
	CODE(V0, V2, V4, V6, V28)
	CODE(V1, V3, V5, V7, V28)
	CODE(V8, V10, V12, V14, V29)
	CODE(V9, V11, V13, V15, V29)

	// rows 0-7 in V0, 8-15 in V1: L + 64*H as int16
	UADDL(0, 28, 29)
	UADDL2(1, 28, 29)
	SSHLL6(2, 30)
	SSHLL6_2(3, 30)
	VADD V2.H8, V0.H8, V0.H8
	VADD V3.H8, V1.H8, V1.H8

	// isum += scale * sum, summs += min * bsums[j]
	VLD1.P 16(R5), [V4.B16]
	VAND V31.B16, V4.B16, V5.B16
	VUSHR $4, V4.B16, V6.B16
	UXTL(7, 5)
	UXTL2(8, 5)
	SMLAL4S(16, 0, 7)
	SMLAL2_4S(17, 0, 7)
	SMLAL4S(18, 1, 8)
	SMLAL2_4S(19, 1, 8)
	UXTL(9, 6)
	UXTL2(10, 6)
	VLD1R (R6), [V11.H8]
	ADD $2, R6
	SMLAL4S(20, 9, 11)
	SMLAL2_4S(21, 9, 11)
	SMLAL4S(22, 10, 11)
	SMLAL2_4S(23, 10, 11)

	SUBS $1, R9
	BNE  sub

	// ggml's float steps per row, acc += yd*d*isum - yd*dmin*summs, each
	// product rounded (no fused multiply-add), as q2_KAddScaled
	VLD1 (R0), [V0.B16, V1.B16, V2.B16, V3.B16] // d, dmin of rows 0..15
	FCVTL(4, 0)
	FCVTL2(5, 0)
	FCVTL(6, 1)
	FCVTL2(7, 1)
	FCVTL(8, 2)
	FCVTL2(9, 2)
	FCVTL(10, 3)
	FCVTL2(11, 3)
	VLD1R (R2), [V12.S4]
	ROWS4(4, 8, 16, 20, 24)
	ROWS4(5, 9, 17, 21, 25)
	ROWS4(6, 10, 18, 22, 26)
	ROWS4(7, 11, 19, 23, 27)
	VLD1 (R7), [V0.S4, V1.S4, V2.S4, V3.S4]
	FADD4(0, 0, 24)
	FADD4(1, 1, 25)
	FADD4(2, 2, 26)
	FADD4(3, 3, 27)
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R7)
	ADD $1344, R0
	ADD $292, R2
	SUB $1, R8
	B   block

done:
	RET

// Table building (buildQ2LUTTables): SMULL/SMLAL of the pair codes'
// factors with the broadcast activations give a table's 16 int16 entries,
// XTN and AND 63 their L bytes, SHRN #6 their H bytes.
#define XTN(d, n) WORD $(0x0E212800 | (n<<5) | d)
#define XTN2(d, n) WORD $(0x4E212800 | (n<<5) | d)
#define SHRN6(d, n) WORD $(0x0F0A8400 | (n<<5) | d)
#define SHRN6_2(d, n) WORD $(0x4F0A8400 | (n<<5) | d)

// The factors (c&3) and (c>>2) of pair code c = 0..15.
DATA q2lutLow<>+0(SB)/8, $0x0302010003020100
DATA q2lutLow<>+8(SB)/8, $0x0302010003020100
GLOBL q2lutLow<>(SB), RODATA|NOPTR, $16
DATA q2lutHigh<>+0(SB)/8, $0x0101010100000000
DATA q2lutHigh<>+8(SB)/8, $0x0303030302020202
GLOBL q2lutHigh<>(SB), RODATA|NOPTR, $16

// One table of activations V(a0), V(a1) (broadcast bytes): L bytes to
// V(l), H bytes to V(h). V30, V29: the factors; V28: 63; V24, V25 scratch.
#define TABLE(a0, a1, l, h) \
	SMULL(24, 30, a0) \
	SMLAL8(24, 29, a1) \
	SMULL2(25, 30, a0) \
	SMLAL8_2(25, 29, a1) \
	XTN(l, 24) \
	XTN2(l, 25) \
	SHRN6(h, 24) \
	SHRN6_2(h, 25)

// func q2lutTablesNEON(tab, a *byte, nb int)
TEXT ·q2lutTablesNEON(SB), NOSPLIT, $0-24
	MOVD tab+0(FP), R0
	MOVD a+8(FP), R1
	MOVD nb+16(FP), R2
	MOVD $q2lutLow<>(SB), R3
	VLD1 (R3), [V30.B16]
	MOVD $q2lutHigh<>(SB), R3
	VLD1 (R3), [V29.B16]
	VMOVI $63, V28.B16

tblock:
	CBZ R2, tdone
	ADD $4, R1 // the block's int8 activations
	MOVD $32, R9

tpair:
	VLD1.P 8(R1), [V0.B8]
	VDUP V0.B[0], V1.B16
	VDUP V0.B[1], V2.B16
	VDUP V0.B[2], V3.B16
	VDUP V0.B[3], V4.B16
	VDUP V0.B[4], V5.B16
	VDUP V0.B[5], V6.B16
	VDUP V0.B[6], V7.B16
	VDUP V0.B[7], V8.B16
	TABLE(1, 2, 16, 18)
	TABLE(3, 4, 20, 22)
	TABLE(5, 6, 17, 19)
	TABLE(7, 8, 21, 23)
	VAND V28.B16, V16.B16, V16.B16
	VAND V28.B16, V17.B16, V17.B16
	VAND V28.B16, V20.B16, V20.B16
	VAND V28.B16, V21.B16, V21.B16
	VST1.P [V16.B16, V17.B16, V18.B16, V19.B16], 64(R0)
	VST1.P [V20.B16, V21.B16, V22.B16, V23.B16], 64(R0)
	SUBS $1, R9
	BNE  tpair
	ADD $32, R1 // past the block sums
	SUB $1, R2
	B   tblock

tdone:
	RET
