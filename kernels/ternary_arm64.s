//go:build arm64 && !purego

#include "textflag.h"
#include "kernels_arm64.h"

// The ternary kernels in NEON (ARMv8.0: SMLAL into int16 lanes) and
// dotprod (ARMv8.2: SDOT): TQ1_0 and TQ2_0 rows against Q8_K, and the
// layouts ter2, ter2s128 and ter3 (ternary.go; docs/layouts.md) against
// Q8_K (TQ originals) and Q8_0 (Q2_0 originals). Every format is decoded
// into code bytes q (0, 1, 2; ter2's fourth code 3 too) lined up with
// their activations. Against Q8_K the kernels sum q*y and subtract the
// block's bsums (sum (q-1)*y = sum q*y - sum y); against Q8_0 they multiply
// q-1, since Q8_0 blocks carry no sums. The integer sums are exact; the
// float steps are the portable kernels' (tqDot, terLayout.dotQ8_K and
// dotQ8_0) in their order, one rounding each (scalar FMULS/FADDS, no fused
// multiply-add; halves read from f16tab), so every result equals the
// portable kernel's bit for bit.
//
// TQ2_0 and ter2 codes are 2-bit fields, split with USHR and AND. TQ1_0
// and ter3 bytes hold 5 trits, trit n = ((b*3^n mod 256)*3)>>8 (ggml's
// decoding): MUL by 3^n, then for TQ1_0 (p + p>>1)/2 >> 6 (UHADD, exact),
// whose trits line up with the activations as they are; for ter3 UMULL by
// 3 (16-bit lanes whose high byte is the trit) and TBL, which picks the
// high bytes into weight order (trit n of byte m is weight 13n+m).
//
// The NEON accumulators are int16 until a block (Q8_K) or group (Q8_0)
// ends: a lane takes at most 32 products of a code (at most 3) and an int8,
// |sum| <= 32*3*128 < 2^15.

// SDOT Vd.4S, Vn.16B, Vm.16B
#define SDOT(d, n, m) WORD $(0x4E809400 | ((m)<<16) | ((n)<<5) | (d))
// MOVI Vd.2D, #0
#define ZERO(d) WORD $(0x6F00E400 | (d))
// AND, SUB, MUL, UHADD Vd.16B, Vn.16B, Vm.16B; USHR Vd.16B, Vn.16B, #sh
#define AND16(d, n, m) WORD $(0x4E201C00 | ((m)<<16) | ((n)<<5) | (d))
#define SUB16(d, n, m) WORD $(0x6E208400 | ((m)<<16) | ((n)<<5) | (d))
#define MUL16(d, n, m) WORD $(0x4E209C00 | ((m)<<16) | ((n)<<5) | (d))
#define UHADD16(d, n, m) WORD $(0x6E200400 | ((m)<<16) | ((n)<<5) | (d))
#define USHR16(d, n, sh) WORD $(0x6F000400 | ((16-(sh))<<16) | ((n)<<5) | (d))
// UMULL Vd.8H, Vn.8B, Vm.8B and UMULL2 (upper halves)
#define UMULL(d, n, m) WORD $(0x2E20C000 | ((m)<<16) | ((n)<<5) | (d))
#define UMULL2(d, n, m) WORD $(0x6E20C000 | ((m)<<16) | ((n)<<5) | (d))
// SSRA Vd.4S, Vn.4S, #sh (signed shift right and accumulate)
#define SSRA4S(d, n, sh) WORD $(0x4F001400 | ((64-(sh))<<16) | ((n)<<5) | (d))
// ADDV Sd, Vn.4S; SCVTF Sd, Sn
#define ADDV4S(d, n) WORD $(0x4EB1B800 | ((n)<<5) | (d))
#define SCVTFS(d, n) WORD $(0x5E21D800 | ((n)<<5) | (d))

// int16 lanes of V(acc) += products of the 16 bytes of V(x) and V(y)
// (NEON); int32 lanes (dotprod). WIDEN makes the NEON lanes int32.
#define MAC_NEON(acc, x, y) \
	SMLAL8(acc, x, y) \
	SMLAL8_2(acc, x, y)
#define WIDEN_NEON(acc) SADDLP4S(acc, acc)
#define MAC_SDOT(acc, x, y) SDOT(acc, x, y)
#define WIDEN_SDOT(acc)

// ter3idx: the TBL indexes of the four weight vectors of a ter3 group in
// the trits' 16-bit products (V0-V9, two per trit: lanes 0-7, 8-15; the
// group's byte m in lane m+3), from tables starting at V0, V2, V5, V7.
DATA ter3idx<>+0(SB)/8, $0x1513110f0d0b0907
DATA ter3idx<>+8(SB)/8, $0x2b29271f1d1b1917
DATA ter3idx<>+16(SB)/8, $0x1b19171513110f0d
DATA ter3idx<>+24(SB)/8, $0x312f2d2b29271f1d
DATA ter3idx<>+32(SB)/8, $0x170f0d0b09070503
DATA ter3idx<>+40(SB)/8, $0x272523211f1d1b19
DATA ter3idx<>+48(SB)/8, $0x1d1b19170f0d0b09
DATA ter3idx<>+56(SB)/8, $0x2d2b29272523211f
GLOBL ter3idx<>(SB), RODATA|NOPTR, $64

// tq1qh: the multipliers of TQ1_0's qh trits: the four bytes, loaded into
// every 32-bit lane, times 1, 3, 9, 27 (weights 240+4n+j: trit n of byte j).
DATA tq1qh<>+0(SB)/8, $0x0303030301010101
DATA tq1qh<>+8(SB)/8, $0x1b1b1b1b09090909
GLOBL tq1qh<>(SB), RODATA|NOPTR, $16

// ---- decoding into the code vectors V10-V13 (weights 0-15, ..., 48-63
// of a 64-weight group).

// ter2: the 16 code bytes at R0 (V31: 0x03 bytes).
#define TER2_CODES \
	VLD1.P 16(R0), [V8.B16] \
	AND16(10, 8, 31) \
	USHR16(11, 8, 2) \
	USHR16(12, 8, 4) \
	USHR16(13, 8, 6) \
	AND16(11, 11, 31) \
	AND16(12, 12, 31)

#define TER2_CONSTS VMOVI $3, V31.B16

// The dotprod kernels of ter2 (and TQ2_0) leave fields 1 and 2 in place,
// masked (V30: 0x0c bytes, V29: 0x30), 4 and 16 times the code, and sum
// their products apart (V24, V25), shifted back when the block ends
// (FOLD): the sums of 4q*y and 16q*y are multiples of 4 and 16, so the
// arithmetic shifts are exact. Two instructions fewer per 16 code bytes;
// not for NEON, whose int16 lanes would overflow.
#define TER2_MASKS \
	VLD1.P 16(R0), [V8.B16] \
	AND16(10, 8, 31) \
	AND16(11, 8, 30) \
	AND16(12, 8, 29) \
	USHR16(13, 8, 6)

#define TER2_CONSTS_SDOT \
	VMOVI $3, V31.B16 \
	VMOVI $12, V30.B16 \
	VMOVI $48, V29.B16

#define ZERO1 ZERO(16)
#define ZERO3 \
	ZERO(16) \
	ZERO(24) \
	ZERO(25)
#define FOLD(acc) \
	SSRA4S(16, 24, 2) \
	SSRA4S(16, 25, 4)

// ter3: the 13 code bytes ending 13 bytes after R0 (loaded as the 16 at
// R0, which starts 3 bytes before the group, so that no load passes the
// last group's end; the wrapper runs rows of one group in Go). V24-V27:
// 3, 9, 27, 81; V28-V31: ter3idx; R7 = 13.
#define TER3_CODES \
	VLD1.P (R0)(R7), [V14.B16] \
	UMULL(0, 14, 24) \
	UMULL2(1, 14, 24) \
	MUL16(15, 14, 24) \
	UMULL(2, 15, 24) \
	UMULL2(3, 15, 24) \
	MUL16(15, 14, 25) \
	UMULL(4, 15, 24) \
	UMULL2(5, 15, 24) \
	MUL16(15, 14, 26) \
	UMULL(6, 15, 24) \
	UMULL2(7, 15, 24) \
	MUL16(15, 14, 27) \
	UMULL(8, 15, 24) \
	UMULL2(9, 15, 24) \
	VTBL V28.B16, [V0.B16, V1.B16, V2.B16], V10.B16 \
	VTBL V29.B16, [V2.B16, V3.B16, V4.B16, V5.B16], V11.B16 \
	VTBL V30.B16, [V5.B16, V6.B16, V7.B16], V12.B16 \
	VTBL V31.B16, [V7.B16, V8.B16, V9.B16], V13.B16

#define TER3_CONSTS \
	SUB $3, R0 \
	MOVD $13, R7 \
	VMOVI $3, V24.B16 \
	VMOVI $9, V25.B16 \
	VMOVI $27, V26.B16 \
	VMOVI $81, V27.B16 \
	MOVD $ter3idx<>(SB), R8 \
	VLD1 (R8), [V28.B16, V29.B16, V30.B16, V31.B16]

// ---- against Q8_K: R1 at a block (d f32, qs[256], bsums[16] int16).

// Sum q*y (V16, int32) less the block's bsums, converted to float32 in F16;
// R1 passes the bsums.
#define Q8K_FINISH \
	VLD1.P 32(R1), [V8.H8, V9.H8] \
	VADD V9.H8, V8.H8, V8.H8 \
	SADDLP4S(8, 8) \
	VSUB V8.S4, V16.S4, V16.S4 \
	ADDV4S(16, 16) \
	SCVTFS(16, 16)

// tqDot's float step: sumf (F23) += float32(sum) (F16) * (half R9 * y.d
// (F22)).
#define TQ_FLOAT \
	FMOVS (R12)(R9<<2), F9 \
	FMULS F22, F9, F9 \
	FMULS F9, F16, F16 \
	FADDS F16, F23, F23

// One TQ2_0 half block: 32 code bytes at R0 (vectors V8, V9: fields l of
// byte j are weights 32l+j), its 128 activations at R1.
#define TQ2_HALF(MAC) \
	VLD1.P 32(R0), [V8.B16, V9.B16] \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16] \
	AND16(10, 8, 31) \
	MAC(16, 10, 0) \
	AND16(11, 9, 31) \
	MAC(16, 11, 1) \
	USHR16(10, 8, 2) \
	USHR16(11, 9, 2) \
	AND16(10, 10, 31) \
	AND16(11, 11, 31) \
	MAC(16, 10, 2) \
	MAC(16, 11, 3) \
	USHR16(10, 8, 4) \
	USHR16(11, 9, 4) \
	AND16(10, 10, 31) \
	AND16(11, 11, 31) \
	MAC(16, 10, 4) \
	MAC(16, 11, 5) \
	USHR16(10, 8, 6) \
	USHR16(11, 9, 6) \
	MAC(16, 10, 6) \
	MAC(16, 11, 7)

// TQ2_HALF with dotprod, fields 1 and 2 masked (TER2_MASKS).
#define TQ2_HALF_SDOT(MAC) \
	VLD1.P 32(R0), [V8.B16, V9.B16] \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16] \
	AND16(10, 8, 31) \
	AND16(11, 9, 31) \
	SDOT(16, 10, 0) \
	SDOT(16, 11, 1) \
	AND16(10, 8, 30) \
	AND16(11, 9, 30) \
	SDOT(24, 10, 2) \
	SDOT(24, 11, 3) \
	AND16(10, 8, 29) \
	AND16(11, 9, 29) \
	SDOT(25, 10, 4) \
	SDOT(25, 11, 5) \
	USHR16(10, 8, 6) \
	USHR16(11, 9, 6) \
	SDOT(16, 10, 6) \
	SDOT(16, 11, 7)

#define TQ2_BODY(CONSTS, HALF, MAC, ZEROS, WIDEN) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V23.B16, V23.B16, V23.B16 \
	CBZ R3, done \
	CONSTS \
loop: \
	ZEROS \
	FMOVS.P 4(R1), F22 \
	HALF(MAC) \
	HALF(MAC) \
	MOVHU.P 2(R0), R9 \
	WIDEN(16) \
	Q8K_FINISH \
	TQ_FLOAT \
	SUBS $1, R3 \
	BNE loop \
done: \
	FMOVS F23, ret+24(FP) \
	RET

// Trit 0 of the bytes of V(s) into V(d), and trit n (V(p): 3^n bytes);
// V13 scratch.
#define TRIT0(s, d) \
	USHR16(13, s, 1) \
	UHADD16(d, s, 13) \
	USHR16(d, d, 6)
#define TRIT(s, p, d) \
	MUL16(d, s, p) \
	USHR16(13, d, 1) \
	UHADD16(d, d, 13) \
	USHR16(d, d, 6)

// TQ1_0 (54 bytes: qs[48], qh[4], d f16): trit n of qs bytes 0-15 (V8)
// and 16-31 (V9) are weights 32n.. and 32n+16.., of bytes 32-47 (V10)
// weights 160+16n.., of qh (V11, times tq1qh in V28) weights 240...
#define TQ1_BODY(MAC, WIDEN) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V23.B16, V23.B16, V23.B16 \
	CBZ R3, done \
	VMOVI $3, V24.B16 \
	VMOVI $9, V25.B16 \
	VMOVI $27, V26.B16 \
	VMOVI $81, V27.B16 \
	MOVD $tq1qh<>(SB), R8 \
	VLD1 (R8), [V28.B16] \
loop: \
	ZERO(16) \
	FMOVS.P 4(R1), F22 \
	VLD1.P 48(R0), [V8.B16, V9.B16, V10.B16] \
	VLD1R (R0), [V11.S4] \
	MOVHU 4(R0), R9 \
	ADD $6, R0 \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	TRIT0(8, 12) \
	MAC(16, 12, 0) \
	TRIT0(9, 12) \
	MAC(16, 12, 1) \
	TRIT(8, 24, 12) \
	MAC(16, 12, 2) \
	TRIT(9, 24, 12) \
	MAC(16, 12, 3) \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	TRIT(8, 25, 12) \
	MAC(16, 12, 0) \
	TRIT(9, 25, 12) \
	MAC(16, 12, 1) \
	TRIT(8, 26, 12) \
	MAC(16, 12, 2) \
	TRIT(9, 26, 12) \
	MAC(16, 12, 3) \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	TRIT(8, 27, 12) \
	MAC(16, 12, 0) \
	TRIT(9, 27, 12) \
	MAC(16, 12, 1) \
	TRIT0(10, 12) \
	MAC(16, 12, 2) \
	TRIT(10, 24, 12) \
	MAC(16, 12, 3) \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	TRIT(10, 25, 12) \
	MAC(16, 12, 0) \
	TRIT(10, 26, 12) \
	MAC(16, 12, 1) \
	TRIT(10, 27, 12) \
	MAC(16, 12, 2) \
	TRIT(11, 28, 12) \
	MAC(16, 12, 3) \
	WIDEN(16) \
	Q8K_FINISH \
	TQ_FLOAT \
	SUBS $1, R3 \
	BNE loop \
done: \
	FMOVS F23, ret+24(FP) \
	RET

// ---- the layouts against Q8_K: nb 256-weight blocks (scales at R2,
// codes at R0, activations at R1) while a block's four group scales are
// equal (terLayout.dotQ8_K's one float step per block), from sumf; a
// block whose scales differ stops the kernel, which returns the blocks
// done, and the wrapper runs that block in Go.

// The four scales of ter2 and ter3 (one per group): equal when the 64
// bits equal themselves rotated by 16; the half into R9.
#define SCALES4 \
	MOVD.P 8(R2), R9 \
	ROR $16, R9, R10 \
	CMP R9, R10 \
	BNE done \
	ANDW $0xffff, R9, R9

// The two scales of ter2s128 (one per 128 weights).
#define SCALES2 \
	MOVWU.P 4(R2), R9 \
	RORW $16, R9, R10 \
	CMPW R9, R10 \
	BNE done \
	ANDW $0xffff, R9, R9

// (A1, A2: the accumulators of the second and third code vectors.)
#define K_GROUP(CODES, MAC, A1, A2) \
	CODES \
	VLD1.P 64(R1), [V18.B16, V19.B16, V20.B16, V21.B16] \
	MAC(16, 10, 18) \
	MAC(A1, 11, 19) \
	MAC(A2, 12, 20) \
	MAC(16, 13, 21)

#define TERK_BODY(CONSTS, SCALES, CODES, MAC, ZEROS, A1, A2, WIDEN) \
	MOVD sc+0(FP), R2 \
	MOVD c+8(FP), R0 \
	MOVD a+16(FP), R1 \
	MOVD nb+24(FP), R3 \
	FMOVS sumf+32(FP), F23 \
	MOVD R3, R5 \
	MOVD $·f16tab(SB), R12 \
	CONSTS \
loop: \
	CBZ R3, done \
	SCALES \
	ZEROS \
	FMOVS.P 4(R1), F22 \
	K_GROUP(CODES, MAC, A1, A2) \
	K_GROUP(CODES, MAC, A1, A2) \
	K_GROUP(CODES, MAC, A1, A2) \
	K_GROUP(CODES, MAC, A1, A2) \
	WIDEN(16) \
	Q8K_FINISH \
	TQ_FLOAT \
	SUB $1, R3 \
	B loop \
done: \
	FMOVS F23, ret+40(FP) \
	SUB R3, R5, R5 \
	MOVD R5, ret1+48(FP) \
	RET

// ---- the layouts against Q8_0: ng 64-weight groups (scales at R2, codes
// at R0, two q8_0 blocks each at R1), terLayout.dotQ8_0's float steps:
// sumi = dy0*float32(s0) + dy1*float32(s1), sumf += dx*sumi. (The portable
// kernel adds the first product to a zero sumi, which differs only when
// both products are -0; then dx*sumi is a zero, and adding a zero of
// either sign leaves sumf as it is, sumf never being -0: it starts at +0,
// and a sum is -0 only of two -0.) V22: 0x01 bytes; R9 the group's scale;
// R1 and R13 at the group's two blocks' qs, R14 = 68.
#define Q80_GROUP(CODES, MAC, WIDEN) \
	MOVHU -2(R1), R10 \
	MOVHU -2(R13), R11 \
	VLD1.P (R1)(R14), [V18.B16, V19.B16] \
	VLD1.P (R13)(R14), [V20.B16, V21.B16] \
	CODES \
	SUB16(10, 10, 22) \
	SUB16(11, 11, 22) \
	SUB16(12, 12, 22) \
	SUB16(13, 13, 22) \
	ZERO(16) \
	ZERO(17) \
	MAC(16, 10, 18) \
	MAC(16, 11, 19) \
	MAC(17, 12, 20) \
	MAC(17, 13, 21) \
	WIDEN(16) \
	WIDEN(17) \
	VADDP V17.S4, V16.S4, V16.S4 \
	VADDP V16.S4, V16.S4, V16.S4 \
	SCVTF4(16, 16) \
	VDUP V16.S[1], V17.S4 \
	FMOVS (R12)(R10<<2), F0 \
	FMULS F0, F16, F16 \
	FMOVS (R12)(R11<<2), F1 \
	FMULS F1, F17, F17 \
	FADDS F17, F16, F16 \
	FMOVS (R12)(R9<<2), F2 \
	FMULS F2, F16, F16 \
	FADDS F16, F23, F23

#define GROUPS1(CODES, MAC, WIDEN) Q80_GROUP(CODES, MAC, WIDEN)
#define GROUPS2(CODES, MAC, WIDEN) \
	Q80_GROUP(CODES, MAC, WIDEN) \
	Q80_GROUP(CODES, MAC, WIDEN)

// PER groups per scale (GROUPS: PER of them); ng is a multiple of PER.
#define TERQ_BODY(CONSTS, GROUPS, PER, CODES, MAC, WIDEN) \
	MOVD sc+0(FP), R2 \
	MOVD c+8(FP), R0 \
	MOVD a+16(FP), R1 \
	MOVD ng+24(FP), R3 \
	MOVD $·f16tab(SB), R12 \
	VEOR V23.B16, V23.B16, V23.B16 \
	CBZ R3, done \
	CONSTS \
	VMOVI $1, V22.B16 \
	ADD $2, R1 \
	ADD $34, R1, R13 \
	MOVD $68, R14 \
loop: \
	MOVHU.P 2(R2), R9 \
	GROUPS(CODES, MAC, WIDEN) \
	SUBS $PER, R3 \
	BNE loop \
done: \
	FMOVS F23, ret+32(FP) \
	RET

// ---- the kernels (after every macro: go vet reads a macro's frame
// offsets as those of the TEXT above it).

// func tq2_0DotNEON(w, a *byte, nb int) float32
TEXT ·tq2_0DotNEON(SB), NOSPLIT, $0-28
	TQ2_BODY(TER2_CONSTS, TQ2_HALF, MAC_NEON, ZERO1, WIDEN_NEON)

// func tq2_0DotSDOT(w, a *byte, nb int) float32
TEXT ·tq2_0DotSDOT(SB), NOSPLIT, $0-28
	TQ2_BODY(TER2_CONSTS_SDOT, TQ2_HALF_SDOT, MAC_SDOT, ZERO3, FOLD)

// func tq1_0DotNEON(w, a *byte, nb int) float32
TEXT ·tq1_0DotNEON(SB), NOSPLIT, $0-28
	TQ1_BODY(MAC_NEON, WIDEN_NEON)

// func tq1_0DotSDOT(w, a *byte, nb int) float32
TEXT ·tq1_0DotSDOT(SB), NOSPLIT, $0-28
	TQ1_BODY(MAC_SDOT, WIDEN_SDOT)

// func ter2Q8KNEON(sc, c, a *byte, nb int, sumf float32) (float32, int)
TEXT ·ter2Q8KNEON(SB), NOSPLIT, $0-56
	TERK_BODY(TER2_CONSTS, SCALES4, TER2_CODES, MAC_NEON, ZERO1, 16, 16, WIDEN_NEON)

// func ter2Q8KSDOT(sc, c, a *byte, nb int, sumf float32) (float32, int)
TEXT ·ter2Q8KSDOT(SB), NOSPLIT, $0-56
	TERK_BODY(TER2_CONSTS_SDOT, SCALES4, TER2_MASKS, MAC_SDOT, ZERO3, 24, 25, FOLD)

// func ter2s128Q8KNEON(sc, c, a *byte, nb int, sumf float32) (float32, int)
TEXT ·ter2s128Q8KNEON(SB), NOSPLIT, $0-56
	TERK_BODY(TER2_CONSTS, SCALES2, TER2_CODES, MAC_NEON, ZERO1, 16, 16, WIDEN_NEON)

// func ter2s128Q8KSDOT(sc, c, a *byte, nb int, sumf float32) (float32, int)
TEXT ·ter2s128Q8KSDOT(SB), NOSPLIT, $0-56
	TERK_BODY(TER2_CONSTS_SDOT, SCALES2, TER2_MASKS, MAC_SDOT, ZERO3, 24, 25, FOLD)

// func ter3Q8KNEON(sc, c, a *byte, nb int, sumf float32) (float32, int)
TEXT ·ter3Q8KNEON(SB), NOSPLIT, $0-56
	TERK_BODY(TER3_CONSTS, SCALES4, TER3_CODES, MAC_NEON, ZERO1, 16, 16, WIDEN_NEON)

// func ter3Q8KSDOT(sc, c, a *byte, nb int, sumf float32) (float32, int)
TEXT ·ter3Q8KSDOT(SB), NOSPLIT, $0-56
	TERK_BODY(TER3_CONSTS, SCALES4, TER3_CODES, MAC_SDOT, ZERO1, 16, 16, WIDEN_SDOT)

// func ter2Q8_0NEON(sc, c, a *byte, ng int) float32
TEXT ·ter2Q8_0NEON(SB), NOSPLIT, $0-36
	TERQ_BODY(TER2_CONSTS, GROUPS1, 1, TER2_CODES, MAC_NEON, WIDEN_NEON)

// func ter2Q8_0SDOT(sc, c, a *byte, ng int) float32
TEXT ·ter2Q8_0SDOT(SB), NOSPLIT, $0-36
	TERQ_BODY(TER2_CONSTS, GROUPS1, 1, TER2_CODES, MAC_SDOT, WIDEN_SDOT)

// func ter2s128Q8_0NEON(sc, c, a *byte, ng int) float32
TEXT ·ter2s128Q8_0NEON(SB), NOSPLIT, $0-36
	TERQ_BODY(TER2_CONSTS, GROUPS2, 2, TER2_CODES, MAC_NEON, WIDEN_NEON)

// func ter2s128Q8_0SDOT(sc, c, a *byte, ng int) float32
TEXT ·ter2s128Q8_0SDOT(SB), NOSPLIT, $0-36
	TERQ_BODY(TER2_CONSTS, GROUPS2, 2, TER2_CODES, MAC_SDOT, WIDEN_SDOT)

// func ter3Q8_0NEON(sc, c, a *byte, ng int) float32
TEXT ·ter3Q8_0NEON(SB), NOSPLIT, $0-36
	TERQ_BODY(TER3_CONSTS, GROUPS1, 1, TER3_CODES, MAC_NEON, WIDEN_NEON)

// func ter3Q8_0SDOT(sc, c, a *byte, ng int) float32
TEXT ·ter3Q8_0SDOT(SB), NOSPLIT, $0-36
	TERQ_BODY(TER3_CONSTS, GROUPS1, 1, TER3_CODES, MAC_SDOT, WIDEN_SDOT)
