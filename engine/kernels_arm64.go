//go:build arm64 && !purego

package engine

import (
	"golang.org/x/sys/cpu"

	"github.com/ggufkit/gguf/gguf"
)

// The arm64 kernels: assembly computes each group's exact int32 sum
// (kernels_arm64.s), Go scales and adds them in the portable kernels'
// float order, without fused multiply-adds, so a dot equals the portable
// kernel's (and the amd64 portable build's) bit for bit.

// sumsFunc writes the integer group sums of nb weight blocks at w with
// their activation blocks at a to out.
type sumsFunc func(w, a *byte, nb int, out *int32)

//go:noescape
func q8_0SumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func q8_0SumsSDOT(w, a *byte, nb int, out *int32)

//go:noescape
func q4_KSumsNEON(w, a *byte, nb int, out *int32)

//go:noescape
func q4_KSumsSDOT(w, a *byte, nb int, out *int32)

// armSet is one variant of the assembly kernels.
type armSet struct {
	name       string
	q8_0, q4_K sumsFunc
}

var (
	neonSet    = armSet{name: "neon", q8_0: q8_0SumsNEON, q4_K: q4_KSumsNEON}
	dotprodSet = armSet{name: "dotprod", q8_0: q8_0SumsSDOT, q4_K: q4_KSumsSDOT}
)

// arm is the variant the arm64 kernels call (set by selectKernels).
var arm = &neonSet

// hasDotprod reports the ARMv8.2 dot-product instructions (SDOT).
var hasDotprod = cpu.ARM64.HasASIMDDP

// sumsChunk is how many int32 sums a kernel collects on the stack before
// Go scales them: a multiple of every type's sums per block.
const sumsChunk = 64

func dotQ8_0Arm(n int, w, a []byte) float32 {
	nb := n / 32
	w, a = w[:nb*q8_0Bytes], a[:nb*q8_0Bytes]
	var sums [sumsChunk]int32
	var sumf float32
	for b := 0; b < nb; b += sumsChunk {
		m := min(sumsChunk, nb-b)
		arm.q8_0(&w[b*q8_0Bytes], &a[b*q8_0Bytes], m, &sums[0])
		for i, s := range sums[:m] {
			sumf = q8_0Add(sumf, s, w[(b+i)*q8_0Bytes:], a[(b+i)*q8_0Bytes:])
		}
	}
	return sumf
}

func dotQ4_KArm(n int, w, a []byte) float32 {
	const per = sumsChunk / 8
	nb := n / 256
	w, a = w[:nb*q4_KBytes], a[:nb*q8_KBytes]
	var sums [sumsChunk]int32
	var sumf float32
	for b := 0; b < nb; b += per {
		m := min(per, nb-b)
		arm.q4_K(&w[b*q4_KBytes], &a[b*q8_KBytes], m, &sums[0])
		for i := 0; i < m; i++ {
			x := w[(b+i)*q4_KBytes : (b+i+1)*q4_KBytes]
			y := a[(b+i)*q8_KBytes : (b+i+1)*q8_KBytes]
			sc, mn := kScales(x[4:16])
			g := sums[8*i : 8*i+8 : 8*i+8]
			isum := int32(0)
			for j := range g {
				isum += int32(sc[j]) * g[j]
			}
			sumf = q4_KAdd(sumf, isum, kMinsSum(y[260:292:292], &mn), x, y)
		}
	}
	return sumf
}

// armKernels installs variant s.
func armKernels(s *armSet) {
	arm = s
	kernels[gguf.TypeQ8_0].dot = dotQ8_0Arm
	kernels[gguf.TypeQ4_K].dot = dotQ4_KArm
}

// kernelSets lists the kernel sets this build can select, best first.
func kernelSets() []string {
	if hasDotprod {
		return []string{"dotprod", "neon", "portable"}
	}
	return []string{"neon", "portable"}
}

// installKernels switches to the named set, one of kernelSets().
func installKernels(name string) {
	restorePortable()
	switch name {
	case "dotprod":
		armKernels(&dotprodSet)
	case "neon":
		armKernels(&neonSet)
	}
}
