//go:build arm64 && !purego

#include "textflag.h"

// The Q4_0 group kernel with SDOT by element (ARMv8.2 dotprod), exactly as
// gemvQ4_0Go (repack.go): a 128-bit vector holds 4 rows' 4-byte groups, so
// SDOT Vd.4S, Vn.16B, Vm.4B[i] adds to each row's int32 lane the dot of its
// 4 weights with activation bytes 4i..4i+3. The nibbles are made signed
// (q - 8), which gives the same exact integer sums as the unsigned nibbles
// plus aux's correction; the float steps are FMUL then FADD (rounded apart:
// no fused multiply-add), as the Go kernel's float32(float32(isum) *
// scale) and the add. These instructions are encoded with WORD (Arm ARM
// C7.2), operands being register numbers.

// SDOT Vd.4S, Vn.16B, Vm.4B[i]
#define SDOTEL(d, n, m, i) WORD $(0x4F80E000 | ((i>>1)<<11) | ((i&1)<<21) | (m<<16) | (n<<5) | d)
// FMUL Vd.4S, Vn.4S, Vm.4S
#define FMUL4S(d, n, m) WORD $(0x6E20DC00 | (m<<16) | (n<<5) | d)
// FADD Vd.4S, Vn.4S, Vm.4S
#define FADD4S(d, n, m) WORD $(0x4E20D400 | (m<<16) | (n<<5) | d)
// SCVTF Vd.4S, Vn.4S
#define SCVTF4S(d, n) WORD $(0x4E21D800 | (n<<5) | d)
// FCVTL Vd.4S, Vn.4H and FCVTL2 Vd.4S, Vn.8H
#define FCVTL4S(d, n) WORD $(0x0E217800 | (n<<5) | d)
#define FCVTL24S(d, n) WORD $(0x4E217800 | (n<<5) | d)
// SUB Vd.16B, Vn.16B, Vm.16B
#define SUB16B(d, n, m) WORD $(0x6E208400 | (m<<16) | (n<<5) | d)

// Vector p of a block: rows 0-3 in V6, rows 4-7 in V7; low nibbles less 8
// (chunk p, activation bytes 4p.. in V4) into V16/V17, high nibbles (chunk
// p+4, bytes 4p.. of V5) into V18/V19. V31 holds 0x0f bytes, V30 8s.
#define GQ4S_P(p) \
	VLD1.P 32(R0), [V6.B16, V7.B16] \
	VAND V31.B16, V6.B16, V8.B16 \
	VAND V31.B16, V7.B16, V9.B16 \
	VUSHR $4, V6.B16, V10.B16 \
	VUSHR $4, V7.B16, V11.B16 \
	SUB16B(8, 8, 30) \
	SUB16B(9, 9, 30) \
	SUB16B(10, 10, 30) \
	SUB16B(11, 11, 30) \
	SDOTEL(16, 8, 4, p) \
	SDOTEL(17, 9, 4, p) \
	SDOTEL(18, 10, 5, p) \
	SDOTEL(19, 11, 5, p)

// func gemvQ4_0x8SDOT(grp, a, aux *byte, nb int, out *[8]float32)
// R0 the group block (advances 144 a block), R1 the activation block, R2
// its aux, R3 blocks left; V28/V29 the float sums of rows 0-3/4-7.
TEXT ·gemvQ4_0x8SDOT(SB), NOSPLIT, $0-40
	MOVD grp+0(FP), R0
	MOVD a+8(FP), R1
	MOVD aux+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD out+32(FP), R4
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	VMOVI $15, V31.B16
	VMOVI $8, V30.B16
	CBZ R3, done
loop:
	VLD1.P 16(R0), [V0.B16]
	FCVTL4S(1, 0)
	FCVTL24S(2, 0)
	FMOVS (R2), F3
	VDUP V3.S[0], V3.S4
	FMUL4S(1, 1, 3)
	FMUL4S(2, 2, 3)
	ADD $2, R1, R5
	VLD1 (R5), [V4.B16, V5.B16]
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	VEOR V18.B16, V18.B16, V18.B16
	VEOR V19.B16, V19.B16, V19.B16
	GQ4S_P(0)
	GQ4S_P(1)
	GQ4S_P(2)
	GQ4S_P(3)
	VADD V18.S4, V16.S4, V16.S4
	VADD V19.S4, V17.S4, V17.S4
	SCVTF4S(16, 16)
	SCVTF4S(17, 17)
	FMUL4S(16, 16, 1)
	FMUL4S(17, 17, 2)
	FADD4S(28, 28, 16)
	FADD4S(29, 29, 17)
	ADD $34, R1
	ADD $8, R2
	SUBS $1, R3
	BNE loop
done:
	VST1 [V28.S4, V29.S4], (R4)
	RET

// Vector c of a Q8_0 group block: rows 0-3 into V16, rows 4-7 into V17,
// with the 4 activation bytes 4c.. (byte 4(c%4) of V4 for c < 4, of V5
// after).
#define GQ8S_C(v, i) \
	VLD1.P 32(R0), [V6.B16, V7.B16] \
	SDOTEL(16, 6, v, i) \
	SDOTEL(17, 7, v, i)

// func gemvQ8_0x8SDOT(grp, a, aux *byte, nb int, out *[8]float32)
// gemvQ8_0Go with SDOT by element (registers as gemvQ4_0x8SDOT).
TEXT ·gemvQ8_0x8SDOT(SB), NOSPLIT, $0-40
	MOVD grp+0(FP), R0
	MOVD a+8(FP), R1
	MOVD aux+16(FP), R2
	MOVD nb+24(FP), R3
	MOVD out+32(FP), R4
	VEOR V28.B16, V28.B16, V28.B16
	VEOR V29.B16, V29.B16, V29.B16
	CBZ R3, q8done
q8loop:
	VLD1.P 16(R0), [V0.B16]
	FCVTL4S(1, 0)
	FCVTL24S(2, 0)
	FMOVS (R2), F3
	VDUP V3.S[0], V3.S4
	FMUL4S(1, 1, 3)
	FMUL4S(2, 2, 3)
	ADD $2, R1, R5
	VLD1 (R5), [V4.B16, V5.B16]
	VEOR V16.B16, V16.B16, V16.B16
	VEOR V17.B16, V17.B16, V17.B16
	GQ8S_C(4, 0)
	GQ8S_C(4, 1)
	GQ8S_C(4, 2)
	GQ8S_C(4, 3)
	GQ8S_C(5, 0)
	GQ8S_C(5, 1)
	GQ8S_C(5, 2)
	GQ8S_C(5, 3)
	SCVTF4S(16, 16)
	SCVTF4S(17, 17)
	FMUL4S(16, 16, 1)
	FMUL4S(17, 17, 2)
	FADD4S(28, 28, 16)
	FADD4S(29, 29, 17)
	ADD $34, R1
	ADD $4, R2
	SUBS $1, R3
	BNE q8loop
q8done:
	VST1 [V28.S4, V29.S4], (R4)
	RET
