package plan_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/plan"
)

func inputs(t *testing.T, data []byte) (random, stream *plan.Input) {
	r, err := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	random = &plan.Input{Name: "ra", File: r.File, ReaderAt: bytes.NewReader(data)}
	sr, err := gguf.NewStreamReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	stream = &plan.Input{Name: "stream", File: sr.File}
	stream.Stream, stream.StreamPos = sr.Raw()
	return random, stream
}

func execute(t *testing.T, p *plan.Plan) ([]byte, *plan.Result) {
	t.Helper()
	var out bytes.Buffer
	res, err := p.Execute(context.Background(), &out, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), res
}

// reversed returns a plan writing in's tensors in reverse order, each
// tensor's rows also reversed, plus a copy of the first tensor at the end:
// every byte is needed out of stream order at least once.
func reversed(in *plan.Input) *plan.Plan {
	p := &plan.Plan{Version: 3, Metadata: in.File.Metadata.Clone()}
	n := len(in.File.Tensors)
	for i := n - 1; i >= 0; i-- {
		ti := in.File.Tensors[i]
		rows := make([]int64, ti.NumRows())
		for r := range rows {
			rows[r] = int64(len(rows) - 1 - r)
		}
		p.Tensors = append(p.Tensors, plan.Tensor{Info: ti, Src: &plan.Rows{In: in, Index: i, Rows: rows}})
	}
	first := in.File.Tensors[0]
	first.Name = "again"
	p.Tensors = append(p.Tensors, plan.Tensor{Info: first, Src: &plan.Copy{In: in, Index: 0}})
	return p
}

// TestStreamSpoolsOutOfOrder: from a forward-only stream, a plan reading
// everything backwards gives the same bytes as random access.
func TestStreamSpoolsOutOfOrder(t *testing.T) {
	data := fixture.MoE().Build()
	ra, st := inputs(t, data)
	want, _ := execute(t, reversed(ra))
	got, res := execute(t, reversed(st))
	if !bytes.Equal(got, want) {
		t.Fatal("stream plan differs from random-access plan")
	}
	if res.Spooled == 0 {
		t.Error("nothing spooled")
	}
}

// TestTransform converts rows in chunks that do not divide the tensor.
func TestTransform(t *testing.T) {
	data := fixture.Dense().Build()
	ra, _ := inputs(t, data)
	p := plan.Identity(ra)
	i := p.Index("token_embd.weight")
	ti := p.Tensors[i].Info
	var firsts []int64
	p.Tensors[i].Src = &plan.Transform{Inner: p.Tensors[i].Src, InRowBytes: ti.RowBytes(), OutRowBytes: ti.RowBytes(), ChunkRows: 7,
		Fn: func(dst, src []byte, first int64) error {
			firsts = append(firsts, first)
			for k := range src {
				dst[k] = ^src[k]
			}
			return nil
		}, Note: "invert"}
	out, _ := execute(t, p)
	r, _ := gguf.NewReader(bytes.NewReader(out), int64(len(out)))
	a, _ := io.ReadAll(r.TensorData(i))
	orig, _ := io.ReadAll(io.NewSectionReader(ra.ReaderAt, ra.TensorRange(i).Off, ra.TensorRange(i).Len))
	for k := range a {
		if a[k] != ^orig[k] {
			t.Fatalf("byte %d not converted", k)
		}
	}
	rows := int64(ti.NumRows())
	if len(firsts) != int((rows+6)/7) || firsts[1] != 7 {
		t.Errorf("chunks started at %v for %d rows", firsts, rows)
	}
}

// TestTransformError: a conversion that fails (it runs while the next
// chunk is read) fails the build, whichever chunk it is.
func TestTransformError(t *testing.T) {
	data := fixture.Dense().Build()
	for _, bad := range []int64{0, 7, 91} {
		ra, _ := inputs(t, data)
		p := plan.Identity(ra)
		i := p.Index("token_embd.weight")
		ti := p.Tensors[i].Info
		p.Tensors[i].Src = &plan.Transform{Inner: p.Tensors[i].Src, InRowBytes: ti.RowBytes(), OutRowBytes: ti.RowBytes(), ChunkRows: 7,
			Fn: func(dst, src []byte, first int64) error {
				if first == bad {
					return fmt.Errorf("chunk at row %d fails", first)
				}
				return nil
			}, Note: "fail"}
		_, err := p.Execute(context.Background(), io.Discard, plan.Options{})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("row %d fails", bad)) {
			t.Errorf("failing chunk at row %d: error %v", bad, err)
		}
	}
}

// TestShortInput: an input that ends early is an error, never a short file.
func TestShortInput(t *testing.T) {
	data := fixture.Dense().Build()
	r, _ := gguf.NewReader(bytes.NewReader(data), int64(len(data)))
	cut := data[:len(data)-100]
	in := &plan.Input{Name: "cut", File: r.File, ReaderAt: bytes.NewReader(cut)}
	if _, err := plan.Identity(in).Execute(context.Background(), io.Discard, plan.Options{}); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("short ReaderAt: %v", err)
	}
	sr, _ := gguf.NewStreamReader(bytes.NewReader(cut))
	st := &plan.Input{Name: "cut", File: sr.File}
	st.Stream, st.StreamPos = sr.Raw()
	if _, err := plan.Identity(st).Execute(context.Background(), io.Discard, plan.Options{}); err == nil {
		t.Fatal("short stream accepted")
	}
}

// TestCancel: a cancelled context stops the build.
func TestCancel(t *testing.T) {
	data := fixture.Dense().Build()
	ra, _ := inputs(t, data)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := plan.Identity(ra).Execute(ctx, io.Discard, plan.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}
