package engine

import (
	"fmt"

	"github.com/ggufkit/gguf/kernels"
)

// Gating is how router logits become expert probabilities; the values
// are llama.cpp's llama_expert_gating_func_type (the expert_gating_func key).
type Gating int

// The gating functions the runtime has.
const (
	GatingSoftmax Gating = 1 // softmax over all experts
	GatingSigmoid Gating = 2 // each expert's sigmoid, independently
)

// Routing is a family's expert selection, as data: llama.cpp's
// build_moe_ffn with the arguments each architecture passes. Every MoE
// layer routes through Routing.route, the one place an expert pager has to
// watch.
type Routing struct {
	Gating Gating
	// Norm renormalizes the chosen experts' weights to sum 1.
	Norm bool
	// Scale multiplies the weights after that (expert_weights_scale);
	// 0 and 1 leave them as they are.
	Scale float32
	// Groups, GroupsUsed: group-limited selection (expert_group_count,
	// expert_group_used_count). With Groups > 1 the experts form Groups
	// equal groups, each scored by the sum of its two best selection
	// scores, and experts are chosen only from the GroupsUsed best groups.
	Groups, GroupsUsed int
	// TopP, in (0, 1), keeps of the selected experts only the fewest, best
	// first, whose weights sum to a share TopP of all selected weights;
	// the others get expert -1 and weight 0 (a runtime option, not the
	// family's: OpenOptions.TopP).
	TopP float32
}

func (r *Routing) check(arch string, experts, used int) error {
	if r.Gating != GatingSoftmax && r.Gating != GatingSigmoid {
		return fmt.Errorf("metadata %s.expert_gating_func = %d is not supported (1 softmax, 2 sigmoid)", arch, r.Gating)
	}
	if r.Groups <= 1 {
		return nil
	}
	per := experts / max(r.Groups, 1)
	if experts%r.Groups != 0 || per < 2 || r.GroupsUsed == 0 || r.GroupsUsed >= r.Groups || used > r.GroupsUsed*per {
		return fmt.Errorf("metadata %s.expert_group_count %d / expert_group_used_count %d do not fit %d experts, %d used",
			arch, r.Groups, r.GroupsUsed, experts, used)
	}
	return nil
}

// routeScratch is what route needs besides its outputs, allocated once.
type routeScratch struct {
	score []float32 // [experts] selection scores (biased, group-masked)
	// bonus, when not nil, is added to the selection scores: the expert
	// pager's cache-aware routing (PagerOptions.Bias).
	bonus  []float32
	order  []int     // [experts] expert indices, sorted
	groups []float32 // [groups] group scores
	gorder []int     // [groups]
}

func newRouteScratch(experts, groups int) *routeScratch {
	return &routeScratch{score: make([]float32, experts), order: make([]int, experts),
		groups: make([]float32, groups), gorder: make([]int, groups)}
}

// route is build_moe_ffn's routing for one token: logits (the router's
// output, overwritten with the probabilities) through the gating function;
// the selection scores are the probabilities plus bias (exp_probs_b, may
// be nil), restricted to the best groups when Groups > 1; the len(sel)
// experts of highest score in descending order go to sel, their
// probabilities (unbiased) to w, renormalized (the sum in float64, clamped
// below at 2^-14 as llama.cpp does) and scaled as the family says.
func (r *Routing) route(logits, bias []float32, sel []int, w []float32, sc *routeScratch) {
	switch r.Gating {
	case GatingSigmoid:
		for i, v := range logits {
			logits[i] = 1 / (1 + kernels.Expf(-v))
		}
	default:
		kernels.Softmax(logits)
	}
	score := sc.score[:len(logits)]
	copy(score, logits)
	if bias != nil {
		for i := range score {
			score[i] += bias[i]
		}
	}
	if sc.bonus != nil {
		for i := range score {
			score[i] += sc.bonus[i]
		}
	}
	if r.Groups > 1 {
		per := len(score) / r.Groups
		for g := range sc.groups {
			// the sum of the group's two best scores (ggml_top_k 2, sum_rows)
			a, b := negInf, negInf
			for _, v := range score[g*per : (g+1)*per] {
				if v > a {
					a, b = v, a
				} else if v > b {
					b = v
				}
			}
			sc.groups[g] = a + b
		}
		argsortDesc(sc.groups, sc.gorder)
		for _, g := range sc.gorder[r.GroupsUsed:] {
			for i := g * per; i < (g+1)*per; i++ {
				score[i] = negInf
			}
		}
	}
	argsortDesc(score, sc.order)
	var sum float64
	for k := range sel {
		e := sc.order[k]
		sel[k], w[k] = e, logits[e]
		sum += float64(w[k])
	}
	if r.TopP > 0 && r.TopP < 1 {
		sum = topP(sel, w, sum, r.TopP)
	}
	if r.Norm {
		s := max(float32(sum), 6.103515625e-5)
		for k := range w {
			w[k] /= s
		}
	}
	if r.Scale != 0 && r.Scale != 1 {
		for k := range w {
			w[k] *= r.Scale
		}
	}
}

// argsortDesc writes the indices of v to order by descending value (ties
// keep the lower index first, as ggml_argsort), as an insertion sort:
// expert counts are small and it allocates nothing.
func argsortDesc(v []float32, order []int) {
	order = order[:len(v)]
	for e := range order {
		j := e
		for ; j > 0 && v[order[j-1]] < v[e]; j-- {
			order[j] = order[j-1]
		}
		order[j] = e
	}
}

// topP keeps the first experts of sel (best first) until their weights
// hold share p of sum, marks the rest -1 with weight 0 and returns the
// kept weights' sum.
func topP(sel []int, w []float32, sum float64, p float32) float64 {
	var kept float64
	for k := range sel {
		if kept >= float64(p)*sum {
			sel[k], w[k] = -1, 0
			continue
		}
		kept += float64(w[k])
	}
	return kept
}
