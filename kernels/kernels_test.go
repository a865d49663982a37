package kernels

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
)

// vecdotRef parses refdata/quant/vecdot.txt: for each weight type, ggml-cpu's
// 8 dot products of the T.ref.q rows with input row 0 quantized to the
// vec_dot_type.
func vecdotRef(t *testing.T) map[string][8]float64 {
	f, err := os.Open(shared.Path(t, "refdata", "quant", "vecdot.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][8]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Fields(line)
		var v [8]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(fields[2+i], 64); err != nil {
				t.Fatal(err)
			}
		}
		out[fields[0]] = v
	}
	return out
}

// TestKernelsAgainstGGML checks every dedicated kernel, fast and reference,
// against ggml-cpu's vec_dot on the same bytes. ggml's numbers come from its
// AVX-512 kernels, which sum the per-block floats in another order, so the
// tolerance is float32 rounding relative to the sum of |terms| (2^-20).
func TestKernelsAgainstGGML(t *testing.T) {
	ref := vecdotRef(t)
	input := F32s(shared.Read(t, "refdata", "quant", "input.f32"))
	for typ, k := range kernels {
		if typ == gguf.TypeF32 {
			continue // vecdot.txt has no f32 row
		}
		name := strings.ToLower(typ.String())
		if typ == gguf.TypeQ2_K || typ == gguf.TypeQ3_K || typ == gguf.TypeQ4_K || typ == gguf.TypeQ5_K || typ == gguf.TypeQ6_K {
			name = name[:len(name)-1] + "K"
		}
		want, ok := ref[name]
		if !ok {
			t.Fatalf("no vecdot reference for %s", name)
		}
		w := shared.Read(t, "refdata", "quant", name+".ref.q")
		actName := strings.ToLower(k.act.String())
		if k.act == gguf.TypeQ8_K {
			actName = "q8_K"
		}
		act := shared.Read(t, "refdata", "quant", "act."+actName+".cpu.q")
		rb := len(w) / 8
		for r := 0; r < 8; r++ {
			row := w[r*rb : (r+1)*rb]
			// The rounding error scales with the terms, not the result
			// (row 7 has 1024x outliers that cancel).
			mag := 1e-3
			for i := 0; i < 256; i++ {
				mag += math.Abs(float64(input[r*256+i] * input[i]))
			}
			for _, f := range []struct {
				name string
				dot  dotFunc
			}{{"ref", k.ref}, {"fast", k.dot}} {
				got := float64(f.dot(256, row, act))
				if d := math.Abs(got - want[r]); d > mag*2e-6 {
					t.Errorf("%s %s row %d: got %.9g, ggml %.9g (diff %.3g)", typ, f.name, r, got, want[r], d)
				}
			}
		}
	}
}

// TestActivationQuantizers checks the activation quantizers byte for byte
// against ggml-cpu's from_float on input row 0.
func TestActivationQuantizers(t *testing.T) {
	in := F32s(shared.Read(t, "refdata", "quant", "input.f32"))[:256]
	for _, c := range []struct {
		typ  gguf.Type
		file string
	}{{gguf.TypeQ8_0, "q8_0"}, {gguf.TypeQ8_1, "q8_1"}, {gguf.TypeQ8_K, "q8_K"}, {gguf.TypeF16, "f16"}, {gguf.TypeBF16, "bf16"}} {
		want := shared.Read(t, "refdata", "quant", "act."+c.file+".cpu.q")
		got := make([]byte, ActRowBytes(c.typ, 256))
		if err := quantizeAct(c.typ, got, in); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s activation bytes differ from ggml", c.typ)
		}
	}
}

// tiledRows makes rows of weight type typ from the reference vectors: the
// quantized test rows of refdata/quant tiled to n columns, so every field
// holds a value ggml itself produced. It also returns, per row, the largest
// |weight| the row can hold (from the unquantized input rows).
func tiledRows(t testing.TB, typ gguf.Type, n int) ([][]byte, []float64) {
	input := F32s(shared.Read(t, "refdata", "quant", "input.f32"))
	rowMax := make([]float64, 8)
	for i, v := range input {
		rowMax[i/256] = max(rowMax[i/256], math.Abs(float64(v))*1.1)
	}
	name := strings.ToLower(typ.String())
	if strings.HasSuffix(name, "_k") {
		name = name[:len(name)-1] + "K"
	}
	src := shared.Read(t, "refdata", "quant", name+".ref.q")
	rb := len(src) / 8
	per, _ := typ.RowSize(int64(n))
	rows := make([][]byte, 8)
	maxes := make([]float64, 8)
	for r := range rows {
		row := make([]byte, 0, per)
		for len(row) < int(per) {
			k := (r + len(row)/rb) % 8
			row = append(row, src[k*rb:(k+1)*rb]...)
			maxes[r] = max(maxes[r], rowMax[k])
		}
		rows[r] = row[:per]
	}
	return rows, maxes
}

// TestFastKernelsMatchReference runs every fast kernel against its
// reference on longer rows and random activations. Integer sums are equal;
// only the order of the final float additions differs.
func TestFastKernelsMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1024, 96} {
		fastMatchesReference(t, rng, n)
	}
}

// fastMatchesReference is TestFastKernelsMatchReference for rows of n
// elements (96: an odd number of 32-element blocks, a kernel's tail path),
// for the types whose blocks fit n.
func fastMatchesReference(t *testing.T, rng *rand.Rand, n int) {
	x := make([]float32, n)
	for typ, k := range kernels {
		if n%typ.BlockSize() != 0 || n%k.act.BlockSize() != 0 {
			continue
		}
		for trial := 0; trial < 4; trial++ {
			for i := range x {
				x[i] = float32(rng.NormFloat64()) * float32(math.Pow(2, float64(trial*3-4)))
			}
			act := make([]byte, ActRowBytes(k.act, n))
			if err := quantizeAct(k.act, act, x); err != nil {
				t.Fatal(err)
			}
			var rows [][]byte
			var maxes []float64
			if typ == gguf.TypeF32 {
				w := make([]float32, n)
				for i := range w {
					w[i] = float32(rng.NormFloat64())
				}
				rows, maxes = [][]byte{BytesOf(w)}, []float64{5}
			} else {
				rows, maxes = tiledRows(t, typ, n)
			}
			var sumAbs float64
			for _, v := range x {
				sumAbs += math.Abs(float64(v))
			}
			for r, row := range rows {
				want, got := k.ref(n, row, act), k.dot(n, row, act)
				// float32 rounding of n terms bounded by max|w| * sum|x|
				if d := math.Abs(float64(got - want)); d > float64(sumAbs*maxes[r]*1e-6)+1e-6 {
					t.Errorf("%s n=%d trial %d row %d: fast %.9g ref %.9g", typ, n, trial, r, got, want)
				}
			}
		}
	}
}

// TestDot4 checks every four-row kernel against the kernel's single-row
// dot on the same rows, for lengths with and without tails and rows
// further apart than their length: F32 to float rounding (the two order
// their sums differently: relative 1e-5 of the sum of |products|), the
// integer kernels bit for bit (they share the per-row arithmetic).
func TestDot4(t *testing.T) {
	dot4MatchesDot(t, rand.New(rand.NewPCG(9, 10)))
}

// dot4MatchesDot is TestDot4 for the installed kernel set.
func dot4MatchesDot(t *testing.T, rng *rand.Rand) {
	cases := map[string]struct {
		k     *kernel
		wtype gguf.Type
		exact bool
	}{
		"F32":     {kernels[gguf.TypeF32], gguf.TypeF32, false},
		"generic": {genericKernel, gguf.TypeF32, false},
		"Q8_0":    {kernels[gguf.TypeQ8_0], gguf.TypeQ8_0, true},
		"Q4_0":    {kernels[gguf.TypeQ4_0], gguf.TypeQ4_0, true},
		"Q3_K":    {kernels[gguf.TypeQ3_K], gguf.TypeQ3_K, true},
		"Q4_K":    {kernels[gguf.TypeQ4_K], gguf.TypeQ4_K, true},
		"Q5_K":    {kernels[gguf.TypeQ5_K], gguf.TypeQ5_K, true},
		"Q6_K":    {kernels[gguf.TypeQ6_K], gguf.TypeQ6_K, true},
		"Q1_0":    {kernels[gguf.TypeQ1_0], gguf.TypeQ1_0, true},
		"Q2_0":    {kernels[gguf.TypeQ2_0], gguf.TypeQ2_0, true},
	}
	for name, c := range cases {
		if c.k.dot4 == nil {
			t.Logf("%s: no four-row kernel in this build", name)
			continue
		}
		for _, n := range []int{1, 7, 8, 15, 16, 17, 32, 64, 128, 172, 192, 257, 384, 512, 1024} {
			if n%c.wtype.BlockSize() != 0 || n%c.k.act.BlockSize() != 0 {
				continue
			}
			row := func(typ gguf.Type) ([]byte, []float32) {
				f := make([]float32, n)
				for i := range f {
					f[i] = float32(rng.NormFloat64())
				}
				b := make([]byte, ActRowBytes(typ, n))
				if err := quantizeAct(typ, b, f); err != nil {
					t.Fatal(err)
				}
				return b, f
			}
			w, wf := row(c.wtype)
			stride := ActRowBytes(c.k.act, n) + 12
			a := make([]byte, 3*stride+ActRowBytes(c.k.act, n))
			var af [4][]float32
			for r := range af {
				var b []byte
				b, af[r] = row(c.k.act)
				copy(a[r*stride:], b)
			}
			var out [4]float32
			c.k.dot4(n, w, a, stride, &out)
			for r := range out {
				one := a[r*stride : r*stride+ActRowBytes(c.k.act, n)]
				want := c.k.dot(n, w, one)
				if c.exact {
					if out[r] != want {
						t.Errorf("%s n=%d row %d: %v, single-row dot %v", name, n, r, out[r], want)
					}
					continue
				}
				var mag float64
				for i := range wf {
					mag += math.Abs(float64(wf[i]) * float64(af[r][i]))
				}
				if d := math.Abs(float64(out[r] - want)); d > 1e-5*mag {
					t.Errorf("%s n=%d row %d: %v, single-row dot %v", name, n, r, out[r], want)
				}
			}
		}
	}
}

// TestScores checks the attention-score kernel against float64 dot
// products for head sizes with and without the four-key assembly path and
// key counts with tails, and that it returns the maximum.
func TestScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, hd := range []int{4, 8, 12, 16, 64, 128} {
		for _, npos := range []int{1, 3, 4, 5, 8, 13, 64} {
			kstride := hd*2 + 8
			q := make([]float32, hd)
			k := make([]float32, npos*kstride)
			for i := range q {
				q[i] = float32(rng.NormFloat64())
			}
			for i := range k {
				k[i] = float32(rng.NormFloat64())
			}
			sc := make([]float32, npos)
			const scale = 0.35
			mx := Scores(q, k, kstride, scale, sc)
			want := float32(math.Inf(-1))
			for p := range sc {
				var dot, mag float64
				for j := range q {
					dot += float64(float64(q[j]) * float64(k[p*kstride+j]))
					mag += math.Abs(float64(q[j]) * float64(k[p*kstride+j]))
				}
				if d := math.Abs(float64(sc[p]) - float64(dot*scale)); d > 1e-6*mag {
					t.Errorf("hd=%d npos=%d: score %d = %v, want %v", hd, npos, p, sc[p], dot*scale)
				}
				want = max(want, sc[p])
			}
			if mx != want {
				t.Errorf("hd=%d npos=%d: max %v, want %v", hd, npos, mx, want)
			}
		}
	}
}

// TestVdots checks the attention's weighted value sums against one dotF32
// per value dimension, bit for bit (they must sum alike), for lengths
// around every loop boundary of the kernel.
func TestVdots(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, hd := range []int{1, 8, 64} {
		for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 64, 100, 257} {
			stride := n + 5
			sc, v := make([]float32, n), make([]float32, hd*stride)
			for i := range sc {
				sc[i] = float32(rng.Float64())
			}
			for i := range v {
				v[i] = float32(rng.NormFloat64())
			}
			out := make([]float32, hd)
			Vdots(sc, v, stride, out)
			for d := range out {
				want := dotF32(n, BytesOf(v[d*stride:d*stride+n]), BytesOf(sc))
				if n == 0 {
					want = 0
				}
				if math.Float32bits(out[d]) != math.Float32bits(want) {
					t.Fatalf("hd %d n %d d %d: %g, dotF32 %g", hd, n, d, out[d], want)
				}
			}
		}
	}
}

// TestSelectKernels runs the fast-versus-reference and four-row checks
// with every kernel set this CPU offers installed (so "portable" is tested beside the
// assembly in one binary), and checks that an unknown set is refused.
func TestSelectKernels(t *testing.T) {
	defer SelectKernels("")
	for _, name := range KernelSets() {
		if err := SelectKernels(name); err != nil {
			t.Fatal(err)
		}
		if KernelSet() != name {
			t.Fatalf("KernelSet() = %q after selecting %q", KernelSet(), name)
		}
		t.Logf("kernel set %s", name)
		fastMatchesReference(t, rand.New(rand.NewPCG(3, 4)), 1024)
		dot4MatchesDot(t, rand.New(rand.NewPCG(9, 10)))
	}
	if err := SelectKernels("sse9"); err == nil {
		t.Error("unknown kernel set accepted")
	}
}

// BenchmarkKernelSets measures one 4096-element row product of each type
// with an assembly kernel, under every kernel set this CPU offers (compare
// a set's ns/op with "portable"'s for its speed-up).
func BenchmarkKernelSets(b *testing.B) {
	defer SelectKernels("")
	const n = 4096
	rng := rand.New(rand.NewPCG(5, 6))
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ6_K, gguf.TypeQ2_K, gguf.TypeQ1_0, gguf.TypeQ2_0} {
		k := kernels[typ]
		w := make([]byte, ActRowBytes(typ, n))
		a := make([]byte, ActRowBytes(k.act, n))
		if err := quantizeAct(typ, w, f); err != nil {
			b.Fatal(err)
		}
		if err := quantizeAct(k.act, a, f); err != nil {
			b.Fatal(err)
		}
		for _, set := range KernelSets() {
			b.Run(typ.String()+"/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					k.dot(n, w, a)
				}
			})
		}
	}
}

// BenchmarkDot4 measures the products of one 4096-element weight row with
// four activation rows, per type with a four-row kernel: four calls of
// the single-row dot ("dot") against one of dot4 ("dot4/SET", under every
// kernel set this CPU offers), rows in cache,
// so the ratio is the prompt path's gain from sharing the weight decode.
func BenchmarkDot4(b *testing.B) {
	defer SelectKernels("")
	const n = 4096
	rng := rand.New(rand.NewPCG(7, 8))
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	for _, typ := range []gguf.Type{gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		k := kernels[typ]
		if k.dot4 == nil {
			continue
		}
		w := make([]byte, ActRowBytes(typ, n))
		if err := quantizeAct(typ, w, f); err != nil {
			b.Fatal(err)
		}
		stride := ActRowBytes(k.act, n)
		a := make([]byte, 4*stride)
		for r := 0; r < 4; r++ {
			for i := range f {
				f[i] = float32(rng.NormFloat64())
			}
			if err := quantizeAct(k.act, a[r*stride:(r+1)*stride], f); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(typ.String()+"/dot", func(b *testing.B) {
			for b.Loop() {
				for r := 0; r < 4; r++ {
					k.dot(n, w, a[r*stride:(r+1)*stride])
				}
			}
		})
		for _, set := range KernelSets() {
			b.Run(typ.String()+"/dot4/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				if k.dot4 == nil {
					b.Skip("no four-row kernel")
				}
				var out [4]float32
				for b.Loop() {
					k.dot4(n, w, a, stride, &out)
				}
			})
		}
		if err := SelectKernels(""); err != nil {
			b.Fatal(err)
		}
	}
}
