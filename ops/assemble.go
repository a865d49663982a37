package ops

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// AssembleOptions are the conversions of `gguf assemble` applied to the
// expert tensors on their way into the output.
type AssembleOptions struct {
	// ExpertsType converts every expert weight (*_exps*.weight) to this
	// ggml type, dequantizing a quantized source first (0: keep types).
	ExpertsType gguf.Type
	// Imatrix weights the conversion as llama-quantize's --imatrix does.
	Imatrix *quant.Imatrix
	// Threads converting rows (bytes do not depend on it; <1 means 1).
	Threads int
	// ExpertsLayout is "q2lut" (repack the Q2_K experts), "none" or "".
	ExpertsLayout string
	// ExpertShapes, when set, states the expert weights a runtime's
	// loader requires of a model with the base's metadata, as
	// engine.ExpertShapes does (a package ops cannot import: the engine's
	// tests import ops): the experts are checked against it. Without it,
	// or when it cannot read the base's metadata, they are checked against
	// the base's generic keys (embedding_length,
	// expert_feed_forward_length, block_count).
	ExpertShapes func(md *gguf.Metadata) (want map[string][]uint64, skipped func(name string) bool, err error)
}

// Assemble plans a model made of base's metadata and non-expert tensors
// and the expert tensors of exps, matched by name: an expert tensor the
// base has is replaced (same shape required), one it lacks is added (the
// base may be a non-expert subset, as `gguf fetch --exclude _exps` makes).
// Expert tensors come last, in the order exps holds them, converted and
// repacked as opts say. Both inputs must describe the same architecture
// and expert count, and the experts must have the shapes and layers the
// base's metadata gives them (checkExpertShapes). The plan reads each input front to back in one pass,
// so remote inputs are fetched as ordered, coalesced ranges.
func Assemble(base, exps *plan.Input, opts AssembleOptions) (*plan.Plan, *Report, error) {
	bm, em := base.File.Metadata, exps.File.Metadata
	arch := bm.Architecture()
	if ea := em.Architecture(); ea != arch {
		return nil, nil, fmt.Errorf("--experts %s is a %q model, the base %s a %q one", exps.Name, ea, base.Name, arch)
	}
	n, ok := bm.ArchUint("expert_count")
	if !ok || n == 0 {
		return nil, nil, fmt.Errorf("base %s has no %s.expert_count: not a MoE model", base.Name, arch)
	}
	if en, ok := em.ArchUint("expert_count"); ok && en != n {
		return nil, nil, fmt.Errorf("--experts %s has %d experts per layer, the base %s has %d", exps.Name, en, base.Name, n)
	}
	for _, in := range []*plan.Input{base, exps} {
		if err := refuseRepackedExperts(in); err != nil {
			return nil, nil, err
		}
	}
	layers, _ := bm.ArchUint("block_count")

	p := plan.Identity(base)
	rep := &Report{}
	from := map[string]bool{}
	for i := range exps.File.Tensors {
		t := exps.File.Tensors[i]
		if !experts.IsExpert(t.Name) {
			continue
		}
		from[t.Name] = true
		if last := t.Dims[len(t.Dims)-1]; len(t.Dims) < 2 || last != n {
			return nil, nil, fmt.Errorf("--experts %s: tensor %q has shape %s, not %d experts in its last dimension", exps.Name, t.Name, t.Shape(), n)
		}
		nt := plan.Tensor{Info: t, Src: &plan.Copy{In: exps, Index: i}}
		if j := p.Index(t.Name); j >= 0 {
			if have := p.Tensors[j].Info; !slices.Equal(have.Dims, t.Dims) {
				return nil, nil, fmt.Errorf("tensor %q has shape %s in the base %s but %s in --experts %s", t.Name, have.Shape(), base.Name, t.Shape(), exps.Name)
			}
			p.Tensors[j] = nt
			rep.Replaced = append(rep.Replaced, t.Name)
			continue
		}
		if l, ok := layerOf(t.Name); layers > 0 && (!ok || uint64(l) >= layers) {
			return nil, nil, fmt.Errorf("--experts %s: tensor %q is outside the base's %d layers", exps.Name, t.Name, layers)
		}
		p.Tensors = append(p.Tensors, nt)
		rep.Added = append(rep.Added, t.Name)
	}
	if len(from) == 0 {
		return nil, nil, fmt.Errorf("--experts %s has no expert tensors (*_exps)", exps.Name)
	}
	for _, t := range base.File.Tensors {
		if experts.IsExpert(t.Name) && !from[t.Name] {
			return nil, nil, fmt.Errorf("the base %s has expert tensor %q, which --experts %s lacks", base.Name, t.Name, exps.Name)
		}
	}
	if err := checkExpertShapes(base, exps, opts); err != nil {
		return nil, nil, err
	}
	// The base's tensors keep their order, the experts that replaced some
	// of them move out with the others, in exps's order among themselves.
	slices.SortStableFunc(p.Tensors, func(a, b plan.Tensor) int {
		ea, eb := experts.IsExpert(a.Info.Name), experts.IsExpert(b.Info.Name)
		switch {
		case ea && eb:
			return exps.File.TensorIndex(a.Info.Name) - exps.File.TensorIndex(b.Info.Name)
		case ea == eb:
			return 0
		case eb:
			return -1
		}
		return 1
	})
	rep.ExpertTensors = len(from)
	if opts.ExpertsType != 0 {
		d, err := convertExperts(p, opts)
		if err != nil {
			return nil, nil, err
		}
		rep.Quant = d
	}
	if opts.ExpertsLayout != "" {
		l, err := applyLayouts(p, Options{ExpertsLayout: opts.ExpertsLayout})
		if err != nil {
			return nil, nil, err
		}
		rep.Layouts = l
	}
	return p, rep, nil
}

// refuseRepackedExperts refuses an input whose expert tensors are in a
// layout: their bytes are not those of the type the tensor table states.
func refuseRepackedExperts(in *plan.Input) error {
	es, err := layout.Entries(in.File.Metadata)
	if err != nil {
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	for _, e := range es {
		if experts.IsExpert(e.Original()) {
			return fmt.Errorf("%s has repacked expert tensors (%s): restore them first (gguf layout --experts none)", in.Name, e.Name)
		}
	}
	return nil
}

// layerOf returns N of a blk.N. tensor name.
func layerOf(name string) (int, bool) {
	m := layerNum.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	l, err := strconv.Atoi(m[1])
	return l, err == nil
}

// convertExperts converts the expert weights of p to opts.ExpertsType with
// the same row conversion as quantization (importance weights per expert).
// Only weights are converted: expert biases and scales keep their types.
func convertExperts(p *plan.Plan, opts AssembleOptions) ([]Decision, error) {
	var out []Decision
	for i := range p.Tensors {
		t := &p.Tensors[i]
		if !experts.IsExpert(t.Info.Name) || !strings.HasSuffix(t.Info.Name, ".weight") {
			continue
		}
		dec := Decision{Name: t.Info.Name, From: t.Info.Type, To: t.Info.Type, FromBytes: t.Info.Size(), Reason: "--experts-type"}
		if t.Info.Type != opts.ExpertsType {
			var w []float32
			if opts.Imatrix != nil {
				var err error
				if w, err = opts.Imatrix.TensorWeights(&t.Info); err != nil {
					return nil, fmt.Errorf("tensor %q: %w", t.Info.Name, err)
				}
				dec.HasImatrix = w != nil
			}
			tr, err := convert(t, opts.ExpertsType, w, max(1, opts.Threads))
			if err != nil {
				return nil, err
			}
			t.Src = tr
			t.Info.Type = opts.ExpertsType
			dec.To, dec.Quantized = opts.ExpertsType, true
		}
		dec.ToBytes = t.Info.Size()
		out = append(out, dec)
	}
	return out, nil
}
