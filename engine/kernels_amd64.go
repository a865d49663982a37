//go:build amd64 && !purego

package engine

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly kernels (AVX2 + FMA, as ggml's x86 build
// requires for its own fast paths); other amd64 CPUs use the Go kernels.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dotF32AVX2(x, y *float32, n int) float32

func dotF32(n int, w, a []byte) float32 {
	if useAVX2 && n >= 8 {
		return dotF32AVX2(&f32s(w)[:n][0], &f32s(a)[:n][0], n)
	}
	return dotF32Go(f32s(w)[:n], f32s(a)[:n])
}

var (
	dotQ8_0 dotFunc = dotQ8_0Go
	dotQ4_0 dotFunc = dotQ4_0Go
	dotQ2_K dotFunc = dotQ2_KGo
	dotQ4_K dotFunc = dotQ4_KGo
	dotQ6_K dotFunc = dotQ6_KGo
)
