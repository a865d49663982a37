package engine

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
)

// mutated writes the shape's F32 model after edit has changed its
// metadata and tensor table (a tensor whose Dims edit changed gets zero
// data of its new size; one edit removed is dropped).
func mutated(t *testing.T, shape string, edit func(md *gguf.Metadata, infos []gguf.TensorInfo) []gguf.TensorInfo) string {
	t.Helper()
	src := crossBytes(t, crosscheck.Case{Shape: shape, Type: "F32"})
	r, err := gguf.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		t.Fatal(err)
	}
	data := map[string][]byte{}
	for i, ti := range r.Tensors {
		if data[ti.Name], err = io.ReadAll(r.TensorData(i)); err != nil {
			t.Fatal(err)
		}
	}
	md := r.Metadata.Clone()
	infos := edit(md, append([]gguf.TensorInfo(nil), r.Tensors...))
	var datas [][]byte
	for i := range infos {
		infos[i].Offset = 0
		d := data[infos[i].Name]
		if int64(len(d)) != infos[i].Size() {
			d = make([]byte, infos[i].Size())
		}
		datas = append(datas, d)
	}
	path := filepath.Join(t.TempDir(), shape+"-bad.gguf")
	writeGGUF(t, path, md, infos, datas)
	return path
}

func dropTensor(name string) func(*gguf.Metadata, []gguf.TensorInfo) []gguf.TensorInfo {
	return func(_ *gguf.Metadata, infos []gguf.TensorInfo) []gguf.TensorInfo {
		for i := range infos {
			if infos[i].Name == name {
				return append(infos[:i], infos[i+1:]...)
			}
		}
		panic("no tensor " + name)
	}
}

func reshape(name string, dims ...uint64) func(*gguf.Metadata, []gguf.TensorInfo) []gguf.TensorInfo {
	return func(_ *gguf.Metadata, infos []gguf.TensorInfo) []gguf.TensorInfo {
		for i := range infos {
			if infos[i].Name == name {
				infos[i].Dims = dims
				return infos
			}
		}
		panic("no tensor " + name)
	}
}

func setKey(key string, v gguf.Value) func(*gguf.Metadata, []gguf.TensorInfo) []gguf.TensorInfo {
	return func(md *gguf.Metadata, infos []gguf.TensorInfo) []gguf.TensorInfo {
		if v.Type() == 0 && !v.IsArray() && v.Interface() == nil {
			if !md.Delete(key) {
				panic("no key " + key)
			}
		} else {
			md.Set(key, v)
		}
		return infos
	}
}

// TestFamilyBadFiles opens, for every family, files missing a required
// tensor or key or with shapes that do not fit the metadata: each must
// fail at load with one line naming the tensor or key.
func TestFamilyBadFiles(t *testing.T) {
	del := gguf.Value{}
	for _, c := range []struct {
		shape, name string
		edit        func(*gguf.Metadata, []gguf.TensorInfo) []gguf.TensorInfo
		want        string
	}{
		{"qwen2", "no q bias", dropTensor("blk.0.attn_q.bias"), `"blk.0.attn_q.bias" is missing`},
		{"qwen2", "short v bias", reshape("blk.1.attn_v.bias", 64), `"blk.1.attn_v.bias" has shape`},
		{"qwen2", "no rms eps", setKey("qwen2.attention.layer_norm_rms_epsilon", del), "qwen2.attention.layer_norm_rms_epsilon is missing"},
		{"qwen3", "no k norm", dropTensor("blk.1.attn_k_norm.weight"), `"blk.1.attn_k_norm.weight" is missing`},
		{"qwen3", "q norm of the embedding width", reshape("blk.0.attn_q_norm.weight", 256), `"blk.0.attn_q_norm.weight" has shape`},
		{"qwen3", "key_length off", setKey("qwen3.attention.key_length", gguf.Uint32(32)), "qwen3.attention.key_length"},
		{"qwen3", "no block count", setKey("qwen3.block_count", del), "qwen3.block_count is missing"},
		// value_length defaults to embedding_length / head_count (32), not
		// to key_length: libllama then fails on attn_k's shape
		{"qwen3", "no value_length", setKey("qwen3.attention.value_length", del), "qwen3.attention.key_length 64 / value_length 32"},
		// libllama rotates whole heads for llama, qwen2, qwen3, qwen3moe
		// and olmoe ("invalid n_rot", or an assert building the graph)
		{"qwen2", "partial rope", setKey("qwen2.rope.dimension_count", gguf.Uint32(16)),
			"qwen2.rope.dimension_count 16 must be the head dimension 32"},
		{"olmoe", "partial rope", setKey("olmoe.rope.dimension_count", gguf.Uint32(16)),
			"olmoe.rope.dimension_count 16 must be the head dimension 32"},
		{"qwen2", "no FFN width", setKey("qwen2.feed_forward_length", del), "qwen2.feed_forward_length is missing or 0"},
		{"qwen3moe", "no expert count", setKey("qwen3moe.expert_count", del), "qwen3moe.expert_count is missing"},
		{"qwen3moe", "no gate experts", dropTensor("blk.1.ffn_gate_exps.weight"), `"blk.1.ffn_gate_exps.weight" is missing`},
		{"qwen3moe", "expert width off", setKey("qwen3moe.expert_feed_forward_length", gguf.Uint32(128)), `"blk.0.ffn_gate_exps.weight" has shape`},
		{"qwen3moe", "used above count", setKey("qwen3moe.expert_used_count", gguf.Uint32(9)), "expert_used_count 9"},
		{"olmoe", "no output head", dropTensor("output.weight"), `"output.weight" is missing`},
		{"olmoe", "per-head k norm", reshape("blk.0.attn_k_norm.weight", 32), `"blk.0.attn_k_norm.weight" has shape`},
		{"olmoe", "router of 8", reshape("blk.1.ffn_gate_inp.weight", 256, 8), `"blk.1.ffn_gate_inp.weight" has shape`},
		{"bailingmoe2", "no fused qkv", dropTensor("blk.2.attn_qkv.weight"), `"blk.2.attn_qkv.weight" is missing`},
		{"bailingmoe2", "no shared up", dropTensor("blk.1.ffn_up_shexp.weight"), `"blk.1.ffn_up_shexp.weight" is missing`},
		{"bailingmoe2", "qkv without v", reshape("blk.0.attn_qkv.weight", 256, 384), `"blk.0.attn_qkv.weight" has shape`},
		{"bailingmoe2", "no gating", setKey("bailingmoe2.expert_gating_func", del), "bailingmoe2.expert_gating_func is missing"},
		{"bailingmoe2", "gating 3", setKey("bailingmoe2.expert_gating_func", gguf.Uint32(3)), "bailingmoe2.expert_gating_func = 3"},
		{"bailingmoe2", "no shared count", setKey("bailingmoe2.expert_shared_count", del), "bailingmoe2.expert_shared_count is missing"},
		{"bailingmoe2", "3 groups of 8", setKey("bailingmoe2.expert_group_count", gguf.Uint32(3)), "bailingmoe2.expert_group_count 3"},
		{"bailingmoe2", "dense lead as MoE", setKey("bailingmoe2.leading_dense_block_count", gguf.Uint32(0)), `"blk.0.ffn_gate_inp.weight" is missing`},
		{"bailingmoe2", "all dense", setKey("bailingmoe2.leading_dense_block_count", gguf.Uint32(4)), "leading_dense_block_count 4"},
		{"bailingmoe2", "nextn past the blocks", setKey("bailingmoe2.nextn_predict_layers", gguf.Uint32(3)), "bailingmoe2.nextn_predict_layers 3"},
		{"qwen3", "unknown architecture", setKey("general.architecture", gguf.String("gemma2")),
			`architecture "gemma2" is not supported (supported: bailingmoe2, bailingmoe3, gemma3, llama, olmoe, qwen2, qwen3, qwen35, qwen35moe, qwen3moe)`},
		{"gemma3", "no post-attention norm", dropTensor("blk.3.post_attention_norm.weight"), `"blk.3.post_attention_norm.weight" is missing`},
		{"gemma3", "no post-FFN norm", dropTensor("blk.6.post_ffw_norm.weight"), `"blk.6.post_ffw_norm.weight" is missing`},
		{"gemma3", "no sliding window", setKey("gemma3.attention.sliding_window", del), "gemma3.attention.sliding_window is missing"},
		{"gemma3", "k norm of the KV width", reshape("blk.0.attn_k_norm.weight", 64), `"blk.0.attn_k_norm.weight" has shape`},
		// bailingmoe3: the KDA layers' state tensors and keys, the MLA
		// geometry, the recurrent-layer pattern
		{"bailingmoe3", "no k convolution", dropTensor("blk.0.ssm_conv1d_k.weight"), `"blk.0.ssm_conv1d_k.weight" is missing`},
		{"bailingmoe3", "convolution of 3 taps", setKey("bailingmoe3.ssm.conv_kernel", gguf.Uint32(3)), `"blk.0.ssm_conv1d_q.weight" has shape`},
		{"bailingmoe3", "no conv kernel", setKey("bailingmoe3.ssm.conv_kernel", del), "bailingmoe3.ssm.conv_kernel is missing"},
		{"bailingmoe3", "no decay multipliers", dropTensor("blk.2.ssm_a"), `"blk.2.ssm_a" is missing`},
		{"bailingmoe3", "decay bias too short", reshape("blk.2.ssm_dt.bias", 64), `"blk.2.ssm_dt.bias" has shape`},
		{"bailingmoe3", "output norm of the KDA width", reshape("blk.0.ssm_norm.weight", 128), `"blk.0.ssm_norm.weight" has shape`},
		{"bailingmoe3", "KDA head dim off", setKey("bailingmoe3.kda.head_dim", gguf.Uint32(64)), `"blk.0.attn_q.weight" has shape`},
		{"bailingmoe3", "no gate lower bound", setKey("bailingmoe3.kda.gate_lower_bound", del), "bailingmoe3.kda.gate_lower_bound is missing"},
		{"bailingmoe3", "positive gate bound", setKey("bailingmoe3.kda.gate_lower_bound", gguf.Float32(1)), "gate_lower_bound 1 must be negative"},
		{"bailingmoe3", "unsafe gate", setKey("bailingmoe3.kda.safe_gate", gguf.Bool(false)), "bailingmoe3.kda.safe_gate is false"},
		{"bailingmoe3", "head_count_kv not per layer", setKey("bailingmoe3.attention.head_count_kv", gguf.Uint32(1)), "head_count_kv must be an array of 4"},
		{"bailingmoe3", "head_count_kv of 3 layers", setKey("bailingmoe3.attention.head_count_kv", gguf.MustArray([]uint32{0, 1, 0})), "head_count_kv must be an array of 4"},
		{"bailingmoe3", "MLA layer marked recurrent", setKey("bailingmoe3.attention.head_count_kv", gguf.MustArray([]uint32{0, 0, 0, 1})), `"blk.1.attn_q.weight" is missing`},
		// key_length is the MLA cache row (libllama fails its graph on any
		// other width; absent, it is embedding_length / head_count = 64)
		{"bailingmoe3", "latent rank off", setKey("bailingmoe3.attention.kv_lora_rank", gguf.Uint32(64)),
			"bailingmoe3.attention.key_length 144 must be kv_lora_rank + rope dims = 80"},
		{"bailingmoe3", "key_length off", setKey("bailingmoe3.attention.key_length", gguf.Uint32(100)),
			"bailingmoe3.attention.key_length 100 must be kv_lora_rank + rope dims = 144"},
		{"bailingmoe3", "no key_length", setKey("bailingmoe3.attention.key_length", del),
			"bailingmoe3.attention.key_length 64 must be kv_lora_rank + rope dims = 144"},
		{"bailingmoe3", "value_length a string", setKey("bailingmoe3.attention.value_length", gguf.String("32")),
			"bailingmoe3.attention.value_length is not an unsigned integer"},
		{"bailingmoe3", "group count not dividing", setKey("bailingmoe3.expert_group_count", gguf.Uint32(3)),
			"bailingmoe3.expert_group_count 3"},
		{"bailingmoe3", "MLA layer of 2 KV heads", setKey("bailingmoe3.attention.head_count_kv", gguf.MustArray([]uint32{0, 2, 0, 2})),
			"bailingmoe3.attention.head_count_kv[1] is 2"},
		{"bailingmoe3", "no latent norm", dropTensor("blk.1.attn_kv_a_norm.weight"), `"blk.1.attn_kv_a_norm.weight" is missing`},
		{"bailingmoe3", "k up-projection of 2 heads", reshape("blk.3.attn_k_b.weight", 32, 128, 2), `"blk.3.attn_k_b.weight" has shape`},
		{"bailingmoe3", "no output gate", dropTensor("blk.3.attn_gate.weight"), `"blk.3.attn_gate.weight" is missing`},
		{"bailingmoe3", "no q LoRA key", setKey("bailingmoe3.attention.q_lora_rank", del), `"blk.1.attn_q.weight" is missing`},
		{"bailingmoe3", "rope dims of the whole head", setKey("bailingmoe3.rope.dimension_count", gguf.Uint32(48)), "rope.dimension_count 48 must be"},
		{"bailingmoe3", "no shared experts", dropTensor("blk.2.ffn_down_shexp.weight"), `"blk.2.ffn_down_shexp.weight" is missing`},
		{"bailingmoe3", "clamped experts", setKey("bailingmoe3.swiglu_clamp_exp", gguf.Float32(7)), "swiglu_clamp_exp: clamped SwiGLU"},
		{"qwen35", "no decay", dropTensor("blk.0.ssm_a"), `"blk.0.ssm_a" is missing`},
		{"qwen35", "no conv", dropTensor("blk.2.ssm_conv1d.weight"), `"blk.2.ssm_conv1d.weight" is missing`},
		{"qwen35", "no dt bias", dropTensor("blk.2.ssm_dt.bias"), `"blk.2.ssm_dt.bias" is missing`},
		{"qwen35", "no output gate", dropTensor("blk.0.attn_gate.weight"), `"blk.0.attn_gate.weight" is missing`},
		{"qwen35", "no FFN norm", dropTensor("blk.3.post_attention_norm.weight"), `"blk.3.post_attention_norm.weight" is missing`},
		{"qwen35", "conv of 3 taps", setKey("qwen35.ssm.conv_kernel", gguf.Uint32(3)), `"blk.0.ssm_conv1d.weight" has shape`},
		{"qwen35", "conv of 3 channels fewer", reshape("blk.0.ssm_conv1d.weight", 4, 509), `"blk.0.ssm_conv1d.weight" has shape`},
		{"qwen35", "alpha of 2 heads", reshape("blk.2.ssm_alpha.weight", 256, 2), `"blk.2.ssm_alpha.weight" has shape`},
		{"qwen35", "norm of the value width", reshape("blk.0.ssm_norm.weight", 256), `"blk.0.ssm_norm.weight" has shape`},
		{"qwen35", "query without gate", reshape("blk.1.attn_q.weight", 256, 256), `"blk.1.attn_q.weight" has shape`},
		{"qwen35", "inner size off", setKey("qwen35.ssm.inner_size", gguf.Uint32(128)), "qwen35.ssm.inner_size 128"},
		{"qwen35", "3 key heads", setKey("qwen35.ssm.group_count", gguf.Uint32(3)), "ssm.time_step_rank 4 is not a multiple of ssm.group_count 3"},
		{"qwen35", "no rope sections", setKey("qwen35.rope.dimension_sections", del), "qwen35.rope.dimension_sections is missing"},
		{"qwen35", "no state size", setKey("qwen35.ssm.state_size", del), "qwen35.ssm.state_size is missing"},
		{"qwen35", "interval 0", setKey("qwen35.full_attention_interval", gguf.Uint32(0)), "must be positive"},
		{"qwen35", "all attention", setKey("qwen35.full_attention_interval", gguf.Uint32(1)), `"blk.0.attn_q.weight" is missing`},
		{"qwen35", "sections short", setKey("qwen35.rope.dimension_sections", gguf.MustArray([]int32{2, 2, 2, 2})),
			"leave rotated pair 6 of 8 to the fourth section"},
		{"qwen35moe", "no shared gate", dropTensor("blk.0.ffn_gate_inp_shexp.weight"), `"blk.0.ffn_gate_inp_shexp.weight" is missing`},
		{"qwen35moe", "shared gate of 2 rows", reshape("blk.1.ffn_gate_inp_shexp.weight", 256, 2), `"blk.1.ffn_gate_inp_shexp.weight" has shape`},
		{"qwen35moe", "no experts", setKey("qwen35moe.expert_count", del), "qwen35moe.expert_count is missing"},
		{"qwen35moe", "shared width off", setKey("qwen35moe.expert_shared_feed_forward_length", gguf.Uint32(128)), `"blk.0.ffn_gate_shexp.weight" has shape`},
		{"qwen35", "sections not integers", setKey("qwen35.rope.dimension_sections", gguf.String("3,3,2")),
			"rope.dimension_sections must be an array"},
	} {
		t.Run(c.shape+"/"+c.name, func(t *testing.T) {
			path := mutated(t, c.shape, c.edit)
			m, err := Open(path)
			if err == nil {
				m.Close()
				t.Fatalf("opened without error")
			}
			msg := err.Error()
			if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want one line with %q", msg, c.want)
			}
		})
	}
}

// TestFamilyOptionalKeys opens files without a key libllama 0.7.0 does
// not require where the family does not need it (measured with
// bench/llama-logits.c: it runs them with the logits of the unmodified
// file, bit for bit): feed_forward_length of a family whose every layer
// has experts of expert_feed_forward_length. Each must give the
// unmodified file's logits bit for bit.
func TestFamilyOptionalKeys(t *testing.T) {
	del := gguf.Value{}
	for _, c := range []struct{ shape, key string }{
		{"qwen3moe", "qwen3moe.feed_forward_length"},
		{"qwen35moe", "qwen35moe.feed_forward_length"},
	} {
		t.Run(c.shape+"/no "+c.key, func(t *testing.T) {
			ids := crosscheck.PromptIDs
			ref := openModel(t, crossModel(t, crosscheck.Case{Shape: c.shape, Type: "F32"}))
			want := sequenceLogits(t, newState(t, ref, Options{Ctx: 64}), ids, len(ids))
			m := openModel(t, mutated(t, c.shape, setKey(c.key, del)))
			got := sequenceLogits(t, newState(t, m, Options{Ctx: 64}), ids, len(ids))
			if d, at := maxDiff(got, want); d != 0 {
				t.Fatalf("logits differ from the unmodified file's by %g at %d", d, at)
			}
		})
	}
}
