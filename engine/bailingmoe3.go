package engine

import (
	"fmt"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
)

// bailingmoe3 is Ling 3's hybrid (Moon-Beam-8B-A1B): most layers mix
// tokens with Kimi delta attention (kda.go), the others with multi-head
// latent attention (mla.go); the FFNs are bailingmoe2's MoE. llama.cpp
// marks the recurrent layers by head_count_kv 0 (an array over layers)
// and reads the MLA geometry from key_length_mla / value_length_mla,
// kv_lora_rank and q_lora_rank; key_length is the width of the latent
// cache's row (kv_lora_rank + rope dims), value_length sizes nothing.

// bailingMoE3 reads the keys llama_model_bailingmoe3::load_arch_hparams
// reads, with its checks: kda.safe_gate must be true (its default),
// kda.gate_lower_bound negative; the shared FFN is
// expert_shared_feed_forward_length wide or expert_feed_forward_length x
// max(1, expert_shared_count). expert_group_count / expert_group_used_count
// are read by readConfig as for every family: libllama 0.7.0's common
// loader reads them and its MoE graph limits bailingmoe3's selection to
// the best groups too (its logits change with them).
func bailingMoE3(k keys, c *Config) error {
	var err error
	var sharedFF, shared, gating int
	kv := &c.MLA
	for _, s := range []struct {
		dst      *int
		key      string
		required bool
	}{
		{&kv.HeadDim, "attention.key_length_mla", true},
		{&kv.VHeadDim, "attention.value_length_mla", true},
		{&kv.KVLoraRank, "attention.kv_lora_rank", true},
		{&kv.QLoraRank, "attention.q_lora_rank", false},
		{&kv.RopeDims, "rope.dimension_count", false},
		{&c.KDA.ConvKernel, "ssm.conv_kernel", true},
		{&c.KDA.HeadDim, "kda.head_dim", true},
		{&c.ExpertFF, "expert_feed_forward_length", true},
		{&sharedFF, "expert_shared_feed_forward_length", false},
		{&shared, "expert_shared_count", true},
		{&c.DenseLead, "leading_dense_block_count", true},
		{&gating, "expert_gating_func", true},
		{&c.NextN, "nextn_predict_layers", false},
	} {
		if *s.dst, err = k.uint(s.key, 0, s.required); err != nil {
			return err
		}
	}
	if safe, err := k.bool("kda.safe_gate", true); err != nil {
		return err
	} else if !safe {
		return fmt.Errorf("metadata %s.kda.safe_gate is false: llama.cpp only runs the safe gate", k.arch)
	}
	if c.KDA.GateLowerBound, err = k.float("kda.gate_lower_bound", 0, true); err != nil {
		return err
	}
	if !(c.KDA.GateLowerBound < 0) {
		return fmt.Errorf("metadata %s.kda.gate_lower_bound %g must be negative", k.arch, c.KDA.GateLowerBound)
	}
	for _, key := range []string{"swiglu_clamp_exp", "swiglu_clamp_shexp"} {
		if _, ok := k.md.Get(k.arch + "." + key); ok {
			return fmt.Errorf("metadata %s.%s: clamped SwiGLU experts are not supported", k.arch, key)
		}
	}
	if sharedFF == 0 {
		sharedFF = c.ExpertFF * max(1, shared)
	}
	c.SharedFF = sharedFF
	if err := bailingRouting(k, c, gating); err != nil {
		return err
	}
	if err := bailingMoE3Layers(k, c); err != nil {
		return err
	}
	c.Layers -= c.NextN
	c.Recurrent = c.Recurrent[:c.Layers]
	return nil
}

// bailingMoE3Layers reads which layers are recurrent (head_count_kv 0)
// and checks the two mixers' geometry.
func bailingMoE3Layers(k keys, c *Config) error {
	key := k.arch + ".attention.head_count_kv"
	v, ok := k.md.Get(key)
	if !ok || !v.IsArray() || v.Len() != c.Layers {
		return fmt.Errorf("metadata %s must be an array of %d head counts (0: a recurrent layer)", key, c.Layers)
	}
	c.Recurrent = make([]bool, c.Layers)
	attn := false
	for l := range c.Recurrent {
		n, ok := v.Index(l).Uint()
		if !ok {
			return fmt.Errorf("metadata %s[%d] is not an unsigned integer", key, l)
		}
		c.Recurrent[l] = n == 0
		if n > 1 && l < c.Layers-c.NextN {
			// libllama's cache row is key_length x head_count_kv wide, and
			// the latent row it writes there is key_length wide
			return fmt.Errorf("metadata %s[%d] is %d: an MLA layer caches one latent row (1)", key, l, n)
		}
		attn = attn || (n != 0 && l < c.Layers-c.NextN)
	}
	for l := c.Layers - c.NextN; l < c.Layers; l++ {
		if c.Recurrent[l] {
			return fmt.Errorf("metadata %s[%d] is 0: a NextN block is an attention layer", key, l)
		}
	}
	m, kd := &c.MLA, &c.KDA
	m.Heads, kd.Heads = c.Heads, c.Heads
	if m.RopeDims == 0 || m.RopeDims%2 != 0 || m.RopeDims >= m.HeadDim {
		return fmt.Errorf("metadata %s.rope.dimension_count %d must be even, positive and below key_length_mla %d",
			k.arch, m.RopeDims, m.HeadDim)
	}
	// llama.cpp's common loader reads key_length and value_length for
	// every architecture (default embedding_length / head_count). For
	// bailingmoe3 key_length sizes the row of the MLA layers' cache, which
	// holds keys only: the latent and the key's RoPE part are written
	// into it, so any other width fails libllama's graph (a ggml shape
	// assert) once a trunk layer is MLA. value_length sizes nothing (the
	// values are read from the latent part of that row): libllama runs a
	// file whatever it says, so only its type is checked here.
	kl, err := k.uint("attention.key_length", c.Embd/c.Heads, false)
	if err != nil {
		return err
	}
	if _, err := k.uint("attention.value_length", 0, false); err != nil {
		return err
	}
	if attn && kl != m.KVLoraRank+m.RopeDims {
		return fmt.Errorf("metadata %s.attention.key_length %d must be kv_lora_rank + rope dims = %d (the MLA layers' cache row)",
			k.arch, kl, m.KVLoraRank+m.RopeDims)
	}
	for _, d := range []struct {
		n    int
		name string
	}{{m.KVLoraRank, "attention.kv_lora_rank"}, {m.VHeadDim, "attention.value_length_mla"},
		{kd.HeadDim, "kda.head_dim"}, {kd.ConvKernel, "ssm.conv_kernel"}} {
		if d.n == 0 {
			return fmt.Errorf("metadata %s.%s is 0", k.arch, d.name)
		}
	}
	c.RopeDims = m.RopeDims
	c.KVHeads, c.HeadDim = 0, 0 // no standard attention: no KV cache of its kind
	return nil
}

// mixerCols is the widest input of a bailingmoe3 mixer's matrix products
// (0 for the other families): KDA's output projection, MLA's q LoRA, the
// per-head latent products and the output projection.
func (c *Config) mixerCols() int {
	if c.Recurrent == nil {
		return 0
	}
	m := &c.MLA
	return max(c.KDA.Heads*c.KDA.HeadDim, m.QLoraRank, m.Heads*m.VHeadDim, m.HeadDim-m.RopeDims, m.KVLoraRank)
}

// bailingMoE3Mixer loads layer l's token mixer: KDA or MLA as
// Config.Recurrent says.
func bailingMoE3Mixer(ts *tensorSet, c *Config, l int, p string) (layerMixer, error) {
	if c.Recurrent[l] {
		return loadKDA(ts, c, p)
	}
	return loadMLA(ts, c, p)
}

// tensorFloats returns tensor name as float32 (F32 in place, other types
// dequantized) after checking its shape against dims; a trailing 1 of the
// shape may be left out of the file (ggml_n_dims).
func (ts *tensorSet) tensorFloats(name string, dims ...int) ([]float32, error) {
	t, ok := ts.info[name]
	if !ok {
		return nil, fmt.Errorf("tensor %q is missing", name)
	}
	for len(dims) > len(t.Dims) && dims[len(dims)-1] == 1 {
		dims = dims[:len(dims)-1]
	}
	t, err := ts.get(name, false, dims...)
	if err != nil {
		return nil, err
	}
	n := int(t.NumElements())
	if t.Type == gguf.TypeF32 {
		return kernels.F32s(ts.data[name])[:n], nil
	}
	if t.Type.BlockSize() != 1 {
		return nil, fmt.Errorf("tensor %q is %s: only float types are supported for it", name, t.Type)
	}
	out := make([]float32, n)
	if err := kernels.DequantizeRow(t.Type, out, ts.data[name]); err != nil {
		return nil, fmt.Errorf("tensor %q: %w", name, err)
	}
	return out, nil
}
