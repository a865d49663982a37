package inspect

import (
	"encoding/json"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/experts"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/layout"
)

// Roles a tensor can play, as `gguf info` groups bytes.
const (
	RoleTokenEmbedding = "token_embedding"
	RoleOutputHead     = "output_head"
	RoleAttention      = "attention"
	RoleFFN            = "ffn"
	RoleExperts        = "experts"
	RoleNorms          = "norms"
	RoleOther          = "other"
)

var (
	layerRe  = regexp.MustCompile(`^blk\.(\d+)\.`)
	expertRe = regexp.MustCompile(`_exps(\.|_|$)`)
)

// Role classifies a tensor by its llama.cpp name.
func Role(name string) string {
	switch {
	case strings.HasPrefix(name, "token_embd."):
		return RoleTokenEmbedding
	case name == "output.weight" || name == "output.bias" || name == "output_ids.weight":
		return RoleOutputHead
	case isNorm(name):
		return RoleNorms
	case expertRe.MatchString(name):
		return RoleExperts
	}
	if m := layerRe.FindStringSubmatch(name); m != nil {
		rest := name[len(m[0]):]
		switch {
		case strings.HasPrefix(rest, "attn_"), strings.HasPrefix(rest, "ssm_"), strings.HasPrefix(rest, "time_mix"):
			return RoleAttention
		case strings.HasPrefix(rest, "ffn_"), strings.HasPrefix(rest, "channel_mix"):
			return RoleFFN
		}
	}
	return RoleOther
}

// isNorm reports a normalization weight: the last name component before
// .weight/.bias ends in "norm" or has "_norm" in it (attn_norm, output_norm,
// attn_q_norm, ffn_norm...).
func isNorm(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".weight"), ".bias")
	base := name[strings.LastIndexByte(name, '.')+1:]
	return strings.HasSuffix(base, "norm") || strings.Contains(base, "_norm")
}

// Layer returns the block number of a blk.N.* tensor, or -1.
func Layer(name string) int {
	m := layerRe.FindStringSubmatch(name)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Group is the bytes and parameters of a set of tensors.
type Group struct {
	Name       string  `json:"name"`
	Tensors    int     `json:"tensors"`
	Parameters uint64  `json:"parameters"`
	Bytes      int64   `json:"bytes"`
	Share      float64 `json:"share"`           // of all tensor bytes
	BPW        float64 `json:"bits_per_weight"` // bytes*8/parameters
}

// LayoutGroup is the repacked tensors of one layout and original type.
type LayoutGroup struct {
	Layout     string  `json:"layout"`
	From       string  `json:"from"`     // the original ggml type
	Lossless   bool    `json:"lossless"` // unpacking gives back the original bytes
	Tensors    int     `json:"tensors"`
	Parameters uint64  `json:"parameters"`
	Bytes      int64   `json:"bytes"`
	BPW        float64 `json:"bits_per_weight"`
}

// Tensor is one tensor info as reported.
type Tensor struct {
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	TypeID     uint32   `json:"type_id"`
	Shape      []uint64 `json:"shape"`
	Offset     uint64   `json:"offset"`      // relative to the data section, as in the file
	FileOffset int64    `json:"file_offset"` // absolute
	Bytes      int64    `json:"bytes"`
	Role       string   `json:"role"`
	// Layout is the layout of a repacked tensor (q2lut, ter3...), whose
	// role is that of its original name.
	Layout string `json:"layout,omitempty"`
}

// KV is one metadata entry as reported. Value is the full value: numbers,
// strings, bools, arrays (nested arrays as arrays); non-finite floats are
// the strings "NaN", "+Inf", "-Inf".
type KV struct {
	Key      string `json:"key"`
	Type     string `json:"type"`
	ElemType string `json:"elem_type,omitempty"`
	Count    *int   `json:"count,omitempty"`
	Value    any    `json:"value"`
}

// Summary is everything `gguf info --json` prints.
type Summary struct {
	Source        string  `json:"source"`
	Size          int64   `json:"size"` // -1 when unknown (a stream)
	Version       uint32  `json:"version"`
	Alignment     uint64  `json:"alignment"`
	HeaderBytes   int64   `json:"header_bytes"`
	DataOffset    int64   `json:"data_offset"`
	DataBytes     int64   `json:"data_bytes"`
	Architecture  string  `json:"architecture"`
	Name          string  `json:"name"`
	Parameters    uint64  `json:"parameters"`
	FileType      *int64  `json:"file_type"`
	FileTypeName  string  `json:"file_type_name"`
	ContextLength *uint64 `json:"context_length"`
	VocabSize     *uint64 `json:"vocab_size"`
	TensorCount   int     `json:"tensor_count"`
	MetadataCount int     `json:"metadata_count"`
	ByType        []Group `json:"bytes_by_type"`
	ByRole        []Group `json:"bytes_by_role"`
	Layers        int     `json:"layers"`
	// Experts describes MoE expert storage (absent for dense models).
	Experts *experts.Info `json:"experts,omitempty"`
	// Layouts groups the repacked tensors by layout and original type;
	// LayoutError says why the layout metadata could not be read.
	Layouts     []LayoutGroup `json:"layouts,omitempty"`
	LayoutError string        `json:"layout_error,omitempty"`
	Metadata    []KV          `json:"metadata"`
	Tensors     []Tensor      `json:"tensors"`
}

// Summarize describes f, read from source (a file of size bytes, or -1).
func Summarize(source string, f *gguf.File, size int64) *Summary {
	md := f.Metadata
	s := &Summary{
		Source: source, Size: size, Version: f.Version, Alignment: f.Alignment,
		HeaderBytes: f.HeaderSize, DataOffset: f.DataOffset, DataBytes: f.DataSize,
		Architecture: md.Architecture(), Name: md.String(gguf.KeyName),
		TensorCount: len(f.Tensors), MetadataCount: md.Len(),
	}
	if v, ok := md.Get(gguf.KeyFileType); ok {
		if ft, ok := v.Int(); ok {
			s.FileType = &ft
			s.FileTypeName = FileTypeName(ft)
		}
	}
	if n, ok := md.ArchUint("context_length"); ok {
		s.ContextLength = &n
	}
	if v, ok := md.Get(gguf.KeyTokens); ok && v.IsArray() {
		n := uint64(v.Len())
		s.VocabSize = &n
	} else if n, ok := md.ArchUint("vocab_size"); ok {
		s.VocabSize = &n
	}

	entries, lerr := layout.Entries(md)
	if lerr != nil {
		s.LayoutError = lerr.Error()
	}
	lays := map[string]layout.Entry{}
	for _, e := range entries {
		lays[e.Name] = e
	}
	byLayout := map[layout.Entry]*LayoutGroup{}
	byType := map[string]*Group{}
	byRole := map[string]*Group{}
	var total int64
	maxLayer := -1
	for i := range f.Tensors {
		t := &f.Tensors[i]
		e, repacked := lays[t.Name]
		role, typeName := Role(t.Name), t.Type.String()
		if repacked {
			role, typeName = Role(e.Original()), string(e.Kind)
		}
		s.Tensors = append(s.Tensors, Tensor{
			Name: t.Name, Type: t.Type.String(), TypeID: uint32(t.Type), Shape: t.Dims,
			Offset: t.Offset, FileOffset: f.DataOffset + int64(t.Offset), Bytes: t.Size(), Role: role,
			Layout: string(e.Kind),
		})
		params := t.NumElements()
		if repacked {
			// The weights it holds, whatever the type it is stored as.
			params, _ = layout.Parameters(*t, e)
			key := layout.Entry{Kind: e.Kind, From: e.From}
			g, ok := byLayout[key]
			if !ok {
				g = &LayoutGroup{Layout: string(e.Kind), From: e.From.String(), Lossless: e.Kind.Lossless() || e.From != gguf.TypeQ2_0}
				byLayout[key] = g
			}
			g.Tensors++
			g.Parameters += params
			g.Bytes += t.Size()
		} else if isIndex(t.Type) {
			params = 0 // id maps and masks are not weights
		}
		s.Parameters += params
		total += t.Size()
		for _, g := range []*Group{group(byType, typeName), group(byRole, role)} {
			g.Tensors++
			g.Parameters += params
			g.Bytes += t.Size()
		}
		maxLayer = max(maxLayer, Layer(t.Name))
	}
	s.Layers = maxLayer + 1
	s.Experts = experts.Describe(f)
	for _, g := range byLayout {
		if g.Parameters > 0 {
			g.BPW = float64(g.Bytes) * 8 / float64(g.Parameters)
		}
		s.Layouts = append(s.Layouts, *g)
	}
	sort.Slice(s.Layouts, func(i, j int) bool {
		a, b := s.Layouts[i], s.Layouts[j]
		return a.Layout < b.Layout || (a.Layout == b.Layout && a.From < b.From)
	})
	s.ByType = finish(byType, total)
	s.ByRole = finish(byRole, total)
	for _, kv := range md.KVs() {
		s.Metadata = append(s.Metadata, kvJSON(kv))
	}
	return s
}

func isIndex(t gguf.Type) bool {
	switch t {
	case gguf.TypeI8, gguf.TypeI16, gguf.TypeI32, gguf.TypeI64:
		return true
	}
	return false
}

func group(m map[string]*Group, name string) *Group {
	g, ok := m[name]
	if !ok {
		g = &Group{Name: name}
		m[name] = g
	}
	return g
}

// finish computes shares and orders groups by bytes, largest first.
func finish(m map[string]*Group, total int64) []Group {
	out := make([]Group, 0, len(m))
	for _, g := range m {
		if total > 0 {
			g.Share = float64(g.Bytes) / float64(total)
		}
		if g.Parameters > 0 {
			g.BPW = float64(g.Bytes) * 8 / float64(g.Parameters)
		}
		out = append(out, *g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Bytes != out[j].Bytes {
			return out[i].Bytes > out[j].Bytes
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func kvJSON(kv gguf.KV) KV {
	v := kv.Value
	out := KV{Key: kv.Key, Type: v.Type().String(), Value: ValueJSON(v)}
	if v.IsArray() {
		out.ElemType = v.ElemType().String()
		n := v.Len()
		out.Count = &n
	}
	return out
}

// ValueJSON converts a metadata value to something encoding/json prints
// faithfully: floats that JSON cannot hold become strings.
func ValueJSON(v gguf.Value) any {
	switch x := v.Interface().(type) {
	case float32:
		return floatJSON(float64(x), 32)
	case float64:
		return floatJSON(x, 64)
	case []float32:
		out := make([]any, len(x))
		for i, f := range x {
			out[i] = floatJSON(float64(f), 32)
		}
		return out
	case []float64:
		out := make([]any, len(x))
		for i, f := range x {
			out[i] = floatJSON(f, 64)
		}
		return out
	case []gguf.Value:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = ValueJSON(e)
		}
		return out
	case []uint8:
		// encoding/json would print a []byte as base64; keep it numeric.
		out := make([]uint16, len(x))
		for i, b := range x {
			out[i] = uint16(b)
		}
		return out
	}
	return v.Interface()
}

func floatJSON(f float64, bits int) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	// The shortest text that reads back as the same float32/float64.
	return json.Number(strconv.FormatFloat(f, 'g', -1, bits))
}

// fileTypeNames is llama.cpp's llama_ftype list (general.file_type values,
// which are not ggml type ids).
var fileTypeNames = map[int64]string{
	0: "ALL_F32", 1: "MOSTLY_F16", 2: "MOSTLY_Q4_0", 3: "MOSTLY_Q4_1", 7: "MOSTLY_Q8_0", 8: "MOSTLY_Q5_0",
	9: "MOSTLY_Q5_1", 10: "MOSTLY_Q2_K", 11: "MOSTLY_Q3_K_S", 12: "MOSTLY_Q3_K_M", 13: "MOSTLY_Q3_K_L",
	14: "MOSTLY_Q4_K_S", 15: "MOSTLY_Q4_K_M", 16: "MOSTLY_Q5_K_S", 17: "MOSTLY_Q5_K_M", 18: "MOSTLY_Q6_K",
	19: "MOSTLY_IQ2_XXS", 20: "MOSTLY_IQ2_XS", 21: "MOSTLY_Q2_K_S", 22: "MOSTLY_IQ3_XS", 23: "MOSTLY_IQ3_XXS",
	24: "MOSTLY_IQ1_S", 25: "MOSTLY_IQ4_NL", 26: "MOSTLY_IQ3_S", 27: "MOSTLY_IQ3_M", 28: "MOSTLY_IQ2_S",
	29: "MOSTLY_IQ2_M", 30: "MOSTLY_IQ4_XS", 31: "MOSTLY_IQ1_M", 32: "MOSTLY_BF16", 36: "MOSTLY_TQ1_0",
	37: "MOSTLY_TQ2_0", 38: "MOSTLY_MXFP4_MOE", 39: "MOSTLY_NVFP4", 40: "MOSTLY_Q1_0", 41: "MOSTLY_Q2_0",
	1024: "GUESSED",
}

// FileTypeName returns llama.cpp's name for a general.file_type value.
func FileTypeName(ft int64) string {
	if n, ok := fileTypeNames[ft]; ok {
		return n
	}
	return "unknown(" + strconv.FormatInt(ft, 10) + ")"
}
