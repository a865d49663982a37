//go:build !amd64 || purego

package engine

// Without assembly the fast kernels are the portable Go ones.

func dotF32(n int, w, a []byte) float32 { return dotF32Go(f32s(w)[:n], f32s(a)[:n]) }

var (
	dotQ8_0 dotFunc = dotQ8_0Go
	dotQ4_0 dotFunc = dotQ4_0Go
	dotQ2_K dotFunc = dotQ2_KGo
	dotQ4_K dotFunc = dotQ4_KGo
	dotQ6_K dotFunc = dotQ6_KGo
)
