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

//go:noescape
func q3LanesAVX2(xt *[16][8]float32, lf *[16][8]float32, out *[2][8]float32)

// q3Lanes runs makeQ3Quants (nmax 4) on the eight sub-blocks of 16 in x
// with AVX2, one per lane: their levels (offset by 4) into L and their
// scales into scales. ok is false without AVX2.
func q3Lanes(x []float32, L []int8, scales []float32) bool {
	if !useAVX2 {
		return false
	}
	x, L, scales = x[:128], L[:128], scales[:8]
	var xt, lf [16][8]float32
	for k := range 8 {
		for i := range 16 {
			xt[i][k] = x[16*k+i]
		}
	}
	var out [2][8]float32
	q3LanesAVX2(&xt, &lf, &out)
	for k := range 8 {
		if out[1][k] < groupMaxEps {
			clear(L[16*k : 16*k+16])
			scales[k] = 0
			continue
		}
		for i := range 16 {
			L[16*k+i] = int8(lf[i][k]) + 4
		}
		scales[k] = out[0][k]
	}
	return true
}

//go:noescape
func requantAVX2(x *float32, nsub, sub int, d, add *float32, lo, hi, off int, L *uint8)

// requantize is requantizeGo with AVX2 for sub-blocks of a multiple of 8.
func requantize(x []float32, sub int, d, add []float32, lo, hi, off int32, L []uint8) {
	n := len(d)
	if !useAVX2 || sub%8 != 0 || n == 0 {
		requantizeGo(x, sub, d, add, lo, hi, off, L)
		return
	}
	requantAVX2(&x[:n*sub][0], n, sub, &d[0], &add[:n][0], int(lo), int(hi), int(off), &L[:n*sub][0])
}
