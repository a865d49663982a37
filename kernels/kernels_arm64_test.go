//go:build arm64 && !purego

package kernels

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
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

// TestArm64FloatDots checks the NEON F32 and F16 dots (every length from 0 to
// 300, with and without a Go tail, and two long rows) against float64
// dots: refDotF16 for F16, whose products of two halves are exact in
// float32; the F32 dot must also give dotF32Go's bits. Their float32 sums are not the references' (16 lanes, then a
// tree): the error bound of a length-k float32 recursive sum is k*2^-24
// of the sum of |terms|, and each lane sums n/16 terms plus the 4 steps of
// the final additions, at most 8 of the Go tail's (15 elements in 4 lanes
// and its additions) and the references' own rounding, so the tolerance
// is (n/16+24)*2^-24 * sum|x*y|. The F16 rows take random halves of every
// finite exponent, subnormals included, under both sets.
func TestArm64FloatDots(t *testing.T) {
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
			want += float64(float64(x[i]) * float64(y[i]))
			mag += math.Abs(float64(x[i]) * float64(y[i]))
		}
		got := dotF32(n, BytesOf(x), BytesOf(y))
		if d := math.Abs(float64(got) - want); d > float64(n/16+24)*0x1p-24*mag {
			t.Errorf("n=%d: NEON F32 dot %v, float64 %v (diff %.3g, sum|xy| %.3g)", n, got, want, d, mag)
		}
		// the portable kernel's bits, as on every architecture
		if g := dotF32Go(x, y); math.Float32bits(got) != math.Float32bits(g) {
			t.Errorf("n=%d: NEON F32 dot %v, dotF32Go %v", n, got, g)
		}
	}
	for _, v := range armVariants(t) {
		if err := SelectKernels(v.name); err != nil {
			t.Fatal(err)
		}
		dot := kernels[gguf.TypeF16].dot
		for n := 0; n <= 4096; n++ {
			if n > 300 && n != 1024 && n != 4096 {
				continue
			}
			w, a := randomF16(rng, n), randomF16(rng, n)
			var mag float64
			for i := 0; i < n; i++ {
				mag += math.Abs(float64(f16(w[2*i:]) * f16(a[2*i:])))
			}
			got, want := dot(n, w, a), refDotF16(n, w, a)
			if d := math.Abs(float64(got) - float64(want)); d > float64(n/16+24)*0x1p-24*mag {
				t.Errorf("%s n=%d: F16 dot %v, refDotF16 %v (diff %.3g, sum|xy| %.3g)", v.name, n, got, want, d, mag)
			}
		}
	}
}

// randomF16 returns n random finite halves (little-endian): a random
// sign, exponent field 0..30 (0: zero and subnormals) and significand.
func randomF16(rng *rand.Rand, n int) []byte {
	b := make([]byte, 2*n)
	for i := 0; i < n; i++ {
		h := uint16(rng.IntN(2))<<15 | uint16(rng.IntN(31))<<10 | uint16(rng.IntN(1024))
		binary.LittleEndian.PutUint16(b[2*i:], h)
	}
	return b
}

// TestArm64F16Exact checks the NEON F16 dot bit for bit where every order
// of the sums gives the same float32 (each partial sum is an integer
// multiple of the smallest product below 2^24 of it): subnormal halves
// k*2^-24 against small integers, integers against integers, and an
// infinity and a NaN among them, against refDotF16 and the portable dotF16.
func TestArm64F16Exact(t *testing.T) {
	defer SelectKernels("")
	rng := rand.New(rand.NewPCG(27, 28))
	const n = 4096 + 48
	for _, v := range armVariants(t) {
		if err := SelectKernels(v.name); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name     string
			x, y     func() float32
			inf, nan bool
		}{
			{"subnormal x int", func() float32 { return float32(rng.IntN(2047)-1023) * 0x1p-24 }, func() float32 { return float32(rng.IntN(9) - 4) }, false, false},
			{"int x int", func() float32 { return float32(rng.IntN(2049) - 1024) }, func() float32 { return float32(rng.IntN(7) - 3) }, false, false},
			{"inf", func() float32 { return float32(rng.IntN(5)) }, func() float32 { return 1 }, true, false},
			{"nan", func() float32 { return float32(rng.IntN(5)) }, func() float32 { return 1 }, false, true},
		} {
			w, a := make([]byte, 2*n), make([]byte, 2*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint16(w[2*i:], f32ToF16(c.x()))
				binary.LittleEndian.PutUint16(a[2*i:], f32ToF16(c.y()))
			}
			if c.inf {
				binary.LittleEndian.PutUint16(w[2*77:], 0x7C00)
			}
			if c.nan {
				binary.LittleEndian.PutUint16(w[2*1000:], 0x7E00)
			}
			for _, m := range []int{n, 4096, 1024 + 16, 33, 16, 15} {
				got, ref, port := kernels[gguf.TypeF16].dot(m, w, a), refDotF16(m, w, a), dotF16(m, w, a)
				same := func(a, b float32) bool { return a == b || a != a && b != b }
				if !same(got, ref) || !same(got, port) {
					t.Errorf("%s %s n=%d: F16 dot %v, refDotF16 %v, dotF16 %v", v.name, c.name, m, got, ref, port)
				}
			}
		}
	}
}
