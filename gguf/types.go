package gguf

import (
	"fmt"
	"strings"
)

// Type is a ggml tensor type id, as stored in a GGUF tensor info.
type Type uint32

// The ggml type ids. Ids 4, 5, 31-33 and 36-38 were removed from ggml and are
// not valid in GGUF files; they have no constant here.
const (
	TypeF32     Type = 0
	TypeF16     Type = 1
	TypeQ4_0    Type = 2
	TypeQ4_1    Type = 3
	TypeQ5_0    Type = 6
	TypeQ5_1    Type = 7
	TypeQ8_0    Type = 8
	TypeQ8_1    Type = 9
	TypeQ2_K    Type = 10
	TypeQ3_K    Type = 11
	TypeQ4_K    Type = 12
	TypeQ5_K    Type = 13
	TypeQ6_K    Type = 14
	TypeQ8_K    Type = 15
	TypeIQ2_XXS Type = 16
	TypeIQ2_XS  Type = 17
	TypeIQ3_XXS Type = 18
	TypeIQ1_S   Type = 19
	TypeIQ4_NL  Type = 20
	TypeIQ3_S   Type = 21
	TypeIQ2_S   Type = 22
	TypeIQ4_XS  Type = 23
	TypeI8      Type = 24
	TypeI16     Type = 25
	TypeI32     Type = 26
	TypeI64     Type = 27
	TypeF64     Type = 28
	TypeIQ1_M   Type = 29
	TypeBF16    Type = 30
	TypeTQ1_0   Type = 34
	TypeTQ2_0   Type = 35
	TypeMXFP4   Type = 39
	TypeNVFP4   Type = 40
	TypeQ1_0    Type = 41
	TypeQ2_0    Type = 42
)

// TypeTraits describes the storage of one ggml type: how many elements form a
// block and how many bytes a block takes. A row of n elements (n a multiple of
// BlockSize) takes n/BlockSize*TypeSize bytes.
type TypeTraits struct {
	ID        Type
	Name      string // as ggml's type_name spells it ("q4_K", "bf16")
	BlockSize int    // elements per block
	TypeSize  int    // bytes per block
	Quantized bool   // ggml's is_quantized
}

// typeTable is ggml's type table (ggml.c type_traits) for every id that is
// valid in a GGUF file, as listed in ../shared/refdata/ggml-types.txt. It is
// data, not logic: a new ggml type is one line here.
var typeTable = [...]TypeTraits{
	{TypeF32, "f32", 1, 4, false},
	{TypeF16, "f16", 1, 2, false},
	{TypeQ4_0, "q4_0", 32, 18, true},
	{TypeQ4_1, "q4_1", 32, 20, true},
	{TypeQ5_0, "q5_0", 32, 22, true},
	{TypeQ5_1, "q5_1", 32, 24, true},
	{TypeQ8_0, "q8_0", 32, 34, true},
	{TypeQ8_1, "q8_1", 32, 36, true},
	{TypeQ2_K, "q2_K", 256, 84, true},
	{TypeQ3_K, "q3_K", 256, 110, true},
	{TypeQ4_K, "q4_K", 256, 144, true},
	{TypeQ5_K, "q5_K", 256, 176, true},
	{TypeQ6_K, "q6_K", 256, 210, true},
	{TypeQ8_K, "q8_K", 256, 292, true},
	{TypeIQ2_XXS, "iq2_xxs", 256, 66, true},
	{TypeIQ2_XS, "iq2_xs", 256, 74, true},
	{TypeIQ3_XXS, "iq3_xxs", 256, 98, true},
	{TypeIQ1_S, "iq1_s", 256, 50, true},
	{TypeIQ4_NL, "iq4_nl", 32, 18, true},
	{TypeIQ3_S, "iq3_s", 256, 110, true},
	{TypeIQ2_S, "iq2_s", 256, 82, true},
	{TypeIQ4_XS, "iq4_xs", 256, 136, true},
	{TypeI8, "i8", 1, 1, false},
	{TypeI16, "i16", 1, 2, false},
	{TypeI32, "i32", 1, 4, false},
	{TypeI64, "i64", 1, 8, false},
	{TypeF64, "f64", 1, 8, false},
	{TypeIQ1_M, "iq1_m", 256, 56, true},
	{TypeBF16, "bf16", 1, 2, false},
	{TypeTQ1_0, "tq1_0", 256, 54, true},
	{TypeTQ2_0, "tq2_0", 256, 66, true},
	{TypeMXFP4, "mxfp4", 32, 17, true},
	{TypeNVFP4, "nvfp4", 64, 36, true},
	{TypeQ1_0, "q1_0", 128, 18, true},
	{TypeQ2_0, "q2_0", 64, 18, true},
}

// typeCount is ggml's GGML_TYPE_COUNT: ids at or above it are unknown.
const typeCount = 43

var traitsByID = func() (m [typeCount]*TypeTraits) {
	for i := range typeTable {
		m[typeTable[i].ID] = &typeTable[i]
	}
	return m
}()

// Traits returns the storage traits of t, or an error naming the id when t is
// not a type ggml can store in a GGUF file (unknown or removed ids).
func (t Type) Traits() (*TypeTraits, error) {
	if uint32(t) < typeCount {
		if tr := traitsByID[t]; tr != nil {
			return tr, nil
		}
		return nil, fmt.Errorf("ggml type id %d was removed from ggml and is not valid in GGUF files", uint32(t))
	}
	return nil, fmt.Errorf("unknown ggml type id %d (this build knows ids 0-%d)", uint32(t), typeCount-1)
}

// Valid reports whether t is a ggml type that can appear in a GGUF file.
func (t Type) Valid() bool {
	_, err := t.Traits()
	return err == nil
}

// String returns the type's name in upper case as gguf-py and llama-quantize
// print it ("Q4_K", "BF16"), or "type(N)" for an invalid id.
func (t Type) String() string {
	tr, err := t.Traits()
	if err != nil {
		return fmt.Sprintf("type(%d)", uint32(t))
	}
	return strings.ToUpper(tr.Name)
}

// BlockSize returns the number of elements in one block of t (0 if invalid).
func (t Type) BlockSize() int {
	if tr, err := t.Traits(); err == nil {
		return tr.BlockSize
	}
	return 0
}

// TypeSize returns the number of bytes in one block of t (0 if invalid).
func (t Type) TypeSize() int {
	if tr, err := t.Traits(); err == nil {
		return tr.TypeSize
	}
	return 0
}

// RowSize returns the bytes taken by n elements of type t. It fails when t is
// invalid or n is not a multiple of the block size.
func (t Type) RowSize(n int64) (int64, error) {
	tr, err := t.Traits()
	if err != nil {
		return 0, err
	}
	if n < 0 || n%int64(tr.BlockSize) != 0 {
		return 0, fmt.Errorf("%d elements of %s: not a multiple of the block size %d", n, t, tr.BlockSize)
	}
	return n / int64(tr.BlockSize) * int64(tr.TypeSize), nil
}

// ParseType returns the type named s, case-insensitively ("Q4_K", "q4_k",
// "bf16"). Ggml's own numbering is accepted too ("12").
func ParseType(s string) (Type, error) {
	for i := range typeTable {
		if strings.EqualFold(typeTable[i].Name, s) {
			return typeTable[i].ID, nil
		}
	}
	var id uint32
	if _, err := fmt.Sscanf(s, "%d", &id); err == nil && fmt.Sprint(id) == s {
		t := Type(id)
		if _, err := t.Traits(); err != nil {
			return 0, err
		}
		return t, nil
	}
	return 0, fmt.Errorf("unknown ggml type %q", s)
}

// Types returns every valid type, in id order.
func Types() []Type {
	out := make([]Type, len(typeTable))
	for i := range typeTable {
		out[i] = typeTable[i].ID
	}
	return out
}
