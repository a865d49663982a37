//go:build !amd64 || purego

package quant

// Without assembly the scale searches use the Go lane kernels.

func qxLanes(x, ws, wx []float32, nmax int, isc *[8]float32, lf *[32][8]float32, out *[2][8]float32) {
	qxLanesGo(x, ws, wx, nmax, isc, lf, out)
}

func qkxLanes(xm, x, ws []float32, nmax int, isc *[8]float32, lf *[32][8]float32, out *[3][8]float32) {
	qkxLanesGo(xm, x, ws, nmax, isc, lf, out)
}

func qkxMads(x, ws []float32, sc, mn *[8]float32, lf *[32][8]float32, useMad bool, out *[8]float32) {
	qkxMadsGo(x, ws, sc, mn, lf, useMad, out)
}
