package llama2c

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Config is a checkpoint's header.
type Config struct {
	Dim, HiddenDim, Layers, Heads, KVHeads, Vocab, SeqLen int
	// Shared is true when the classifier is the embedding table (a
	// positive vocab_size in the file); false when a separate wcls follows.
	Shared bool
}

// HeadSize returns dim / n_heads.
func (c *Config) HeadSize() int { return c.Dim / c.Heads }

// KVDim returns the width of the key and value projections.
func (c *Config) KVDim() int { return c.KVHeads * c.HeadSize() }

// Checkpoint is a llama2.c model file opened for random access: the header
// and where each weight array starts. Weights are read when converted.
type Checkpoint struct {
	Config
	r    io.ReaderAt
	offs map[string]int64 // byte offset of each array
}

const headerBytes = 7 * 4

// maxDim bounds header values so that sizes cannot overflow.
const maxDim = 1 << 20

// Open reads the header of the checkpoint of size bytes held by r and
// checks that the file holds exactly the weights it declares.
func Open(r io.ReaderAt, size int64) (*Checkpoint, error) {
	var h [7]int32
	if size < headerBytes {
		return nil, fmt.Errorf("llama2.c checkpoint: %d bytes, too short for the 28-byte header", size)
	}
	if err := binary.Read(io.NewSectionReader(r, 0, headerBytes), binary.LittleEndian, &h); err != nil {
		return nil, fmt.Errorf("llama2.c checkpoint header: %w", err)
	}
	c := Config{Dim: int(h[0]), HiddenDim: int(h[1]), Layers: int(h[2]), Heads: int(h[3]), KVHeads: int(h[4]), Vocab: int(h[5]), SeqLen: int(h[6])}
	c.Shared = c.Vocab > 0
	if c.Vocab < 0 {
		c.Vocab = -c.Vocab
	}
	for _, v := range []int{c.Dim, c.HiddenDim, c.Layers, c.Heads, c.KVHeads, c.Vocab, c.SeqLen} {
		if v <= 0 || v > maxDim {
			return nil, fmt.Errorf("llama2.c checkpoint header %v is not a valid model (the 7 int32 fields must be positive)", h)
		}
	}
	if c.Dim%c.Heads != 0 || c.Heads%c.KVHeads != 0 || c.HeadSize()%2 != 0 {
		return nil, fmt.Errorf("llama2.c checkpoint: dim %d, %d heads, %d KV heads do not divide evenly", c.Dim, c.Heads, c.KVHeads)
	}
	ck := &Checkpoint{Config: c, r: r, offs: map[string]int64{}}
	L, D, F, KV := int64(c.Layers), int64(c.Dim), int64(c.HiddenDim), int64(c.KVDim())
	off := int64(headerBytes)
	for _, a := range []struct {
		name string
		n    int64
	}{
		{"token_embedding_table", int64(c.Vocab) * D},
		{"rms_att_weight", L * D},
		{"wq", L * D * D},
		{"wk", L * D * KV},
		{"wv", L * D * KV},
		{"wo", L * D * D},
		{"rms_ffn_weight", L * D},
		{"w1", L * D * F},
		{"w2", L * F * D},
		{"w3", L * D * F},
		{"rms_final_weight", D},
		{"freq_cis", int64(c.SeqLen) * int64(c.HeadSize())}, // unused (real+imag)
		{"wcls", map[bool]int64{true: 0, false: int64(c.Vocab) * D}[c.Shared]},
	} {
		ck.offs[a.name] = off
		off += a.n * 4
	}
	if off != size {
		return nil, fmt.Errorf("llama2.c checkpoint: header %v declares %d bytes of weights, the file has %d", h, off, size)
	}
	return ck, nil
}

// array returns a reader of n float32s of array name starting at element i.
func (c *Checkpoint) array(name string, i, n int64) *io.SectionReader {
	return io.NewSectionReader(c.r, c.offs[name]+i*4, n*4)
}
