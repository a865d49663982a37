package kernels

import (
	"math/rand"
	"testing"
)

// TestDeltaNetKernels checks the delta rule's kernels against their
// definitions on random rows: dotGGML (AVX2 where available) against
// dot32Go plus the float64 tail, bit for bit, for lengths with and without
// a tail; madF32 against fused multiply-adds computed exactly (fma32,
// big.Float), bit for bit.
func TestDeltaNetKernels(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for _, n := range []int{32, 64, 128, 100, 7} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
		}
		np := n &^ 31
		want := dotTail(float64(dot32Go(x[:np], y[:np])), x[np:], y[np:])
		if got := DotGGML(x, y); got != want {
			t.Fatalf("n %d: dotGGML %v, want %v", n, got, want)
		}
		a := float32(rng.NormFloat64())
		got := append([]float32(nil), y...)
		MadF32(got, x, a)
		for i := range got {
			if w := fma32(x[i], a, y[i]); got[i] != w {
				t.Fatalf("n %d: madF32[%d] %v, want %v", n, i, got[i], w)
			}
		}
	}
}
