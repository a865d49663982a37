//go:build arm && !purego

#include "textflag.h"

// The armv7 (GOARM=7) NEON Q8_0 sums: out[i] = sum of the 32 int8
// products of block i (34-byte blocks), as q8_0SumsNEON on arm64 (see
// kernels_arm64.s). Go's arm assembler has no NEON mnemonics, so every
// NEON instruction is WORD-encoded (Arm ARM A32, registers below D16).

// VLD1.8 {D(v)-D(v+3)}, [R(n)]
#define VLD1x4(v, n) WORD $(0xF420020F | (n<<16) | (v<<12))
// VMULL.S8 Q(d/2), D(n), D(m)
#define VMULLS8(d, n, m) WORD $(0xF2800C00 | (n<<16) | (d<<12) | m)
// VPADDL.S16 Q(d/2), Q(m/2)
#define VPADDLS16(d, m) WORD $(0xF3B40240 | (d<<12) | m)
// VPADAL.S16 Q(d/2), Q(m/2)
#define VPADALS16(d, m) WORD $(0xF3B40640 | (d<<12) | m)
// VPADD.I32 D(d), D(n), D(m)
#define VPADDI32(d, n, m) WORD $(0xF2200B10 | (n<<16) | (d<<12) | m)
// VMOV.32 R(t), D(n)[0]
#define VMOVRD(t, n) WORD $(0xEE100B10 | (n<<16) | (t<<12))

// func q8_0SumsNEON(w, a *byte, nb int, out *int32)
TEXT ·q8_0SumsNEON(SB), NOSPLIT, $0-16
	MOVW w+0(FP), R0
	MOVW a+4(FP), R1
	MOVW nb+8(FP), R3
	MOVW out+12(FP), R2
	CMP $0, R3
	BEQ done
	ADD $2, R0
	ADD $2, R1
loop:
	VLD1x4(0, 0)
	ADD $34, R0
	VLD1x4(4, 1)
	ADD $34, R1
	VMULLS8(8, 0, 4)
	VMULLS8(10, 1, 5)
	VPADDLS16(12, 8)
	VPADALS16(12, 10)
	VMULLS8(8, 2, 6)
	VMULLS8(10, 3, 7)
	VPADALS16(12, 8)
	VPADALS16(12, 10)
	VPADDI32(12, 12, 13)
	VPADDI32(12, 12, 12)
	VMOVRD(4, 12)
	MOVW R4, (R2)
	ADD $4, R2
	SUB.S $1, R3
	BNE loop
done:
	RET
