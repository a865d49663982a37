//go:build amd64 && !purego

package quant

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly lane kernels of the scale searches. They
// use AVX2 integer and float instructions only (no FMA: ggml-base has
// none), so each lane computes exactly what the Go kernels compute.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func qxLanesAVX2(x, ws, wx *float32, n int, isc *[8]float32, nmax int, lf *[32][8]float32, out *[2][8]float32)

//go:noescape
func qkxLanesAVX2(xm, x, ws *float32, n int, isc *[8]float32, nmax int, lf *[32][8]float32, out *[3][8]float32)

//go:noescape
func qkxMadsAVX2(x, ws *float32, n int, sc, mn *[8]float32, lf *[32][8]float32, useMad bool, out *[8]float32)

func init() { setAVX2(useAVX2) }

// setAVX2 selects the assembly kernels (on) or the Go ones; the tests
// compare the two.
func setAVX2(on bool) {
	useAVX2 = on
	qxWidth, qkxWidth = 3, 2
	if on {
		qxWidth, qkxWidth = 8, 8
	}
}

func qxLanes(x, ws, wx []float32, nmax int, isc *[8]float32, lf *[32][8]float32, out *[2][8]float32) {
	if useAVX2 {
		n := len(x)
		qxLanesAVX2(&x[0], &ws[:n][0], &wx[:n][0], n, isc, nmax, lf, out)
		return
	}
	qxLanesGo(x, ws, wx, nmax, isc, lf, out)
}

func qkxLanes(xm, x, ws []float32, nmax int, isc *[8]float32, lf *[32][8]float32, out *[3][8]float32) {
	if useAVX2 {
		n := len(xm)
		qkxLanesAVX2(&xm[0], &x[:n][0], &ws[:n][0], n, isc, nmax, lf, out)
		return
	}
	qkxLanesGo(xm, x, ws, nmax, isc, lf, out)
}

func qkxMads(x, ws []float32, sc, mn *[8]float32, lf *[32][8]float32, useMad bool, out *[8]float32) {
	if useAVX2 {
		n := len(x)
		qkxMadsAVX2(&x[0], &ws[:n][0], n, sc, mn, lf, useMad, out)
		return
	}
	qkxMadsGo(x, ws, sc, mn, lf, useMad, out)
}
