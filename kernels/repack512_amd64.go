//go:build amd64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"github.com/ggufkit/gguf/gguf"
)

// hasVNNI512 reports the 512-bit VPDPBUSD (and the byte and word
// instructions of AVX512BW) that the vnni set's two-group kernels need.
var hasVNNI512 = hasVNNI && cpu.X86.HasAVX512BW

//go:noescape
func gemvQ8_0x16AVX512(grp, a, aux *byte, nb int, out *[2 * packRows]float32)

//go:noescape
func gemvQ4_0x16AVX512(grp, a, aux *byte, nb int, out *[2 * packRows]float32)

//go:noescape
func gemvQ4_Kx16AVX512(grp, a, aux *byte, nb int, out *[2 * packRows]float32)

//go:noescape
func gemvQ6_Kx16AVX512(grp, a, aux *byte, nb int, out *[2 * packRows]float32)

//go:noescape
func gemmQ8_0x16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[8 * packRows]float32)

//go:noescape
func gemmQ4_0x16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[8 * packRows]float32)

//go:noescape
func gemmQ4_Kx16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[8 * packRows]float32)

//go:noescape
func gemmQ6_Kx16x4AVX512(grp, a, aux *byte, astride, auxstride, nb int, out *[8 * packRows]float32)

// gemv2Of wraps a pair kernel in assembly: g holds two groups of nb
// blocks (groupBlock bytes each) in the pair layout, the bounds checked
// here.
func gemv2Of(asm func(grp, a, aux *byte, nb int, out *[2 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, nb int, out *[2 * packRows]float32) {
	return func(g, act, aux []byte, nb int, out *[2 * packRows]float32) {
		if nb == 0 {
			*out = [2 * packRows]float32{}
			return
		}
		_, _, _ = g[2*nb*groupBlock-1], act[nb*actBlock-1], aux[nb*auxBlock-1]
		asm(&g[0], &act[0], &aux[0], nb, out)
	}
}

// gemm2x4Of wraps a four-row pair kernel in assembly as gemv2Of.
func gemm2x4Of(asm func(grp, a, aux *byte, astride, auxstride, nb int, out *[8 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, astride, auxStride, nb int, out *[8 * packRows]float32) {
	return func(g, act, aux []byte, astride, auxStride, nb int, out *[8 * packRows]float32) {
		if nb == 0 {
			*out = [8 * packRows]float32{}
			return
		}
		_, _, _ = g[2*nb*groupBlock-1], act[3*astride+nb*actBlock-1], aux[3*auxStride+nb*auxBlock-1]
		asm(&g[0], &act[0], &aux[0], astride, auxStride, nb, out)
	}
}

// installPack512 gives the vnni set's Q4_0, Q8_0, Q4_K and Q6_K group kernels
// the pair layout and their 512-bit pair kernels where the CPU has them;
// a matrix's odd last group keeps the 8-row layout and kernels.
func installPack512() {
	if !hasVNNI512 {
		return
	}
	for _, c := range []struct {
		t        gguf.Type
		gemv2    func(grp, a, aux *byte, nb int, out *[2 * packRows]float32)
		gemm2x4  func(grp, a, aux *byte, astride, auxstride, nb int, out *[8 * packRows]float32)
		actBlock int
	}{
		{gguf.TypeQ4_0, gemvQ4_0x16AVX512, gemmQ4_0x16x4AVX512, q8_0Bytes},
		{gguf.TypeQ8_0, gemvQ8_0x16AVX512, gemmQ8_0x16x4AVX512, q8_0Bytes},
		{gguf.TypeQ4_K, gemvQ4_Kx16AVX512, gemmQ4_Kx16x4AVX512, q8_KBytes},
		{gguf.TypeQ6_K, gemvQ6_Kx16AVX512, gemmQ6_Kx16x4AVX512, q8_KBytes},
	} {
		k := kernels[c.t].pack
		if c.t == gguf.TypeQ8_0 {
			// the wrappers check 8 bytes per block; the 256-bit kernels
			// read the first 4 (prepQ8_0Sum)
			k.prep, k.auxBytes = prepQ8_0Sum, 8
		}
		rowBlock, _ := c.t.RowSize(int64(c.t.BlockSize()))
		k.repack2 = pairRepack(k.repack, int(rowBlock), k.groupBytes, pairUnits[c.t])
		k.gemv2 = gemv2Of(c.gemv2, k.groupBytes, c.actBlock, k.auxBytes)
		k.gemm2x4 = gemm2x4Of(c.gemm2x4, k.groupBytes, c.actBlock, k.auxBytes)
	}
}
