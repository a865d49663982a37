package ops

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
	"github.com/ggufkit/gguf/safetensors"
)

// MTP adds the multi-token-prediction block of a Qwen3.5 checkpoint (its
// mtp.* tensors, in safetensors files) to a qwen35 or qwen35moe GGUF that
// lacks it, as
// llama.cpp's convert_hf_to_gguf.py writes it (conversion/qwen.py,
// _QwenMtpMixin and Qwen3NextModel.modify_tensors): mtp.fc, the two input
// norms and the final norm become blk.N.nextn.{eh_proj,enorm,hnorm,
// shared_head_norm} and mtp.layers.K.* the usual tensors of block N+K,
// with N the model's block_count; every norm weight gets 1 added (the
// checkpoint stores RMS norm weights as offsets from 1); block_count grows
// by the MTP layers and nextn_predict_layers says how many. A MoE block's
// experts, one tensor per expert in the checkpoint, are stacked into
// ffn_{gate,down,up}_exps as Qwen2MoeModel.modify_tensors stacks them, or,
// stored fused as recent transformers save them (mlp.experts.gate_up_proj
// [experts, 2*ff, embd] and mlp.experts.down_proj [experts, embd, ff]),
// split as it splits them: each expert's first ff rows of gate_up_proj are
// its gate, the next ff its up, read a range per expert; its router and shared-expert gate are F32 whatever the type, as the
// converter forces them.
type MTP struct {
	Sources []MTPSource
	// Type is the type of the 2-D weights, as convert_hf_to_gguf's
	// --outtype: F32, F16, BF16 or Q8_0 (Q8_0 falls back to F16 for rows
	// that are no whole blocks, as the converter does); norms are F32.
	Type gguf.Type
	// Auto ignores Type for the converter's auto: BF16 if the first 2-D
	// tensor of the checkpoint is BF16, else F16.
	Auto bool
	// Threads converting rows (<1 means 1).
	Threads int
}

// ParseMTPType parses convert_hf_to_gguf's --outtype as --mtp-outtype and
// a recipe's add_mtp.outtype take it: f32, f16, bf16, q8_0 (any case) or
// auto.
func ParseMTPType(s string) (typ gguf.Type, auto bool, err error) {
	switch strings.ToLower(s) {
	case "auto":
		return 0, true, nil
	case "f32":
		return gguf.TypeF32, false, nil
	case "f16":
		return gguf.TypeF16, false, nil
	case "bf16":
		return gguf.TypeBF16, false, nil
	case "q8_0":
		return gguf.TypeQ8_0, false, nil
	}
	return 0, false, fmt.Errorf("%q: want f32, f16, bf16, q8_0 or auto", s)
}

// MTPSource is one safetensors file: its decoded header and its bytes (an
// input without a GGUF File).
type MTPSource struct {
	Input *plan.Input
	File  *safetensors.File
}

// mtpNames maps the checkpoint's MTP names to llama.cpp's: the block's own
// tensors (after "mtp.") and a layer's (after "mtp.layers.K."), in the
// order llama.cpp's qwen35 loader creates them, which is the order they
// are written in.
var (
	mtpLayerNames = []struct{ hf, gguf string }{
		{"input_layernorm.weight", "attn_norm.weight"},
		{"self_attn.q_proj.weight", "attn_q.weight"},
		{"self_attn.k_proj.weight", "attn_k.weight"},
		{"self_attn.v_proj.weight", "attn_v.weight"},
		{"self_attn.o_proj.weight", "attn_output.weight"},
		{"self_attn.q_norm.weight", "attn_q_norm.weight"},
		{"self_attn.k_norm.weight", "attn_k_norm.weight"},
		{"post_attention_layernorm.weight", "post_attention_norm.weight"},
		{"mlp.gate.weight", "ffn_gate_inp.weight"},
		{"mlp.experts.gate_proj.weight", "ffn_gate_exps.weight"},
		{"mlp.experts.down_proj.weight", "ffn_down_exps.weight"},
		{"mlp.experts.up_proj.weight", "ffn_up_exps.weight"},
		{"mlp.shared_expert_gate.weight", "ffn_gate_inp_shexp.weight"},
		{"mlp.shared_expert.gate_proj.weight", "ffn_gate_shexp.weight"},
		{"mlp.shared_expert.down_proj.weight", "ffn_down_shexp.weight"},
		{"mlp.shared_expert.up_proj.weight", "ffn_up_shexp.weight"},
		{"mlp.gate_proj.weight", "ffn_gate.weight"},
		{"mlp.down_proj.weight", "ffn_down.weight"},
		{"mlp.up_proj.weight", "ffn_up.weight"},
	}
	mtpBlockNames = []struct{ hf, gguf string }{
		{"fc.weight", "nextn.eh_proj.weight"},
		{"pre_fc_norm_embedding.weight", "nextn.enorm.weight"},
		{"pre_fc_norm_hidden.weight", "nextn.hnorm.weight"},
		{"norm.weight", "nextn.shared_head_norm.weight"},
	}
)

// mtpTensor is one checkpoint tensor on its way into the model, or the
// experts stacked into one.
type mtpTensor struct {
	src *MTPSource
	t   *safetensors.Tensor
	// experts are a stacked tensor's parts by expert index (t is the first
	// seen); nil for a tensor of its own
	experts []*safetensors.Tensor
	block   int // blk.N of the output
	order   int // place in the block (mtpLayerNames, then mtpBlockNames)
	name    string
	// half is, for a fused gate_up_proj, the half of each expert's rows
	// it takes: 1 the gate's (the first), 2 the up's; 0 for all
	half int
}

// mtpFusedGateUp is the expert index mtpMapName gives a fused
// mlp.experts.gate_up_proj (named as its gate half), a tensor for two.
const mtpFusedGateUp = -2

// mtpMaxExperts bounds the expert index of a checkpoint name, so a
// hostile name cannot make a huge table.
const mtpMaxExperts = 1 << 16

// mtpMapName returns the GGUF name of checkpoint tensor name (n the
// model's block_count), its block, its place in it and, for one expert of
// a MoE FFN (mlp.experts.E.*), its expert index (mtpFusedGateUp for the
// experts' gate and up fused, else -1); ok is false for
// a name outside mtp.*; an mtp.* name llama.cpp does not know is an error.
func mtpMapName(name string, n int) (out string, block, order, expert int, ok bool, err error) {
	rest, isMTP := strings.CutPrefix(strings.TrimPrefix(name, "model."), "mtp.")
	if !isMTP {
		return "", 0, 0, -1, false, nil
	}
	if l, ok := strings.CutPrefix(rest, "layers."); ok {
		idx, suffix, _ := strings.Cut(l, ".")
		k, err := strconv.Atoi(idx)
		expert := -1
		if e, ok := strings.CutPrefix(suffix, "mlp.experts."); ok {
			// the fused tensors are spelled with and without ".weight",
			// as the converter takes them
			switch eidx, w, _ := strings.Cut(e, "."); strings.TrimSuffix(e, ".weight") {
			case "gate_up_proj":
				expert, suffix = mtpFusedGateUp, "mlp.experts.gate_proj.weight"
			case "down_proj":
				suffix = "mlp.experts.down_proj.weight"
			default:
				x, xerr := strconv.Atoi(eidx)
				if xerr != nil || x < 0 || x >= mtpMaxExperts {
					return "", 0, 0, -1, true, fmt.Errorf("%s: not a tensor of a Qwen3.5 MTP block llama.cpp loads (an expert's index, gate_up_proj or down_proj after mlp.experts.)", name)
				}
				expert, suffix = x, "mlp.experts."+w
			}
		}
		if err == nil && k >= 0 && k < 64 {
			for i, m := range mtpLayerNames {
				if m.hf == suffix {
					return fmt.Sprintf("blk.%d.%s", n+k, m.gguf), n + k, i, expert, true, nil
				}
			}
		}
	} else {
		for i, m := range mtpBlockNames {
			if m.hf == rest {
				return fmt.Sprintf("blk.%d.%s", n, m.gguf), n, len(mtpLayerNames) + i, -1, true, nil
			}
		}
	}
	return "", 0, 0, -1, true, fmt.Errorf("%s: not a tensor of a Qwen3.5 MTP block llama.cpp loads", name)
}

// mtpSourceType is the ggml type of a checkpoint dtype the converter reads
// as floats.
func mtpSourceType(dtype string) (gguf.Type, bool) {
	switch dtype {
	case "BF16":
		return gguf.TypeBF16, true
	case "F16":
		return gguf.TypeF16, true
	case "F32":
		return gguf.TypeF32, true
	}
	return 0, false
}

// applyMTP adds m's tensors to p and updates its metadata; it returns the
// names added.
func applyMTP(p *plan.Plan, m *MTP) ([]string, error) {
	md := p.Metadata
	arch := md.Architecture()
	if arch != "qwen35" && arch != "qwen35moe" {
		return nil, fmt.Errorf("--add-mtp: the model is %q: only a qwen35 or qwen35moe model takes a Qwen3.5 MTP block", arch)
	}
	typ := m.Type
	if m.Auto {
		typ = mtpAutoType(m)
	}
	switch typ {
	case gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0:
	default:
		return nil, fmt.Errorf("--add-mtp: type %s: want f32, f16, bf16 or q8_0 (convert_hf_to_gguf's --outtype)", typ)
	}
	bc, ok := md.ArchUint("block_count")
	if !ok || bc == 0 || bc > math.MaxInt32 {
		return nil, fmt.Errorf("--add-mtp: the model has no usable %s.block_count", arch)
	}
	if n, ok := md.ArchUint("nextn_predict_layers"); ok && n > 0 {
		return nil, fmt.Errorf("--add-mtp: the model already has %d NextN/MTP layers (%s.nextn_predict_layers)", n, arch)
	}
	embd, ok := md.ArchUint("embedding_length")
	if !ok {
		return nil, fmt.Errorf("--add-mtp: the model has no %s.embedding_length", arch)
	}
	n := int(bc)
	var ts []mtpTensor
	seen := map[string]string{}
	stacked := map[string]int{} // name -> index in ts
	layers := 0
	for si := range m.Sources {
		s := &m.Sources[si]
		for ti := range s.File.Tensors {
			t := &s.File.Tensors[ti]
			name, block, order, expert, isMTP, err := mtpMapName(t.Name, n)
			if err != nil {
				return nil, fmt.Errorf("--add-mtp %s: %w", s.Input.Name, err)
			}
			if !isMTP {
				continue
			}
			if expert == mtpFusedGateUp {
				if prev, dup := seen[name]; dup {
					return nil, fmt.Errorf("--add-mtp: %s is in both %s and %s", t.Name, prev, s.Input.Name)
				}
				seen[name] = s.Input.Name
				layers = max(layers, block-n+1)
				upName := strings.Replace(name, ".ffn_gate_exps.", ".ffn_up_exps.", 1)
				ts = append(ts, mtpTensor{src: s, t: t, block: block, order: order, name: name, half: 1},
					mtpTensor{src: s, t: t, block: block, order: mtpLayerOrder("ffn_up_exps.weight"), name: upName, half: 2})
				continue
			}
			if expert >= 0 {
				if err := mtpAddExpert(&ts, stacked, s, t, name, block, order, expert); err != nil {
					return nil, fmt.Errorf("--add-mtp: %w", err)
				}
				layers = max(layers, block-n+1)
				continue
			}
			if prev, dup := seen[name]; dup {
				return nil, fmt.Errorf("--add-mtp: %s is in both %s and %s", t.Name, prev, s.Input.Name)
			}
			seen[name] = s.Input.Name
			layers = max(layers, block-n+1)
			ts = append(ts, mtpTensor{src: s, t: t, block: block, order: order, name: name})
		}
	}
	if len(ts) == 0 {
		return nil, fmt.Errorf("--add-mtp: no mtp.* tensor in %s", mtpSourceNames(m))
	}
	slices.SortFunc(ts, func(a, b mtpTensor) int { return cmp.Or(cmp.Compare(a.block, b.block), cmp.Compare(a.order, b.order)) })
	for i := 1; i < len(ts); i++ {
		// the experts both fused and one tensor each
		if ts[i].name == ts[i-1].name {
			return nil, fmt.Errorf("--add-mtp: %s is both in %s (%s) and in %s (%s)", ts[i].name, ts[i-1].t.Name, ts[i-1].src.Input.Name, ts[i].t.Name, ts[i].src.Input.Name)
		}
	}
	var added []string
	for i := range ts {
		pt, err := mtpPlanTensor(p, &ts[i], typ, m.Threads, int(embd))
		if err != nil {
			return nil, fmt.Errorf("--add-mtp %s: %s: %w", ts[i].src.Input.Name, ts[i].t.Name, err)
		}
		if p.Index(pt.Info.Name) >= 0 {
			return nil, fmt.Errorf("--add-mtp: tensor %q is already in the model", pt.Info.Name)
		}
		p.Tensors = append(p.Tensors, pt)
		added = append(added, pt.Info.Name)
	}
	if err := mtpMetadata(p, arch, n, layers); err != nil {
		return nil, err
	}
	return added, nil
}

// mtpAddExpert puts checkpoint tensor t, expert e of the stacked tensor
// name, in its place among ts (stacked indexes them by name). A stacked
// tensor is read from one file: experts split over several are refused.
func mtpAddExpert(ts *[]mtpTensor, stacked map[string]int, s *MTPSource, t *safetensors.Tensor, name string, block, order, e int) error {
	i, ok := stacked[name]
	if !ok {
		i = len(*ts)
		stacked[name] = i
		*ts = append(*ts, mtpTensor{src: s, t: t, block: block, order: order, name: name})
	}
	mt := &(*ts)[i]
	if mt.src != s {
		return fmt.Errorf("the experts of %s are in both %s and %s: only experts of one file are stacked", name, mt.src.Input.Name, s.Input.Name)
	}
	if e >= len(mt.experts) {
		mt.experts = append(mt.experts, make([]*safetensors.Tensor, e+1-len(mt.experts))...)
	}
	if mt.experts[e] != nil {
		return fmt.Errorf("%s is in %s twice", t.Name, s.Input.Name)
	}
	mt.experts[e] = t
	return nil
}

// mtpLayerOrder is the place of llama.cpp's layer tensor name (after
// "blk.N.") in mtpLayerNames.
func mtpLayerOrder(name string) int {
	return slices.IndexFunc(mtpLayerNames, func(m struct{ hf, gguf string }) bool { return m.gguf == name })
}

// mtpAutoType is convert_hf_to_gguf's --outtype auto: the checkpoint's
// first 2-D tensor decides (BF16 keeps BF16, anything else is F16).
func mtpAutoType(m *MTP) gguf.Type {
	for _, s := range m.Sources {
		for _, t := range s.File.Tensors {
			if len(t.Shape) >= 2 {
				if t.DType == "BF16" {
					return gguf.TypeBF16
				}
				return gguf.TypeF16
			}
		}
	}
	return gguf.TypeF16
}

func mtpSourceNames(m *MTP) string {
	var names []string
	for _, s := range m.Sources {
		names = append(names, s.Input.Name)
	}
	return strings.Join(names, ", ")
}

// mtpPlanTensor checks a checkpoint tensor's dtype and shape (against the
// main model's tensor of the same name in its last layer that has one, or
// against embedding_length for the nextn.* ones; a trailing 1, as the
// shared-expert gate's [1, embd], aside) and returns the output tensor
// converting it, its dims the model's.
func mtpPlanTensor(p *plan.Plan, mt *mtpTensor, typ gguf.Type, threads, embd int) (plan.Tensor, error) {
	t := mt.t
	from, ok := mtpSourceType(t.DType)
	if !ok {
		return plan.Tensor{}, fmt.Errorf("dtype %s: want BF16, F16 or F32", t.DType)
	}
	dims := make([]uint64, len(t.Shape))
	for i, d := range t.Shape {
		dims[len(dims)-1-i] = uint64(d)
	}
	ranges := []plan.Range{{Off: t.Off, Len: t.Len}}
	if mt.experts != nil {
		if len(t.Shape) != 2 {
			return plan.Tensor{}, fmt.Errorf("shape %v: an expert's weight is 2-D", t.Shape)
		}
		ranges = ranges[:0]
		for e, x := range mt.experts {
			switch {
			case x == nil:
				return plan.Tensor{}, fmt.Errorf("expert %d of %s is missing", e, mt.name)
			case x.DType != t.DType || !slices.Equal(x.Shape, t.Shape):
				return plan.Tensor{}, fmt.Errorf("%s is %s %v, %s is %s %v: the experts differ", x.Name, x.DType, x.Shape, t.Name, t.DType, t.Shape)
			}
			ranges = append(ranges, plan.Range{Off: x.Off, Len: x.Len})
		}
		dims = append(dims, uint64(len(mt.experts)))
	}
	if mt.half != 0 {
		var err error
		if ranges, err = mtpGateUpHalf(t, mt.half); err != nil {
			return plan.Tensor{}, err
		}
		dims[1] /= 2
	}
	var want []uint64
	suffix := mt.name[strings.Index(mt.name[4:], ".")+5:]
	switch suffix {
	case "nextn.eh_proj.weight":
		want = []uint64{2 * uint64(embd), uint64(embd)}
	case "nextn.enorm.weight", "nextn.hnorm.weight", "nextn.shared_head_norm.weight":
		want = []uint64{uint64(embd)}
	default:
		for j := len(p.Tensors) - 1; j >= 0 && want == nil; j-- {
			if nm := p.Tensors[j].Info.Name; strings.HasPrefix(nm, "blk.") && strings.HasSuffix(nm, "."+suffix) && strings.Count(nm, ".") == strings.Count(mt.name, ".") {
				want = p.Tensors[j].Info.Dims
			}
		}
		if want == nil {
			return plan.Tensor{}, fmt.Errorf("the model has no %s in any layer to check its shape against", suffix)
		}
	}
	if !slices.Equal(trimOnes(dims), trimOnes(want)) {
		return plan.Tensor{}, fmt.Errorf("shape %v (GGUF dims %v): the model wants %v", t.Shape, dims, want)
	}
	dims = want
	if len(dims) == 0 || dims[0] == 0 {
		return plan.Tensor{}, fmt.Errorf("shape %v: no rows to convert", t.Shape)
	}
	rowLen := int64(dims[0])
	// the converter adds 1 to a norm's weight and keeps F32 the norms, the
	// 1-D tensors and the routers (FFN_GATE_INP, FFN_GATE_INP_SHEXP)
	norm := strings.HasSuffix(mt.name, "norm.weight")
	f32 := norm || len(t.Shape) == 1 || strings.HasSuffix(mt.name, ".ffn_gate_inp.weight") || strings.HasSuffix(mt.name, ".ffn_gate_inp_shexp.weight")
	to := typ
	if f32 {
		to = gguf.TypeF32
	} else if tt, err := to.Traits(); err != nil {
		return plan.Tensor{}, err
	} else if rowLen%int64(tt.BlockSize) != 0 {
		to = gguf.TypeF16
	}
	info := gguf.TensorInfo{Name: mt.name, Dims: dims, Type: to}
	inRow := rowLen * safetensors.ElemSize(t.DType)
	outRow := info.RowBytes()
	note := "convert " + t.DType + " to " + to.String()
	if norm {
		note += " +1"
	}
	var inner plan.Producer = &plan.Span{In: mt.src.Input, R: ranges[0], Note: t.Name + " of " + mt.src.Input.Name}
	if mt.half != 0 {
		inner = &plan.Spans{In: mt.src.Input, R: ranges, Note: fmt.Sprintf("the %s rows of %d experts of %s of %s", [...]string{1: "gate", 2: "up"}[mt.half], len(ranges), t.Name, mt.src.Input.Name)}
	} else if mt.experts != nil {
		inner = &plan.Spans{In: mt.src.Input, R: ranges, Note: fmt.Sprintf("%d experts, %s to %s, of %s", len(ranges), mt.experts[0].Name, mt.experts[len(ranges)-1].Name, mt.src.Input.Name)}
	}
	tr := &plan.Transform{Inner: inner, InRowBytes: inRow, OutRowBytes: outRow, Note: note}
	tr.Fn = func(dst, src []byte, _ int64) error {
		if !norm {
			return quant.ConvertTensor(dst, src, from, to, int(rowLen), nil, threads)
		}
		// The converter adds 1 in float32 to the float32 the checkpoint's
		// value converts to exactly, and writes the sum as F32.
		f := make([]float32, int64(len(src))/inRow*rowLen)
		if err := quant.Dequantize(from, f, src); err != nil {
			return err
		}
		for i, v := range f {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v+1))
		}
		return nil
	}
	return plan.Tensor{Info: info, Src: tr}, nil
}

// mtpGateUpHalf returns the ranges of half (1 the gate, 2 the up) of the
// fused gate_up_proj t, [experts, 2*ff, embd]: a range per expert, the
// first or the last ff of its rows, as the converter's
// data_torch[..., :n_ff, :] and [..., n_ff:, :] take them.
func mtpGateUpHalf(t *safetensors.Tensor, half int) ([]plan.Range, error) {
	// a table of a range per expert: bounded as an expert index is, and by
	// the file (no expert without bytes)
	if len(t.Shape) != 3 || t.Shape[0] <= 0 || t.Shape[0] > mtpMaxExperts || t.Shape[1] <= 0 || t.Shape[1]%2 != 0 || t.Shape[2] <= 0 {
		return nil, fmt.Errorf("shape %v: a fused gate_up_proj is [experts, 2*ff, embd], at most %d experts", t.Shape, mtpMaxExperts)
	}
	per := t.Shape[1] * t.Shape[2] * safetensors.ElemSize(t.DType)
	if per*t.Shape[0] != t.Len {
		return nil, fmt.Errorf("shape %v of %s is not its %d bytes", t.Shape, t.DType, t.Len)
	}
	rs := make([]plan.Range, t.Shape[0])
	for e := range rs {
		rs[e] = plan.Range{Off: t.Off + int64(e)*per + int64(half-1)*per/2, Len: per / 2}
	}
	return rs, nil
}

// trimOnes returns dims without its trailing 1s.
func trimOnes(dims []uint64) []uint64 {
	for len(dims) > 0 && dims[len(dims)-1] == 1 {
		dims = dims[:len(dims)-1]
	}
	return dims
}

// mtpMetadata sets block_count and nextn_predict_layers as the converter
// writes them: both u32, nextn_predict_layers where its set_gguf_parameters
// adds it (just before the ssm.* keys Qwen3NextModel adds after it). A key
// llama.cpp reads per layer given as an array (head counts, FFN width)
// would need entries for the new layers nobody can guess: refused.
func mtpMetadata(p *plan.Plan, arch string, n, layers int) error {
	md := p.Metadata
	for _, k := range []string{"attention.head_count", "attention.head_count_kv", "feed_forward_length"} {
		if v, ok := md.Get(arch + "." + k); ok && v.Type() == gguf.TypeArray {
			return fmt.Errorf("--add-mtp: %s.%s has an entry per layer: it needs entries for the MTP layers too", arch, k)
		}
	}
	md.Set(arch+".block_count", gguf.Uint32(uint32(n+layers)))
	key, before := arch+".nextn_predict_layers", arch+".ssm.conv_kernel"
	kvs := md.KVs()
	at := slices.IndexFunc(kvs, func(kv gguf.KV) bool { return kv.Key == before })
	if at < 0 {
		md.Set(key, gguf.Uint32(uint32(layers)))
		return nil
	}
	nkvs := slices.Insert(slices.Clone(kvs), at, gguf.KV{Key: key, Value: gguf.Uint32(uint32(layers))})
	nmd, err := gguf.NewMetadata(nkvs...)
	if err != nil {
		return err
	}
	p.Metadata = nmd
	return nil
}
