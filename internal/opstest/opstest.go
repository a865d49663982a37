// Package opstest runs build operations (package ops) on GGUF files held
// in memory, as `gguf build` runs them on files: plan, then one streaming
// pass. It is for tests that need a rewritten model (a pruned head,
// experts in a layout, a quantized file) as input to something else.
package opstest

import (
	"bytes"
	"context"
	"testing"

	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
)

// Build returns the GGUF file src (named name in messages) rewritten with
// opts; any error fails the test.
func Build(tb testing.TB, name string, src []byte, opts ops.Options) []byte {
	tb.Helper()
	r, err := gguf.NewReader(bytes.NewReader(src), int64(len(src)))
	if err != nil {
		tb.Fatal(err)
	}
	p, _, err := ops.Plan(&plan.Input{Name: name, File: r.File, ReaderAt: bytes.NewReader(src)}, opts)
	if err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := p.Execute(context.Background(), &out, plan.Options{}); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}
