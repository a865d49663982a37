package quant

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// FileType is a llama.cpp file type (llama_ftype): what llama-quantize's TYPE
// argument names, such as Q4_K_M or IQ3_XS. It selects the default tensor
// type, the per-tensor mix of the K- and i-quant types, and the value
// recorded in general.file_type. The zero value is no file type; use
// ParseFileType, FileTypeByID or FileTypeFor.
type FileType struct {
	id   uint32
	name string
	def  gguf.Type
}

// llama_ftype values of the file types the mix tells apart.
const (
	ftF32      = 0
	ftF16      = 1
	ftQ4_0     = 2
	ftQ4_1     = 3
	ftQ8_0     = 7
	ftQ5_0     = 8
	ftQ5_1     = 9
	ftQ2K      = 10
	ftQ3KS     = 11
	ftQ3KM     = 12
	ftQ3KL     = 13
	ftQ4KS     = 14
	ftQ4KM     = 15
	ftQ5KS     = 16
	ftQ5KM     = 17
	ftQ6K      = 18
	ftIQ2XXS   = 19
	ftIQ2XS    = 20
	ftQ2KS     = 21
	ftIQ3XS    = 22
	ftIQ3XXS   = 23
	ftIQ1S     = 24
	ftIQ4NL    = 25
	ftIQ3S     = 26
	ftIQ3M     = 27
	ftIQ2S     = 28
	ftIQ2M     = 29
	ftIQ4XS    = 30
	ftIQ1M     = 31
	ftBF16     = 32
	ftTQ1      = 36
	ftTQ2      = 37
	ftMXFP4MoE = 38
	ftNVFP4    = 39
	ftQ1_0     = 40
	ftQ2_0     = 41
)

// fileTypes lists llama-quantize's file types in the order of its help text,
// with the ggml type each defaults to (llama_ftype_get_default_type), then
// NVFP4, which llama.cpp defines but llama-quantize does not offer by name.
var fileTypes = []FileType{
	{ftQ1_0, "Q1_0", gguf.TypeQ1_0},
	{ftQ2_0, "Q2_0", gguf.TypeQ2_0},
	{ftQ4_0, "Q4_0", gguf.TypeQ4_0},
	{ftQ4_1, "Q4_1", gguf.TypeQ4_1},
	{ftMXFP4MoE, "MXFP4_MOE", gguf.TypeMXFP4},
	{ftQ5_0, "Q5_0", gguf.TypeQ5_0},
	{ftQ5_1, "Q5_1", gguf.TypeQ5_1},
	{ftIQ2XXS, "IQ2_XXS", gguf.TypeIQ2_XXS},
	{ftIQ2XS, "IQ2_XS", gguf.TypeIQ2_XS},
	{ftIQ2S, "IQ2_S", gguf.TypeIQ2_XS},
	{ftIQ2M, "IQ2_M", gguf.TypeIQ2_S},
	{ftIQ1S, "IQ1_S", gguf.TypeIQ1_S},
	{ftIQ1M, "IQ1_M", gguf.TypeIQ1_M},
	{ftTQ1, "TQ1_0", gguf.TypeTQ1_0},
	{ftTQ2, "TQ2_0", gguf.TypeTQ2_0},
	{ftQ2K, "Q2_K", gguf.TypeQ2_K},
	{ftQ2KS, "Q2_K_S", gguf.TypeQ2_K},
	{ftIQ3XXS, "IQ3_XXS", gguf.TypeIQ3_XXS},
	{ftIQ3S, "IQ3_S", gguf.TypeIQ3_S},
	{ftIQ3M, "IQ3_M", gguf.TypeIQ3_S},
	{ftIQ3XS, "IQ3_XS", gguf.TypeIQ3_S},
	{ftQ3KS, "Q3_K_S", gguf.TypeQ3_K},
	{ftQ3KM, "Q3_K_M", gguf.TypeQ3_K},
	{ftQ3KL, "Q3_K_L", gguf.TypeQ3_K},
	{ftIQ4NL, "IQ4_NL", gguf.TypeIQ4_NL},
	{ftIQ4XS, "IQ4_XS", gguf.TypeIQ4_XS},
	{ftQ4KS, "Q4_K_S", gguf.TypeQ4_K},
	{ftQ4KM, "Q4_K_M", gguf.TypeQ4_K},
	{ftQ5KS, "Q5_K_S", gguf.TypeQ5_K},
	{ftQ5KM, "Q5_K_M", gguf.TypeQ5_K},
	{ftQ6K, "Q6_K", gguf.TypeQ6_K},
	{ftQ8_0, "Q8_0", gguf.TypeQ8_0},
	{ftF16, "F16", gguf.TypeF16},
	{ftBF16, "BF16", gguf.TypeBF16},
	{ftF32, "F32", gguf.TypeF32},
	{ftNVFP4, "NVFP4", gguf.TypeNVFP4},
}

// aliases are the other names llama-quantize accepts: the K-quant names
// without a size suffix mean the medium mix.
var aliases = map[string]uint32{"Q3_K": ftQ3KM, "Q4_K": ftQ4KM, "Q5_K": ftQ5KM}

// FileTypes returns every file type, in the order llama-quantize lists them.
func FileTypes() []FileType { return append([]FileType(nil), fileTypes...) }

// FileTypeByID returns the file type with llama_ftype value id.
func FileTypeByID(id uint32) (FileType, bool) {
	for _, ft := range fileTypes {
		if ft.id == id {
			return ft, true
		}
	}
	return FileType{}, false
}

func fileTypeByName(name string) (FileType, bool) {
	for _, ft := range fileTypes {
		if strings.EqualFold(ft.name, name) {
			return ft, true
		}
	}
	if id, ok := aliases[strings.ToUpper(name)]; ok {
		return FileTypeByID(id)
	}
	return FileType{}, false
}

// FileTypeFor returns the file type a plain ggml type name stands for: the
// one of the same name, or for the types that have none the mix llama-quantize
// builds on them (Q3_K, Q4_K and Q5_K their medium mixes, IQ2_S IQ2_M,
// IQ3_S IQ3_S, MXFP4 MXFP4_MOE). Types llama-quantize cannot target (Q8_1,
// Q8_K, the integer types) have none.
func FileTypeFor(t gguf.Type) (FileType, bool) {
	switch t {
	case gguf.TypeIQ2_S:
		return FileTypeByID(ftIQ2M)
	case gguf.TypeMXFP4:
		return FileTypeByID(ftMXFP4MoE)
	}
	if ft, ok := fileTypeByName(t.String()); ok && ft.def == t {
		return ft, true
	}
	return FileType{}, false
}

// ParseFileType reads a target as llama-quantize's TYPE argument reads it,
// ignoring case: a file-type name (Q4_K_M, IQ3_XS, Q2_K_S, IQ2_S, Q4_K as an
// alias of Q4_K_M...) or its number (15), and, for the names llama-quantize
// does not know, a ggml type name as FileTypeFor reads it (MXFP4). Where the
// two kinds of name collide the file type wins: IQ2_S is llama-quantize's
// IQ2_S mix (mostly IQ2_XS tensors), not the ggml type IQ2_S.
func ParseFileType(s string) (FileType, error) {
	if ft, ok := fileTypeByName(s); ok {
		return ft, nil
	}
	if id, err := strconv.ParseUint(s, 10, 32); err == nil {
		if ft, ok := FileTypeByID(uint32(id)); ok {
			return ft, nil
		}
		return FileType{}, fmt.Errorf("unknown file type number %d", id)
	}
	if t, err := gguf.ParseType(s); err == nil {
		if ft, ok := FileTypeFor(t); ok {
			return ft, nil
		}
		return FileType{}, fmt.Errorf("llama-quantize has no file type for ggml type %s", t)
	}
	return FileType{}, fmt.Errorf("unknown quantization type %q", s)
}

// ID returns the llama_ftype value, which general.file_type records.
func (ft FileType) ID() uint32 { return ft.id }

// String returns llama-quantize's name for the file type ("" for the zero
// value).
func (ft FileType) String() string { return ft.name }

// DefaultType returns the ggml type tensors get unless the mix or an override
// chooses another.
func (ft FileType) DefaultType() gguf.Type { return ft.def }

// Valid reports whether ft is a file type (not the zero value).
func (ft FileType) Valid() bool { return ft.name != "" }

// RequiresImatrix reports whether llama-quantize refuses the file type
// without an importance matrix: IQ1_S, IQ1_M, IQ2_S, IQ2_XXS, IQ2_XS and
// Q2_K_S before quantizing anything, IQ2_M, IQ3_XXS and IQ3_XS at their
// first tensor of a type that needs one (IQ2_S, IQ3_XXS:
// tensor_requires_imatrix). All are refused here before anything is
// quantized, where the per-tensor check would let a small model through on
// fallback types alone, or stop a large one after its first tensors.
func (ft FileType) RequiresImatrix() bool {
	switch ft.id {
	case ftIQ1S, ftIQ1M, ftIQ2S, ftIQ2XXS, ftIQ2XS, ftQ2KS, ftIQ2M, ftIQ3XXS, ftIQ3XS:
		return true
	}
	return false
}
