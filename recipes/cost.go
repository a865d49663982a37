package recipes

import "github.com/ggufkit/gguf/plan"

// Cost is what one input costs a build: what opening it took, and for a
// GGUF input the tensor bytes the build reads from it and what fetching
// them will take.
type Cost struct {
	Name string
	// Spent is what opening the input cost: its header, or a small input
	// read whole (zero for local files).
	SpentRequests, SpentBytes int64
	// Needed is the tensor bytes the build reads (GGUF inputs).
	Needed int64
	// Requests and Bytes are the range requests and bytes fetching Needed
	// will take (holes read through and a whole-file check included);
	// Counted is false when they are not counted (local files, split
	// models), where Bytes is Needed.
	Requests int
	Bytes    int64
	Counted  bool
}

// Costs returns each input's cost for the planned build, in input order,
// without fetching anything.
func (res *Resolved) Costs(b *Planned) ([]Cost, error) {
	ranges := map[*plan.Input][]plan.Range{}
	for _, t := range b.Plan.Tensors {
		if in := t.Src.Input(); in != nil {
			ranges[in] = append(ranges[in], t.Src.Ranges()...)
		}
	}
	var out []Cost
	for _, name := range res.Recipe.InputNames() {
		o := res.Inputs[name]
		c := Cost{Name: name, SpentRequests: o.Spent.Requests, SpentBytes: o.Spent.Bytes}
		if o.Src != nil {
			rs := ranges[o.PlanInput()]
			for _, r := range rs {
				c.Needed += r.Len
			}
			n, bytes, ok, err := o.Src.FetchCost(rs)
			if err != nil {
				return nil, err
			}
			c.Requests, c.Bytes, c.Counted = n, bytes, ok
			if !ok {
				c.Bytes = c.Needed
			}
		}
		out = append(out, c)
	}
	return out, nil
}
