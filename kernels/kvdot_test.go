package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// TestKVManyPositions checks KeyScores, ValueDotsF16 and MadQ8_0Rows, in
// every kernel set of this build, against the one-row kernels they stand
// for called position by position (RowDot, MadQ8_0): bit for bit, over
// head widths and position counts that leave tails after every unrolled
// step (1..13 keys, lengths not a multiple of 4 or 8, rows of a head past
// a multiple of 8), with strides wider than a row as the cache's are.
func TestKVManyPositions(t *testing.T) {
	t.Cleanup(func() { _ = SelectKernels("") })
	r := rand.New(rand.NewPCG(11, 12))
	rnd := func(n int, s float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * s)
		}
		return x
	}
	act := func(tt gguf.Type, x []float32) []byte {
		b := make([]byte, ActRowBytes(tt, len(x)))
		if err := QuantizeAct(tt, b, x); err != nil {
			t.Fatal(err)
		}
		return b
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			t   gguf.Type
			hds []int
		}{{gguf.TypeF16, []int{4, 8, 12, 64, 100, 128}}, {gguf.TypeQ8_0, []int{32, 64, 128}}} {
			for _, hd := range tc.hds {
				for _, n := range []int{1, 3, 4, 5, 8, 13, 257} {
					rb := ActRowBytes(tc.t, hd)
					stride := rb + ActRowBytes(tc.t, 32) // another head after this one
					var k []byte
					for range n {
						k = append(k, act(tc.t, rnd(hd+32, 1))...)
					}
					qa := act(tc.t, rnd(hd, 2))
					sc := make([]float32, n)
					mx := KeyScores(tc.t, hd, k, stride, qa, 0.125, sc)
					wantMx := float32(math.Inf(-1))
					for i := range n {
						want := RowDot(tc.t)(hd, k[i*stride:i*stride+rb], qa) * 0.125
						wantMx = max(wantMx, want)
						if !same(sc[i], want) {
							t.Fatalf("%s %s keys, head %d, %d positions: score %d %g, one-row kernel %g", set, tc.t, hd, n, i, sc[i], want)
						}
					}
					if mx != wantMx {
						t.Fatalf("%s %s keys, head %d, %d positions: max %g, want %g", set, tc.t, hd, n, mx, wantMx)
					}

					p := rnd(n, 0.3)
					out := rnd(hd, 1) // garbage the functions must overwrite
					if tc.t == gguf.TypeF16 {
						// hd transposed rows of n positions, vstride
						// wider than n (the cache's context)
						vstride := 2 * (n + 3)
						v := act(gguf.TypeF16, rnd(hd*(n+3), 1))
						pa := act(gguf.TypeF16, p)
						ValueDotsF16(pa, v, vstride, n, out)
						for d := range hd {
							if want := RowDot(gguf.TypeF16)(n, v[d*vstride:d*vstride+2*n], pa); !same(out[d], want) {
								t.Fatalf("%s f16 values, head %d, %d positions: out[%d] %g, one-row kernel %g", set, hd, n, d, out[d], want)
							}
						}
						continue
					}
					MadQ8_0Rows(out, k, stride, p)
					want := make([]float32, hd)
					for i, w := range p {
						MadQ8_0(want, k[i*stride:i*stride+rb], w)
					}
					// the same rows in two calls of MadQ8_0RowsAdd
					split := make([]float32, hd)
					MadQ8_0RowsAdd(split, k, stride, p[:n/2])
					MadQ8_0RowsAdd(split, k[n/2*stride:], stride, p[n/2:])
					for d := range hd {
						if !same(out[d], want[d]) || !same(split[d], want[d]) {
							t.Fatalf("%s q8_0 values, head %d, %d positions: out[%d] %g (in two calls %g), MadQ8_0 %g", set, hd, n, d, out[d], split[d], want[d])
						}
					}
				}
			}
		}
	}
}
