package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ggufkit/gguf/kernels"
)

// family is everything that distinguishes one architecture's weights and
// graph from another's, as llama.cpp's loader (src/models/<arch>.cpp)
// creates its tensors and builds its graph. The forward pass reads these
// fields; nothing else in the runtime looks at the architecture's name.
type family struct {
	// ropeNeox: RoPE rotates (x[i], x[i+n_rot/2]) (LLAMA_ROPE_TYPE_NEOX)
	// instead of adjacent pairs (NORM, llama).
	ropeNeox bool
	// biases says which projection biases the family has.
	biases biasRule
	// qkNorm is the RMS norm of q and k before RoPE.
	qkNorm qkNormKind
	// fusedQKV: one attn_qkv.weight ([embd, q+2*kv], rows q, then k, then v)
	// instead of attn_q/attn_k/attn_v.
	fusedQKV bool
	// tiedHead: output.weight may be absent, the head is then token_embd.
	tiedHead bool
	// moe says whether layers have experts.
	moe moeKind
	// expBias: a MoE layer may have an expert selection bias
	// (blk.N.exp_probs_b.bias, DeepSeek V3's e_score_correction_bias).
	expBias bool
	// embedScale multiplies the embeddings by sqrt(embedding_length).
	embedScale bool
	// postNorms: RMS norms of the attention output and of the FFN output
	// (post_attention_norm, post_ffw_norm) before each residual add.
	postNorms bool
	// attnGate: attn_q.weight holds, per head, the query and then a gate
	// of the same width; the attention output is multiplied by
	// sigmoid(gate) before attn_output (qwen35).
	attnGate bool
	// ffnNorm names the RMS norm before the FFN: "ffn_norm", or
	// "post_attention_norm" (qwen35, where it is applied to the residual
	// stream after the attention's add).
	ffnNorm string
	// sharedGate: the shared experts' output is multiplied by
	// sigmoid(ffn_gate_inp_shexp x), one gate per token (qwen35moe).
	sharedGate bool
	// fullRope: rope.dimension_count must be the head dimension (libllama
	// refuses other values for these families: llama at load, "invalid
	// n_rot", the others by an assert when building the graph).
	fullRope bool
	// gelu: the FFN is GELU-gated (ggml_geglu, tanh approximation, through
	// ggml's half-float table) instead of SiLU-gated.
	gelu bool
	// hparams reads the family's own keys into c (after the common ones,
	// with Routing preset to softmax, renormalized, and ExpertFF to FF).
	hparams func(k keys, c *Config) error
	// mixer, when set, loads each layer's token mixer in place of the
	// standard attention block, or returns nil where the layer has that
	// block (bailingmoe3: KDA or MLA in every layer; qwen35: Gated
	// DeltaNet in the recurrent layers, attention in the others).
	mixer func(ts *tensorSet, c *Config, l int, p string) (layerMixer, error)
	// mixersOnly: no layer runs the standard attention block (every one
	// has a mixer), so the standard attention keys (head_count_kv,
	// key_length) are the mixers' to read, in the family's hparams.
	mixersOnly bool
}

type biasRule int

const (
	biasNone     biasRule = iota // no biases (a bias tensor is unused: the file is rejected)
	biasOptional                 // q, k, v, output and FFN biases each optional (llama)
	biasQKV                      // q, k and v biases required, no others (qwen2)
)

type qkNormKind int

const (
	qkNormNone  qkNormKind = iota
	qkNormHead             // attn_q_norm/attn_k_norm of head_dim, per head (qwen3)
	qkNormWhole            // of the whole projection width (olmoe)
)

type moeKind int

const (
	moeNone     moeKind = iota // dense only; expert_count must be 0
	moeOptional                // experts when expert_count > 0 (llama: Mixtral)
	moeRequired                // expert_count must be > 0
)

// families are the supported architectures, by general.architecture.
var families = map[string]*family{
	"llama": {biases: biasOptional, tiedHead: true, moe: moeOptional, fullRope: true},
	"qwen2": {ropeNeox: true, biases: biasQKV, tiedHead: true, fullRope: true},
	"qwen3": {ropeNeox: true, qkNorm: qkNormHead, tiedHead: true, fullRope: true},
	// qwen3moe renormalizes the chosen experts' weights whatever
	// expert_weights_norm says (llama.cpp passes true).
	"qwen3moe": {ropeNeox: true, qkNorm: qkNormHead, tiedHead: true, moe: moeRequired, fullRope: true, hparams: func(k keys, c *Config) error {
		ff, err := k.uint("expert_feed_forward_length", 0, false)
		if ff == 0 {
			ff = c.FF / c.ExpertsUsed
		}
		c.ExpertFF = ff
		return err
	}},
	// olmoe: softmax routing without renormalization, output.weight required.
	"olmoe": {ropeNeox: true, qkNorm: qkNormWhole, moe: moeRequired, fullRope: true, hparams: func(_ keys, c *Config) error {
		c.Routing.Norm = false
		return nil
	}},
	"gemma3": {ropeNeox: true, qkNorm: qkNormHead, tiedHead: true, embedScale: true, postNorms: true, gelu: true,
		hparams: gemma3},
	"bailingmoe2": {ropeNeox: true, qkNorm: qkNormHead, fusedQKV: true, moe: moeRequired, expBias: true,
		hparams: bailingMoE2},
	// bailingmoe3: KDA and MLA layers (bailingmoe3.go), RoPE NORM (libllama's
	// llama_model_rope_type for it), the head may be tied.
	"bailingmoe3": {tiedHead: true, moe: moeRequired, expBias: true, hparams: bailingMoE3, mixer: bailingMoE3Mixer,
		mixersOnly: true},
	// qwen35: Gated DeltaNet layers (Config.SSM, read by qwen35) with a
	// gated full-attention layer every full_attention_interval layers.
	"qwen35": {ropeNeox: true, qkNorm: qkNormHead, tiedHead: true, attnGate: true, ffnNorm: "post_attention_norm",
		hparams: qwen35, mixer: qwen35Mixer},
	// qwen35moe: qwen35 with MoE FFNs (softmax routing, renormalized) and a
	// gated shared expert in every layer.
	"qwen35moe": {ropeNeox: true, qkNorm: qkNormHead, tiedHead: true, attnGate: true, ffnNorm: "post_attention_norm",
		moe: moeRequired, sharedGate: true, hparams: qwen35MoE, mixer: qwen35Mixer},
}

func init() {
	for _, f := range families {
		if f.ffnNorm == "" {
			f.ffnNorm = "ffn_norm"
		}
	}
}

// bailingMoE2 reads Ling 2.0's keys as llama_model_bailingmoe2 does:
// expert_feed_forward_length, expert_shared_count and expert_gating_func
// are required; the shared experts are expert_shared_count experts of
// expert_shared_feed_forward_length (default the expert width) in one FFN.
func bailingMoE2(k keys, c *Config) error {
	var err error
	var shared, sharedFF, gating int
	for _, s := range []struct {
		dst      *int
		key      string
		required bool
	}{
		{&c.DenseLead, "leading_dense_block_count", false},
		{&c.ExpertFF, "expert_feed_forward_length", true},
		{&sharedFF, "expert_shared_feed_forward_length", false},
		{&shared, "expert_shared_count", true},
		{&gating, "expert_gating_func", true},
		{&c.NextN, "nextn_predict_layers", false},
	} {
		if *s.dst, err = k.uint(s.key, 0, s.required); err != nil {
			return err
		}
	}
	if sharedFF == 0 {
		sharedFF = c.ExpertFF
	}
	c.SharedFF = sharedFF * shared
	if err := bailingRouting(k, c, gating); err != nil {
		return err
	}
	c.Layers -= c.NextN
	return nil
}

// bailingRouting reads what both Bailing MoE families (Ling 2.0 and
// Moon-Beam) route with: the gating function, expert_weights_scale and
// expert_weights_norm; and checks nextn_predict_layers against the blocks.
func bailingRouting(k keys, c *Config, gating int) error {
	var err error
	c.Routing.Gating = Gating(gating)
	if c.Routing.Scale, err = k.float("expert_weights_scale", 0, false); err != nil {
		return err
	}
	if c.Routing.Norm, err = k.bool("expert_weights_norm", false); err != nil {
		return err
	}
	if c.NextN >= c.Layers {
		return fmt.Errorf("metadata %s.nextn_predict_layers %d must be below block_count %d", k.arch, c.NextN, c.Layers)
	}
	return nil
}

// gemma3 reads Gemma 3's keys as llama.cpp does: attention.sliding_window
// required, every sixth layer global (attention.sliding_window_pattern
// where the file gives it), local layers with RoPE base
// rope.freq_base_swa (default 10000) and scale 1; q scaled by
// 1/sqrt(head_dim) before the scores (1/sqrt(embd/heads) for the 62-layer
// 27B, as gemma_pytorch's query_pre_attn_scalar).
func gemma3(k keys, c *Config) error {
	var err error
	if c.SlidingWindow, err = k.uint("attention.sliding_window", 0, true); err != nil {
		return err
	}
	if c.SlidingWindow == 0 {
		return fmt.Errorf("metadata %s.attention.sliding_window is 0", k.arch)
	}
	if c.SWAPattern, err = k.uint("attention.sliding_window_pattern", 6, false); err != nil {
		return err
	}
	if c.RopeBaseLocal, err = k.float("rope.freq_base_swa", 10000, false); err != nil {
		return err
	}
	if c.Layers == 62 {
		c.QScale = 1 / kernels.Sqrtf(float32(c.Embd/c.Heads))
	} else {
		c.QScale = 1 / kernels.Sqrtf(float32(c.HeadDim))
	}
	return nil
}

// supportedArchs lists the families' names, sorted.
func supportedArchs() string {
	var names []string
	for n := range families {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}
