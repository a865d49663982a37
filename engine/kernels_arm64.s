//go:build arm64 && !purego

#include "textflag.h"

// Integer parts of the arm64 dot products. Each kernel writes the exact
// int32 sums of one group of weights times its activations (a q8_0 block,
// a 32- or 16-value group of a k-quant super-block) to out, in the order
// the Go side (kernels_arm64.go) scales and adds them: the float
// arithmetic stays in Go, so the results equal the portable kernels' bit
// for bit.
//
// Two variants of each: NEON (ARMv8.0: SMULL/SMULL2 to int16 products,
// SADALP into int32 lanes) and dotprod (ARMv8.2: SDOT, four int8 products
// into each int32 lane). Go's assembler has neither SMULL, SADALP nor
// SDOT, so they are encoded with WORD (Arm ARM C7.2); the operands are
// register numbers.

// SMULL Vd.8H, Vn.8B, Vm.8B
#define SMULL(d, n, m) WORD $(0x0E20C000 | (m<<16) | (n<<5) | d)
// SMULL2 Vd.8H, Vn.16B, Vm.16B
#define SMULL2(d, n, m) WORD $(0x4E20C000 | (m<<16) | (n<<5) | d)
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

// Store the sums of the eight accumulators V16..V23 to 32(R2), post-increment.
#define STORE8 \
	PACK4(V16, V17, V18, V19, V24, V26) \
	PACK4(V20, V21, V22, V23, V25, V27) \
	VST1.P [V26.S4, V27.S4], 32(R2)

// ---- Q8_0: out[i] = sum of the 32 products of block i (34-byte blocks).

#define Q8_0_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD out+24(FP), R2 \
	ADD $2, R0 \
	ADD $2, R1 \
	CMP $4, R3 \
	BLT tail \
quad: \
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
	VST1.P [V26.S4], 16(R2) \
	SUB $4, R3 \
	CMP $4, R3 \
	BGE quad \
tail: \
	CBZ R3, done \
one: \
	VEOR V16.B16, V16.B16, V16.B16 \
	VLD1 (R0), [V0.B16, V1.B16] \
	ADD $34, R0 \
	VLD1 (R1), [V2.B16, V3.B16] \
	ADD $34, R1 \
	MAC(16, 0, 2) \
	MAC(16, 1, 3) \
	VADDV V16.S4, V16 \
	FMOVS F16, (R2) \
	ADD $4, R2 \
	SUBS $1, R3 \
	BNE one \
done: \
	RET

// func q8_0SumsNEON(w, a *byte, nb int, out *int32)
TEXT ·q8_0SumsNEON(SB), NOSPLIT, $0-32
	Q8_0_BODY(MAC_NEON)

// func q8_0SumsSDOT(w, a *byte, nb int, out *int32)
TEXT ·q8_0SumsSDOT(SB), NOSPLIT, $0-32
	Q8_0_BODY(MAC_SDOT)

// ---- Q4_K: out[8i+g] = sum over the 32 values of group g of super-block
// i of nibble * activation (before the 6-bit scales and mins, applied in
// Go). Weight blocks are 144 bytes (qs at 16), activations q8_K blocks of
// 292 (qs at 4).

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

#define Q4K_BODY(MAC) \
	MOVD w+0(FP), R0 \
	MOVD a+8(FP), R1 \
	MOVD nb+16(FP), R3 \
	MOVD out+24(FP), R2 \
	CBZ R3, done \
	VMOVI $15, V31.B16 \
	ADD $16, R0 \
	ADD $4, R1 \
loop: \
	ZERO8 \
	Q4K_QUARTER(MAC, 16, 17) \
	Q4K_QUARTER(MAC, 18, 19) \
	Q4K_QUARTER(MAC, 20, 21) \
	Q4K_QUARTER(MAC, 22, 23) \
	STORE8 \
	ADD $16, R0 \
	ADD $36, R1 \
	SUBS $1, R3 \
	BNE loop \
done: \
	RET

// func q4_KSumsNEON(w, a *byte, nb int, out *int32)
TEXT ·q4_KSumsNEON(SB), NOSPLIT, $0-32
	Q4K_BODY(MAC_NEON)

// func q4_KSumsSDOT(w, a *byte, nb int, out *int32)
TEXT ·q4_KSumsSDOT(SB), NOSPLIT, $0-32
	Q4K_BODY(MAC_SDOT)
