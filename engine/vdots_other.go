//go:build !amd64 || purego

package engine

// vdots sets out[d] = sc . v[d*vstride : d*vstride+len(sc)] for every d in
// out (vdotsGo).
func vdots(sc, v []float32, vstride int, out []float32) { vdotsGo(sc, v, vstride, out) }
