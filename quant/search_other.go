//go:build !amd64 || purego

package quant

// Without assembly the scale searches use the Go lane kernels.

func qxLanes(x, ws, wx []float32, nmax int, cand *[8]int32, max float32, lf *[32][8]float32, out *[2][8]float32) {
	qxLanesGo(x, ws, wx, nmax, cand, max, lf, out)
}

func qkxPass(xm, x, ws []float32, nmax, is int, rmin, rdelta, span, sumW, sumX float32, useMad bool, lf *[32][8]float32, out *[4][8]float32) {
	qkxPassGo(xm, x, ws, nmax, is, rmin, rdelta, span, sumW, sumX, useMad, lf, out)
}

// q3Lanes has no lane kernel to run here.
func q3Lanes(x []float32, L []int8, scales []float32) bool { return false }

func requantize(x []float32, sub int, d, add []float32, lo, hi, off int32, L []uint8) {
	requantizeGo(x, sub, d, add, lo, hi, off, L)
}
