//go:build !amd64 || purego

package kernels

// Vdots sets out[d] = sc . v[d*vstride : d*vstride+len(sc)] for every d in
// out (vdotsGo).
func Vdots(sc, v []float32, vstride int, out []float32) { vdotsGo(sc, v, vstride, out) }
