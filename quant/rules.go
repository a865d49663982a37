package quant

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ggufkit/gguf/gguf"
)

// TensorTypeRule is one --tensor-type REGEX=TYPE override: tensors whose name
// the regular expression matches anywhere get Type.
type TensorTypeRule struct {
	Regex *regexp.Regexp
	Type  gguf.Type
}

// Rules chooses each tensor's type as llama-quantize does
// (llama_model_quantize_impl and llama_tensor_get_type in llama.cpp's
// src/llama-quant.cpp).
type Rules struct {
	// Default is the target type (llama-quantize's positional TYPE). For the
	// K- and i-quant targets llama.cpp's per-tensor mix applies, with the
	// type name read as llama-quantize reads it: Q4_K means Q4_K_M, Q3_K
	// Q3_K_M, Q5_K Q5_K_M, IQ2_S IQ2_M, MXFP4 MXFP4_MOE.
	Default gguf.Type
	// Pure disables the mix: every quantizable tensor gets Default (--pure).
	Pure bool
	// TensorTypes are --tensor-type overrides; the first match wins. Like
	// llama.cpp they apply only when Default is a quantized type.
	TensorTypes []TensorTypeRule
	// OutputType and EmbdType are --output-tensor-type and
	// --token-embedding-type; nil keeps llama-quantize's defaults.
	OutputType, EmbdType *gguf.Type
	// AllowRequantize permits quantizing tensors that are already quantized
	// (--allow-requantize).
	AllowRequantize bool
	// Keep lists source types left as they are (--keep).
	Keep []gguf.Type
	// Imatrix, when set, provides importance weights; its presence also
	// changes a few mix decisions, as in llama.cpp.
	Imatrix *Imatrix

	mu    sync.Mutex
	cache *modelInfo
}

// Decision is the outcome of Rules.Choose for one tensor.
type Decision struct {
	// Type is the tensor's type in the output.
	Type gguf.Type
	// Quantize is true when the data must be converted (Type differs from the
	// source type); false means the bytes are copied.
	Quantize bool
	// Reason says why, in words fit for a summary.
	Reason string
	// Fallback is true when the preferred type did not fit the row length
	// and a compatible one was used (llama.cpp's tensor_type_fallback).
	Fallback bool
}

type category int

const (
	catOther category = iota
	catTokenEmbd
	catAttnQ
	catAttnV
	catAttnK
	catAttnQKV
	catAttnKVB
	catAttnOutput
	catFFNUp
	catFFNGate
	catFFNDown
	catOutput
)

// tensorCategory is llama.cpp's tensor_get_category.
func tensorCategory(name string) category {
	switch {
	case name == "output.weight":
		return catOutput
	case name == "token_embd.weight" || name == "per_layer_token_embd.weight":
		return catTokenEmbd
	case strings.Contains(name, "attn_qkv.weight"):
		return catAttnQKV
	case strings.Contains(name, "attn_kv_b.weight"):
		return catAttnKVB
	case strings.Contains(name, "attn_v.weight"):
		return catAttnV
	case strings.Contains(name, "attn_k.weight"):
		return catAttnK
	case strings.Contains(name, "attn_q.weight"):
		return catAttnQ
	case strings.Contains(name, "attn_output.weight"):
		return catAttnOutput
	case strings.Contains(name, "ffn_up"):
		return catFFNUp
	case strings.Contains(name, "ffn_gate"):
		return catFFNGate
	case strings.Contains(name, "ffn_down"):
		return catFFNDown
	}
	return catOther
}

func (c category) isAttnV() bool { return c == catAttnV || c == catAttnQKV || c == catAttnKVB }

// neverQuantized lists name fragments llama.cpp's tensor_allows_quantization
// keeps in their source type: small or special 2-D tensors.
var neverQuantized = []string{
	"_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
	"per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight",
	"indexer.k_proj.weight", "indexer.q_proj.weight",
	"time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight",
	"time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight",
	"time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight",
	"time_mix_decay_w1.weight", "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
	"attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.", "sam.net_", ".rel_pos",
	".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd",
}

// nDims is ggml_n_dims: the number of dimensions up to the last one > 1.
func nDims(t *gguf.TensorInfo) int {
	for i := len(t.Dims) - 1; i >= 1; i-- {
		if t.Dims[i] > 1 {
			return i + 1
		}
	}
	return 1
}

// quantizable is llama.cpp's tensor_allows_quantization; it returns why not.
func quantizable(t *gguf.TensorInfo) (bool, string) {
	if nDims(t) < 2 {
		return false, "1-D tensor"
	}
	if !strings.HasSuffix(t.Name, "weight") {
		return false, "not a weight"
	}
	for _, s := range neverQuantized {
		if strings.Contains(t.Name, s) {
			return false, fmt.Sprintf("llama.cpp never quantizes %q tensors", s)
		}
	}
	if t.Name == "position_embd.weight" || t.Name == "token_types.weight" {
		return false, "position/token-type embedding"
	}
	return true, ""
}

// ftype is the llama_ftype (file type) a default type stands for.
type ftype int

const (
	ftNone ftype = iota
	ftQ2K
	ftQ2KS
	ftQ3KM
	ftQ4KM
	ftQ5KM
	ftQ6K
	ftIQ2XXS
	ftIQ2XS
	ftIQ2M
	ftIQ3XXS
	ftIQ3S
	ftIQ1S
	ftIQ1M
	ftIQ4NL
	ftIQ4XS
	ftTQ1
	ftTQ2
	ftQ2_0
	ftMXFP4MoE
	ftQ4_0
	ftQ5_0
)

func ftypeOf(t gguf.Type) ftype {
	switch t {
	case gguf.TypeQ2_K:
		return ftQ2K
	case gguf.TypeQ3_K:
		return ftQ3KM
	case gguf.TypeQ4_K:
		return ftQ4KM
	case gguf.TypeQ5_K:
		return ftQ5KM
	case gguf.TypeQ6_K:
		return ftQ6K
	case gguf.TypeIQ2_XXS:
		return ftIQ2XXS
	case gguf.TypeIQ2_XS:
		return ftIQ2XS
	case gguf.TypeIQ2_S:
		return ftIQ2M
	case gguf.TypeIQ3_XXS:
		return ftIQ3XXS
	case gguf.TypeIQ3_S:
		return ftIQ3S
	case gguf.TypeIQ1_S:
		return ftIQ1S
	case gguf.TypeIQ1_M:
		return ftIQ1M
	case gguf.TypeIQ4_NL:
		return ftIQ4NL
	case gguf.TypeIQ4_XS:
		return ftIQ4XS
	case gguf.TypeTQ1_0:
		return ftTQ1
	case gguf.TypeTQ2_0:
		return ftTQ2
	case gguf.TypeQ2_0:
		return ftQ2_0
	case gguf.TypeMXFP4:
		return ftMXFP4MoE
	case gguf.TypeQ4_0:
		return ftQ4_0
	case gguf.TypeQ5_0:
		return ftQ5_0
	}
	return ftNone
}

// modelInfo is what the mix needs to know about the model, computed once
// per file.
type modelInfo struct {
	f                 *gguf.File
	falcon, is70B     bool
	nLayer, nGQA      int
	nExpert           int
	nAttnV            int
	tiedEmbeddings    bool
	ordinal           map[string]int // position among tensors of the same category, in file order
	categoryOfTensors map[string]category
}

func headCount(md *gguf.Metadata, key string) int {
	v, ok := md.Get(md.Architecture() + "." + key)
	if !ok {
		return 0
	}
	if v.IsArray() {
		if v.Len() == 0 {
			return 0
		}
		v = v.Index(0)
	}
	n, _ := v.Uint()
	return int(n)
}

func newModelInfo(f *gguf.File) *modelInfo {
	md := f.Metadata
	mi := &modelInfo{f: f, tiedEmbeddings: true, ordinal: map[string]int{}, categoryOfTensors: map[string]category{}}
	if md != nil {
		arch := md.Architecture()
		mi.falcon = arch == "falcon"
		n, _ := md.ArchUint("block_count")
		mi.nLayer = int(n)
		e, _ := md.ArchUint("expert_count")
		mi.nExpert = int(e)
		nh, nkv := headCount(md, "attention.head_count"), headCount(md, "attention.head_count_kv")
		if nkv == 0 {
			nkv = nh // llama.cpp's default when the key is absent
		}
		if nkv != 0 {
			mi.nGQA = nh / nkv
		}
		mi.is70B = arch == "llama" && mi.nLayer == 80 && nh != nkv
	}
	counts := map[category]int{}
	for i := range f.Tensors {
		t := &f.Tensors[i]
		c := tensorCategory(t.Name)
		mi.categoryOfTensors[t.Name] = c
		key := c
		if c.isAttnV() {
			key = catAttnV // llama.cpp counts these three together
		}
		mi.ordinal[t.Name] = counts[key]
		counts[key]++
		if c.isAttnV() {
			mi.nAttnV++
		}
		if c == catOutput {
			mi.tiedEmbeddings = false
		}
	}
	return mi
}

func (r *Rules) info(f *gguf.File) *modelInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil || r.cache.f != f {
		r.cache = newModelInfo(f)
	}
	return r.cache
}

// Choose decides the output type of tensor t of file f, as llama-quantize
// would: which tensors are quantized at all (2-D and larger weights; norms,
// biases, 1-D tensors, position and expert-gating tensors stay), the output
// and token-embedding defaults, --tensor-type overrides (first match wins),
// llama.cpp's per-tensor mix unless Pure, and the fallback to a compatible
// type when the row length is not a multiple of the block size. Decisions
// that depend on a tensor's position (layer-dependent mixes) count tensors in
// file order, as llama-quantize does.
//
// It fails where llama-quantize fails: a row length with no fallback for the
// type, requantizing a quantized tensor without AllowRequantize, a type that
// needs an importance matrix without one, or imatrix data of the wrong size.
func (r *Rules) Choose(f *gguf.File, t *gguf.TensorInfo) (Decision, error) {
	if !r.Default.Valid() {
		return Decision{}, fmt.Errorf("quant: invalid target type %s", r.Default)
	}
	keep := Decision{Type: t.Type}
	if slices.Contains(r.Keep, t.Type) {
		keep.Reason = fmt.Sprintf("kept: source type %s is listed to keep", t.Type)
		return keep, nil
	}
	if ok, why := quantizable(t); !ok {
		keep.Reason = why
		return keep, nil
	}
	mi := r.info(f)
	cat := tensorCategory(t.Name)
	d := Decision{}
	switch {
	case r.EmbdType != nil && cat == catTokenEmbd:
		d.Type, d.Reason = *r.EmbdType, "token embedding type"
	case r.OutputType != nil && cat == catOutput:
		d.Type, d.Reason = *r.OutputType, "output tensor type"
	default:
		d.Type, d.Reason = r.Default, "default type"
		if isQuantized(r.Default) {
			manual := false
			for _, tt := range r.TensorTypes {
				if tt.Regex.MatchString(t.Name) {
					d.Type = tt.Type
					d.Reason = fmt.Sprintf("--tensor-type %s=%s", tt.Regex, tt.Type)
					manual = true
					break
				}
			}
			if !manual && !r.Pure {
				if mt, why := r.mix(mi, t, cat); mt != d.Type {
					d.Type, d.Reason = mt, why
				}
			}
			fb, fbWhy, err := fallback(t, d.Type)
			if err != nil {
				return Decision{}, err
			}
			if fb != d.Type {
				d.Type, d.Fallback = fb, true
				d.Reason += "; " + fbWhy
			}
		}
	}
	if !d.Type.Valid() {
		return Decision{}, fmt.Errorf("quant: tensor %q: invalid type %s", t.Name, d.Type)
	}
	if _, err := d.Type.RowSize(int64(t.RowLen())); err != nil {
		return Decision{}, fmt.Errorf("quant: tensor %q: %w", t.Name, err)
	}
	d.Quantize = d.Type != t.Type
	if !d.Quantize {
		return d, nil
	}
	if !CanQuantize(d.Type) {
		return Decision{}, fmt.Errorf("quant: tensor %q: cannot quantize to %s", t.Name, d.Type)
	}
	if isQuantized(t.Type) && !r.AllowRequantize {
		return Decision{}, fmt.Errorf("quant: tensor %q: requantizing from type %s is disabled (allow it explicitly)", t.Name, t.Type)
	}
	if t.Type != gguf.TypeF32 && !CanDequantize(t.Type) {
		return Decision{}, fmt.Errorf("quant: tensor %q: cannot convert from type %s", t.Name, t.Type)
	}
	var w []float32
	if r.Imatrix != nil {
		var err error
		if w, err = r.Imatrix.TensorWeights(t); err != nil {
			return Decision{}, err
		}
	}
	if w == nil && requiresImatrix(t.Name, d.Type) {
		return Decision{}, fmt.Errorf("quant: tensor %q: type %s requires an importance matrix", t.Name, d.Type)
	}
	return d, nil
}

// requiresImatrix is llama.cpp's tensor_requires_imatrix for the types a
// plain target can produce (Q2_K_S is not one of them).
func requiresImatrix(name string, t gguf.Type) bool {
	switch tensorCategory(name) {
	case catTokenEmbd, catOutput:
		return false
	}
	switch t {
	case gguf.TypeIQ3_XXS, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S, gguf.TypeIQ1_M, gguf.TypeIQ1_S:
		return true
	}
	return false
}

// fallback is llama.cpp's tensor_type_fallback: a type whose block fits the
// row length when want's does not.
func fallback(t *gguf.TensorInfo, want gguf.Type) (gguf.Type, string, error) {
	ncols := int64(t.RowLen())
	bs := int64(want.BlockSize())
	if ncols%bs == 0 {
		return want, "", nil
	}
	var fb gguf.Type
	switch want {
	case gguf.TypeIQ1_S, gguf.TypeIQ1_M, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S,
		gguf.TypeIQ3_XXS, gguf.TypeIQ3_S, gguf.TypeIQ4_XS:
		fb = gguf.TypeIQ4_NL
	case gguf.TypeQ2_0, gguf.TypeQ2_K, gguf.TypeQ3_K, gguf.TypeTQ1_0, gguf.TypeTQ2_0:
		fb = gguf.TypeQ4_0
	case gguf.TypeQ4_K:
		fb = gguf.TypeQ5_0
	case gguf.TypeQ5_K:
		fb = gguf.TypeQ5_1
	case gguf.TypeQ6_K:
		fb = gguf.TypeQ8_0
	default:
		return 0, "", fmt.Errorf("quant: tensor %q: row length %d is not a multiple of %d (required for %s) and llama.cpp defines no fallback for %s",
			t.Name, ncols, bs, want, want)
	}
	why := fmt.Sprintf("row length %d not divisible by %d (required for %s)", ncols, bs, want)
	if ncols%int64(fb.BlockSize()) != 0 {
		fb = gguf.TypeF16
		why += ", must use F16 due to unusual shape"
	}
	return fb, why + ": falling back to " + fb.String(), nil
}

func useMoreBits(i, n int) bool { return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2 }

// layerOf returns the layer of a tensor for the layer-dependent mixes: its
// position among tensors of its kind, or with experts the number in its
// name, as llama.cpp's layer_info.
func (mi *modelInfo) layerOf(name string) int {
	if mi.nExpert > 1 {
		var l int
		if _, err := fmt.Sscanf(name, "blk.%d.", &l); err == nil {
			return l
		}
	}
	return mi.ordinal[name]
}

// mix is llama.cpp's llama_tensor_get_type_impl: the per-tensor refinements
// of a file type's mixture. It returns the type and a reason.
func (r *Rules) mix(mi *modelInfo, t *gguf.TensorInfo, cat category) (gguf.Type, string) {
	ft := ftypeOf(r.Default)
	nt := r.Default
	hasImatrix := r.Imatrix != nil
	const mixWhy = "llama.cpp mix"
	set := func(x gguf.Type) { nt = x }
	nx := int(t.RowLen())
	if cat == catOutput || (mi.tiedEmbeddings && cat == catTokenEmbd) {
		switch {
		case r.OutputType != nil:
			set(*r.OutputType)
		case ft == ftMXFP4MoE:
			set(gguf.TypeQ8_0)
		case mi.falcon || nx%nt.BlockSize() != 0:
			set(gguf.TypeQ8_0)
		case ft == ftIQ2XXS || ft == ftIQ2XS || ft == ftIQ3XXS || ft == ftIQ1S || ft == ftIQ2M || ft == ftIQ1M:
			set(gguf.TypeQ5_K)
		case nt != gguf.TypeQ8_0:
			set(gguf.TypeQ6_K)
		}
		return nt, "output tensor (llama.cpp default)"
	}
	iq2family := ft == ftIQ2XXS || ft == ftIQ2XS || ft == ftIQ1S || ft == ftIQ2M || ft == ftIQ1M
	switch {
	case ft == ftMXFP4MoE:
		if len(t.Dims) > 2 && t.Dims[2] > 1 {
			set(gguf.TypeMXFP4)
		} else {
			set(gguf.TypeQ8_0)
		}
	case cat == catTokenEmbd:
		if r.EmbdType != nil {
			set(*r.EmbdType)
		} else {
			switch ft {
			case ftIQ2XXS, ftIQ2XS, ftIQ1S, ftIQ1M:
				set(gguf.TypeQ2_K)
			case ftIQ2M, ftIQ3XXS:
				set(gguf.TypeIQ3_S)
			case ftTQ1, ftTQ2, ftQ2_0:
				set(gguf.TypeQ4_K)
			}
		}
	case iq2family:
		switch {
		case cat.isAttnV():
			if mi.nGQA >= 4 || mi.nExpert >= 4 {
				set(gguf.TypeQ4_K)
			} else if ft == ftIQ2M {
				set(gguf.TypeIQ3_S)
			} else {
				set(gguf.TypeQ2_K)
			}
		case mi.nExpert == 8 && cat == catAttnK:
			set(gguf.TypeQ4_K)
		case cat == catFFNDown:
			if mi.layerOf(t.Name) < mi.nLayer/8 {
				if ft == ftIQ2M {
					set(gguf.TypeIQ3_S)
				} else {
					set(gguf.TypeQ2_K)
				}
			}
		case cat == catAttnOutput:
			if mi.nExpert == 8 {
				set(gguf.TypeQ5_K)
			} else if ft == ftIQ1S || ft == ftIQ1M {
				set(gguf.TypeIQ2_XXS)
			} else if ft == ftIQ2M {
				set(gguf.TypeIQ3_S)
			}
		}
	case cat.isAttnV():
		iv := mi.ordinal[t.Name]
		switch {
		case ft == ftQ2K:
			if mi.nGQA >= 4 {
				set(gguf.TypeQ4_K)
			} else {
				set(gguf.TypeQ3_K)
			}
		case ft == ftIQ3XXS:
			if mi.nGQA >= 4 {
				set(gguf.TypeQ4_K)
			} else if !hasImatrix {
				set(gguf.TypeIQ3_S)
			}
		case ft == ftIQ3S && mi.nGQA >= 4:
			set(gguf.TypeQ4_K)
		case ft == ftQ3KM:
			if iv < 2 {
				set(gguf.TypeQ5_K)
			} else {
				set(gguf.TypeQ4_K)
			}
		case (ft == ftIQ4NL || ft == ftIQ4XS) && mi.nGQA >= 4:
			set(gguf.TypeQ5_K)
		case (ft == ftQ4KM || ft == ftQ5KM) && useMoreBits(iv, mi.nAttnV):
			set(gguf.TypeQ6_K)
		}
		if mi.is70B && (nt == gguf.TypeQ3_K || nt == gguf.TypeQ4_K) {
			set(gguf.TypeQ5_K)
		}
		if mi.nExpert == 8 {
			set(gguf.TypeQ8_0)
		}
	case cat == catAttnK:
		if mi.nExpert == 8 {
			set(gguf.TypeQ8_0)
		} else if ft == ftIQ3XXS {
			set(gguf.TypeIQ2_S)
		}
	case cat == catAttnQ:
		if ft == ftIQ3XXS {
			set(gguf.TypeIQ2_S)
		}
	case cat == catFFNDown:
		il, nl := mi.layerOf(t.Name), mi.nLayer
		switch {
		case ft == ftQ2K:
			set(gguf.TypeQ3_K)
		case ft == ftIQ3XXS && !hasImatrix:
			if il < nl/8 {
				set(gguf.TypeQ4_K)
			} else {
				set(gguf.TypeQ3_K)
			}
		case ft == ftQ3KM:
			switch {
			case il < nl/16:
				set(gguf.TypeQ5_K)
			case !mi.falcon || useMoreBits(il, nl):
				set(gguf.TypeQ4_K)
			default:
				set(gguf.TypeQ3_K)
			}
		case ft == ftQ4KM:
			if mi.falcon {
				switch {
				case il < nl/16:
					set(gguf.TypeQ6_K)
				case useMoreBits(il, nl):
					set(gguf.TypeQ5_K)
				default:
					set(gguf.TypeQ4_K)
				}
			} else if useMoreBits(il, nl) {
				set(gguf.TypeQ6_K)
			}
		case il < nl/8 && (ft == ftIQ4NL || ft == ftIQ4XS) && !hasImatrix:
			set(gguf.TypeQ5_K)
		case ft == ftQ5KM && useMoreBits(il, nl):
			set(gguf.TypeQ6_K)
		case (ft == ftQ4_0 || ft == ftQ5_0) && hasImatrix && il < nl/8:
			if ft == ftQ4_0 {
				set(gguf.TypeQ4_1)
			} else {
				set(gguf.TypeQ5_1)
			}
		}
	case cat == catAttnOutput:
		if !mi.falcon {
			if mi.nExpert == 8 {
				switch ft {
				case ftQ2K, ftIQ3XXS, ftQ3KM, ftIQ4NL, ftQ4KM, ftIQ3S, ftIQ4XS:
					set(gguf.TypeQ5_K)
				}
			} else {
				switch ft {
				case ftQ2K:
					set(gguf.TypeQ3_K)
				case ftIQ3XXS:
					set(gguf.TypeIQ3_S)
				case ftQ3KM:
					set(gguf.TypeQ4_K)
				}
			}
		}
	case cat == catAttnQKV:
		switch ft {
		case ftQ3KM:
			set(gguf.TypeQ4_K)
		case ftQ4KM:
			set(gguf.TypeQ5_K)
		case ftQ5KM:
			set(gguf.TypeQ6_K)
		}
	}
	return nt, mixWhy
}

func isQuantized(t gguf.Type) bool {
	tr, err := t.Traits()
	return err == nil && tr.Quantized
}
