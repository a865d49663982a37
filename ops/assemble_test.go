package ops_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

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
