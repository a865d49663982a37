//go:build arm && !purego

package kernels

import (
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// The armv7 kernels of TQ1_0, TQ2_0 and of the ter2, ter2s128 and ter3
// layouts (ternary_arm.s): NEON integer sums, scaled here in the portable
// kernels' float steps (tqDot, terLayout.dotQ8_K and dotQ8_0), so the
// results are theirs bit for bit.

//go:noescape
func tq1_0SumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func tq2_0SumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func ter2SumsQ8KNEON(c, a *byte, nb int, out *int32)

//go:noescape
func ter2SumsQ8_0NEON(c, a *byte, ng int, out *int32)

//go:noescape
func ter3SumsQ8KNEON(c, a *byte, nb int, out *int32)

//go:noescape
func ter3SumsQ8_0NEON(c, a *byte, ng int, out *int32)

// terNEONSums are the NEON sums of each layout: against Q8_K four per block
// (one per group), against Q8_0 two per group (one per q8_0 block).
var terNEONSums = map[layout.Kind]struct{ q8K, q8_0 sumsFunc }{
	layout.Ter2:     {ter2SumsQ8KNEON, ter2SumsQ8_0NEON},
	layout.Ter2S128: {ter2SumsQ8KNEON, ter2SumsQ8_0NEON},
	layout.Ter3:     {ter3SumsQ8KNEON, ter3SumsQ8_0NEON},
}

func dotTQ1_0Arm(n int, w, a []byte) float32 {
	return armDot(arm.tq1_0, n/256, tq1_0Bytes, q8_KBytes, 1, w, a, func(sumf float32, g []int32, x, y []byte) float32 {
		d := float32(f16(x[tq1_0Bytes-2:]) * lef32(y))
		return sumf + float32(float32(g[0])*d)
	})
}

func dotTQ2_0Arm(n int, w, a []byte) float32 {
	return armDot(arm.tq2_0, n/256, tq2_0Bytes, q8_KBytes, 1, w, a, func(sumf float32, g []int32, x, y []byte) float32 {
		d := float32(f16(x[tq2_0Bytes-2:]) * lef32(y))
		return sumf + float32(float32(g[0])*d)
	})
}

// installTernary installs the layouts' NEON kernels under the neon set,
// the portable ones otherwise.
func installTernary(name string) {
	for e, k := range terKernels {
		k.dot = terPortable(e)
		if name != "neon" {
			continue
		}
		if e.From == gguf.TypeQ2_0 {
			k.dot = terArmQ8_0(terLayouts[e.Kind], terNEONSums[e.Kind].q8_0)
		} else {
			k.dot = terArmQ8K(terLayouts[e.Kind], terNEONSums[e.Kind].q8K)
		}
	}
}

// terArmQ8_0 is layout l's dotQ8_0 with the NEON sums, a chunk of groups
// at a time. A row of one group runs in Go: the ter3 sums read 3 bytes
// before each group's codes, in the scales of longer rows.
func terArmQ8_0(l terLayout, sums sumsFunc) dotFunc {
	sh := uint(l.perScale / 2) // log2 of the groups per scale (armv7 may divide in software)
	return func(n int, w, a []byte) float32 {
		ng := n / 64
		if ng < 2 {
			return l.dotQ8_0(n, w, a)
		}
		sc, c := l.split(n, w)
		a = a[:2*ng*q8_0Bytes]
		var buf [sumsChunk]int32
		var sumf float32
		for g := 0; g < ng; g += sumsChunk / 2 {
			m := min(sumsChunk/2, ng-g)
			sums(&c[l.codeBytes*g], &a[2*g*q8_0Bytes], m, &buf[0])
			for i := 0; i < m; i++ {
				y := a[2*(g+i)*q8_0Bytes:]
				var sumi float32
				sumi += float32(f16(y) * float32(buf[2*i]))
				sumi += float32(f16(y[q8_0Bytes:]) * float32(buf[2*i+1]))
				sumf += float32(f16(sc[2*((g+i)>>sh):]) * sumi)
			}
		}
		return sumf
	}
}

// terArmQ8K is layout l's dotQ8_K with the NEON sums (four per block, one
// per group), a chunk of blocks at a time.
func terArmQ8K(l terLayout, sums sumsFunc) dotFunc {
	sh := uint(l.perScale / 2)
	return func(n int, w, a []byte) float32 {
		nb := n / 256
		sc, c := l.split(n, w)
		a = a[:nb*q8_KBytes]
		var buf [sumsChunk]int32
		var sumf float32
		for b := 0; b < nb; b += sumsChunk / 4 {
			m := min(sumsChunk/4, nb-b)
			sums(&c[4*l.codeBytes*b], &a[b*q8_KBytes], m, &buf[0])
			for i := 0; i < m; i++ {
				g := buf[4*i : 4*i+4 : 4*i+4]
				y := a[(b+i)*q8_KBytes:]
				var s [4]uint16
				for k := range s {
					s[k] = le16(sc[2*((4*(b+i)+k)>>sh):])
				}
				if s[0] == s[1] && s[0] == s[2] && s[0] == s[3] {
					sumf += float32(float32(g[0]+g[1]+g[2]+g[3]) * float32(f16tab[s[0]]*lef32(y)))
					continue
				}
				for k, v := range g {
					sumf += float32(float32(v) * float32(f16tab[s[k]]*lef32(y)))
				}
			}
		}
		return sumf
	}
}
