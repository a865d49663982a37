//go:build arm64 && !purego

package kernels

import "github.com/ggufkit/gguf/gguf"

//go:noescape
func gemvQ4_0x8NEON(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ4_0x8SDOT(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ4_Kx8SDOT(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ6_Kx8SDOT(grp, a, aux *byte, nb int, out *[packRows]float32)

//go:noescape
func gemvQ8_0x8SDOT(grp, a, aux *byte, nb int, out *[packRows]float32)

// installPack gives the dotprod set its Q4_0, Q8_0, Q4_K and Q6_K group
// kernels (SDOT by element) and the neon set its Q4_0 one (SMLAL); neon
// keeps the row kernels of Q8_0 (which sum alike) and of the K-quants
// (which do not: their logits differ between the two sets in the last
// bits, as between amd64's row and group kernels).
func installPack(name string) {
	type groupAsm struct {
		t        gguf.Type
		asm      func(grp, a, aux *byte, nb int, out *[packRows]float32)
		actBlock int
	}
	var set []groupAsm
	switch name {
	case "neon":
		set = []groupAsm{{gguf.TypeQ4_0, gemvQ4_0x8NEON, q8_0Bytes}}
	case "dotprod":
		set = []groupAsm{
			{gguf.TypeQ4_0, gemvQ4_0x8SDOT, q8_0Bytes},
			{gguf.TypeQ8_0, gemvQ8_0x8SDOT, q8_0Bytes},
			{gguf.TypeQ4_K, gemvQ4_Kx8SDOT, q8_KBytes},
			{gguf.TypeQ6_K, gemvQ6_Kx8SDOT, q8_KBytes},
		}
	}
	for _, c := range set {
		k := *packKernels[c.t]
		asm := c.asm
		k.gemv = func(g, act, aux []byte, nb int, out *[packRows]float32) {
			if nb == 0 {
				*out = [packRows]float32{}
				return
			}
			_, _, _ = g[nb*k.groupBytes-1], act[nb*c.actBlock-1], aux[nb*k.auxBytes-1]
			asm(&g[0], &act[0], &aux[0], nb, out)
		}
		kernels[c.t].pack = &k
	}
}
