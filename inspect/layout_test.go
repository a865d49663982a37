package inspect_test

import (
	"bytes"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/inspect"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/opstest"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/quant"
)

func build(t *testing.T, data []byte, opts ops.Options) []byte {
	t.Helper()
	return opstest.Build(t, "in", data, opts)
}

// TestLayoutBitsPerWeight: info reports each ternary layout with the
// weights of the original tensors, so bits/weight are the layouts' own:
// 1.875 (ter3), 2.25 (ter2), 2.125 (ter2s128), and the parameter count and
// roles are those of the unpacked model.
func TestLayoutBitsPerWeight(t *testing.T) {
	m := fixture.Model{Name: "tern", Layers: 1, Embd: 256, FF: 512, Heads: 4, KVHeads: 2, Vocab: 96, Seed: 3}
	for _, typ := range []gguf.Type{gguf.TypeQ2_0, gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
		base := build(t, m.Build(), ops.Options{Quant: &ops.Quantize{Rules: &quant.Rules{Default: typ, Pure: true}}})
		rb, _ := gguf.NewReader(bytes.NewReader(base), int64(len(base)))
		want := inspect.Summarize("base", rb.File, int64(len(base)))
		for kind, bpw := range map[string]float64{"ter3": 1.875, "ter2": 2.25, "ter2s128": 2.125} {
			data := build(t, base, ops.Options{TernaryLayout: kind, LossyLayout: true})
			r, _ := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
			s := inspect.Summarize("x", r.File, int64(len(data)))
			if len(s.Layouts) != 1 || s.Layouts[0].BPW != bpw || s.Layouts[0].From != typ.String() || s.LayoutError != "" {
				t.Fatalf("%s %s: %+v %s", typ, kind, s.Layouts, s.LayoutError)
			}
			if s.Layouts[0].Lossless != (kind != "ter2s128" || typ != gguf.TypeQ2_0) {
				t.Errorf("%s %s: lossless %v", typ, kind, s.Layouts[0].Lossless)
			}
			if s.Parameters != want.Parameters {
				t.Errorf("%s %s: %d parameters, the original has %d", typ, kind, s.Parameters, want.Parameters)
			}
			for i, g := range s.ByRole {
				if g.Name != want.ByRole[i].Name || g.Parameters != want.ByRole[i].Parameters {
					t.Errorf("%s %s: role %+v, original %+v", typ, kind, g, want.ByRole[i])
				}
			}
		}
	}
}
