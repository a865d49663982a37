//go:build !(amd64 || arm64) || purego

package engine

// Without assembly the F32 dot is the portable Go one.

func dotF32(n int, w, a []byte) float32 { return dotF32Go(f32s(w)[:n], f32s(a)[:n]) }

// useAVX2 is false: there are no assembly kernels in this build.
const useAVX2 = false

// scores computes attention scores one key at a time (scoresGo).
func scores(q, k []float32, kstride int, scale float32, sc []float32) float32 {
	return scoresGo(q, k, kstride, scale, sc)
}
