package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// MaxHeaderBytes is the largest JSON header Parse accepts: the limit of the
// reference implementation (safetensors' MAX_HEADER_SIZE).
const MaxHeaderBytes = 100_000_000

// dtypeSizes are the bytes of one element of each dtype the format names.
var dtypeSizes = map[string]int64{
	"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
	"I16": 2, "U16": 2, "F16": 2, "BF16": 2,
	"I32": 4, "U32": 4, "F32": 4,
	"I64": 8, "U64": 8, "F64": 8,
}

// ElemSize returns the bytes of one element of dtype, or 0 for a dtype the
// format does not name.
func ElemSize(dtype string) int64 { return dtypeSizes[dtype] }

// Tensor is one tensor of a file.
type Tensor struct {
	Name  string
	DType string
	// Shape is as the file gives it, outermost dimension first (a matrix
	// of R rows of C values is [R, C]; GGUF lists the same dims reversed).
	Shape []int64
	// Off is the absolute file offset of the tensor's bytes, Len their
	// count.
	Off, Len int64
}

// Elements returns the number of elements of t.
func (t *Tensor) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// File is a decoded safetensors header.
type File struct {
	// DataOffset is where the data starts: 8 + the header's length.
	DataOffset int64
	Metadata   map[string]string
	// Tensors are in the order of their data.
	Tensors []Tensor
}

// Tensor returns the tensor called name.
func (f *File) Tensor(name string) (*Tensor, bool) {
	for i := range f.Tensors {
		if f.Tensors[i].Name == name {
			return &f.Tensors[i], true
		}
	}
	return nil, false
}

// entry is a tensor as the header's JSON spells it.
type entry struct {
	DType   *string  `json:"dtype"`
	Shape   *[]int64 `json:"shape"`
	Offsets *[]int64 `json:"data_offsets"`
}

// Parse decodes the header of the size-byte safetensors file r.
func Parse(r io.ReaderAt, size int64) (*File, error) {
	var pre [8]byte
	if size < 8 {
		return nil, fmt.Errorf("safetensors: %d bytes: too short for the 8-byte header length", size)
	}
	if _, err := r.ReadAt(pre[:], 0); err != nil {
		return nil, fmt.Errorf("safetensors: reading the header length: %w", err)
	}
	n := binary.LittleEndian.Uint64(pre[:])
	if n > MaxHeaderBytes {
		return nil, fmt.Errorf("safetensors: header of %d bytes: over the format's limit of %d", n, MaxHeaderBytes)
	}
	if int64(n) > size-8 {
		return nil, fmt.Errorf("safetensors: header of %d bytes: past the end of the %d-byte file", n, size)
	}
	hdr := make([]byte, n)
	if _, err := r.ReadAt(hdr, 8); err != nil {
		return nil, fmt.Errorf("safetensors: reading the %d-byte header: %w", n, err)
	}
	return decode(hdr, size)
}

// decode decodes header bytes hdr of a size-byte file.
func decode(hdr []byte, size int64) (*File, error) {
	if body := bytes.TrimLeft(hdr, " \t\r\n"); len(body) == 0 || body[0] != '{' {
		return nil, fmt.Errorf("safetensors: the header is not a JSON object")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(hdr, &raw); err != nil {
		return nil, fmt.Errorf("safetensors: header: %w", err)
	}
	f := &File{DataOffset: 8 + int64(len(hdr))}
	data := size - f.DataOffset
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &f.Metadata); err != nil {
				return nil, fmt.Errorf("safetensors: __metadata__: want an object of strings: %w", err)
			}
			continue
		}
		t, err := tensor(name, msg, data)
		if err != nil {
			return nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		t.Off += f.DataOffset
		f.Tensors = append(f.Tensors, t)
	}
	slices.SortFunc(f.Tensors, func(a, b Tensor) int {
		return cmp.Or(cmp.Compare(a.Off, b.Off), strings.Compare(a.Name, b.Name))
	})
	end := f.DataOffset
	for _, t := range f.Tensors {
		if t.Off != end {
			return nil, fmt.Errorf("safetensors: tensor %q starts at data offset %d, where %d was expected (tensors must tile the data: no gap, no overlap)", t.Name, t.Off-f.DataOffset, end-f.DataOffset)
		}
		end += t.Len
	}
	if end != size {
		return nil, fmt.Errorf("safetensors: the tensors end at data offset %d, the data at %d", end-f.DataOffset, data)
	}
	return f, nil
}

// tensor decodes one header entry of a file with data bytes of data.
func tensor(name string, msg json.RawMessage, data int64) (Tensor, error) {
	var e entry
	if err := json.Unmarshal(msg, &e); err != nil {
		return Tensor{}, err
	}
	if e.DType == nil || e.Shape == nil || e.Offsets == nil {
		return Tensor{}, fmt.Errorf("want dtype, shape and data_offsets")
	}
	es := ElemSize(*e.DType)
	if es == 0 {
		return Tensor{}, fmt.Errorf("unknown dtype %q", *e.DType)
	}
	off := *e.Offsets
	if len(off) != 2 || off[0] < 0 || off[1] < off[0] || off[1] > data {
		return Tensor{}, fmt.Errorf("data_offsets %v: want [begin, end] within the %d bytes of data", off, data)
	}
	// The element count is bounded by the data before it can overflow.
	elems := int64(1)
	for _, d := range *e.Shape {
		if d < 0 {
			return Tensor{}, fmt.Errorf("negative dimension in shape %v", *e.Shape)
		}
		if d != 0 && elems > math.MaxInt64/es/d {
			return Tensor{}, fmt.Errorf("shape %v: more bytes than int64 holds", *e.Shape)
		}
		elems *= d
	}
	if elems*es != off[1]-off[0] {
		return Tensor{}, fmt.Errorf("shape %v of %s is %d bytes, data_offsets %v span %d", *e.Shape, *e.DType, elems*es, off, off[1]-off[0])
	}
	return Tensor{Name: name, DType: *e.DType, Shape: *e.Shape, Off: off[0], Len: off[1] - off[0]}, nil
}

// WriteTensor is one tensor for Write.
type WriteTensor struct {
	Name  string
	DType string
	Shape []int64
	Data  []byte
}

// Write writes a safetensors file of ts, in that order, with metadata md
// (nil: none), its header padded with spaces to a multiple of 8 bytes as
// the reference implementation pads it.
func Write(w io.Writer, md map[string]string, ts []WriteTensor) error {
	hdr := map[string]any{}
	if md != nil {
		hdr["__metadata__"] = md
	}
	var off int64
	for _, t := range ts {
		es := ElemSize(t.DType)
		n := es
		for _, d := range t.Shape {
			n *= d
		}
		if es == 0 || n != int64(len(t.Data)) {
			return fmt.Errorf("safetensors: tensor %q: %d bytes for shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
		}
		if _, dup := hdr[t.Name]; dup {
			return fmt.Errorf("safetensors: tensor %q twice", t.Name)
		}
		hdr[t.Name] = map[string]any{"dtype": t.DType, "shape": t.Shape, "data_offsets": []int64{off, off + n}}
		off += n
	}
	j, err := json.Marshal(hdr)
	if err != nil {
		return err
	}
	for len(j)%8 != 0 {
		j = append(j, ' ')
	}
	var pre [8]byte
	binary.LittleEndian.PutUint64(pre[:], uint64(len(j)))
	if _, err := w.Write(append(pre[:], j...)); err != nil {
		return err
	}
	for _, t := range ts {
		if _, err := w.Write(t.Data); err != nil {
			return err
		}
	}
	return nil
}

// MaxIndexBytes bounds a sharded checkpoint's index file: a few MB for the
// largest models' hundreds of thousands of tensor names.
const MaxIndexBytes = 64 << 20

// ParseIndex decodes a sharded checkpoint's index
// (model.safetensors.index.json, as transformers writes it): the
// weight_map from each tensor name to the file holding it, read up to
// MaxIndexBytes.
func ParseIndex(r io.Reader) (map[string]string, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxIndexBytes+1))
	if err != nil {
		return nil, fmt.Errorf("safetensors: reading the index: %w", err)
	}
	if len(b) > MaxIndexBytes {
		return nil, fmt.Errorf("safetensors: index larger than %d MiB", MaxIndexBytes>>20)
	}
	var idx struct {
		WeightMap map[string]string `json:"weight_map"`
	}
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("safetensors: index: %w", err)
	}
	if idx.WeightMap == nil {
		return nil, fmt.Errorf("safetensors: index has no weight_map")
	}
	for name, file := range idx.WeightMap {
		if file == "" || strings.Contains(file, "/") || strings.Contains(file, "\\") || file == "." || file == ".." {
			return nil, fmt.Errorf("safetensors: index maps %q to %q: not a file next to the index", name, file)
		}
	}
	return idx.WeightMap, nil
}
