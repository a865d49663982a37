package engine

import (
	"testing"

	"github.com/ggufkit/gguf/internal/shared"
)

// benchGenerate measures generation speed: one token per Eval, as in
// `gguf run`, reporting tokens/s.
func benchGenerate(b *testing.B, path string, threads int) {
	m := openModel(b, path)
	s := newState(b, m, Options{Ctx: 512, Threads: threads})
	tok := []int32{1}
	b.ResetTimer()
	n := 0
	for i := 0; i < b.N; i++ {
		if s.Pos() == 346 {
			s.Reset()
		}
		if err := s.Eval(tok, 0, func(_ int, l []float32) { tok[0] = argmax(l) }); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tok/s")
}

func BenchmarkStories260KGenerate(b *testing.B) {
	benchGenerate(b, shared.Path(b, "models", "stories260K-f32.gguf"), 1)
}
