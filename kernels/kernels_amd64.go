//go:build amd64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"github.com/ggufkit/gguf/gguf"
)

// useAVX2 selects the assembly kernels (AVX2, FMA and F16C, what ggml's
// own x86 fast paths need); other amd64 CPUs keep the Go kernels.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotF32AVX2(x, y *float32, n int) float32

//go:noescape
func dotF32x4AVX2(w, a *float32, stride, n int, out *[4]float32)

//go:noescape
func scoresAVX2(q, k *float32, kstride, hd, npos int, scale float32, out *float32) float32

//go:noescape
func vdotsAVX2(v, sc *float32, vstride, n, hd int, out *float32)

//go:noescape
func dotQ8_0x4AVX2(w, a *byte, astride, nb int, out *[4]float32)

//go:noescape
func dotQ4_0x4AVX2(w, a *byte, astride, nb int, out *[4]float32)

//go:noescape
func dotQ8_0x4VNNI(w, a *byte, astride, nb int, out *[4]float32)

//go:noescape
func dotQ4_0x4VNNI(w, a *byte, astride, nb int, out *[4]float32)

//go:noescape
func dotQ4_Kx2AVX2(w, a *byte, astride, nb int, out *[2]float32)

//go:noescape
func dotQ6_Kx2AVX2(w, a *byte, astride, nb int, out *[2]float32)

//go:noescape
func dotIQ4_NLAVX2(x, y *byte, npairs int) float32

//go:noescape
func dotQ8_0AVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ4_0AVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ4_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ6_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ3_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ3_Kx2AVX2(w, a *byte, astride, nb int, out *[2]float32)

//go:noescape
func dotQ2_KAVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ1_0AVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ2_0AVX2(x, y *byte, nb int) float32

//go:noescape
func dotQ1_0x2AVX2(w, a *byte, astride, nb int, out *[2]float32)

//go:noescape
func dotQ2_0x2AVX2(w, a *byte, astride, nb int, out *[2]float32)

func dotF32(n int, w, a []byte) float32 {
	if useAVX2 && n >= 8 {
		return dotF32AVX2(&F32s(w)[:n][0], &F32s(a)[:n][0], n)
	}
	return dotF32Go(F32s(w)[:n], F32s(a)[:n])
}

// dotF32x4 is the four-row F32 product of the prompt path (matmulTask):
// one weight row against activation rows a, a+stride, a+2*stride and
// a+3*stride, each weight load shared by the four.
func dotF32x4(n int, w, a []byte, stride int, out *[4]float32) {
	_ = a[3*stride+4*n-1]
	dotF32x4AVX2(&F32s(w)[:n][0], &F32s(a)[0], stride/4, n, out)
}

// dotIQ4NLAsm is ggml's AVX2 iq4_nl x q8_0 dot: pairs of blocks in
// assembly, an odd last block added after the horizontal sum.
func dotIQ4NLAsm(n int, w, a []byte) float32 {
	nb := n / 32
	_, _ = w[nb*iq4NLBytes-1], a[nb*q8_0Bytes-1]
	var s float32
	if nb >= 2 {
		s = dotIQ4_NLAVX2(&w[0], &a[0], nb/2)
	}
	if nb%2 == 1 {
		s += iq4NLBlock(w[(nb-1)*iq4NLBytes:], a[(nb-1)*q8_0Bytes:])
	}
	return s
}

// x4q8 returns a four-row product of 32-value blocks of wBytes bytes
// against q8_0 activations, made of assembly kernel x4: each row's result
// is the single-row kernel's, bit for bit, with the weight block decoded
// once for the four.
func x4q8(x4 func(w, a *byte, astride, nb int, out *[4]float32), wBytes int) dot4Func {
	return func(n int, w, a []byte, stride int, out *[4]float32) {
		nb := n / 32
		_ = a[3*stride+nb*q8_0Bytes-1]
		x4(&w[:nb*wBytes][0], &a[0], stride, nb, out)
	}
}

// Scores sets sc[t] = scale * (q . k[t*kstride : t*kstride+len(q)]) for
// every t in sc and returns their maximum: the attention scores of one
// query head over the cache, in one assembly loop when the head size is a
// multiple of 8 (the same sums as dotF32, without a call per key).
func Scores(q, k []float32, kstride int, scale float32, sc []float32) float32 {
	hd := len(q)
	if useAVX2 && hd%8 == 0 && len(sc) > 0 {
		_ = k[(len(sc)-1)*kstride+hd-1]
		return scoresAVX2(&q[0], &k[0], kstride, hd, len(sc), scale, &sc[0])
	}
	return scoresGo(q, k, kstride, scale, sc)
}

// Vdots sets out[d] = sc . v[d*vstride : d*vstride+len(sc)] for every d in
// out: the attention's weighted sum of the values (stored transposed), each
// dot exactly dotF32's, in one assembly loop.
func Vdots(sc, v []float32, vstride int, out []float32) {
	if n := len(sc); useAVX2 && n >= 8 && len(out) > 0 {
		_ = v[(len(out)-1)*vstride+n-1]
		vdotsAVX2(&v[0], &sc[0], vstride, n, len(out), &out[0])
		return
	}
	vdotsGo(sc, v, vstride, out)
}

// kx2Func is a two-row kernel: one weight row of nb blocks against the
// activation rows at a and a+astride.
type kx2Func func(w, a *byte, astride, nb int, out *[2]float32)

// x4of returns the four-row product of a type with blocks of block values
// and rowBytes bytes, whose activations take actBytes per block, made of
// two calls of a two-row kernel (four rows do not fit the registers):
// each row's result is the single-row kernel's bit for bit, with each
// weight block decoded once per pair of rows.
func x4of(x2 kx2Func, block, rowBytes, actBytes int) dot4Func {
	return func(n int, w, a []byte, stride int, out *[4]float32) {
		nb := n / block
		_ = a[3*stride+nb*actBytes-1]
		wp := &w[:nb*rowBytes][0]
		x2(wp, &a[0], stride, nb, (*[2]float32)(out[:2]))
		x2(wp, &a[2*stride], stride, nb, (*[2]float32)(out[2:]))
	}
}

// The integer kernels compute ggml's x86 sums: |w| times sign-adjusted
// activations with VPMADDUBSW, pairs to int32 with VPMADDWD, then one FMA
// per block with the product of the two half-float scales.
func dotQ8_0Asm(n int, w, a []byte) float32 {
	nb := n / 32
	return dotQ8_0AVX2(&w[:nb*q8_0Bytes][0], &a[:nb*q8_0Bytes][0], nb)
}

func dotQ4_0Asm(n int, w, a []byte) float32 {
	nb := n / 32
	return dotQ4_0AVX2(&w[:nb*q4_0Bytes][0], &a[:nb*q8_0Bytes][0], nb)
}

func dotQ4_KAsm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotQ4_KAVX2(&w[:nb*q4_KBytes][0], &a[:nb*q8_KBytes][0], nb)
}

func dotQ6_KAsm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotQ6_KAVX2(&w[:nb*q6_KBytes][0], &a[:nb*q8_KBytes][0], nb)
}

func dotQ3_KAsm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotQ3_KAVX2(&w[:nb*q3_KBytes][0], &a[:nb*q8_KBytes][0], nb)
}

func dotQ2_KAsm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotQ2_KAVX2(&w[:nb*q2_KBytes][0], &a[:nb*q8_KBytes][0], nb)
}

func dotQ1_0Asm(n int, w, a []byte) float32 {
	nb := n / 128
	return dotQ1_0AVX2(&w[:nb*q1_0Bytes][0], &a[:4*nb*q8_0Bytes][0], nb)
}

func dotQ2_0Asm(n int, w, a []byte) float32 {
	nb := n / 64
	return dotQ2_0AVX2(&w[:nb*q2_0Bytes][0], &a[:2*nb*q8_0Bytes][0], nb)
}

// hasAVX2 is what the CPU offers; useAVX2 what is installed (SelectKernels).
var hasAVX2 = useAVX2

// hasVNNI reports AVX-512 VNNI with 256-bit vectors (AVX512VL), which the
// "vnni" set's VPDPBUSD needs (x/sys/cpu sets the AVX-512 flags only where
// the OS saves the AVX-512 state).
var hasVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI

// kernelSets lists the kernel sets this build can select, best first:
// "vnni" is "avx2" with the Q8_0 and Q4_0 prompt kernels summing byte
// pairs with VPDPBUSD (one multiply where AVX2 takes two; the same
// integers, so the same results bit for bit).
func kernelSets() []string {
	if hasAVX2 && cpu.X86.HasAVX {
		if hasVNNI {
			return []string{"vnni", "avx2", "portable"}
		}
		return []string{"avx2", "portable"}
	}
	return []string{"portable"}
}

// installKernels switches to the named set, one of kernelSets().
func installKernels(name string) {
	restorePortable()
	useAVX2 = name == "avx2" || name == "vnni"
	if name == "vnni" {
		defer func() {
			kernels[gguf.TypeQ8_0].dot4 = x4q8(dotQ8_0x4VNNI, q8_0Bytes)
			kernels[gguf.TypeQ4_0].dot4 = x4q8(dotQ4_0x4VNNI, q4_0Bytes)
		}()
	}
	if useAVX2 {
		kernels[gguf.TypeF32].dot4 = dotF32x4
		kernels[gguf.TypeF16].dot = dotF16Asm
		genericKernel.dot4 = dotF32x4
		kernels[gguf.TypeQ8_0].dot = dotQ8_0Asm
		kernels[gguf.TypeQ8_0].dot4 = x4q8(dotQ8_0x4AVX2, q8_0Bytes)
		kernels[gguf.TypeQ4_0].dot = dotQ4_0Asm
		kernels[gguf.TypeQ4_0].dot4 = x4q8(dotQ4_0x4AVX2, q4_0Bytes)
		kernels[gguf.TypeIQ4_NL].dot = dotIQ4NLAsm
		kernels[gguf.TypeQ4_K].dot = dotQ4_KAsm
		kernels[gguf.TypeQ4_K].dot4 = x4of(dotQ4_Kx2AVX2, 256, q4_KBytes, q8_KBytes)
		kernels[gguf.TypeQ6_K].dot = dotQ6_KAsm
		kernels[gguf.TypeQ6_K].dot4 = x4of(dotQ6_Kx2AVX2, 256, q6_KBytes, q8_KBytes)
		kernels[gguf.TypeQ2_K].dot = dotQ2_KAsm
		kernels[gguf.TypeQ3_K].dot = dotQ3_KAsm
		kernels[gguf.TypeQ3_K].dot4 = x4of(dotQ3_Kx2AVX2, 256, q3_KBytes, q8_KBytes)
		kernels[gguf.TypeQ1_0].dot = dotQ1_0Asm
		kernels[gguf.TypeQ1_0].dot4 = x4of(dotQ1_0x2AVX2, 128, q1_0Bytes, 4*q8_0Bytes)
		kernels[gguf.TypeQ2_0].dot = dotQ2_0Asm
		kernels[gguf.TypeQ2_0].dot4 = x4of(dotQ2_0x2AVX2, 64, q2_0Bytes, 2*q8_0Bytes)
		kernels[gguf.TypeTQ1_0].dot = dotTQ1_0Asm
		kernels[gguf.TypeTQ2_0].dot = dotTQ2_0Asm
	}
}
