package pager

import (
	"fmt"
	"slices"
)

// Result is a simulation's counts, per layer and in total.
type Result struct {
	Policy Policy
	Slots  int
	Total  Stats
	// Layers holds each layer's counts, by layer number.
	Layers map[int]Stats
}

// Simulate replays t through pools of slots slots per layer under policy
// p, exactly as the runtime's pager places experts (Pool.Run). A pool
// smaller than a call's experts handles the call in groups, as the
// runtime does for a batch.
func Simulate(t *Trace, slots int, p Policy) (*Result, error) {
	if slots <= 0 {
		return nil, fmt.Errorf("a pool needs at least one slot")
	}
	pools := map[int]*Pool{}
	var nexts map[int][]int64
	if p.Kind == Belady {
		nexts = nextUses(t)
	}
	pos := map[int]int{} // per layer: accesses so far
	var buf []Placement
	for i, c := range t.Calls {
		pl, ok := pools[c.Layer]
		if !ok {
			var err error
			if pl, err = NewPool(t.Experts, slots, p); err != nil {
				return nil, err
			}
			pools[c.Layer] = pl
		}
		if cap(buf) < slots {
			buf = make([]Placement, 0, slots)
		}
		err := pl.Run(c.Experts, buf, func(g []Placement) error {
			if nexts != nil {
				nx := nexts[c.Layer]
				for _, x := range g {
					pl.SetNextUse(x.Expert, nx[pos[c.Layer]])
					pos[c.Layer]++
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("call %d (layer %d): %w", i+1, c.Layer, err)
		}
	}
	r := &Result{Policy: p, Slots: slots, Layers: map[int]Stats{}}
	for l, pl := range pools {
		r.Layers[l] = pl.Stats()
		r.Total.Add(pl.Stats())
	}
	return r, nil
}

// nextUses returns, per layer, the position of the next access of the
// same expert after each access (never when there is none).
func nextUses(t *Trace) map[int][]int64 {
	seq := map[int][]int{}
	for _, c := range t.Calls {
		seq[c.Layer] = append(seq[c.Layer], c.Experts...)
	}
	out := map[int][]int64{}
	last := make([]int64, t.Experts)
	for l, s := range seq {
		nx := make([]int64, len(s))
		for e := range last {
			last[e] = never
		}
		for i := len(s) - 1; i >= 0; i-- {
			nx[i] = last[s[i]]
			last[s[i]] = int64(i)
		}
		out[l] = nx
	}
	return out
}

// LayerNumbers returns the layer numbers of r in order.
func (r *Result) LayerNumbers() []int {
	var ls []int
	for l := range r.Layers {
		ls = append(ls, l)
	}
	slices.Sort(ls)
	return ls
}
