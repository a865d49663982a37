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
	// FileType is the target, llama-quantize's positional TYPE (Q4_K_M,
	// IQ3_XS...): it sets the default type, the per-tensor mix and
	// general.file_type. When it is the zero value, Default names the target.
	FileType FileType
	// Default is the target as a ggml type, read as FileTypeFor reads it
	// (Q4_K means Q4_K_M, IQ2_S IQ2_M, MXFP4 MXFP4_MOE); used only when
	// FileType is the zero value.
	Default gguf.Type
	// Pure disables the mix: every quantizable tensor gets the file type's
	// default type (--pure).
	Pure bool
	// TensorTypes are --tensor-type overrides; the first match wins. Like
	// llama.cpp they apply only when the default type is a quantized type.
	TensorTypes []TensorTypeRule
	// OutputType and EmbdType are --output-tensor-type and
	// --token-embedding-type; nil keeps llama-quantize's defaults.
	OutputType, EmbdType *gguf.Type
	// AllowRequantize permits quantizing tensors that are already quantized
	// (--allow-requantize).
	AllowRequantize bool
	// Keep lists source types left as they are (--keep).
	Keep []gguf.Type
	// LeaveOutput leaves output.weight as it is (--leave-output-tensor).
	LeaveOutput bool
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

// modelInfo is what the mix needs to know about the model, computed once
// per file.
type modelInfo struct {
	f              *gguf.File
	falcon, is70B  bool
	bailingMoE3    bool
	nLayer, nGQA   int
	nExpert        int
	nAttnV         int
	tiedEmbeddings bool
	// ordinal is a tensor's position among the tensors of its kind that
	// reach the mix before it, in file order: llama.cpp's i_attention_wv,
	// i_ffn_down, i_ffn_gate and i_ffn_up counters.
	ordinal map[string]int
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

func (r *Rules) newModelInfo(f *gguf.File, ft FileType) *modelInfo {
	md := f.Metadata
	mi := &modelInfo{f: f, tiedEmbeddings: true, ordinal: map[string]int{}}
	if md != nil {
		arch := md.Architecture()
		mi.falcon = arch == "falcon"
		mi.bailingMoE3 = arch == "bailingmoe3"
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
		if c.isAttnV() {
			mi.nAttnV++
			c = catAttnV // llama.cpp counts these three together
		}
		if c == catOutput {
			mi.tiedEmbeddings = false
		}
		if r.reachesMix(ft, t) {
			mi.ordinal[t.Name] = counts[c]
			counts[c]++
		}
	}
	return mi
}

// reachesMix reports whether Choose consults the mix for t: a quantizable
// tensor of a quantized target that no option gives a type of its own.
func (r *Rules) reachesMix(ft FileType, t *gguf.TensorInfo) bool {
	if r.Pure || !isQuantized(ft.def) || slices.Contains(r.Keep, t.Type) {
		return false
	}
	if ok, _ := quantizable(t); !ok {
		return false
	}
	switch tensorCategory(t.Name) {
	case catTokenEmbd:
		if r.EmbdType != nil {
			return false
		}
	case catOutput:
		if r.OutputType != nil {
			return false
		}
	}
	for _, tt := range r.TensorTypes {
		if tt.Regex.MatchString(t.Name) {
			return false
		}
	}
	return true
}

func (r *Rules) info(f *gguf.File, ft FileType) *modelInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cache == nil || r.cache.f != f {
		r.cache = r.newModelInfo(f, ft)
	}
	return r.cache
}

// Target returns the file type the rules quantize to: FileType, or the one
// Default stands for.
func (r *Rules) Target() (FileType, error) {
	if r.FileType.Valid() {
		return r.FileType, nil
	}
	if !r.Default.Valid() {
		return FileType{}, fmt.Errorf("quant: invalid target type %s", r.Default)
	}
	ft, ok := FileTypeFor(r.Default)
	if !ok {
		return FileType{}, fmt.Errorf("quant: cannot quantize to %s (llama-quantize has no file type for it)", r.Default)
	}
	return ft, nil
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
	ft, err := r.Target()
	if err != nil {
		return Decision{}, err
	}
	def := ft.def
	keep := Decision{Type: t.Type}
	if slices.Contains(r.Keep, t.Type) {
		keep.Reason = fmt.Sprintf("kept: source type %s is listed to keep", t.Type)
		return keep, nil
	}
	if r.LeaveOutput && t.Name == "output.weight" {
		keep.Reason = "kept: --leave-output-tensor"
		return keep, nil
	}
	if ok, why := quantizable(t); !ok {
		keep.Reason = why
		return keep, nil
	}
	mi := r.info(f, ft)
	cat := tensorCategory(t.Name)
	d := Decision{}
	switch {
	case r.EmbdType != nil && cat == catTokenEmbd:
		d.Type, d.Reason = *r.EmbdType, "token embedding type"
	case r.OutputType != nil && cat == catOutput:
		d.Type, d.Reason = *r.OutputType, "output tensor type"
	default:
		d.Type, d.Reason = def, "default type"
		if isQuantized(def) {
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
				if mt, why := r.mix(ft, mi, t, cat); mt != d.Type {
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
	if w == nil && requiresImatrix(t.Name, d.Type, ft) {
		return Decision{}, fmt.Errorf("quant: tensor %q: type %s requires an importance matrix", t.Name, d.Type)
	}
	return d, nil
}

// requiresImatrix is llama.cpp's tensor_requires_imatrix: the i-quants
// below 3.1 bits, and Q2_K in a Q2_K_S file.
func requiresImatrix(name string, t gguf.Type, ft FileType) bool {
	switch tensorCategory(name) {
	case catTokenEmbd, catOutput:
		return false
	}
	switch t {
	case gguf.TypeIQ3_XXS, gguf.TypeIQ2_XXS, gguf.TypeIQ2_XS, gguf.TypeIQ2_S, gguf.TypeIQ1_M, gguf.TypeIQ1_S:
		return true
	case gguf.TypeQ2_K:
		return ft.id == ftQ2KS
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

// layerOf returns the layer of a tensor for the layer-dependent mixes, as
// llama.cpp's layer_info: its ordinal among the tensors of its kind, or with
// experts the number in its name.
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
// of file type ft's mixture. It returns the type and a reason.
func (r *Rules) mix(ft FileType, mi *modelInfo, t *gguf.TensorInfo, cat category) (gguf.Type, string) {
	f := ft.id
	nt := ft.def
	is := func(ids ...uint32) bool { return slices.Contains(ids, f) }
	hasImatrix := r.Imatrix != nil
	why := "llama.cpp mix for " + ft.name
	if cat == catOutput || (mi.tiedEmbeddings && cat == catTokenEmbd) {
		nx := int(t.RowLen())
		switch {
		case r.OutputType != nil:
			nt = *r.OutputType
		case f == ftMXFP4MoE:
			nt = gguf.TypeQ8_0
		case mi.falcon || nx%nt.BlockSize() != 0:
			nt = gguf.TypeQ8_0
		case is(ftIQ2XXS, ftIQ2XS, ftIQ3XXS, ftIQ1S, ftIQ2S, ftIQ2M, ftIQ1M):
			nt = gguf.TypeQ5_K
		case nt != gguf.TypeQ8_0:
			nt = gguf.TypeQ6_K
		}
		return nt, "output tensor (" + why + ")"
	}
	il := mi.ordinal[t.Name]
	switch {
	case f == ftMXFP4MoE:
		// Expert tensors (3-D) get MXFP4, the rest Q8_0; bailingmoe3's 3-D
		// attention projections are not experts.
		expert := len(t.Dims) > 2 && t.Dims[2] > 1
		if mi.bailingMoE3 && cat != catFFNUp && cat != catFFNGate && cat != catFFNDown {
			expert = false
		}
		if expert {
			nt = gguf.TypeMXFP4
		} else {
			nt = gguf.TypeQ8_0
		}
	case cat == catTokenEmbd:
		switch {
		case r.EmbdType != nil:
			nt = *r.EmbdType
		case is(ftIQ2XXS, ftIQ2XS, ftIQ1S, ftIQ1M):
			nt = gguf.TypeQ2_K
		case is(ftIQ2S, ftIQ2M, ftIQ3XXS):
			nt = gguf.TypeIQ3_S
		case is(ftTQ1, ftTQ2, ftQ2_0):
			nt = gguf.TypeQ4_K
		}
	case is(ftIQ2XXS, ftIQ2XS, ftIQ1S, ftIQ2S, ftIQ2M, ftIQ1M):
		iq2s := is(ftIQ2S, ftIQ2M)
		switch {
		case cat.isAttnV():
			switch {
			case mi.nGQA >= 4 || mi.nExpert >= 4:
				nt = gguf.TypeQ4_K
			case iq2s:
				nt = gguf.TypeIQ3_S
			default:
				nt = gguf.TypeQ2_K
			}
		case mi.nExpert == 8 && cat == catAttnK:
			nt = gguf.TypeQ4_K
		case cat == catFFNDown:
			// This branch counts ffn_down tensors even with experts.
			if il < mi.nLayer/8 {
				if iq2s {
					nt = gguf.TypeIQ3_S
				} else {
					nt = gguf.TypeQ2_K
				}
			}
		case cat == catAttnOutput:
			switch {
			case mi.nExpert == 8:
				nt = gguf.TypeQ5_K
			case is(ftIQ1S, ftIQ1M):
				nt = gguf.TypeIQ2_XXS
			case iq2s:
				nt = gguf.TypeIQ3_S
			}
		}
	case cat.isAttnV():
		nv := mi.nAttnV
		switch {
		case f == ftQ2K:
			nt = gguf.TypeQ3_K
			if mi.nGQA >= 4 {
				nt = gguf.TypeQ4_K
			}
		case f == ftQ2KS && mi.nGQA >= 4:
			nt = gguf.TypeQ4_K
		case f == ftIQ3XXS:
			switch {
			case mi.nGQA >= 4:
				nt = gguf.TypeQ4_K
			case !hasImatrix:
				nt = gguf.TypeIQ3_S
			}
		case is(ftIQ3XS, ftIQ3S) && mi.nGQA >= 4:
			nt = gguf.TypeQ4_K
		case f == ftIQ3M:
			nt = gguf.TypeQ4_K
		case f == ftQ3KM:
			nt = gguf.TypeQ4_K
			if il < 2 {
				nt = gguf.TypeQ5_K
			}
		case f == ftQ3KL:
			nt = gguf.TypeQ5_K
		case is(ftIQ4NL, ftIQ4XS) && mi.nGQA >= 4:
			nt = gguf.TypeQ5_K
		case is(ftQ4KM, ftQ5KM) && useMoreBits(il, nv):
			nt = gguf.TypeQ6_K
		case f == ftQ4KS && il < 4:
			nt = gguf.TypeQ5_K
		}
		if mi.is70B && (nt == gguf.TypeQ3_K || nt == gguf.TypeQ4_K) {
			nt = gguf.TypeQ5_K
		}
		if mi.nExpert == 8 {
			nt = gguf.TypeQ8_0
		}
	case cat == catAttnK:
		switch {
		case mi.nExpert == 8:
			nt = gguf.TypeQ8_0
		case f == ftIQ3XS:
			nt = gguf.TypeIQ3_XXS
		case f == ftIQ3XXS:
			nt = gguf.TypeIQ2_S
		}
	case cat == catAttnQ:
		switch f {
		case ftIQ3XS:
			nt = gguf.TypeIQ3_XXS
		case ftIQ3XXS:
			nt = gguf.TypeIQ2_S
		}
	case cat == catFFNDown:
		nt = r.mixFFNDown(f, nt, mi, mi.layerOf(t.Name), mi.nLayer, hasImatrix)
	case cat == catAttnOutput:
		switch {
		case mi.falcon:
			if f == ftQ3KL {
				nt = gguf.TypeQ4_K
			}
		case mi.nExpert == 8:
			if is(ftQ2K, ftIQ3XS, ftIQ3XXS, ftQ3KS, ftQ3KM, ftIQ4NL, ftQ4KS, ftQ4KM, ftIQ3S, ftIQ3M, ftIQ4XS) {
				nt = gguf.TypeQ5_K
			}
		default:
			switch f {
			case ftQ2K:
				nt = gguf.TypeQ3_K
			case ftIQ3XXS:
				nt = gguf.TypeIQ3_S
			case ftQ3KM, ftIQ3M:
				nt = gguf.TypeQ4_K
			case ftQ3KL:
				nt = gguf.TypeQ5_K
			}
		}
	case cat == catFFNGate || cat == catFFNUp:
		l, n := mi.layerOf(t.Name), mi.nLayer
		if f == ftIQ3XS && l >= n/8 && l < 7*n/8 {
			nt = gguf.TypeIQ3_XXS
		}
	}
	return nt, why
}

// mixFFNDown is the ffn_down part of the mix: layer il of n.
func (r *Rules) mixFFNDown(f uint32, nt gguf.Type, mi *modelInfo, il, n int, hasImatrix bool) gguf.Type {
	switch {
	case f == ftQ2K:
		return gguf.TypeQ3_K
	case f == ftQ2KS:
		if il < n/8 {
			return gguf.TypeQ4_K
		}
	case f == ftIQ3XXS && !hasImatrix:
		if il < n/8 {
			return gguf.TypeQ4_K
		}
		return gguf.TypeQ3_K
	case f == ftQ3KM:
		switch {
		case il < n/16:
			return gguf.TypeQ5_K
		case !mi.falcon || useMoreBits(il, n):
			return gguf.TypeQ4_K
		}
		return gguf.TypeQ3_K
	case f == ftIQ3M && (il < n/8 || (mi.nExpert == 8 && useMoreBits(il, n))):
		return gguf.TypeQ4_K
	case f == ftQ3KL:
		if mi.falcon {
			return gguf.TypeQ4_K
		}
		return gguf.TypeQ5_K
	case f == ftQ4KM:
		switch {
		case !mi.falcon:
			if useMoreBits(il, n) {
				return gguf.TypeQ6_K
			}
		case il < n/16:
			return gguf.TypeQ6_K
		case useMoreBits(il, n):
			return gguf.TypeQ5_K
		default:
			return gguf.TypeQ4_K
		}
	case il < n/8 && (f == ftIQ4NL || f == ftIQ4XS) && !hasImatrix:
		return gguf.TypeQ5_K
	case f == ftQ5KM && useMoreBits(il, n):
		return gguf.TypeQ6_K
	case f == ftQ4KS && !mi.falcon && il < n/8:
		return gguf.TypeQ5_K
	case (f == ftQ4_0 || f == ftQ5_0) && hasImatrix && il < n/8:
		if f == ftQ4_0 {
			return gguf.TypeQ4_1
		}
		return gguf.TypeQ5_1
	}
	return nt
}

func isQuantized(t gguf.Type) bool {
	tr, err := t.Traits()
	return err == nil && tr.Quantized
}
