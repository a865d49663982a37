package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestExpf checks expf against math.Exp rounded to float32 (the correctly
// rounded result, which glibc's expf also returns): equal on a dense sweep
// of the range softmax and SiLU use, and at the edges.
func TestExpf(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	bad := 0
	for i := 0; i < 2_000_000; i++ {
		x := float32(float64(rng.Float64()*200) - 110)
		want := float32(math.Exp(float64(x)))
		if got := Expf(x); got != want {
			bad++
			if math.Abs(float64(got-want)) > math.Abs(float64(want))*1.2e-7 {
				t.Fatalf("Expf(%g) = %g, want %g", x, got, want)
			}
		}
	}
	if bad > 20 {
		t.Errorf("%d of 2e6 results are not correctly rounded", bad)
	}
	for _, x := range []float32{0, -0, 1, -1, 88.7, -103.9, -200, 100, float32(math.Inf(-1)), float32(math.Inf(1))} {
		if got, want := Expf(x), float32(math.Exp(float64(x))); got != want {
			t.Errorf("Expf(%g) = %g, want %g", x, got, want)
		}
	}
	if v := Expf(float32(math.NaN())); v == v {
		t.Error("Expf(NaN) is not NaN")
	}
}

// TestExpShift checks the vectorised exponential against expf bit for
// bit (it repeats expf's float64 steps four lanes at a time), over the
// range softmax and SiLU use, the edges (0 below -104, +Inf above 88.73,
// NaN) and every length's scalar tail.
func TestExpShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	xs := make([]float32, 0, 1<<17)
	for len(xs) < 1<<17 {
		xs = append(xs, float32(float64(rng.Float64()*240)-120))
	}
	nan := float32(math.NaN())
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 88.72, 88.73, 88.74, -103.99, -104, -104.01,
		float32(math.Inf(-1)), float32(math.Inf(1)), nan, 1e-30, -1e-30)
	for _, shift := range []float32{0, 0.25, -3} {
		for _, n := range []int{len(xs), 1, 3, 4, 5, 9} {
			got := append([]float32(nil), xs[len(xs)-n:]...)
			expShift(got, shift)
			for i, x := range xs[len(xs)-n:] {
				want := Expf(x - shift)
				if math.Float32bits(got[i]) != math.Float32bits(want) && !(got[i] != got[i] && want != want) {
					t.Fatalf("n=%d: exp(%v - %v) = %v, expf gives %v", n, x, shift, got[i], want)
				}
			}
		}
	}
}

// TestSwiglu checks the vectorised silu(g)*u against the scalar formula
// bit for bit, on every length's head and tail.
func TestSwiglu(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 3, 4, 7, 8, 64, 172, 1003} {
		g, u := make([]float32, n), make([]float32, n)
		for i := range g {
			g[i], u[i] = float32(rng.NormFloat64()*20), float32(rng.NormFloat64())
		}
		want := append([]float32(nil), g...)
		swigluGo(want, u)
		Swiglu(g, u)
		for i := range g {
			if math.Float32bits(g[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: swiglu[%d] = %v, scalar %v", n, i, g[i], want[i])
			}
		}
	}
}
