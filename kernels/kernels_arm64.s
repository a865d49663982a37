//go:build arm64 && !purego

#include "textflag.h"
#include "kernels_arm64.h"

// The arm64 dot products, whole: each kernel computes the exact int32 sums
// of every group of weights times its activations (a q8_0 block, a 32- or
// 16-value group of a k-quant super-block), applies the integer scales and
// mins, then does the portable kernel's float32 steps in its order, one
// rounding each (scalar FMULS/FADDS/FSUBS, no fused multiply-add; f16
// scales read from f16tab), and returns the float32 dot, so the
// results equal the portable kernels' bit for bit. (The float steps were
// in Go first: they cost more instructions than the integer loops,
// kernels/testdata/icount-arm64.txt.)
//
// Two variants of each: NEON (ARMv8.0: SMULL/SMULL2 to int16 products,
// SADALP into int32 lanes) and dotprod (ARMv8.2: SDOT, four int8 products
// into each int32 lane). Go's assembler has neither SMULL, SADALP nor
// SDOT, so they are encoded with WORD (Arm ARM C7.2); the operands are
// register numbers.

// (SMULL, SMULL2, SMLAL4S, SMLAL2_4S, FCVTL, FCVTL2 and FADD4 are in
// kernels_arm64.h, shared with q2lut_arm64.s.)
// SADALP Vd.4S, Vn.8H
#define SADALP(d, n) WORD $(0x4E606800 | (n<<5) | d)
// SDOT Vd.4S, Vn.16B, Vm.16B
#define SDOT(d, n, m) WORD $(0x4E809400 | (m<<16) | (n<<5) | d)

// NEON: int32 lanes of V(acc) += products of the 16 int8 of V(x) and V(y);
// V14 and V15 are scratch. The int16 products (at most 128*128) cannot
// overflow; SADALP widens them before any addition.
#define MAC_NEON(acc, x, y) \
	SMULL(14, x, y) \
	SMULL2(15, x, y) \
	SADALP(acc, 14) \
	SADALP(acc, 15)

#define MAC_SDOT(acc, x, y) \
	SDOT(acc, x, y)

// Four accumulators V(a)..V(a+3) reduced to one vector of their four sums
// in V(d): pairwise adds (exact in int32).
#define PACK4(a0, a1, a2, a3, t, d) \
	VADDP a1.S4, a0.S4, t.S4 \
	VADDP a3.S4, a2.S4, d.S4 \
	VADDP d.S4, t.S4, d.S4

#define ZERO8 \
	VEOR V16.B16, V16.B16, V16.B16 \
	VEOR V17.B16, V17.B16, V17.B16 \
	VEOR V18.B16, V18.B16, V18.B16 \
	VEOR V19.B16, V19.B16, V19.B16 \
	VEOR V20.B16, V20.B16, V20.B16 \
	VEOR V21.B16, V21.B16, V21.B16 \
	VEOR V22.B16, V22.B16, V22.B16 \
	VEOR V23.B16, V23.B16, V23.B16

// ---- Q8_0: the whole dot of nb blocks (34 bytes: d f16, qs[32]), returned. Per block its 32 products summed exactly in int32, then the
// float32 steps of q8_0Add in their order, each rounded: t = dx*dy,
// p = float32(sum)*t, sumf += p (scales read from f16tab as Go does), so
// the result equals the portable kernel's bit for bit.

// Block k of the four at R5 (weights) and R6 (activations): its integer
// sum is lane k of V26; R12 is &f16tab, F28 the float sum.
#define Q8_0_ADD(k) \
	MOVHU (34*k)(R5), R9 \
	MOVHU (34*k)(R6), R10 \
	FMOVS (R12)(R9<<2), F9 \
	FMOVS (R12)(R10<<2), F10 \
	FMULS F10, F9, F9 \
	VMOV V26.S[k], R11 \
	SCVTFWS R11, F11 \
	FMULS F9, F11, F11 \
	FADDS F11, F28, F28

#define Q8_0_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V28.B16, V28.B16, V28.B16 \
	ADD $2, R0 \
	ADD $2, R1 \
	CMP $4, R3 \
	BLT tail \
quad: \
	SUB $2, R0, R5 \
	SUB $2, R1, R6 \
	ZERO8 \
	VLD1 (R0), [V0.B16, V1.B16] \
	ADD $34, R0 \
	VLD1 (R1), [V2.B16, V3.B16] \
	ADD $34, R1 \
	VLD1 (R0), [V4.B16, V5.B16] \
	ADD $34, R0 \
	VLD1 (R1), [V6.B16, V7.B16] \
	ADD $34, R1 \
	MAC(16, 0, 2) \
	MAC(17, 1, 3) \
	MAC(18, 4, 6) \
	MAC(19, 5, 7) \
	VLD1 (R0), [V0.B16, V1.B16] \
	ADD $34, R0 \
	VLD1 (R1), [V2.B16, V3.B16] \
	ADD $34, R1 \
	VLD1 (R0), [V4.B16, V5.B16] \
	ADD $34, R0 \
	VLD1 (R1), [V6.B16, V7.B16] \
	ADD $34, R1 \
	MAC(20, 0, 2) \
	MAC(21, 1, 3) \
	MAC(22, 4, 6) \
	MAC(23, 5, 7) \
	VADD V17.S4, V16.S4, V16.S4 \
	VADD V19.S4, V18.S4, V17.S4 \
	VADD V21.S4, V20.S4, V18.S4 \
	VADD V23.S4, V22.S4, V19.S4 \
	PACK4(V16, V17, V18, V19, V24, V26) \
	Q8_0_ADD(0) \
	Q8_0_ADD(1) \
	Q8_0_ADD(2) \
	Q8_0_ADD(3) \
	SUB $4, R3 \
	CMP $4, R3 \
	BGE quad \
tail: \
	CBZ R3, done \
one: \
	SUB $2, R0, R5 \
	SUB $2, R1, R6 \
	VEOR V16.B16, V16.B16, V16.B16 \
	VLD1 (R0), [V0.B16, V1.B16] \
	ADD $34, R0 \
	VLD1 (R1), [V2.B16, V3.B16] \
	ADD $34, R1 \
	MAC(16, 0, 2) \
	MAC(16, 1, 3) \
	VADDV V16.S4, V26 \
	Q8_0_ADD(0) \
	SUBS $1, R3 \
	BNE one \
done: \
	FMOVS F28, ret+24(FP) \
	RET

// func q8_0DotNEON(w, a *byte, nb int) float32
TEXT ·q8_0DotNEON(SB), NOSPLIT, $0-28
	Q8_0_BODY(MAC_NEON)

// func q8_0DotSDOT(w, a *byte, nb int) float32
TEXT ·q8_0DotSDOT(SB), NOSPLIT, $0-28
	Q8_0_BODY(MAC_SDOT)

// ---- Q4_K: the whole dot of nb super-blocks, returned.
// Weight blocks are 144 bytes (d, dmin f16, 12 bytes of 6-bit scales and
// mins, qs at 16), activations q8_K blocks of 292 (d f32, qs at 4, bsums
// at 260). Per block: the eight 32-value group sums of nibble * activation
// (SDOT or SMULL/SADALP), then, as dotQ4_KGo does: isum = sum of scale *
// group sum, summ = sum of min * (bsums pair), both exact int32, and the
// float32 steps of q4_KAdd in its order, each rounded (FMULS, FSUBS,
// FADDS: no fused multiply-add), the halves read from f16tab as Go does,
// so the result equals the portable kernel's bit for bit.

// MUL Vd.4S, Vn.4S, Vm.4S
#define VMUL4S(d, n, m) WORD $(0x4EA09C00 | (m<<16) | (n<<5) | d)
// MLA Vd.4S, Vn.4S, Vm.4S
// SMULL Vd.4S, Vn.4H, Vm.4H
#define SMULL4S(d, n, m) WORD $(0x0E60C000 | (m<<16) | (n<<5) | d)

// One quarter: 32 bytes of nibbles, low ones for activation values
// 0..31 of the quarter (group 2j, accumulator V(lo)), high ones for 32..63
// (group 2j+1, V(hi)). V31 holds 0x0F bytes.
#define Q4K_QUARTER(MAC, lo, hi) \
	VLD1.P 32(R0), [V0.B16, V1.B16] \
	VLD1.P 64(R1), [V2.B16, V3.B16, V4.B16, V5.B16] \
	VAND V31.B16, V0.B16, V6.B16 \
	VAND V31.B16, V1.B16, V7.B16 \
	VUSHR $4, V0.B16, V8.B16 \
	VUSHR $4, V1.B16, V9.B16 \
	MAC(lo, 6, 2) \
	MAC(lo, 7, 3) \
	MAC(hi, 8, 4) \
	MAC(hi, 9, 5)

// Registers: R0 the block's qs, R1 its activations' qs (both advance),
// R3 blocks left, R5/R6 the weight/activation block, R12 &f16tab, F28 the
// float sum.
#define Q4K_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V28.B16, V28.B16, V28.B16 \
	CBZ R3, done \
	VMOVI $15, V31.B16 \
	ADD $16, R0 \
	ADD $4, R1 \
loop: \
	SUB $16, R0, R5 \
	SUB $4, R1, R6 \
	ZERO8 \
	Q4K_QUARTER(MAC, 16, 17) \
	Q4K_QUARTER(MAC, 18, 19) \
	Q4K_QUARTER(MAC, 20, 21) \
	Q4K_QUARTER(MAC, 22, 23) \
	PACK4(V16, V17, V18, V19, V24, V26) \
	PACK4(V20, V21, V22, V23, V25, V27) \
	/* scales and mins (kScales): 0..3 = bytes 0..3 / 4..7 & 63; 4..7 = */ \
	/* the low / high nibbles of bytes 8..11 | (top 2 bits of 0..3 / 4..7) << 4 */ \
	MOVWU 4(R5), R7 \
	MOVWU 8(R5), R8 \
	MOVWU 12(R5), R9 \
	ANDW $0x3f3f3f3f, R7, R10 \
	ANDW $0x0f0f0f0f, R9, R11 \
	LSRW $6, R7, R13 \
	ANDW $0x03030303, R13, R13 \
	ORRW R13<<4, R11, R11 \
	ORR R11<<32, R10, R10 \
	ANDW $0x3f3f3f3f, R8, R14 \
	LSRW $4, R9, R15 \
	ANDW $0x0f0f0f0f, R15, R15 \
	LSRW $6, R8, R19 \
	ANDW $0x03030303, R19, R19 \
	ORRW R19<<4, R15, R15 \
	ORR R15<<32, R14, R14 \
	VMOV R10, V0.D[0] \
	VMOV R14, V1.D[0] \
	VUXTL V0.B8, V0.H8 \
	VUXTL V1.B8, V1.H8 \
	/* isum: scales times the group sums */ \
	VUXTL V0.H4, V2.S4 \
	VUXTL2 V0.H8, V3.S4 \
	VMUL4S(4, 26, 2) \
	VMLA4S(4, 27, 3) \
	VADDV V4.S4, V4 \
	VMOV V4.S[0], R7 \
	/* summ: mins times the pairs of bsums (each pair within int16) */ \
	ADD $260, R6, R9 \
	VLD1 (R9), [V5.H8, V6.H8] \
	VADDP V6.H8, V5.H8, V5.H8 \
	SMULL4S(7, 5, 1) \
	SMLAL2_4S(7, 5, 1) \
	VADDV V7.S4, V7 \
	VMOV V7.S[0], R8 \
	/* sumf += (d*yd)*isum - (dmin*yd)*summ, each step rounded */ \
	FMOVS (R6), F8 \
	MOVHU (R5), R9 \
	FMOVS (R12)(R9<<2), F9 \
	MOVHU 2(R5), R9 \
	FMOVS (R12)(R9<<2), F10 \
	FMULS F8, F9, F9 \
	SCVTFWS R7, F11 \
	FMULS F11, F9, F9 \
	FMULS F8, F10, F10 \
	SCVTFWS R8, F11 \
	FMULS F11, F10, F10 \
	FSUBS F10, F9, F9 \
	FADDS F9, F28, F28 \
	ADD $16, R0 \
	ADD $36, R1 \
	SUBS $1, R3 \
	BNE loop \
done: \
	FMOVS F28, ret+24(FP) \
	RET

// func q4_KDotNEON(w, a *byte, nb int) float32
TEXT ·q4_KDotNEON(SB), NOSPLIT, $0-28
	Q4K_BODY(MAC_NEON)

// func q4_KDotSDOT(w, a *byte, nb int) float32
TEXT ·q4_KDotSDOT(SB), NOSPLIT, $0-28
	Q4K_BODY(MAC_SDOT)

// ---- Q6_K: the whole dot of nb super-blocks, returned. Weight
// blocks are 210 bytes (ql[128], qh[64], scales[16] int8, d f16 at 208).
// Per block: the sixteen 16-value group sums of (q - 32) * activation,
// isum = sum of scale * group sum (exact int32), then kAdd's float32 steps
// in their order, each rounded: sumf += (d*yd)*float32(isum) (d read from
// f16tab as Go does), so the result equals the portable kernel's bit for
// bit.

// SXTL Vd.8H, Vn.8B
// SXTL Vd.4S, Vn.4H
// SXTL2 Vd.4S, Vn.8H

// One group's 16 values into V24: 4 bits of V(ql) (low: AND V29; high:
// USHR 4, selected by LOW), 2 bits of V(qh) moved to bits 4-5 by HI, minus
// 32 (V31); V30 holds 0x30 bytes.
#define Q6_LOW(ql) VAND V29.B16, ql.B16, V24.B16
#define Q6_HIGH(ql) VUSHR $4, ql.B16, V24.B16
#define Q6_SHL(qh, n) VSHL $n, qh.B16, V28.B16
#define Q6_SHR(qh, n) VUSHR $n, qh.B16, V28.B16
#define Q6_MOV(qh) VORR qh.B16, qh.B16, V28.B16
#define Q6_GROUP(MAC, LOW, HI, acc, y) \
	LOW \
	HI \
	VAND V30.B16, V28.B16, V28.B16 \
	VORR V28.B16, V24.B16, V24.B16 \
	VSUB V31.B16, V24.B16, V24.B16 \
	MAC(acc, 24, y)

// One half (128 values) of a super-block: ql at R0, qh at R4, activations
// at R1, its 8 scales at R7, all post-incremented; group g of the half is
// position 16g. Its group sums times their scales go into V25's lanes.
#define Q6_HALF(MAC) \
	VLD1.P 64(R0), [V0.B16, V1.B16, V2.B16, V3.B16] \
	VLD1.P 32(R4), [V4.B16, V5.B16] \
	VLD1.P 64(R1), [V6.B16, V7.B16, V8.B16, V9.B16] \
	VLD1.P 64(R1), [V10.B16, V11.B16, V12.B16, V13.B16] \
	ZERO8 \
	Q6_GROUP(MAC, Q6_LOW(V0), Q6_SHL(V4, 4), 16, 6) \
	Q6_GROUP(MAC, Q6_LOW(V1), Q6_SHL(V5, 4), 17, 7) \
	Q6_GROUP(MAC, Q6_LOW(V2), Q6_SHL(V4, 2), 18, 8) \
	Q6_GROUP(MAC, Q6_LOW(V3), Q6_SHL(V5, 2), 19, 9) \
	Q6_GROUP(MAC, Q6_HIGH(V0), Q6_MOV(V4), 20, 10) \
	Q6_GROUP(MAC, Q6_HIGH(V1), Q6_MOV(V5), 21, 11) \
	Q6_GROUP(MAC, Q6_HIGH(V2), Q6_SHR(V4, 2), 22, 12) \
	Q6_GROUP(MAC, Q6_HIGH(V3), Q6_SHR(V5, 2), 23, 13) \
	PACK4(V16, V17, V18, V19, V0, V26) \
	PACK4(V20, V21, V22, V23, V1, V27) \
	VLD1.P 8(R7), [V2.B8] \
	SXTL8H(2, 2) \
	SXTL4S(3, 2) \
	SXTL2_4S(4, 2) \
	VMLA4S(25, 26, 3) \
	VMLA4S(25, 27, 4)

// Every vector register is taken, so the float sum stays in R13 (bits).
#define Q6K_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	MOVW ZR, R13 \
	CBZ R3, done \
	VMOVI $15, V29.B16 \
	VMOVI $48, V30.B16 \
	VMOVI $32, V31.B16 \
	ADD $4, R1 \
loop: \
	MOVD R0, R5 \
	SUB $4, R1, R6 \
	ADD $128, R0, R4 \
	ADD $192, R0, R7 \
	VEOR V25.B16, V25.B16, V25.B16 \
	Q6_HALF(MAC) \
	Q6_HALF(MAC) \
	VADDV V25.S4, V25 \
	VMOV V25.S[0], R8 \
	FMOVS (R6), F8 \
	MOVHU 208(R5), R9 \
	FMOVS (R12)(R9<<2), F9 \
	FMULS F8, F9, F9 \
	SCVTFWS R8, F10 \
	FMULS F10, F9, F9 \
	FMOVS R13, F11 \
	FADDS F9, F11, F11 \
	FMOVS F11, R13 \
	ADD $82, R0 \
	ADD $36, R1 \
	SUBS $1, R3 \
	BNE loop \
done: \
	MOVW R13, ret+24(FP) \
	RET

// func q6_KDotNEON(w, a *byte, nb int) float32
TEXT ·q6_KDotNEON(SB), NOSPLIT, $0-28
	Q6K_BODY(MAC_NEON)

// func q6_KDotSDOT(w, a *byte, nb int) float32
TEXT ·q6_KDotSDOT(SB), NOSPLIT, $0-28
	Q6K_BODY(MAC_SDOT)

// ---- Q2_K: the whole dot of nb super-blocks, returned. Weight
// blocks are 84 bytes (scales[16]: scale low nibble, min high; qs[64] at
// 16; d, dmin f16 at 80, 82). Per block: the sixteen 16-value group sums
// of q * activation (q the 2-bit fields), isum = sum of scale * group sum
// and summs = sum of min * bsum (exact int32), then q2_KAdd's float32
// steps in their order, each rounded: sumf += (yd*d)*isum - (yd*dmin)*summs
// (halves read from f16tab as Go does), so the result equals the portable
// kernel's bit for bit.


#define Q2_GROUP(MAC, q, n, acc, y) \
	VUSHR $n, q.B16, V24.B16 \
	VAND V29.B16, V24.B16, V24.B16 \
	MAC(acc, 24, y)

// Q2_GROUP with no shift (USHR takes 1 to 8).
#define Q2_GROUP0(MAC, q, acc, y) \
	VAND V29.B16, q.B16, V24.B16 \
	MAC(acc, 24, y)

// 128 values: 32 bytes of fields at R0, activations at R1, the half's 8
// scale bytes at R7 (post-incremented); shift 2j of byte l is position
// 32j+l. Its group sums times their scales (V30: 0x0F bytes) go into V25.
#define Q2_HALF(MAC) \
	VLD1.P 32(R0), [V0.B16, V1.B16] \
	VLD1.P 64(R1), [V6.B16, V7.B16, V8.B16, V9.B16] \
	VLD1.P 64(R1), [V10.B16, V11.B16, V12.B16, V13.B16] \
	ZERO8 \
	Q2_GROUP0(MAC, V0, 16, 6) \
	Q2_GROUP0(MAC, V1, 17, 7) \
	Q2_GROUP(MAC, V0, 2, 18, 8) \
	Q2_GROUP(MAC, V1, 2, 19, 9) \
	Q2_GROUP(MAC, V0, 4, 20, 10) \
	Q2_GROUP(MAC, V1, 4, 21, 11) \
	Q2_GROUP(MAC, V0, 6, 22, 12) \
	Q2_GROUP(MAC, V1, 6, 23, 13) \
	PACK4(V16, V17, V18, V19, V2, V26) \
	PACK4(V20, V21, V22, V23, V3, V27) \
	VLD1.P 8(R7), [V4.B8] \
	VAND V30.B16, V4.B16, V4.B16 \
	VUXTL V4.B8, V4.H8 \
	VUXTL V4.H4, V5.S4 \
	VUXTL2 V4.H8, V4.S4 \
	VMLA4S(25, 26, 5) \
	VMLA4S(25, 27, 4)

// Registers: R0 the block's qs, R1 its activations' qs (both advance),
// R3 blocks left, R5/R6 the weight/activation block, R12 &f16tab,
// F28 the float sum.
#define Q2K_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V28.B16, V28.B16, V28.B16 \
	CBZ R3, done \
	VMOVI $3, V29.B16 \
	VMOVI $15, V30.B16 \
	ADD $16, R0 \
	ADD $4, R1 \
loop: \
	SUB $16, R0, R5 \
	SUB $4, R1, R6 \
	MOVD R5, R7 \
	VEOR V25.B16, V25.B16, V25.B16 \
	Q2_HALF(MAC) \
	Q2_HALF(MAC) \
	VADDV V25.S4, V25 \
	VMOV V25.S[0], R7 \
	/* summs: the 16 bsums times the mins (high nibbles) */ \
	VLD1 (R5), [V4.B16] \
	VUSHR $4, V4.B16, V4.B16 \
	VUXTL V4.B8, V2.H8 \
	VUXTL2 V4.B16, V3.H8 \
	ADD $260, R6, R9 \
	VLD1 (R9), [V4.H8, V5.H8] \
	SMULL4S(7, 4, 2) \
	SMLAL2_4S(7, 4, 2) \
	SMLAL4S(7, 5, 3) \
	SMLAL2_4S(7, 5, 3) \
	VADDV V7.S4, V7 \
	VMOV V7.S[0], R8 \
	/* sumf += (yd*d)*isum - (yd*dmin)*summs, each step rounded */ \
	FMOVS (R6), F8 \
	MOVHU 80(R5), R9 \
	FMOVS (R12)(R9<<2), F9 \
	MOVHU 82(R5), R9 \
	FMOVS (R12)(R9<<2), F10 \
	FMULS F9, F8, F11 \
	SCVTFWS R7, F12 \
	FMULS F12, F11, F11 \
	FMULS F10, F8, F13 \
	SCVTFWS R8, F12 \
	FMULS F12, F13, F13 \
	FSUBS F13, F11, F11 \
	FADDS F11, F28, F28 \
	ADD $20, R0 \
	ADD $36, R1 \
	SUBS $1, R3 \
	BNE loop \
done: \
	FMOVS F28, ret+24(FP) \
	RET

// func q2_KDotNEON(w, a *byte, nb int) float32
TEXT ·q2_KDotNEON(SB), NOSPLIT, $0-28
	Q2K_BODY(MAC_NEON)

// func q2_KDotSDOT(w, a *byte, nb int) float32
TEXT ·q2_KDotSDOT(SB), NOSPLIT, $0-28
	Q2K_BODY(MAC_SDOT)

// ---- Q1_0 and Q2_0: the whole dot of nb weight blocks (18 bytes: d f16,
// qs[16]), returned. Per weight block the integer sums of its k = 4
// or 2 q8_0 activation blocks; the weight bytes are spread to one byte per
// value with TBL (indexes in V26, V27, stepped by V28 per q8 block) and
// tested bit by bit with CMTST (masks in V29, V30). Then lowBitAdd's
// float32 steps in their order, each rounded: sumi += dy_j*float32(sum j)
// from +0, sumf += dx*sumi (halves read from f16tab as Go does), so the
// result equals the portable kernel's bit for bit.

// Sum k (lane k of V21) of the weight block at R5 with its q8_0 blocks at
// R6 into sumi (F8); R12 is &f16tab.
#define LOWBIT_SUM(k) \
	MOVHU (34*k)(R6), R9 \
	FMOVS (R12)(R9<<2), F9 \
	VMOV V21.S[k], R11 \
	SCVTFWS R11, F10 \
	FMULS F10, F9, F9 \
	FADDS F9, F8, F8

// sumf (F22) += dx * sumi.
#define LOWBIT_ADD \
	MOVHU (R5), R9 \
	FMOVS (R12)(R9<<2), F9 \
	FMULS F8, F9, F9 \
	FADDS F9, F22, F22

// q1idx: value byte j of a 16-value half reads bit byte j/8; then the bit
// masks 1<<(j%8).
DATA q1const<>+0(SB)/8, $0x0000000000000000
DATA q1const<>+8(SB)/8, $0x0101010101010101
DATA q1const<>+16(SB)/8, $0x0202020202020202
DATA q1const<>+24(SB)/8, $0x0303030303030303
DATA q1const<>+32(SB)/8, $0x0404040404040404
DATA q1const<>+40(SB)/8, $0x0404040404040404
DATA q1const<>+48(SB)/8, $0x8040201008040201
DATA q1const<>+56(SB)/8, $0x8040201008040201
GLOBL q1const<>(SB), RODATA|NOPTR, $64

// q2idx: value byte j reads field byte j/4; then the masks of the fields'
// low bits (1<<2(j%4)) and high bits (2<<2(j%4)).
DATA q2const<>+0(SB)/8, $0x0101010100000000
DATA q2const<>+8(SB)/8, $0x0303030302020202
DATA q2const<>+16(SB)/8, $0x0505050504040404
DATA q2const<>+24(SB)/8, $0x0707070706060606
DATA q2const<>+32(SB)/8, $0x0808080808080808
DATA q2const<>+40(SB)/8, $0x0808080808080808
DATA q2const<>+48(SB)/8, $0x4010040140100401
DATA q2const<>+56(SB)/8, $0x4010040140100401
DATA q2const<>+64(SB)/8, $0x8020080280200802
DATA q2const<>+72(SB)/8, $0x8020080280200802
GLOBL q2const<>(SB), RODATA|NOPTR, $80

// One q8_0 block of Q1_0 into V(acc): weights -1 where the bit is set, +1
// where clear (CMTST's -1 or 0, OR 1; the sign is undone at the store).
#define Q1_BLOCK(MAC, acc) \
	VLD1 (R1), [V2.B16, V3.B16] \
	ADD $34, R1 \
	VTBL V24.B16, [V0.B16], V4.B16 \
	VTBL V25.B16, [V0.B16], V5.B16 \
	VADD V28.B16, V24.B16, V24.B16 \
	VADD V28.B16, V25.B16, V25.B16 \
	VCMTST V29.B16, V4.B16, V4.B16 \
	VCMTST V29.B16, V5.B16, V5.B16 \
	VORR V30.B16, V4.B16, V4.B16 \
	VORR V30.B16, V5.B16, V5.B16 \
	MAC(acc, 4, 2) \
	MAC(acc, 5, 3)

#define Q1_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V22.B16, V22.B16, V22.B16 \
	CBZ R3, done \
	MOVD $q1const<>(SB), R5 \
	VLD1 (R5), [V26.B16, V27.B16, V28.B16, V29.B16] \
	VMOVI $1, V30.B16 \
	VEOR V31.B16, V31.B16, V31.B16 \
	ADD $2, R0 \
	ADD $2, R1 \
loop: \
	SUB $2, R0, R5 \
	SUB $2, R1, R6 \
	VLD1 (R0), [V0.B16] \
	ADD $18, R0 \
	VORR V26.B16, V26.B16, V24.B16 \
	VORR V27.B16, V27.B16, V25.B16 \
	VEOR V16.B16, V16.B16, V16.B16 \
	VEOR V17.B16, V17.B16, V17.B16 \
	VEOR V18.B16, V18.B16, V18.B16 \
	VEOR V19.B16, V19.B16, V19.B16 \
	Q1_BLOCK(MAC, 16) \
	Q1_BLOCK(MAC, 17) \
	Q1_BLOCK(MAC, 18) \
	Q1_BLOCK(MAC, 19) \
	PACK4(V16, V17, V18, V19, V20, V21) \
	VSUB V21.S4, V31.S4, V21.S4 \
	VEOR V8.B16, V8.B16, V8.B16 \
	LOWBIT_SUM(0) \
	LOWBIT_SUM(1) \
	LOWBIT_SUM(2) \
	LOWBIT_SUM(3) \
	LOWBIT_ADD \
	SUBS $1, R3 \
	BNE loop \
done: \
	FMOVS F22, ret+24(FP) \
	RET

// func q1_0DotNEON(w, a *byte, nb int) float32
TEXT ·q1_0DotNEON(SB), NOSPLIT, $0-28
	Q1_BODY(MAC_NEON)

// func q1_0DotSDOT(w, a *byte, nb int) float32
TEXT ·q1_0DotSDOT(SB), NOSPLIT, $0-28
	Q1_BODY(MAC_SDOT)

// Weights q-1 of 16 values from the index in V(idx) into V(d): with l and
// h CMTST's -1 where the low or high bit is set, t = l+2h = -q and q-1 =
// NOT t (EOR with V31's ones). Clobbers V6, V7.
#define Q2_WEIGHTS(idx, d) \
	VTBL idx.B16, [V0.B16], d.B16 \
	VCMTST V29.B16, d.B16, V6.B16 \
	VCMTST V30.B16, d.B16, V7.B16 \
	VADD V7.B16, V6.B16, V6.B16 \
	VADD V7.B16, V6.B16, V6.B16 \
	VEOR V31.B16, V6.B16, d.B16

#define Q2_BLOCK(MAC, acc) \
	VLD1 (R1), [V2.B16, V3.B16] \
	ADD $34, R1 \
	Q2_WEIGHTS(V24, V4) \
	Q2_WEIGHTS(V25, V5) \
	VADD V28.B16, V24.B16, V24.B16 \
	VADD V28.B16, V25.B16, V25.B16 \
	MAC(acc, 4, 2) \
	MAC(acc, 5, 3)

#define Q2_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V22.B16, V22.B16, V22.B16 \
	CBZ R3, done \
	MOVD $q2const<>(SB), R5 \
	VLD1.P 64(R5), [V26.B16, V27.B16, V28.B16, V29.B16] \
	VLD1 (R5), [V30.B16] \
	VMOVI $255, V31.B16 \
	ADD $2, R0 \
	ADD $2, R1 \
loop: \
	SUB $2, R0, R5 \
	SUB $2, R1, R6 \
	VLD1 (R0), [V0.B16] \
	ADD $18, R0 \
	VORR V26.B16, V26.B16, V24.B16 \
	VORR V27.B16, V27.B16, V25.B16 \
	VEOR V16.B16, V16.B16, V16.B16 \
	VEOR V17.B16, V17.B16, V17.B16 \
	Q2_BLOCK(MAC, 16) \
	Q2_BLOCK(MAC, 17) \
	VADDP V17.S4, V16.S4, V20.S4 \
	VADDP V20.S4, V20.S4, V21.S4 \
	VEOR V8.B16, V8.B16, V8.B16 \
	LOWBIT_SUM(0) \
	LOWBIT_SUM(1) \
	LOWBIT_ADD \
	SUBS $1, R3 \
	BNE loop \
done: \
	FMOVS F22, ret+24(FP) \
	RET

// func q2_0DotNEON(w, a *byte, nb int) float32
TEXT ·q2_0DotNEON(SB), NOSPLIT, $0-28
	Q2_BODY(MAC_NEON)

// func q2_0DotSDOT(w, a *byte, nb int) float32
TEXT ·q2_0DotSDOT(SB), NOSPLIT, $0-28
	Q2_BODY(MAC_SDOT)

// ---- F32: the dot of n floats (n a multiple of 16), four FMLA
// accumulators of four lanes, added (0+1)+(2+3), then lanes pairwise.

// FADDP Vd.4S, Vn.4S, Vm.4S
#define FADDP4(d, n, m) WORD $(0x6E20D400 | (m<<16) | (n<<5) | d)
// FADDP Sd, Vn.2S
#define FADDP2S(d, n) WORD $(0x7E30D800 | (n<<5) | d)

// SUM4 leaves in F16 the float32 sum of the four accumulators V16-V19
// (the end of the F16 dot).
#define SUM4 \
	FADD4(16, 16, 17) \
	FADD4(18, 18, 19) \
	FADD4(16, 16, 18) \
	FADDP4(16, 16, 16) \
	FADDP2S(16, 16)

// func dotF32NEON(x, y *float32, n int, acc *[8]float32)
// The F32 dot of n elements (n a positive multiple of 8) in dotF32Go's
// order: acc[l] sums the products of elements i = l mod 8 in order, each
// product rounded before its addition (FMUL, then FADD: no FMLA), lanes
// 0-3 in V16 and 4-7 in V17. 16 elements per loop, after a first 8 when n
// is an odd multiple of 8.
TEXT ·dotF32NEON(SB), NOSPLIT, $0-32
	MOVD x+0(FP), R0
	MOVD y+8(FP), R1
	MOVD n+16(FP), R3
	MOVD acc+24(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	TBZ  $3, R3, pairs
	VLD1.P 32(R0), [V0.S4, V1.S4]
	VLD1.P 32(R1), [V4.S4, V5.S4]
	FMUL4(0, 0, 4)
	FMUL4(1, 1, 5)
	FADD4(16, 16, 0)
	FADD4(17, 17, 1)
	SUB  $8, R3

pairs:
	CBZ R3, done

loop:
	VLD1.P 64(R0), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1.P 64(R1), [V4.S4, V5.S4, V6.S4, V7.S4]
	FMUL4(0, 0, 4)
	FMUL4(1, 1, 5)
	FMUL4(2, 2, 6)
	FMUL4(3, 3, 7)
	FADD4(16, 16, 0)
	FADD4(17, 17, 1)
	FADD4(16, 16, 2)
	FADD4(17, 17, 3)
	SUBS $16, R3
	BNE  loop

done:
	VST1 [V16.S4, V17.S4], (R2)
	RET

// ---- F16: dotF16's four sums over n halves (n a positive multiple of
// 8). FCVTL and FCVTL2 widen them to float32, exactly (ARMv8.0 AdvSIMD,
// so both sets run it); the product of two halves (11-bit significands,
// exponents -24..15) is exact in float32, so FMLA's fused step rounds
// only the addition, as dotF16's unfused one does. One accumulator, V16:
// lane l sums the products of elements i = l mod 4 in order (dotF16's
// order, so the bits are the portable kernel's on every architecture;
// the chain of dependent FMLAs is the price). 32 elements per loop, then
// 8 at a time.

// func dotF16NEON(x, y *byte, n int, acc *[4]float32)
TEXT ·dotF16NEON(SB), NOSPLIT, $0-32
	MOVD x+0(FP), R0
	MOVD y+8(FP), R1
	MOVD n+16(FP), R3
	MOVD acc+24(FP), R2
	VEOR V16.B16, V16.B16, V16.B16
	CMP  $32, R3
	BLT  f16eight

f16loop:
	// the conversions of the second half between the first's FMLAs
	VLD1.P 64(R0), [V0.H8, V1.H8, V2.H8, V3.H8]
	VLD1.P 64(R1), [V4.H8, V5.H8, V6.H8, V7.H8]
	FCVTL(8, 0)
	FCVTL(12, 4)
	FCVTL2(9, 0)
	FCVTL2(13, 4)
	FCVTL(10, 1)
	FCVTL(14, 5)
	FCVTL2(11, 1)
	FCVTL2(15, 5)
	VFMLA V8.S4, V12.S4, V16.S4
	FCVTL(20, 2)
	FCVTL(24, 6)
	VFMLA V9.S4, V13.S4, V16.S4
	FCVTL2(21, 2)
	FCVTL2(25, 6)
	VFMLA V10.S4, V14.S4, V16.S4
	FCVTL(22, 3)
	FCVTL(26, 7)
	VFMLA V11.S4, V15.S4, V16.S4
	FCVTL2(23, 3)
	FCVTL2(27, 7)
	VFMLA V20.S4, V24.S4, V16.S4
	VFMLA V21.S4, V25.S4, V16.S4
	VFMLA V22.S4, V26.S4, V16.S4
	VFMLA V23.S4, V27.S4, V16.S4
	SUB  $32, R3
	CMP  $32, R3
	BGE  f16loop

f16eight:
	CBZ R3, f16done

f16loop8:
	VLD1.P 16(R0), [V0.H8]
	VLD1.P 16(R1), [V4.H8]
	FCVTL(8, 0)
	FCVTL(12, 4)
	FCVTL2(9, 0)
	FCVTL2(13, 4)
	VFMLA V8.S4, V12.S4, V16.S4
	VFMLA V9.S4, V13.S4, V16.S4
	SUBS $8, R3
	BNE  f16loop8

f16done:
	VST1 [V16.S4], (R2)
	RET
