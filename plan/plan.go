package plan

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/ggufkit/gguf/gguf"
)

// Range is a byte range of an input file (absolute offsets).
type Range struct {
	Off, Len int64
}

// End returns the offset just past the range.
func (r Range) End() int64 { return r.Off + r.Len }

// RangeStreamer is implemented by random-access inputs that fetch better in
// bulk, such as remote files: given every range a build will read, in order,
// it returns their concatenated bytes, fetching ahead concurrently.
type RangeStreamer interface {
	StreamRanges(ctx context.Context, ranges []Range) io.ReadCloser
}

// Input is one source file of a plan: its decoded header and a way to read
// its bytes. Exactly one of ReaderAt and Stream is set.
type Input struct {
	Name string
	File *gguf.File
	// ReaderAt reads a random-access input. If it is an *os.File, copies
	// go through the kernel; if it implements RangeStreamer, all of the
	// input's ranges are requested through it.
	ReaderAt io.ReaderAt
	// Stream reads a sequential input, positioned at file offset StreamPos.
	Stream    io.Reader
	StreamPos int64
}

// TensorRange returns the file range of tensor i's bytes.
func (in *Input) TensorRange(i int) Range {
	t := &in.File.Tensors[i]
	return Range{in.File.DataOffset + int64(t.Offset), t.Size()}
}

// Producer makes the bytes of one output tensor.
type Producer interface {
	// Input returns the input read by the producer, or nil.
	Input() *Input
	// Ranges lists the ranges of Input the producer reads, in reading order.
	Ranges() []Range
	// Produce writes the tensor's bytes to w. next returns a reader of
	// exactly the next range of Ranges(); Produce calls it once per range,
	// in order.
	Produce(ctx context.Context, next func() (io.Reader, error), w io.Writer) error
	// Describe says in a few words where the bytes come from, for
	// --dry-run and summaries ("copy", "rows 72/512 of output.weight").
	Describe() string
}

// Tensor is one output tensor: its info (the offset is assigned by Layout)
// and the producer of its bytes.
type Tensor struct {
	Info gguf.TensorInfo
	Src  Producer
}

// Plan is an output file before it is written.
type Plan struct {
	Version  uint32
	Metadata *gguf.Metadata
	Tensors  []Tensor
	// PadHeader pads the header of an output without tensors to the
	// alignment, as ggml's writer does (gguf.File.PadHeader); Identity sets
	// it when the input is so padded, so a rewrite keeps the input's form.
	PadHeader bool
}

// Identity returns the plan that copies in unchanged.
func Identity(in *Input) *Plan {
	p := &Plan{Version: in.File.Version, Metadata: in.File.Metadata.Clone(), PadHeader: in.File.HeaderPadded()}
	for i := range in.File.Tensors {
		p.Tensors = append(p.Tensors, Tensor{Info: in.File.Tensors[i], Src: &Copy{In: in, Index: i}})
	}
	return p
}

// Index returns the index of the output tensor called name, or -1.
func (p *Plan) Index(name string) int {
	for i := range p.Tensors {
		if p.Tensors[i].Info.Name == name {
			return i
		}
	}
	return -1
}

// Layout validates the plan and computes the output file's header layout.
func (p *Plan) Layout() (*gguf.File, error) {
	infos := make([]gguf.TensorInfo, len(p.Tensors))
	for i := range p.Tensors {
		infos[i] = p.Tensors[i].Info
	}
	f, err := gguf.Layout(p.Version, p.Metadata, infos)
	if err == nil && p.PadHeader {
		f.PadHeader()
	}
	return f, err
}

// Copy produces a whole tensor of an input, unchanged.
type Copy struct {
	In    *Input
	Index int
}

// Input implements Producer.
func (c *Copy) Input() *Input { return c.In }

// Ranges implements Producer.
func (c *Copy) Ranges() []Range { return []Range{c.In.TensorRange(c.Index)} }

// Produce implements Producer.
func (c *Copy) Produce(_ context.Context, next func() (io.Reader, error), w io.Writer) error {
	return copyNext(next, w)
}

// copyNext copies the one range a producer reads to w.
func copyNext(next func() (io.Reader, error), w io.Writer) error {
	r, err := next()
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	return err
}

// Describe implements Producer.
func (c *Copy) Describe() string {
	if c.In.Name != "" {
		return "copy from " + c.In.Name
	}
	return "copy"
}

// Rows produces selected rows of an input tensor, in the given order, each
// copied byte for byte whatever the type (a quantized row is whole blocks).
type Rows struct {
	In    *Input
	Index int
	Rows  []int64
}

// RowsGap is the largest gap between two selected rows that is read
// through rather than skipped: one sequential read of a span costs less
// than a seek, a syscall or a request per row (a head keeping every other
// row of a 4 KiB-row embedding reads it in one pass).
const RowsGap = 256 << 10

// span is one range read for Rows, and the rows it holds.
type span struct {
	r    Range
	rows []int64 // offsets of the selected rows, relative to r.Off
}

func (r *Rows) spans() []span {
	t := &r.In.File.Tensors[r.Index]
	base := r.In.TensorRange(r.Index).Off
	rb := t.RowBytes()
	var out []span
	for _, row := range r.Rows {
		off := base + row*rb
		if n := len(out); n > 0 {
			last := &out[n-1]
			if end := last.r.End(); off >= end && off-end <= RowsGap {
				last.rows = append(last.rows, off-last.r.Off)
				last.r.Len = off + rb - last.r.Off
				continue
			}
		}
		out = append(out, span{r: Range{off, rb}, rows: []int64{0}})
	}
	return out
}

// Input implements Producer.
func (r *Rows) Input() *Input { return r.In }

// Ranges implements Producer: selected rows close to each other share one
// range (see RowsGap).
func (r *Rows) Ranges() []Range {
	sp := r.spans()
	out := make([]Range, len(sp))
	for i, s := range sp {
		out[i] = s.r
	}
	return out
}

// Produce implements Producer.
func (r *Rows) Produce(_ context.Context, next func() (io.Reader, error), w io.Writer) error {
	rb := r.In.File.Tensors[r.Index].RowBytes()
	var br *bufio.Reader
	for _, s := range r.spans() {
		rd, err := next()
		if err != nil {
			return err
		}
		if len(s.rows) == 1 && s.r.Len == rb {
			if _, err := io.Copy(w, rd); err != nil {
				return err
			}
			continue
		}
		if br == nil {
			br = bufio.NewReaderSize(rd, 1<<20)
		} else {
			br.Reset(rd)
		}
		pos := int64(0)
		for _, off := range s.rows {
			if _, err := br.Discard(int(off - pos)); err != nil {
				return err
			}
			if err := copyRow(w, br, rb); err != nil {
				return err
			}
			pos = off + rb
		}
		if _, err := br.Discard(int(s.r.Len - pos)); err != nil {
			return err
		}
	}
	return nil
}

// copyRow copies n bytes from br to w, straight from br's buffer when the
// row fits in it (no allocation, one Write).
func copyRow(w io.Writer, br *bufio.Reader, n int64) error {
	if n <= int64(br.Size()) {
		b, err := br.Peek(int(n))
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		_, err = br.Discard(int(n))
		return err
	}
	_, err := io.CopyN(w, br, n)
	return err
}

// Describe implements Producer.
func (r *Rows) Describe() string {
	t := &r.In.File.Tensors[r.Index]
	return fmt.Sprintf("rows %d/%d of %s", len(r.Rows), t.NumRows(), t.Name)
}

// Bytes produces fixed bytes held in memory (small generated tensors such
// as output_ids).
type Bytes struct {
	Data []byte
	Note string
}

// Input implements Producer.
func (b *Bytes) Input() *Input { return nil }

// Ranges implements Producer.
func (b *Bytes) Ranges() []Range { return nil }

// Produce implements Producer.
func (b *Bytes) Produce(_ context.Context, _ func() (io.Reader, error), w io.Writer) error {
	_, err := w.Write(b.Data)
	return err
}

// Describe implements Producer.
func (b *Bytes) Describe() string { return b.Note }

// Span produces one byte range of an input unchanged: a tensor of a file
// in another format than GGUF (a safetensors file), whose input has no
// File.
type Span struct {
	In   *Input
	R    Range
	Note string
}

// Input implements Producer.
func (s *Span) Input() *Input { return s.In }

// Ranges implements Producer.
func (s *Span) Ranges() []Range { return []Range{s.R} }

// Produce implements Producer.
func (s *Span) Produce(_ context.Context, next func() (io.Reader, error), w io.Writer) error {
	return copyNext(next, w)
}

// Describe implements Producer.
func (s *Span) Describe() string { return s.Note }

// Spans produces byte ranges of an input one after the other, each
// unchanged: a tensor stacked from several tensors of a file in another
// format than GGUF (the experts of a MoE layer, one safetensors tensor
// each), read a range at a time.
type Spans struct {
	In   *Input
	R    []Range
	Note string
}

// Input implements Producer.
func (s *Spans) Input() *Input { return s.In }

// Ranges implements Producer.
func (s *Spans) Ranges() []Range { return s.R }

// Produce implements Producer.
func (s *Spans) Produce(_ context.Context, next func() (io.Reader, error), w io.Writer) error {
	for range s.R {
		if err := copyNext(next, w); err != nil {
			return err
		}
	}
	return nil
}

// Describe implements Producer.
func (s *Spans) Describe() string { return s.Note }
