package quant

// Lane kernels of the candidate-scale searches in makeQxQuants (qxLanes)
// and makeQkxQuants (qkxPass: levels, sums, fit and error of each step). A
// lane is one candidate scale; lane k of lf[i] holds the level of value i
// at that scale. The search loops evaluate qxWidth (or qkxWidth)
// candidates per call, then compare them in ggml's order. The Go kernels
// below run three (two) lanes, which keeps the float units busy without
// spilling; the amd64 assembly runs eight, one per AVX lane. Every lane
// adds its terms in index order with separately rounded products, as
// ggml's scalar loops do, so all kernels produce the same floats.

// qxWidth and qkxWidth are the lanes per kernel call (8 with AVX2).
var qxWidth, qkxWidth = 3, 2

// levelOf is ggml's MAX(lo, MIN(hi, nearest_int(v))) as a float, for
// integer bounds within +-2^22. Adding and subtracting 1.5*2^23 rounds v to
// the nearest integer (ties to even, as nearest_int) while staying in the
// float unit; a result outside [lo, hi] (clamped, huge, infinite or NaN)
// takes the integer path, which reproduces nearest_int's bit trick exactly.
func levelOf(v, lo, hi float32) float32 {
	r := float32(float32(v)+12582912) - 12582912 // float32(v): a caller's v = x*y must not fuse
	if r >= lo && r <= hi {
		return r
	}
	return float32(max(int32(lo), min(int32(hi), nearestInt(v))))
}

// qxLanesGo is make_qx_quants' inner loop for lanes 0..2: at iscale =
// -(nmax + 0.1*cand[k])/max, levels clamp(nearest(iscale*x[i]), -nmax,
// nmax-1) into lf, out[0][k] the sum of wx[i]*l and out[1][k] the sum of
// (ws[i]*l)*l.
func qxLanesGo(x, ws, wx []float32, nmax int, cand *[8]int32, max float32, lf *[32][8]float32, out *[2][8]float32) {
	n := len(x)
	ws, wx, lv := ws[:n], wx[:n], lf[:n]
	fnmax := float32(nmax)
	lo, hi := -fnmax, fnmax-1
	var isc [3]float32
	for k := range isc {
		isc[k] = -(fnmax + float32(0.1*float32(cand[k]))) / max
	}
	is0, is1, is2 := isc[0], isc[1], isc[2]
	var lx0, lx1, lx2, l20, l21, l22 float32
	for i, v := range x {
		l0, l1, l2 := levelOf(is0*v, lo, hi), levelOf(is1*v, lo, hi), levelOf(is2*v, lo, hi)
		lv[i][0], lv[i][1], lv[i][2] = l0, l1, l2
		w, c := ws[i], wx[i]
		lx0 += float32(c * l0)
		lx1 += float32(c * l1)
		lx2 += float32(c * l2)
		l20 += float32(float32(w*l0) * l0)
		l21 += float32(float32(w*l1) * l1)
		l22 += float32(float32(w*l2) * l2)
	}
	out[0][0], out[0][1], out[0][2] = lx0, lx1, lx2
	out[1][0], out[1][1], out[1][2] = l20, l21, l22
}

// qkxPassGo is one pass of make_qkx2_quants' search over qkxWidth steps
// from is (see makeQkxQuants): out[0][k] the weighted error of step is+k
// at its fitted scale out[1][k] and min out[2][k], out[3][k] nonzero when
// the fit exists (ggml's D > 0).
func qkxPassGo(xm, x, ws []float32, nmax, is int, rmin, rdelta, span, sumW, sumX float32, useMad bool, lf *[32][8]float32, out *[4][8]float32) {
	fnmax := float32(nmax)
	var isc [8]float32
	for k := range qkxWidth {
		isc[k] = (rmin + float32(rdelta*float32(is+k)) + fnmax) / span
	}
	var sums [3][8]float32
	qkxLanesGo(xm, x, ws, nmax, &isc, lf, &sums)
	for k := range qkxWidth {
		var ok bool
		out[1][k], out[2][k], ok = qkxFit(sumW, sumX, sums[0][k], sums[1][k], sums[2][k])
		if ok {
			out[3][k] = 1
		}
	}
	qkxMadsGo(x, ws, &out[1], &out[2], lf, useMad, &out[0])
}

// qkxLanesGo is make_qkx2_quants' inner loop for lanes 0 and 1: levels
// clamp(nearest(isc[k]*xm[i]), 0, nmax) into lf and, with wl = ws[i]*l,
// out[0][k] the sum of wl, out[1][k] of wl*l and out[2][k] of wl*x[i].
func qkxLanesGo(xm, x, ws []float32, nmax int, isc *[8]float32, lf *[32][8]float32, out *[3][8]float32) {
	n := len(xm)
	x, ws, lv := x[:n], ws[:n], lf[:n]
	fnmax := float32(nmax)
	is0, is1 := isc[0], isc[1]
	var sL0, sL20, sXL0, sL1, sL21, sXL1 float32
	for i, v := range xm {
		fl0, fl1 := levelOf(is0*v, 0, fnmax), levelOf(is1*v, 0, fnmax)
		lv[i][0], lv[i][1] = fl0, fl1
		w := ws[i]
		wl0, wl1 := float32(w*fl0), float32(w*fl1)
		sL0 += wl0
		sL1 += wl1
		sL20 += float32(wl0 * fl0)
		sL21 += float32(wl1 * fl1)
		sXL0 += float32(wl0 * x[i])
		sXL1 += float32(wl1 * x[i])
	}
	out[0][0], out[1][0], out[2][0] = sL0, sL20, sXL0
	out[0][1], out[1][1], out[2][1] = sL1, sL21, sXL1
}

// qkxMadsGo returns in out[k], for lanes 0 and 1, the weighted error
// (absolute with useMad, else squared) of the lane's levels at scale sc[k]
// and min mn[k].
func qkxMadsGo(x, ws []float32, sc, mn *[8]float32, lf *[32][8]float32, useMad bool, out *[8]float32) {
	n := len(x)
	ws, lv := ws[:n], lf[:n]
	s0, m0, s1, m1 := sc[0], mn[0], sc[1], mn[1]
	var mad0, mad1 float32
	if useMad {
		for i, v := range x {
			mad0 += float32(ws[i] * abs32(float32(s0*lv[i][0])+m0-v))
			mad1 += float32(ws[i] * abs32(float32(s1*lv[i][1])+m1-v))
		}
	} else {
		for i, v := range x {
			d0 := float32(s0*lv[i][0]) + m0 - v
			d1 := float32(s1*lv[i][1]) + m1 - v
			mad0 += float32(ws[i] * float32(d0*d0))
			mad1 += float32(ws[i] * float32(d1*d1))
		}
	}
	out[0], out[1] = mad0, mad1
}

// requantizeGo is the K-quants' last step, the levels from the stored
// scales: for each sub-block s of sub values whose d[s] is not 0, L =
// MAX(lo, MIN(hi, nearest_int((x + add[s])/d[s]))) + off; the others keep
// their levels. (The types without a min pass add 0: x+0 differs from x
// only for -0, whose level is 0 either way.)
func requantizeGo(x []float32, sub int, d, add []float32, lo, hi, off int32, L []uint8) {
	for s, ds := range d {
		if ds == 0 {
			continue
		}
		a := add[s]
		for i := s * sub; i < (s+1)*sub; i++ {
			L[i] = uint8(max(lo, min(hi, nearestInt((x[i]+a)/ds))) + off)
		}
	}
}
