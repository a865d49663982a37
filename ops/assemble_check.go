package ops

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/plan"
)

// checkExpertShapes checks the expert tensors of exps against the base's
// metadata, which the output keeps: a base without experts (gguf fetch
// --exclude _exps) has no tensors to compare shapes with, so without this
// a wrong embedding width, expert FFN width or a missing layer would give
// a file the runtime refuses. With opts.ExpertShapes (the runtime's
// loader) reading the base's metadata, the check is the loader's;
// otherwise it is the generic keys' (expertKeys).
func checkExpertShapes(base, exps *plan.Input, opts AssembleOptions) error {
	if opts.ExpertShapes == nil {
		return expertKeys(base, exps)
	}
	want, skipped, err := opts.ExpertShapes(base.File.Metadata)
	if err != nil {
		return expertKeys(base, exps)
	}
	have := map[string]bool{}
	for i := range exps.File.Tensors {
		t := &exps.File.Tensors[i]
		if !experts.IsExpert(t.Name) || skipped(t.Name) {
			continue
		}
		w, ok := want[t.Name]
		if !ok {
			return fmt.Errorf("--experts %s: tensor %q is not an expert weight the runtime reads in a model with the base %s's metadata (a dense layer, or not a gate, up or down weight)",
				exps.Name, t.Name, base.Name)
		}
		if !slices.Equal(t.Dims, w) {
			why := ""
			if d, ok := expertWidths[suffix(t.Name)]; ok {
				why = fmt.Sprintf(" (embedding width %d, expert FFN width %d, %d experts)", w[d.embdDim], w[d.ffDim]/uint64(d.ffMul), w[2])
			}
			return fmt.Errorf("--experts %s: tensor %q has shape %s, the base %s's metadata needs %s%s",
				exps.Name, t.Name, t.Shape(), base.Name, (&gguf.TensorInfo{Dims: w}).Shape(), why)
		}
		have[t.Name] = true
	}
	for _, name := range byLayer(slices.Collect(maps.Keys(want))) {
		if !have[name] {
			return fmt.Errorf("--experts %s lacks tensor %q, which the base %s's metadata needs (its block_count and leading dense layers)",
				exps.Name, name, base.Name)
		}
	}
	return nil
}

// byLayer sorts tensor names by layer, then by name.
func byLayer(names []string) []string {
	slices.SortFunc(names, func(a, b string) int {
		la, _ := layerOf(a)
		lb, _ := layerOf(b)
		return cmp.Or(cmp.Compare(la, lb), strings.Compare(a, b))
	})
	return names
}

// suffix is a tensor name after its "blk.N." prefix.
func suffix(name string) string {
	_, s, _ := strings.Cut(strings.TrimPrefix(name, "blk."), ".")
	return s
}

// expertWidths says where an expert weight tensor of llama.cpp's layouts
// holds the embedding width and the expert FFN width (times ffMul), by
// the name's suffix: ne = [embd, ff, experts] for gate and up, [ff, embd,
// experts] for down.
var expertWidths = map[string]struct{ embdDim, ffDim, ffMul int }{
	"ffn_gate_exps.weight":    {0, 1, 1},
	"ffn_up_exps.weight":      {0, 1, 1},
	"ffn_down_exps.weight":    {1, 0, 1},
	"ffn_gate_up_exps.weight": {0, 1, 2},
}

// expertKeys checks the expert weights of exps against the base's
// <arch>.* keys for an architecture the runtime does not read:
// embedding_length and expert_feed_forward_length (each when present) for
// the widths of gate, up and down, and some expert tensor in every layer
// from leading_dense_block_count to block_count less nextn_predict_layers.
func expertKeys(base, exps *plan.Input) error {
	md := base.File.Metadata
	embd, _ := md.ArchUint("embedding_length")
	ff, _ := md.ArchUint("expert_feed_forward_length")
	blocks, _ := md.ArchUint("block_count")
	nextn, _ := md.ArchUint("nextn_predict_layers")
	lead, _ := md.ArchUint("leading_dense_block_count")
	layers := map[int]bool{}
	for i := range exps.File.Tensors {
		t := &exps.File.Tensors[i]
		if !experts.IsExpert(t.Name) {
			continue
		}
		if l, ok := layerOf(t.Name); ok {
			layers[l] = true
		}
		w, ok := expertWidths[suffix(t.Name)]
		if !ok || len(t.Dims) != 3 {
			continue
		}
		if embd != 0 && t.Dims[w.embdDim] != embd {
			return fmt.Errorf("--experts %s: tensor %q has shape %s, but the base %s's embedding_length is %d", exps.Name, t.Name, t.Shape(), base.Name, embd)
		}
		if ff != 0 && t.Dims[w.ffDim] != uint64(w.ffMul)*ff {
			return fmt.Errorf("--experts %s: tensor %q has shape %s, but the base %s's expert_feed_forward_length is %d", exps.Name, t.Name, t.Shape(), base.Name, ff)
		}
	}
	for l := lead; l+nextn < blocks; l++ {
		if !layers[int(l)] {
			return fmt.Errorf("--experts %s has no expert tensors for layer %d, which the base %s's metadata makes a MoE layer (block_count %d, leading_dense_block_count %d)", exps.Name, l, base.Name, blocks, lead)
		}
	}
	return nil
}
