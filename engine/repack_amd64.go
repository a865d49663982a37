//go:build amd64 && !purego

package engine

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func gemvQ4_0x8AVX2(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ4_0x8VNNI(grp, a, aux *byte, nb int, out *[packRows]float32)

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

// packQ4_0 returns the Q4_0 group kernel of a kernel set.
func packQ4_0(vnni bool) *packKernel {
	asm := gemvQ4_0x8AVX2
	if vnni {
		asm = gemvQ4_0x8VNNI
	}
	k := *packKernels[gguf.TypeQ4_0]
	k.gemv = gemvOf(asm, packRows*q4_0Bytes, q8_0Bytes, 8)
	return &k
}
