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
func gemvQ8_0x16AVX512(grp, a, aux *byte, gstride, nb int, out *[2 * packRows]float32)

//go:noescape
func gemvQ4_0x16AVX512(grp, a, aux *byte, gstride, nb int, out *[2 * packRows]float32)

//go:noescape
func gemvQ4_Kx16AVX512(grp, a, aux *byte, gstride, nb int, out *[2 * packRows]float32)

//go:noescape
func gemmQ4_Kx16x4AVX512(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[8 * packRows]float32)

//go:noescape
func gemmQ8_0x16x4AVX512(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[8 * packRows]float32)

//go:noescape
func gemmQ4_0x16x4AVX512(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[8 * packRows]float32)

// gemv2Of wraps a two-group kernel in assembly: g holds two adjacent
// groups of nb blocks (groupBlock bytes each), the bounds checked here.
func gemv2Of(asm func(grp, a, aux *byte, gstride, nb int, out *[2 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, nb int, out *[2 * packRows]float32) {
	return func(g, act, aux []byte, nb int, out *[2 * packRows]float32) {
		if nb == 0 {
			*out = [2 * packRows]float32{}
			return
		}
		_, _, _ = g[2*nb*groupBlock-1], act[nb*actBlock-1], aux[nb*auxBlock-1]
		asm(&g[0], &act[0], &aux[0], nb*groupBlock, nb, out)
	}
}

// gemm2x4Of wraps a two-group, four-row kernel in assembly as gemv2Of.
func gemm2x4Of(asm func(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[8 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, astride, auxStride, nb int, out *[8 * packRows]float32) {
	return func(g, act, aux []byte, astride, auxStride, nb int, out *[8 * packRows]float32) {
		if nb == 0 {
			*out = [8 * packRows]float32{}
			return
		}
		_, _, _ = g[2*nb*groupBlock-1], act[3*astride+nb*actBlock-1], aux[3*auxStride+nb*auxBlock-1]
		asm(&g[0], &act[0], &aux[0], nb*groupBlock, astride, auxStride, nb, out)
	}
}

// oneGroupOf makes a one-group kernel of a two-group one, run with the
// group as both (a stride of 0): for the Q8_0 layout, whose aux values
// differ from the 256-bit kernels', at most one odd group per range.
func oneGroupOf(asm func(grp, a, aux *byte, gstride, nb int, out *[2 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, nb int, out *[packRows]float32) {
	return func(g, act, aux []byte, nb int, out *[packRows]float32) {
		var o [2 * packRows]float32
		if nb > 0 {
			_, _, _ = g[nb*groupBlock-1], act[nb*actBlock-1], aux[nb*auxBlock-1]
			asm(&g[0], &act[0], &aux[0], 0, nb, &o)
		}
		copy(out[:], o[:packRows])
	}
}

// oneGroup4Of is oneGroupOf for a four-row kernel.
func oneGroup4Of(asm func(grp, a, aux *byte, gstride, astride, auxstride, nb int, out *[8 * packRows]float32), groupBlock, actBlock, auxBlock int) func(g, act, aux []byte, astride, auxStride, nb int, out *[4 * packRows]float32) {
	return func(g, act, aux []byte, astride, auxStride, nb int, out *[4 * packRows]float32) {
		var o [8 * packRows]float32
		if nb > 0 {
			_, _, _ = g[nb*groupBlock-1], act[3*astride+nb*actBlock-1], aux[3*auxStride+nb*auxBlock-1]
			asm(&g[0], &act[0], &aux[0], 0, astride, auxStride, nb, &o)
		}
		for i := 0; i < 4; i++ {
			copy(out[i*packRows:(i+1)*packRows], o[2*i*packRows:(2*i+1)*packRows])
		}
	}
}

// installPack512 gives the vnni set's Q4_0, Q8_0 and Q4_K group kernels their
// 512-bit two-group versions where the CPU has them. Q8_0's take the
// activation sums in aux (prepQ8_0Sum), so its one-group kernels are the
// two-group ones too.
func installPack512() {
	if !hasVNNI512 {
		return
	}
	q4 := kernels[gguf.TypeQ4_0].pack
	q4.gemv2 = gemv2Of(gemvQ4_0x16AVX512, q4.groupBytes, q8_0Bytes, q4.auxBytes)
	q4.gemm2x4 = gemm2x4Of(gemmQ4_0x16x4AVX512, q4.groupBytes, q8_0Bytes, q4.auxBytes)

	q4k := kernels[gguf.TypeQ4_K].pack
	q4k.gemv2 = gemv2Of(gemvQ4_Kx16AVX512, q4k.groupBytes, q8_KBytes, q4k.auxBytes)
	q4k.gemm2x4 = gemm2x4Of(gemmQ4_Kx16x4AVX512, q4k.groupBytes, q8_KBytes, q4k.auxBytes)

	q8 := kernels[gguf.TypeQ8_0].pack
	q8.prep, q8.auxBytes = prepQ8_0Sum, 8
	q8.gemv2 = gemv2Of(gemvQ8_0x16AVX512, q8.groupBytes, q8_0Bytes, q8.auxBytes)
	q8.gemm2x4 = gemm2x4Of(gemmQ8_0x16x4AVX512, q8.groupBytes, q8_0Bytes, q8.auxBytes)
	q8.gemv = oneGroupOf(gemvQ8_0x16AVX512, q8.groupBytes, q8_0Bytes, q8.auxBytes)
	q8.gemm4 = oneGroup4Of(gemmQ8_0x16x4AVX512, q8.groupBytes, q8_0Bytes, q8.auxBytes)
}
