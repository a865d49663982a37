package osmem

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// AlignedBytes returns n zeroed bytes starting at an 8-byte boundary, so
// float32 and float64 weights in them can be used in place on every CPU,
// as they are in a mapping (which starts on a page).
func AlignedBytes(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n]
}

// AlignedCopy copies b into AlignedBytes.
func AlignedCopy(b []byte) []byte {
	c := AlignedBytes(len(b))
	copy(c, b)
	return c
}

// ReadAll reads the first size bytes of f into AlignedBytes, the fallback
// where a file cannot be mapped. The returned release function does
// nothing (the garbage collector frees the bytes); it is there so callers
// treat a read and a mapping alike.
func ReadAll(f *os.File, size int64) ([]byte, func() error, error) {
	if int64(int(size)) != size || size < 0 {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to read on this platform", size)
	}
	b := AlignedBytes(int(size))
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}
