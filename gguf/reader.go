package gguf

import (
	"fmt"
	"io"
)

// File is a decoded GGUF header: everything but the tensor data.
type File struct {
	Version  uint32
	Metadata *Metadata
	// Tensors in tensor-info order, which for a valid file is also data order.
	Tensors []TensorInfo
	// Alignment of the data section and of every tensor in it.
	Alignment uint64
	// HeaderSize is the number of bytes up to the end of the tensor infos.
	HeaderSize int64
	// DataOffset is where the data section starts: HeaderSize rounded up to
	// the alignment. In a file without tensors it is where the padding
	// after the header ends: HeaderSize when there is none (gguf-py writes
	// none), HeaderSize rounded up when the file has it all (ggml's writer).
	DataOffset int64
	// DataSize is the size of the data section as ggml computes it: the sum
	// of the tensors' sizes, each padded to the alignment.
	DataSize int64

	infoOffsets []int64 // file offset just after each tensor info's type field
}

// HeaderPadded reports whether zero bytes follow the header up to the data
// section. For a file with tensors this is the usual alignment padding; for
// one without, it tells a file written by ggml (padded) from one written by
// gguf-py (not), so that a rewrite can keep whichever its input has
// (PadHeader).
func (f *File) HeaderPadded() bool { return f.DataOffset > f.HeaderSize }

// PadHeader makes a layout without tensors end with its header padded to the
// alignment, as ggml's gguf_write_to_file writes one. A layout with tensors
// always has its data section aligned and is left as it is.
func (f *File) PadHeader() {
	if len(f.Tensors) == 0 {
		f.DataOffset = int64(alignUp(uint64(f.HeaderSize), f.Alignment))
	}
}

// TensorIndex returns the index of the tensor called name, or -1.
func (f *File) TensorIndex(name string) int {
	for i := range f.Tensors {
		if f.Tensors[i].Name == name {
			return i
		}
	}
	return -1
}

// Tensor returns the tensor info called name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i := f.TensorIndex(name)
	if i < 0 {
		return nil, false
	}
	return &f.Tensors[i], true
}

// Reader gives random access to a GGUF file held by an io.ReaderAt (a local
// file, a memory buffer, a remote file), like archive/zip.Reader.
type Reader struct {
	*File
	r    io.ReaderAt
	size int64
}

// NewReader decodes and validates the header of the GGUF file of the given
// size held by r. Every count and length in the header is checked against the
// bytes that remain before anything is allocated.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative file size %d", size)
	}
	f, err := decodeHeader(&windowSource{r: r, size: size}, size)
	if err != nil {
		return nil, err
	}
	return &Reader{File: f, r: r, size: size}, nil
}

// Size returns the size of the file.
func (r *Reader) Size() int64 { return r.size }

// ReaderAt returns the underlying reader.
func (r *Reader) ReaderAt() io.ReaderAt { return r.r }

// TensorData returns a reader of tensor i's bytes (without padding).
func (r *Reader) TensorData(i int) *io.SectionReader {
	t := &r.Tensors[i]
	return io.NewSectionReader(r.r, r.DataOffset+int64(t.Offset), t.Size())
}

// TensorFileOffset returns the absolute file offset of tensor i's first byte.
func (r *Reader) TensorFileOffset(i int) int64 {
	return r.DataOffset + int64(r.Tensors[i].Offset)
}

// StreamReader reads a GGUF file front to back from a plain io.Reader (a
// pipe, stdin): first the header, then each tensor's data in file order.
type StreamReader struct {
	*File
	r    io.Reader
	pos  int64 // bytes consumed from the stream
	next int   // index of the next tensor
	cur  *io.LimitedReader
}

// NewStreamReader decodes and validates the header read from r. Allocation
// grows only with the bytes that really arrive.
func NewStreamReader(r io.Reader) (*StreamReader, error) {
	src := &streamSource{r: r}
	f, err := decodeHeader(src, -1)
	if err != nil {
		return nil, err
	}
	return &StreamReader{File: f, r: src.rest(), pos: src.pos()}, nil
}

// Next skips to the data of the next tensor and returns its index and a
// reader of exactly its bytes. Any of the previous tensor's bytes not read
// are skipped. It returns io.EOF after the last tensor.
func (s *StreamReader) Next() (int, io.Reader, error) {
	if s.cur != nil && s.cur.N > 0 {
		if err := s.skip(s.cur.N); err != nil {
			return 0, nil, err
		}
	}
	if s.next >= len(s.Tensors) {
		return 0, nil, io.EOF
	}
	i := s.next
	t := &s.Tensors[i]
	if err := s.skip(s.DataOffset + int64(t.Offset) - s.pos); err != nil {
		return 0, nil, err
	}
	s.next++
	s.cur = &io.LimitedReader{R: s.r, N: t.Size()}
	return i, &countingLimited{s: s, lr: s.cur, name: t.Name}, nil
}

func (s *StreamReader) skip(n int64) error {
	if n < 0 {
		return fmt.Errorf("gguf: stream position %d is past tensor data", s.pos)
	}
	k, err := io.CopyN(io.Discard, s.r, n)
	s.pos += k
	if k < n {
		return &FormatError{Offset: s.pos, What: fmt.Sprintf("stream ended %d bytes early", n-k), Err: ErrTruncated}
	}
	return err
}

// countingLimited reads one tensor's bytes and turns an early end of stream
// into a truncation error instead of a silent short tensor.
type countingLimited struct {
	s    *StreamReader
	lr   *io.LimitedReader
	name string
}

func (c *countingLimited) Read(p []byte) (int, error) {
	n, err := c.lr.Read(p)
	c.s.pos += int64(n)
	if err == io.EOF && c.lr.N > 0 {
		return n, &FormatError{Offset: c.s.pos, What: fmt.Sprintf("stream ended %d bytes before the end of tensor %q", c.lr.N, c.name), Err: ErrTruncated}
	}
	return n, err
}

// Raw returns the stream and the file offset it is positioned at, for
// callers that read tensor data by file offset themselves instead of
// through Next. Mixing Raw and Next is not supported.
func (s *StreamReader) Raw() (io.Reader, int64) { return s.r, s.pos }
