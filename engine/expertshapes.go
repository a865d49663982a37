package engine

import (
	"fmt"

	"github.com/ggufkit/gguf/gguf"
)

// expertWeight is one expert weight tensor of a MoE layer as the loader
// reads it: the name after "blk.N." and each expert's ne0 (cols) and ne1
// (rows); the tensor's ne2 is the expert count.
type expertWeight struct {
	dst        *[]*Matrix
	name       string
	cols, rows int
}

// expertWeights are the expert weights of MoE layer l of a model of
// config c: loadFFN loads them, ExpertShapes states them.
func expertWeights(l *Layer, c *Config) []expertWeight {
	return []expertWeight{
		{&l.GateExps, "ffn_gate_exps.weight", c.Embd, c.ExpertFF},
		{&l.UpExps, "ffn_up_exps.weight", c.Embd, c.ExpertFF},
		{&l.DownExps, "ffn_down_exps.weight", c.ExpertFF, c.Embd},
	}
}

// ExpertShapes returns the expert weight tensors the loader requires of a
// model with metadata md, by name, each with the shape it requires
// ([cols, rows, experts]): the gate, up and down of every MoE layer, past
// the leading dense ones. An expert tensor of a loaded layer that want
// lacks is refused as unused; skipped reports the tensors of blocks past
// the loaded layers (NextN/MTP), which it neither requires nor checks. An
// error says the runtime cannot read md (an architecture it does not
// support, a missing or invalid key).
func ExpertShapes(md *gguf.Metadata) (want map[string][]uint64, skipped func(name string) bool, err error) {
	c, err := readConfig(md)
	if err != nil {
		return nil, nil, err
	}
	want = map[string][]uint64{}
	for i := range c.Layers {
		if !c.moeLayer(i) {
			continue
		}
		for _, w := range expertWeights(&Layer{}, &c) {
			want[fmt.Sprintf("blk.%d.%s", i, w.name)] = []uint64{uint64(w.cols), uint64(w.rows), uint64(c.Experts)}
		}
	}
	return want, c.skipped, nil
}
