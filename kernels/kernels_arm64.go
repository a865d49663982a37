//go:build arm64 && !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"github.com/ggufkit/gguf/gguf"
)

// The arm64 kernels (see kernels_armsums.go): NEON and dotprod variants
// of every integer kernel, and NEON F32 and F16 dots.

//go:noescape
func q8_0DotNEON(w, a *byte, nb int) float32

//go:noescape
func q8_0DotSDOT(w, a *byte, nb int) float32

//go:noescape
func q4_KDotNEON(w, a *byte, nb int) float32

//go:noescape
func q4_KDotSDOT(w, a *byte, nb int) float32

//go:noescape
func q6_KDotNEON(w, a *byte, nb int) float32

//go:noescape
func q6_KDotSDOT(w, a *byte, nb int) float32

//go:noescape
func q2_KDotNEON(w, a *byte, nb int) float32

//go:noescape
func q2_KDotSDOT(w, a *byte, nb int) float32

//go:noescape
func q1_0DotNEON(w, a *byte, nb int) float32

//go:noescape
func q1_0DotSDOT(w, a *byte, nb int) float32

//go:noescape
func q2_0DotNEON(w, a *byte, nb int) float32

//go:noescape
func q2_0DotSDOT(w, a *byte, nb int) float32

//go:noescape
func dotF32NEON(x, y *float32, n int, acc *[8]float32)

//go:noescape
func dotF16NEON(x, y *byte, n int, acc *[4]float32)

// useNEON selects the assembly F32 dot (any set but "portable").
var useNEON bool

// useAVX2 is false: the AVX2 kernels are amd64's.
const useAVX2 = false

// dotF32 is the F32 dot: dotF32Go's sums, bit for bit, with the eight
// accumulators of the multiple of 8 leading elements in NEON (two vectors)
// and, as dotF32Go, the rest added to the first one in order, then the
// same tree. (An FMLA kernel in another order computed other bits than
// amd64's portable kernels, and a recurrent state carries any difference.)
func dotF32(n int, w, a []byte) float32 {
	x, y := F32s(w)[:n], F32s(a)[:n]
	if !useNEON || n < 16 {
		return dotF32Go(x, y)
	}
	var s [8]float32
	m := n &^ 7
	dotF32NEON(&x[0], &y[0], m, &s)
	for i := m; i < n; i++ {
		s[0] += float32(x[i] * y[i])
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}

// dotF16Arm is the F16 dot of both arm64 sets (FCVTL is ARMv8.0):
// dotF16's four sums, bit for bit, over the multiple of 8 leading
// elements in NEON, then over the rest in Go, and dotF16's final
// additions. (A kernel with 16 lanes computed other bits than amd64's
// portable one, and after 177 greedy tokens of stories260K's Q8_0 file,
// whose ffn_down is F16, another token.) ggml's NEON F16 dot differs
// again (without FP16 arithmetic, ARMv8.0 and 8.2: 16 float32 lanes, its
// tail in float64; with it, 32 half lanes).
func dotF16Arm(n int, w, a []byte) float32 {
	m := n &^ 7
	if m == 0 {
		return dotF16(n, w, a)
	}
	w, a = w[:2*n], a[:2*n]
	var s [4]float32
	dotF16NEON(&w[0], &a[0], m, &s)
	return f16Sums(&s, w[2*m:], a[2*m:])
}

// Scores computes attention scores one key at a time (scoresGo).
func Scores(q, k []float32, kstride int, scale float32, sc []float32) float32 {
	return scoresGo(q, k, kstride, scale, sc)
}

// The two arm64 variants: ARMv8.0 NEON (every arm64 CPU, the A7 included)
// and ARMv8.2 dotprod (SDOT: the A55 and later).
var (
	neonSet = armSet{name: "neon", q8_0Dot: q8_0DotNEON, q4_KDot: q4_KDotNEON, q6_KDot: q6_KDotNEON,
		q2_KDot: q2_KDotNEON, q1_0Dot: q1_0DotNEON, q2_0Dot: q2_0DotNEON, tq1_0Dot: tq1_0DotNEON, tq2_0Dot: tq2_0DotNEON}
	dotprodSet = armSet{name: "dotprod", q8_0Dot: q8_0DotSDOT, q4_KDot: q4_KDotSDOT, q6_KDot: q6_KDotSDOT,
		q2_KDot: q2_KDotSDOT, q1_0Dot: q1_0DotSDOT, q2_0Dot: q2_0DotSDOT, tq1_0Dot: tq1_0DotSDOT, tq2_0Dot: tq2_0DotSDOT}
)

// hasDotprod reports the ARMv8.2 dot-product instructions (SDOT).
var hasDotprod = cpu.ARM64.HasASIMDDP

func dotQ6_KArm(n int, w, a []byte) float32 {
	nb := n / 256
	return armBlocks(arm.q6_KDot, nb, w[:nb*q6_KBytes], a[:nb*q8_KBytes])
}

func dotQ2_KArm(n int, w, a []byte) float32 {
	nb := n / 256
	return armBlocks(arm.q2_KDot, nb, w[:nb*q2_KBytes], a[:nb*q8_KBytes])
}

func dotQ1_0Arm(n int, w, a []byte) float32 {
	nb := n / 128
	return armBlocks(arm.q1_0Dot, nb, w[:nb*q1_0Bytes], a[:4*nb*q8_0Bytes])
}

func dotQ2_0Arm(n int, w, a []byte) float32 {
	nb := n / 64
	return armBlocks(arm.q2_0Dot, nb, w[:nb*q2_0Bytes], a[:2*nb*q8_0Bytes])
}

func dotTQ1_0Arm(n int, w, a []byte) float32 {
	nb := n / 256
	return armBlocks(arm.tq1_0Dot, nb, w[:nb*tq1_0Bytes], a[:nb*q8_KBytes])
}

func dotTQ2_0Arm(n int, w, a []byte) float32 {
	nb := n / 256
	return armBlocks(arm.tq2_0Dot, nb, w[:nb*tq2_0Bytes], a[:nb*q8_KBytes])
}

// armKernels installs variant s.
func armKernels(s *armSet) {
	arm = s
	kernels[gguf.TypeQ8_0].dot = dotQ8_0Arm
	kernels[gguf.TypeQ4_K].dot = dotQ4_KArm
	kernels[gguf.TypeQ6_K].dot = dotQ6_KArm
	kernels[gguf.TypeQ2_K].dot = dotQ2_KArm
	kernels[gguf.TypeQ1_0].dot = dotQ1_0Arm
	kernels[gguf.TypeQ2_0].dot = dotQ2_0Arm
	kernels[gguf.TypeTQ1_0].dot = dotTQ1_0Arm
	kernels[gguf.TypeTQ2_0].dot = dotTQ2_0Arm
	kernels[gguf.TypeF16].dot = dotF16Arm
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
	useNEON = name != "portable"
	switch name {
	case "dotprod":
		armKernels(&dotprodSet)
	case "neon":
		armKernels(&neonSet)
	}
}
