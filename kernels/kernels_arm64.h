// The AdvSIMD instructions the arm64 assembly files share that Go's
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
// MLA Vd.4S, Vn.4S, Vm.4S (integer multiply-add)
#define VMLA4S(d, n, m) WORD $(0x4EA09400 | (m<<16) | (n<<5) | d)
// SXTL Vd.8H, Vn.8B; SXTL Vd.4S, Vn.4H; SXTL2 Vd.4S, Vn.8H (sign extend)
#define SXTL8H(d, n) WORD $(0x0F08A400 | (n<<5) | d)
#define SXTL4S(d, n) WORD $(0x0F10A400 | (n<<5) | d)
#define SXTL2_4S(d, n) WORD $(0x4F10A400 | (n<<5) | d)
// UXTL Vd.8H, Vn.8B and UXTL2 Vd.8H, Vn.16B (zero extend)
#define UXTL(d, n) WORD $(0x2F08A400 | (n<<5) | d)
#define UXTL2(d, n) WORD $(0x6F08A400 | (n<<5) | d)
// SCVTF Vd.4S, Vn.4S; FMUL and FSUB Vd.4S, Vn.4S, Vm.4S
#define SCVTF4(d, n) WORD $(0x4E21D800 | (n<<5) | d)
#define FMUL4(d, n, m) WORD $(0x6E20DC00 | (m<<16) | (n<<5) | d)
#define FSUB4(d, n, m) WORD $(0x4EA0D400 | (m<<16) | (n<<5) | d)
// SMLAL Vd.8H, Vn.8B, Vm.8B and SMLAL2 Vd.8H, Vn.16B, Vm.16B (int8 products into int16)
#define SMLAL8(d, n, m) WORD $(0x0E208000 | (m<<16) | (n<<5) | d)
#define SMLAL8_2(d, n, m) WORD $(0x4E208000 | (m<<16) | (n<<5) | d)
// SADDLP Vd.4S, Vn.8H (pairs of int16 to int32)
#define SADDLP4S(d, n) WORD $(0x4E602800 | (n<<5) | d)
