// The AdvSIMD instructions both arm64 assembly files use that Go's
// assembler has not, encoded with WORD (Arm ARM C7.2); the operands are
// register numbers.

// SMULL Vd.8H, Vn.8B, Vm.8B and SMULL2 (upper halves)
#define SMULL(d, n, m) WORD $(0x0E20C000 | (m<<16) | (n<<5) | d)
#define SMULL2(d, n, m) WORD $(0x4E20C000 | (m<<16) | (n<<5) | d)
// SMLAL Vd.4S, Vn.4H, Vm.4H and SMLAL2 (upper halves)
#define SMLAL4S(d, n, m) WORD $(0x0E608000 | (m<<16) | (n<<5) | d)
#define SMLAL2_4S(d, n, m) WORD $(0x4E608000 | (m<<16) | (n<<5) | d)
// FCVTL Vd.4S, Vn.4H (half to single, exact) and FCVTL2 (upper halves)
#define FCVTL(d, n) WORD $(0x0E217800 | (n<<5) | d)
#define FCVTL2(d, n) WORD $(0x4E217800 | (n<<5) | d)
// FADD Vd.4S, Vn.4S, Vm.4S
#define FADD4(d, n, m) WORD $(0x4E20D400 | (m<<16) | (n<<5) | d)
