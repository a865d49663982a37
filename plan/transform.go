package plan

import (
	"context"
	"fmt"
	"io"
)

// Transform produces a tensor by converting the rows another producer makes
// (quantizing them, say): Inner's bytes are cut into chunks of whole rows,
// each chunk is converted by Fn and written out. Memory: one input chunk and
// one output chunk, whatever the tensor's size.
type Transform struct {
	Inner       Producer
	InRowBytes  int64 // bytes of one row as Inner produces it
	OutRowBytes int64 // bytes of one converted row
	// ChunkRows is the number of rows converted at a time (0: about 16 MiB
	// of input).
	ChunkRows int64
	// Fn converts whole rows: src holds n rows of InRowBytes, dst n rows of
	// OutRowBytes; firstRow is the index of src's first row in the tensor.
	Fn   func(dst, src []byte, firstRow int64) error
	Note string
}

// Input implements Producer.
func (t *Transform) Input() *Input { return t.Inner.Input() }

// Ranges implements Producer.
func (t *Transform) Ranges() []Range { return t.Inner.Ranges() }

// Describe implements Producer.
func (t *Transform) Describe() string { return t.Note + " of " + t.Inner.Describe() }

// Produce implements Producer.
func (t *Transform) Produce(ctx context.Context, next func() (io.Reader, error), w io.Writer) error {
	if t.InRowBytes <= 0 || t.OutRowBytes <= 0 {
		return fmt.Errorf("plan: transform with row sizes %d -> %d", t.InRowBytes, t.OutRowBytes)
	}
	rows := t.ChunkRows
	if rows <= 0 {
		rows = max(1, (16<<20)/t.InRowBytes)
	}
	cw := &chunkWriter{t: t, w: w, in: make([]byte, 0, rows*t.InRowBytes), out: make([]byte, rows*t.OutRowBytes), ctx: ctx}
	if err := t.Inner.Produce(ctx, next, cw); err != nil {
		return err
	}
	if len(cw.in) > 0 {
		if int64(len(cw.in))%t.InRowBytes != 0 {
			return fmt.Errorf("plan: %d bytes left, not whole rows of %d bytes", len(cw.in), t.InRowBytes)
		}
		return cw.flush()
	}
	return nil
}

// chunkWriter gathers whole rows and converts them a chunk at a time.
type chunkWriter struct {
	t       *Transform
	w       io.Writer
	in, out []byte
	row     int64
	ctx     context.Context
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), cap(c.in)-len(c.in))
		c.in = append(c.in, p[:k]...)
		p, n = p[k:], n+k
		if len(c.in) == cap(c.in) {
			if err := c.flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (c *chunkWriter) flush() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	rows := int64(len(c.in)) / c.t.InRowBytes
	out := c.out[:rows*c.t.OutRowBytes]
	if err := c.t.Fn(out, c.in, c.row); err != nil {
		return err
	}
	c.row += rows
	c.in = c.in[:0]
	_, err := c.w.Write(out)
	return err
}
