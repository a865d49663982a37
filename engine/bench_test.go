package engine

import (
	"fmt"
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/kernels"
)

// BenchmarkStories260K measures stories260K's prompt (one batch of 64
// tokens) and generation speed (one token per Eval, as in `gguf run`) with
// 1 and 2 threads, fast kernels against the reference ones in the same run.
// bench/llama2c.sh compares the same model with llama2.c's run.c.
func BenchmarkStories260K(b *testing.B) {
	m := openModel(b, shared.Path(b, "models", "stories260K-f32.gguf"))
	for _, threads := range []int{1, 2} {
		for _, kind := range []string{"fast", "ref"} {
			for _, c := range []struct {
				name string
				fn   func(*testing.B, *State)
			}{{"prompt", benchPrompt}, {"gen", benchGen}} {
				b.Run(fmt.Sprintf("t%d/%s/%s", threads, c.name, kind), func(b *testing.B) {
					s := newState(b, m, Options{Ctx: 512, Threads: threads, Batch: 64})
					if kind == "ref" {
						kernels.WithReference(func() { c.fn(b, s) })
					} else {
						c.fn(b, s)
					}
				})
			}
		}
	}
}
