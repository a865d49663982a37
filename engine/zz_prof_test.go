package engine

import (
	"os"
	"testing"
)

func BenchmarkZZPrompt(b *testing.B) {
	m := openModel(b, os.Getenv("ZZ_MODEL"))
	for _, th := range []int{1, 2} {
		b.Run(string(rune('0'+th)), func(b *testing.B) {
			s := newState(b, m, Options{Ctx: 512, Threads: th})
			tokens := make([]int32, 294)
			for i := range tokens {
				tokens[i] = int32(i*7%500 + 3)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Reset()
				if err := s.Eval(tokens, len(tokens)-1, func(int, []float32) {}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(tokens))/b.Elapsed().Seconds(), "tok/s")
		})
	}
}
