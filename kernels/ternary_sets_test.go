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

// TestTernaryKernelSets checks, under every kernel set this CPU runs, the
// installed TQ1_0 and TQ2_0 row kernels and every ternary layout kernel
// against the portable kernels bit for bit (and the layouts' kernels on
// packed rows against terRef): on rows of several lengths, packed from
// ternary rows and of random bytes (TQ1_0's every byte, ter2's fourth
// code, ter3's bytes past 242; random scales, so that the Q8_K layouts'
// blocks whose group scales differ, run apart, are met, and rows whose
// scales are equal per block), against normal and extreme activations.
func TestTernaryKernelSets(t *testing.T) {
	defer SelectKernels("")
	for _, set := range KernelSets() {
		if err := SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(26, 7))
		for _, n := range []int{256, 512, 2816, 4096} { // 2816: eight blocks and three (ternary_amd64.s)
			q8k, _ := ternaryActs(t, rng, n)
			for _, c := range []struct {
				typ  gguf.Type
				bs   int
				port dotFunc
			}{{gguf.TypeTQ1_0, tq1_0Bytes, dotTQ1_0Go}, {gguf.TypeTQ2_0, tq2_0Bytes, dotTQ2_0Go}} {
				for r := 0; r < 4; r++ {
					w := ternaryRow(t, rng, c.typ, n)
					if r%2 == 1 {
						w = randomBytes(rng, n/256*c.bs, c.bs, c.bs-2)
					}
					for j, a := range q8k {
						got, want := kernels[c.typ].dot(n, w, a), c.port(n, w, a)
						if math.Float32bits(got) != math.Float32bits(want) {
							t.Errorf("%s: %s n=%d row %d act %d: %.9g, portable %.9g", set, c.typ, n, r, j, got, want)
						}
					}
				}
			}
		}
		for _, n := range []int{64, 128, 192, 256, 1024, 4096} {
			// (Q8_K rows need whole blocks: the acts of shorter rows are
			// the first n values of 256.)
			q8k, q80 := ternaryActs(t, rng, (n+255)/256*256)
			for _, e := range ternaryEntries() {
				k := terKernels[e]
				acts := q8k
				if e.From == gguf.TypeQ2_0 {
					acts = q80
				}
				if n%k.act.BlockSize() != 0 || (e.Kind == layout.Ter2S128 && n%128 != 0) {
					continue
				}
				port := terPortable(e)
				for r := 0; r < 6; r++ {
					w, packed := ternaryTestRow(t, rng, e, n, r)
					for j, a := range acts {
						got, want := k.dot(n, w, a), port(n, w, a)
						if math.Float32bits(got) != math.Float32bits(want) {
							t.Errorf("%s: %s from %s n=%d row %d act %d: %.9g, portable %.9g", set, e.Kind, e.From, n, r, j, got, want)
						}
						if !packed {
							continue
						}
						if ref := k.ref(n, w, a); math.Float32bits(got) != math.Float32bits(ref) {
							t.Errorf("%s: %s from %s n=%d row %d act %d: %.9g, reference %.9g", set, e.Kind, e.From, n, r, j, got, ref)
						}
					}
				}
			}
		}
	}
}

// ternaryEntries returns the layout entries in a fixed order.
func ternaryEntries() []layout.Entry {
	var es []layout.Entry
	for _, kind := range []layout.Kind{layout.Ter3, layout.Ter2, layout.Ter2S128} {
		for _, from := range []gguf.Type{gguf.TypeQ2_0, gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
			es = append(es, layout.Entry{Kind: kind, From: from})
		}
	}
	return es
}

// ternaryTestRow returns test row r of n weights in layout entry e, and
// whether it was packed from a row of the original type: rows 0 and 1
// are packed, 2 and 3 random bytes with random scales, 4 and 5 random
// bytes with the scales of each 256 weights equal.
func ternaryTestRow(t *testing.T, rng *rand.Rand, e layout.Entry, n, r int) ([]byte, bool) {
	t.Helper()
	st, err := layout.Stored(gguf.TensorInfo{Name: "w", Dims: []uint64{uint64(n)}, Type: e.From}, e.Kind)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]byte, st.Dims[0])
	if r < 2 {
		if err := layout.PackTernary(e.Kind, e.From, w, ternaryRow(t, rng, e.From, n), int64(n), 0); err != nil {
			t.Fatal(err)
		}
		return w, true
	}
	for i := range w {
		w[i] = byte(rng.Uint32())
	}
	l := terLayouts[e.Kind]
	ns := n / 64 / l.perScale
	for s := 0; s < ns; s++ {
		h := quant.FP32ToFP16(float32(rng.NormFloat64()))
		if r >= 4 && s%(4/l.perScale) != 0 {
			h = binary.LittleEndian.Uint16(w[2*(s-1):])
		}
		binary.LittleEndian.PutUint16(w[2*s:], h)
	}
	return w, false
}

// BenchmarkTernaryKernels measures one 4096-weight row product under
// every kernel set this CPU offers: TQ1_0 and TQ2_0 rows ("TQ1_0/SET"),
// and the layout kernels ("FROM.LAYOUT/SET": ter3 of TQ1_0, ter2 and
// ter2s128 of TQ2_0, and the three layouts of Q2_0), rows packed from
// quantized normal values; bench/icount.sh counts their instructions
// (testdata/icount-arm64.txt).
func BenchmarkTernaryKernels(b *testing.B) {
	defer SelectKernels("")
	t := &testing.T{}
	const n = 4096
	rng := rand.New(rand.NewPCG(26, 11))
	q8k, q80 := ternaryActs(t, rng, n)
	for _, typ := range []gguf.Type{gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
		w := ternaryRow(t, rng, typ, n)
		for _, set := range KernelSets() {
			b.Run(typ.String()+"/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				dot := kernels[typ].dot
				for b.Loop() {
					dot(n, w, q8k[0])
				}
			})
		}
	}
	for _, e := range []layout.Entry{
		{Kind: layout.Ter3, From: gguf.TypeTQ1_0}, {Kind: layout.Ter2, From: gguf.TypeTQ2_0},
		{Kind: layout.Ter2S128, From: gguf.TypeTQ2_0}, {Kind: layout.Ter3, From: gguf.TypeQ2_0},
		{Kind: layout.Ter2, From: gguf.TypeQ2_0}, {Kind: layout.Ter2S128, From: gguf.TypeQ2_0},
	} {
		w, _ := ternaryTestRow(t, rng, e, n, 0)
		a := q8k[0]
		if e.From == gguf.TypeQ2_0 {
			a = q80[0]
		}
		for _, set := range KernelSets() {
			b.Run(e.From.String()+"."+string(e.Kind)+"/"+set, func(b *testing.B) {
				if err := SelectKernels(set); err != nil {
					b.Fatal(err)
				}
				dot := terKernels[e].dot
				for b.Loop() {
					dot(n, w, a)
				}
			})
		}
	}
}
