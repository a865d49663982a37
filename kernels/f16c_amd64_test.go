//go:build amd64 && !purego

package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// TestDotF16Kernel: the F16C dot equals the portable dotF16 bit for bit,
// every length from 0 to 70 and two long ones. (arm64's NEON dot sums in
// another order.)
func TestDotF16Kernel(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2/F16C")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range append([]int{1000, 4099}, func() []int {
		var ns []int
		for n := range 71 {
			ns = append(ns, n)
		}
		return ns
	}()...) {
		w, a := make([]float32, n), make([]float32, n)
		for i := range w {
			w[i], a[i] = float32(r.NormFloat64()), float32(r.NormFloat64()*10)
		}
		wb, ab := make([]byte, 2*n), make([]byte, 2*n)
		if err := quantizeAct(gguf.TypeF16, wb, w); err != nil {
			t.Fatal(err)
		}
		if err := quantizeAct(gguf.TypeF16, ab, a); err != nil {
			t.Fatal(err)
		}
		if got, want := dotF16Asm(n, wb, ab), dotF16(n, wb, ab); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n %d: %g, portable %g", n, got, want)
		}
	}
}
