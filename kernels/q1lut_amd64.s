//go:build amd64 && !purego

#include "textflag.h"

// The Q1_0 lookup kernel in AVX-512 (kernels/q1lut.go): 16 rows of a group
// per vector. Per 128-column block, each of the 16 byte vectors v (16
// rows' sign bytes of columns 8v..8v+7) is zero-extended to 16 dwords;
// VPERMPS uses the low 4 bits of each as the index into the 16-entry float
// table of group 2v, and after a shift by 4 into that of group 2v+1. The
// float steps are ggml's AVX2 q1_0 x q8_0 kernel's (dotQ1_0AVX2) with its
// eight lanes kept per row, lane l in Z(l) (16 rows each): group G of a
// block is lane G mod 8 of q8_0 block G/8; per q8_0 block k the lane's
// value times d_k (a multiply for k = 0, FMAs after, Z8-Z15), then that
// times the rows' weight scales FMA'd into Z0-Z7; at the end the lanes are
// added in hsum_float_8's order.

// LOOK(v, k): sign byte vector v of q8_0 block k into lanes 2(v-4k) and
// 2(v-4k)+1; OP is VMULPS.BCST for k = 0, VFMADD231PS.BCST after.
#define LOOK(v, OP, k, t0, t1) \
	VPMOVZXBD (32+16*(v))(SI), Z16 \
	VPSRLD $4, Z16, Z17 \
	VPERMPS (64+128*(v))(DI), Z16, Z18 \
	OP (4*(k))(DI), Z18, t0 \
	VPERMPS (128+128*(v))(DI), Z17, Z19 \
	OP (4*(k))(DI), Z19, t1

#define QBLOCK(k, OP) \
	LOOK(4*k, OP, k, Z8, Z9) \
	LOOK(4*k+1, OP, k, Z10, Z11) \
	LOOK(4*k+2, OP, k, Z12, Z13) \
	LOOK(4*k+3, OP, k, Z14, Z15)

// PREFETCH5(d, r): the 5 lines from d(r) on (a block's 288 bytes).
#define PREFETCH5(d, r) \
	PREFETCHT0 (d+0)(r) \
	PREFETCHT0 (d+64)(r) \
	PREFETCHT0 (d+128)(r) \
	PREFETCHT0 (d+192)(r) \
	PREFETCHT0 (d+256)(r)

// ZERO8: the lanes' sums Z0-Z7 to zero.
#define ZERO8 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7

// LANESUMS(s): a block's lanes Z8-Z15 times the rows' weight scales s
// into the lanes' sums Z0-Z7.
#define LANESUMS(s) \
	VFMADD231PS Z8, s, Z0 \
	VFMADD231PS Z9, s, Z1 \
	VFMADD231PS Z10, s, Z2 \
	VFMADD231PS Z11, s, Z3 \
	VFMADD231PS Z12, s, Z4 \
	VFMADD231PS Z13, s, Z5 \
	VFMADD231PS Z14, s, Z6 \
	VFMADD231PS Z15, s, Z7

// HSUM8(off): the lanes' sums Z0-Z7 of 16 rows added in hsum_float_8's
// order, ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)), to off(DX).
#define HSUM8(off) \
	VADDPS Z4, Z0, Z0 \
	VADDPS Z6, Z2, Z2 \
	VADDPS Z5, Z1, Z1 \
	VADDPS Z7, Z3, Z3 \
	VADDPS Z2, Z0, Z0 \
	VADDPS Z3, Z1, Z1 \
	VADDPS Z1, Z0, Z0 \
	VMOVUPS Z0, off(DX)

// func q1lutGroupAVX512(grp, tab *byte, nb int, out *float32)
TEXT ·q1lutGroupAVX512(SB), NOSPLIT, $0-32
	MOVQ grp+0(FP), SI
	MOVQ tab+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), DX
	ZERO8

	// The weights stream from memory once per token: the lines 3072
	// bytes (about ten blocks, a thousand cycles) ahead are prefetched,
	// past the group's end into the next one's (groups are contiguous):
	// 6 % less CPU time than 576 bytes ahead in BenchmarkQ1LUTStream/t1.
block:
	PREFETCH5(3072, SI)
	QBLOCK(0, VMULPS.BCST)
	QBLOCK(1, VFMADD231PS.BCST)
	QBLOCK(2, VFMADD231PS.BCST)
	QBLOCK(3, VFMADD231PS.BCST)
	VCVTPH2PS (SI), Z20
	LANESUMS(Z20)
	ADDQ $288, SI
	ADDQ $2112, DI
	DECQ CX
	JNZ  block

	HSUM8(0)
	VZEROUPPER
	RET

// q1lutGroup2AVX512 is q1lutGroupAVX512 for two consecutive groups (rows
// 0-15 at SI, rows 16-31 at R8, nb*288 bytes on): each table vector is
// loaded once for both, halving the table reads (2112 bytes per block
// and group, more than the 288 of weights: tables past the L1 cache are
// read from L2 for every group). Rows 0-15 keep their lanes in Z8-Z15
// and Z0-Z7 as q1lutGroupAVX512; rows 16-31 their per-block lanes in
// Z16-Z23 and their lanes' sums in the frame (0-511(SP), lane l at
// 64l), the same float steps in the same order.

// LOOK2(v, OP, k, a0, a1, b0, b1): sign byte vector v of q8_0 block k
// of both groups, lanes 2(v-4k) and 2(v-4k)+1 into a0, a1 (rows 0-15)
// and b0, b1 (rows 16-31).
#define LOOK2(v, OP, k, a0, a1, b0, b1) \
	VPMOVZXBD (32+16*(v))(SI), Z24 \
	VPMOVZXBD (32+16*(v))(R8), Z25 \
	VMOVUPS (64+128*(v))(DI), Z26 \
	VMOVUPS (128+128*(v))(DI), Z27 \
	VPERMPS Z26, Z24, Z28 \
	OP (4*(k))(DI), Z28, a0 \
	VPERMPS Z26, Z25, Z29 \
	OP (4*(k))(DI), Z29, b0 \
	VPSRLD $4, Z24, Z24 \
	VPSRLD $4, Z25, Z25 \
	VPERMPS Z27, Z24, Z28 \
	OP (4*(k))(DI), Z28, a1 \
	VPERMPS Z27, Z25, Z29 \
	OP (4*(k))(DI), Z29, b1

#define QBLOCK2(k, OP) \
	LOOK2(4*k, OP, k, Z8, Z9, Z16, Z17) \
	LOOK2(4*k+1, OP, k, Z10, Z11, Z18, Z19) \
	LOOK2(4*k+2, OP, k, Z12, Z13, Z20, Z21) \
	LOOK2(4*k+3, OP, k, Z14, Z15, Z22, Z23)

// ACC2(l, z): lane l of rows 16-31 (z) times their weight scales (Z31)
// plus the lane's sum in the frame.
#define ACC2(l, z) \
	VFMADD213PS (64*(l))(SP), Z31, z \
	VMOVUPS z, (64*(l))(SP)

// func q1lutGroup2AVX512(grp, tab *byte, nb int, out *float32)
TEXT ·q1lutGroup2AVX512(SB), NOSPLIT, $512-32
	MOVQ grp+0(FP), SI
	MOVQ tab+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), DX
	IMUL3Q $288, CX, R8
	ADDQ SI, R8
	ZERO8
	VMOVUPS Z0, 0(SP)
	VMOVUPS Z0, 64(SP)
	VMOVUPS Z0, 128(SP)
	VMOVUPS Z0, 192(SP)
	VMOVUPS Z0, 256(SP)
	VMOVUPS Z0, 320(SP)
	VMOVUPS Z0, 384(SP)
	VMOVUPS Z0, 448(SP)

	// Each stream is prefetched 6144 bytes ahead (21 blocks): 28 % less
	// CPU time than 3072 in BenchmarkQ1LUTStream/t1, 4608 and 9216 were
	// slower.
block2g:
	PREFETCH5(6144, SI)
	PREFETCH5(6144, R8)
	QBLOCK2(0, VMULPS.BCST)
	QBLOCK2(1, VFMADD231PS.BCST)
	QBLOCK2(2, VFMADD231PS.BCST)
	QBLOCK2(3, VFMADD231PS.BCST)
	VCVTPH2PS (SI), Z30
	LANESUMS(Z30)
	VCVTPH2PS (R8), Z31
	ACC2(0, Z16)
	ACC2(1, Z17)
	ACC2(2, Z18)
	ACC2(3, Z19)
	ACC2(4, Z20)
	ACC2(5, Z21)
	ACC2(6, Z22)
	ACC2(7, Z23)
	ADDQ $288, SI
	ADDQ $288, R8
	ADDQ $2112, DI
	DECQ CX
	JNZ  block2g

	HSUM8(0)
	VMOVUPS 0(SP), Z0
	VMOVUPS 64(SP), Z1
	VMOVUPS 128(SP), Z2
	VMOVUPS 192(SP), Z3
	VMOVUPS 256(SP), Z4
	VMOVUPS 320(SP), Z5
	VMOVUPS 384(SP), Z6
	VMOVUPS 448(SP), Z7
	HSUM8(64)
	VZEROUPPER
	RET

// The Q1_0 lookup kernel in AVX2 (q1lutGroupAVX2): 16 rows of a group, two
// 4-column groups per VPSHUFB. Tables (q1lutTablesU16): an entry T is
// stored biased, u = T + 32768 (unsigned 16 bits), as its low byte u0 and
// its high byte u1 in two 16-entry byte tables, those of groups 2v and
// 2v+1 side by side in a 32-byte vector (one per 128-bit lane). Sign byte
// vector v of the 16 rows is loaded into both lanes; VPSRLVD shifts the
// upper lane's dwords by 4 so that, masked, the lower lane indexes group
// 2v by the low nibbles and the upper lane group 2v+1 by the high ones.
// The u0 and u1 lookups interleaved (bytes, then words with 0x4b00) are
// the dwords 0x4b000000 + u, the floats 2^23 + u exactly; less 2^23+32768
// they are the entries T exactly, as VCVTDQ2PS would convert them. The
// float steps are dotQ1_0AVX2's: ggml's AVX2 lane l of q8_0 block k is
// the entry of group 8k+l, times d_k (a multiply for k = 0, FMAs after),
// per 128-column block times the weight scale FMA'd into the lane's sum,
// the lanes added at the end in hsum_float_8's order.
//
// Layout of the lanes: sign byte vector v = 4k+p holds lanes 2p and 2p+1
// of q8_0 block k; after the interleaving, rows 4q..4q+3 of lane 2p are
// the lower half of a vector and the same rows of lane 2p+1 its upper
// half. The kernel runs, per block, p = 0..3 and within p k = 0..3, so
// that the sums of d_k times the entries of the rows 4q..4q+3 complete in
// Y(q) (Y0-Y3); then Y(q) times the rows' weight scales (Y4-Y7, the same
// four rows' in both halves) is FMA'd into the lanes' sums at 128q+32p
// of the frame (0(SP)-511(SP), zeroed first). Y8 holds 0x0f
// bytes, Y9 the shift counts (0, 4), Y10 words 0x4b00, Y11 2^23+32768,
// Y12-Y15 scratch.

// LOOK16(v, k, OP): sign byte vector v (q8_0 block k) into Y0-Y3; OP is
// VMULPS for k = 0, VFMADD231PS after.
#define LOOK16(v, k, OP) \
	VBROADCASTI128 (32+16*(v))(SI), Y12 \
	VPSRLVD Y9, Y12, Y12 \
	VPAND Y8, Y12, Y12 \
	VMOVDQU (128+64*(v))(DI), Y13 \
	VPSHUFB Y12, Y13, Y13 \
	VMOVDQU (160+64*(v))(DI), Y14 \
	VPSHUFB Y12, Y14, Y14 \
	VPUNPCKHBW Y14, Y13, Y12 \
	VPUNPCKLBW Y14, Y13, Y13 \
	VPUNPCKLWD Y10, Y13, Y14 \
	VPUNPCKHWD Y10, Y13, Y13 \
	VPUNPCKLWD Y10, Y12, Y15 \
	VPUNPCKHWD Y10, Y12, Y12 \
	VSUBPS Y11, Y14, Y14 \
	VSUBPS Y11, Y13, Y13 \
	VSUBPS Y11, Y15, Y15 \
	VSUBPS Y11, Y12, Y12 \
	OP (32*(k))(DI), Y14, Y0 \
	OP (32*(k))(DI), Y13, Y1 \
	OP (32*(k))(DI), Y15, Y2 \
	OP (32*(k))(DI), Y12, Y3

// LANES(p): lanes 2p, 2p+1 of the block into the lanes' sums.
#define LANES(p) \
	LOOK16(p, 0, VMULPS) \
	LOOK16(4+(p), 1, VFMADD231PS) \
	LOOK16(8+(p), 2, VFMADD231PS) \
	LOOK16(12+(p), 3, VFMADD231PS) \
	VFMADD213PS (32*(p))(SP), Y4, Y0 \
	VMOVUPS Y0, (32*(p))(SP) \
	VFMADD213PS (128+32*(p))(SP), Y5, Y1 \
	VMOVUPS Y1, (128+32*(p))(SP) \
	VFMADD213PS (256+32*(p))(SP), Y6, Y2 \
	VMOVUPS Y2, (256+32*(p))(SP) \
	VFMADD213PS (384+32*(p))(SP), Y7, Y3 \
	VMOVUPS Y3, (384+32*(p))(SP)

// WSCALE(q): the weight scales of rows 4q..4q+3 in both halves of Y(4+q).
#define WSCALE(q, X, Y) \
	VCVTPH2PS (8*(q))(SI), X \
	VINSERTF128 $1, X, Y, Y

// HSUM4(q): rows 4q..4q+3, ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
#define HSUM4(q) \
	VMOVUPS (128*(q))(SP), X0 \
	VADDPS (128*(q)+64)(SP), X0, X0 \
	VMOVUPS (128*(q)+32)(SP), X1 \
	VADDPS (128*(q)+96)(SP), X1, X1 \
	VADDPS X1, X0, X0 \
	VMOVUPS (128*(q)+16)(SP), X1 \
	VADDPS (128*(q)+80)(SP), X1, X1 \
	VMOVUPS (128*(q)+48)(SP), X2 \
	VADDPS (128*(q)+112)(SP), X2, X2 \
	VADDPS X2, X1, X1 \
	VADDPS X1, X0, X0 \
	VMOVUPS X0, (16*(q))(DX)

// func q1lutGroupAVX2(grp, tab *byte, nb int, out *float32)
TEXT ·q1lutGroupAVX2(SB), $512-32
	MOVQ grp+0(FP), SI
	MOVQ tab+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), DX
	VXORPS Y0, Y0, Y0
	MOVQ   $0, AX

zero:
	VMOVUPS Y0, (SP)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, $512
	JNE     zero
	MOVL $0x0f0f0f0f, AX
	VMOVD AX, X8
	VPBROADCASTD X8, Y8
	VMOVDQU q1lutShift<>(SB), Y9
	MOVL $0x4b004b00, AX
	VMOVD AX, X10
	VPBROADCASTD X10, Y10
	MOVL $0x4b008000, AX // 2^23 + 32768
	VMOVD AX, X11
	VPBROADCASTD X11, Y11

block2:
	PREFETCHT0 576(SI)
	PREFETCHT0 640(SI)
	PREFETCHT0 704(SI)
	PREFETCHT0 768(SI)
	PREFETCHT0 832(SI)
	WSCALE(0, X4, Y4)
	WSCALE(1, X5, Y5)
	WSCALE(2, X6, Y6)
	WSCALE(3, X7, Y7)
	LANES(0)
	LANES(1)
	LANES(2)
	LANES(3)
	ADDQ $288, SI
	ADDQ $1152, DI
	DECQ CX
	JNZ  block2

	HSUM4(0)
	HSUM4(1)
	HSUM4(2)
	HSUM4(3)
	VZEROUPPER
	RET

// The VPSRLVD counts: 0 for the lower lane's dwords, 4 for the upper's.
DATA q1lutShift<>+0(SB)/8, $0
DATA q1lutShift<>+8(SB)/8, $0
DATA q1lutShift<>+16(SB)/8, $0x0000000400000004
DATA q1lutShift<>+24(SB)/8, $0x0000000400000004
GLOBL q1lutShift<>(SB), RODATA|NOPTR, $32

// The float tables of q1lutGroupAVX512 (q1lutTablesF32's layout and
// values) in AVX-512: per q8_0 block its 32 activations converted to
// float into the frame, then per 4-column group its 16 entries as the sum
// over the group's 4 activations y_i of S_i * y_i, S_i (Z4-Z7) being +1
// in the lanes c with bit i set and -1 in the others, FMA'd from +0
// (every step exact, the integers small; a zero entry is +0, as
// q1lutTablesF32's conversion gives).

// QSCALE(k): the scale of q8_0 block k as float32 at 4k of the table.
#define QSCALE(k) \
	MOVWLZX (34*(k))(SI), AX \
	VMOVD AX, X0 \
	VCVTPH2PS X0, X0 \
	VMOVSS X0, (4*(k))(DI)

// QENT(k, g): the entries of group 8k+g.
#define QENT(k, g) \
	VPXORD Z2, Z2, Z2 \
	VFMADD231PS.BCST (16*(g))(SP), Z4, Z2 \
	VFMADD231PS.BCST (16*(g)+4)(SP), Z5, Z2 \
	VFMADD231PS.BCST (16*(g)+8)(SP), Z6, Z2 \
	VFMADD231PS.BCST (16*(g)+12)(SP), Z7, Z2 \
	VMOVUPS Z2, (64+64*(8*(k)+(g)))(DI)

// QTAB(k): the tables of the 8 groups of q8_0 block k.
#define QTAB(k) \
	VPMOVSXBD (34*(k)+2)(SI), Z0 \
	VCVTDQ2PS Z0, Z0 \
	VMOVUPS Z0, (SP) \
	VPMOVSXBD (34*(k)+18)(SI), Z1 \
	VCVTDQ2PS Z1, Z1 \
	VMOVUPS Z1, 64(SP) \
	QENT(k, 0) \
	QENT(k, 1) \
	QENT(k, 2) \
	QENT(k, 3) \
	QENT(k, 4) \
	QENT(k, 5) \
	QENT(k, 6) \
	QENT(k, 7)

// func q1lutTablesAVX512(tab, a *byte, nb int)
TEXT ·q1lutTablesAVX512(SB), NOSPLIT, $128-24
	MOVQ tab+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ nb+16(FP), CX
	VMOVUPS q1lutSigns<>+0(SB), Z4
	VMOVUPS q1lutSigns<>+64(SB), Z5
	VMOVUPS q1lutSigns<>+128(SB), Z6
	VMOVUPS q1lutSigns<>+192(SB), Z7

tblock:
	QSCALE(0)
	QSCALE(1)
	QSCALE(2)
	QSCALE(3)
	QTAB(0)
	QTAB(1)
	QTAB(2)
	QTAB(3)
	ADDQ $136, SI
	ADDQ $2112, DI
	DECQ CX
	JNZ  tblock
	VZEROUPPER
	RET

// S_0-S_3 of q1lutTablesAVX512: lane c of S_i is +1 where bit i of c is
// set, -1 elsewhere (float32).
DATA q1lutSigns<>+0(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+8(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+16(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+24(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+32(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+40(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+48(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+56(SB)/8, $0x3f800000bf800000
DATA q1lutSigns<>+64(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+72(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+80(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+88(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+96(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+104(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+112(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+120(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+128(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+136(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+144(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+152(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+160(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+168(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+176(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+184(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+192(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+200(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+208(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+216(SB)/8, $0xbf800000bf800000
DATA q1lutSigns<>+224(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+232(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+240(SB)/8, $0x3f8000003f800000
DATA q1lutSigns<>+248(SB)/8, $0x3f8000003f800000
GLOBL q1lutSigns<>(SB), RODATA|NOPTR, $256
