package engine

import (
	"fmt"
	"math"

	"github.com/ggufkit/gguf/gguf"
)

// Config holds a llama-family model's hyper-parameters, read from the
// "llama.*" metadata keys the way llama.cpp's loader reads them.
type Config struct {
	Embd          int     // embedding_length
	Layers        int     // block_count
	Heads         int     // attention.head_count
	KVHeads       int     // attention.head_count_kv (GQA), default Heads
	HeadDim       int     // attention.key_length, default Embd/Heads
	FF            int     // feed_forward_length (per expert for MoE)
	Vocab         int     // rows of token_embd
	ContextLength int     // context_length (what the file says)
	RopeDims      int     // rope.dimension_count, default HeadDim
	RopeBase      float32 // rope.freq_base, default 10000
	RopeFreqScale float32 // 1/rope.scaling.factor for linear scaling, else 1
	RMSEps        float32 // attention.layer_norm_rms_epsilon
	Experts       int     // expert_count (0: dense FFN)
	ExpertsUsed   int     // expert_used_count
}

// QDim is the width of the query projection (all heads).
func (c *Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim is the width of the key and value projections (all KV heads).
func (c *Config) KVDim() int { return c.KVHeads * c.HeadDim }

// maxDim bounds every hyper-parameter: anything larger cannot be backed by
// the bytes of a real file and would only make buffer sizes overflow.
const maxDim = 1 << 24

// readConfig reads the hyper-parameters from md. Vocab is filled in later
// from the embedding table.
func readConfig(md *gguf.Metadata) (Config, error) {
	arch := md.Architecture()
	if arch != "llama" {
		return Config{}, fmt.Errorf("architecture %q is not supported (this runtime runs the llama family)", arch)
	}
	get := func(suffix string, def int, required bool) (int, error) {
		key := arch + "." + suffix
		v, ok := md.Uint(key)
		if !ok {
			if _, present := md.Get(key); present {
				return 0, fmt.Errorf("metadata %s is not an unsigned integer", key)
			}
			if required {
				return 0, fmt.Errorf("metadata %s is missing", key)
			}
			return def, nil
		}
		if v > maxDim {
			return 0, fmt.Errorf("metadata %s = %d is out of range", key, v)
		}
		return int(v), nil
	}
	getF := func(suffix string, def float32, required bool) (float32, error) {
		key := arch + "." + suffix
		v, ok := md.Get(key)
		if !ok {
			if required {
				return 0, fmt.Errorf("metadata %s is missing", key)
			}
			return def, nil
		}
		f, ok := v.Float()
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("metadata %s is not a finite number", key)
		}
		return float32(f), nil
	}
	var c Config
	var err error
	steps := []struct {
		dst      *int
		key      string
		def      int
		required bool
	}{
		{&c.Embd, "embedding_length", 0, true},
		{&c.Layers, "block_count", 0, true},
		{&c.Heads, "attention.head_count", 0, true},
		{&c.FF, "feed_forward_length", 0, true},
		{&c.ContextLength, "context_length", 0, true},
		{&c.Experts, "expert_count", 0, false},
		{&c.ExpertsUsed, "expert_used_count", 0, false},
	}
	for _, s := range steps {
		if *s.dst, err = get(s.key, s.def, s.required); err != nil {
			return c, err
		}
	}
	if c.Embd == 0 || c.Heads == 0 || c.Layers == 0 || c.FF == 0 {
		return c, fmt.Errorf("embedding_length, block_count, head_count and feed_forward_length must be positive")
	}
	if c.KVHeads, err = get("attention.head_count_kv", c.Heads, false); err != nil {
		return c, err
	}
	if c.KVHeads == 0 || c.Heads%c.KVHeads != 0 {
		return c, fmt.Errorf("head_count %d is not a multiple of head_count_kv %d", c.Heads, c.KVHeads)
	}
	if c.HeadDim, err = get("attention.key_length", c.Embd/c.Heads, false); err != nil {
		return c, err
	}
	vdim, err := get("attention.value_length", c.HeadDim, false)
	if err != nil {
		return c, err
	}
	if vdim != c.HeadDim || c.HeadDim == 0 || c.HeadDim%2 != 0 {
		return c, fmt.Errorf("head dimensions key %d / value %d are not supported (equal and even)", c.HeadDim, vdim)
	}
	if c.RopeDims, err = get("rope.dimension_count", c.HeadDim, false); err != nil {
		return c, err
	}
	if c.RopeDims > c.HeadDim || c.RopeDims%2 != 0 {
		return c, fmt.Errorf("rope.dimension_count %d must be even and at most the head dimension %d", c.RopeDims, c.HeadDim)
	}
	if c.RopeBase, err = getF("rope.freq_base", 10000, false); err != nil {
		return c, err
	}
	if c.RMSEps, err = getF("attention.layer_norm_rms_epsilon", 0, true); err != nil {
		return c, err
	}
	c.RopeFreqScale = 1
	switch typ := md.String(arch + ".rope.scaling.type"); typ {
	case "", "none":
	case "linear":
		f, err := getF("rope.scaling.factor", 1, false)
		if err != nil {
			return c, err
		}
		if f > 0 {
			c.RopeFreqScale = 1 / f
		}
	default:
		return c, fmt.Errorf("rope scaling %q is not supported", typ)
	}
	if c.Experts > 0 && (c.ExpertsUsed == 0 || c.ExpertsUsed > c.Experts) {
		return c, fmt.Errorf("expert_used_count %d must be in 1..expert_count %d", c.ExpertsUsed, c.Experts)
	}
	return c, nil
}
