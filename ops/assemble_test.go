package ops_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
)

// reordered returns m's file with its tensors in reverse order.
func reordered(t *testing.T, m fixture.Model) []byte {
	t.Helper()
	ts := m.Tensors()
	slices.Reverse(ts)
	return fixture.Write(m.Metadata(), ts)
}

// TestAssembleOrderAndBytes: the output holds the base's non-experts in
// the base's order, then the experts in the experts file's order (even when
// the base lists its own experts differently), each with the experts
// file's bytes.
func TestAssembleOrderAndBytes(t *testing.T) {
	base := input(t, "base", fixture.MoE().Build())
	m := fixture.MoE()
	m.Seed = 9
	expData := reordered(t, m)
	exps := input(t, "exps", expData)
	p, rep, err := ops.Assemble(base, exps, ops.AssembleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ti := range base.File.Tensors {
		if !experts.IsExpert(ti.Name) {
			want = append(want, ti.Name)
		}
	}
	for _, ti := range exps.File.Tensors {
		if experts.IsExpert(ti.Name) {
			want = append(want, ti.Name)
		}
	}
	var got []string
	for _, pt := range p.Tensors {
		got = append(got, pt.Info.Name)
	}
	if !slices.Equal(got, want) {
		t.Errorf("order\n got %v\nwant %v", got, want)
	}
	if len(rep.Replaced) != 6 || len(rep.Added) != 0 || rep.ExpertTensors != 6 {
		t.Errorf("report: %d replaced, %d added, %d experts", len(rep.Replaced), len(rep.Added), rep.ExpertTensors)
	}
	var out bytes.Buffer
	if _, err := p.Execute(context.Background(), &out, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	data := out.Bytes()
	for _, name := range want {
		g, _ := tensorBytes(t, data, name)
		src := expData
		if !experts.IsExpert(name) {
			src = fixture.MoE().Build()
		}
		w, _ := tensorBytes(t, src, name)
		if !bytes.Equal(g, w) {
			t.Errorf("%s: bytes differ from its source", name)
		}
	}
}

// TestAssembleRefusesRepackedAndStrays: repacked experts in either input,
// and an expert tensor outside the base's layers, are refused.
func TestAssembleRefusesRepackedAndStrays(t *testing.T) {
	base := input(t, "base", fixture.MoE().Build())
	deep := fixture.MoE()
	deep.Layers = 3
	if _, _, err := ops.Assemble(base, input(t, "deep", deep.Build()), ops.AssembleOptions{}); err == nil || !strings.Contains(err.Error(), "outside the base's 2 layers") {
		t.Errorf("expert of layer 2 into a 2-layer base: %v", err)
	}
	q := fixture.MoE()
	q.Embd, q.FF = 256, 256
	q.Type = gguf.TypeQ2_K
	qIn := input(t, "q2k", q.Build())
	p, _, err := ops.Assemble(qIn, qIn, ops.AssembleOptions{ExpertsLayout: "q2lut"})
	if err != nil {
		t.Fatal(err)
	}
	var packed bytes.Buffer
	if _, err := p.Execute(context.Background(), &packed, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	lut := input(t, "lut", packed.Bytes())
	for _, c := range [][2]*plan.Input{{lut, qIn}, {qIn, lut}} {
		if _, _, err := ops.Assemble(c[0], c[1], ops.AssembleOptions{}); err == nil || !strings.Contains(err.Error(), "repacked expert tensors") {
			t.Errorf("assemble %s + %s: %v", c[0].Name, c[1].Name, err)
		}
	}
}

// withoutExperts returns data's model without its expert tensors, as
// `gguf fetch --exclude _exps` makes it.
func withoutExperts(t *testing.T, m fixture.Model) []byte {
	t.Helper()
	var ts []fixture.Tensor
	for _, x := range m.Tensors() {
		if !experts.IsExpert(x.Info.Name) {
			ts = append(ts, x)
		}
	}
	return fixture.Write(m.Metadata(), ts)
}

// TestAssembleChecksBaseMetadata: into a base without experts, experts
// whose shapes or layers disagree with the base's metadata as the
// runtime's loader reads it (engine.ExpertShapes) (embedding width, expert FFN width, the
// leading dense layers, a missing layer) are refused; the right ones pass.
func TestAssembleChecksBaseMetadata(t *testing.T) {
	moe := func(seed uint64, edit func(*fixture.Model)) fixture.Model {
		m := fixture.Model{Arch: "bailingmoe2", Name: "asm-ling", Layers: 3, Embd: 64, FF: 128, Heads: 4, KVHeads: 2,
			Vocab: 96, Experts: 4, ExpertsUsed: 2, ExpertFF: 32, SharedExperts: 1, DenseLead: 1, Sigmoid: true, Seed: seed}
		if edit != nil {
			edit(&m)
		}
		return m
	}
	base := input(t, "base", withoutExperts(t, moe(1, nil)))
	if _, _, err := ops.Assemble(base, input(t, "right", moe(2, nil).Build()), ops.AssembleOptions{ExpertShapes: engine.ExpertShapes}); err != nil {
		t.Fatalf("the right experts: %v", err)
	}
	for _, c := range []struct {
		what string
		edit func(*fixture.Model)
		want string
	}{
		{"embedding 128", func(m *fixture.Model) { m.Embd = 128 }, `"blk.1.ffn_gate_exps.weight" has shape [128, 32, 4], the base base's metadata needs [64, 32, 4]`},
		{"expert FFN 64", func(m *fixture.Model) { m.ExpertFF = 64 }, `"blk.1.ffn_gate_exps.weight" has shape [64, 64, 4]`},
		{"no dense layer", func(m *fixture.Model) { m.DenseLead = 0 }, `"blk.0.ffn_gate_exps.weight" is not an expert weight the runtime reads`},
		{"two layers", func(m *fixture.Model) { m.Layers = 2 }, `lacks tensor "blk.2.ffn_down_exps.weight"`},
	} {
		_, _, err := ops.Assemble(base, input(t, c.what, moe(2, c.edit).Build()), ops.AssembleOptions{ExpertShapes: engine.ExpertShapes})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}

// renamed returns m's file as an architecture the runtime does not read
// (its <arch>.* keys renamed), with expert_feed_forward_length.
func renamed(t *testing.T, m fixture.Model, arch string, withExperts bool) []byte {
	t.Helper()
	md, err := gguf.NewMetadata()
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range m.Metadata().KVs() {
		key := kv.Key
		if rest, ok := strings.CutPrefix(key, "llama."); ok {
			key = arch + "." + rest
		}
		md.Set(key, kv.Value)
	}
	md.Set(gguf.KeyArchitecture, gguf.String(arch))
	md.Set(arch+".expert_feed_forward_length", gguf.Uint32(uint32(m.FF)))
	ts := m.Tensors()
	if !withExperts {
		return fixture.Write(md, slices.DeleteFunc(ts, func(x fixture.Tensor) bool { return experts.IsExpert(x.Info.Name) }))
	}
	return fixture.Write(md, ts)
}

// TestAssembleChecksBaseKeys: for an architecture the runtime does not
// read, the experts are checked against the base's embedding_length,
// expert_feed_forward_length and block_count keys.
func TestAssembleChecksBaseKeys(t *testing.T) {
	moe := func(seed uint64, edit func(*fixture.Model)) fixture.Model {
		m := fixture.MoE()
		m.Seed = seed
		if edit != nil {
			edit(&m)
		}
		return m
	}
	base := input(t, "base", renamed(t, moe(1, nil), "deepseek2", false))
	if _, _, err := ops.Assemble(base, input(t, "right", renamed(t, moe(2, nil), "deepseek2", true)), ops.AssembleOptions{}); err != nil {
		t.Fatalf("the right experts: %v", err)
	}
	for _, c := range []struct {
		what string
		edit func(*fixture.Model)
		want string
	}{
		{"embedding 128", func(m *fixture.Model) { m.Embd = 128 }, "the base base's embedding_length is 64"},
		{"expert FFN 128", func(m *fixture.Model) { m.FF = 128 }, "the base base's expert_feed_forward_length is 64"},
		{"one layer", func(m *fixture.Model) { m.Layers = 1 }, "has no expert tensors for layer 1"},
	} {
		exps := renamed(t, moe(2, c.edit), "deepseek2", true)
		_, _, err := ops.Assemble(base, input(t, c.what, exps), ops.AssembleOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.what, err, c.want)
		}
	}
}
