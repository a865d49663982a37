//go:build arm64 && !purego

package kernels

import (
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// The arm64 kernels of the ternary layouts (ternary_arm64.s): NEON and
// dotprod variants for ter2, ter2s128 and ter3 against Q8_K (TQ1_0 and
// TQ2_0 originals) and Q8_0 (Q2_0 originals). The TQ1_0 and TQ2_0 row
// kernels are in the armSet tables (kernels_arm64.go).

//go:noescape
func tq1_0DotNEON(w, a *byte, nb int) float32

//go:noescape
func tq1_0DotSDOT(w, a *byte, nb int) float32

//go:noescape
func tq2_0DotNEON(w, a *byte, nb int) float32

//go:noescape
func tq2_0DotSDOT(w, a *byte, nb int) float32

//go:noescape
func ter2Q8KNEON(sc, c, a *byte, nb int, sumf float32) (float32, int)

//go:noescape
func ter2Q8KSDOT(sc, c, a *byte, nb int, sumf float32) (float32, int)

//go:noescape
func ter2s128Q8KNEON(sc, c, a *byte, nb int, sumf float32) (float32, int)

//go:noescape
func ter2s128Q8KSDOT(sc, c, a *byte, nb int, sumf float32) (float32, int)

//go:noescape
func ter3Q8KNEON(sc, c, a *byte, nb int, sumf float32) (float32, int)

//go:noescape
func ter3Q8KSDOT(sc, c, a *byte, nb int, sumf float32) (float32, int)

//go:noescape
func ter2Q8_0NEON(sc, c, a *byte, ng int) float32

//go:noescape
func ter2Q8_0SDOT(sc, c, a *byte, ng int) float32

//go:noescape
func ter2s128Q8_0NEON(sc, c, a *byte, ng int) float32

//go:noescape
func ter2s128Q8_0SDOT(sc, c, a *byte, ng int) float32

//go:noescape
func ter3Q8_0NEON(sc, c, a *byte, ng int) float32

//go:noescape
func ter3Q8_0SDOT(sc, c, a *byte, ng int) float32

// terQ8KFunc runs nb blocks from sumf while their group scales are equal,
// returning sumf and the blocks done.
type terQ8KFunc func(sc, c, a *byte, nb int, sumf float32) (float32, int)

// terQ8_0Func returns the dot of ng groups.
type terQ8_0Func func(sc, c, a *byte, ng int) float32

// terArm is one set's layout kernels.
type terArm struct {
	q8K  map[layout.Kind]terQ8KFunc
	q8_0 map[layout.Kind]terQ8_0Func
}

var terArmSets = map[string]terArm{
	"neon": {
		q8K:  map[layout.Kind]terQ8KFunc{layout.Ter2: ter2Q8KNEON, layout.Ter2S128: ter2s128Q8KNEON, layout.Ter3: ter3Q8KNEON},
		q8_0: map[layout.Kind]terQ8_0Func{layout.Ter2: ter2Q8_0NEON, layout.Ter2S128: ter2s128Q8_0NEON, layout.Ter3: ter3Q8_0NEON},
	},
	"dotprod": {
		q8K:  map[layout.Kind]terQ8KFunc{layout.Ter2: ter2Q8KSDOT, layout.Ter2S128: ter2s128Q8KSDOT, layout.Ter3: ter3Q8KSDOT},
		q8_0: map[layout.Kind]terQ8_0Func{layout.Ter2: ter2Q8_0SDOT, layout.Ter2S128: ter2s128Q8_0SDOT, layout.Ter3: ter3Q8_0SDOT},
	},
}

// installTernary installs the layout kernels of set name (the portable
// ones under the portable set).
func installTernary(name string) {
	s, ok := terArmSets[name]
	for e, k := range terKernels {
		k.dot = terPortable(e)
		switch {
		case !ok:
		case e.From == gguf.TypeQ2_0:
			k.dot = terArmQ8_0(terLayouts[e.Kind], s.q8_0[e.Kind])
		default:
			k.dot = terArmQ8K(terLayouts[e.Kind], s.q8K[e.Kind])
		}
	}
}

// terArmQ8_0 is layout l's dotQ8_0 with kernel f. A ter3 row of one group
// runs in Go: f reads each group's codes from 3 bytes before it, in the
// scales of longer rows. (The wrappers slice the row themselves: split's
// division cost more instructions than the assembly's loop control,
// testdata/icount-arm64.txt.)
func terArmQ8_0(l terLayout, f terQ8_0Func) dotFunc {
	sh, cb := uint(l.perScale/2), l.codeBytes // perScale: 1 or 2
	return func(n int, w, a []byte) float32 {
		ng := n >> 6
		if ng < 2 {
			return l.dotQ8_0(n, w, a)
		}
		sb := n >> (5 + sh) // the scales' bytes
		w, a = w[:sb+ng*cb], a[:2*ng*q8_0Bytes]
		return f(&w[0], &w[sb], &a[0], ng)
	}
}

// terArmQ8K is layout l's dotQ8_K with kernel f, the blocks whose group
// scales differ (none in a file made from TQ1_0 or TQ2_0) run in Go.
func terArmQ8K(l terLayout, f terQ8KFunc) dotFunc {
	sh, cb := uint(l.perScale/2), l.codeBytes
	return func(n int, w, a []byte) float32 {
		nb := n >> 8
		if nb == 0 {
			return 0
		}
		sb := n >> (5 + sh)
		w, a = w[:sb+4*nb*cb], a[:nb*q8_KBytes]
		sumf, done := f(&w[0], &w[sb], &a[0], nb, 0)
		for done < nb {
			sc, c := w[:sb], w[sb:]
			sumf = l.blockQ8_K(done, sc, c, a, sumf)
			if done++; done < nb {
				s, d := f(&sc[8*done>>sh], &c[4*done*cb], &a[done*q8_KBytes], nb-done, sumf)
				sumf, done = s, done+d
			}
		}
		return sumf
	}
}
