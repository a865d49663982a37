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
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
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

// bailingMoELookAlike is Moon-Beam (Ling's MoE: llama.cpp's bailingmoe2
// tensor names, a dense first layer, shared experts, a routing bias) at 3
// layers, width 256 and 8 experts, made a Q4_K_M file as llama-quantize
// makes one (its mix's types for a MoE model).
func bailingMoELookAlike(t *testing.T, name string) []byte {
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
			tensorSpec{b + "attn_qkv.weight", []uint64{E, 3 * E}, gguf.TypeF32},
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
	f32 := lookAlike("bailingmoe2", kv, tok, specs)
	rd, err := gguf.NewReader(bytes.NewReader(f32), int64(len(f32)))
	if err != nil {
		t.Fatal(err)
	}
	q, err := ops.QuantizeSpec{Type: "Q4_K_M"}.Quantize()
	if err != nil {
		t.Fatal(err)
	}
	p, _, err := ops.Plan(&plan.Input{Name: name, File: rd.File, ReaderAt: bytes.NewReader(f32)}, ops.Options{Quant: q})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := p.Execute(context.Background(), &out, plan.Options{}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
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
			size := *r.Inputs[r.Build.From].Size
			for _, c := range costs {
				// The model's fetch is counted before it starts: what the
				// build reads (a tied head's rows twice) less what came
				// with the header, plus holes of at most 64 KiB a request.
				if c.Name == r.Build.From && (!c.Counted || c.Needed == 0 || c.Bytes > c.Needed+int64(c.Requests)<<16) {
					t.Errorf("model fetch: %+v for a %d-byte file", c, size)
				}
				if c.Name == r.Build.From {
					t.Logf("%s: %d tensors, %d bytes out; header %d requests %d bytes, then %d requests %d bytes for %d bytes of tensor reads (file %d)",
						sc.recipe, len(layout.Tensors), layout.FileSize(), c.SpentRequests, c.SpentBytes, c.Requests, c.Bytes, c.Needed, size)
				}
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
			if r.Build.Head != nil && b.Report.Head == nil {
				t.Error("the head was not pruned")
			}
			if r.Build.ExpertsLayout == "q2lut" {
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
