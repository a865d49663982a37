package quant

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/ggufkit/gguf/gguf"
)

// Imatrix holds the importance weights of an importance-matrix file as
// llama-quantize computes them from it: for each tensor, one weight per
// column (per expert and column for 3-D expert tensors).
type Imatrix struct {
	// Datasets names the calibration data (imatrix.datasets, or the legacy
	// trailer's file name).
	Datasets []string
	// ChunkCount is the number of chunks the statistics were collected over
	// (imatrix.chunk_count, or the legacy trailer's last call).
	ChunkCount int
	// ChunkSize is imatrix.chunk_size (GGUF files only).
	ChunkSize int
	// Legacy is true for the old .dat format.
	Legacy bool

	weights map[string][]float32
}

// Names returns the tensor names that have weights, sorted.
func (m *Imatrix) Names() []string {
	names := make([]string, 0, len(m.weights))
	for n := range m.weights {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Weights returns the weights for a tensor: ne0 values, or ne0*ne2 for a
// 3-D expert tensor (expert e's weights are w[e*ne0:(e+1)*ne0], which is
// how llama-quantize slices them). The slice is shared; do not modify it.
func (m *Imatrix) Weights(tensorName string) ([]float32, bool) {
	w, ok := m.weights[tensorName]
	return w, ok
}

// TensorWeights returns the weights llama-quantize would use for t: nil if
// the file has no entry for it, an error if the entry's size is not ne0 (times
// ne2 for expert tensors), except for the token embedding, which llama.cpp
// then quietly quantizes without weights. Pass them to ConvertTensor (per
// expert for 3-D tensors).
func (m *Imatrix) TensorWeights(t *gguf.TensorInfo) ([]float32, error) {
	w, ok := m.weights[t.Name]
	if !ok {
		return nil, nil
	}
	want := t.RowLen()
	if len(t.Dims) > 2 {
		want *= t.Dims[2]
	}
	if uint64(len(w)) != want {
		if tensorCategory(t.Name) == catTokenEmbd {
			return nil, nil
		}
		return nil, fmt.Errorf("quant: imatrix has %d values for tensor %q, which needs %d", len(w), t.Name, want)
	}
	return w, nil
}

// ReadImatrix reads an importance matrix in either of llama.cpp's formats,
// told apart by content: the GGUF format of llama-imatrix (tensors
// "<name>.in_sum2" and "<name>.counts"; weight = in_sum2/count, 1 where a
// count is zero) or the legacy .dat format (entries of summed squares and a
// call count; weight = sum/ncall). The values are computed in float32 as
// llama-quantize computes them. Every count and length is checked against
// the bytes that exist.
func ReadImatrix(r io.ReaderAt, size int64) (*Imatrix, error) {
	var magic [4]byte
	if size >= 4 {
		if _, err := r.ReadAt(magic[:], 0); err != nil {
			return nil, fmt.Errorf("imatrix: %w", err)
		}
	}
	if string(magic[:]) == "GGUF" {
		return readImatrixGGUF(r, size)
	}
	return readImatrixLegacy(io.NewSectionReader(r, 0, size), size)
}

const (
	keyImatrixDatasets   = "imatrix.datasets"
	keyImatrixChunkCount = "imatrix.chunk_count"
	keyImatrixChunkSize  = "imatrix.chunk_size"
)

func readImatrixGGUF(r io.ReaderAt, size int64) (*Imatrix, error) {
	g, err := gguf.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("imatrix: %w", err)
	}
	if len(g.Tensors) == 0 {
		return nil, errors.New("imatrix: GGUF file has no tensors")
	}
	m := &Imatrix{weights: map[string][]float32{}}
	md := g.Metadata
	ds, okDS := md.Get(keyImatrixDatasets)
	cc, okCC := md.Uint(keyImatrixChunkCount)
	cs, okCS := md.Uint(keyImatrixChunkSize)
	if !okDS || !okCC || !okCS {
		return nil, fmt.Errorf("imatrix: missing %s, %s or %s metadata", keyImatrixDatasets, keyImatrixChunkCount, keyImatrixChunkSize)
	}
	if m.Datasets, okDS = ds.Strings(); !okDS {
		return nil, fmt.Errorf("imatrix: %s is not an array of strings", keyImatrixDatasets)
	}
	m.ChunkCount, m.ChunkSize = int(min(cc, math.MaxInt32)), int(min(cs, math.MaxInt32))
	type pair struct{ sums, counts int }
	pairs := map[string]*pair{}
	get := func(n string) *pair {
		if pairs[n] == nil {
			pairs[n] = &pair{-1, -1}
		}
		return pairs[n]
	}
	for i := range g.Tensors {
		name := g.Tensors[i].Name
		if base, ok := strings.CutSuffix(name, ".in_sum2"); ok {
			get(base).sums = i
		} else if base, ok := strings.CutSuffix(name, ".counts"); ok {
			get(base).counts = i
		}
	}
	for name, p := range pairs {
		if p.sums < 0 || p.counts < 0 {
			return nil, fmt.Errorf("imatrix: tensor %q has no matching in_sum2/counts pair", name)
		}
		sums, err := readF32Tensor(g, p.sums)
		if err != nil {
			return nil, err
		}
		counts, err := readF32Tensor(g, p.counts)
		if err != nil {
			return nil, err
		}
		st := &g.Tensors[p.sums]
		ne0, ne1 := int(st.RowLen()), int(st.NumRows())
		if len(counts) != ne1 {
			return nil, fmt.Errorf("imatrix: %q has %d counts for %d rows of sums", name, len(counts), ne1)
		}
		w := make([]float32, len(sums))
		for j := 0; j < ne1; j++ {
			c := counts[j]
			for i := 0; i < ne0; i++ {
				if c > 0 {
					w[j*ne0+i] = sums[j*ne0+i] / c
				} else {
					w[j*ne0+i] = 1 // no calibration input reached this tensor
				}
			}
		}
		if err := checkWeights(name, w); err != nil {
			return nil, err
		}
		m.weights[name] = w
	}
	if len(m.weights) == 0 {
		return nil, errors.New("imatrix: GGUF file has no in_sum2/counts tensors")
	}
	return m, nil
}

// checkWeights rejects importance weights that are not finite or are
// negative: they are means of squared activations, so such a value means a
// broken file, and llama-quantize would quietly turn it into zero or NaN
// weights (a model that repeats one word).
func checkWeights(name string, w []float32) error {
	for i, v := range w {
		if f := float64(v); math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return fmt.Errorf("imatrix: tensor %q: value %d is %v; importance values must be finite and not negative", name, i, v)
		}
	}
	return nil
}

func readF32Tensor(g *gguf.Reader, i int) ([]float32, error) {
	t := &g.Tensors[i]
	if t.Type != gguf.TypeF32 {
		return nil, fmt.Errorf("imatrix: tensor %q has type %s, want F32", t.Name, t.Type)
	}
	b := make([]byte, t.Size())
	if _, err := io.ReadFull(g.TensorData(i), b); err != nil {
		return nil, fmt.Errorf("imatrix: tensor %q: %w", t.Name, err)
	}
	f := make([]float32, len(b)/4)
	decodeF32(f, b)
	return f, nil
}

// legacyReader reads the little-endian legacy format, counting how many
// bytes remain so that no length is trusted beyond them.
type legacyReader struct {
	r    *bufio.Reader
	left int64
}

func (l *legacyReader) int32(what string) (int32, error) {
	var b [4]byte
	if l.left < 4 {
		return 0, fmt.Errorf("imatrix: file ends before %s", what)
	}
	if _, err := io.ReadFull(l.r, b[:]); err != nil {
		return 0, fmt.Errorf("imatrix: reading %s: %w", what, err)
	}
	l.left -= 4
	return int32(binary.LittleEndian.Uint32(b[:])), nil
}

func (l *legacyReader) bytes(n int64, what string) ([]byte, error) {
	if n < 0 || n > l.left {
		return nil, fmt.Errorf("imatrix: %s of %d bytes, only %d left in the file", what, n, l.left)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(l.r, b); err != nil {
		return nil, fmt.Errorf("imatrix: reading %s: %w", what, err)
	}
	l.left -= n
	return b, nil
}

func readImatrixLegacy(r io.Reader, size int64) (*Imatrix, error) {
	l := &legacyReader{r: bufio.NewReader(r), left: size}
	n, err := l.int32("the entry count")
	if err != nil {
		return nil, err
	}
	// Each entry takes at least 17 bytes: name length, a 1-byte name, call
	// and value counts, one value.
	if n < 1 || int64(n) > l.left/17 {
		return nil, fmt.Errorf("imatrix: legacy file declares %d entries, impossible in %d bytes", n, size)
	}
	m := &Imatrix{Legacy: true, weights: make(map[string][]float32, n)}
	for i := 0; i < int(n); i++ {
		nameLen, err := l.int32("a name length")
		if err != nil {
			return nil, err
		}
		if nameLen < 1 {
			return nil, fmt.Errorf("imatrix: entry %d has name length %d", i+1, nameLen)
		}
		name, err := l.bytes(int64(nameLen), "a tensor name")
		if err != nil {
			return nil, err
		}
		ncall, err := l.int32("a call count")
		if err != nil {
			return nil, err
		}
		nval, err := l.int32("a value count")
		if err != nil {
			return nil, err
		}
		if nval < 1 {
			return nil, fmt.Errorf("imatrix: entry %q has %d values", name, nval)
		}
		raw, err := l.bytes(4*int64(nval), "importance values")
		if err != nil {
			return nil, err
		}
		w := make([]float32, nval)
		decodeF32(w, raw)
		if ncall > 0 {
			for j := range w {
				w[j] /= float32(ncall)
			}
		}
		// ggml's loader stops the name at the first NUL (it goes through a
		// C string) and a later duplicate replaces an earlier one.
		if k := bytes.IndexByte(name, 0); k >= 0 {
			name = name[:k]
		}
		if err := checkWeights(string(name), w); err != nil {
			return nil, err
		}
		m.weights[string(name)] = w
	}
	if l.left > 0 {
		last, err := l.int32("the chunk count")
		if err != nil {
			return nil, err
		}
		dlen, err := l.int32("the dataset name length")
		if err != nil {
			return nil, err
		}
		ds, err := l.bytes(int64(dlen), "the dataset name")
		if err != nil {
			return nil, err
		}
		m.ChunkCount = int(last)
		m.Datasets = []string{string(ds)}
	}
	return m, nil
}
