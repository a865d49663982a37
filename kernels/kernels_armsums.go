//go:build (arm64 || arm) && !purego

package kernels

// The ARM kernels' shared Go side. On armv7 the assembly (kernels_arm.s)
// computes each group's exact int32 sum and Go scales and adds them; on
// arm64 (kernels_arm64.s) the assembly does the whole dot, since Go's
// scaling cost more instructions than the integer loops
// (testdata/icount-arm64.txt). Either way the float steps run in the
// portable kernels' order, each rounded (no fused multiply-add), so a dot
// equals the portable kernel's bit for bit.

// sumsFunc writes the integer group sums of nb weight blocks at w with
// their activation blocks at a to out.
type sumsFunc func(w, a *byte, nb int, out *int32)

// blocksFunc returns the whole dot of nb weight blocks at w with their
// activation blocks at a, float steps in the portable kernel's order: an
// assembly kernel that does the scaling too, where the Go side of a sums
// kernel would cost more instructions than its assembly
// (testdata/icount-arm64.txt). It returns the dot rather than
// storing it: a pointer passed through a func value escapes, so a result
// variable would be allocated on the heap at every row.
type blocksFunc func(w, a *byte, nb int) float32

// armSet is one variant of the assembly kernels: per type either a sums
// kernel, scaled in Go, or a whole-dot one.
type armSet struct {
	name                                                 string
	q8_0, q4_K, tq1_0, tq2_0                             sumsFunc
	q8_0Dot, q4_KDot, q6_KDot, q2_KDot, q1_0Dot, q2_0Dot blocksFunc
	tq1_0Dot, tq2_0Dot                                   blocksFunc
}

// arm is the variant the kernels call (set by installKernels).
var arm *armSet

// sumsChunk is how many int32 sums a kernel collects on the stack before
// Go scales them: a multiple of every type's sums per block.
const sumsChunk = 64

func dotQ8_0Arm(n int, w, a []byte) float32 {
	nb := n / 32
	w, a = w[:nb*q8_0Bytes], a[:nb*q8_0Bytes]
	if arm.q8_0Dot != nil {
		return armBlocks(arm.q8_0Dot, nb, w, a)
	}
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

// armBlocks runs the whole-dot kernel dot over the nb blocks of w and a.
func armBlocks(dot blocksFunc, nb int, w, a []byte) float32 {
	if nb == 0 {
		return 0
	}
	return dot(&w[0], &a[0], nb)
}

// armDot runs sums over the nb weight blocks of w (wBytes each, per sums
// per block; aBytes of activations each), a chunk at a time, and folds
// each block's sums into the float result with add.
func armDot(sums sumsFunc, nb, wBytes, aBytes, per int, w, a []byte, add func(sumf float32, g []int32, x, y []byte) float32) float32 {
	w, a = w[:nb*wBytes], a[:nb*aBytes]
	var buf [sumsChunk]int32
	var sumf float32
	for b := 0; b < nb; b += sumsChunk / per {
		m := min(sumsChunk/per, nb-b)
		sums(&w[b*wBytes], &a[b*aBytes], m, &buf[0])
		for i := 0; i < m; i++ {
			x := w[(b+i)*wBytes : (b+i+1)*wBytes]
			y := a[(b+i)*aBytes : (b+i+1)*aBytes]
			sumf = add(sumf, buf[per*i:per*i+per:per*i+per], x, y)
		}
	}
	return sumf
}

func dotQ4_KArm(n int, w, a []byte) float32 {
	if arm.q4_KDot != nil {
		nb := n / 256
		return armBlocks(arm.q4_KDot, nb, w[:nb*q4_KBytes], a[:nb*q8_KBytes])
	}
	return armDot(arm.q4_K, n/256, q4_KBytes, q8_KBytes, 8, w, a, func(sumf float32, g []int32, x, y []byte) float32 {
		sc, mn := kScales(x[4:16])
		isum := int32(0)
		for j, s := range g {
			isum += int32(sc[j]) * s
		}
		return q4_KAdd(sumf, isum, kMinsSum(y[260:292:292], &mn), x, y)
	})
}
