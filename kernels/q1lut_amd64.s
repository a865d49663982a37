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

// func q1lutGroupAVX512(grp, tab *byte, nb int, out *float32)
TEXT ·q1lutGroupAVX512(SB), NOSPLIT, $0-32
	MOVQ grp+0(FP), SI
	MOVQ tab+8(FP), DI
	MOVQ nb+16(FP), CX
	MOVQ out+24(FP), DX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

block:
	PREFETCHT0 576(SI)
	PREFETCHT0 640(SI)
	PREFETCHT0 704(SI)
	PREFETCHT0 768(SI)
	PREFETCHT0 832(SI)
	QBLOCK(0, VMULPS.BCST)
	QBLOCK(1, VFMADD231PS.BCST)
	QBLOCK(2, VFMADD231PS.BCST)
	QBLOCK(3, VFMADD231PS.BCST)
	VCVTPH2PS (SI), Z20
	VFMADD231PS Z8, Z20, Z0
	VFMADD231PS Z9, Z20, Z1
	VFMADD231PS Z10, Z20, Z2
	VFMADD231PS Z11, Z20, Z3
	VFMADD231PS Z12, Z20, Z4
	VFMADD231PS Z13, Z20, Z5
	VFMADD231PS Z14, Z20, Z6
	VFMADD231PS Z15, Z20, Z7
	ADDQ $288, SI
	ADDQ $2112, DI
	DECQ CX
	JNZ  block

	// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)), per row
	VADDPS Z4, Z0, Z0
	VADDPS Z6, Z2, Z2
	VADDPS Z5, Z1, Z1
	VADDPS Z7, Z3, Z3
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z1, Z0, Z0
	VMOVUPS Z0, (DX)
	VZEROUPPER
	RET
