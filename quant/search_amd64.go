//go:build amd64 && !purego

package quant

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly lane kernels of the scale searches. They
// use AVX2 integer and float instructions only (no FMA: ggml-base has
// none), so each lane computes exactly what the Go kernels compute.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func qxLanesAVX2(x, ws, wx *float32, n int, cand *[8]int32, max float32, nmax int, lf *[32][8]float32, out *[2][8]float32)

//go:noescape
func qkxPassAVX2(xm, x, ws *float32, n int, nmax int, is int, rmin, rdelta, fnmax, span, sumW, sumX float32, useMad bool, lf *[32][8]float32, out *[4][8]float32)

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

// qxLanes is qxLanesGo over eight lanes with AVX2.
func qxLanes(x, ws, wx []float32, nmax int, cand *[8]int32, max float32, lf *[32][8]float32, out *[2][8]float32) {
	if useAVX2 {
		n := len(x)
		qxLanesAVX2(&x[0], &ws[:n][0], &wx[:n][0], n, cand, max, nmax, lf, out)
		return
	}
	qxLanesGo(x, ws, wx, nmax, cand, max, lf, out)
}

// qkxPass is qkxPassGo over eight steps with AVX2.
func qkxPass(xm, x, ws []float32, nmax, is int, rmin, rdelta, span, sumW, sumX float32, useMad bool, lf *[32][8]float32, out *[4][8]float32) {
	if useAVX2 {
		n := len(xm)
		qkxPassAVX2(&xm[0], &x[:n][0], &ws[:n][0], n, nmax, is, rmin, rdelta, float32(nmax), span, sumW, sumX, useMad, lf, out)
		return
	}
	qkxPassGo(xm, x, ws, nmax, is, rmin, rdelta, span, sumW, sumX, useMad, lf, out)
}
