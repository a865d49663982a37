// The A32 NEON instructions the armv7 assembly files share, WORD-encoded
// (Go's arm assembler has no NEON mnemonics; Arm ARM A32); the operands
// are D register numbers (a Q register by its first D) and core register
// numbers.

// Register fields of D registers 0-31: Vd with D (bit 22), Vn with N
// (bit 7), Vm with M (bit 5).
#define RD(d) ((((d)&15)<<12) | (((d)>>4)<<22))
#define RN(n) ((((n)&15)<<16) | (((n)>>4)<<7))
#define RM(m) (((m)&15) | (((m)>>4)<<5))

// VLD1.8 {D(v)-D(v+3)}, [R(n)]
#define VLD1x4(v, n) WORD $(0xF420020F | ((n)<<16) | RD(v))
// VMULL.S8 Q(d/2), D(n), D(m)
#define VMULLS8(d, n, m) WORD $(0xF2800C00 | RN(n) | RD(d) | RM(m))
// VPADDL.S16 Q(d/2), Q(m/2)
#define VPADDLS16(d, m) WORD $(0xF3B40240 | RD(d) | RM(m))
// VPADAL.S16 Q(d/2), Q(m/2)
#define VPADALS16(d, m) WORD $(0xF3B40640 | RD(d) | RM(m))
// VPADD.I32 D(d), D(n), D(m)
#define VPADDI32(d, n, m) WORD $(0xF2200B10 | RN(n) | RD(d) | RM(m))
// VMOV.32 R(t), D(n)[0]
#define VMOVRD(t, n) WORD $(0xEE100B10 | RN(n) | ((t)<<12))
// VAND Q(d/2), Q(n/2), Q(m/2)
#define VANDQ(d, n, m) WORD $(0xF2000150 | RN(n) | RD(d) | RM(m))
// VSHR.U8 Q(d/2), Q(m/2), #4
#define VSHRU8x4(d, m) WORD $(0xF38C0050 | RD(d) | RM(m))
// VMOV.I8 Q(d/2), #15
#define VMOVI8x15(d) WORD $(0xF2800E5F | RD(d))
