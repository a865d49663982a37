package engine

import (
	"fmt"
	"io"
	"os"
	"unsafe"
)

// readAll reads a file into an 8-byte aligned buffer, the fallback where a
// file cannot be mapped. The alignment lets float32 weights be used in place
// exactly as from a mapping.
func readAll(f *os.File, size int64) ([]byte, func() error, error) {
	if int64(int(size)) != size || size < 0 {
		return nil, nil, fmt.Errorf("file of %d bytes is too large to read on this platform", size)
	}
	b := alignedBuf(int(size))
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, nil, err
	}
	return b, func() error { return nil }, nil
}

// alignedBuf returns n bytes starting at an 8-byte boundary, so float32
// weights in it can be used in place on every CPU.
func alignedBuf(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n]
}
