//go:build !(amd64 || arm64) || purego

package kernels

// Without assembly the F32 dot is the portable Go one.

func dotF32(n int, w, a []byte) float32 { return dotF32Go(F32s(w)[:n], F32s(a)[:n]) }

// useAVX2 is false: there are no assembly kernels in this build.
const useAVX2 = false

// Scores computes attention scores one key at a time (scoresGo).
func Scores(q, k []float32, kstride int, scale float32, sc []float32) float32 {
	return scoresGo(q, k, kstride, scale, sc)
}
