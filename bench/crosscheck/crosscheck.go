// Package crosscheck generates the small llama models the engine is
// compared with a real llama.cpp on (bench/llama-logits.sh and the engine's
// TestLlamaCppCrossCheck): a model shape from internal/fixture (its
// metadata and "tN" tokenizer) with deterministic F32 weights scaled so that
// activations stay O(1), quantized with package ops exactly as
// `llama-quantize --pure` does. The files are a few MB and are made in
// memory, so a test needs neither llama.cpp nor stored model files.
package crosscheck

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// Shape is one generated model: the fixture shape plus the target type.
type Shape struct {
	// Name is the model family: "dense", "tied" or "moe".
	Name string
	// Model is the fixture shape; its Type and HeadType are F32 (the
	// source), Type below is what the F32 file is quantized to.
	Model fixture.Model
}

// Shapes are the three model families: all 2 layers of width 256 with a
// 512-token vocabulary, 8 query heads of 32 over 4 KV heads (GQA).
var Shapes = map[string]Shape{
	"dense": {"dense", fixture.Model{Name: "xcheck-dense", Layers: 2, Embd: 256, FF: 768, Heads: 8, KVHeads: 4,
		Vocab: 512, Seed: 101}},
	"tied": {"tied", fixture.Model{Name: "xcheck-tied", Layers: 2, Embd: 256, FF: 768, Heads: 8, KVHeads: 4,
		Vocab: 512, Tied: true, Seed: 102}},
	"moe": {"moe", fixture.Model{Name: "xcheck-moe", Layers: 2, Embd: 256, FF: 256, Heads: 8, KVHeads: 4,
		Vocab: 512, Experts: 4, ExpertsUsed: 2, Seed: 103}},
	// small is for the imatrix cases, whose IQ quantizers search grids and
	// take ~1 s per million weights: one layer, 590k weights.
	"small": {"small", fixture.Model{Name: "xcheck-small", Layers: 1, Embd: 256, FF: 512, Heads: 8, KVHeads: 4,
		Vocab: 512, Seed: 104}},
	// The other families (FamilyShapes), each with what sets it apart.
	"qwen2": {"qwen2", fixture.Model{Arch: "qwen2", Name: "xcheck-qwen2", Layers: 2, Embd: 256, FF: 768, Heads: 8,
		KVHeads: 4, Vocab: 512, Seed: 111}},
	// head_dim 64: q is twice the embedding wide (key_length), head tied
	"qwen3": {"qwen3", fixture.Model{Arch: "qwen3", Name: "xcheck-qwen3", Layers: 2, Embd: 256, FF: 768, Heads: 8,
		KVHeads: 4, HeadDim: 64, Vocab: 512, Tied: true, Seed: 112}},
	"qwen3moe": {"qwen3moe", fixture.Model{Arch: "qwen3moe", Name: "xcheck-qwen3moe", Layers: 2, Embd: 256, FF: 768,
		Heads: 8, KVHeads: 4, Vocab: 512, Experts: 8, ExpertsUsed: 3, ExpertFF: 256, Seed: 113}},
	// olmoe's k norm is as wide as q's: as many KV heads as heads
	"olmoe": {"olmoe", fixture.Model{Arch: "olmoe", Name: "xcheck-olmoe", Layers: 2, Embd: 256, FF: 256, Heads: 8,
		KVHeads: 8, Vocab: 512, Experts: 16, ExpertsUsed: 4, Seed: 114}},
	// one dense layer, then MoE layers: sigmoid gating with selection
	// bias, 4 groups of 2 experts of which the best 2 groups compete,
	// weights renormalized and scaled by 2.5, one shared expert; RoPE on
	// half of each head
	"bailingmoe2": {"bailingmoe2", fixture.Model{Arch: "bailingmoe2", Name: "xcheck-bailingmoe2", Layers: 3, Embd: 256,
		FF: 512, Heads: 8, KVHeads: 4, RopeDims: 16, Vocab: 512, Experts: 8, ExpertsUsed: 2, ExpertFF: 256,
		SharedExperts: 1, DenseLead: 1, Groups: 4, GroupsUsed: 2, WeightsScale: 2.5, WeightsNorm: true, Sigmoid: true,
		Seed: 115}},
	// seven layers: six local ones (window 4, RoPE base 10000) around one
	// global (layer 5, base 1e6), one KV head of 128 like Gemma 3 270M,
	// embedding 512 (scaled by sqrt(512), not a power of two); the head is
	// output.weight (tied, the scaled embedding that dominates the
	// residual stream makes every prediction the input token)
	"gemma3": {"gemma3", fixture.Model{Arch: "gemma3", Name: "xcheck-gemma3", Layers: 7, Embd: 512, FF: 512, Heads: 4,
		KVHeads: 1, HeadDim: 128, Vocab: 512, SlidingWindow: 4, RopeBase: 1e6, Seed: 116}},
	// Moon-Beam's hybrid: KDA recurrent layers 0 and 2 (4 heads of 32,
	// convolutions of 4 taps, decay gate above -5), MLA layers 1 and 3
	// (q through a rank-128 LoRA, latent KV of rank 128, heads of 32 + 16
	// RoPE dims for q and k, 32 for v, sigmoid output gates); the MoE part
	// as bailingmoe2's without group keys (bailingmoe3b has them): layer 0
	// dense, sigmoid gating with selection bias, top 2 of 8, renormalized,
	// scale 2.5, one shared expert
	"bailingmoe3": {"bailingmoe3", fixture.Model{Arch: "bailingmoe3", Name: "xcheck-bailingmoe3", Layers: 4, Embd: 256,
		FF: 512, Heads: 4, RopeDims: 16, Vocab: 512, Experts: 8, ExpertsUsed: 2, ExpertFF: 128, SharedExperts: 1,
		DenseLead: 1, WeightsScale: 2.5, WeightsNorm: true, Sigmoid: true, MLALayers: []int{1, 3}, KVLoraRank: 128,
		QLoraRank: 128, NopeDim: 32, VHeadDim: 32, KDAHeadDim: 32, ConvKernel: 4, GateLowerBound: -5, Seed: 117}},
	// bailingmoe3's other variants, F32 only: q without a LoRA (attn_q),
	// a tied head, no dense layer, an MLA layer first, 8 KDA heads of 16
	// (head_dim below the 32 of a SIMD step), convolutions of 3 taps, and
	// group-limited routing (4 groups of 2 experts, the best 2 compete),
	// which libllama applies to bailingmoe3 as to bailingmoe2
	"bailingmoe3b": {"bailingmoe3b", fixture.Model{Arch: "bailingmoe3", Name: "xcheck-bailingmoe3b", Layers: 3, Embd: 256,
		FF: 512, Heads: 8, RopeDims: 8, Vocab: 512, Tied: true, Experts: 8, ExpertsUsed: 3, ExpertFF: 128,
		SharedExperts: 2, Groups: 4, GroupsUsed: 2, WeightsNorm: true, Sigmoid: true, MLALayers: []int{0}, KVLoraRank: 64, NopeDim: 16,
		VHeadDim: 16, KDAHeadDim: 16, ConvKernel: 3, GateLowerBound: -3, Seed: 118}},
	// bailingmoe3 with every width key different: key_length 80 (the MLA
	// cache row, kv_lora_rank 64 + 16 RoPE dims), value_length 32 (not
	// kv_lora_rank: libllama sizes nothing by it), key_length_mla 48,
	// value_length_mla 24, KDA heads of 40 (not a multiple of a SIMD step)
	"bailingmoe3c": {"bailingmoe3c", fixture.Model{Arch: "bailingmoe3", Name: "xcheck-bailingmoe3c", Layers: 4, Embd: 256,
		FF: 512, Heads: 4, RopeDims: 16, Vocab: 512, Experts: 8, ExpertsUsed: 2, ExpertFF: 128, SharedExperts: 1,
		DenseLead: 1, WeightsScale: 2.5, WeightsNorm: true, Sigmoid: true, MLALayers: []int{1, 3}, KVLoraRank: 64,
		ValueLength: 32, QLoraRank: 64, NopeDim: 32, VHeadDim: 24, KDAHeadDim: 40, ConvKernel: 4, GateLowerBound: -5,
		Seed: 119}},
	// four layers, Gated DeltaNet ones (0, 2) and gated full attention (1,
	// 3: full_attention_interval 2); 4 value heads over 2 key heads of 64
	// (each key head read by two value heads), convolution of 4 taps;
	// attention heads of 64 with RoPE on 16 dims in M-RoPE sections
	// 3, 3, 2 (Qwen3.5's 11, 11, 10 of 64 scaled down); head tied
	"qwen35": {"qwen35", fixture.Model{Arch: "qwen35", Name: "xcheck-qwen35", Layers: 4, Embd: 256, FF: 512, Heads: 4,
		KVHeads: 2, HeadDim: 64, RopeDims: 16, RopeSections: [4]int32{3, 3, 2, 0}, Vocab: 512, Tied: true,
		SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4, FullAttnInterval: 2, Seed: 117}},
	// qwen35 with its MTP block (nextn_predict_layers 1: blk.4, a gated
	// full-attention block with nextn.eh_proj, enorm, hnorm and
	// shared_head_norm), the draft of --spec-type draft-mtp; the main
	// layers' weights are qwen35's (drawn first, in the same order)
	"qwen35mtp": {"qwen35mtp", fixture.Model{Arch: "qwen35", Name: "xcheck-qwen35", Layers: 4, Embd: 256, FF: 512, Heads: 4,
		KVHeads: 2, HeadDim: 64, RopeDims: 16, RopeSections: [4]int32{3, 3, 2, 0}, Vocab: 512, Tied: true,
		SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4, FullAttnInterval: 2, NextN: 1, Seed: 117}},
	// qwen35moe with its MTP block (blk.4: gated full attention and a MoE
	// FFN like the main layers', with the gated shared expert); the main
	// layers' weights are qwen35moe's (drawn first, in the same order)
	"qwen35moemtp": {"qwen35moemtp", fixture.Model{Arch: "qwen35moe", Name: "xcheck-qwen35moe", Layers: 4, Embd: 256, FF: 512,
		Heads: 4, KVHeads: 2, HeadDim: 64, RopeDims: 16, RopeSections: [4]int32{3, 3, 2, 0}, Vocab: 512, Tied: true,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256, SharedExperts: 1,
		SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4, FullAttnInterval: 2, NextN: 1, Seed: 118}},
	// qwen35mtp and qwen35moemtp with an untied head and an MTP block
	// built to agree with the model (fixture.Model.MTPAgree: the main
	// layers' residual projections at 0.02, the block drafting the head
	// of its token's embedding), a stand-in for a trained block:
	// draft-mtp's drafts are mostly accepted (0.73 to 0.96 greedy, as
	// engine's TestDraftMTPAccepted logs; 0.1 gives 0.24 to 0.48)
	"qwen35draft": {"qwen35draft", fixture.Model{Arch: "qwen35", Name: "xcheck-qwen35", Layers: 4, Embd: 256, FF: 512, Heads: 4,
		KVHeads: 2, HeadDim: 64, RopeDims: 16, RopeSections: [4]int32{3, 3, 2, 0}, Vocab: 512,
		SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4, FullAttnInterval: 2, NextN: 1, Seed: 117, MTPAgree: 0.02}},
	"qwen35moedraft": {"qwen35moedraft", fixture.Model{Arch: "qwen35moe", Name: "xcheck-qwen35moe", Layers: 4, Embd: 256, FF: 512,
		Heads: 4, KVHeads: 2, HeadDim: 64, RopeDims: 16, RopeSections: [4]int32{3, 3, 2, 0}, Vocab: 512,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256, SharedExperts: 1,
		SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4, FullAttnInterval: 2, NextN: 1, Seed: 118, MTPAgree: 0.02}},
	// qwen35 with MoE FFNs in every layer: 8 experts of 256, top 2,
	// softmax renormalized, and one shared expert of 256 whose output is
	// scaled by sigmoid(ffn_gate_inp_shexp x)
	"qwen35moe": {"qwen35moe", fixture.Model{Arch: "qwen35moe", Name: "xcheck-qwen35moe", Layers: 4, Embd: 256, FF: 512,
		Heads: 4, KVHeads: 2, HeadDim: 64, RopeDims: 16, RopeSections: [4]int32{3, 3, 2, 0}, Vocab: 512, Tied: true,
		Experts: 8, ExpertsUsed: 2, ExpertFF: 256, SharedExperts: 1,
		SSMConv: 4, SSMHeadDim: 64, SSMKHeads: 2, SSMVHeads: 4, FullAttnInterval: 2, Seed: 118}},
}

// FamilyShapes are the shapes of the architectures other than llama.
var FamilyShapes = []string{"qwen2", "qwen3", "qwen3moe", "olmoe", "bailingmoe2", "gemma3", "bailingmoe3", "bailingmoe3c",
	"qwen35", "qwen35moe"}

// FamilyTypes are the types every family is checked in; Q4_K_M is
// llama-quantize's mix (not --pure).
var FamilyTypes = []string{"F32", "Q8_0", "Q4_K_M"}

// Case is one model file: a shape quantized (--pure) to a type.
type Case struct {
	Shape string
	// Type is llama-quantize's TYPE argument (F32: no quantization).
	Type string
	// Imatrix quantizes with the shape's Imatrix, given to llama-quantize
	// as --imatrix ImatrixFile, and keeps token_embd and output in Q8_0
	// (--token-embedding-type q8_0 --output-tensor-type q8_0) so that only
	// the layer matrices pay for the slow IQ quantizers.
	Imatrix bool
}

// ImatrixFile is the name bench/llama-logits.sh gives the imatrix file.
const ImatrixFile = "imatrix.dat"

// WeightType is the type llama-quantize --pure gives every weight matrix
// for the case's TYPE: the type of that name, except IQ2_M (IQ2_S) and
// MXFP4_MOE (MXFP4); 0 for an unknown name.
func (c Case) WeightType() gguf.Type {
	switch c.Type {
	case "Q4_K_M":
		return gguf.TypeQ4_K
	case "IQ2_M":
		return gguf.TypeIQ2_S
	case "MXFP4_MOE":
		return gguf.TypeMXFP4
	}
	t, err := gguf.ParseType(c.Type)
	if err != nil {
		return 0
	}
	return t
}

// Mix reports whether the case is quantized with llama-quantize's
// per-tensor mix of its file type instead of --pure.
func (c Case) Mix() bool { return c.Type == "Q4_K_M" }

// Tag names the case's files: SHAPE-TYPE, with "-imat" for an imatrix.
func (c Case) Tag() string {
	if c.Imatrix {
		return c.Shape + "-" + c.Type + "-imat"
	}
	return c.Shape + "-" + c.Type
}

// DenseTypes are every weight type the engine runs that llama-quantize
// (llama.cpp 0.7.0) makes without an importance matrix; it refuses
// IQ3_XXS, IQ2_M, IQ2_S, IQ2_XS, IQ2_XXS, IQ1_M and IQ1_S without one.
// MXFP4_MOE with --pure makes every matrix MXFP4.
var DenseTypes = []string{"F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1",
	"Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS", "IQ3_S",
	"TQ1_0", "TQ2_0", "MXFP4_MOE", "Q1_0", "Q2_0"}

// ImatrixTypes are the types llama-quantize makes only with an importance
// matrix, one per weight type (IQ2_M's --pure type is IQ2_S; the file
// type IQ2_S would be IQ2_XS again, and package quant's Rules.Default
// cannot name it), plus Q4_K, whose quantizer the imatrix changes too.
var ImatrixTypes = []string{"IQ3_XXS", "IQ2_M", "IQ2_XS", "IQ2_XXS", "IQ1_M", "IQ1_S", "Q4_K"}

// Cases returns every compared file: the dense shape in each of
// DenseTypes, the small shape with an imatrix in each of ImatrixTypes,
// and the tied and MoE shapes in a float, a legacy and a k-quant type,
// bailingmoe3's second variant (bailingmoe3b) in F32, and FamilyCases.
func Cases() []Case {
	var out []Case
	for _, t := range DenseTypes {
		out = append(out, Case{Shape: "dense", Type: t})
	}
	for _, t := range ImatrixTypes {
		out = append(out, Case{Shape: "small", Type: t, Imatrix: true})
	}
	for _, s := range []string{"tied", "moe"} {
		for _, t := range []string{"F32", "Q8_0", "Q4_K"} {
			out = append(out, Case{Shape: s, Type: t})
		}
	}
	out = append(out, Case{Shape: "bailingmoe3b", Type: "F32"})
	return append(out, FamilyCases()...)
}

// MTPCases are the files whose MTP block bench/llama-mtp.sh checks
// against libllama's MTP context: qwen35mtp and qwen35moemtp in F32 and
// Q8_0.
func MTPCases() []Case {
	var out []Case
	for _, shape := range []string{"qwen35mtp", "qwen35moemtp"} {
		out = append(out, Case{Shape: shape, Type: "F32"}, Case{Shape: shape, Type: "Q8_0"})
	}
	return out
}

// DraftCases are the files with an MTP block built to agree with the
// model (qwen35draft, qwen35moedraft) in Q8_0, on which bench/mtp-accept.sh
// counts llama.cpp's draft-mtp acceptance.
func DraftCases() []Case {
	return []Case{{Shape: "qwen35draft", Type: "Q8_0"}, {Shape: "qwen35moedraft", Type: "Q8_0"}}
}

// FamilyCases returns the cases of the other families: each of
// FamilyShapes in each of FamilyTypes (qwen35moe in F32 only), and qwen3
// in Q1_0 and Q2_0 (--pure), the types of the Bonsai models built on it.
func FamilyCases() []Case {
	var out []Case
	for _, s := range FamilyShapes {
		types := FamilyTypes
		if s == "qwen35moe" {
			// Its quantized files are off by q8 rounding flips from the
			// first positions on (engine/testdata/llamacpp/README.txt
			// section 6): the F32 router and shared-expert gate products
			// sum in another order than ggml's, and the flipped
			// activation stays in the recurrent state.
			types = []string{"F32"}
		}
		for _, t := range types {
			out = append(out, Case{Shape: s, Type: t})
		}
	}
	return append(out, Case{Shape: "qwen3", Type: "Q1_0"}, Case{Shape: "qwen3", Type: "Q2_0"})
}

// Prompt is the text both sides evaluate: BOS plus seven one-token words
// of the fixture's language.
const Prompt = "t5 t73 t204 t11 t480 t9 t300"

// PromptIDs are Prompt's tokens with BOS, as llama.cpp's tokenizer gives
// them (fixture id of word n is 16+n).
var PromptIDs = []int32{1, 21, 89, 220, 27, 496, 25, 316}

// Text returns a deterministic text of n words of the fixture's language
// for perplexity runs, separated by single spaces: words drawn from a
// skewed distribution, so the text is not uniform noise. It holds nothing
// but the vocabulary's pieces: the fixture has no byte tokens, and
// llama.cpp's SPM tokenizer aborts on a character it cannot encode.
func Text(n int) string {
	var b strings.Builder
	for i, w := range textWords(n) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fixture.Word(w))
	}
	return b.String()
}

// TextIDs returns Text(n)'s tokens as llama.cpp's tokenizer gives them:
// BOS, then one token per word (fixture id 16+w for word w).
func TextIDs(n int) []int32 {
	ids := []int32{1}
	for _, w := range textWords(n) {
		ids = append(ids, int32(16+w))
	}
	return ids
}

// textWords draws Text's words: w = 1 + floor(r*r*494), r uniform in [0, 1).
func textWords(n int) []int {
	rng := fixture.SplitMix64(7)
	out := make([]int, n)
	for i := range out {
		r := float64(rng.Next()>>11) / (1 << 53)
		out[i] = 1 + int(r*r*494)
	}
	return out
}

// std returns the standard deviation of a weight tensor (0 for norms,
// which are 1 + small noise), as refdata/synthetic chose them: inputs of
// a matrix are O(1), so each matrix has std ~ 1/sqrt(fan_in); residual
// projections 3x that, the head 2x, the embedding 1 (2/sqrt(E) when tied,
// where it is also the head). bailingmoe3's KDA decay multipliers
// (ssm_a) are O(1), so its decays span (gate_lower_bound, 0); its
// convolutions and latent projections have their own fan-in.
func std(m fixture.Model, ti gguf.TensorInfo) float64 {
	e, f, name := float64(m.Embd), float64(m.FF), ti.Name
	switch {
	case strings.HasSuffix(name, ".ssm_a"):
		return 1
	case strings.Contains(name, "ssm_conv1d"), strings.Contains(name, "attn_k_b"), strings.Contains(name, "attn_v_b"),
		strings.Contains(name, "attn_q_b"):
		return 1 / math.Sqrt(float64(ti.Dims[0]))
	}
	switch {
	case strings.HasSuffix(name, "_norm.weight"):
		return 0
	case name == "token_embd.weight" && m.Tied, name == "output.weight", strings.Contains(name, "ffn_gate_inp"):
		return 2 / math.Sqrt(e)
	case name == "token_embd.weight":
		return 1
	case strings.Contains(name, "attn_output"), strings.Contains(name, "ssm_out"):
		return 3 / math.Sqrt(e)
	case strings.Contains(name, "ssm_conv1d"):
		return 1 / math.Sqrt(float64(m.SSMConv))
	case strings.Contains(name, "ffn_down"):
		return 3 / math.Sqrt(f)
	}
	return 1 / math.Sqrt(e)
}

// F32 returns the shape's source model as a GGUF file: every tensor F32,
// weights uniform with the tensor's std (norms 1 + uniform noise of std
// 0.02; qwen35's ssm_a uniform in [-1, -0.1] and ssm_dt.bias in [-4, -2],
// so that every recurrent head decays slowly), drawn from
// fixture.SplitMix64(Seed) tensor by tensor in file order.
func F32(s Shape) []byte {
	var b bytes.Buffer
	if _, err := WriteF32(&b, s.Model); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	return b.Bytes()
}

// WriteF32 streams model m with F32's weights to w, 1 MiB at a time, so
// that a model of benchmark size (bench/genmodel -crosscheck) needs no
// memory of its own; m's Type and HeadType are ignored.
func WriteF32(w io.Writer, m fixture.Model) (int64, error) {
	m.Type, m.HeadType = gguf.TypeF32, gguf.TypeF32
	infos := m.TensorInfos()
	gw, err := gguf.NewWriter(w, 3, m.Metadata(), infos)
	if err != nil {
		return 0, err
	}
	rng := fixture.SplitMix64(m.Seed)
	buf := make([]byte, 1<<20)
	for _, ti := range infos {
		sd := std(m, ti)
		fix := agreement(m, ti)
		var k int64
		for left := ti.Size(); left > 0; {
			n := min(left, int64(len(buf)))
			for j := 0; j < int(n); j += 4 {
				v := value(m, ti.Name, sd, &rng)
				if fix != nil {
					v = fix(k, v)
				}
				k++
				binary.LittleEndian.PutUint32(buf[j:], math.Float32bits(float32(v)))
			}
			if _, err := gw.Write(buf[:n]); err != nil {
				return gw.Written(), err
			}
			left -= n
		}
	}
	return gw.Written(), gw.Close()
}

// value draws the next weight of tensor name of model m with standard
// deviation sd.
func value(m fixture.Model, name string, sd float64, rng *fixture.SplitMix64) float64 {
	// uniform on [-1, 1): std 1/sqrt(3)
	u := float64(float64(int64(rng.Next()>>11)-1<<52) / (1 << 52))
	qwen35 := m.Arch == "qwen35" || m.Arch == "qwen35moe"
	switch {
	case qwen35 && strings.HasSuffix(name, ".ssm_a"):
		// -exp(A_log) in [-1, -0.1]: every head decays
		return -0.55 + float64(0.45*u)
	case qwen35 && (strings.HasSuffix(name, ".nextn.enorm.weight") || strings.HasSuffix(name, ".nextn.hnorm.weight")):
		// the MTP block's input norms, drawn as the other norms are
		return 1 + float64(u*math.Sqrt(3)*0.02)
	case qwen35 && strings.HasSuffix(name, ".ssm_dt.bias"):
		// softplus(alpha + dt) ~ 0.02-0.13: decays of 0.9-0.99 per token,
		// so the state remembers tens of tokens
		return -3 + u
	case sd == 0:
		return 1 + float64(u*math.Sqrt(3)*0.02)
	}
	return u * math.Sqrt(3) * sd
}

// agreement returns how fixture.Model.MTPAgree changes tensor ti's
// weights (element k, drawn v), or nil where it does not: the main layers'
// residual projections scaled by it, and the MTP block made to compute the
// head of the normed embedding of its token (see MTPAgree). The weights
// are drawn all the same, so the rest of the model is the one without it.
func agreement(m fixture.Model, ti gguf.TensorInfo) func(k int64, v float64) float64 {
	if m.MTPAgree == 0 || (m.Arch != "qwen35" && m.Arch != "qwen35moe") {
		return nil
	}
	name := ti.Name
	one := func(int64, float64) float64 { return 1 }
	if name == "output_norm.weight" {
		return one
	}
	var l int
	if _, err := fmt.Sscanf(name, "blk.%d.", &l); err != nil {
		return nil
	}
	residual := strings.Contains(name, ".attn_output.") || strings.Contains(name, ".ssm_out.") ||
		strings.Contains(name, ".ffn_down")
	switch {
	case l < m.Layers && residual:
		return func(_ int64, v float64) float64 { return v * m.MTPAgree }
	case l < m.Layers:
		return nil
	case residual:
		return func(int64, float64) float64 { return 0 }
	case strings.HasSuffix(name, ".nextn.enorm.weight"), strings.HasSuffix(name, ".nextn.shared_head_norm.weight"):
		return one
	case strings.HasSuffix(name, ".nextn.eh_proj.weight"):
		// row r (2 x embd wide: the normed embedding, then the hidden
		// state) picks the embedding's element r
		w := int64(ti.Dims[0])
		return func(k int64, _ float64) float64 {
			if k%w == k/w {
				return 1
			}
			return 0
		}
	}
	return nil
}

// Build returns the case's model file: F32 quantized with `--pure` (and
// the shape's Imatrix where the case says so) to the case's type by
// package ops. Its tensors are those llama-quantize writes
// (bench/llama-logits.sh checks it); with an imatrix, llama-quantize also
// records four quantize.imatrix.* keys.
func Build(c Case) ([]byte, error) {
	s, ok := Shapes[c.Shape]
	if !ok {
		return nil, fmt.Errorf("crosscheck: unknown shape %q", c.Shape)
	}
	src := F32(s)
	if c.Type == "F32" {
		return src, nil
	}
	wt := c.WeightType()
	if wt == 0 {
		return nil, fmt.Errorf("crosscheck: unknown type %q", c.Type)
	}
	r, err := gguf.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		return nil, err
	}
	// Rules.Default reads a type name as llama-quantize's TYPE does (IQ2_S
	// is IQ2_M, MXFP4 MXFP4_MOE), which the cases' types are.
	q := &ops.Quantize{Rules: &quant.Rules{Default: wt, Pure: true}, Threads: 2}
	if c.Mix() {
		ft, err := quant.ParseFileType(c.Type)
		if err != nil {
			return nil, err
		}
		q.Rules = &quant.Rules{FileType: ft}
	}
	if c.Imatrix {
		im := Imatrix(s)
		if q.Rules.Imatrix, err = quant.ReadImatrix(bytes.NewReader(im), int64(len(im))); err != nil {
			return nil, err
		}
		q8 := gguf.TypeQ8_0
		q.Rules.EmbdType, q.Rules.OutputType = &q8, &q8
	}
	p, _, err := ops.Plan(&plan.Input{Name: c.Tag() + "-F32.gguf", File: r.File, ReaderAt: bytes.NewReader(src)},
		ops.Options{Quant: q})
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if _, err := p.Execute(context.Background(), &out, plan.Options{}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// Imatrix returns a legacy-format (.dat) importance matrix for the shape:
// one entry per weight matrix (token_embd included, which the very
// low-bit types need too), ncall 1, and deterministic values in [0.5,
// 1.5) per input column, so IQ types that require an imatrix can be made
// by both quantizers from the same file.
func Imatrix(s Shape) []byte {
	m := s.Model
	m.Type, m.HeadType = gguf.TypeF32, gguf.TypeF32
	rng := fixture.SplitMix64(m.Seed ^ 0x1a7)
	var b bytes.Buffer
	put := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	var infos []gguf.TensorInfo
	for _, ti := range m.TensorInfos() {
		if len(ti.Dims) >= 2 && !strings.Contains(ti.Name, "ffn_gate_inp") {
			infos = append(infos, ti)
		}
	}
	put(int32(len(infos)))
	for _, ti := range infos {
		n := ti.Dims[0]
		if len(ti.Dims) == 3 {
			n *= ti.Dims[2]
		}
		put(int32(len(ti.Name)))
		b.WriteString(ti.Name)
		put(int32(1))
		put(int32(n))
		for range n {
			put(float32(0.5 + float64(float64(rng.Next()>>11)/(1<<53))))
		}
	}
	put(int32(1))
	put(int32(len("crosscheck")))
	b.WriteString("crosscheck")
	return b.Bytes()
}
