//go:build amd64 && !purego

package kernels

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// narrowerPack installs set (installed) without its 512-bit group kernels
// and returns the name to measure it by and a function that puts them
// back; restore is nil where the set has none.
func narrowerPack(set string) (name string, restore func()) {
	if set != "vnni" || !hasVNNI512 {
		return "", nil
	}
	hasVNNI512 = false
	_ = SelectKernels(set)
	return "vnni256", func() {
		hasVNNI512 = true
		_ = SelectKernels(set)
	}
}

// TestPack512Types checks that the vnni set, where the CPU has 512-bit
// VNNI, gives every type with 256-bit group kernels its pair layout and
// 512-bit pair kernels (TestPackedKernels and TestPackedMatMul then check
// their bits): a type left out streams at the 8-row kernels' speed.
func TestPack512Types(t *testing.T) {
	if !hasVNNI512 {
		t.Skip("no 512-bit VNNI kernels on this CPU")
	}
	t.Cleanup(func() { _ = SelectKernels("") })
	if err := SelectKernels("vnni"); err != nil {
		t.Fatal(err)
	}
	for _, typ := range []gguf.Type{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		pk := kernels[typ].pack
		if pk == nil || pk.repack2 == nil || pk.gemv2 == nil || pk.gemm2x4 == nil {
			t.Errorf("%s: the vnni set has no 512-bit pair kernels", typ)
		}
	}
}

// BenchmarkPacked512Model measures the products of one generated token
// through the dense matrices of the 254 M-parameter llama of
// engine/testdata/llamacpp/README.txt (16 layers of 1024 x 1024 q, k, v,
// o, 2816 x 1024 gate and up, 1024 x 2816 down, a 32000 x 1024 head:
// 236 MB in Q8_0, so the weights come from memory as in generation) in
// each type with pair kernels, on 1 and 2 threads, the vnni set with its
// 512-bit pair kernels ("vnni") against its 256-bit ones ("vnni256"),
// alternated 5 times in one process; cpu-ns/op is the calling thread's CPU
// time. Needs about twice the model's size in memory.
func BenchmarkPacked512Model(b *testing.B) {
	var shapes []shape512
	for l := 0; l < 16; l++ {
		shapes = append(shapes, shape512{1024, 1024}, shape512{1024, 1024}, shape512{1024, 1024}, shape512{1024, 1024},
			shape512{1024, 2816}, shape512{1024, 2816}, shape512{2816, 1024})
	}
	shapes = append(shapes, shape512{1024, 32000})
	bench512(b, []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ6_K}, shapes)
}

// BenchmarkPacked512Head measures as BenchmarkPacked512Model the Q6_K
// output head of Qwen3-0.6B (151936 x 1024, 127 MB, tied to the token
// embeddings; llama-quantize's Q4_K_M keeps it Q6_K), the largest product
// of a token of its generation.
func BenchmarkPacked512Head(b *testing.B) {
	bench512(b, []gguf.Type{gguf.TypeQ6_K}, []shape512{{1024, 151936}})
}

// shape512 is a matrix shape of bench512.
type shape512 struct{ cols, rows int }

// bench512 runs BenchmarkPacked512Model's comparison on matrices of the
// given shapes in each type.
func bench512(b *testing.B, types []gguf.Type, shapes []shape512) {
	if !hasVNNI512 {
		b.Skip("no 512-bit VNNI kernels on this CPU")
	}
	defer SelectKernels("")
	maxCols, maxRows := 0, 0
	for _, s := range shapes {
		maxCols, maxRows = max(maxCols, s.cols), max(maxRows, s.rows)
	}
	for _, typ := range types {
		rng := rand.New(rand.NewPCG(3, uint64(typ)))
		f := make([]float32, maxCols)
		// the two sets' layouts differ: each packs its own copy
		var ms [2][]*Matrix
		for _, s := range shapes {
			rb := ActRowBytes(typ, s.cols)
			w := make([]byte, s.rows*rb)
			for r := 0; r < 16; r++ {
				for i := range f[:s.cols] {
					f[i] = float32(rng.NormFloat64())
				}
				if err := quantizeAct(typ, w[r*rb:(r+1)*rb], f[:s.cols]); err != nil {
					b.Fatal(err)
				}
			}
			for r := 16; r < s.rows; r++ {
				copy(w[r*rb:(r+1)*rb], w[(r%16)*rb:])
			}
			for i := range ms {
				restore := func() {}
				if i == 1 {
					_, restore = narrowerPack("vnni")
				} else {
					_ = SelectKernels("vnni")
				}
				m, err := NewMatrix("w", typ, s.cols, s.rows, rb, slices.Clone(w))
				if err != nil {
					b.Fatal(err)
				}
				m.Pack(m.PackFitsRows())
				ms[i] = append(ms[i], m)
				restore()
			}
		}
		in := make([]float32, maxCols)
		for i := range in {
			in[i] = float32(rng.NormFloat64())
		}
		out := make([]float32, maxRows)
		for _, threads := range []int{1, 2} {
			pool := NewPool(threads)
			p := NewProducts(pool, 1, maxCols, 0)
			for round := 0; round < 5; round++ {
				for i, name := range []string{"vnni", "vnni256"} {
					restore := func() {}
					if i == 1 {
						_, restore = narrowerPack("vnni")
					} else {
						_ = SelectKernels("vnni")
					}
					b.Run(fmt.Sprintf("%s/t%d/%s", typ, threads, name), func(b *testing.B) {
						loopCPU(b, func() {
							for _, m := range ms[i] {
								p.MatMul(m, in, out, 1)
							}
						})
					})
					restore()
				}
			}
			pool.Close()
		}
	}
}
