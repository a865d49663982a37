//go:build amd64 && !purego

package kernels

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func gemvQ4_0x8AVX2(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ4_0x8VNNI(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ4_Kx8AVX2(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ4_Kx8VNNI(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ6_Kx8AVX2(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ6_Kx8VNNI(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ8_0x8AVX2(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ8_0x8VNNI(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemmQ4_0x8x4VNNI(grp, a, aux *byte, astride, auxstride, nb int, out *[4 * packRows]float32)

//go:noescape
func gemmQ8_0x8x4VNNI(grp, a, aux *byte, astride, auxstride, nb int, out *[4 * packRows]float32)

//go:noescape
func gemmQ6_Kx8x4VNNI(grp, a, aux *byte, astride, auxstride, nb int, out *[4 * packRows]float32)

//go:noescape
func gemmQ4_Kx8x4VNNI(grp, a, aux *byte, astride, auxstride, nb int, out *[4 * packRows]float32)

// gemm4Of wraps a four-row group kernel in assembly as gemvOf does.
func gemm4Of(asm func(grp, a, aux *byte, astride, auxstride, nb int, out *[4 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, astride, auxStride, nb int, out *[4 * packRows]float32) {
	return func(g, act, aux []byte, astride, auxStride, nb int, out *[4 * packRows]float32) {
		if nb == 0 {
			*out = [4 * packRows]float32{}
			return
		}
		_, _, _ = g[nb*groupBlock-1], act[3*astride+nb*actBlock-1], aux[3*auxStride+nb*auxBlock-1]
		asm(&g[0], &act[0], &aux[0], astride, auxStride, nb, out)
	}
}

// gemvOf wraps a group kernel in assembly: the bounds are checked once
// here, for the nb blocks it reads of each slice.
func gemvOf(asm func(g, a, aux *byte, nb int, out *[packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, nb int, out *[packRows]float32) {
	return func(g, act, aux []byte, nb int, out *[packRows]float32) {
		if nb == 0 {
			*out = [packRows]float32{}
			return
		}
		_, _, _ = g[nb*groupBlock-1], act[nb*actBlock-1], aux[nb*auxBlock-1]
		asm(&g[0], &act[0], &aux[0], nb, out)
	}
}

// installPack gives the Q4_0, Q8_0, Q4_K and Q6_K kernels of the avx2 and
// vnni sets their group kernels in assembly (the vnni set's Q4_0 and Q8_0
// ones 512 bits wide where the CPU has them: installPack512).
func installPack(name string) {
	if name != "avx2" && name != "vnni" {
		return
	}
	vnni := name == "vnni"
	for _, c := range []struct {
		t        gguf.Type
		avx2, vn func(grp, a, aux *byte, nb int, out *[packRows]float32)
		vn4      func(grp, a, aux *byte, astride, auxstride, nb int, out *[4 * packRows]float32)
		actBlock int
	}{
		{gguf.TypeQ4_0, gemvQ4_0x8AVX2, gemvQ4_0x8VNNI, gemmQ4_0x8x4VNNI, q8_0Bytes},
		{gguf.TypeQ8_0, gemvQ8_0x8AVX2, gemvQ8_0x8VNNI, gemmQ8_0x8x4VNNI, q8_0Bytes},
		{gguf.TypeQ4_K, gemvQ4_Kx8AVX2, gemvQ4_Kx8VNNI, gemmQ4_Kx8x4VNNI, q8_KBytes},
		{gguf.TypeQ6_K, gemvQ6_Kx8AVX2, gemvQ6_Kx8VNNI, gemmQ6_Kx8x4VNNI, q8_KBytes},
	} {
		k := *packKernels[c.t]
		asm := c.avx2
		if vnni {
			asm = c.vn
		}
		k.gemv = gemvOf(asm, k.groupBytes, c.actBlock, k.auxBytes)
		if vnni && c.vn4 != nil {
			k.gemm4 = gemm4Of(c.vn4, k.groupBytes, c.actBlock, k.auxBytes)
		}
		kernels[c.t].pack = &k
	}
	if vnni {
		installPack512()
	}
}
