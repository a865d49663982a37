package plan_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/plan"
)

// bigRows x bigCols F32 is a tensor big enough that a build of it must
// report progress while it is copied (32 MiB).
const bigCols, bigRows = 1024, 8192

// bigModel writes a file holding one big and one small F32 tensor and
// opens it as a local file input.
func bigModel(t *testing.T) *plan.Input {
	t.Helper()
	md, err := gguf.NewMetadata()
	if err != nil {
		t.Fatal(err)
	}
	big := gguf.TensorInfo{Name: "big", Dims: []uint64{bigCols, bigRows}, Type: gguf.TypeF32}
	small := gguf.TensorInfo{Name: "small", Dims: []uint64{64, 4}, Type: gguf.TypeF32}
	data := make([]byte, big.Size())
	for i := range data {
		data[i] = byte(i * 7)
	}
	file := fixture.Write(md, []fixture.Tensor{{Info: big, Data: data}, {Info: small, Data: make([]byte, small.Size())}})
	path := filepath.Join(t.TempDir(), "big.gguf")
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	r, err := gguf.NewReader(f, int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	return &plan.Input{Name: "big", File: r.File, ReaderAt: f}
}

// progressLog records Progress calls, and with each how many output bytes
// existed at that moment.
type progressLog struct {
	out   func() int64
	calls [][3]int64 // done, total, output bytes
}

func (l *progressLog) fn(done, total int64) {
	l.calls = append(l.calls, [3]int64{done, total, l.out()})
}

// check asserts the calls start at 0 before any output, never go back,
// end at total, and that at least minInside of them fall strictly inside
// the first inside bytes of work (a big tensor being processed).
func (l *progressLog) check(t *testing.T, what string, total, inside int64, minInside int) {
	t.Helper()
	c := l.calls
	if len(c) < 2 {
		t.Fatalf("%s: %d progress calls", what, len(c))
	}
	if c[0][0] != 0 || c[0][2] != 0 {
		t.Errorf("%s: first call %v: want 0 done before the first output byte", what, c[0])
	}
	n := 0
	for i, k := range c {
		if k[1] != total {
			t.Fatalf("%s: call %d: total %d, want the %d input bytes", what, i, k[1], total)
		}
		if i > 0 && k[0] < c[i-1][0] {
			t.Fatalf("%s: progress went back: %v", what, c)
		}
		if k[0] > 0 && k[0] < inside {
			n++
		}
	}
	if last := c[len(c)-1]; last[0] != total {
		t.Errorf("%s: last call %v: want done == total", what, last)
	}
	if n < minInside {
		t.Errorf("%s: %d progress calls inside the %d-byte tensor, want at least %d: %v", what, n, inside, minInside, c)
	}
}

// TestProgressCountsInputInsideBigTensors: progress starts at 0 before a
// byte is written, moves while one big tensor is copied (through the
// kernel) or converted, counts input bytes rather than output bytes, and
// counts tensors made from nothing by their size.
func TestProgressCountsInputInsideBigTensors(t *testing.T) {
	in := bigModel(t)
	bigSize := in.File.Tensors[0].Size()
	inputBytes := bigSize + in.File.Tensors[1].Size()

	// A copy from a local file to a local file.
	outPath := filepath.Join(t.TempDir(), "out.gguf")
	out, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	l := &progressLog{out: func() int64 {
		st, err := out.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}}
	p := plan.Identity(in)
	if _, err := p.Execute(context.Background(), out, plan.Options{Progress: l.fn}); err != nil {
		t.Fatal(err)
	}
	l.check(t, "file copy", inputBytes, bigSize, 3)

	// Quantizing-like: the output is a quarter of the input, the progress
	// still counts the input; plus a tensor made from nothing.
	conv := func(in *plan.Input) *plan.Plan {
		p := plan.Identity(in)
		ti := p.Tensors[0].Info
		p.Tensors[0].Info.Dims = []uint64{bigCols / 4, bigRows}
		p.Tensors[0].Src = &plan.Transform{Inner: p.Tensors[0].Src, InRowBytes: ti.RowBytes(), OutRowBytes: ti.RowBytes() / 4,
			Fn: func(dst, src []byte, _ int64) error { copy(dst, src); return nil }, Note: "shrink"}
		extra := gguf.TensorInfo{Name: "extra", Dims: []uint64{256, 1024}, Type: gguf.TypeF32}
		p.Tensors = append(p.Tensors, plan.Tensor{Info: extra, Src: &plan.Bytes{Data: make([]byte, extra.Size()), Note: "zeros"}})
		return p
	}
	var buf bytes.Buffer
	l = &progressLog{out: func() int64 { return int64(buf.Len()) }}
	res, err := conv(in).Execute(context.Background(), &buf, plan.Options{Progress: l.fn})
	if err != nil {
		t.Fatal(err)
	}
	l.check(t, "conversion", inputBytes+1<<20, bigSize, 8)
	if res.Written >= bigSize/2 {
		t.Fatalf("conversion wrote %d bytes: the test needs an output smaller than its input", res.Written)
	}

	// The same through ExecuteAt, as a remote or piped source is built.
	at := &memAt{}
	l = &progressLog{out: func() int64 { return int64(len(at.b)) }}
	if _, err := conv(in).ExecuteAt(context.Background(), at, plan.Options{Progress: l.fn}); err != nil {
		t.Fatal(err)
	}
	l.check(t, "conversion at offsets", inputBytes+1<<20, bigSize, 8)
}
