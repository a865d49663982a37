package quant

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

func TestParseFileType(t *testing.T) {
	cases := []struct {
		in   string
		name string
		id   uint32
		def  gguf.Type
	}{
		{"Q4_K_M", "Q4_K_M", 15, gguf.TypeQ4_K},
		{"q4_k_s", "Q4_K_S", 14, gguf.TypeQ4_K},
		{"Q4_K", "Q4_K_M", 15, gguf.TypeQ4_K}, // llama-quantize's alias
		{"q3_k", "Q3_K_M", 12, gguf.TypeQ3_K},
		{"Q5_K", "Q5_K_M", 17, gguf.TypeQ5_K},
		{"Q3_K_L", "Q3_K_L", 13, gguf.TypeQ3_K},
		{"Q2_K_S", "Q2_K_S", 21, gguf.TypeQ2_K},
		{"iq3_xs", "IQ3_XS", 22, gguf.TypeIQ3_S},
		{"IQ3_M", "IQ3_M", 27, gguf.TypeIQ3_S},
		{"IQ2_S", "IQ2_S", 28, gguf.TypeIQ2_XS}, // the file type, not the ggml type
		{"IQ2_M", "IQ2_M", 29, gguf.TypeIQ2_S},
		{"MXFP4_MOE", "MXFP4_MOE", 38, gguf.TypeMXFP4},
		{"mxfp4", "MXFP4_MOE", 38, gguf.TypeMXFP4}, // a ggml type name
		{"nvfp4", "NVFP4", 39, gguf.TypeNVFP4},
		{"F32", "F32", 0, gguf.TypeF32},
		{"bf16", "BF16", 32, gguf.TypeBF16},
		{"7", "Q8_0", 7, gguf.TypeQ8_0}, // numbers are llama-quantize's ids
		{"0", "F32", 0, gguf.TypeF32},
		{"41", "Q2_0", 41, gguf.TypeQ2_0},
	}
	for _, c := range cases {
		ft, err := ParseFileType(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if ft.String() != c.name || ft.ID() != c.id || ft.DefaultType() != c.def || !ft.Valid() {
			t.Errorf("%s: %s (%d, %s), want %s (%d, %s)", c.in, ft, ft.ID(), ft.DefaultType(), c.name, c.id, c.def)
		}
	}
	for _, bad := range []string{"", "Q4_K_X", "Q8_1", "Q8_K", "I32", "5", "99", "-1"} {
		if ft, err := ParseFileType(bad); err == nil {
			t.Errorf("%q accepted as %s", bad, ft)
		}
	}
	if (FileType{}).Valid() {
		t.Error("zero FileType is valid")
	}
}

// TestFileTypesCoverLlamaQuantize: every name and id llama-quantize --help
// lists (ggml 0.27 / llama.cpp 0.7.0) is a file type, and ids are unique.
func TestFileTypesCoverLlamaQuantize(t *testing.T) {
	help := "40 Q1_0 41 Q2_0 2 Q4_0 3 Q4_1 38 MXFP4_MOE 8 Q5_0 9 Q5_1 19 IQ2_XXS 20 IQ2_XS 28 IQ2_S 29 IQ2_M " +
		"24 IQ1_S 31 IQ1_M 36 TQ1_0 37 TQ2_0 10 Q2_K 21 Q2_K_S 23 IQ3_XXS 26 IQ3_S 27 IQ3_M 12 Q3_K 22 IQ3_XS " +
		"11 Q3_K_S 12 Q3_K_M 13 Q3_K_L 25 IQ4_NL 30 IQ4_XS 15 Q4_K 14 Q4_K_S 15 Q4_K_M 17 Q5_K 16 Q5_K_S " +
		"17 Q5_K_M 18 Q6_K 7 Q8_0 1 F16 32 BF16 0 F32"
	f := strings.Fields(help)
	for i := 0; i < len(f); i += 2 {
		ft, err := ParseFileType(f[i+1])
		if err != nil {
			t.Errorf("%s: %v", f[i+1], err)
			continue
		}
		if got := ft.ID(); got != uint32(atoiT(t, f[i])) {
			t.Errorf("%s: id %d, llama-quantize %s", f[i+1], got, f[i])
		}
	}
	seen := map[uint32]string{}
	for _, ft := range FileTypes() {
		if prev, dup := seen[ft.ID()]; dup {
			t.Errorf("id %d: %s and %s", ft.ID(), prev, ft)
		}
		seen[ft.ID()] = ft.String()
		if back, ok := FileTypeByID(ft.ID()); !ok || back != ft {
			t.Errorf("FileTypeByID(%d) = %v, %v", ft.ID(), back, ok)
		}
	}
}

func atoiT(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			t.Fatalf("bad number %q", s)
		}
		n = 10*n + int(c-'0')
	}
	return n
}

// TestFileTypeFor: the ggml type names keep the meaning they had as
// targets before file types (the K-quants their medium mixes, IQ2_S IQ2_M).
func TestFileTypeFor(t *testing.T) {
	want := map[gguf.Type]string{
		gguf.TypeQ4_K: "Q4_K_M", gguf.TypeQ3_K: "Q3_K_M", gguf.TypeQ5_K: "Q5_K_M", gguf.TypeQ6_K: "Q6_K",
		gguf.TypeIQ2_S: "IQ2_M", gguf.TypeIQ2_XS: "IQ2_XS", gguf.TypeIQ3_S: "IQ3_S", gguf.TypeMXFP4: "MXFP4_MOE",
		gguf.TypeQ8_0: "Q8_0", gguf.TypeF16: "F16", gguf.TypeTQ1_0: "TQ1_0",
	}
	for typ, name := range want {
		ft, ok := FileTypeFor(typ)
		if !ok || ft.String() != name {
			t.Errorf("%s: %s, %v; want %s", typ, ft, ok, name)
		}
	}
	for _, typ := range []gguf.Type{gguf.TypeQ8_1, gguf.TypeQ8_K, gguf.TypeI8, gguf.TypeF64} {
		if ft, ok := FileTypeFor(typ); ok {
			t.Errorf("%s has file type %s", typ, ft)
		}
	}
}

// mixTestFile is a llama model header with 8 layers and GQA 4 (F32, no
// data): enough for Choose.
func mixTestFile() *gguf.File {
	md := &gguf.Metadata{}
	md.Set("general.architecture", gguf.String("llama"))
	md.Set("llama.block_count", gguf.Uint32(8))
	md.Set("llama.attention.head_count", gguf.Uint32(8))
	md.Set("llama.attention.head_count_kv", gguf.Uint32(2))
	f := &gguf.File{Metadata: md}
	add := func(name string, dims ...uint64) {
		f.Tensors = append(f.Tensors, gguf.TensorInfo{Name: name, Dims: dims, Type: gguf.TypeF32})
	}
	add("token_embd.weight", 256, 512)
	add("output.weight", 256, 512)
	for l := range 8 {
		p := "blk." + string(rune('0'+l)) + "."
		add(p+"attn_q.weight", 256, 256)
		add(p+"attn_k.weight", 256, 64)
		add(p+"attn_v.weight", 256, 64)
		add(p+"attn_output.weight", 256, 256)
		add(p+"ffn_gate.weight", 256, 512)
		add(p+"ffn_up.weight", 256, 512)
		add(p+"ffn_down.weight", 512, 256)
	}
	return f
}

// TestMixCountsSkipOverrides: like llama.cpp's counters, the layer-dependent
// mix counts only the tensors it decides, so a --tensor-type override of
// blk.0.ffn_down shifts the Q4_K_M pattern of the others by one
// (llama-quantize --tensor-type blk.0.ffn_down=q8_0 ... Q4_K_M gives Q6_K to
// blk.1, blk.4 and blk.7).
func TestMixCountsSkipOverrides(t *testing.T) {
	f := mixTestFile()
	ft, _ := ParseFileType("Q4_K_M")
	types := func(r *Rules) string {
		var out []string
		for i := range f.Tensors {
			if !strings.HasSuffix(f.Tensors[i].Name, "ffn_down.weight") {
				continue
			}
			d, err := r.Choose(f, &f.Tensors[i])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, d.Type.String())
		}
		return strings.Join(out, " ")
	}
	if got, want := types(&Rules{FileType: ft}), "Q6_K Q4_K Q4_K Q6_K Q4_K Q4_K Q6_K Q6_K"; got != want {
		t.Errorf("ffn_down: %s, want %s", got, want)
	}
	override := []TensorTypeRule{{regexp.MustCompile(`blk\.0\.ffn_down`), gguf.TypeQ8_0}}
	if got, want := types(&Rules{FileType: ft, TensorTypes: override}), "Q8_0 Q6_K Q4_K Q4_K Q6_K Q4_K Q4_K Q6_K"; got != want {
		t.Errorf("ffn_down with blk.0 overridden: %s, want %s", got, want)
	}
}

// TestMixSizeVariants checks the branches of the S/L mixes on a synthetic
// 8-layer model with GQA 4 (no data needed: Choose looks at names, shapes
// and metadata): which layers get more bits for Q4_K_S, Q3_K_L, Q2_K_S and
// IQ3_XS.
func TestMixSizeVariants(t *testing.T) {
	f := mixTestFile()
	im := &Imatrix{weights: map[string][]float32{}}
	for _, ti := range f.Tensors {
		im.weights[ti.Name] = make([]float32, ti.Dims[0])
	}
	choose := func(ftName string, withImatrix bool) map[string]gguf.Type {
		ft, err := ParseFileType(ftName)
		if err != nil {
			t.Fatal(err)
		}
		r := &Rules{FileType: ft}
		if withImatrix {
			r.Imatrix = im
		}
		out := map[string]gguf.Type{}
		for i := range f.Tensors {
			d, err := r.Choose(f, &f.Tensors[i])
			if err != nil {
				t.Fatalf("%s: %s: %v", ftName, f.Tensors[i].Name, err)
			}
			out[f.Tensors[i].Name] = d.Type
		}
		return out
	}
	check := func(ftName string, got map[string]gguf.Type, want map[string]gguf.Type) {
		t.Helper()
		for name, w := range want {
			if got[name] != w {
				t.Errorf("%s: %s is %s, want %s", ftName, name, got[name], w)
			}
		}
	}
	check("Q4_K_S", choose("Q4_K_S", false), map[string]gguf.Type{
		"output.weight": gguf.TypeQ6_K, "token_embd.weight": gguf.TypeQ4_K,
		"blk.0.attn_v.weight": gguf.TypeQ5_K, "blk.3.attn_v.weight": gguf.TypeQ5_K, "blk.4.attn_v.weight": gguf.TypeQ4_K,
		"blk.0.ffn_down.weight": gguf.TypeQ5_K, "blk.1.ffn_down.weight": gguf.TypeQ4_K, "blk.0.attn_q.weight": gguf.TypeQ4_K,
	})
	check("Q3_K_L", choose("Q3_K_L", false), map[string]gguf.Type{
		"blk.5.attn_v.weight": gguf.TypeQ5_K, "blk.5.ffn_down.weight": gguf.TypeQ5_K,
		"blk.5.attn_output.weight": gguf.TypeQ5_K, "blk.5.ffn_up.weight": gguf.TypeQ3_K,
	})
	check("Q3_K_S", choose("Q3_K_S", false), map[string]gguf.Type{
		"blk.0.attn_v.weight": gguf.TypeQ3_K, "blk.0.ffn_down.weight": gguf.TypeQ3_K, "output.weight": gguf.TypeQ6_K,
	})
	check("Q2_K_S", choose("Q2_K_S", true), map[string]gguf.Type{
		"blk.2.attn_v.weight": gguf.TypeQ4_K, "blk.0.ffn_down.weight": gguf.TypeQ4_K, "blk.1.ffn_down.weight": gguf.TypeQ2_K,
		"blk.1.attn_output.weight": gguf.TypeQ2_K,
	})
	check("IQ3_XS", choose("IQ3_XS", true), map[string]gguf.Type{
		"blk.0.attn_q.weight": gguf.TypeIQ3_XXS, "blk.0.attn_k.weight": gguf.TypeIQ3_XXS, "blk.0.attn_v.weight": gguf.TypeQ4_K,
		"blk.0.ffn_up.weight": gguf.TypeIQ3_S, "blk.1.ffn_up.weight": gguf.TypeIQ3_XXS, "blk.6.ffn_gate.weight": gguf.TypeIQ3_XXS,
		"blk.7.ffn_gate.weight": gguf.TypeIQ3_S, "blk.3.ffn_down.weight": gguf.TypeIQ3_S,
	})
	check("IQ3_M", choose("IQ3_M", false), map[string]gguf.Type{
		"blk.3.attn_v.weight": gguf.TypeQ4_K, "blk.0.ffn_down.weight": gguf.TypeQ4_K, "blk.1.ffn_down.weight": gguf.TypeIQ3_S,
		"blk.3.attn_output.weight": gguf.TypeQ4_K,
	})
	// Q2_K_S needs an importance matrix for its Q2_K tensors, as in llama.cpp.
	ft, _ := ParseFileType("Q2_K_S")
	if _, err := (&Rules{FileType: ft}).Choose(f, &f.Tensors[2]); err == nil {
		t.Error("Q2_K_S without an importance matrix accepted")
	}
}
