package kernels

import (
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// BenchmarkKQuantDot measures one row product of 4096 elements for each
// K-quant type with an integer kernel: the portable Go kernel against the
// one the dispatch table holds (assembly where the CPU has it), so the
// ratio asm/go per row can be read off one run.
func BenchmarkKQuantDot(b *testing.B) {
	const n = 4096
	rng := rand.New(rand.NewPCG(3, 4))
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(rng.NormFloat64())
	}
	a := make([]byte, ActRowBytes(gguf.TypeQ8_K, n))
	if err := quantizeAct(gguf.TypeQ8_K, a, f); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		typ   gguf.Type
		goDot dotFunc
	}{
		{gguf.TypeQ2_K, dotQ2_KGo}, {gguf.TypeQ3_K, dotQ3_KGo}, {gguf.TypeQ4_K, dotQ4_KGo},
		{gguf.TypeQ5_K, dotQ5_KGo}, {gguf.TypeQ6_K, dotQ6_KGo},
	} {
		w := make([]byte, ActRowBytes(c.typ, n))
		if err := quantizeAct(c.typ, w, f); err != nil {
			b.Fatal(err)
		}
		for _, k := range []struct {
			name string
			dot  dotFunc
		}{{"go", c.goDot}, {"table", kernels[c.typ].dot}} {
			b.Run(c.typ.String()+"/"+k.name, func(b *testing.B) {
				for b.Loop() {
					k.dot(n, w, a)
				}
			})
		}
	}
}
