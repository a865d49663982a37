package plan

import (
	"context"
	"fmt"
	"io"
)

// Transform produces a tensor by converting the rows another producer makes
// (quantizing them, say): Inner's bytes are cut into chunks of whole rows,
// each chunk is converted by Fn and written out. One chunk is converted
// while the next is read and the previous one written, so the reading and
// writing, which are serial, do not leave the converting threads idle.
// Memory: two input chunks and two output chunks, whatever the tensor's
// size.
type Transform struct {
	Inner       Producer
	InRowBytes  int64 // bytes of one row as Inner produces it
	OutRowBytes int64 // bytes of one converted row
	// ChunkRows is the number of rows converted at a time (0: about 8 MiB
	// of input).
	ChunkRows int64
	// Fn converts whole rows: src holds n rows of InRowBytes, dst n rows of
	// OutRowBytes; firstRow is the index of src's first row in the tensor.
	// It runs on another goroutine than Inner's Produce, one call at a time.
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
		rows = max(1, (8<<20)/t.InRowBytes)
	}
	cw := &chunkWriter{t: t, w: w, ctx: ctx}
	for i := range cw.in {
		cw.in[i] = make([]byte, 0, rows*t.InRowBytes)
		cw.out[i] = make([]byte, rows*t.OutRowBytes)
	}
	err := t.Inner.Produce(ctx, next, cw)
	if err == nil && len(cw.in[cw.cur]) > 0 {
		if int64(len(cw.in[cw.cur]))%t.InRowBytes != 0 {
			err = fmt.Errorf("plan: %d bytes left, not whole rows of %d bytes", len(cw.in[cw.cur]), t.InRowBytes)
		} else {
			err = cw.flush()
		}
	}
	if werr := cw.drain(err == nil); err == nil {
		err = werr
	}
	return err
}

// chunkWriter gathers whole rows into one of two buffers and converts a
// full one on another goroutine while the other fills.
type chunkWriter struct {
	t       *Transform
	w       io.Writer
	in, out [2][]byte
	cur     int   // the buffer being filled
	row     int64 // tensor row of the next chunk to convert
	ctx     context.Context
	pending chan error // the conversion in flight, nil if none
	pendOut []byte     // its output, written once it is done
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		in := c.in[c.cur]
		k := min(len(p), cap(in)-len(in))
		c.in[c.cur] = append(in, p[:k]...)
		p, n = p[k:], n+k
		if len(c.in[c.cur]) == cap(c.in[c.cur]) {
			if err := c.flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// flush waits for the conversion in flight, starts converting the current
// chunk, then writes the finished chunk's output while it runs.
func (c *chunkWriter) flush() error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	done, doneOut := c.pending, c.pendOut
	if done != nil {
		if err := <-done; err != nil {
			c.pending = nil
			return err
		}
	}
	in := c.in[c.cur]
	rows := int64(len(in)) / c.t.InRowBytes
	out := c.out[c.cur][:rows*c.t.OutRowBytes]
	ch := make(chan error, 1)
	go func(first int64) { ch <- c.t.Fn(out, in, first) }(c.row)
	c.pending, c.pendOut = ch, out
	c.row += rows
	c.cur ^= 1
	c.in[c.cur] = c.in[c.cur][:0]
	if done != nil {
		if _, err := c.w.Write(doneOut); err != nil {
			return err
		}
	}
	return nil
}

// drain waits for the conversion in flight and, with write, writes its
// output.
func (c *chunkWriter) drain(write bool) error {
	if c.pending == nil {
		return nil
	}
	err := <-c.pending
	c.pending = nil
	if err != nil || !write {
		return err
	}
	_, err = c.w.Write(c.pendOut)
	return err
}
