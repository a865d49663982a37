// Package moegen writes generated mixture-of-experts models for the expert
// pager's tests and benchmarks: any MoE family of internal/fixture (its
// tensor names and metadata), with weights drawn so activations stay O(1)
// and quantized by package quant, and a router skewed the way real routers
// are. Every token embedding shares an offset vector m, and router row e
// is z_e·m/embd plus noise with z_e = Skew/(1 + rank(e)) (a Zipf law over
// a fixed permutation of the experts), so a few experts are much more
// popular than the rest; text whose words recur makes consecutive tokens
// reuse experts. Files are written as a stream, so a multi-GB model
// costs a few MB of memory.
package moegen

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/quant"
)

// Spec is a generated MoE model.
type Spec struct {
	// Model gives the family, shape, types and seed (Model.Type for the
	// matrices, Model.HeadType for token_embd and output).
	fixture.Model
	// ExpertType is the type of the *_exps tensors (0: Model.Type).
	ExpertType gguf.Type
	// Skew is the router's popularity strength (0: every expert alike).
	Skew float64
	// Templates, when > 0, draws only that many distinct experts per
	// expert tensor and repeats them: for benchmarks of size, where the
	// bytes matter and not their values, it makes a multi-GB model quick
	// to write. Routing is unaffected (the router is drawn in full).
	Templates int
	// ExpertsLast writes the expert tensors after all others (as gguf
	// build --experts-last does), which paging needs.
	ExpertsLast bool
}

// WriteTo writes the model as a GGUF file to w.
func (s Spec) WriteTo(w io.Writer) (int64, error) {
	infos := s.TensorInfos()
	for i := range infos {
		if experts.IsExpert(infos[i].Name) && s.ExpertType != 0 {
			infos[i].Type = s.ExpertType
		}
	}
	if s.ExpertsLast {
		slices.SortStableFunc(infos, func(a, b gguf.TensorInfo) int { return experts.LastOrder(a.Name, b.Name) })
	}
	gw, err := gguf.NewWriter(w, 3, s.Metadata(), infos)
	if err != nil {
		return 0, err
	}
	g := &gen{s: s, rng: rand.New(rand.NewPCG(s.Seed, 0x6d6f6567656e))}
	g.offset = make([]float32, s.Embd)
	for i := range g.offset {
		g.offset[i] = float32(g.rng.NormFloat64())
	}
	g.zipf = make([]float64, max(s.Experts, 1))
	for r, e := range g.rng.Perm(len(g.zipf)) {
		g.zipf[e] = s.Skew / float64(1+r)
	}
	for _, t := range infos {
		if err := g.tensor(gw, t); err != nil {
			return gw.Written(), fmt.Errorf("tensor %s: %w", t.Name, err)
		}
	}
	return gw.Written(), gw.Close()
}

type gen struct {
	s      Spec
	rng    *rand.Rand
	offset []float32
	zipf   []float64
}

// value returns element i of tensor name (ne0 columns wide).
func (g *gen) value(name string, ne0 int, i int) float32 {
	n := g.rng.NormFloat64()
	switch {
	case name == "token_embd.weight":
		return float32(float64(0.5*float64(g.offset[i%ne0])) + n)
	case strings.HasSuffix(name, "ffn_gate_inp.weight"):
		e := i / ne0
		return float32(g.zipf[e]*float64(g.offset[i%ne0])/float64(ne0) + 2*n/math.Sqrt(float64(ne0)))
	case strings.HasSuffix(name, "norm.weight"):
		return float32(1 + float64(0.02*n))
	case strings.HasSuffix(name, ".bias"):
		return float32(0.02 * n)
	case strings.Contains(name, "down") || strings.Contains(name, "attn_output"):
		return float32(n / math.Sqrt(float64(ne0)))
	case name == "output.weight":
		return float32(2 * n / math.Sqrt(float64(ne0)))
	}
	return float32(n / math.Sqrt(float64(ne0)))
}

// tensor writes t's data: drawn and quantized one slice at a time (one
// expert of a 3-D tensor, at most 1 Mi elements of others).
func (g *gen) tensor(w io.Writer, t gguf.TensorInfo) error {
	ne0 := int(t.Dims[0])
	elems := int(t.NumElements())
	slice := min(elems, max(ne0, (1<<20)/ne0*ne0))
	var templates [][]byte
	if len(t.Dims) == 3 {
		slice = elems / int(t.Dims[2])
		if g.s.Templates > 0 {
			templates = make([][]byte, 0, g.s.Templates)
		}
	}
	x := make([]float32, slice)
	for lo, k := 0, 0; lo < elems; lo, k = lo+slice, k+1 {
		if templates != nil && len(templates) == cap(templates) {
			if _, err := w.Write(templates[k%len(templates)]); err != nil {
				return err
			}
			continue
		}
		x = x[:min(slice, elems-lo)]
		for i := range x {
			x[i] = g.value(t.Name, ne0, lo+i)
		}
		b, err := encode(t.Type, x, ne0)
		if err != nil {
			return err
		}
		if templates != nil {
			templates = append(templates, b)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// encode returns x (rows of ne0) in type t.
func encode(t gguf.Type, x []float32, ne0 int) ([]byte, error) {
	size, err := t.RowSize(int64(len(x)))
	if err != nil {
		return nil, err
	}
	b := make([]byte, size)
	if t == gguf.TypeF32 {
		for i, v := range x {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
		}
		return b, nil
	}
	return b, quant.QuantizeRows(t, b, x, ne0, nil, runtime.NumCPU())
}
