package kernels

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
		k, z := make([]byte, ActRowBytes(gguf.TypeQ8_K, n)), make([]byte, ActRowBytes(gguf.TypeQ8_0, n))
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

// BenchmarkTernary measures one 4096-weight row product under every
// kernel set of this CPU ("SET/..."): TQ1_0 and TQ2_0 with their integer
// kernels ("int") against the path they took before, the row dequantized
// to float32 and multiplied with the activations rounded to Q8_K ("deq");
// and each ternary layout of TQ2_0 and Q2_0 ("LAYOUT/FROM"), whose ratio
// to the original's "int" is the layout's cost or gain. Gw/s is weights
// per nanosecond. Compare ns/op within one run.
func BenchmarkTernary(b *testing.B) {
	defer SelectKernels("")
	t := &testing.T{}
	rng := rand.New(rand.NewPCG(26, 9))
	const n = 4096
	q8k, q80 := ternaryActs(t, rng, n)
	actf := make([]float32, n)
	if err := DequantizeRow(gguf.TypeQ8_K, actf, q8k[0]); err != nil {
		b.Fatal(err)
	}
	row := make([]float32, n)
	run := func(b *testing.B, name string, w []byte, f func()) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(w)))
			for b.Loop() {
				f()
			}
			b.ReportMetric(float64(n)*float64(b.N)/float64(b.Elapsed().Nanoseconds()), "Gw/s")
		})
	}
	tq := map[gguf.Type][]byte{}
	for _, typ := range []gguf.Type{gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
		tq[typ] = ternaryRow(t, rng, typ, n)
	}
	type layoutRow struct {
		name string
		k    *terKernel
		w, a []byte
	}
	var layouts []layoutRow
	q2 := ternaryRow(t, rng, gguf.TypeQ2_0, n)
	for _, from := range []gguf.Type{gguf.TypeTQ2_0, gguf.TypeQ2_0} {
		orig, a := tq[from], q8k[0]
		if from == gguf.TypeQ2_0 {
			orig, a = q2, q80[0]
		}
		for _, kind := range []layout.Kind{layout.Ter3, layout.Ter2, layout.Ter2S128} {
			st, _ := layout.Stored(gguf.TensorInfo{Name: "w", Dims: []uint64{n}, Type: from}, kind)
			w := make([]byte, st.Dims[0])
			if err := layout.PackTernary(kind, from, w, orig, n, 0); err != nil {
				b.Fatal(err)
			}
			layouts = append(layouts, layoutRow{string(kind) + "/" + from.String(), terKernels[layout.Entry{Kind: kind, From: from}], w, a})
		}
	}
	for _, set := range KernelSets() {
		install(set)
		for _, typ := range []gguf.Type{gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
			w, k := tq[typ], kernels[typ]
			run(b, set+"/"+typ.String()+"/int", w, func() { k.dot(n, w, q8k[0]) })
			run(b, set+"/"+typ.String()+"/deq", w, func() {
				_ = DequantizeRow(typ, row, w)
				dotF32(n, BytesOf(row), BytesOf(actf))
			})
		}
		run(b, set+"/Q2_0/int", q2, func() { kernels[gguf.TypeQ2_0].dot(n, q2, q80[0]) })
		for _, l := range layouts {
			run(b, set+"/"+l.name, l.w, func() { l.k.dot(n, l.w, l.a) })
		}
	}
}

// ternaryGGMLRows builds the inputs of testdata/llamacpp/vecdot-ternary.txt
// for typ (TQ1_0 or TQ2_0): rows weight rows of n values (even rows
// quantized by ggml's quantizer, odd rows random bytes: every TQ1_0 byte,
// TQ2_0's fourth code) and as many Q8_K activation rows, from a fixed seed.
func ternaryGGMLRows(t *testing.T, typ gguf.Type, n, rows int) (w, a []byte) {
	rng := rand.New(rand.NewPCG(uint64(typ), 26))
	bs := tq1_0Bytes
	if typ == gguf.TypeTQ2_0 {
		bs = tq2_0Bytes
	}
	f := make([]float32, n)
	wb, ab := n/256*bs, ActRowBytes(gguf.TypeQ8_K, n)
	w, a = make([]byte, rows*wb), make([]byte, rows*ab)
	for r := 0; r < rows; r++ {
		for i := range f {
			f[i] = float32(rng.NormFloat64() * math.Pow(2, float64(r%7-3)))
		}
		if r%2 == 0 {
			if err := quantizeAct(typ, w[r*wb:(r+1)*wb], f); err != nil {
				t.Fatal(err)
			}
		} else {
			copy(w[r*wb:], randomBytes(rng, wb, bs, bs-2))
		}
		for i := range f {
			f[i] = float32(rng.NormFloat64() * math.Pow(2, float64(r%5-2)))
		}
		if err := quantizeAct(gguf.TypeQ8_K, a[r*ab:(r+1)*ab], f); err != nil {
			t.Fatal(err)
		}
	}
	return w, a
}

// TestTQAgainstGGML checks the TQ1_0 and TQ2_0 kernels against ggml-cpu's
// own results on the same bytes (bench/ggml-vecdot.sh wrote
// testdata/llamacpp/vecdot-ternary.txt with Debian ggml 0.27's
// libggml-cpu-haswell.so): bit for bit against its generic kernels
// (ggml_vec_dot_tq*_q8_K_generic, what ggml runs on ARM and without
// AVX2), and to float32 rounding against its AVX2 ones, which add eight
// float lanes per block. GGUF_VECDOT_INPUTS=dir writes the inputs for
// the harness instead.
func TestTQAgainstGGML(t *testing.T) {
	const n, rows = 1024, 64
	types := []gguf.Type{gguf.TypeTQ1_0, gguf.TypeTQ2_0}
	vecdotInputs(t, types, n, rows, ternaryGGMLRows)
	want := vecdotBits(t, "vecdot-ternary.txt")
	wf, af := make([]float32, n), make([]float32, n)
	for _, typ := range types {
		w, a := ternaryGGMLRows(t, typ, n, rows)
		wb, ab := len(w)/rows, len(a)/rows
		for _, impl := range []string{"generic", "haswell"} {
			ref := want[typ.String()+"/"+impl]
			if len(ref) != rows {
				t.Fatalf("%s %s: %d reference rows, want %d", typ, impl, len(ref), rows)
			}
			for r := 0; r < rows; r++ {
				wr, ar := w[r*wb:(r+1)*wb], a[r*ab:(r+1)*ab]
				got := kernels[typ].dot(n, wr, ar)
				if impl == "generic" {
					if math.Float32bits(got) != math.Float32bits(ref[r]) {
						t.Errorf("%s row %d: %.9g, ggml generic %.9g", typ, r, got, ref[r])
					}
					continue
				}
				if d := math.Abs(float64(got) - float64(ref[r])); d > productMagnitude(t, typ, wr, ar, wf, af)*1e-6 {
					t.Errorf("%s row %d: %.9g, ggml AVX2 %.9g (diff %.3g)", typ, r, got, ref[r], d)
				}
			}
		}
	}
}

// TestNewTernaryMatrixRefused checks that a matrix whose rows do not fit
// its ternary layout, or a layout without a ternary kernel, is refused
// with an error naming the tensor instead of being multiplied wrongly.
func TestNewTernaryMatrixRefused(t *testing.T) {
	for _, c := range []struct {
		e    layout.Entry
		cols int
		want string
	}{
		{layout.Entry{Name: "a.ter2s128", Kind: layout.Ter2S128, From: gguf.TypeQ2_0}, 64, `tensor "a.ter2s128": rows of 64 weights do not fit layout ter2s128 of Q2_0`},
		{layout.Entry{Name: "b.ter3", Kind: layout.Ter3, From: gguf.TypeQ2_0}, 96, `tensor "b.ter3": rows of 96 weights do not fit layout ter3 of Q2_0`},
		{layout.Entry{Name: "c.ter2", Kind: layout.Ter2, From: gguf.TypeTQ2_0}, 128, `tensor "c.ter2": rows of 128 weights do not fit layout ter2 of TQ2_0`},
		{layout.Entry{Name: "d.q2lut", Kind: layout.Q2LUT, From: gguf.TypeQ2_K}, 256, `tensor "d.q2lut": no kernel for layout q2lut of Q2_K`},
	} {
		if _, err := NewTernaryMatrix(c.e, gguf.TypeI8, c.cols, 1, 0, nil); err == nil || err.Error() != c.want {
			t.Errorf("%s, %d columns: error %v, want %q", c.e.Name, c.cols, err, c.want)
		}
	}
	if _, err := NewTernaryMatrix(layout.Entry{Name: "e.ter2", Kind: layout.Ter2, From: gguf.TypeTQ2_0}, gguf.TypeI8, 256, 1, 0, nil); err != nil {
		t.Errorf("a fitting row refused: %v", err)
	}
}

// ternaryEdgeActs returns activation rows of n values of type act (Q8_0
// or Q8_K) for the kernels' edge cases, which quantized activations are
// not: every byte -128 or 127, and random bytes, with random scales (Q8_K
// bsums the sums of their bytes, as every Q8_K row has them: a kernel may
// take sum y from either).
func ternaryEdgeActs(rng *rand.Rand, act gguf.Type, n int) [][]byte {
	var out [][]byte
	for _, fill := range []int{-128, 127, 0} {
		a := make([]byte, ActRowBytes(act, n))
		for i := range a {
			a[i] = byte(int8(fill))
			if fill == 0 {
				a[i] = byte(rng.Uint32())
			}
		}
		bs := q8_0Bytes
		if act == gguf.TypeQ8_K {
			bs = q8_KBytes
		}
		for b := 0; b+bs <= len(a); b += bs {
			if act == gguf.TypeQ8_0 {
				binary.LittleEndian.PutUint16(a[b:], quant.FP32ToFP16(float32(rng.NormFloat64())))
				continue
			}
			binary.LittleEndian.PutUint32(a[b:], math.Float32bits(float32(rng.NormFloat64())))
			for j := 0; j < 16; j++ {
				var s int16
				for _, v := range a[b+4+16*j : b+20+16*j] {
					s += int16(int8(v))
				}
				binary.LittleEndian.PutUint16(a[b+260+2*j:], uint16(s))
			}
		}
		out = append(out, a)
	}
	return out
}

// TestTernaryKernelsEdgeActs checks, under every kernel set of this CPU,
// the installed TQ1_0, TQ2_0 and ternary-layout kernels against the
// portable ones bit for bit on the activations of ternaryEdgeActs (every
// byte -128 or 127, random bytes), which quantized activations never are,
// on TestTernaryKernelSets' rows (ternaryTestRow).
func TestTernaryKernelsEdgeActs(t *testing.T) {
	defer SelectKernels("")
	rng := rand.New(rand.NewPCG(26, 86))
	const n = 1280
	q8k, q80 := ternaryEdgeActs(rng, gguf.TypeQ8_K, n), ternaryEdgeActs(rng, gguf.TypeQ8_0, n)
	for _, set := range KernelSets() {
		install(set)
		for _, c := range []struct {
			typ      gguf.Type
			bs       int
			portable dotFunc
		}{{gguf.TypeTQ1_0, tq1_0Bytes, dotTQ1_0Go}, {gguf.TypeTQ2_0, tq2_0Bytes, dotTQ2_0Go}} {
			w := randomBytes(rng, n/256*c.bs, c.bs, c.bs-2)
			for j, a := range q8k {
				if got, want := kernels[c.typ].dot(n, w, a), c.portable(n, w, a); math.Float32bits(got) != math.Float32bits(want) {
					t.Errorf("set %s: %s act %d: %.9g, portable %.9g", set, c.typ, j, got, want)
				}
			}
		}
		for _, e := range ternaryEntries() {
			acts := q8k
			if e.From == gguf.TypeQ2_0 {
				acts = q80
			}
			for r := 0; r < 6; r++ {
				w, _ := ternaryTestRow(t, rng, e, n, r)
				for j, a := range acts {
					if got, want := terKernels[e].dot(n, w, a), terPortable(e)(n, w, a); math.Float32bits(got) != math.Float32bits(want) {
						t.Errorf("set %s: %s from %s row %d act %d: %.9g, portable %.9g", set, e.Kind, e.From, r, j, got, want)
					}
				}
			}
		}
	}
}
