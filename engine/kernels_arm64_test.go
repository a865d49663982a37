//go:build arm64 && !purego

package engine

import (
	"math"
	"math/rand/v2"
	"testing"
)

// armVariants returns the assembly variants this CPU runs, logging which.
func armVariants(t *testing.T) []*armSet {
	t.Helper()
	if !hasDotprod {
		t.Logf("arm kernels: variant neon runs; dotprod skipped (cpu.ARM64.HasASIMDDP false)")
		return []*armSet{&neonSet}
	}
	t.Logf("arm kernels: variants neon and dotprod run (cpu.ARM64.HasASIMDDP true)")
	return []*armSet{&neonSet, &dotprodSet}
}

// TestArm64F32 checks the NEON F32 dot (every length from 0 to 300, with
// and without a Go tail, and two long rows) against a float64 dot. Its
// float32 sums are not the reference's (16 lanes of fused multiply-adds,
// then a tree): the error bound of a length-k float32 recursive sum is
// k*2^-24 of the sum of |terms|, and each lane sums n/16 terms plus the
// 4+4 steps of the final additions and the Go tail, so the tolerance is
// (n/16+24)*2^-24 * sum|x*y|.
func TestArm64F32(t *testing.T) {
	defer SelectKernels("")
	if err := SelectKernels("neon"); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(25, 26))
	for n := 0; n <= 4096; n++ {
		if n > 300 && n != 1024 && n != 4096 {
			continue
		}
		x, y := make([]float32, n), make([]float32, n)
		var want, mag float64
		for i := range x {
			x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			want += float64(x[i]) * float64(y[i])
			mag += math.Abs(float64(x[i]) * float64(y[i]))
		}
		got := dotF32(n, bytesOf(x), bytesOf(y))
		if d := math.Abs(float64(got) - want); d > float64(n/16+24)*0x1p-24*mag {
			t.Errorf("n=%d: NEON F32 dot %v, float64 %v (diff %.3g, sum|xy| %.3g)", n, got, want, d, mag)
		}
	}
}
