package engine

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/quant"
)

// ternaryActs returns Q8_K and Q8_0 activation rows of n values for the
// kernel tests: random normal values at several scales, and the extremes
// (every value at the largest magnitude, Q8_K's -128 included), where the
// kernels' 16-bit lanes are fullest.
func ternaryActs(t *testing.T, rng *rand.Rand, n int) (q8k, q80 [][]byte) {
	t.Helper()
	var rows [][]float32
	for trial := 0; trial < 3; trial++ {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64()) * float32(math.Pow(4, float64(trial-1)))
		}
		rows = append(rows, x)
	}
	for _, v := range []float32{-1, 1} {
		x := make([]float32, n)
		for i := range x {
			x[i] = v
		}
		rows = append(rows, x)
	}
	for _, x := range rows {
		k, z := make([]byte, actRowBytes(gguf.TypeQ8_K, n)), make([]byte, actRowBytes(gguf.TypeQ8_0, n))
		if err := quantizeAct(gguf.TypeQ8_K, k, x); err != nil {
			t.Fatal(err)
		}
		if err := quantizeAct(gguf.TypeQ8_0, z, x); err != nil {
			t.Fatal(err)
		}
		q8k, q80 = append(q8k, k), append(q80, z)
	}
	return q8k, q80
}

// randomBytes returns a row of random bytes with every fp16 scale (at
// offset off of each bs-byte block) set to a random normal value.
func randomBytes(rng *rand.Rand, n, bs, off int) []byte {
	w := make([]byte, n)
	for i := range w {
		w[i] = byte(rng.Uint32())
	}
	for b := 0; b+bs <= n; b += bs {
		binary.LittleEndian.PutUint16(w[b+off:], quant.FP32ToFP16(float32(rng.NormFloat64())))
	}
	return w
}

// TestTQKernelsBitExact checks the TQ1_0 and TQ2_0 integer kernels against
// ggml's generic kernels (refDotTQ1_0, refDotTQ2_0) bit for bit: on rows of
// random bytes (every TQ1_0 byte, TQ2_0's fourth code too), on rows
// quantized by ggml's quantizer and on the extreme activations.
func TestTQKernelsBitExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 3))
	const n = 1024
	acts, _ := ternaryActs(t, rng, n)
	for _, c := range []struct {
		typ      gguf.Type
		bs       int
		dot, ref dotFunc
	}{
		{gguf.TypeTQ1_0, tq1_0Bytes, dotTQ1_0Go, refDotTQ1_0},
		{gguf.TypeTQ2_0, tq2_0Bytes, dotTQ2_0Go, refDotTQ2_0},
	} {
		var rows [][]byte
		for r := 0; r < 8; r++ {
			rows = append(rows, randomBytes(rng, n/256*c.bs, c.bs, c.bs-2))
			f := make([]float32, n)
			for i := range f {
				f[i] = float32(rng.NormFloat64())
			}
			w := make([]byte, n/256*c.bs)
			if err := quantizeAct(c.typ, w, f); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, w)
		}
		for r, w := range rows {
			for j, a := range acts {
				got, want := c.dot(n, w, a), c.ref(n, w, a)
				if math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%s row %d act %d: kernel %.9g, ggml generic %.9g", c.typ, r, j, got, want)
				}
			}
		}
	}
}

// ternaryRow returns a random row of n weights of type from with only
// codes 0, 1, 2 (what the layouts take): per 64 weights a random scale for
// Q2_0, per 256 for TQ1_0/TQ2_0 (TQ1_0 made from TQ2_0 through a layout).
func ternaryRow(t *testing.T, rng *rand.Rand, from gguf.Type, n int) []byte {
	t.Helper()
	gen := from
	if from == gguf.TypeTQ1_0 {
		gen = gguf.TypeTQ2_0
	}
	rb, _ := gen.RowSize(int64(n))
	w := make([]byte, rb)
	bs := int(rb) / (n / gen.BlockSize())
	for b := 0; b < n/gen.BlockSize(); b++ {
		x := w[b*bs : (b+1)*bs]
		codes := x[:bs-2]
		if gen == gguf.TypeQ2_0 {
			codes = x[2:]
			binary.LittleEndian.PutUint16(x, quant.FP32ToFP16(float32(rng.NormFloat64())))
		} else {
			binary.LittleEndian.PutUint16(x[bs-2:], quant.FP32ToFP16(float32(rng.NormFloat64())))
		}
		for i := range codes {
			for k := 0; k < 4; k++ {
				codes[i] |= byte(rng.IntN(3)) << (2 * k)
			}
		}
	}
	if from == gguf.TypeTQ1_0 {
		packed := make([]byte, n/64*18)
		if err := layout.PackTernary(layout.Ter2, gguf.TypeTQ2_0, packed, w, int64(n), 0); err != nil {
			t.Fatal(err)
		}
		rb, _ := from.RowSize(int64(n))
		w = make([]byte, rb)
		if err := layout.UnpackTernary(layout.Ter2, gguf.TypeTQ1_0, w, packed, int64(n), 0); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// TestTernaryLayoutKernels checks the kernel of every ternary layout and
// original type: bit for bit equal to its reference (the row restored,
// then the original type's ggml kernel) and, for the lossless layouts
// (all but ter2s128 of Q2_0), to the original type's kernel on the
// original row.
func TestTernaryLayoutKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(26, 1))
	const n = 1024
	q8k, q80 := ternaryActs(t, rng, n)
	for e, k := range terKernels {
		acts := q8k
		if e.From == gguf.TypeQ2_0 {
			acts = q80
		}
		lossless := e.Kind.Lossless() || e.From != gguf.TypeQ2_0
		for r := 0; r < 6; r++ {
			orig := ternaryRow(t, rng, e.From, n)
			st, err := layout.Stored(gguf.TensorInfo{Name: "w", Dims: []uint64{n}, Type: e.From}, e.Kind)
			if err != nil {
				t.Fatal(err)
			}
			w := make([]byte, st.Dims[0])
			if err := layout.PackTernary(e.Kind, e.From, w, orig, n, 0); err != nil {
				t.Fatal(err)
			}
			for j, a := range acts {
				got, ref := k.dot(n, w, a), k.ref(n, w, a)
				if math.Float32bits(got) != math.Float32bits(ref) {
					t.Errorf("%s from %s row %d act %d: kernel %.9g, reference %.9g", e.Kind, e.From, r, j, got, ref)
				}
				if want := kernels[e.From].ref(n, orig, a); lossless && math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("%s from %s row %d act %d: kernel %.9g, original %.9g", e.Kind, e.From, r, j, got, want)
				}
			}
		}
	}
}
