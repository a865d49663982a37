package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ggufkit/gguf/gguf"
)

// pad4Matrix returns a packed rows x cols matrix of typ with random
// weights and nb random activation rows.
func pad4Matrix(t testing.TB, typ gguf.Type, rows, cols, nb int, seed uint64) (*Matrix, []float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, uint64(typ)))
	rb := ActRowBytes(typ, cols)
	w := randRows(t, rng, typ, rows, cols)
	m, err := NewMatrix("w", typ, cols, rows, rb, w)
	if err != nil {
		t.Fatal(err)
	}
	if !m.Packable() {
		return nil, nil
	}
	m.Pack(false)
	in := make([]float32, nb*cols)
	for i := range in {
		in[i] = float32(rng.NormFloat64())
	}
	return m, in
}

// TestPad4 checks that batches whose last 2 or 3 rows run padded through
// a four-row group kernel give each row the bits of a one-row product,
// whatever the buffers' scratch rows hold, under every kernel set.
func TestPad4(t *testing.T) {
	defer SelectKernels("")
	const rows, cols = 40, 512
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			for _, nb := range []int{2, 3, 6, 7} {
				m, in := pad4Matrix(t, typ, rows, cols, nb, uint64(nb))
				if m == nil {
					continue
				}
				one := NewProducts(NewPool(1), 1, cols, 0)
				want := make([]float32, nb*rows)
				for j := 0; j < nb; j++ {
					one.MatMul(m, in[j*cols:(j+1)*cols], want[j*rows:(j+1)*rows], 1)
				}
				s := NewProducts(NewPool(1), nb, cols, 0)
				// Scratch rows holding something else than zeros: a
				// larger batch's rows, then NaN bytes.
				for i := range s.act {
					s.act[i] = byte(i*7 + 3)
				}
				for i := range s.aux {
					s.aux[i] = 0xff
				}
				got := make([]float32, nb*rows)
				s.MatMul(m, in, got, nb)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s %s nb %d: row %d col %d: %g, one-row product %g", set, typ, nb, i/rows, i%rows, got[i], want[i])
					}
				}
			}
		}
	}
}

// BenchmarkPad4 measures products of a packed 1024x4096 matrix (Q4_K,
// Q4_0, Q6_K, Q8_0) with nb = 2, 3 activation rows on one thread, with
// padding on ("pad4": 3 rows run through the four-row kernel with a
// scratch row) and off ("rows": one row at a time). Each iteration times
// one product each way, back to back, so that a busy machine slows both
// alike; it reports the medians of each way's ns per row and of the
// per-iteration ratio rows/pad4 (> 1: padding is faster). nb 2 runs row
// by row either way (about 1): padded it was slower; see matmulTask.pad4.
// Sets without a four-row group kernel give 1.
func BenchmarkPad4(b *testing.B) {
	const rows, cols = 1024, 4096
	for _, typ := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ4_0, gguf.TypeQ6_K, gguf.TypeQ8_0} {
		m, in := pad4Matrix(b, typ, rows, cols, 4, 1)
		if m == nil {
			continue
		}
		out := make([]float32, 4*rows)
		s := NewProducts(NewPool(1), 4, cols, 0)
		for _, nb := range []int{2, 3} {
			b.Run(fmt.Sprintf("%s/nb%d", typ, nb), func(b *testing.B) {
				var ratio, ns [2][]float64
				for b.Loop() {
					var d [2]time.Duration
					for i, pad := range []bool{false, true} {
						s.mt.pad4 = pad
						t0 := time.Now()
						s.MatMul(m, in, out, nb)
						d[i] = time.Since(t0)
						ns[i] = append(ns[i], float64(d[i].Nanoseconds())/float64(nb))
					}
					ratio[0] = append(ratio[0], float64(d[0])/float64(d[1]))
				}
				b.ReportMetric(median(ns[0]), "rows-ns/row")
				b.ReportMetric(median(ns[1]), "pad4-ns/row")
				b.ReportMetric(median(ratio[0]), "rows/pad4")
			})
		}
		s.mt.pad4 = true
	}
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}
