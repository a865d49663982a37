package headergen

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/ggufkit/gguf/gguf"
)

// Array is one big metadata array.
type Array struct {
	Key string
	// N is the number of elements.
	N int
	// Elem is the element type; for TypeString each element is a string of
	// MinLen..MaxLen random letters (uniformly chosen length).
	Elem           gguf.ValueType
	MinLen, MaxLen int
}

// Spec describes a generated file.
type Spec struct {
	Name string
	// Arrays follow a few ordinary keys, in order; ordinary keys follow them.
	Arrays []Array
	// Tensors is the number of tensor infos, with names of about NameLen
	// bytes. The last tensor takes the rest of DataSize.
	Tensors, NameLen int
	// DataSize is the size of the data section (at least 4 bytes per
	// tensor); 0 means 32 MiB, enough that header reads are never cut short
	// by the end of the file.
	DataSize int64
	Seed     uint64
}

// Specs is the standard battery: headers from a few hundred bytes to 12 MB,
// shaped like real files (SentencePiece and BPE vocabularies of 32k-256k
// tokens with their scores, types and merges) and like unusual ones (several
// big arrays in a row, tens of thousands of tensors, long strings).
func Specs() []Spec {
	str := gguf.TypeString
	tokens := func(n, lo, hi int) Array {
		return Array{Key: "tokenizer.ggml.tokens", N: n, Elem: str, MinLen: lo, MaxLen: hi}
	}
	f32s := func(key string, n int) Array { return Array{Key: key, N: n, Elem: gguf.TypeFloat32} }
	i32s := func(key string, n int) Array { return Array{Key: key, N: n, Elem: gguf.TypeInt32} }
	merges := func(n, lo, hi int) Array {
		return Array{Key: "tokenizer.ggml.merges", N: n, Elem: str, MinLen: lo, MaxLen: hi}
	}
	return []Spec{
		{Name: "tiny", Tensors: 1, NameLen: 12},
		{Name: "stories", Arrays: []Array{tokens(512, 1, 8), f32s("tokenizer.ggml.scores", 512), i32s("tokenizer.ggml.token_type", 512)}, Tensors: 48, NameLen: 20},
		{Name: "spm-32k", Arrays: []Array{tokens(32000, 1, 20), f32s("tokenizer.ggml.scores", 32000), i32s("tokenizer.ggml.token_type", 32000)}, Tensors: 291, NameLen: 22},
		{Name: "window-edge", Arrays: []Array{tokens(62000, 1, 16), i32s("tokenizer.ggml.token_type", 62000)}, Tensors: 100, NameLen: 22},
		{Name: "bpe-100k", Arrays: []Array{tokens(102400, 1, 16), i32s("tokenizer.ggml.token_type", 102400), merges(99757, 3, 20)}, Tensors: 400, NameLen: 24},
		{Name: "llama3-like", Arrays: []Array{tokens(128256, 1, 14), i32s("tokenizer.ggml.token_type", 128256), merges(280147, 3, 18)}, Tensors: 292, NameLen: 24},
		{Name: "gemma-like", Arrays: []Array{tokens(262144, 1, 16), f32s("tokenizer.ggml.scores", 262144), i32s("tokenizer.ggml.token_type", 262144)}, Tensors: 340, NameLen: 24},
		{Name: "o200k-like", Arrays: []Array{tokens(200019, 1, 14), i32s("tokenizer.ggml.token_type", 200019), merges(446189, 3, 18)}, Tensors: 459, NameLen: 26},
		{Name: "arrays-in-a-row", Arrays: []Array{
			{Key: "a.strings1", N: 60000, Elem: str, MinLen: 4, MaxLen: 20},
			{Key: "a.strings2", N: 60000, Elem: str, MinLen: 4, MaxLen: 20},
			f32s("a.floats", 100000), i32s("a.ints", 100000)}, Tensors: 10, NameLen: 16},
		{Name: "four-string-arrays", Arrays: []Array{
			{Key: "a.s1", N: 35000, Elem: str, MinLen: 4, MaxLen: 20},
			{Key: "a.s2", N: 35000, Elem: str, MinLen: 4, MaxLen: 20},
			{Key: "a.s3", N: 35000, Elem: str, MinLen: 4, MaxLen: 20},
			{Key: "a.s4", N: 35000, Elem: str, MinLen: 4, MaxLen: 20}}, Tensors: 10, NameLen: 16},
		{Name: "long-strings", Arrays: []Array{{Key: "a.long", N: 3000, Elem: str, MinLen: 500, MaxLen: 3000}}, Tensors: 20, NameLen: 16},
		{Name: "many-tensors", Tensors: 120000, NameLen: 28},
		{Name: "vocab-and-tensors", Arrays: []Array{tokens(151936, 1, 14), i32s("tokenizer.ggml.token_type", 151936), merges(151387, 3, 18)}, Tensors: 40000, NameLen: 30},
	}
}

// BeyondLimit are headers that no reader can take in 3 reads while reading
// at most 1.25 x the header + 1 MiB: three 4 MB string arrays in a row.
// Nothing before an array announces its size, so when the third read is
// sized the reader knows of at most two arrays (8 MB): reading up to the
// third array's end (12 MB) would exceed the budget of a header that really
// ended after the second (1.25 x 8 MB + 1 MiB). Such files show that the
// bytes stay within the budget when the request count cannot.
func BeyondLimit() []Spec {
	s := gguf.TypeString
	return []Spec{{Name: "three-4MB-arrays", Arrays: []Array{
		{Key: "a.s1", N: 200000, Elem: s, MinLen: 4, MaxLen: 20},
		{Key: "a.s2", N: 200000, Elem: s, MinLen: 4, MaxLen: 20},
		{Key: "a.s3", N: 200000, Elem: s, MinLen: 4, MaxLen: 20}}, Tensors: 10, NameLen: 16}}
}

// File is a generated GGUF file.
type File struct {
	Spec   Spec
	Header []byte // the header and the padding after it
	// HeaderSize is the size of the header without padding.
	HeaderSize int64
	Size       int64
}

// ReadAt implements io.ReaderAt: the header, then zeros.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.Size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), f.Size-off))
	k := 0
	if off < int64(len(f.Header)) {
		k = copy(p[:n], f.Header[off:])
	}
	clear(p[k:n])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Build generates the file of s.
func (s Spec) Build() (*File, error) {
	rng := rand.New(rand.NewPCG(s.Seed, 0x5eed))
	kvs := []gguf.KV{
		{Key: gguf.KeyArchitecture, Value: gguf.String("llama")},
		{Key: gguf.KeyName, Value: gguf.String("headergen-" + s.Name)},
		{Key: "llama.context_length", Value: gguf.Uint32(4096)},
		{Key: "tokenizer.ggml.model", Value: gguf.String("gpt2")},
	}
	for _, a := range s.Arrays {
		v, err := a.value(rng)
		if err != nil {
			return nil, err
		}
		kvs = append(kvs, gguf.KV{Key: a.Key, Value: v})
	}
	kvs = append(kvs, gguf.KV{Key: "tokenizer.ggml.bos_token_id", Value: gguf.Uint32(1)},
		gguf.KV{Key: "general.quantization_version", Value: gguf.Uint32(2)})
	md, err := gguf.NewMetadata(kvs...)
	if err != nil {
		return nil, err
	}
	data := s.DataSize
	if data == 0 {
		data = 32 << 20
	}
	if data < 4*int64(s.Tensors)+64 {
		return nil, fmt.Errorf("headergen %s: data size %d too small for %d tensors", s.Name, data, s.Tensors)
	}
	infos := make([]gguf.TensorInfo, s.Tensors)
	used := int64(0)
	for i := range infos {
		name := fmt.Sprintf("blk.%d.t", i)
		for len(name) < s.NameLen {
			name += "x"
		}
		infos[i] = gguf.TensorInfo{Name: name, Type: gguf.TypeF32, Dims: []uint64{1, 1}}
		used += gguf.DefaultAlignment
	}
	if s.Tensors > 0 {
		last := &infos[s.Tensors-1]
		last.Dims = []uint64{uint64(data-used+gguf.DefaultAlignment) / 4, 1}
	}
	layout, err := gguf.Layout(3, md, infos)
	if err != nil {
		return nil, err
	}
	var hdr bytes.Buffer
	if _, err := gguf.NewWriterLayout(&hdr, layout); err != nil {
		return nil, err
	}
	return &File{Spec: s, Header: hdr.Bytes(), HeaderSize: layout.HeaderSize, Size: layout.FileSize()}, nil
}

func (a Array) value(rng *rand.Rand) (gguf.Value, error) {
	switch a.Elem {
	case gguf.TypeString:
		ss := make([]string, a.N)
		b := make([]byte, a.MaxLen)
		for i := range ss {
			l := a.MinLen + rng.IntN(a.MaxLen-a.MinLen+1)
			for j := range l {
				b[j] = 'a' + byte(rng.IntN(26))
			}
			ss[i] = string(b[:l])
		}
		return gguf.Array(ss)
	case gguf.TypeFloat32:
		fs := make([]float32, a.N)
		for i := range fs {
			fs[i] = -rng.Float32()
		}
		return gguf.Array(fs)
	case gguf.TypeInt32:
		is := make([]int32, a.N)
		for i := range is {
			is[i] = 1
		}
		return gguf.Array(is)
	}
	return gguf.Value{}, fmt.Errorf("headergen: element type %s not supported", a.Elem)
}
