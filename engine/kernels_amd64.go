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
