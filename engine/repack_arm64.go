//go:build arm64 && !purego

package engine

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func gemvQ4_0x8SDOT(grp, a, aux *byte, nb int, out *[packRows]float32)

// installPack gives the dotprod set its Q4_0 group kernel (SDOT by
// element); the neon set keeps the Go one, which sums alike.
func installPack(name string) {
	if name != "dotprod" {
		return
	}
	k := *packKernels[gguf.TypeQ4_0]
	k.gemv = func(g, act, aux []byte, nb int, out *[packRows]float32) {
		if nb == 0 {
			*out = [packRows]float32{}
			return
		}
		_, _, _ = g[nb*k.groupBytes-1], act[nb*q8_0Bytes-1], aux[nb*k.auxBytes-1]
		gemvQ4_0x8SDOT(&g[0], &act[0], &aux[0], nb, out)
	}
	kernels[gguf.TypeQ4_0].pack = &k
}
