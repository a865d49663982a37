package kernels

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/osmem"
)

// q1lutTestMatrix returns rows Q1_0 rows of n columns (rows a multiple of
// 16): random signs and scales quantized from Gaussian values, with rows
// 0 and 16 all set and 1 and 17 all clear (the largest sums of either
// sign, in both groups of a pair),
// and Q8_0 activation rows quantized as the runtime does, the last one of
// constant blocks quantizing to +-127.
func q1lutTestMatrix(t testing.TB, rng *rand.Rand, rows, n int) (w []byte, acts [][]byte) {
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
	for _, r := range []int{0, 1, 16, 17} { // in both groups of a pair
		if r >= rows {
			break
		}
		row := w[r*rb : (r+1)*rb]
		for b := 0; b < n/128; b++ {
			for i := 2; i < q1_0Bytes; i++ {
				row[b*q1_0Bytes+i] = byte(0xff * (1 - r%2))
			}
		}
	}
	return w, acts
}

// q1lutMatrixTest computes a whole matrix of Q1_0 rows (rows a multiple of 16)
// with kernel k from its group layout: repacked, tables built, group by
// group, or two groups at a time where k has group2 (an odd last one
// alone).
func q1lutMatrixTest(k *q1lutKernel, w, a []byte, rows, n int) []float32 {
	rb := n / 128 * q1_0Bytes
	g := make([]byte, len(w))
	for gi := 0; gi < rows/q1lutRows; gi++ {
		q1lutRepack(g[gi*q1lutRows*rb:], w[gi*q1lutRows*rb:], rb, n/128)
	}
	tab := q1lutAlloc(k.tabBytes(n))
	k.tables(tab, a, n)
	out := make([]float32, rows)
	for gi := 0; gi < rows/q1lutRows; {
		f, m := k.group, 1
		if k.group2 != nil && gi+2 <= rows/q1lutRows {
			f, m = k.group2, 2
		}
		f(n, g[gi*q1lutRows*rb:(gi+m)*q1lutRows*rb], a, tab, out[gi*q1lutRows:(gi+m)*q1lutRows])
		gi += m
	}
	return out
}

// q1lutLH is the ARM kernel's specification in Go, tables and sums.
var q1lutLH = &q1lutKernel{tabBytes: q1lutTabBytesLH, tables: q1lutTablesLH, group: q1lutGroupLH}

// TestQ1LUTKernelBitExact checks the table-lookup kernels row by row
// against the Q1_0 row kernels, on random and extreme rows of 1 to 48
// blocks: the portable ones (q1lutGo, and q1lutGroupLH on the ARM
// kernel's byte tables) equal ggml's generic kernel (refDotQ1_0) under
// every set, and each set's own (q1lutSet, where the set
// has one) that set's Q1_0 row kernel, bit for bit. Integer sums are exact
// in all of them, so a difference is a wrong sum or a float step out of
// order, not rounding.
func TestQ1LUTKernelBitExact(t *testing.T) {
	defer SelectKernels("")
	for _, set := range KernelSets() {
		install(set)
		rng := rand.New(rand.NewPCG(7, 8))
		for _, n := range []int{128, 256, 640, 2048, 6144} {
			rows := 48
			w, acts := q1lutTestMatrix(t, rng, rows, n)
			rb := n / 128 * q1_0Bytes
			for ai, a := range acts {
				impls := map[string]*q1lutKernel{"q1lutGo": q1lutGo, "q1lutGroupLH": q1lutLH}
				if q1lutSet != nil {
					impls["set"] = q1lutSet
					if q1lutSet.group2 != nil {
						one := *q1lutSet
						one.group2 = nil
						impls["set, one group at a time"] = &one
					}
				}
				for name, k := range impls {
					got := q1lutMatrixTest(k, w, a, rows, n)
					for r := range got {
						want := kernels[gguf.TypeQ1_0].dot(n, w[r*rb:(r+1)*rb], a)
						if k == q1lutGo || k == q1lutLH {
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

// q1lutForced lists lookup kernels that a set installs only on other CPUs
// (the AVX2 one where there is no AVX-512), keyed by "kind/set", which
// BenchmarkQ1LUT also runs (forced) where the set is selectable.
var q1lutForced = map[string]*q1lutKernel{}

// BenchmarkQ1LUT multiplies a 2048 x 2048 Q1_0 matrix (Bonsai-1.7B's
// attention projections) by one token's activations on one thread under
// every set this CPU runs: "row/SET" with the set's row kernel, "lut/SET"
// with its lookup kernel (matmulQ1LUT, the tables built every call), and
// "go/SET" with the portable lookup kernel (q1lutGo, the measure of
// whether a set without assembly should take it), and those of
// q1lutForced. The ratios read off one
// run; the weights are 128 quantized rows repeated.
func BenchmarkQ1LUT(b *testing.B) {
	defer SelectKernels("")
	const n, rows = 2048, 2048
	rng := rand.New(rand.NewPCG(3, 4))
	w, acts := q1lutTestMatrix(b, rng, 128, n)
	rb := n / 128 * q1_0Bytes
	data := osmem.AlignedCopy(bytes.Repeat(w, rows/128))
	grp := osmem.AlignedCopy(data)
	for g := 0; g < rows/q1lutRows; g++ {
		q1lutRepack(grp[g*q1lutRows*rb:], data[g*q1lutRows*rb:], rb, n/128)
	}
	a := acts[0]
	out := make([]float32, rows)
	s := &Products{pool: NewPool(1)}
	defer s.pool.Close()
	for _, set := range KernelSets() {
		b.Run("row/"+set, func(b *testing.B) {
			if err := SelectKernels(set); err != nil {
				b.Fatal(err)
			}
			dot := kernels[gguf.TypeQ1_0].dot
			for b.Loop() {
				for r := 0; r < rows; r++ {
					out[r] = dot(n, data[r*rb:(r+1)*rb], a)
				}
			}
		})
		kinds := []string{"lut", "go"}
		for name := range q1lutForced {
			if kind, s, _ := strings.Cut(name, "/"); s == set {
				kinds = append(kinds, kind)
			}
		}
		slices.Sort(kinds[2:])
		for _, kind := range kinds {
			b.Run(kind+"/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				if kind == "lut" && q1lutSet == nil {
					b.Skip("no lookup kernel in this set")
				}
				saved := q1lutSet
				if kind == "go" {
					q1lutSet = q1lutGo
				} else if k := q1lutForced[kind+"/"+set]; k != nil {
					q1lutSet = k
				}
				defer func() { q1lutSet = saved }()
				w := &Matrix{Name: "q1", Type: gguf.TypeQ1_0, Cols: n, Rows: rows, RowBytes: rb, data: data, k: kernels[gguf.TypeQ1_0], q1: grp}
				for b.Loop() {
					s.q1.k = nil // build the tables every time
					s.matmulQ1LUT(w, a, len(a), out, 1)
				}
			})
		}
	}
}

// BenchmarkQ1LUTStream runs the Q1_0 products of one generated token of
// Bonsai-1.7B's shape (per layer q 2048, k and v 1024, o 2048, gate and
// up 6144 rows of 2048 columns, down 2048 rows of 6144) over 8 layers
// (57 MB of groups, more than a last-level cache holds: the weights
// stream from memory as in generation) with the installed set's lookup
// kernel, on 1 and 2 threads; q, k and v take one activation row, gate
// and up another, as in a layer; "batch32" multiplies 32 activation rows
// (a prompt's batch) instead of one. An op is one layer; cpu-ns/op is
// the calling thread's CPU time (on 2 threads, its share).
func BenchmarkQ1LUTStream(b *testing.B) {
	if q1lutSet == nil {
		b.Skip("no lookup kernel in this set")
	}
	const layers, d, ff = 8, 2048, 6144
	rng := rand.New(rand.NewPCG(5, 6))
	_, a2 := q1lutTestMatrix(b, rng, 16, d)
	_, a6 := q1lutTestMatrix(b, rng, 16, ff)
	type prod struct {
		w   *Matrix
		act []byte
	}
	var ps []prod
	for l := 0; l < layers; l++ {
		for i, sh := range [][2]int{{d, d}, {d / 2, d}, {d / 2, d}, {d, d}, {ff, d}, {ff, d}, {d, ff}} {
			rows, n := sh[0], sh[1]
			rb := n / 128 * q1_0Bytes
			grp := osmem.AlignedBytes(rows * rb)
			for j := range grp {
				grp[j] = byte(j*131 + l*7 + i) // distinct bytes, scales finite f16 or not alike
			}
			for g := 0; g < rows/q1lutRows; g++ {
				for bl := 0; bl < n/128; bl++ {
					copy(grp[g*q1lutRows*rb+bl*q1lutBlockBytes:], []byte{0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30, 0, 0x30})
				}
			}
			act := a2[[]int{0, 0, 0, 1, 2, 2, 0}[i]]
			if n == ff {
				act = a6[0]
			}
			ps = append(ps, prod{&Matrix{Name: "q1", Type: gguf.TypeQ1_0, Cols: n, Rows: rows, RowBytes: rb, k: kernels[gguf.TypeQ1_0], q1: grp}, act})
		}
	}
	const batch = 32
	out := make([]float32, batch*ff)
	for _, rows := range []int{1, batch} {
		for _, threads := range []int{1, 2} {
			name := fmt.Sprintf("t%d", threads)
			if rows > 1 {
				name = fmt.Sprintf("batch%d/t%d", rows, threads)
			}
			b.Run(name, func(b *testing.B) {
				s := &Products{pool: NewPool(threads)}
				defer s.pool.Close()
				i := 0
				loopCPU(b, func() {
					for range 7 {
						p := ps[i%len(ps)]
						s.matmulQ1LUT(p.w, bytes.Repeat(p.act, rows), len(p.act), out, rows)
						i++
					}
				})
			})
		}
	}
}
