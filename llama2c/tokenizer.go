package llama2c

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Tokenizer is a llama2.c tokenizer file: a piece and a merge score per id.
type Tokenizer struct {
	MaxTokenLength int
	Pieces         [][]byte
	Scores         []float32
}

// ReadTokenizer reads a tokenizer file of size bytes with n tokens (the
// checkpoint's vocab size; the file does not store it).
func ReadTokenizer(r io.ReaderAt, size int64, n int) (*Tokenizer, error) {
	if n <= 0 || int64(n)*8+4 > size {
		return nil, fmt.Errorf("llama2.c tokenizer: %d bytes cannot hold %d tokens", size, n)
	}
	buf := make([]byte, size)
	if _, err := r.ReadAt(buf, 0); err != nil && err != io.EOF {
		return nil, err
	}
	t := &Tokenizer{MaxTokenLength: int(binary.LittleEndian.Uint32(buf)), Pieces: make([][]byte, n), Scores: make([]float32, n)}
	off := 4
	for i := 0; i < n; i++ {
		if off+8 > len(buf) {
			return nil, fmt.Errorf("llama2.c tokenizer: file ends at token %d of %d", i, n)
		}
		t.Scores[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off:]))
		l := int(int32(binary.LittleEndian.Uint32(buf[off+4:])))
		off += 8
		if l < 0 || l > len(buf)-off {
			return nil, fmt.Errorf("llama2.c tokenizer: token %d claims %d bytes, %d remain", i, l, len(buf)-off)
		}
		t.Pieces[i] = buf[off : off+l : off+l]
		off += l
	}
	if off != len(buf) {
		return nil, fmt.Errorf("llama2.c tokenizer: %d bytes left after %d tokens (wrong vocabulary size?)", len(buf)-off, n)
	}
	return t, nil
}
