package engine

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
		x := float32(rng.Float64()*200 - 110)
		want := float32(math.Exp(float64(x)))
		if got := expf(x); got != want {
			bad++
			if math.Abs(float64(got-want)) > math.Abs(float64(want))*1.2e-7 {
				t.Fatalf("expf(%g) = %g, want %g", x, got, want)
			}
		}
	}
	if bad > 20 {
		t.Errorf("%d of 2e6 results are not correctly rounded", bad)
	}
	for _, x := range []float32{0, -0, 1, -1, 88.7, -103.9, -200, 100, float32(math.Inf(-1)), float32(math.Inf(1))} {
		if got, want := expf(x), float32(math.Exp(float64(x))); got != want {
			t.Errorf("expf(%g) = %g, want %g", x, got, want)
		}
	}
	if v := expf(float32(math.NaN())); v == v {
		t.Error("expf(NaN) is not NaN")
	}
}
