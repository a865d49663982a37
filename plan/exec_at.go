package plan

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ggufkit/gguf/gguf"
)

// ExecuteAt writes the same file as Execute, but to an output that takes
// writes at offsets (a file), producing the tensors in the order their
// bytes appear in their input instead of the output's order. Each input is
// then read front to back, whatever the output order (a quantized file
// lists tensors as llama-quantize does, --experts-last moves experts):
// a stream input (stdin) needs no spooling, and a remote input that is
// read whole arrives in order, so its checksum can be verified. Memory is
// the same as Execute's: one tensor's producer at a time plus a 1 MiB
// buffer.
//
// Bytes between tensors (alignment padding) are written as zeros, so the
// file does not depend on what the output held before.
func (p *Plan) ExecuteAt(ctx context.Context, w io.WriterAt, opts Options) (*Result, error) {
	layout, err := p.Layout()
	if err != nil {
		return nil, err
	}
	var hdr bytes.Buffer
	if _, err := gguf.NewWriterLayout(&hdr, layout); err != nil {
		return nil, err
	}
	var written int64
	report := func(n int64) { written += n }
	order := sourceOrder(p)
	align := int64(layout.Alignment)
	if opts.Have != nil {
		order = slices.DeleteFunc(order, func(i int) bool {
			if !opts.Have(i) {
				return false
			}
			size := layout.Tensors[i].Size()
			report(size + (align-size%align)%align)
			return true
		})
	}
	ex, err := p.openFetchers(ctx, order, opts)
	if err != nil {
		return nil, err
	}
	defer ex.close()
	if _, err := w.WriteAt(hdr.Bytes(), 0); err != nil {
		return nil, err
	}
	report(int64(hdr.Len()))

	buf := bufio.NewWriterSize(nil, 1<<20)
	for _, i := range order {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, info := &p.Tensors[i], &layout.Tensors[i]
		off := layout.DataOffset + int64(info.Offset)
		size := info.Size()
		tw := &tensorAt{w: w, off: off, left: size, report: report}
		buf.Reset(tw)
		err := t.Src.Produce(ctx, ex.next(t), buf)
		if err == nil {
			err = buf.Flush()
		}
		if err == nil && tw.left > 0 {
			err = fmt.Errorf("producer wrote %d of the tensor's %d bytes", size-tw.left, size)
		}
		if err != nil {
			return nil, fmt.Errorf("tensor %q (%s): %w", t.Info.Name, t.Src.Describe(), err)
		}
		ex.produced(t)
		// The padding gguf.Writer puts after every non-empty tensor.
		if pad := (align - size%align) % align; pad > 0 {
			if _, err := w.WriteAt(make([]byte, pad), off+size); err != nil {
				return nil, err
			}
			report(pad)
		}
		if opts.Wrote != nil {
			if err := opts.Wrote(i); err != nil {
				return nil, err
			}
		}
	}
	if total := layout.FileSize(); written != total {
		return nil, fmt.Errorf("plan: wrote %d bytes of a %d-byte file", written, total)
	}
	return ex.result(layout, written, opts), nil
}

// sourceOrder returns the tensor indexes sorted by where their producers
// start reading, per input in the order inputs first appear; tensors that
// read nothing come first. The sort is stable, so ties keep the output
// order.
func sourceOrder(p *Plan) []int {
	order := make([]int, len(p.Tensors))
	rank := map[*Input]int{}
	for i := range order {
		order[i] = i
		if in := p.Tensors[i].Src.Input(); in != nil {
			if _, ok := rank[in]; !ok {
				rank[in] = len(rank) + 1
			}
		}
	}
	key := func(i int) (int, int64) {
		src := p.Tensors[i].Src
		in := src.Input()
		if in == nil {
			return 0, 0
		}
		var first int64
		if rs := src.Ranges(); len(rs) > 0 {
			first = rs[0].Off
		}
		return rank[in], first
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ra, oa := key(a)
		rb, ob := key(b)
		return cmp.Or(cmp.Compare(ra, rb), cmp.Compare(oa, ob))
	})
	return order
}

// errTensorFull is returned when a producer writes more than its tensor.
var errTensorFull = errors.New("producer wrote more bytes than the tensor holds")

// tensorAt writes one tensor's bytes at their offset, refusing more than
// the tensor's size.
type tensorAt struct {
	w      io.WriterAt
	off    int64
	left   int64
	report func(int64)
}

func (t *tensorAt) Write(p []byte) (int, error) {
	if int64(len(p)) > t.left {
		return 0, errTensorFull
	}
	n, err := t.w.WriteAt(p, t.off)
	t.off += int64(n)
	t.left -= int64(n)
	t.report(int64(n))
	return n, err
}

// HasSequentialInput reports whether an input of p is best read front to
// back: a stream, or a RangeStreamer such as a remote file. Writing a file
// with ExecuteAt then reads it in order; for local files Execute is the
// better choice, its copies go through the kernel.
func (p *Plan) HasSequentialInput() bool {
	for i := range p.Tensors {
		in := p.Tensors[i].Src.Input()
		if in == nil {
			continue
		}
		if _, ok := in.ReaderAt.(RangeStreamer); ok || in.Stream != nil {
			return true
		}
	}
	return false
}
