package synthetic

import (
	"bufio"
	"context"
	"os"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// Quantize writes src quantized to typ at dst, as the README's
// `llama-quantize [--pure] SRC DST TYPE 2` made the quantized files: the
// toolkit's own quantizer (package ops), so a file llama.cpp made but
// shared/ does not store can be rebuilt from the regenerated F32 model.
func Quantize(src, dst string, typ gguf.Type, pure bool) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	r, err := gguf.NewReader(in, st.Size())
	if err != nil {
		return err
	}
	p, _, err := ops.Plan(&plan.Input{Name: src, File: r.File, ReaderAt: in},
		ops.Options{Quant: &ops.Quantize{Rules: &quant.Rules{Default: typ, Pure: pure}, Threads: 2}})
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(out, 1<<20)
	if _, err := p.Execute(context.Background(), bw, plan.Options{}); err != nil {
		out.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
