package plan_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/plan"
)

// memAt is an in-memory io.WriterAt, prefilled with 0xee so that bytes
// ExecuteAt fails to write (padding included) show up.
type memAt struct{ b []byte }

func (m *memAt) WriteAt(p []byte, off int64) (int, error) {
	for int64(len(m.b)) < off+int64(len(p)) {
		m.b = append(m.b, 0xee)
	}
	return copy(m.b[off:], p), nil
}

func executeAt(t *testing.T, p *plan.Plan) ([]byte, *plan.Result) {
	t.Helper()
	out := &memAt{b: bytes.Repeat([]byte{0xee}, 1<<12)}
	res, err := p.ExecuteAt(context.Background(), out, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(out.b)) < res.Written {
		t.Fatalf("%d bytes in the output, %d reported", len(out.b), res.Written)
	}
	return out.b[:res.Written], res
}

// tensorsReversed returns a plan copying in's tensors in reverse order.
func tensorsReversed(in *plan.Input) *plan.Plan {
	p := &plan.Plan{Version: 3, Metadata: in.File.Metadata.Clone()}
	for i := len(in.File.Tensors) - 1; i >= 0; i-- {
		p.Tensors = append(p.Tensors, plan.Tensor{Info: in.File.Tensors[i], Src: &plan.Copy{In: in, Index: i}})
	}
	return p
}

// TestExecuteAtSameBytes: ExecuteAt writes exactly Execute's file for the
// identity plan, a reordered plan and a plan reading every byte out of
// order, from random-access and stream inputs, over an output holding
// other bytes; and a reordered plan from a stream needs no spooling.
func TestExecuteAtSameBytes(t *testing.T) {
	data := fixture.MoE().Build()
	for name, mk := range map[string]func(*plan.Input) *plan.Plan{
		"identity": plan.Identity, "tensors reversed": tensorsReversed, "rows reversed": reversed,
	} {
		ra, _ := inputs(t, data)
		want, _ := execute(t, mk(ra))
		for _, kind := range []string{"random", "stream"} {
			ra, st := inputs(t, data)
			in := ra
			if kind == "stream" {
				in = st
			}
			got, res := executeAt(t, mk(in))
			if !bytes.Equal(got, want) {
				t.Errorf("%s from %s: ExecuteAt differs from Execute", name, kind)
			}
			if kind == "stream" && name != "rows reversed" && res.Spooled != 0 {
				t.Errorf("%s from a stream spooled %d bytes", name, res.Spooled)
			}
		}
	}
	_, st := inputs(t, data)
	if _, res := execute(t, tensorsReversed(st)); res.Spooled == 0 {
		t.Error("Execute of the reversed plan from a stream spooled nothing: the test above proves nothing")
	}
}

// TestExecuteAtErrors: a short input and a producer writing too much or
// too little are errors.
func TestExecuteAtErrors(t *testing.T) {
	data := fixture.Dense().Build()
	r, _ := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	cut := &plan.Input{Name: "cut", File: r.File, ReaderAt: bytes.NewReader(data[:len(data)-100])}
	if _, err := plan.Identity(cut).ExecuteAt(context.Background(), &memAt{}, plan.Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short input: %v", err)
	}
	ra, _ := inputs(t, data)
	for _, delta := range []int64{-1, 1} {
		p := plan.Identity(ra)
		ti := p.Tensors[0].Info
		p.Tensors[0].Src = &plan.Transform{Inner: p.Tensors[0].Src, InRowBytes: ti.RowBytes(), OutRowBytes: ti.RowBytes() + delta,
			ChunkRows: 4, Fn: func(dst, src []byte, first int64) error { return nil }, Note: "wrong size"}
		if _, err := p.ExecuteAt(context.Background(), &memAt{}, plan.Options{}); err == nil {
			t.Errorf("producer off by %d bytes per row accepted", delta)
		}
	}
}
