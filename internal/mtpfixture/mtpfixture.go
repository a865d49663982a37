package mtpfixture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/quant"
	"github.com/ggufkit/gguf/safetensors"
)

// hfMTPNames are the names Qwen3.5's checkpoints give the tensors of their
// MTP block (block N of a model of N layers), by llama.cpp's name after
// "blk.N.": what convert_hf_to_gguf.py maps (spelled here on their own, to
// check the mapping of package ops against).
var hfMTPNames = map[string]string{
	"attn_norm.weight":              "mtp.layers.0.input_layernorm.weight",
	"attn_q.weight":                 "mtp.layers.0.self_attn.q_proj.weight",
	"attn_k.weight":                 "mtp.layers.0.self_attn.k_proj.weight",
	"attn_v.weight":                 "mtp.layers.0.self_attn.v_proj.weight",
	"attn_output.weight":            "mtp.layers.0.self_attn.o_proj.weight",
	"attn_q_norm.weight":            "mtp.layers.0.self_attn.q_norm.weight",
	"attn_k_norm.weight":            "mtp.layers.0.self_attn.k_norm.weight",
	"post_attention_norm.weight":    "mtp.layers.0.post_attention_layernorm.weight",
	"ffn_gate.weight":               "mtp.layers.0.mlp.gate_proj.weight",
	"ffn_down.weight":               "mtp.layers.0.mlp.down_proj.weight",
	"ffn_up.weight":                 "mtp.layers.0.mlp.up_proj.weight",
	"ffn_gate_inp.weight":           "mtp.layers.0.mlp.gate.weight",
	"ffn_gate_exps.weight":          "mtp.layers.0.mlp.experts.%d.gate_proj.weight",
	"ffn_down_exps.weight":          "mtp.layers.0.mlp.experts.%d.down_proj.weight",
	"ffn_up_exps.weight":            "mtp.layers.0.mlp.experts.%d.up_proj.weight",
	"ffn_gate_inp_shexp.weight":     "mtp.layers.0.mlp.shared_expert_gate.weight",
	"ffn_gate_shexp.weight":         "mtp.layers.0.mlp.shared_expert.gate_proj.weight",
	"ffn_down_shexp.weight":         "mtp.layers.0.mlp.shared_expert.down_proj.weight",
	"ffn_up_shexp.weight":           "mtp.layers.0.mlp.shared_expert.up_proj.weight",
	"nextn.eh_proj.weight":          "mtp.fc.weight",
	"nextn.enorm.weight":            "mtp.pre_fc_norm_embedding.weight",
	"nextn.hnorm.weight":            "mtp.pre_fc_norm_hidden.weight",
	"nextn.shared_head_norm.weight": "mtp.norm.weight",
}

// MTPCase is a qwen35 or qwen35moe model and a Qwen3.5-style checkpoint of its MTP
// block, for the operation that adds one to the other.
type MTPCase struct {
	// Base is the model without its MTP block (block_count = Layers, no
	// nextn_predict_layers).
	Base []byte
	// Checkpoint is a safetensors file holding the block as the Hub's
	// checkpoints do: mtp.* names, shapes outermost first, BF16 values,
	// RMS norm weights stored as offsets from 1, a MoE FFN's experts one
	// tensor each and its shared-expert gate [1, embd]; listed in alphabetical
	// order as the reference writer orders them, after a main-model tensor
	// that is not the block's.
	Checkpoint []byte
	// Want is the model with the block as convert_hf_to_gguf.py writes it
	// with --outtype of the given type: the block's tensors in blk.N, norms
	// F32 with 1 added, the routers F32, the 2-D weights converted from BF16
	// (Q8_0 rows that are no whole blocks fall back to F16), the experts
	// stacked, block_count N+1 and
	// nextn_predict_layers 1 just before the ssm.* keys.
	Want []byte
}

// QwenMTP makes an MTPCase of m, a qwen35 or qwen35moe model with NextN
// 1, for an MTP block written as type out.
func QwenMTP(m fixture.Model, out gguf.Type) (*MTPCase, error) {
	return qwenMTP(m, out, false)
}

// QwenMTPFused is QwenMTP with a MoE block's experts stored fused, as
// recent transformers save Qwen3.5-MoE: mlp.experts.gate_up_proj, shape
// [experts, 2*ff, embd], each expert's gate rows then its up rows, and
// mlp.experts.down_proj, [experts, embd, ff] (both without ".weight").
// Want is the same model: the converter splits gate_up_proj on its
// second-to-last axis into the gate and up experts it stacks.
func QwenMTPFused(m fixture.Model, out gguf.Type) (*MTPCase, error) {
	return qwenMTP(m, out, true)
}

func qwenMTP(m fixture.Model, out gguf.Type, fused bool) (*MTPCase, error) {
	if (m.Arch != "qwen35" && m.Arch != "qwen35moe") || m.NextN != 1 {
		return nil, fmt.Errorf("mtpfixture: QwenMTP wants a qwen35 or qwen35moe model with NextN 1")
	}
	base := m
	base.NextN = 0
	full := m.Tensors()
	prefix := fmt.Sprintf("blk.%d.", m.Layers)
	rng := fixture.SplitMix64(m.Seed ^ 0x6d7470)
	type hf struct {
		name string
		w    safetensors.WriteTensor
	}
	var hfs []hf
	var gate, up []byte // a fused checkpoint's gate and up experts, till both are seen
	for i := range full {
		t := &full[i]
		suffix, ok := strings.CutPrefix(t.Info.Name, prefix)
		if !ok {
			continue
		}
		n := int(t.Info.NumElements())
		bf := make([]byte, 2*n)
		vals := make([]float32, n)
		norm := strings.HasSuffix(suffix, "norm.weight")
		for j := range vals {
			u := float32(int32(rng.Next()>>40)-1<<23) / (1 << 23) * 0.1
			h := quant.FP32ToBF16(u)
			binary.LittleEndian.PutUint16(bf[2*j:], h)
			vals[j] = quant.BF16ToFP32(h)
			if norm {
				vals[j] += 1
			}
		}
		typ := out
		if len(t.Info.Dims) == 1 || strings.HasPrefix(suffix, "ffn_gate_inp") {
			typ = gguf.TypeF32
		} else if out == gguf.TypeQ8_0 && t.Info.Dims[0]%32 != 0 {
			typ = gguf.TypeF16
		}
		t.Info.Type = typ
		t.Data = make([]byte, t.Info.Size())
		if err := quant.Quantize(typ, t.Data, vals, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Info.Name, err)
		}
		name, ok := hfMTPNames[suffix]
		if !ok {
			return nil, fmt.Errorf("mtpfixture: no checkpoint name for %s", t.Info.Name)
		}
		if len(t.Info.Dims) == 3 {
			// one [rows, cols] tensor per expert, experts outermost
			cols, rows, x := t.Info.Dims[0], t.Info.Dims[1], int(t.Info.Dims[2])
			per := 2 * int(cols*rows)
			if fused {
				switch suffix {
				case "ffn_gate_exps.weight":
					gate = bf
				case "ffn_up_exps.weight":
					up = bf
				default:
					n := "mtp.layers.0.mlp.experts.down_proj"
					hfs = append(hfs, hf{n, safetensors.WriteTensor{Name: n, DType: "BF16", Shape: []int64{int64(x), int64(rows), int64(cols)}, Data: bf}})
				}
				if gate != nil && up != nil {
					var gu []byte
					for e := range x {
						gu = append(append(gu, gate[e*per:(e+1)*per]...), up[e*per:(e+1)*per]...)
					}
					n := "mtp.layers.0.mlp.experts.gate_up_proj"
					hfs = append(hfs, hf{n, safetensors.WriteTensor{Name: n, DType: "BF16", Shape: []int64{int64(x), 2 * int64(rows), int64(cols)}, Data: gu}})
					gate, up = nil, nil
				}
				continue
			}
			for e := range x {
				en := fmt.Sprintf(name, e)
				hfs = append(hfs, hf{en, safetensors.WriteTensor{Name: en, DType: "BF16", Shape: []int64{int64(rows), int64(cols)}, Data: bf[e*per : (e+1)*per]}})
			}
			continue
		}
		shape := make([]int64, len(t.Info.Dims))
		for j, d := range t.Info.Dims {
			shape[len(shape)-1-j] = int64(d)
		}
		if suffix == "ffn_gate_inp_shexp.weight" {
			shape = []int64{1, shape[0]} // nn.Linear(hidden, 1)
		}
		hfs = append(hfs, hf{name, safetensors.WriteTensor{Name: name, DType: "BF16", Shape: shape, Data: bf}})
	}
	slices.SortFunc(hfs, func(a, b hf) int { return strings.Compare(a.name, b.name) })
	ws := []safetensors.WriteTensor{{Name: "model.language_model.norm.weight", DType: "BF16", Shape: []int64{int64(m.Embd)}, Data: make([]byte, 2*m.Embd)}}
	for _, h := range hfs {
		ws = append(ws, h.w)
	}
	var ck bytes.Buffer
	if err := safetensors.Write(&ck, map[string]string{"format": "pt"}, ws); err != nil {
		return nil, err
	}
	a := m.Arch
	kvs := slices.DeleteFunc(slices.Clone(m.Metadata().KVs()), func(kv gguf.KV) bool { return kv.Key == a+".nextn_predict_layers" })
	at := slices.IndexFunc(kvs, func(kv gguf.KV) bool { return kv.Key == a+".ssm.conv_kernel" })
	kvs = slices.Insert(kvs, at, gguf.KV{Key: a + ".nextn_predict_layers", Value: gguf.Uint32(1)})
	md, err := gguf.NewMetadata(kvs...)
	if err != nil {
		return nil, err
	}
	return &MTPCase{Base: base.Build(), Checkpoint: ck.Bytes(), Want: fixture.Write(md, full)}, nil
}

// WithFiller returns checkpoint ck with a BF16 tensor of the main model,
// [rows, 64], in front of its own, as a real shard holds far more than the
// MTP block.
func WithFiller(ck []byte, rows int64) ([]byte, error) {
	f, err := safetensors.Parse(bytes.NewReader(ck), int64(len(ck)))
	if err != nil {
		return nil, err
	}
	ws := []safetensors.WriteTensor{{Name: "model.language_model.embed_tokens.weight", DType: "BF16", Shape: []int64{rows, 64}, Data: make([]byte, rows*64*2)}}
	for _, x := range f.Tensors {
		ws = append(ws, safetensors.WriteTensor{Name: x.Name, DType: x.DType, Shape: x.Shape, Data: ck[x.Off : x.Off+x.Len]})
	}
	var b bytes.Buffer
	if err := safetensors.Write(&b, f.Metadata, ws); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
