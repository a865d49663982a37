//go:build amd64 && !purego

#include "textflag.h"

// func fp16RowAVX2(y *byte, x *float32, n int)
// ggml_compute_fp32_to_fp16 on 8 floats per step (n/8 steps): the FP16
// library algorithm, every step an exact IEEE or integer operation:
// |f|*2^112*2^-110 plus 2^(max(exp, -14)+13) rounds to ten mantissa bits,
// NaN becomes 0x7e00, the sign is kept.
TEXT ·fp16RowAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   f16done
	VMOVDQU f16c<>+0(SB), Y8
	VMOVDQU f16c<>+32(SB), Y9
	VMOVDQU f16c<>+64(SB), Y10
	VMOVDQU f16c<>+96(SB), Y11
	VMOVDQU f16c<>+128(SB), Y12
	VMOVDQU f16c<>+160(SB), Y13
	VMOVDQU f16c<>+256(SB), Y14
f16loop:
	VMOVDQU (SI), Y0
	VPAND Y8, Y0, Y1
	VMULPS Y9, Y1, Y2
	VMULPS Y10, Y2, Y2
	VPSLLD $1, Y0, Y3
	VPAND Y11, Y3, Y3
	VPMAXUD Y12, Y3, Y3
	VPSRLD $1, Y3, Y3
	VPADDD Y13, Y3, Y3
	VADDPS Y2, Y3, Y3
	VPSRLD $13, Y3, Y4
	VPAND f16c<>+192(SB), Y4, Y4
	VPAND f16c<>+224(SB), Y3, Y3
	VPADDD Y3, Y4, Y4
	VPCMPGTD Y14, Y1, Y6
	VPBLENDVB Y6, f16c<>+288(SB), Y4, Y4
	VPSRLD $16, Y0, Y0
	VPAND f16c<>+320(SB), Y0, Y0
	VPOR Y0, Y4, Y4
	VEXTRACTI128 $1, Y4, X5
	VPACKUSDW X5, X4, X4
	VMOVDQU X4, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  f16loop
f16done:
	VZEROUPPER
	RET

DATA f16c<>+0(SB)/4, $0x7fffffff
DATA f16c<>+4(SB)/4, $0x7fffffff
DATA f16c<>+8(SB)/4, $0x7fffffff
DATA f16c<>+12(SB)/4, $0x7fffffff
DATA f16c<>+16(SB)/4, $0x7fffffff
DATA f16c<>+20(SB)/4, $0x7fffffff
DATA f16c<>+24(SB)/4, $0x7fffffff
DATA f16c<>+28(SB)/4, $0x7fffffff
DATA f16c<>+32(SB)/4, $0x77800000
DATA f16c<>+36(SB)/4, $0x77800000
DATA f16c<>+40(SB)/4, $0x77800000
DATA f16c<>+44(SB)/4, $0x77800000
DATA f16c<>+48(SB)/4, $0x77800000
DATA f16c<>+52(SB)/4, $0x77800000
DATA f16c<>+56(SB)/4, $0x77800000
DATA f16c<>+60(SB)/4, $0x77800000
DATA f16c<>+64(SB)/4, $0x08800000
DATA f16c<>+68(SB)/4, $0x08800000
DATA f16c<>+72(SB)/4, $0x08800000
DATA f16c<>+76(SB)/4, $0x08800000
DATA f16c<>+80(SB)/4, $0x08800000
DATA f16c<>+84(SB)/4, $0x08800000
DATA f16c<>+88(SB)/4, $0x08800000
DATA f16c<>+92(SB)/4, $0x08800000
DATA f16c<>+96(SB)/4, $0xff000000
DATA f16c<>+100(SB)/4, $0xff000000
DATA f16c<>+104(SB)/4, $0xff000000
DATA f16c<>+108(SB)/4, $0xff000000
DATA f16c<>+112(SB)/4, $0xff000000
DATA f16c<>+116(SB)/4, $0xff000000
DATA f16c<>+120(SB)/4, $0xff000000
DATA f16c<>+124(SB)/4, $0xff000000
DATA f16c<>+128(SB)/4, $0x71000000
DATA f16c<>+132(SB)/4, $0x71000000
DATA f16c<>+136(SB)/4, $0x71000000
DATA f16c<>+140(SB)/4, $0x71000000
DATA f16c<>+144(SB)/4, $0x71000000
DATA f16c<>+148(SB)/4, $0x71000000
DATA f16c<>+152(SB)/4, $0x71000000
DATA f16c<>+156(SB)/4, $0x71000000
DATA f16c<>+160(SB)/4, $0x07800000
DATA f16c<>+164(SB)/4, $0x07800000
DATA f16c<>+168(SB)/4, $0x07800000
DATA f16c<>+172(SB)/4, $0x07800000
DATA f16c<>+176(SB)/4, $0x07800000
DATA f16c<>+180(SB)/4, $0x07800000
DATA f16c<>+184(SB)/4, $0x07800000
DATA f16c<>+188(SB)/4, $0x07800000
DATA f16c<>+192(SB)/4, $0x00007c00
DATA f16c<>+196(SB)/4, $0x00007c00
DATA f16c<>+200(SB)/4, $0x00007c00
DATA f16c<>+204(SB)/4, $0x00007c00
DATA f16c<>+208(SB)/4, $0x00007c00
DATA f16c<>+212(SB)/4, $0x00007c00
DATA f16c<>+216(SB)/4, $0x00007c00
DATA f16c<>+220(SB)/4, $0x00007c00
DATA f16c<>+224(SB)/4, $0x00000fff
DATA f16c<>+228(SB)/4, $0x00000fff
DATA f16c<>+232(SB)/4, $0x00000fff
DATA f16c<>+236(SB)/4, $0x00000fff
DATA f16c<>+240(SB)/4, $0x00000fff
DATA f16c<>+244(SB)/4, $0x00000fff
DATA f16c<>+248(SB)/4, $0x00000fff
DATA f16c<>+252(SB)/4, $0x00000fff
DATA f16c<>+256(SB)/4, $0x7f800000
DATA f16c<>+260(SB)/4, $0x7f800000
DATA f16c<>+264(SB)/4, $0x7f800000
DATA f16c<>+268(SB)/4, $0x7f800000
DATA f16c<>+272(SB)/4, $0x7f800000
DATA f16c<>+276(SB)/4, $0x7f800000
DATA f16c<>+280(SB)/4, $0x7f800000
DATA f16c<>+284(SB)/4, $0x7f800000
DATA f16c<>+288(SB)/4, $0x00007e00
DATA f16c<>+292(SB)/4, $0x00007e00
DATA f16c<>+296(SB)/4, $0x00007e00
DATA f16c<>+300(SB)/4, $0x00007e00
DATA f16c<>+304(SB)/4, $0x00007e00
DATA f16c<>+308(SB)/4, $0x00007e00
DATA f16c<>+312(SB)/4, $0x00007e00
DATA f16c<>+316(SB)/4, $0x00007e00
DATA f16c<>+320(SB)/4, $0x00008000
DATA f16c<>+324(SB)/4, $0x00008000
DATA f16c<>+328(SB)/4, $0x00008000
DATA f16c<>+332(SB)/4, $0x00008000
DATA f16c<>+336(SB)/4, $0x00008000
DATA f16c<>+340(SB)/4, $0x00008000
DATA f16c<>+344(SB)/4, $0x00008000
DATA f16c<>+348(SB)/4, $0x00008000
GLOBL f16c<>(SB), RODATA|NOPTR, $352

// func bf16RowAVX2(y *byte, x *float32, n int)
// GGML_FP32_TO_BF16 on 8 floats per step (n/8 steps): round to nearest even
// by adding 0x7fff plus the lowest kept bit, keep the top half; a NaN keeps
// its top half with the quiet bit (64) set.
TEXT ·bf16RowAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   bf16done
	VMOVDQU f16c<>+0(SB), Y8 // 0x7fffffff
	VMOVDQU f16c<>+256(SB), Y14 // 0x7f800000
	MOVL $0x7fff, DX
	VMOVD DX, X9
	VPBROADCASTD X9, Y9
	MOVL $1, DX
	VMOVD DX, X10
	VPBROADCASTD X10, Y10
	MOVL $64, DX
	VMOVD DX, X11
	VPBROADCASTD X11, Y11
bf16loop:
	VMOVDQU (SI), Y0
	VPSRLD $16, Y0, Y1 // top half
	VPAND Y10, Y1, Y2
	VPADDD Y9, Y2, Y2
	VPADDD Y0, Y2, Y2
	VPSRLD $16, Y2, Y2 // rounded
	VPOR Y11, Y1, Y1 // NaN: quiet top half
	VPAND Y8, Y0, Y3
	VPCMPGTD Y14, Y3, Y3
	VPBLENDVB Y3, Y1, Y2, Y2
	VEXTRACTI128 $1, Y2, X5
	VPACKUSDW X5, X2, X2
	VMOVDQU X2, (DI)
	ADDQ $32, SI
	ADDQ $16, DI
	DECQ CX
	JNZ  bf16loop
bf16done:
	VZEROUPPER
	RET

// func fp16DecodeAVX2(y *float32, x *byte, n int)
// ggml_compute_fp16_to_fp32 on 8 halves per step (n/8 steps), the FP16
// library algorithm: normal values by an exponent shift and a multiply by
// 2^-112, subnormals by a magic-number subtraction, every step exact.
TEXT ·fp16DecodeAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   f16ddone
	MOVL $0x80000000, DX
	VMOVD DX, X8
	VPBROADCASTD X8, Y8 // sign
	MOVL $0x70000000, DX
	VMOVD DX, X9
	VPBROADCASTD X9, Y9 // exp_offset 0xe0<<23
	MOVL $0x07800000, DX
	VMOVD DX, X10
	VPBROADCASTD X10, Y10 // exp_scale 2^-112
	MOVL $0x3f000000, DX
	VMOVD DX, X11
	VPBROADCASTD X11, Y11 // magic_mask 126<<23, also magic_bias 0.5
	MOVL $0x04000000, DX
	VMOVD DX, X12
	VPBROADCASTD X12, Y12 // denormalized_cutoff/2
f16dloop:
	VPMOVZXWD (SI), Y0
	VPSLLD $16, Y0, Y1 // w
	VPAND Y8, Y1, Y2 // sign
	VPADDD Y1, Y1, Y3 // two_w
	VPSRLD $4, Y3, Y4
	VPADDD Y9, Y4, Y4
	VMULPS Y10, Y4, Y4 // normalized
	VPSRLD $17, Y3, Y5
	VPOR Y11, Y5, Y5
	VSUBPS Y11, Y5, Y5 // denormalized
	VPSRLD $1, Y3, Y6
	VPCMPGTD Y6, Y12, Y6 // two_w < cutoff
	VBLENDVPS Y6, Y5, Y4, Y4
	VPOR Y2, Y4, Y4
	VMOVUPS Y4, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  f16dloop
f16ddone:
	VZEROUPPER
	RET

// func bf16DecodeAVX2(y *float32, x *byte, n int)
// ggml_compute_bf16_to_fp32 on 8 values per step: the bits in the top half.
TEXT ·bf16DecodeAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   bf16ddone
bf16dloop:
	VPMOVZXWD (SI), Y0
	VPSLLD $16, Y0, Y0
	VMOVDQU Y0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  bf16dloop
bf16ddone:
	VZEROUPPER
	RET
