package ops_test

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/layout"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// planErr returns the error of planning or executing opts over data.
func planErr(t *testing.T, data []byte, opts ops.Options) error {
	t.Helper()
	p, _, err := ops.Plan(input(t, "in", data), opts)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	_, err = p.Execute(context.Background(), &out, plan.Options{})
	return err
}

// q2kExperts quantizes a generated F32 MoE model with its experts in Q2_K
// (the rest Q8_0, where it fits) by the project's quantizer, experts last.
func q2kExperts(t *testing.T, m fixture.Model) []byte {
	t.Helper()
	q := &ops.Quantize{Rules: &quant.Rules{Default: gguf.TypeQ8_0,
		TensorTypes: []quant.TensorTypeRule{{Regex: regexp.MustCompile(`_exps`), Type: gguf.TypeQ2_K}}}}
	out, _ := run(t, input(t, m.Name, m.Build()), ops.Options{Quant: q, ExpertsLast: true})
	return out
}

// TestQ2LUTBuild: on experts-last MoE files of several shapes, q2lut
// renames and repacks every Q2_K expert tensor at the same size, and
// --experts-layout none gives back the original file byte for byte.
func TestQ2LUTBuild(t *testing.T) {
	for _, m := range []fixture.Model{
		{Name: "moe-256", Layers: 2, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 4, ExpertsUsed: 2, Seed: 5},
		{Name: "moe-512", Layers: 1, Embd: 512, FF: 256, Heads: 8, KVHeads: 2, Vocab: 96, Experts: 3, ExpertsUsed: 2, Seed: 6},
		// 264 rows per gate/up expert: 16 full groups and an 8-row Q2_K
		// tail; down (264 columns) cannot be Q2_K and is left alone.
		{Name: "moe-tail", Layers: 1, Embd: 256, FF: 264, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 2, ExpertsUsed: 1, Seed: 7},
	} {
		base := q2kExperts(t, m)
		packed, rep := run(t, input(t, "base", base), ops.Options{ExpertsLayout: "q2lut"})
		if len(packed) <= len(base) {
			t.Errorf("%s: packed %d bytes, base %d (names and arrays grow the header only)", m.Name, len(packed), len(base))
		}
		pr, err := gguf.NewReader(bytes.NewReader(packed), int64(len(packed)))
		if err != nil {
			t.Fatal(err)
		}
		es, err := layout.Entries(pr.Metadata)
		if err != nil || len(es) == 0 || len(es) != len(rep.Layouts.Packed) {
			t.Fatalf("%s: entries %v %v", m.Name, es, err)
		}
		if info := experts.Describe(pr.File); info == nil || !info.Last || info.ExpertTensors != 3*m.Layers {
			t.Errorf("%s: packed file's experts: %+v", m.Name, info)
		}
		for _, e := range es {
			st, ok := pr.Tensor(e.Name)
			if !ok {
				t.Fatalf("%s: no %s", m.Name, e.Name)
			}
			if _, ok := pr.Tensor(e.Original()); ok {
				t.Errorf("%s: %s is still there under its original name", m.Name, e.Original())
			}
			orig, ti := tensorBytes(t, base, e.Original())
			got, _ := tensorBytes(t, packed, e.Name)
			want := make([]byte, len(orig))
			if err := layout.PackQ2LUT(want, orig, int64(ti.Dims[0]), int64(ti.Dims[1])); err != nil {
				t.Fatal(err)
			}
			if st.Type != gguf.TypeQ2_K || st.Size() != ti.Size() || !bytes.Equal(got, want) {
				t.Errorf("%s: %s: type %s, %d bytes (was %d), bytes as PackQ2LUT makes them: %v", m.Name, e.Name, st.Type, st.Size(), ti.Size(), bytes.Equal(got, want))
			}
		}
		if m.FF%256 != 0 && len(rep.Layouts.Kept) != m.Layers {
			t.Errorf("%s: kept %v", m.Name, rep.Layouts.Kept)
		}
		back, rep2 := run(t, input(t, "packed", packed), ops.Options{ExpertsLayout: "none"})
		if !bytes.Equal(back, base) {
			t.Errorf("%s: q2lut then none is not the original file", m.Name)
		}
		if len(rep2.Layouts.Restored) != len(es) {
			t.Errorf("%s: restored %d of %d", m.Name, len(rep2.Layouts.Restored), len(es))
		}
		// From a stream the same bytes come out.
		if s, _ := run(t, streamInput(t, "base", base), ops.Options{ExpertsLayout: "q2lut"}); !bytes.Equal(s, packed) {
			t.Errorf("%s: stream input differs", m.Name)
		}
	}
}

// TestQ2LUTRefusals: q2lut needs experts last and Q2_K experts; a packed
// file is not quantized or head-pruned as if its tensors were plain.
func TestQ2LUTRefusals(t *testing.T) {
	m := fixture.Model{Name: "moe", Layers: 1, Embd: 256, FF: 256, Heads: 4, KVHeads: 2, Vocab: 96, Experts: 2, ExpertsUsed: 1, Seed: 8}
	q := &ops.Quantize{Rules: &quant.Rules{Default: gguf.TypeQ8_0,
		TensorTypes: []quant.TensorTypeRule{{Regex: regexp.MustCompile(`_exps`), Type: gguf.TypeQ2_K}}}}
	interleaved, _ := run(t, input(t, "m", m.Build()), ops.Options{Quant: q})
	for _, c := range []struct {
		data []byte
		opts ops.Options
		want string
	}{
		{interleaved, ops.Options{ExpertsLayout: "q2lut"}, "needs the experts last"},
		{m.Build(), ops.Options{ExpertsLayout: "q2lut", ExpertsLast: true}, "no expert tensor is Q2_K"},
		{fixture.Dense().Build(), ops.Options{ExpertsLayout: "q2lut"}, "no expert tensors"},
		{interleaved, ops.Options{ExpertsLayout: "q2lut3"}, "want q2lut or none"},
	} {
		if err := planErr(t, c.data, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.opts, err, c.want)
		}
	}
	// Experts last and q2lut in one build equal the two steps.
	one, _ := run(t, input(t, "m", interleaved), ops.Options{ExpertsLast: true, ExpertsLayout: "q2lut"})
	last, _ := run(t, input(t, "m", interleaved), ops.Options{ExpertsLast: true})
	two, _ := run(t, input(t, "m", last), ops.Options{ExpertsLayout: "q2lut"})
	if !bytes.Equal(one, two) {
		t.Error("one-pass experts-last + q2lut differs from two passes")
	}
	if err := planErr(t, one, ops.Options{Quant: q}); err == nil || !strings.Contains(err.Error(), "restore them first") {
		t.Errorf("quantizing a packed file: %v", err)
	}
}

// ternaryModel is a generated dense model quantized to typ by the
// project's quantizer (--pure: every matrix typ).
func ternaryModel(t *testing.T, typ gguf.Type) []byte {
	t.Helper()
	m := fixture.Model{Name: "tern", Layers: 2, Embd: 256, FF: 512, Heads: 4, KVHeads: 2, Vocab: 96, Seed: 9}
	q := &ops.Quantize{Rules: &quant.Rules{Default: typ, Pure: true}}
	out, _ := run(t, input(t, "tern", m.Build()), ops.Options{Quant: q})
	return out
}

// TestTernaryBuild: every ternary layout of Q2_0, TQ1_0 and TQ2_0 models
// restores to the original file byte for byte where it is lossless; the
// lossy one needs --lossy and keeps TQ1_0/TQ2_0 exact.
func TestTernaryBuild(t *testing.T) {
	for _, typ := range []gguf.Type{gguf.TypeQ2_0, gguf.TypeTQ1_0, gguf.TypeTQ2_0} {
		base := ternaryModel(t, typ)
		for _, k := range []layout.Kind{layout.Ter3, layout.Ter2, layout.Ter2S128} {
			opts := ops.Options{TernaryLayout: string(k)}
			if !k.Lossless() {
				if err := planErr(t, base, opts); err == nil || !strings.Contains(err.Error(), "--lossy") {
					t.Errorf("%s %s without --lossy: %v", typ, k, err)
				}
				opts.LossyLayout = true
			}
			packed, rep := run(t, input(t, "base", base), opts)
			if len(rep.Layouts.Packed) == 0 {
				t.Fatalf("%s %s: nothing packed", typ, k)
			}
			r, err := gguf.NewReader(bytes.NewReader(packed), int64(len(packed)))
			if err != nil {
				t.Fatal(err)
			}
			for _, ti := range r.Tensors {
				if ti.Type == typ {
					t.Errorf("%s %s: %s left in %s", typ, k, ti.Name, typ)
				}
			}
			back, _ := run(t, input(t, "packed", packed), ops.Options{TernaryLayout: "none"})
			if same := bytes.Equal(back, base); same != (k.Lossless() || typ != gguf.TypeQ2_0) {
				t.Errorf("%s %s: restored file identical: %v", typ, k, same)
			}
		}
	}
}

// TestTernaryFourthCode: a Q2_0 tensor with a +2 weight is refused with
// an error naming the tensor and block.
func TestTernaryFourthCode(t *testing.T) {
	base := ternaryModel(t, gguf.TypeQ2_0)
	r, err := gguf.NewReader(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		t.Fatal(err)
	}
	ti, _ := r.Tensor("blk.1.ffn_up.weight")
	bad := append([]byte(nil), base...)
	// Block 37 of the tensor: its first code byte, weight 0 set to code 3.
	bad[r.DataOffset+int64(ti.Offset)+37*18+2] |= 3
	err = planErr(t, bad, ops.Options{TernaryLayout: "ter3"})
	if err == nil || !strings.Contains(err.Error(), `tensor "blk.1.ffn_up.weight" block 37 (row 9)`) || !strings.Contains(err.Error(), "+2") {
		t.Fatalf("got %v", err)
	}
}
