package engine

import (
	"slices"
	"testing"
)

// TestRouteGroupLimit routes one token by hand-checkable numbers: sigmoid
// gating of logits chosen so that the probabilities are known, a selection
// bias, 4 groups of 2 experts of which the best 2 compete. The best single
// expert outside the best two groups must lose, the weights are the
// unbiased probabilities, renormalized and scaled.
func TestRouteGroupLimit(t *testing.T) {
	// probabilities sigmoid(x): 0.5 0.5 0.881 0.119 0.731 0.731 0.953 0.0067
	logits := []float32{0, 0, 2, -2, 1, 1, 3, -5}
	// selection scores p + bias: 0.5 0.5 | 0.881 0.619 | 1.031 1.031 |
	// 1.203 0.0067; group scores 1.0, 1.5, 2.06, 1.21: groups 2 and 1 win,
	// and expert 6, the best score, is in group 3.
	bias := []float32{0, 0, 0, 0.5, 0.3, 0.3, 0.25, 0}
	r := Routing{Gating: GatingSigmoid, Norm: true, Scale: 2, Groups: 4, GroupsUsed: 2}
	sel, w := make([]int, 3), make([]float32, 3)
	sc := newRouteScratch(8, 4)
	p := slices.Clone(logits)
	r.route(p, bias, sel, w, sc)
	// in groups 1 and 2: expert 4 (1.031), 5 (1.031), 2 (0.881), 3 (0.619)
	if !slices.Equal(sel, []int{4, 5, 2}) {
		t.Fatalf("selected %v, want [4 5 2]", sel)
	}
	sum := p[4] + p[5] + p[2]
	for k, e := range sel {
		want := p[e] / sum * 2
		if d := w[k] - want; d > 1e-6 || d < -1e-6 {
			t.Errorf("weight %d (expert %d) = %g, want %g", k, e, w[k], want)
		}
	}
	// without the group limit expert 6 comes first
	r.Groups = 0
	p = slices.Clone(logits)
	r.route(p, bias, sel, w, sc)
	if !slices.Equal(sel, []int{6, 4, 5}) {
		t.Fatalf("without groups selected %v, want [6 4 5]", sel)
	}
}

// TestRouteSoftmaxNoNorm is olmoe's routing: softmax over all experts,
// the top k kept with their probabilities as they are.
func TestRouteSoftmaxNoNorm(t *testing.T) {
	logits := []float32{1, 3, 2, 0}
	r := Routing{Gating: GatingSoftmax}
	sel, w := make([]int, 2), make([]float32, 2)
	r.route(logits, nil, sel, w, newRouteScratch(4, 1))
	if !slices.Equal(sel, []int{1, 2}) || w[0] != logits[1] || w[1] != logits[2] {
		t.Fatalf("selected %v weights %v of probabilities %v", sel, w, logits)
	}
	var total float32
	for _, v := range logits {
		total += v
	}
	if total < 0.999 || total > 1.001 || w[0]+w[1] > 0.95 {
		t.Fatalf("probabilities %v, weights %v", logits, w)
	}
}
