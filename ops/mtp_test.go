package ops_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/mtpfixture"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/safetensors"
)

// mtpSource opens a safetensors file as an --add-mtp source.
func mtpSource(t testing.TB, name string, b []byte) ops.MTPSource {
	t.Helper()
	f, err := safetensors.Parse(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return ops.MTPSource{Input: &plan.Input{Name: name, ReaderAt: bytes.NewReader(b)}, File: f}
}

// mtpSourceWith is mtpSource with edit applied to each tensor of its
// header.
func mtpSourceWith(t testing.TB, name string, b []byte, edit func(*safetensors.Tensor)) ops.MTPSource {
	s := mtpSource(t, name, b)
	for i := range s.File.Tensors {
		edit(&s.File.Tensors[i])
	}
	return s
}

// TestAddMTPEqualsConverted: a qwen35 model without its MTP block plus a
// checkpoint holding the block (BF16, Hugging Face names, norms stored
// minus 1) is, byte for byte, the model with the block as
// convert_hf_to_gguf.py writes it, for each --outtype (F32, F16, BF16,
// Q8_0 with its F16 fallback), the main weights F32 or Q8_0; so is a
// qwen35moe model's, its block's FFN a MoE (one checkpoint tensor per
// expert, stacked into ffn_*_exps; the shared-expert gate [1, embd]; the
// routers F32), and so is one whose experts are stored fused
// (gate_up_proj split into the gate and up experts).
func TestAddMTPEqualsConverted(t *testing.T) {
	for _, tc := range []struct {
		model func(gguf.Type) fixture.Model
		case_ func(fixture.Model, gguf.Type) (*mtpfixture.MTPCase, error)
		added int
		at    int // index in the added names of want
		want  string
	}{
		{fixture.Qwen35MTP, mtpfixture.QwenMTP, 15, 0, "blk.2.attn_norm.weight"},
		{fixture.Qwen35MoEMTP, mtpfixture.QwenMTP, 20, 9, "blk.2.ffn_gate_exps.weight"},
		{fixture.Qwen35MoEMTP, mtpfixture.QwenMTPFused, 20, 11, "blk.2.ffn_up_exps.weight"},
	} {
		for _, main := range []gguf.Type{gguf.TypeF32, gguf.TypeQ8_0} {
			for _, out := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0} {
				m := tc.model(main)
				c, err := tc.case_(m, out)
				if err != nil {
					t.Fatal(err)
				}
				got, rep := run(t, input(t, "base.gguf", c.Base), ops.Options{MTP: &ops.MTP{
					Sources: []ops.MTPSource{mtpSource(t, "mtp.safetensors", c.Checkpoint)}, Type: out, Threads: 2}})
				if !bytes.Equal(got, c.Want) {
					t.Fatalf("%s, main %s, MTP %s: output differs from the converted model (%d vs %d bytes)", m.Arch, main, out, len(got), len(c.Want))
				}
				if out == gguf.TypeBF16 {
					// the checkpoint is BF16: the converter's auto keeps it
					got, _ = run(t, input(t, "base.gguf", c.Base), ops.Options{MTP: &ops.MTP{
						Sources: []ops.MTPSource{mtpSource(t, "mtp.safetensors", c.Checkpoint)}, Type: gguf.TypeQ8_0, Auto: true}})
					if !bytes.Equal(got, c.Want) {
						t.Fatalf("%s, main %s, MTP auto: not the BF16 output", m.Arch, main)
					}
				}
				if len(rep.Added) != tc.added || rep.Added[tc.at] != tc.want {
					t.Fatalf("%s: added %v", m.Arch, rep.Added)
				}
			}
		}
	}
}

// TestAddMTPMoEErrors: the experts with one missing, or split over two
// files, or both fused and one tensor each, or a fused gate_up_proj of the
// wrong shape, are refused with a clear error.
func TestAddMTPMoEErrors(t *testing.T) {
	c, err := mtpfixture.QwenMTP(fixture.Qwen35MoEMTP(gguf.TypeF32), gguf.TypeF32)
	if err != nil {
		t.Fatal(err)
	}
	f, err := mtpfixture.QwenMTPFused(fixture.Qwen35MoEMTP(gguf.TypeF32), gguf.TypeF32)
	if err != nil {
		t.Fatal(err)
	}
	ckWith := func(name string, edit func(*safetensors.Tensor)) ops.MTPSource {
		return mtpSourceWith(t, name, c.Checkpoint, edit)
	}
	rename := func(from, to string) func(*safetensors.Tensor) {
		return func(x *safetensors.Tensor) {
			if x.Name == from {
				x.Name = to
			}
		}
	}
	keepOnly := func(prefix string, keep bool) func(*safetensors.Tensor) {
		return func(x *safetensors.Tensor) {
			if strings.HasPrefix(x.Name, prefix) != keep {
				x.Name = "model.other." + x.Name
			}
		}
	}
	cases := []struct {
		name    string
		sources []ops.MTPSource
		want    string
	}{
		{"fused 2-D", []ops.MTPSource{mtpSourceWith(t, "b", f.Checkpoint, func(x *safetensors.Tensor) {
			if strings.HasSuffix(x.Name, "gate_up_proj") {
				x.Shape = []int64{x.Shape[0] * x.Shape[1], x.Shape[2]}
			}
		})}, "a fused gate_up_proj is [experts, 2*ff, embd]"},
		{"fused and not", []ops.MTPSource{ckWith("a", keepOnly("mtp.layers.0.mlp.experts.", true)), mtpSource(t, "b", f.Checkpoint)}, "blk.2.ffn_gate_exps.weight is both in mtp.layers.0.mlp.experts.0.gate_proj.weight (a)"},
		{"fused odd", []ops.MTPSource{mtpSourceWith(t, "b", f.Checkpoint, func(x *safetensors.Tensor) {
			if strings.HasSuffix(x.Name, "gate_up_proj") {
				x.Shape = []int64{x.Shape[0], x.Shape[1] - 1, x.Shape[2]}
			}
		})}, "a fused gate_up_proj is [experts, 2*ff, embd]"},
		{"fused empty", []ops.MTPSource{mtpSourceWith(t, "b", f.Checkpoint, func(x *safetensors.Tensor) {
			if strings.HasSuffix(x.Name, "gate_up_proj") {
				x.Shape, x.Len = []int64{1 << 40, 0, 64}, 0
			}
		})}, "a fused gate_up_proj is [experts, 2*ff, embd]"},
		{"fused index", []ops.MTPSource{ckWith("a", rename("mtp.layers.0.mlp.experts.0.gate_proj.weight", "mtp.layers.0.mlp.experts.x.gate_proj.weight"))}, "an expert's index, gate_up_proj or down_proj"},
		{"missing", []ops.MTPSource{ckWith("a", rename("mtp.layers.0.mlp.experts.1.up_proj.weight", "mtp.layers.0.mlp.experts.5.up_proj.weight"))}, "expert 1 of blk.2.ffn_up_exps.weight is missing"},
		{"count", []ops.MTPSource{ckWith("a", rename("mtp.layers.0.mlp.experts.3.up_proj.weight", "model.other"))}, "the model wants [64 64 4]"},
		{"split", []ops.MTPSource{ckWith("a", keepOnly("mtp.layers.0.mlp.experts.0.", false)), ckWith("b", keepOnly("mtp.layers.0.mlp.experts.0.", true))}, "only experts of one file are stacked"},
		{"differ", []ops.MTPSource{ckWith("a", func(x *safetensors.Tensor) {
			if x.Name == "mtp.layers.0.mlp.experts.2.down_proj.weight" {
				x.DType = "F16"
			}
		})}, "the experts differ"},
	}
	for _, tc := range cases {
		_, _, err := ops.Plan(input(t, "base.gguf", c.Base), ops.Options{MTP: &ops.MTP{Sources: tc.sources, Type: gguf.TypeF32}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestAddMTPFusedWeightSuffix: the fused experts named with ".weight"
// (mlp.experts.gate_up_proj.weight), as the converter also takes them,
// give the same model.
func TestAddMTPFusedWeightSuffix(t *testing.T) {
	c, err := mtpfixture.QwenMTPFused(fixture.Qwen35MoEMTP(gguf.TypeF32), gguf.TypeF16)
	if err != nil {
		t.Fatal(err)
	}
	s := mtpSourceWith(t, "mtp.safetensors", c.Checkpoint, func(x *safetensors.Tensor) {
		if strings.HasSuffix(x.Name, "_proj") {
			x.Name += ".weight"
		}
	})
	got, _ := run(t, input(t, "base.gguf", c.Base), ops.Options{MTP: &ops.MTP{Sources: []ops.MTPSource{s}, Type: gguf.TypeF16}})
	if !bytes.Equal(got, c.Want) {
		t.Fatal("gate_up_proj.weight: output differs from the converted model")
	}
}

// TestAddMTPFourLayers: a model of four layers (as many as
// rope.dimension_sections has entries, an array that is no per-layer key)
// takes its block too.
func TestAddMTPFourLayers(t *testing.T) {
	m := fixture.Qwen35MTP(gguf.TypeF32)
	m.Layers = 4
	c, err := mtpfixture.QwenMTP(m, gguf.TypeQ8_0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := run(t, input(t, "base.gguf", c.Base), ops.Options{MTP: &ops.MTP{
		Sources: []ops.MTPSource{mtpSource(t, "mtp.safetensors", c.Checkpoint)}, Type: gguf.TypeQ8_0}})
	if !bytes.Equal(got, c.Want) {
		t.Fatal("four layers: output differs from the converted model")
	}
}

// TestAddMTPErrors: what --add-mtp refuses, each with a clear error.
func TestAddMTPErrors(t *testing.T) {
	c, err := mtpfixture.QwenMTP(fixture.Qwen35MTP(gguf.TypeF32), gguf.TypeF32)
	if err != nil {
		t.Fatal(err)
	}
	ck := mtpSource(t, "mtp.safetensors", c.Checkpoint)
	ckWith := func(edit func(*safetensors.Tensor)) ops.MTPSource {
		s := mtpSource(t, "mtp.safetensors", c.Checkpoint)
		for i := range s.File.Tensors {
			edit(&s.File.Tensors[i])
		}
		return s
	}
	var plainST bytes.Buffer
	if err := safetensors.Write(&plainST, nil, []safetensors.WriteTensor{{Name: "model.norm.weight", DType: "BF16", Shape: []int64{64}, Data: make([]byte, 128)}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		base []byte
		m    ops.MTP
		want string
	}{
		{"has one", c.Want, ops.MTP{Sources: []ops.MTPSource{ck}, Type: gguf.TypeF32}, "already has 1 NextN/MTP layers"},
		{"not qwen35", fixture.Dense().Build(), ops.MTP{Sources: []ops.MTPSource{ck}, Type: gguf.TypeF32}, "only a qwen35 or qwen35moe"},
		{"bad type", c.Base, ops.MTP{Sources: []ops.MTPSource{ck}, Type: gguf.TypeQ4_K}, "want f32, f16, bf16 or q8_0"},
		{"no mtp", c.Base, ops.MTP{Sources: []ops.MTPSource{mtpSource(t, "plain.safetensors", plainST.Bytes())}, Type: gguf.TypeF32}, "no mtp.* tensor in plain.safetensors"},
		{"twice", c.Base, ops.MTP{Sources: []ops.MTPSource{ck, ck}, Type: gguf.TypeF32}, "is in both"},
		{"unknown", c.Base, ops.MTP{Sources: []ops.MTPSource{ckWith(func(x *safetensors.Tensor) {
			if x.Name == "mtp.fc.weight" {
				x.Name = "mtp.layers.0.mlp.expert.0.up_proj.weight"
			}
		})}, Type: gguf.TypeF32}, "not a tensor of a Qwen3.5 MTP block"},
		{"moe block, dense model", c.Base, ops.MTP{Sources: []ops.MTPSource{ckWith(func(x *safetensors.Tensor) {
			if x.Name == "mtp.layers.0.mlp.up_proj.weight" {
				x.Name = "mtp.layers.0.mlp.experts.0.up_proj.weight"
			}
		})}, Type: gguf.TypeF32}, "the model has no ffn_up_exps.weight"},
		{"shape", c.Base, ops.MTP{Sources: []ops.MTPSource{ckWith(func(x *safetensors.Tensor) {
			if x.Name == "mtp.layers.0.self_attn.k_proj.weight" {
				x.Shape = []int64{x.Shape[1], x.Shape[0]}
			}
		})}, Type: gguf.TypeF32}, "the model wants [64 32]"},
		{"dtype", c.Base, ops.MTP{Sources: []ops.MTPSource{ckWith(func(x *safetensors.Tensor) { x.DType = "I16" })}, Type: gguf.TypeF32}, "dtype I16"},
	}
	for _, tc := range cases {
		m := tc.m
		_, _, err := ops.Plan(input(t, "base.gguf", tc.base), ops.Options{MTP: &m})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	// a per-layer array can't be extended by guessing
	f, err := gguf.NewReader(bytes.NewReader(c.Base), int64(len(c.Base)))
	if err != nil {
		t.Fatal(err)
	}
	mdc := f.File.Metadata.Clone()
	mdc.Set("qwen35.attention.head_count_kv", gguf.MustArray([]uint32{0, 1}))
	var ts []fixture.Tensor
	for _, ti := range f.File.Tensors {
		r := plan.Range{Off: f.File.DataOffset + int64(ti.Offset), Len: ti.Size()}
		ti.Offset = 0
		ts = append(ts, fixture.Tensor{Info: ti, Data: c.Base[r.Off:r.End()]})
	}
	perLayer := fixture.Write(mdc, ts)
	_, _, err = ops.Plan(input(t, "base.gguf", perLayer), ops.Options{MTP: &ops.MTP{Sources: []ops.MTPSource{ck}, Type: gguf.TypeF32}})
	if err == nil || !strings.Contains(err.Error(), "head_count_kv has an entry per layer") {
		t.Errorf("per-layer key: %v", err)
	}
}
