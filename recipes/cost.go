package recipes

import "github.com/ggufkit/gguf/plan"

// Cost is what one input costs a build: what opening it took, and for a
// GGUF input the tensor bytes the build reads from it and what fetching
// them will take.
type Cost struct {
	Name string `json:"input"`
	// Spent is what opening the input cost: its header, or a small input
	// read whole (zero for local files).
	SpentRequests int64 `json:"opened_requests"`
	SpentBytes    int64 `json:"opened_bytes"`
	// Needed is the tensor bytes the build reads (GGUF inputs).
	Needed int64 `json:"build_reads"`
	// Requests and Bytes are the range requests and bytes fetching Needed
	// will take (holes read through and a whole-file check included);
	// Counted is false when they are not counted (local files, split
	// models), where Bytes is Needed.
	Requests int   `json:"fetch_requests"`
	Bytes    int64 `json:"fetch_bytes"`
	Counted  bool  `json:"counted"`
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
