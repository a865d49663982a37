package engine

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/opstest"
	"github.com/ggufkit/gguf/kernels"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/quant"
)

// runOps rewrites the GGUF file src with opts as `gguf build` does.
func runOps(t testing.TB, src []byte, opts ops.Options) []byte {
	t.Helper()
	return opstest.Build(t, "in.gguf", src, opts)
}

// q2kAndQ2LUT returns a generated MoE model with its experts in Q2_K, the
// output matrix in F32 (so that the hidden state reaches the logits
// without a quantization that would absorb its last bits) and the rest in
// Q8_0, experts last, and the same file with `gguf layout --experts q2lut`
// applied.
func q2kAndQ2LUT(t testing.TB, s crosscheck.Shape) (q2k, lut []byte) {
	t.Helper()
	f32 := gguf.TypeF32
	q := &ops.Quantize{Rules: &quant.Rules{Default: gguf.TypeQ8_0, OutputType: &f32,
		TensorTypes: []quant.TensorTypeRule{{Regex: regexp.MustCompile(`_exps`), Type: gguf.TypeQ2_K}}}}
	q2k = runOps(t, crosscheck.F32(s), ops.Options{Quant: q, ExpertsLast: true})
	return q2k, runOps(t, q2k, ops.Options{ExpertsLayout: "q2lut"})
}

// writeModel writes b to dir/name and returns the path.
func writeModel(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestQ2LUTModel: a Mixtral-style MoE with Q2_K experts and the same file
// converted to q2lut give bit-identical logits (the prompt as one batch,
// then greedy tokens one at a time) and the same greedy text, with one and
// two threads, under every kernel set this CPU runs, each file with the
// set's own kernels: the q2lut kernel takes the float steps of the set's
// Q2_K kernel (ggml's AVX2 lanes with avx2 and vnni), so a layout changes
// nothing in what a model computes. One shape has 264-row gate/up experts
// (16 groups and 8 plain Q2_K tail rows). The activations' quantization
// between matrices absorbs some last-bit differences, so the row-level bit
// test is TestQ2LUTKernelBitExact.
func TestQ2LUTModel(t *testing.T) {
	defer kernels.SelectKernels("")
	shapes := []crosscheck.Shape{crosscheck.Shapes["moe"],
		{Name: "moe", Model: fixture.Model{Name: "q2lut-tail", Layers: 2, Embd: 256, FF: 264, Heads: 8, KVHeads: 4,
			Vocab: 512, Experts: 4, ExpertsUsed: 2, Seed: 121}}}
	const steps = 12
	for _, sh := range shapes {
		q2k, lut := q2kAndQ2LUT(t, sh)
		dir := t.TempDir()
		mq := openModel(t, writeModel(t, dir, "q2k.gguf", q2k))
		ml := openModel(t, writeModel(t, dir, "q2lut.gguf", lut))
		groups, tails := 0, 0
		for _, l := range ml.Layers {
			for _, es := range [][]*Matrix{l.GateExps, l.UpExps, l.DownExps} {
				for _, e := range es {
					if e.IsQ2LUT() {
						groups += e.Rows / layout.GroupRows
						tails += e.Rows % layout.GroupRows
					}
				}
			}
		}
		if groups == 0 {
			t.Fatalf("%s: no expert runs the q2lut kernel", sh.Model.Name)
		}
		for _, set := range kernels.KernelSets() {
			if err := kernels.SelectKernels(set); err != nil {
				t.Fatal(err)
			}
			want, wantLogits := greedyRun(t, newState(t, mq, Options{Ctx: 64}), crosscheck.PromptIDs, steps)
			for _, threads := range []int{1, 2} {
				got, gotLogits := greedyRun(t, newState(t, ml, Options{Ctx: 64, Threads: threads}), crosscheck.PromptIDs, steps)
				if !slices.Equal(got, want) {
					t.Fatalf("%s set %s threads %d: greedy %v, Q2_K file %v", sh.Model.Name, set, threads, got, want)
				}
				for i := range gotLogits {
					for v := range gotLogits[i] {
						if math.Float32bits(gotLogits[i][v]) != math.Float32bits(wantLogits[i][v]) {
							t.Fatalf("%s set %s threads %d: step %d logit %d: q2lut %.9g, Q2_K %.9g", sh.Model.Name, set, threads, i, v, gotLogits[i][v], wantLogits[i][v])
						}
					}
				}
			}
			t.Logf("%s: set %s: %d steps x %d logits bit-identical (%d groups, %d tail rows); greedy %v",
				sh.Model.Name, set, len(wantLogits), len(wantLogits[0]), groups, tails, want)
		}
	}
}

// TestQ2LUTRefused: files whose layout metadata does not match their
// tensors fail to open with one clear line.
func TestQ2LUTRefused(t *testing.T) {
	sh := crosscheck.Shape{Name: "moe", Model: fixture.Model{Name: "q2lut-bad", Layers: 1, Embd: 256, FF: 256, Heads: 8,
		KVHeads: 4, Vocab: 512, Experts: 2, ExpertsUsed: 1, Seed: 122}}
	_, lut := q2kAndQ2LUT(t, sh)
	r, err := gguf.NewReader(bytes.NewReader(lut), int64(len(lut)))
	if err != nil {
		t.Fatal(err)
	}
	es, err := layout.Entries(r.Metadata)
	if err != nil || len(es) != 3 {
		t.Fatalf("entries %v %v", es, err)
	}
	// rewrite returns the file with metadata entries es and the tensor
	// table changed by edit.
	rewrite := func(es []layout.Entry, edit func(ts []fixture.Tensor) []fixture.Tensor) []byte {
		md := r.Metadata.Clone()
		layout.SetEntries(md, es)
		var ts []fixture.Tensor
		for i, ti := range r.Tensors {
			off := r.TensorFileOffset(i)
			ts = append(ts, fixture.Tensor{Info: ti, Data: lut[off : off+ti.Size()]})
		}
		if edit != nil {
			ts = edit(ts)
		}
		return fixture.Write(md, ts)
	}
	rename := func(from, to string) func([]fixture.Tensor) []fixture.Tensor {
		return func(ts []fixture.Tensor) []fixture.Tensor {
			for i := range ts {
				if ts[i].Info.Name == from {
					ts[i].Info.Name = to
				}
			}
			return ts
		}
	}
	ter3 := es[0]
	ter3.Name, ter3.Kind, ter3.From = ter3.Original()+".ter3", layout.Ter3, gguf.TypeQ2_0
	notExpert := es[0]
	notExpert.Name = "blk.0.ffn_gate_inp.weight.q2lut"
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"unlisted", rewrite(es[1:], nil), `tensor "` + es[0].Name + `" is named like layout q2lut but metadata ggufkit.layout.tensors does not list it`},
		{"missing", rewrite(es, rename(es[0].Name, es[0].Original()+".other")), `lists tensor "` + es[0].Name + `", which the file does not have`},
		{"ternary", rewrite(append([]layout.Entry{ter3}, es[1:]...), rename(es[0].Name, ter3.Name)), "which the runtime does not run"},
		{"not experts", rewrite(append(es, notExpert), rename("blk.0.ffn_gate_inp.weight", notExpert.Name)), "layout q2lut is for expert tensors"},
		{"shape", rewrite(es, func(ts []fixture.Tensor) []fixture.Tensor {
			for i := range ts {
				if ts[i].Info.Name == es[0].Name {
					ts[i].Info.Dims = []uint64{512, 128, 2}
				}
			}
			return ts
		}), `tensor "` + es[0].Name + `" has shape`},
		{"both", rewrite(es, func(ts []fixture.Tensor) []fixture.Tensor {
			d := ts[len(ts)-1]
			d.Info.Name = es[0].Original()
			return append(ts, d)
		}), "both in layout q2lut and as itself"},
	} {
		p := writeModel(t, t.TempDir(), "bad.gguf", c.file)
		m, err := Open(p)
		if err == nil {
			m.Close()
			t.Errorf("%s: opened", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
