package engine

import (
	"fmt"
	"math"

	"github.com/ggufkit/gguf/gguf"
)

// Config holds a model's hyper-parameters, read from the "<arch>.*"
// metadata keys the way llama.cpp's loader reads them, with its defaults.
type Config struct {
	Arch          string  // general.architecture
	Embd          int     // embedding_length
	Layers        int     // block_count minus nextn_predict_layers
	NextN         int     // nextn_predict_layers: trailing MTP blocks, skipped
	Heads         int     // attention.head_count
	KVHeads       int     // attention.head_count_kv (GQA), default Heads; 0 for a hybrid (KDA, MLA)
	HeadDim       int     // attention.key_length, default Embd/Heads; 0 for a hybrid
	FF            int     // feed_forward_length (dense layers; per expert for llama and olmoe MoE)
	Vocab         int     // rows of token_embd
	ContextLength int     // context_length (what the file says)
	RopeDims      int     // rope.dimension_count, default HeadDim
	RopeBase      float32 // rope.freq_base, default 10000
	RopeFreqScale float32 // 1/rope.scaling.factor for linear scaling, else 1
	RMSEps        float32 // attention.layer_norm_rms_epsilon
	Experts       int     // expert_count (0: dense FFN)
	ExpertsUsed   int     // expert_used_count
	ExpertFF      int     // width of one expert's FFN (expert_feed_forward_length or the family's rule)
	SharedFF      int     // width of the shared-expert FFN (all shared experts together), 0: none
	DenseLead     int     // leading_dense_block_count: the first layers of a MoE model that are dense
	// Routing is how a MoE layer picks and weighs its experts.
	Routing Routing
	// SlidingWindow is the attention window of the local layers
	// (attention.sliding_window: a query attends to the SlidingWindow
	// positions ending at its own), 0 when every layer attends globally.
	SlidingWindow int
	// SWAPattern: layer l is global when (l+1) % SWAPattern == 0, local
	// otherwise (gemma3: 6).
	SWAPattern int
	// RopeBaseLocal is the RoPE base of the local layers (their frequency
	// scale is 1).
	RopeBaseLocal float32
	// QScale multiplies q after RoPE, the scores then being unscaled
	// (gemma3's f_attention_scale); 0: scores scaled by 1/sqrt(HeadDim).
	QScale float32
	// Recurrent is nil for a family of standard attention layers; for a
	// hybrid (bailingmoe3) it marks the KDA recurrent layers, the others
	// being MLA layers. KDA and MLA are their geometry.
	Recurrent []bool
	KDA       KDAConfig
	MLA       MLAConfig
	// SSM sizes the linear-attention layers of a hybrid model (qwen35),
	// zero when every layer is attention.
	SSM SSMConfig

	fam *family
}

// QDim is the width of the query projection (all heads).
func (c *Config) QDim() int { return c.Heads * c.HeadDim }

// KVDim is the width of the key and value projections (all KV heads).
func (c *Config) KVDim() int { return c.KVHeads * c.HeadDim }

// maxCols is the widest input of any matrix product.
func (c *Config) maxCols() int {
	return max(c.Embd, c.QDim(), c.maxFF(), c.mixerCols(), c.SSM.valueDim())
}

// maxFF is the widest FFN hidden layer of any layer (dense, expert, shared).
func (c *Config) maxFF() int { return max(c.FF, c.ExpertFF, c.SharedFF) }

// moeLayer reports whether layer l has experts.
func (c *Config) moeLayer(l int) bool { return c.Experts > 0 && l >= c.DenseLead }

// localLayer reports whether layer l attends within the sliding window.
func (c *Config) localLayer(l int) bool {
	return c.SlidingWindow > 0 && c.SWAPattern > 0 && (l+1)%c.SWAPattern != 0
}

// maxDim bounds every hyper-parameter: anything larger cannot be backed by
// the bytes of a real file and would only make buffer sizes overflow.
const maxDim = 1 << 24

// keys reads "<arch>.<suffix>" metadata with the loader's checks.
type keys struct {
	md   *gguf.Metadata
	arch string
}

func (k keys) uint(suffix string, def int, required bool) (int, error) {
	key := k.arch + "." + suffix
	v, ok := k.md.Uint(key)
	if !ok {
		if _, present := k.md.Get(key); present {
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

// firstUint is uint, or the first element of an array of them.
func (k keys) firstUint(suffix string, def int, required bool) (int, error) {
	key := k.arch + "." + suffix
	if v, ok := k.md.Get(key); ok && v.IsArray() {
		if v.Len() == 0 {
			return 0, fmt.Errorf("metadata %s is an empty array", key)
		}
		n, ok := v.Index(0).Uint()
		if !ok || n > maxDim {
			return 0, fmt.Errorf("metadata %s[0] is not an unsigned integer in range", key)
		}
		return int(n), nil
	}
	return k.uint(suffix, def, required)
}

func (k keys) float(suffix string, def float32, required bool) (float32, error) {
	key := k.arch + "." + suffix
	v, ok := k.md.Get(key)
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

func (k keys) bool(suffix string, def bool) (bool, error) {
	key := k.arch + "." + suffix
	v, ok := k.md.Get(key)
	if !ok {
		return def, nil
	}
	b, ok := v.Bool()
	if !ok {
		return false, fmt.Errorf("metadata %s is not a bool", key)
	}
	return b, nil
}

// readConfig reads the hyper-parameters from md for its architecture's
// family. Vocab is filled in later from the embedding table.
func readConfig(md *gguf.Metadata) (Config, error) {
	arch := md.Architecture()
	fam, ok := families[arch]
	if !ok {
		return Config{}, fmt.Errorf("architecture %q is not supported (supported: %s)", arch, supportedArchs())
	}
	k := keys{md, arch}
	c := Config{Arch: arch, fam: fam}
	var err error
	steps := []struct {
		dst      *int
		key      string
		required bool
	}{
		{&c.Embd, "embedding_length", true},
		{&c.Layers, "block_count", true},
		// optional in libllama: a family whose every layer has experts of
		// their own width runs without it (checked below)
		{&c.FF, "feed_forward_length", false},
		{&c.ContextLength, "context_length", true},
		{&c.Experts, "expert_count", false},
		{&c.ExpertsUsed, "expert_used_count", false},
		{&c.Routing.Groups, "expert_group_count", false},
		{&c.Routing.GroupsUsed, "expert_group_used_count", false},
	}
	for _, s := range steps {
		if *s.dst, err = k.uint(s.key, 0, s.required); err != nil {
			return c, err
		}
	}
	heads := k.uint
	if fam.mixer != nil {
		// a hybrid may give head_count per layer; its mixers use llama.cpp's
		// n_head(), the first layer's
		heads = k.firstUint
	}
	if c.Heads, err = heads("attention.head_count", 0, true); err != nil {
		return c, err
	}
	if c.Embd == 0 || c.Heads == 0 || c.Layers == 0 {
		return c, fmt.Errorf("embedding_length, block_count and head_count must be positive")
	}
	if !fam.mixersOnly {
		if err := standardAttention(k, &c); err != nil {
			return c, err
		}
	}
	if c.RopeBase, err = k.float("rope.freq_base", 10000, false); err != nil {
		return c, err
	}
	if c.RMSEps, err = k.float("attention.layer_norm_rms_epsilon", 0, true); err != nil {
		return c, err
	}
	c.RopeFreqScale = 1
	switch typ := md.String(arch + ".rope.scaling.type"); typ {
	case "", "none":
	case "linear":
		f, err := k.float("rope.scaling.factor", 1, false)
		if err != nil {
			return c, err
		}
		if f > 0 {
			c.RopeFreqScale = 1 / f
		}
	default:
		return c, fmt.Errorf("rope scaling %q is not supported", typ)
	}
	if fam.moe == moeRequired && c.Experts == 0 {
		return c, fmt.Errorf("metadata %s.expert_count is missing or 0: the %s architecture has experts", arch, arch)
	}
	if fam.moe == moeNone && c.Experts > 0 {
		return c, fmt.Errorf("metadata %s.expert_count is %d but the %s architecture has no experts", arch, c.Experts, arch)
	}
	if c.Experts > 0 && (c.ExpertsUsed == 0 || c.ExpertsUsed > c.Experts) {
		return c, fmt.Errorf("expert_used_count %d must be in 1..expert_count %d", c.ExpertsUsed, c.Experts)
	}
	c.ExpertFF = c.FF
	if c.Experts > 0 {
		c.Routing.Gating, c.Routing.Norm = GatingSoftmax, true
	}
	if fam.hparams != nil {
		if err := fam.hparams(k, &c); err != nil {
			return c, err
		}
	}
	if c.Experts > 0 {
		if err := c.Routing.check(arch, c.Experts, c.ExpertsUsed); err != nil {
			return c, err
		}
	}
	if c.DenseLead > c.Layers {
		return c, fmt.Errorf("metadata %s.leading_dense_block_count %d exceeds the %d layers", arch, c.DenseLead, c.Layers)
	}
	if c.FF == 0 && (c.Experts == 0 || c.DenseLead > 0) {
		return c, fmt.Errorf("metadata %s.feed_forward_length is missing or 0: the dense FFN layers need it", arch)
	}
	if c.Experts > 0 && c.ExpertFF == 0 {
		return c, fmt.Errorf("metadata %s: the experts' FFN width is 0 (feed_forward_length / expert_feed_forward_length)", arch)
	}
	return c, nil
}

// standardAttention reads the geometry of standard multi-head attention:
// KV heads (GQA), head dimension (keys and values alike) and RoPE dims.
func standardAttention(k keys, c *Config) error {
	var err error
	arch := k.arch
	if c.KVHeads, err = k.uint("attention.head_count_kv", c.Heads, false); err != nil {
		return err
	}
	if c.KVHeads == 0 || c.Heads%c.KVHeads != 0 {
		return fmt.Errorf("head_count %d is not a multiple of head_count_kv %d", c.Heads, c.KVHeads)
	}
	if c.HeadDim, err = k.uint("attention.key_length", c.Embd/c.Heads, false); err != nil {
		return err
	}
	// libllama's default value_length is embedding_length / head_count,
	// whatever key_length says
	vdim, err := k.uint("attention.value_length", c.Embd/c.Heads, false)
	if err != nil {
		return err
	}
	if vdim != c.HeadDim || c.HeadDim == 0 || c.HeadDim%2 != 0 {
		return fmt.Errorf("metadata %s.attention.key_length %d / value_length %d is not supported (equal and even)", arch, c.HeadDim, vdim)
	}
	if c.RopeDims, err = k.uint("rope.dimension_count", c.HeadDim, false); err != nil {
		return err
	}
	if c.RopeDims > c.HeadDim || c.RopeDims%2 != 0 || c.RopeDims == 0 {
		return fmt.Errorf("rope.dimension_count %d must be even, positive and at most the head dimension %d", c.RopeDims, c.HeadDim)
	}
	if c.fam.fullRope && c.RopeDims != c.HeadDim {
		return fmt.Errorf("metadata %s.rope.dimension_count %d must be the head dimension %d (llama.cpp rotates whole heads for %s)",
			arch, c.RopeDims, c.HeadDim, arch)
	}
	return nil
}

// expertWeight is one expert weight tensor of a MoE layer as the loader
// reads it: the name after "blk.N." and each expert's ne0 (cols) and ne1
// (rows); the tensor's ne2 is the expert count.
type expertWeight struct {
	dst        *[]*Matrix
	name       string
	cols, rows int
}

// expertWeights are the expert weights of MoE layer l of a model of
// config c: loadFFN loads them, ExpertShapes states them.
func expertWeights(l *Layer, c *Config) []expertWeight {
	return []expertWeight{
		{&l.GateExps, "ffn_gate_exps.weight", c.Embd, c.ExpertFF},
		{&l.UpExps, "ffn_up_exps.weight", c.Embd, c.ExpertFF},
		{&l.DownExps, "ffn_down_exps.weight", c.ExpertFF, c.Embd},
	}
}

// ExpertShapes returns the expert weight tensors the loader requires of a
// model with metadata md, by name, each with the shape it requires
// ([cols, rows, experts]): the gate, up and down of every MoE layer, past
// the leading dense ones. An expert tensor of a loaded layer that want
// lacks is refused as unused; skipped reports the tensors of blocks past
// the loaded layers (NextN/MTP), which it neither requires nor checks. An
// error says the runtime cannot read md (an architecture it does not
// support, a missing or invalid key).
func ExpertShapes(md *gguf.Metadata) (want map[string][]uint64, skipped func(name string) bool, err error) {
	c, err := readConfig(md)
	if err != nil {
		return nil, nil, err
	}
	want = map[string][]uint64{}
	for i := range c.Layers {
		if !c.moeLayer(i) {
			continue
		}
		for _, w := range expertWeights(&Layer{}, &c) {
			want[fmt.Sprintf("blk.%d.%s", i, w.name)] = []uint64{uint64(w.cols), uint64(w.rows), uint64(c.Experts)}
		}
	}
	return want, c.skipped, nil
}
