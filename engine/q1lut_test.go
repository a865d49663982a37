package engine

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// q1lutTestMatrix returns rows Q1_0 rows of n columns (rows a multiple of
// 16): random signs and scales quantized from Gaussian values, with one
// group's rows all set and one all clear (the largest sums of either sign),
// and Q8_0 activation rows quantized as the runtime does, the last one of
// constant blocks quantizing to +-127.
func q1lutTestMatrix(t *testing.T, rng *rand.Rand, rows, n int) (w []byte, acts [][]byte) {
	t.Helper()
	for len(w) < rows*(n/128)*q1_0Bytes {
		ws, as := lowBitRows(t, rng, gguf.TypeQ1_0, n)
		for _, r := range ws {
			w = append(w, r...)
		}
		acts = append(acts, as...)
	}
	w = w[:rows*(n/128)*q1_0Bytes]
	rb := n / 128 * q1_0Bytes
	for r := 0; r < 2 && r < rows; r++ {
		row := w[r*rb : (r+1)*rb]
		for b := 0; b < n/128; b++ {
			for i := 2; i < q1_0Bytes; i++ {
				row[b*q1_0Bytes+i] = byte(0xff * (1 - r))
			}
		}
	}
	return w, acts
}

// q1lutRun computes a whole matrix of Q1_0 rows (rows a multiple of 16)
// with kernel k from its group layout: repacked, tables built, group by
// group.
func q1lutRun(k *q1lutKernel, w, a []byte, rows, n int) []float32 {
	rb := n / 128 * q1_0Bytes
	g := make([]byte, len(w))
	for gi := 0; gi < rows/q1lutRows; gi++ {
		q1lutRepack(g[gi*q1lutRows*rb:], w[gi*q1lutRows*rb:], rb, n/128)
	}
	tab := q1lutAlloc(k.tabBytes(n))
	k.tables(tab, a, n)
	out := make([]float32, rows)
	for gi := 0; gi < rows/q1lutRows; gi++ {
		k.group(n, g[gi*q1lutRows*rb:(gi+1)*q1lutRows*rb], a, tab, out[gi*q1lutRows:(gi+1)*q1lutRows])
	}
	return out
}

// TestQ1LUTKernelBitExact checks the table-lookup kernels row by row
// against the Q1_0 row kernels, on random and extreme rows of 1 to 48
// blocks: the portable one (q1lutGo) equals ggml's generic kernel
// (refDotQ1_0) under every set, and each set's own (q1lutSet, where the set
// has one) that set's Q1_0 row kernel, bit for bit. Integer sums are exact
// in all of them, so a difference is a wrong sum or a float step out of
// order, not rounding.
func TestQ1LUTKernelBitExact(t *testing.T) {
	defer SelectKernels("")
	for _, set := range KernelSets() {
		install(set)
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range []int{128, 256, 640, 2048, 6144} {
			rows := 32
			w, acts := q1lutTestMatrix(t, rng, rows, n)
			rb := n / 128 * q1_0Bytes
			for ai, a := range acts {
				impls := map[string]*q1lutKernel{"q1lutGo": q1lutGo}
				if q1lutSet != nil {
					impls["set"] = q1lutSet
				}
				for name, k := range impls {
					got := q1lutRun(k, w, a, rows, n)
					for r := range got {
						want := kernels[gguf.TypeQ1_0].dot(n, w[r*rb:(r+1)*rb], a)
						if k == q1lutGo {
							want = refDotQ1_0(n, w[r*rb:(r+1)*rb], a)
						}
						if math.Float32bits(got[r]) != math.Float32bits(want) {
							t.Fatalf("set %s, %s: n %d act %d row %d: %.9g, row kernel %.9g", set, name, n, ai, r, got[r], want)
						}
					}
				}
			}
		}
		t.Logf("set %s: q1lut kernel %v", set, q1lutSet != nil)
	}
}
