package kernels

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/osmem"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/quant"
)

// q2lutCase is one random q2lut expert and its Q2_K original.
type q2lutCase struct {
	cols, rows int
	q2k, lut   []byte
}

// newQ2LUTCase quantizes random weights of a rows x cols expert to Q2_K
// and packs them; extreme sets every code to 3 and every scale and min
// to 15 (the largest sums the kernel must hold).
func newQ2LUTCase(t testing.TB, rng *fixture.SplitMix64, cols, rows int, extreme bool) q2lutCase {
	t.Helper()
	rb, _ := gguf.TypeQ2_K.RowSize(int64(cols))
	w := make([]byte, int64(rows)*rb)
	f := make([]float32, cols*rows)
	for i := range f {
		f[i] = float32(int32(rng.Next()>>40)-1<<23) / (1 << 23) * 0.05
	}
	if err := quant.Quantize(gguf.TypeQ2_K, w, f, nil); err != nil {
		t.Fatal(err)
	}
	if extreme {
		for b := 0; b < len(w); b += q2_KBytes {
			for i := 0; i < 80; i++ {
				w[b+i] = 0xFF
			}
		}
	}
	lut := make([]byte, len(w))
	if err := layout.PackQ2LUT(lut, w, int64(cols), int64(rows)); err != nil {
		t.Fatal(err)
	}
	return q2lutCase{cols: cols, rows: rows, q2k: w, lut: lut}
}

// q8kRows returns nb random Q8_K activation rows of n columns, quantized
// from random floats; with a pattern, every row's values cycle through it
// instead (with their block sums).
func q8kRows(t testing.TB, rng *fixture.SplitMix64, n, nb int, pattern []int8) []byte {
	t.Helper()
	stride := ActRowBytes(gguf.TypeQ8_K, n)
	out := make([]byte, nb*stride)
	f := make([]float32, n)
	for j := 0; j < nb; j++ {
		for i := range f {
			z := rng.Next()
			f[i] = float32(float32(int32(z>>40)-1<<23)/(1<<23)) * 2
			if z&31 == 0 {
				f[i] *= 16
			}
		}
		a := out[j*stride : (j+1)*stride]
		if err := quantizeAct(gguf.TypeQ8_K, a, f); err != nil {
			t.Fatal(err)
		}
		if pattern == nil {
			continue
		}
		for b := 0; b < n/256; b++ {
			y := a[b*q8_KBytes:]
			for s := 0; s < 16; s++ {
				sum := 0
				for i := 16 * s; i < 16*s+16; i++ {
					v := pattern[i%len(pattern)]
					y[4+i] = byte(v)
					sum += int(v)
				}
				binary.LittleEndian.PutUint16(y[260+2*s:], uint16(int16(sum)))
			}
		}
	}
	return out
}

// q2lutPatterns are the activation patterns of the tests: random, every
// value -128 (the H tables' extreme, -12, at every lookup), and pairs
// (10, 11), whose code-15 entry 63 is the L tables' largest; with the
// extreme weights (every code 3, scale and min 15) they reach the largest
// sums the kernels hold in bytes and int16.
var q2lutPatterns = []struct {
	name    string
	extreme bool
	pattern []int8
}{{"random", false, nil}, {"-128", true, []int8{-128}}, {"10,11", true, []int8{10, 11}}}

// q2lutMatmul runs Products.matmulQ2LUT on the q2lut expert of c (a Matrix over
// its bytes alone, copied to a fresh 8-byte aligned buffer as a pager
// would hold it) for the Q8_K activation rows act, with tables for only
// tokensPerChunk tokens at a time, and returns out[j*rows + r].
func q2lutMatmul(t testing.TB, c q2lutCase, act []byte, nb, threads, tokensPerChunk int) []float32 {
	t.Helper()
	w := &Matrix{Name: "expert", Type: gguf.TypeQ2_K, Cols: c.cols, Rows: c.rows, RowBytes: len(c.q2k) / c.rows,
		data: osmem.AlignedCopy(c.lut), k: q2lutKernel}
	s := &Products{pool: NewPool(threads), lut: make([]byte, tokensPerChunk*q2lutTableBytes(c.cols))}
	defer s.pool.Close()
	out := make([]float32, nb*c.rows)
	s.matmulQ2LUT(w, act, ActRowBytes(gguf.TypeQ8_K, c.cols), out, nb)
	return out
}

// TestQ2LUTKernelBitExact: the runtime's q2lut matmul (tables, the group
// kernel of every kernel set this CPU runs, Q2_K tail rows, several
// tokens, tables built two tokens at a time, one and two threads: the
// 4096 x 128 expert is large enough for the pool to split it) gives for
// every row exactly the bits of the set's own Q2_K kernel on the same row
// in Q2_K (the portable one's are refDotQ2_K's, checked too; avx2's and
// vnni's are ggml's AVX2 lanes), on random experts of several shapes and
// on the extreme codes, scales and activations.
func TestQ2LUTKernelBitExact(t *testing.T) {
	defer SelectKernels("")
	rng := fixture.SplitMix64(7)
	shapes := []struct{ cols, rows int }{{256, 16}, {512, 48}, {1024, 21}, {256, 5}, {2304, 37}, {4096, 128}, {512, 200}}
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		sums := "portable Go"
		if q2lutAsm {
			sums = "assembly"
		}
		t.Logf("q2lut kernels: set %s with %s", set, sums)
		dot := kernels[gguf.TypeQ2_K].dot
		for _, sh := range shapes {
			for _, p := range q2lutPatterns {
				c := newQ2LUTCase(t, &rng, sh.cols, sh.rows, p.extreme)
				const nb = 5
				act := q8kRows(t, &rng, sh.cols, nb, p.pattern)
				stride := ActRowBytes(gguf.TypeQ8_K, sh.cols)
				rb := len(c.q2k) / c.rows
				for threads := 1; threads <= 2; threads++ {
					got := q2lutMatmul(t, c, act, nb, threads, 2)
					for j := 0; j < nb; j++ {
						for r := 0; r < c.rows; r++ {
							w, a := c.q2k[r*rb:(r+1)*rb], act[j*stride:(j+1)*stride]
							want := dot(c.cols, w, a)
							if set == "portable" && math.Float32bits(want) != math.Float32bits(refDotQ2_K(c.cols, w, a)) {
								t.Fatalf("%dx%d %s token %d row %d: portable Q2_K kernel %.9g, reference %.9g", sh.rows, sh.cols, p.name, j, r, want, refDotQ2_K(c.cols, w, a))
							}
							if g := got[j*c.rows+r]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("set %s %dx%d %s threads %d token %d row %d: q2lut %.9g, the set's Q2_K kernel %.9g", set, sh.rows, sh.cols, p.name, threads, j, r, g, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestQ2LUTAsm checks the assembly (where this CPU runs it) on single
// groups of 1 to q2lutChunk+1 blocks, random and extreme: the tables
// against buildQ2LUTTablesGo byte for byte, and each of the group
// kernel's 16 rows against the set's Q2_K kernel on that row bit for bit.
func TestQ2LUTAsm(t *testing.T) {
	defer SelectKernels("")
	rng := fixture.SplitMix64(8)
	ran := false
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		if !q2lutAsm {
			continue
		}
		ran = true
		t.Logf("q2lut kernels: assembly of set %s checked", set)
		for _, p := range q2lutPatterns {
			for _, nb := range []int{1, 3, q2lutChunk, q2lutChunk + 1} {
				c := newQ2LUTCase(t, &rng, 256*nb, 16, p.extreme)
				act := q8kRows(t, &rng, 256*nb, 1, p.pattern)
				tab := make([]byte, q2lutTableBytes(256*nb))
				buildQ2LUTTables(tab, act, nb)
				goTab := make([]byte, len(tab))
				buildQ2LUTTablesGo(goTab, act, nb)
				if !bytes.Equal(tab, goTab) {
					t.Fatalf("set %s nb %d %s: assembly tables differ from buildQ2LUTTablesGo", set, nb, p.name)
				}
				got := make([]float32, q2lutRows)
				q2lutKernel.group(256*nb, c.lut, act, tab, got)
				rb := len(c.q2k) / q2lutRows
				for r := range got {
					want := kernels[gguf.TypeQ2_K].dot(256*nb, c.q2k[r*rb:(r+1)*rb], act)
					if math.Float32bits(got[r]) != math.Float32bits(want) {
						t.Fatalf("set %s nb %d %s row %d: assembly %.9g, the set's Q2_K kernel %.9g", set, nb, p.name, r, got[r], want)
					}
				}
			}
		}
	}
	if !ran {
		t.Skip("no q2lut assembly on this CPU")
	}
}

// BenchmarkQ2LUT multiplies one expert by one token's activations (a
// decode step) under every kernel set this CPU runs, as plain Q2_K rows
// with the set's Q2_K kernel ("q2k/SET") and in q2lut with the set's group
// kernel ("q2lut/SET", building the tables included), for the expert
// shapes of Mixtral 8x7B (gate/up: 4096 columns, 14336 rows),
// Qwen3-30B-A3B (2048 x 768) and Ling-mini-2.0 (2048 x 512): the ratios
// q2lut/q2k read off one run. The weights are 256 quantized rows repeated
// (the kernels' speed does not depend on values).
func BenchmarkQ2LUT(b *testing.B) {
	defer SelectKernels("")
	for _, sh := range []struct {
		name       string
		cols, rows int
	}{{"mixtral", 4096, 14336}, {"qwen3-30b-a3b", 2048, 768}, {"ling", 2048, 512}} {
		rng := fixture.SplitMix64(9)
		c := newQ2LUTCase(b, &rng, sh.cols, 256, false)
		rb := len(c.q2k) / 256
		q2k := bytes.Repeat(c.q2k, (sh.rows+255)/256)[:sh.rows*rb]
		lut := make([]byte, len(q2k))
		if err := layout.PackQ2LUT(lut, q2k, int64(sh.cols), int64(sh.rows)); err != nil {
			b.Fatal(err)
		}
		act := q8kRows(b, &rng, sh.cols, 1, nil)
		out := make([]float32, sh.rows)
		s := &Products{pool: NewPool(1), lut: make([]byte, q2lutTableBytes(sh.cols))}
		defer s.pool.Close()
		w := &Matrix{Name: "expert", Type: gguf.TypeQ2_K, Cols: sh.cols, Rows: sh.rows, RowBytes: rb, data: lut, k: q2lutKernel}
		for _, set := range KernelSets() {
			b.Run(sh.name+"/q2k/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				dot := kernels[gguf.TypeQ2_K].dot
				for b.Loop() {
					for r := 0; r < sh.rows; r++ {
						out[r] = dot(sh.cols, q2k[r*rb:(r+1)*rb], act)
					}
				}
			})
			b.Run(sh.name+"/q2lut/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				for b.Loop() {
					s.lutSrc = s.lutSrc[:0] // build the tables every time
					s.matmulQ2LUT(w, act, len(act), out, 1)
				}
			})
		}
	}
}
