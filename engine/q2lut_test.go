package engine

import (
	"math"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/quant"
)

// TestDotQ2LUTBitExact: the q2lut reference dot product (package layout,
// table lookups over the regrouped codes) gives exactly the bits of the
// Q2_K x Q8_K reference kernel, which follows ggml's generic C, on random
// experts of several shapes (full 16-row groups and Q2_K tail rows), with
// activations quantized as the runtime quantizes them.
func TestDotQ2LUTBitExact(t *testing.T) {
	rng := fixture.SplitMix64(99)
	rnd := func(n int, scale float32) []float32 {
		x := make([]float32, n)
		for i := range x {
			z := rng.Next()
			x[i] = float32(int32(z>>40)-1<<23) / (1 << 23) * scale
			if z&31 == 0 {
				x[i] *= 16
			}
		}
		return x
	}
	for _, c := range []struct{ ne0, rows int }{{256, 16}, {512, 48}, {1024, 21}, {256, 5}} {
		for trial := 0; trial < 4; trial++ {
			wf := rnd(c.ne0*c.rows, 0.05)
			rb, _ := gguf.TypeQ2_K.RowSize(int64(c.ne0))
			w := make([]byte, int64(c.rows)*rb)
			if err := quant.Quantize(gguf.TypeQ2_K, w, wf, nil); err != nil {
				t.Fatal(err)
			}
			act := make([]byte, actRowBytes(gguf.TypeQ8_K, c.ne0))
			if err := quantizeAct(gguf.TypeQ8_K, act, rnd(c.ne0, 2)); err != nil {
				t.Fatal(err)
			}
			packed := make([]byte, len(w))
			if err := layout.PackQ2LUT(packed, w, int64(c.ne0), int64(c.rows)); err != nil {
				t.Fatal(err)
			}
			got := make([]float32, c.rows)
			if err := layout.DotQ2LUT(got, packed, int64(c.ne0), int64(c.rows), act); err != nil {
				t.Fatal(err)
			}
			for r := range got {
				want := refDotQ2_K(c.ne0, w[int64(r)*rb:], act)
				if math.Float32bits(got[r]) != math.Float32bits(want) {
					t.Fatalf("%+v trial %d row %d: q2lut %.9g, Q2_K reference %.9g", c, trial, r, got[r], want)
				}
			}
		}
	}
}
