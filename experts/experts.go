package experts

import (
	"regexp"
	"slices"
	"sort"
	"strconv"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/plan"
)

var expertRe = regexp.MustCompile(`_exps(\.|_|$)`)
var layerRe = regexp.MustCompile(`^blk\.(\d+)\.`)

// IsExpert reports whether a tensor holds MoE experts (ffn_gate_exps,
// ffn_up_exps, ffn_down_exps, ffn_gate_up_exps, their biases and scales).
// Shared experts (_shexp) and the router (ffn_gate_inp) are not experts.
func IsExpert(name string) bool { return expertRe.MatchString(name) }

// Last reorders p so every expert tensor comes after all other tensors,
// keeping the relative order of both groups. Tensor infos and data move
// together: the offsets are recomputed by the plan's layout. It returns the
// number of expert tensors.
func Last(p *plan.Plan) int {
	n := 0
	for _, t := range p.Tensors {
		if IsExpert(t.Info.Name) {
			n++
		}
	}
	slices.SortStableFunc(p.Tensors, func(a, b plan.Tensor) int { return LastOrder(a.Info.Name, b.Info.Name) })
	return n
}

// LastOrder compares tensor names for the experts-last order (a stable
// sort with it moves every expert tensor after all others): -1 when only
// b is an expert tensor, 1 when only a is, else 0.
func LastOrder(a, b string) int {
	ea, eb := IsExpert(a), IsExpert(b)
	switch {
	case ea == eb:
		return 0
	case eb:
		return -1
	}
	return 1
}

// LayerExperts is the expert storage of one layer.
type LayerExperts struct {
	Layer   int      `json:"layer"`
	Experts int      `json:"experts"`
	Tensors []string `json:"tensors"`
	// BytesPerExpert is one expert's gate, up and down (and any other
	// *_exps tensor of the layer) together: what a pager reads per miss.
	BytesPerExpert int64 `json:"bytes_per_expert"`
}

// Info is what a pager needs to know about a file's experts.
type Info struct {
	ExpertTensors int   `json:"expert_tensors"`
	ExpertBytes   int64 `json:"expert_bytes"`
	// Last is true when every expert tensor comes after every other tensor.
	Last bool `json:"experts_last"`
	// NonExpertEnd is the file offset where the first expert tensor starts:
	// with Last, everything before it is the part to map.
	NonExpertEnd int64          `json:"non_expert_end"`
	Layers       []LayerExperts `json:"layers"`
	// Punched is the bytes of the expert region in holes (gguf punch), when
	// the file was checked (a local file; Describe does not look).
	Punched int64 `json:"punched_bytes,omitempty"`
}

// Describe returns the expert layout of f, or nil when f has no experts.
func Describe(f *gguf.File) *Info {
	info := &Info{Last: true, NonExpertEnd: -1}
	byLayer := map[int]*LayerExperts{}
	nonExpertAfter := false
	for i := len(f.Tensors) - 1; i >= 0; i-- {
		t := &f.Tensors[i]
		if !IsExpert(t.Name) {
			nonExpertAfter = true
			continue
		}
		if nonExpertAfter {
			info.Last = false
		}
		info.ExpertTensors++
		info.ExpertBytes += t.Size()
		off := f.DataOffset + int64(t.Offset)
		if info.NonExpertEnd < 0 || off < info.NonExpertEnd {
			info.NonExpertEnd = off
		}
		layer := -1
		if m := layerRe.FindStringSubmatch(t.Name); m != nil {
			layer, _ = strconv.Atoi(m[1])
		}
		le, ok := byLayer[layer]
		if !ok {
			le = &LayerExperts{Layer: layer}
			byLayer[layer] = le
		}
		n := 1
		if len(t.Dims) >= 3 {
			n = int(t.Dims[len(t.Dims)-1])
		}
		le.Experts = max(le.Experts, n)
		le.Tensors = append([]string{t.Name}, le.Tensors...)
		le.BytesPerExpert += t.Size() / int64(n)
	}
	if info.ExpertTensors == 0 {
		return nil
	}
	for _, le := range byLayer {
		info.Layers = append(info.Layers, *le)
	}
	sort.Slice(info.Layers, func(i, j int) bool { return info.Layers[i].Layer < info.Layers[j].Layer })
	return info
}
