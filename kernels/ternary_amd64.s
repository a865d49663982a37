//go:build amd64 && !purego

#include "textflag.h"

// AVX2 integer kernels of the ternary weights (ternary.go): TQ1_0 and
// TQ2_0 against Q8_K, and the layouts ter3, ter2 and ter2s128 against
// Q8_0 (rows of Q2_0 tensors) and Q8_K (rows of TQ1_0/TQ2_0 tensors).
// Codes (0, 1, 2; 3 where a TQ2_0 byte has it) are decoded to bytes and
// multiplied with the activations by VPMADDUBSW (codes unsigned, bytes
// signed), the int16 pairs summed to int32 by VPMADDWD, and sum y taken
// off (the Q8_K block's bsums, a VPMADDUBSW of ones for Q8_0): the exact
// integer sums of the portable kernels, then their scalar float steps in
// their order (VMULSS/VADDSS, no FMA), so each result equals theirs bit
// for bit.
//
// Registers in every function: Y9 0x03 bytes, Y10 0xFF00 words, Y11 768
// words, Y12 3 words, Y13 one bytes, Y14 one words, X8 the float sum;
// Y0-Y7 are scratch (the TQ kernels' eight-block code, TQDOT, takes those
// of the constants a type does not use for scales and sums). X15 is left
// alone (ABIInternal's zero register).

// TRITS(X, PE, PO, T, OUT) sets the bytes of OUT to the trits
// ((b*p mod 256)*3) >> 8 of the bytes b of X, p the word of PE (even
// bytes) or PO (odd bytes) of its lane: (b<<8)*p mod 2^16 is (b*p mod
// 256)<<8, whose VPMULHUW by 3 is the trit of an even byte (in its low
// byte) and by 768 three times b*p mod 256, whose high byte is the trit
// of an odd byte.
#define TRITS(X, PE, PO, T, OUT) \
	VPSLLW $8, X, T \
	VPMULLW PE, T, T \
	VPMULHUW Y12, T, T \
	VPAND Y10, X, OUT \
	VPMULLW PO, OUT, OUT \
	VPMULHUW Y11, OUT, OUT \
	VPAND Y10, OUT, OUT \
	VPOR T, OUT, OUT

// TER2(off) decodes the ter2 group at off(SI): weights 0-31 to Y1, 32-63
// to Y2 (byte m holds weights m, m+16, m+32, m+48 in bits 0-1, 2-3, 4-5,
// 6-7: the 16 bytes in both lanes, shifted by 0|2 and 4|6).
#define TER2(off) \
	VBROADCASTI128 off(SI), Y0 \
	VPSRLVD ter2ShLo<>(SB), Y0, Y1 \
	VPSRLVD ter2ShHi<>(SB), Y0, Y2 \
	VPAND Y9, Y1, Y1 \
	VPAND Y9, Y2, Y2

// TER3(off, off5) decodes the ter3 group at off(SI) (off5 = off+5): its 13
// bytes as bytes 0-7 and 5-12 of X0, in both lanes, weight 13n+m from
// byte m (VPSHUFB) with multiplier 3^n (TRITS): weights 0-31 to Y1, 32-63
// to Y2. The 13 bytes are read exactly (two 8-byte loads).
#define TER3(off, off5) \
	VMOVQ off(SI), X0 \
	VPINSRQ $1, off5(SI), X0, X0 \
	VINSERTI128 $1, X0, Y0, Y0 \
	VPSHUFB ter3ShufLo<>(SB), Y0, Y3 \
	VPSHUFB ter3ShufHi<>(SB), Y0, Y4 \
	TRITS(Y3, ter3PeLo<>(SB), ter3PoLo<>(SB), Y5, Y1) \
	TRITS(Y4, ter3PeHi<>(SB), ter3PoHi<>(SB), Y5, Y2)

// CONSTS loads Y9-Y14 and zeroes X8.
#define CONSTS \
	MOVL $0x03030303, AX \
	VMOVD AX, X9 \
	VPBROADCASTD X9, Y9 \
	MOVL $0xFF00FF00, AX \
	VMOVD AX, X10 \
	VPBROADCASTD X10, Y10 \
	MOVL $0x03000300, AX \
	VMOVD AX, X11 \
	VPBROADCASTD X11, Y11 \
	MOVL $0x00030003, AX \
	VMOVD AX, X12 \
	VPBROADCASTD X12, Y12 \
	MOVL $0x01010101, AX \
	VMOVD AX, X13 \
	VPBROADCASTD X13, Y13 \
	MOVL $0x00010001, AX \
	VMOVD AX, X14 \
	VPBROADCASTD X14, Y14 \
	VXORPS X8, X8, X8

// TERARGS loads the arguments of the layout kernels (sc R8, codes SI, y
// DI, n BX, shift CX) and the constants.
#define TERARGS \
	MOVQ sc+0(FP), R8 \
	MOVQ codes+8(FP), SI \
	MOVQ y+16(FP), DI \
	MOVQ n+24(FP), BX \
	MOVQ shift+32(FP), CX \
	CONSTS

// ACC(src, yoff) adds the products of the codes in src with the 32
// activation bytes at yoff(DI) to the int16 pairs of Y6.
#define ACC(src, yoff) \
	VPMADDUBSW yoff(DI), src, src \
	VPADDW src, Y6, Y6

// HSUMI sets X6 to the float32 of the sum of the int32 lanes of Y6
// (exact: the sums stay far below 2^24).
#define HSUMI \
	VEXTRACTI128 $1, Y6, X7 \
	VPADDD X7, X6, X6 \
	VPSHUFD $0x4E, X6, X7 \
	VPADDD X7, X6, X6 \
	VPSHUFD $0xB1, X6, X7 \
	VPADDD X7, X6, X6 \
	VCVTDQ2PS X6, X6

// Q8KEND(scale) ends a Q8_K block (Y6: its int16 pairs of sum q*y): sum
// (q-1)*y = sum q*y - the block's bsums, then sumf += float32(sum) *
// float32(f16(scale) * y.d), scale a register holding the fp16 word.
#define Q8KEND(scale) \
	VPMADDWD Y14, Y6, Y6 \
	VPMADDWD 260(DI), Y14, Y7 \
	VPSUBD Y7, Y6, Y6 \
	HSUMI \
	VMOVD scale, X7 \
	VCVTPH2PS X7, X7 \
	VMULSS (DI), X7, X7 \
	VMULSS X7, X6, X6 \
	VADDSS X6, X8, X8

// ACCSET(src, yoff, acc) sets the int16 pairs of acc to the products of
// the codes in src with the 32 activation bytes at yoff(DI); ACCADD adds
// them.
#define ACCSET(src, yoff, acc) \
	VPMADDUBSW yoff(DI), src, acc
#define ACCADD(src, yoff, acc) \
	VPMADDUBSW yoff(DI), src, src \
	VPADDW src, acc, acc

// DPSET and DPADD are ACCSET and ACCADD in AVX-512 VNNI (ymm, EVEX), for
// the vnni set: VPDPBUSD adds the products to int32 lanes, one multiply
// where AVX2 takes a multiply and an add, and DPSET starts them at minus
// the block's bsums (Y14: -1 words), so acc ends as sum q*y - sum y.
#define DPSET(src, yoff, acc) \
	VPMADDWD 260(DI), Y14, acc \
	VPDPBUSD yoff(DI), src, acc
#define DPADD(src, yoff, acc) \
	VPDPBUSD yoff(DI), src, acc

// DPSET2 and DPADD2 split TQ2_0's VPDPBUSD into two chains, acc and Y11
// (from 0; TQFIN2 adds it to acc): the products of a block are few, and
// one chain of VPDPBUSD latencies held TQ2_0 back (TQ1_0, whose trits take
// longer to decode, has no free register for it).
#define DPSET2(src, yoff, acc) \
	VPXOR Y11, Y11, Y11 \
	DPSET(src, yoff, acc)
#define DPADD2(src, yoff, acc) \
	VPDPBUSD yoff(DI), src, Y11

// TQ2CODES(acc, SET, ADD, ADD2) multiplies the codes of the TQ2_0 block
// at SI with its Q8_K activations at DI into acc (SET the first, ADD and
// ADD2 the others, alternately: ACCSET/ACCADD/ACCADD, or
// DPSET2/DPADD/DPADD2): bytes 0-31 hold weights 0-127
// (bits 2j-2j+1 weights 32j..), bytes 32-63 weights 128-255.
#define TQ2CODES(acc, SET, ADD, ADD2) \
	TQ2HALF(0, SET, 4, 36, 68, 100, acc, ADD, ADD2) \
	TQ2HALF(32, ADD, 132, 164, 196, 228, acc, ADD, ADD2)

// TQ2HALF: the four fields of the 32 code bytes at xoff(SI) against the
// activations at y0..y3(DI) (F0 the first's macro).
#define TQ2HALF(xoff, F0, y0, y1, y2, y3, acc, ADD, ADD2) \
	VMOVDQU xoff(SI), Y0 \
	VPAND Y9, Y0, Y1 \
	F0(Y1, y0, acc) \
	VPSRLW $2, Y0, Y1 \
	VPAND Y9, Y1, Y1 \
	ADD2(Y1, y1, acc) \
	VPSRLW $4, Y0, Y1 \
	VPAND Y9, Y1, Y1 \
	ADD(Y1, y2, acc) \
	VPSRLW $6, Y0, Y1 \
	VPAND Y9, Y1, Y1 \
	ADD2(Y1, y3, acc)

// TQ1CODES(acc, SET, ADD) is TQ2CODES for a TQ1_0 block: trit n of bytes
// 0-31 are weights 32n.., of bytes 32-47 weights 160+16n.. (two trits a
// vector: multipliers 1|3, 9|27), of bytes 48-51 weights 240+4n.. (with
// bytes 32-47's fifth trit: multipliers 81|1,1,3,3,9,9,27,27).
#define TQ1CODES(acc, SET, ADD) \
	VMOVDQU (SI), Y0 \
	TRITS(Y0, pow3w1<>(SB), pow3w1<>(SB), Y5, Y1) \
	SET(Y1, 4, acc) \
	TRITS(Y0, pow3w3<>(SB), pow3w3<>(SB), Y5, Y1) \
	ADD(Y1, 36, acc) \
	TRITS(Y0, pow3w9<>(SB), pow3w9<>(SB), Y5, Y1) \
	ADD(Y1, 68, acc) \
	TRITS(Y0, pow3w27<>(SB), pow3w27<>(SB), Y5, Y1) \
	ADD(Y1, 100, acc) \
	TRITS(Y0, pow3w81<>(SB), pow3w81<>(SB), Y5, Y1) \
	ADD(Y1, 132, acc) \
	VBROADCASTI128 32(SI), Y0 \
	TRITS(Y0, pow3w1_3<>(SB), pow3w1_3<>(SB), Y5, Y1) \
	ADD(Y1, 164, acc) \
	TRITS(Y0, pow3w9_27<>(SB), pow3w9_27<>(SB), Y5, Y1) \
	ADD(Y1, 196, acc) \
	VPBROADCASTD 48(SI), X1 \
	VINSERTI128 $1, X1, Y0, Y0 \
	TRITS(Y0, pow3w81qh<>(SB), pow3w81qh<>(SB), Y5, Y1) \
	ADD(Y1, 228, acc)

// TQ2BODY and TQ1BODY(acc): the int16 pairs of sum q*y of a block in acc
// (AVX2); TQ2VNNI and TQ1VNNI(acc): int32 lanes of sum (q-1)*y (VNNI).
#define TQ2BODY(acc) TQ2CODES(acc, ACCSET, ACCADD, ACCADD)
#define TQ1BODY(acc) TQ1CODES(acc, ACCSET, ACCADD)
#define TQ2VNNI(acc) TQ2CODES(acc, DPSET2, DPADD, DPADD2)
#define TQ1VNNI(acc) TQ1CODES(acc, DPSET, DPADD)

// Eight blocks at a time, the TQ kernels keep each block's integer sum in
// int32 lanes and its scales in vector lanes, and reduce and scale the
// eight together (TQ8): one horizontal reduction for eight blocks where
// Q8KEND does one per block. The float steps are Q8KEND's, lane by lane
// (the same roundings), and the eight products are added to the sum one
// at a time in block order, so the result is the same to the bit.
//
// TQEND(FIN, acc, b, xd, bs, yd, bm4) ends block b (0-7) of eight: FIN
// makes acc int32 lanes of sum q*y - the bsums (TQFIN16 from AVX2's int16
// pairs, |sum| <= 8*768 + 2048; TQFIN32, nothing, from VNNI's; TQFIN2
// from DPSET2's two), the block's scale (the fp16 word at xd(SI)) goes to
// word b of X4, y.d to dword bm4 of yd (X-: blocks 0-3, 4-7), and SI and
// DI pass the block (bs bytes, 292).
#define TQFIN16(acc) \
	VPSUBW 260(DI), acc, acc \
	VPMADDWD Y14, acc, acc
#define TQFIN32(acc)
#define TQFIN2(acc) VPADDD Y11, acc, acc
#define TQEND(FIN, acc, b, xd, bs, yd, bm4) \
	FIN(acc) \
	VPINSRW $b, xd(SI), X4, X4 \
	VPINSRD $bm4, (DI), yd, yd \
	ADDQ $bs, SI \
	ADDQ $292, DI

// TQ4(BODY, FIN, xd, bs, b0, yd, q, t) runs four blocks (b0 the first's index)
// into q: the int32 lanes of block k summed by VPHADDD (two levels), q's
// low 128 bits holding sums of lanes 0-3 of each, the high 128 bits of
// lanes 4-7; t is scratch.
#define TQ4(BODY, FIN, xd, bs, b0, yd, q, t) \
	BODY(q) \
	TQEND(FIN, q, b0, xd, bs, yd, 0) \
	BODY(t) \
	TQEND(FIN, t, b0+1, xd, bs, yd, 1) \
	VPHADDD t, q, q \
	BODY(t) \
	TQEND(FIN, t, b0+2, xd, bs, yd, 2) \
	BODY(Y6) \
	TQEND(FIN, Y6, b0+3, xd, bs, yd, 3) \
	VPHADDD Y6, t, t \
	VPHADDD t, q, q

// TQADD4 adds the four float32 of X2 to X8, lane 0 first (X7 scratch).
#define TQADD4 \
	VADDSS X2, X8, X8 \
	VMOVSHDUP X2, X7 \
	VADDSS X7, X8, X8 \
	VMOVHLPS X2, X2, X7 \
	VADDSS X7, X8, X8 \
	VPSHUFD $0xFF, X2, X7 \
	VADDSS X7, X8, X8

// TQ8(BODY, FIN, xd, bs, yd0, yd1, Yd0) runs eight blocks: their int32 sums
// (Y2: blocks 0-3, Y3: 4-7, in TQ4's halves) added into Y2's eight lanes,
// converted, each times float32(f16(scale) * y.d), added to X8 in order
// (Yd0: yd0's Y register).
#define TQ8(BODY, FIN, xd, bs, yd0, yd1, Yd0) \
	TQ4(BODY, FIN, xd, bs, 0, yd0, Y2, Y7) \
	TQ4(BODY, FIN, xd, bs, 4, yd1, Y3, Y7) \
	VPERM2I128 $0x20, Y3, Y2, Y7 \
	VPERM2I128 $0x31, Y3, Y2, Y2 \
	VPADDD Y7, Y2, Y2 \
	VCVTDQ2PS Y2, Y2 \
	VCVTPH2PS X4, Y4 \
	VINSERTI128 $1, yd1, Yd0, Yd0 \
	VMULPS Yd0, Y4, Y4 \
	VMULPS Y4, Y2, Y2 \
	TQADD4 \
	VEXTRACTF128 $1, Y2, X2 \
	TQADD4

// TQDOT(BODY, TAIL, FIN, SETUP, RESET, xd, bs, yd0, yd1, Yd0) is a TQ
// kernel's code: eight blocks at a time (TQ8, after SETUP), then one at a
// time (TAIL, the AVX2 body, and Q8KEND, after RESET).
#define TQDOT(BODY, TAIL, FIN, SETUP, RESET, xd, bs, yd0, yd1, Yd0) \
	MOVQ x+0(FP), SI \
	MOVQ y+8(FP), DI \
	MOVQ nb+16(FP), CX \
	CONSTS \
	SETUP \
oct: \
	CMPQ CX, $8 \
	JLT  one \
	TQ8(BODY, FIN, xd, bs, yd0, yd1, Yd0) \
	SUBQ $8, CX \
	JMP  oct \
one: \
	RESET \
tail: \
	TESTQ CX, CX \
	JEQ  done \
	TAIL(Y6) \
	MOVWLZX xd(SI), AX \
	Q8KEND(AX) \
	ADDQ $bs, SI \
	ADDQ $292, DI \
	DECQ CX \
	JMP  tail \
done: \
	VZEROUPPER \
	MOVSS X8, ret+24(FP) \
	RET

// MINUS1W sets Y14 to -1 words (DPSET's), ONESW back to one words
// (Q8KEND's); NONE is no code.
#define MINUS1W VPCMPEQD Y14, Y14, Y14
#define ONESW \
	MOVL $0x00010001, AX \
	VMOVD AX, X14 \
	VPBROADCASTD X14, Y14
#define NONE

// func dotTQ2_0AVX2(x, y *byte, nb int) float32
// TQ2_0 x Q8_K over nb blocks (66 bytes: qs[64], d).
TEXT ·dotTQ2_0AVX2(SB), NOSPLIT, $0-28
	TQDOT(TQ2BODY, TQ2BODY, TQFIN16, NONE, NONE, 64, 66, X5, X10, Y5)

// func dotTQ2_0VNNI(x, y *byte, nb int) float32
TEXT ·dotTQ2_0VNNI(SB), NOSPLIT, $0-28
	TQDOT(TQ2VNNI, TQ2BODY, TQFIN2, MINUS1W, ONESW, 64, 66, X5, X10, Y5)

// func dotTQ1_0AVX2(x, y *byte, nb int) float32
// TQ1_0 x Q8_K over nb blocks (54 bytes: qs[48], qh[4], d).
TEXT ·dotTQ1_0AVX2(SB), NOSPLIT, $0-28
	TQDOT(TQ1BODY, TQ1BODY, TQFIN16, NONE, NONE, 52, 54, X9, X13, Y9)

// func dotTQ1_0VNNI(x, y *byte, nb int) float32
TEXT ·dotTQ1_0VNNI(SB), NOSPLIT, $0-28
	TQDOT(TQ1VNNI, TQ1BODY, TQFIN32, MINUS1W, ONESW, 52, 54, X9, X13, Y9)

// Q80GROUP ends a group of a layout's Q8_0 row (codes of weights 0-31 in
// Y1, 32-63 in Y2; activation blocks at DI and DI+34; R10 the group):
// s0 = sum (q-1)*y over the first block, s1 over the second, then the
// portable float steps sumi = 0 + f16(d0)*s0, sumi += f16(d1)*s1, sumf +=
// f16(scale)*sumi, the scale at R8 + ((2*R10) >> CX &^ 1).
#define Q80GROUP \
	VMOVDQU 2(DI), Y3 \
	VMOVDQU 36(DI), Y4 \
	VPMADDUBSW Y3, Y1, Y1 \
	VPMADDUBSW Y3, Y13, Y3 \
	VPSUBW Y3, Y1, Y1 \
	VPMADDUBSW Y4, Y2, Y2 \
	VPMADDUBSW Y4, Y13, Y4 \
	VPSUBW Y4, Y2, Y2 \
	VPMADDWD Y14, Y1, Y1 \
	VPMADDWD Y14, Y2, Y2 \
	VPHADDD Y2, Y1, Y1 \
	VEXTRACTI128 $1, Y1, X2 \
	VPADDD X2, X1, X1 \
	VPHADDD X1, X1, X1 \
	VCVTDQ2PS X1, X1 \
	MOVWLZX (DI), AX \
	VMOVD AX, X2 \
	VPINSRW $1, 34(DI), X2, X2 \
	VCVTPH2PS X2, X2 \
	VMULPS X2, X1, X1 \
	VXORPS X3, X3, X3 \
	VADDSS X1, X3, X3 \
	VMOVSHDUP X1, X2 \
	VADDSS X2, X3, X3 \
	MOVQ R10, AX \
	SHLQ $1, AX \
	SHRQ CX, AX \
	ANDQ $-2, AX \
	MOVWLZX (R8)(AX*1), AX \
	VMOVD AX, X2 \
	VCVTPH2PS X2, X2 \
	VMULSS X3, X2, X2 \
	VADDSS X2, X8, X8

// func dotTer2Q8_0AVX2(sc, codes, y *byte, n, shift int) float32
// A ter2 (shift 0) or ter2s128 (shift 1: one scale per two groups) row of
// n groups against Q8_0 activations.
TEXT ·dotTer2Q8_0AVX2(SB), NOSPLIT, $0-44
	TERARGS
	XORQ R10, R10
t2q0loop:
	CMPQ R10, BX
	JGE  t2q0done
	TER2(0)
	Q80GROUP
	ADDQ $16, SI
	ADDQ $68, DI
	INCQ R10
	JMP  t2q0loop
t2q0done:
	VZEROUPPER
	MOVSS X8, ret+40(FP)
	RET

// func dotTer3Q8_0AVX2(sc, codes, y *byte, n, shift int) float32
// A ter3 row of n groups against Q8_0 activations (shift 0).
TEXT ·dotTer3Q8_0AVX2(SB), NOSPLIT, $0-44
	TERARGS
	XORQ R10, R10
t3q0loop:
	CMPQ R10, BX
	JGE  t3q0done
	TER3(0, 5)
	Q80GROUP
	ADDQ $13, SI
	ADDQ $68, DI
	INCQ R10
	JMP  t3q0loop
t3q0done:
	VZEROUPPER
	MOVSS X8, ret+40(FP)
	RET

// SCALES4(done, s128, next) sets DX to the scales of block R9 of a
// layout's Q8_K row (scales at R8; shift CX: 0 one scale per group, four
// words, 1 one per two groups, two words) and jumps to done where they
// are not all equal (their bits changed by a 16-bit rotation); the
// block's scale is DX's low word. Its labels are local to the function
// that uses it, once.
#define SCALES4(done, s128, next) \
	MOVQ R9, AX \
	SHLQ $3, AX \
	SHRQ CX, AX \
	TESTQ CX, CX \
	JNE  s128 \
	MOVQ (R8)(AX*1), DX \
	MOVQ DX, R11 \
	ROLQ $16, R11 \
	CMPQ DX, R11 \
	JNE  done \
	JMP  next \
s128: \
	MOVL (R8)(AX*1), DX \
	MOVL DX, R11 \
	ROLL $16, R11 \
	CMPL DX, R11 \
	JNE  done \
next:

// func dotTer2Q8_KAVX2(sc, codes, y *byte, n, shift int, sumf float32) (float32, int)
// From sumf on, a ter2 (shift 0) or ter2s128 (shift 1) row of n blocks
// against Q8_K activations, up to the first block whose scales differ:
// returns the sum and the blocks done (the caller runs that block).
TEXT ·dotTer2Q8_KAVX2(SB), NOSPLIT, $0-64
	TERARGS
	MOVSS sumf+40(FP), X8
	XORQ R9, R9
t2qkloop:
	CMPQ R9, BX
	JGE  t2qkdone
	SCALES4(t2qkdone, t2qks128, t2qkeq)
	VPXOR Y6, Y6, Y6
	TER2(0)
	ACC(Y1, 4)
	ACC(Y2, 36)
	TER2(16)
	ACC(Y1, 68)
	ACC(Y2, 100)
	TER2(32)
	ACC(Y1, 132)
	ACC(Y2, 164)
	TER2(48)
	ACC(Y1, 196)
	ACC(Y2, 228)
	MOVWLZX DX, AX
	Q8KEND(AX)
	ADDQ $64, SI
	ADDQ $292, DI
	INCQ R9
	JMP  t2qkloop
t2qkdone:
	VZEROUPPER
	MOVSS X8, ret+48(FP)
	MOVQ R9, ret1+56(FP)
	RET

// func dotTer3Q8_KAVX2(sc, codes, y *byte, n, shift int, sumf float32) (float32, int)
// dotTer2Q8_KAVX2 for a ter3 row (shift 0).
TEXT ·dotTer3Q8_KAVX2(SB), NOSPLIT, $0-64
	TERARGS
	MOVSS sumf+40(FP), X8
	XORQ R9, R9
t3qkloop:
	CMPQ R9, BX
	JGE  t3qkdone
	SCALES4(t3qkdone, t3qks128, t3qkeq)
	VPXOR Y6, Y6, Y6
	TER3(0, 5)
	ACC(Y1, 4)
	ACC(Y2, 36)
	TER3(13, 18)
	ACC(Y1, 68)
	ACC(Y2, 100)
	TER3(26, 31)
	ACC(Y1, 132)
	ACC(Y2, 164)
	TER3(39, 44)
	ACC(Y1, 196)
	ACC(Y2, 228)
	MOVWLZX DX, AX
	Q8KEND(AX)
	ADDQ $52, SI
	ADDQ $292, DI
	INCQ R9
	JMP  t3qkloop
t3qkdone:
	VZEROUPPER
	MOVSS X8, ret+48(FP)
	MOVQ R9, ret1+56(FP)
	RET

DATA ter3ShufLo<>+0(SB)/8, $0x0706050403020100
DATA ter3ShufLo<>+8(SB)/8, $0x0201000f0e0d0c0b
DATA ter3ShufLo<>+16(SB)/8, $0x0d0c0b0706050403
DATA ter3ShufLo<>+24(SB)/8, $0x0504030201000f0e
GLOBL ter3ShufLo<>(SB), RODATA|NOPTR, $32

DATA ter3ShufHi<>+0(SB)/8, $0x000f0e0d0c0b0706
DATA ter3ShufHi<>+8(SB)/8, $0x0b07060504030201
DATA ter3ShufHi<>+16(SB)/8, $0x030201000f0e0d0c
DATA ter3ShufHi<>+24(SB)/8, $0x0e0d0c0b07060504
GLOBL ter3ShufHi<>(SB), RODATA|NOPTR, $32

DATA ter3PeLo<>+0(SB)/8, $0x0001000100010001
DATA ter3PeLo<>+8(SB)/8, $0x0003000100010001
DATA ter3PeLo<>+16(SB)/8, $0x0003000300030003
DATA ter3PeLo<>+24(SB)/8, $0x0009000900090003
GLOBL ter3PeLo<>(SB), RODATA|NOPTR, $32

DATA ter3PoLo<>+0(SB)/8, $0x0001000100010001
DATA ter3PoLo<>+8(SB)/8, $0x0003000300010001
DATA ter3PoLo<>+16(SB)/8, $0x0003000300030003
DATA ter3PoLo<>+24(SB)/8, $0x0009000900090003
GLOBL ter3PoLo<>(SB), RODATA|NOPTR, $32

DATA ter3PeHi<>+0(SB)/8, $0x0009000900090009
DATA ter3PeHi<>+8(SB)/8, $0x001b001b001b001b
DATA ter3PeHi<>+16(SB)/8, $0x00510051001b001b
DATA ter3PeHi<>+24(SB)/8, $0x0051005100510051
GLOBL ter3PeHi<>(SB), RODATA|NOPTR, $32

DATA ter3PoHi<>+0(SB)/8, $0x001b000900090009
DATA ter3PoHi<>+8(SB)/8, $0x001b001b001b001b
DATA ter3PoHi<>+16(SB)/8, $0x00510051001b001b
DATA ter3PoHi<>+24(SB)/8, $0x0051005100510051
GLOBL ter3PoHi<>(SB), RODATA|NOPTR, $32

DATA ter2ShLo<>+0(SB)/8, $0x0000000000000000
DATA ter2ShLo<>+8(SB)/8, $0x0000000000000000
DATA ter2ShLo<>+16(SB)/8, $0x0000000200000002
DATA ter2ShLo<>+24(SB)/8, $0x0000000200000002
GLOBL ter2ShLo<>(SB), RODATA|NOPTR, $32

DATA ter2ShHi<>+0(SB)/8, $0x0000000400000004
DATA ter2ShHi<>+8(SB)/8, $0x0000000400000004
DATA ter2ShHi<>+16(SB)/8, $0x0000000600000006
DATA ter2ShHi<>+24(SB)/8, $0x0000000600000006
GLOBL ter2ShHi<>(SB), RODATA|NOPTR, $32

DATA pow3w1<>+0(SB)/8, $0x0001000100010001
DATA pow3w1<>+8(SB)/8, $0x0001000100010001
DATA pow3w1<>+16(SB)/8, $0x0001000100010001
DATA pow3w1<>+24(SB)/8, $0x0001000100010001
GLOBL pow3w1<>(SB), RODATA|NOPTR, $32

DATA pow3w3<>+0(SB)/8, $0x0003000300030003
DATA pow3w3<>+8(SB)/8, $0x0003000300030003
DATA pow3w3<>+16(SB)/8, $0x0003000300030003
DATA pow3w3<>+24(SB)/8, $0x0003000300030003
GLOBL pow3w3<>(SB), RODATA|NOPTR, $32

DATA pow3w9<>+0(SB)/8, $0x0009000900090009
DATA pow3w9<>+8(SB)/8, $0x0009000900090009
DATA pow3w9<>+16(SB)/8, $0x0009000900090009
DATA pow3w9<>+24(SB)/8, $0x0009000900090009
GLOBL pow3w9<>(SB), RODATA|NOPTR, $32

DATA pow3w27<>+0(SB)/8, $0x001b001b001b001b
DATA pow3w27<>+8(SB)/8, $0x001b001b001b001b
DATA pow3w27<>+16(SB)/8, $0x001b001b001b001b
DATA pow3w27<>+24(SB)/8, $0x001b001b001b001b
GLOBL pow3w27<>(SB), RODATA|NOPTR, $32

DATA pow3w81<>+0(SB)/8, $0x0051005100510051
DATA pow3w81<>+8(SB)/8, $0x0051005100510051
DATA pow3w81<>+16(SB)/8, $0x0051005100510051
DATA pow3w81<>+24(SB)/8, $0x0051005100510051
GLOBL pow3w81<>(SB), RODATA|NOPTR, $32

DATA pow3w1_3<>+0(SB)/8, $0x0001000100010001
DATA pow3w1_3<>+8(SB)/8, $0x0001000100010001
DATA pow3w1_3<>+16(SB)/8, $0x0003000300030003
DATA pow3w1_3<>+24(SB)/8, $0x0003000300030003
GLOBL pow3w1_3<>(SB), RODATA|NOPTR, $32

DATA pow3w9_27<>+0(SB)/8, $0x0009000900090009
DATA pow3w9_27<>+8(SB)/8, $0x0009000900090009
DATA pow3w9_27<>+16(SB)/8, $0x001b001b001b001b
DATA pow3w9_27<>+24(SB)/8, $0x001b001b001b001b
GLOBL pow3w9_27<>(SB), RODATA|NOPTR, $32

DATA pow3w81qh<>+0(SB)/8, $0x0051005100510051
DATA pow3w81qh<>+8(SB)/8, $0x0051005100510051
DATA pow3w81qh<>+16(SB)/8, $0x0003000300010001
DATA pow3w81qh<>+24(SB)/8, $0x001b001b00090009
GLOBL pow3w81qh<>(SB), RODATA|NOPTR, $32
