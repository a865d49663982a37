//go:build arm64 && !purego

#include "textflag.h"
#include "kernels_arm64.h"

// The Q1_0 lookup kernel in NEON (q1lutGroupLH is the specification): 16
// rows of a group per vector, ARMv8.0 only. Per q8_0 block k of a
// 128-column block, each of its 4 sign byte vectors v is split into its
// low and high nibbles (groups 2v, 2v+1); TBL looks up 16 rows' L and H
// bytes of each (q1lutTablesLH: T = 64*H + L). The L lookups add up in
// bytes (two vectors' in V20, two in V21: at most 4*63 each), the H ones in
// V22; UADDL and SSHLL #6 widen them to the rows' exact int16 sums, SXTL
// and SCVTF to float32, four rows per instruction, then ggml's generic
// float steps: sumi += d_k*sum (V23-V26), and per block sumf += d_w*sumi
// (V27-V30), each product rounded (no fused multiply-add). Go's assembler
// lacks UADDL, SSHLL, SXTL, SCVTF, FCVTL and the vector FMUL and FADD,
// encoded with WORD (kernels_arm64.h and below).

// UADDL Vd.8H, Vn.8B, Vm.8B and UADDL2 (upper halves)
#define UADDL(d, n, m) WORD $(0x2E200000 | (m<<16) | (n<<5) | d)
#define UADDL2(d, n, m) WORD $(0x6E200000 | (m<<16) | (n<<5) | d)
// SSHLL Vd.8H, Vn.8B, #6 and SSHLL2
#define SSHLL6(d, n) WORD $(0x0F0EA400 | (n<<5) | d)
#define SSHLL6_2(d, n) WORD $(0x4F0EA400 | (n<<5) | d)

// One sign byte vector (the next 16 bytes at R0) against the tables
// V(l0), V(l1) (L of its low and high nibbles) and V(h0), V(h1) (H): L
// lookups added to V(la), H lookups to V22. V16-V19 scratch, V31 holds
// 0x0f bytes.
#define CODE(l0, l1, h0, h1, la) \
	VLD1.P 16(R0), [V16.B16] \
	VAND V31.B16, V16.B16, V17.B16 \
	VUSHR $4, V16.B16, V18.B16 \
	VTBL V17.B16, [l0.B16], V19.B16 \
	VADD V19.B16, la.B16, la.B16 \
	VTBL V18.B16, [l1.B16], V19.B16 \
	VADD V19.B16, la.B16, la.B16 \
	VTBL V17.B16, [h0.B16], V19.B16 \
	VADD V19.B16, V22.B16, V22.B16 \
	VTBL V18.B16, [h1.B16], V19.B16 \
	VADD V19.B16, V22.B16, V22.B16

// QBLOCK(k): q8_0 block k (its scale at 4k(R3)) into sumi V23-V26.
#define QBLOCK(k) \
	VLD1.P 64(R1), [V0.B16, V1.B16, V2.B16, V3.B16] \
	VLD1.P 64(R1), [V4.B16, V5.B16, V6.B16, V7.B16] \
	VLD1.P 64(R1), [V8.B16, V9.B16, V10.B16, V11.B16] \
	VLD1.P 64(R1), [V12.B16, V13.B16, V14.B16, V15.B16] \
	VEOR V20.B16, V20.B16, V20.B16 \
	VEOR V21.B16, V21.B16, V21.B16 \
	VEOR V22.B16, V22.B16, V22.B16 \
	CODE(V0, V1, V2, V3, V20) \
	CODE(V4, V5, V6, V7, V20) \
	CODE(V8, V9, V10, V11, V21) \
	CODE(V12, V13, V14, V15, V21) \
	UADDL(16, 20, 21) \
	UADDL2(17, 20, 21) \
	SSHLL6(18, 22) \
	SSHLL6_2(19, 22) \
	VADD V18.H8, V16.H8, V16.H8 \
	VADD V19.H8, V17.H8, V17.H8 \
	SXTL4S(18, 16) \
	SXTL2_4S(19, 16) \
	SXTL4S(20, 17) \
	SXTL2_4S(21, 17) \
	SCVTF4(18, 18) \
	SCVTF4(19, 19) \
	SCVTF4(20, 20) \
	SCVTF4(21, 21) \
	FMOVS (4*(k))(R3), F0 \
	VDUP V0.S[0], V0.S4 \
	FMUL4(18, 18, 0) \
	FMUL4(19, 19, 0) \
	FMUL4(20, 20, 0) \
	FMUL4(21, 21, 0) \
	FADD4(23, 23, 18) \
	FADD4(24, 24, 19) \
	FADD4(25, 25, 20) \
	FADD4(26, 26, 21)

// func q1lutGroupNEON(grp, tab *byte, nb int, out *float32)
TEXT ·q1lutGroupNEON(SB), NOSPLIT, $0-32
	MOVD grp+0(FP), R0
	MOVD tab+8(FP), R1
	MOVD nb+16(FP), R2
	MOVD out+24(FP), R5
	VMOVI $15, V31.B16
	VEOR V27.B16, V27.B16, V27.B16
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VEOR V30.B16, V30.B16, V30.B16

block:
	MOVD R0, R4  // the block's weight scales
	ADD  $32, R0 // its sign bytes
	MOVD R1, R3  // its activation scales
	ADD  $16, R1 // its tables
	PRFM 576(R0), PLDL1KEEP
	PRFM 640(R0), PLDL1KEEP
	PRFM 704(R0), PLDL1KEEP
	PRFM 768(R0), PLDL1KEEP
	PRFM 832(R0), PLDL1KEEP
	VEOR V23.B16, V23.B16, V23.B16
	VEOR V24.B16, V24.B16, V24.B16
	VEOR V25.B16, V25.B16, V25.B16
	VEOR V26.B16, V26.B16, V26.B16
	QBLOCK(0)
	QBLOCK(1)
	QBLOCK(2)
	QBLOCK(3)
	VLD1 (R4), [V16.B16, V17.B16]
	FCVTL(18, 16)
	FCVTL2(19, 16)
	FCVTL(20, 17)
	FCVTL2(21, 17)
	FMUL4(18, 18, 23)
	FMUL4(19, 19, 24)
	FMUL4(20, 20, 25)
	FMUL4(21, 21, 26)
	FADD4(27, 27, 18)
	FADD4(28, 28, 19)
	FADD4(29, 29, 20)
	FADD4(30, 30, 21)
	SUBS $1, R2
	BNE  block

	VST1 [V27.S4, V28.S4, V29.S4, V30.S4], (R5)
	RET
