package recipes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/engine"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/hfremote/hubtest"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/internal/opstest"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/quant"
	"github.com/ggufkit/gguf/vocabselect"
)

// The seeds' recipes (recipes/*.yaml) name real Hub files, which cannot be
// reached here. Each is checked against a scaled-down look-alike served by
// the loopback Hub at the same repo and path: the tensor names, types and
// metadata keys of the real architecture, shapes scaled down, a tokenizer cut
// from Qwen2's. The recipe is locked against it, planned, run and verified,
// so its logic is tested even though the real files cannot be.

// smallBPE is Qwen2's byte-level BPE cut to its first n ids (the merges
// among them), with the given pre-tokenizer: a real tokenizer's metadata at
// a look-alike's size.
func smallBPE(t *testing.T, n int, pre string) *gguf.Metadata {
	t.Helper()
	var vocab map[string]int
	b, err := os.ReadFile(shared.Path(t, "models", "tokenizers", "qwen2", "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &vocab); err != nil {
		t.Fatal(err)
	}
	kept := map[string]int{}
	for tok, id := range vocab {
		if id < n {
			kept[tok] = id
		}
	}
	dir := t.TempDir()
	vb, _ := json.Marshal(kept)
	var merges strings.Builder
	f, err := os.Open(shared.Path(t, "models", "tokenizers", "qwen2", "merges.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a, b, ok := strings.Cut(sc.Text(), " ")
		if _, ka := kept[a]; ok && ka {
			if _, kb := kept[b]; kb {
				if _, kab := kept[a+b]; kab {
					merges.WriteString(sc.Text() + "\n")
				}
			}
		}
	}
	writeFiles(t, dir, map[string][]byte{"vocab.json": vb, "merges.txt": []byte(merges.String())})
	md, err := vocabselect.ImportHF(dir, pre)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

// tensorSpec is one look-alike tensor.
type tensorSpec struct {
	name string
	dims []uint64
	typ  gguf.Type
}

// lookAlike writes a GGUF with arch's metadata keys (kv, then the
// tokenizer's) and the tensors given, with deterministic data: finite
// values for float types, pseudo-random blocks for quantized ones.
func lookAlike(arch string, kv []gguf.KV, tok *gguf.Metadata, specs []tensorSpec) []byte {
	md, err := gguf.NewMetadata(append([]gguf.KV{{Key: "general.architecture", Value: gguf.String(arch)}}, kv...)...)
	if err != nil {
		panic(err)
	}
	for _, e := range tok.KVs() {
		if !strings.HasPrefix(e.Key, "general.") {
			md.Set(e.Key, e.Value)
		}
	}
	rng := fixture.SplitMix64(7)
	var ts []fixture.Tensor
	for _, s := range specs {
		info := gguf.TensorInfo{Name: s.name, Dims: s.dims, Type: s.typ}
		data := make([]byte, info.Size())
		n := int(info.NumElements())
		switch s.typ {
		case gguf.TypeF32:
			for i := range n {
				binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(float32(int64(rng.Next()>>40)-1<<23)/(1<<25)))
			}
		case gguf.TypeBF16, gguf.TypeF16:
			for i := range n {
				v := float32(int64(rng.Next()>>40)-1<<23) / (1 << 25)
				if s.typ == gguf.TypeBF16 {
					binary.LittleEndian.PutUint16(data[2*i:], quant.FP32ToBF16(v))
				} else {
					binary.LittleEndian.PutUint16(data[2*i:], quant.FP32ToFP16(v))
				}
			}
		case gguf.TypeQ4_K, gguf.TypeQ6_K:
			// Valid blocks: finite values quantized as ggml does.
			f := make([]byte, 4*n)
			for i := range n {
				binary.LittleEndian.PutUint32(f[4*i:], math.Float32bits(float32(int64(rng.Next()>>40)-1<<23)/(1<<25)))
			}
			if err := quant.ConvertTensor(data, f, gguf.TypeF32, s.typ, int(s.dims[0]), nil, 1); err != nil {
				panic(err)
			}
		case gguf.TypeQ2_0:
			// Ternary blocks: an f16 scale, then 2-bit codes 0..2 (code 3
			// is not ternary, and layouts refuse it).
			for b := 0; b < len(data); b += 18 {
				binary.LittleEndian.PutUint16(data[b:], quant.FP32ToFP16(float32(1+rng.Next()%64)/1024))
				for j := 0; j < 64; j++ {
					data[b+2+j/4] |= byte(rng.Next()%3) << (2 * (j % 4))
				}
			}
		default:
			for i := range data {
				data[i] = byte(rng.Next())
			}
		}
		ts = append(ts, fixture.Tensor{Info: info, Data: data})
	}
	return fixture.Write(md, ts)
}

// qwen35LookAlike is Qwen3.5 (llama.cpp's qwen35: gated delta net layers
// with one full-attention layer in four, tied embeddings) at 4 layers and
// width 256, in BF16 as unsloth's BF16 file.
func qwen35LookAlike(t *testing.T, name string) []byte {
	const E, F, V = 256, 512, 4096
	tok := smallBPE(t, V, "qwen35")
	vocab, _ := tok.Get(vocabselect.KeyTokens)
	nv := uint64(vocab.Len())
	specs := []tensorSpec{{"token_embd.weight", []uint64{E, nv}, gguf.TypeBF16}, {"output_norm.weight", []uint64{E}, gguf.TypeF32}}
	for i := range 4 {
		b := fmt.Sprintf("blk.%d.", i)
		specs = append(specs, tensorSpec{b + "attn_norm.weight", []uint64{E}, gguf.TypeF32})
		if i%4 == 3 {
			specs = append(specs,
				tensorSpec{b + "attn_q.weight", []uint64{E, 2 * E}, gguf.TypeBF16},
				tensorSpec{b + "attn_k.weight", []uint64{E, 128}, gguf.TypeBF16},
				tensorSpec{b + "attn_v.weight", []uint64{E, 128}, gguf.TypeBF16},
				tensorSpec{b + "attn_output.weight", []uint64{E, E}, gguf.TypeBF16},
				tensorSpec{b + "attn_q_norm.weight", []uint64{128}, gguf.TypeF32},
				tensorSpec{b + "attn_k_norm.weight", []uint64{128}, gguf.TypeF32})
		} else {
			specs = append(specs,
				tensorSpec{b + "attn_qkv.weight", []uint64{E, 3 * E}, gguf.TypeBF16},
				tensorSpec{b + "attn_gate.weight", []uint64{E, E}, gguf.TypeBF16},
				tensorSpec{b + "ssm_conv1d.weight", []uint64{4, 3 * E}, gguf.TypeF32},
				tensorSpec{b + "ssm_dt.bias", []uint64{2}, gguf.TypeF32},
				tensorSpec{b + "ssm_a", []uint64{2}, gguf.TypeF32},
				tensorSpec{b + "ssm_alpha.weight", []uint64{E, 2}, gguf.TypeBF16},
				tensorSpec{b + "ssm_beta.weight", []uint64{E, 2}, gguf.TypeBF16},
				tensorSpec{b + "ssm_norm.weight", []uint64{128}, gguf.TypeF32},
				tensorSpec{b + "ssm_out.weight", []uint64{E, E}, gguf.TypeBF16})
		}
		specs = append(specs,
			tensorSpec{b + "post_attention_norm.weight", []uint64{E}, gguf.TypeF32},
			tensorSpec{b + "ffn_gate.weight", []uint64{E, F}, gguf.TypeBF16},
			tensorSpec{b + "ffn_up.weight", []uint64{E, F}, gguf.TypeBF16},
			tensorSpec{b + "ffn_down.weight", []uint64{F, E}, gguf.TypeBF16})
	}
	u32 := func(k string, v uint32) gguf.KV { return gguf.KV{Key: "qwen35." + k, Value: gguf.Uint32(v)} }
	kv := []gguf.KV{{Key: "general.name", Value: gguf.String(name)}, {Key: "general.file_type", Value: gguf.Uint32(32)},
		u32("block_count", 4), u32("context_length", 4096), u32("embedding_length", E), u32("feed_forward_length", F),
		u32("attention.head_count", 2), u32("attention.head_count_kv", 1), u32("attention.key_length", 128),
		u32("attention.value_length", 128), {Key: "qwen35.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-6)},
		{Key: "qwen35.rope.freq_base", Value: gguf.Float32(1e7)}, u32("rope.dimension_count", 64),
		{Key: "qwen35.rope.dimension_sections", Value: gguf.MustArray([]int32{11, 11, 10, 0})},
		u32("ssm.conv_kernel", 4), u32("ssm.inner_size", E), u32("ssm.state_size", 128), u32("ssm.time_step_rank", 2),
		u32("ssm.group_count", 1), u32("full_attention_interval", 4)}
	return lookAlike("qwen35", kv, tok, specs)
}

// qwen3LookAlike is Bonsai (llama.cpp's qwen3, tied embeddings) with its
// matrices in typ (PrismML's Q1_0, or Q2_0 for the ternary ones) at 2 layers
// and width 256.
func qwen3LookAlike(t *testing.T, name string, typ gguf.Type) []byte {
	const E, F = 256, 512
	tok := smallBPE(t, 2048, "qwen2")
	vocab, _ := tok.Get(vocabselect.KeyTokens)
	specs := []tensorSpec{{"token_embd.weight", []uint64{E, uint64(vocab.Len())}, typ}, {"output_norm.weight", []uint64{E}, gguf.TypeF32}}
	for i := range 2 {
		b := fmt.Sprintf("blk.%d.", i)
		specs = append(specs,
			tensorSpec{b + "attn_norm.weight", []uint64{E}, gguf.TypeF32},
			tensorSpec{b + "attn_q.weight", []uint64{E, E}, typ},
			tensorSpec{b + "attn_k.weight", []uint64{E, 128}, typ},
			tensorSpec{b + "attn_v.weight", []uint64{E, 128}, typ},
			tensorSpec{b + "attn_output.weight", []uint64{E, E}, typ},
			tensorSpec{b + "attn_q_norm.weight", []uint64{128}, gguf.TypeF32},
			tensorSpec{b + "attn_k_norm.weight", []uint64{128}, gguf.TypeF32},
			tensorSpec{b + "ffn_norm.weight", []uint64{E}, gguf.TypeF32},
			tensorSpec{b + "ffn_gate.weight", []uint64{E, F}, typ},
			tensorSpec{b + "ffn_up.weight", []uint64{E, F}, typ},
			tensorSpec{b + "ffn_down.weight", []uint64{F, E}, typ})
	}
	u32 := func(k string, v uint32) gguf.KV { return gguf.KV{Key: "qwen3." + k, Value: gguf.Uint32(v)} }
	kv := []gguf.KV{{Key: "general.name", Value: gguf.String(name)}, {Key: "general.file_type", Value: gguf.Uint32(map[gguf.Type]uint32{gguf.TypeQ1_0: 40, gguf.TypeQ2_0: 41}[typ])},
		u32("block_count", 2), u32("context_length", 32768), u32("embedding_length", E), u32("feed_forward_length", F),
		u32("attention.head_count", 2), u32("attention.head_count_kv", 1), u32("attention.key_length", 128),
		u32("attention.value_length", 128), {Key: "qwen3.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-6)},
		{Key: "qwen3.rope.freq_base", Value: gguf.Float32(1e6)}}
	return lookAlike("qwen3", kv, tok, specs)
}

// bailingMoELookAlike is Moon-Beam or Ling-mini-2.0 (Ling's MoE: llama.cpp's
// bailingmoe2 tensor names, a dense first layer, shared experts, a routing
// bias) at 3 layers, width 256 and 8 experts, made a Q4_K_M file as
// llama-quantize makes one (its mix's types for a MoE model).
func bailingMoELookAlike(t *testing.T, name string) []byte {
	return quantizeLookAlike(t, name, bailingMoEF32(t, name), ops.QuantizeSpec{Type: "Q4_K_M"})
}

// bailingMoEF32 is the bailingmoe2 look-alike in F32, as converted.
func bailingMoEF32(t *testing.T, name string) []byte {
	const E, F, X, V = 256, 512, 8, 4096
	tok := smallBPE(t, V, "qwen2")
	vocab, _ := tok.Get(vocabselect.KeyTokens)
	nv := uint64(vocab.Len())
	specs := []tensorSpec{{"token_embd.weight", []uint64{E, nv}, gguf.TypeF32}, {"output_norm.weight", []uint64{E}, gguf.TypeF32},
		{"output.weight", []uint64{E, nv}, gguf.TypeF32}}
	for i := range 3 {
		b := fmt.Sprintf("blk.%d.", i)
		specs = append(specs,
			tensorSpec{b + "attn_norm.weight", []uint64{E}, gguf.TypeF32},
			tensorSpec{b + "attn_qkv.weight", []uint64{E, E + 2*128}, gguf.TypeF32}, // 2 query heads, 1 key-value head of 128,
			tensorSpec{b + "attn_q_norm.weight", []uint64{128}, gguf.TypeF32},
			tensorSpec{b + "attn_k_norm.weight", []uint64{128}, gguf.TypeF32},
			tensorSpec{b + "attn_output.weight", []uint64{E, E}, gguf.TypeF32},
			tensorSpec{b + "ffn_norm.weight", []uint64{E}, gguf.TypeF32})
		if i == 0 {
			specs = append(specs,
				tensorSpec{b + "ffn_gate.weight", []uint64{E, F}, gguf.TypeF32},
				tensorSpec{b + "ffn_up.weight", []uint64{E, F}, gguf.TypeF32},
				tensorSpec{b + "ffn_down.weight", []uint64{F, E}, gguf.TypeF32})
			continue
		}
		specs = append(specs,
			tensorSpec{b + "ffn_gate_inp.weight", []uint64{E, X}, gguf.TypeF32},
			tensorSpec{b + "exp_probs_b.bias", []uint64{X}, gguf.TypeF32},
			tensorSpec{b + "ffn_gate_exps.weight", []uint64{E, E, X}, gguf.TypeF32},
			tensorSpec{b + "ffn_up_exps.weight", []uint64{E, E, X}, gguf.TypeF32},
			tensorSpec{b + "ffn_down_exps.weight", []uint64{E, E, X}, gguf.TypeF32},
			tensorSpec{b + "ffn_gate_shexp.weight", []uint64{E, E}, gguf.TypeF32},
			tensorSpec{b + "ffn_up_shexp.weight", []uint64{E, E}, gguf.TypeF32},
			tensorSpec{b + "ffn_down_shexp.weight", []uint64{E, E}, gguf.TypeF32})
	}
	u32 := func(k string, v uint32) gguf.KV { return gguf.KV{Key: "bailingmoe2." + k, Value: gguf.Uint32(v)} }
	kv := []gguf.KV{{Key: "general.name", Value: gguf.String(name)}, {Key: "general.file_type", Value: gguf.Uint32(15)},
		u32("block_count", 3), u32("context_length", 32768), u32("embedding_length", E), u32("feed_forward_length", F),
		u32("expert_feed_forward_length", E), u32("expert_shared_feed_forward_length", E), u32("expert_count", X),
		u32("expert_used_count", 2), u32("expert_shared_count", 1), u32("expert_group_count", 1), u32("expert_group_used_count", 1),
		u32("leading_dense_block_count", 1), u32("attention.head_count", 2), u32("attention.head_count_kv", 1),
		u32("attention.key_length", 128), {Key: "bailingmoe2.attention.layer_norm_rms_epsilon", Value: gguf.Float32(1e-6)},
		{Key: "bailingmoe2.expert_weights_scale", Value: gguf.Float32(2.5)}, {Key: "bailingmoe2.expert_weights_norm", Value: gguf.Bool(true)},
		u32("expert_gating_func", 2), {Key: "bailingmoe2.rope.freq_base", Value: gguf.Float32(6e5)}}
	return lookAlike("bailingmoe2", kv, tok, specs)
}

// quantizeLookAlike quantizes an F32 look-alike as llama-quantize would
// with spec.
func quantizeLookAlike(t *testing.T, name string, f32 []byte, spec ops.QuantizeSpec) []byte {
	q, err := spec.Quantize()
	if err != nil {
		t.Fatal(err)
	}
	return opstest.Build(t, name, f32, ops.Options{Quant: q})
}

// lingRepos are the two repos the Ling-mini-2.0 recipe assembles from: the
// bailingmoe2 look-alike as bartowski's Q4_K_M and as mradermacher's
// imatrix Q2_K_S, both quantized from the same F32 weights.
func lingRepos(t *testing.T) map[string]map[string][]byte {
	f32 := bailingMoEF32(t, "Ling-mini-2.0")
	rd, err := gguf.NewReader(bytes.NewReader(f32), int64(len(f32)))
	if err != nil {
		t.Fatal(err)
	}
	im := fixture.ImatrixFor(rd.Tensors, "imatrix-calibration.txt")
	m, err := quant.ReadImatrix(bytes.NewReader(im), int64(len(im)))
	if err != nil {
		t.Fatal(err)
	}
	return map[string]map[string][]byte{
		"bartowski/inclusionAI_Ling-mini-2.0-GGUF": {"inclusionAI_Ling-mini-2.0-Q4_K_M.gguf": quantizeLookAlike(t, "Ling-mini-2.0", f32, ops.QuantizeSpec{Type: "Q4_K_M"})},
		"mradermacher/Ling-mini-2.0-i1-GGUF": {"Ling-mini-2.0.i1-Q2_K_S.gguf": quantizeLookAlike(t, "Ling-mini-2.0", f32,
			ops.QuantizeSpec{Type: "Q2_K_S", Imatrix: m, ImatrixFile: "imatrix-calibration.txt"})},
	}
}

// seedCase is one seed recipe and the files its look-alike Hub serves.
type seedCase struct {
	recipe string
	repos  map[string]map[string][]byte // repo -> path -> content
	llama  bool                         // the runtime runs the output
}

func seedCases(t *testing.T) []seedCase {
	imatrixFor := func(model []byte) []byte {
		// An importance matrix for every quantizable weight of the model.
		r, err := gguf.NewReader(bytes.NewReader(model), int64(len(model)))
		if err != nil {
			t.Fatal(err)
		}
		return fixture.ImatrixFor(r.Tensors, "unsloth-calibration.txt")
	}
	q2 := qwen35LookAlike(t, "Qwen3.5-2B")
	q08 := qwen35LookAlike(t, "Qwen3.5-0.8B")
	smol := fixture.Model{Name: "SmolLM2-360M-Instruct", Layers: 2, Embd: 256, FF: 512, Heads: 4, KVHeads: 2, Vocab: 512,
		Tied: true, Type: gguf.TypeF16, HeadType: gguf.TypeF16, Seed: 360}
	return []seedCase{
		{"qwen3.5-2b-q4k-h65.yaml", map[string]map[string][]byte{"unsloth/Qwen3.5-2B-GGUF": {
			"Qwen3.5-2B-BF16.gguf": q2, "imatrix_unsloth.gguf_file": imatrixFor(q2)}}, false},
		{"qwen3.5-0.8b-q4k-h65.yaml", map[string]map[string][]byte{"unsloth/Qwen3.5-0.8B-GGUF": {
			"Qwen3.5-0.8B-BF16.gguf": q08, "imatrix_unsloth.gguf_file": imatrixFor(q08)}}, false},
		{"bonsai-1.7b.yaml", map[string]map[string][]byte{"prism-ml/Bonsai-1.7B-gguf": {"Bonsai-1.7B-Q1_0.gguf": qwen3LookAlike(t, "Bonsai-1.7B", gguf.TypeQ1_0)}}, false},
		{"bonsai-4b.yaml", map[string]map[string][]byte{"prism-ml/Bonsai-4B-gguf": {"Bonsai-4B-Q1_0.gguf": qwen3LookAlike(t, "Bonsai-4B", gguf.TypeQ1_0)}}, false},
		{"ternary-bonsai-4b-ter2.yaml", map[string]map[string][]byte{"prism-ml/Ternary-Bonsai-4B-gguf": {"Ternary-Bonsai-4B-Q2_0.gguf": qwen3LookAlike(t, "Ternary-Bonsai-4B", gguf.TypeQ2_0)}}, false},
		{"moon-beam-q2lut-h60.yaml", map[string]map[string][]byte{"tablinum/Moon-Beam-8B-A1B-GGUF-Preview": {"Moon-Beam-8B-A1B-Q4_K_M.gguf": bailingMoELookAlike(t, "Moon-Beam-8B-A1B")}}, false},
		{"ling-mini-2.0-q2lut.yaml", lingRepos(t), true},
		{"smollm2-360m-ipad.yaml", map[string]map[string][]byte{"bartowski/SmolLM2-360M-Instruct-GGUF": {"SmolLM2-360M-Instruct-f16.gguf": smol.Build()}}, true},
	}
}

// TestSeedRecipesOnLookAlikes: each seed recipe is refused by run while it
// names branches, locked against its look-alike, planned (a tensor table and
// byte counts, no tensor byte fetched), run to the file the lock pinned and
// verified; the runtime generates from the llama one.
func TestSeedRecipesOnLookAlikes(t *testing.T) {
	if testing.Short() {
		t.Skip("tokenizes the shared corpora")
	}
	ctx := context.Background()
	for _, sc := range seedCases(t) {
		t.Run(sc.recipe, func(t *testing.T) {
			hub, err := hubtest.NewServer("", hubtest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer hub.Close()
			for repo, files := range sc.repos {
				content := map[string]hubtest.Content{}
				for p, b := range files {
					content[p] = hubtest.Bytes(b)
				}
				if _, err := hub.Commit(repo, "main", content); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("HF_TOKEN", "")
			t.Setenv("HF_HOME", t.TempDir())
			opts := Options{Endpoint: hub.URL(), Threads: 2}
			r, err := Load(sc.recipe)
			if err != nil {
				t.Fatal(err)
			}
			pinned := opts
			pinned.Pinned = true
			if _, err := Open(ctx, r, pinned); err == nil {
				t.Fatal("run accepted a recipe written with branch names")
			}
			if _, err := Lock(ctx, r, opts); err != nil {
				t.Fatal(err)
			}
			res, err := Open(ctx, r, pinned)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			before := hub.Stats()
			b, err := res.Plan(ctx)
			if err != nil {
				t.Fatal(err)
			}
			costs, err := res.Costs(b)
			if err != nil {
				t.Fatal(err)
			}
			if hub.Stats().CDNRequests != before.CDNRequests {
				t.Error("planning fetched tensor data")
			}
			layout, err := b.Plan.Layout()
			if err != nil {
				t.Fatal(err)
			}
			roles := r.roles()
			for _, c := range costs {
				if roles[c.Name] != roleModel {
					continue
				}
				size := *r.Inputs[c.Name].Size
				// A model's fetch is counted before it starts: what the
				// build reads (a tied head's rows twice) less what came
				// with the header, plus holes of at most 64 KiB a request.
				if !c.Counted || c.Needed == 0 || c.Bytes > c.Needed+int64(c.Requests)<<16 {
					t.Errorf("model %s fetch: %+v for a %d-byte file", c.Name, c, size)
				}
				t.Logf("%s %s: %d tensors, %d bytes out; header %d requests %d bytes, then %d requests %d bytes for %d bytes of tensor reads (file %d)",
					sc.recipe, c.Name, len(layout.Tensors), layout.FileSize(), c.SpentRequests, c.SpentBytes, c.Requests, c.Bytes, c.Needed, size)
			}
			out := filepath.Join(t.TempDir(), r.Output.Name)
			rr, err := res.Run(ctx, out, RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if rr.Sums.SHA256 != r.Output.SHA256 {
				t.Fatal("the run's output is not the one lock pinned")
			}
			if _, err := r.Verify(out); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: wrote %d bytes, sha256 %s; read %v tensor bytes by input", sc.recipe, rr.Sums.Size, rr.Sums.SHA256, rr.Read)
			if r.Build.Head != nil && b.Report.Head == nil {
				t.Error("the head was not pruned")
			}
			if r.Build.ExpertsLayout == "q2lut" || r.Assemble != nil && r.Assemble.ExpertsLayout == "q2lut" {
				// Experts last, each in the q2lut layout; the non-experts
				// copied as they were (the mix keeps their types).
				first := slices.IndexFunc(layout.Tensors, func(ti gguf.TensorInfo) bool { return strings.Contains(ti.Name, "_exps.") })
				for _, ti := range layout.Tensors[max(first, 0):] {
					if first < 0 || !strings.HasSuffix(ti.Name, "_exps.weight.q2lut") {
						t.Errorf("tensor %s among the experts at the end", ti.Name)
					}
				}
				for _, d := range b.Report.Quant {
					if d.Quantized != strings.Contains(d.Name, "_exps.") {
						t.Errorf("%s: %s -> %s (quantized %v)", d.Name, d.From, d.To, d.Quantized)
					}
				}
			}
			if r.Build.TernaryLayout != "" && !slices.ContainsFunc(layout.Tensors, func(ti gguf.TensorInfo) bool { return strings.HasSuffix(ti.Name, "."+r.Build.TernaryLayout) }) {
				t.Errorf("no tensor in the %s layout", r.Build.TernaryLayout)
			}
			if sc.llama {
				if b.Report.Layouts != nil {
					// The runtime reads experts in their ggml types: restore
					// them as 'gguf layout --experts none' does.
					out = restoreLayouts(t, out)
				}
				m, err := engine.Open(out)
				if err != nil {
					t.Fatalf("the runtime does not load the output: %v", err)
				}
				defer m.Close()
				s, err := engine.NewState(m, engine.Options{Ctx: 64})
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				if err := s.Eval([]int32{1, 5, 9}, 0, func(int, []float32) { n++ }); err != nil || n == 0 {
					t.Fatalf("the runtime did not evaluate the output: %v (%d logit rows)", err, n)
				}
			}
		})
	}
}

// restoreLayouts writes the file at path with its repacked tensors
// restored to their ggml types and returns the new file's path.
func restoreLayouts(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	restored := opstest.Build(t, path, data, ops.Options{ExpertsLayout: ops.LayoutNone, TernaryLayout: ops.LayoutNone})
	out := filepath.Join(t.TempDir(), "restored.gguf")
	writeFiles(t, filepath.Dir(out), map[string][]byte{"restored.gguf": restored})
	return out
}
