package ops_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/ggufkit/gguf/internal/fixture"
	"github.com/ggufkit/gguf/ops"
	"github.com/ggufkit/gguf/plan"
	"github.com/ggufkit/gguf/quant"
)

// BenchmarkQuantizeThreads times a whole quantize build (plan, read,
// convert, write to io.Discard) of a generated 40 MB F32 model with 1 and
// 2 threads, alternating, and reports the speedup of 2 threads over 1
// ("speedup-2t") and each one's MB/s of input.
//
//	go test ./ops -run X -bench QuantizeThreads -benchtime 5x
func BenchmarkQuantizeThreads(b *testing.B) {
	for _, typ := range []string{"Q8_0", "Q4_K_M"} {
		b.Run(typ, func(b *testing.B) {
			m := fixture.Model{Name: "bench", Layers: 2, Embd: 512, FF: 1408, Heads: 8, KVHeads: 4, Vocab: 4000, Seed: 3}
			data := m.Build()
			ft, err := quant.ParseFileType(typ)
			if err != nil {
				b.Fatal(err)
			}
			build := func(threads int) time.Duration {
				in := input(b, "bench", data)
				p, _, err := ops.Plan(in, ops.Options{Quant: &ops.Quantize{Rules: &quant.Rules{FileType: ft}, Threads: threads}})
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := p.Execute(context.Background(), io.Discard, plan.Options{}); err != nil {
					b.Fatal(err)
				}
				return time.Since(start)
			}
			var t1, t2 time.Duration
			for b.Loop() {
				t1 += build(1)
				t2 += build(2)
			}
			mb := float64(len(data)) * float64(b.N) / 1e6
			b.ReportMetric(t1.Seconds()/t2.Seconds(), "speedup-2t")
			b.ReportMetric(mb/t1.Seconds(), "MB/s-1t")
			b.ReportMetric(mb/t2.Seconds(), "MB/s-2t")
		})
	}
}
