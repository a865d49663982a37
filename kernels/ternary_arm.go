//go:build arm && !purego

package kernels

import (
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// The armv7 kernels of TQ1_0, TQ2_0 and of the ter2 and ter2s128 layouts
// (ternary_arm.s): NEON integer sums, scaled here in the portable kernels'
// float steps (tqDot, terLayout.dotQ8_K and dotQ8_0), so the results are
// theirs bit for bit. ter3 keeps the portable kernels.

//go:noescape
func tq1_0SumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func tq2_0SumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func ter2SumsQ8KNEON(c, a *byte, nb int, out *int32)

//go:noescape
func ter2SumsQ8_0NEON(c, a *byte, ng int, out *int32)

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

// installTernary installs the NEON kernels of ter2 and ter2s128 under
// the neon set, the portable ones otherwise.
func installTernary(name string) {
	for e, k := range terKernels {
		k.dot = terPortable(e)
		if name != "neon" || e.Kind == layout.Ter3 {
			continue
		}
		if e.From == gguf.TypeQ2_0 {
			k.dot = ter2ArmQ8_0(terLayouts[e.Kind])
		} else {
			k.dot = ter2ArmQ8K(terLayouts[e.Kind])
		}
	}
}

// ter2ArmQ8_0 is layout l's dotQ8_0 (l: ter2 or ter2s128) with the NEON
// sums, a chunk of groups at a time.
func ter2ArmQ8_0(l terLayout) dotFunc {
	return func(n int, w, a []byte) float32 {
		ng := n / 64
		sc, c := l.split(n, w)
		a = a[:2*ng*q8_0Bytes]
		var buf [sumsChunk]int32
		var sumf float32
		for g := 0; g < ng; g += sumsChunk / 2 {
			m := min(sumsChunk/2, ng-g)
			ter2SumsQ8_0NEON(&c[16*g], &a[2*g*q8_0Bytes], m, &buf[0])
			for i := 0; i < m; i++ {
				y := a[2*(g+i)*q8_0Bytes:]
				var sumi float32
				sumi += float32(f16(y) * float32(buf[2*i]))
				sumi += float32(f16(y[q8_0Bytes:]) * float32(buf[2*i+1]))
				sumf += float32(f16(sc[2*((g+i)/l.perScale):]) * sumi)
			}
		}
		return sumf
	}
}

// ter2ArmQ8K is layout l's dotQ8_K (l: ter2 or ter2s128) with the NEON
// sums (four per block, one per group), a chunk of blocks at a time.
func ter2ArmQ8K(l terLayout) dotFunc {
	return func(n int, w, a []byte) float32 {
		nb := n / 256
		sc, c := l.split(n, w)
		a = a[:nb*q8_KBytes]
		var buf [sumsChunk]int32
		var sumf float32
		for b := 0; b < nb; b += sumsChunk / 4 {
			m := min(sumsChunk/4, nb-b)
			ter2SumsQ8KNEON(&c[64*b], &a[b*q8_KBytes], m, &buf[0])
			for i := 0; i < m; i++ {
				g := buf[4*i : 4*i+4 : 4*i+4]
				y := a[(b+i)*q8_KBytes:]
				var s [4]uint16
				for k := range s {
					s[k] = le16(sc[2*((4*(b+i)+k)/l.perScale):])
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
