package gguf

import (
	"fmt"
	"math/bits"
	"strings"
)

// MaxNameLen is ggml's GGML_MAX_NAME: tensor names must be shorter.
const MaxNameLen = 64

// MaxDims is ggml's GGML_MAX_DIMS.
const MaxDims = 4

// TensorInfo is one entry of a GGUF tensor table.
type TensorInfo struct {
	Name string
	// Dims are the sizes in ggml order: Dims[0] (ne0) is the row length,
	// the number of elements that are contiguous in memory.
	Dims []uint64
	Type Type
	// Offset of the tensor's first byte from the start of the data section.
	Offset uint64
}

// NumElements returns the product of the dimensions.
func (t *TensorInfo) NumElements() uint64 {
	n := uint64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// RowLen returns ne0, the number of elements in one row.
func (t *TensorInfo) RowLen() uint64 {
	if len(t.Dims) == 0 {
		return 1
	}
	return t.Dims[0]
}

// NumRows returns the number of rows (the product of all dims but ne0).
func (t *TensorInfo) NumRows() uint64 {
	n := uint64(1)
	for _, d := range t.Dims[min(1, len(t.Dims)):] {
		n *= d
	}
	return n
}

// RowBytes returns the bytes taken by one row.
func (t *TensorInfo) RowBytes() int64 {
	n, _ := t.Type.RowSize(int64(t.RowLen()))
	return n
}

// Size returns the tensor's data size in bytes (without padding). It is
// meaningful only for a validated tensor info.
func (t *TensorInfo) Size() int64 {
	return t.RowBytes() * int64(t.NumRows())
}

// Shape formats the dims as "[64, 512]".
func (t *TensorInfo) Shape() string {
	parts := make([]string, len(t.Dims))
	for i, d := range t.Dims {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// check validates one tensor info as llama.cpp's gguf loader does and
// returns its byte size: the name is shorter than 64 bytes, there are at most
// 4 dims, the element count fits int64, the type is a valid ggml type and
// ne0 is a multiple of its block size.
func (t *TensorInfo) check() (int64, error) {
	if len(t.Name) >= MaxNameLen {
		return 0, fmt.Errorf("tensor name %q is too long: %d bytes, at most %d", t.Name, len(t.Name), MaxNameLen-1)
	}
	if len(t.Dims) > MaxDims {
		return 0, fmt.Errorf("tensor %q has %d dimensions, at most %d", t.Name, len(t.Dims), MaxDims)
	}
	n := uint64(1)
	for i, d := range t.Dims {
		if d > 1<<63-1 {
			return 0, fmt.Errorf("tensor %q dimension %d is negative as int64 (%d)", t.Name, i, d)
		}
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo >= 1<<63-1 {
			return 0, fmt.Errorf("tensor %q has too many elements (shape %s)", t.Name, t.Shape())
		}
		n = lo
	}
	tr, err := t.Type.Traits()
	if err != nil {
		return 0, fmt.Errorf("tensor %q: %v", t.Name, err)
	}
	ne0 := t.RowLen()
	if ne0%uint64(tr.BlockSize) != 0 {
		return 0, fmt.Errorf("tensor %q of type %s has %d elements per row, not a multiple of the block size %d",
			t.Name, t.Type, ne0, tr.BlockSize)
	}
	blocks := n / uint64(tr.BlockSize)
	hi, size := bits.Mul64(blocks, uint64(tr.TypeSize))
	if hi != 0 || size > 1<<62 {
		return 0, fmt.Errorf("tensor %q is too large (%d blocks of %d bytes)", t.Name, blocks, tr.TypeSize)
	}
	return int64(size), nil
}

// alignUp rounds x up to a multiple of align (a power of two).
func alignUp(x, align uint64) uint64 { return (x + align - 1) &^ (align - 1) }
