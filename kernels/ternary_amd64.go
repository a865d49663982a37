//go:build amd64 && !purego

package kernels

import (
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

//go:noescape
func dotTQ1_0AVX2(x, y *byte, nb int) float32

//go:noescape
func dotTQ2_0AVX2(x, y *byte, nb int) float32

//go:noescape
func dotTQ1_0VNNI(x, y *byte, nb int) float32

//go:noescape
func dotTQ2_0VNNI(x, y *byte, nb int) float32

//go:noescape
func dotTer2Q8_0AVX2(sc, codes, y *byte, n, shift int) float32

//go:noescape
func dotTer3Q8_0AVX2(sc, codes, y *byte, n, shift int) float32

//go:noescape
func dotTer2Q8_KAVX2(sc, codes, y *byte, n, shift int, sumf float32) (float32, int)

//go:noescape
func dotTer3Q8_KAVX2(sc, codes, y *byte, n, shift int, sumf float32) (float32, int)

// The TQ1_0 and TQ2_0 kernels of the avx2 and vnni sets: ternary_amd64.s,
// the portable kernels' sums and float steps, so the same bits.
func dotTQ1_0Asm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotTQ1_0AVX2(&w[:nb*tq1_0Bytes][0], &a[:nb*q8_KBytes][0], nb)
}

func dotTQ2_0Asm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotTQ2_0AVX2(&w[:nb*tq2_0Bytes][0], &a[:nb*q8_KBytes][0], nb)
}

// The TQ1_0 and TQ2_0 kernels of the vnni set: the AVX2 kernels with
// VPDPBUSD (the same integer sums and float steps).
func dotTQ1_0VNNIAsm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotTQ1_0VNNI(&w[:nb*tq1_0Bytes][0], &a[:nb*q8_KBytes][0], nb)
}

func dotTQ2_0VNNIAsm(n int, w, a []byte) float32 {
	nb := n / 256
	return dotTQ2_0VNNI(&w[:nb*tq2_0Bytes][0], &a[:nb*q8_KBytes][0], nb)
}

// terAsm is the assembly of one ternary layout: its Q8_0 kernel (a row of
// groups) and its Q8_K kernel (blocks up to the first whose group scales
// differ, which the caller runs in Go: never in a file made from
// TQ1_0/TQ2_0, whose scales are per block).
type terAsm struct {
	q8_0 func(sc, codes, y *byte, n, shift int) float32
	q8_K func(sc, codes, y *byte, n, shift int, sumf float32) (float32, int)
}

var terAsms = map[layout.Kind]terAsm{
	layout.Ter3:     {dotTer3Q8_0AVX2, dotTer3Q8_KAVX2},
	layout.Ter2:     {dotTer2Q8_0AVX2, dotTer2Q8_KAVX2},
	layout.Ter2S128: {dotTer2Q8_0AVX2, dotTer2Q8_KAVX2},
}

// terDotAsm returns the assembly kernel of layout entry e, the portable
// one's results bit for bit.
func terDotAsm(e layout.Entry) dotFunc {
	l, f := terLayouts[e.Kind], terAsms[e.Kind]
	shift := l.perScale / 2 // 0 or 1: log2 of the groups per scale
	if e.From == gguf.TypeQ2_0 {
		return func(n int, w, a []byte) float32 {
			scales, codes := l.split(n, w)
			ng := n / 64
			if ng == 0 {
				return 0
			}
			return f.q8_0(&scales[0], &codes[0], &a[:ng*2*q8_0Bytes][0], ng, shift)
		}
	}
	return func(n int, w, a []byte) float32 {
		scales, codes := l.split(n, w)
		nb := n / 256
		a = a[:nb*q8_KBytes]
		var sumf float32
		for b := 0; b < nb; b++ {
			var done int
			sumf, done = f.q8_K(&scales[2*(4*b/l.perScale)], &codes[4*b*l.codeBytes], &a[b*q8_KBytes], nb-b, shift, sumf)
			if b += done; b < nb {
				sumf = l.blockQ8_K(b, scales, codes, a, sumf)
			}
		}
		return sumf
	}
}

// installTernary installs the ternary-layout kernels of kernel set name:
// the assembly ones with the avx2 and vnni sets, the portable ones with
// the portable set; and the vnni set's TQ1_0 and TQ2_0 row kernels.
func installTernary(name string) {
	if name == "vnni" {
		kernels[gguf.TypeTQ1_0].dot = dotTQ1_0VNNIAsm
		kernels[gguf.TypeTQ2_0].dot = dotTQ2_0VNNIAsm
	}
	for e, k := range terKernels {
		k.dot = terPortable(e)
		if name == "avx2" || name == "vnni" {
			k.dot = terDotAsm(e)
		}
	}
}
