package quant

import (
	"math"
)

// K-quants: 256-element super-blocks with 6- or 8-bit sub-block scales.
//
// The search helpers below are ggml's make_*_quants transcribed operation by
// operation. Every product that feeds an addition is wrapped in float32(...):
// ggml-base is compiled without FMA contraction, and the explicit conversion
// keeps Go from fusing on architectures where it otherwise may (arm64).

const qkK = 256

// groupMaxEps is ggml's GROUP_MAX_EPS: a group whose largest magnitude is
// below it is treated as all zero.
const groupMaxEps = float32(1e-15)

// makeQxQuants is ggml's make_qx_quants with rmse_type 1 (the only one its
// quantizers use): a symmetric scale for n values with levels -nmax..nmax-1
// (stored in L offset by nmax), refined by a weighted least-squares search
// over 18 candidate scales. The weights are qw, or x^2 when qw is nil.
//
// The candidates do not depend on each other, so several are evaluated per
// pass by the lane kernels (search.go), then compared in ggml's order.
func makeQxQuants(n, nmax int, x []float32, L []int8, qw []float32) float32 {
	x, L = x[:n], L[:n]
	amax, max := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	// The weights and the products w*x, computed once (n is at most 32 in
	// ggml's callers); ggml's w*x[i]*l rounds w*x[i] first.
	var wbuf, wxbuf [32]float32
	ws, wx := wbuf[:n], wxbuf[:n]
	for i, v := range x {
		w := v * v
		if qw != nil {
			w = qw[i]
		}
		ws[i], wx[i] = w, float32(w*v)
	}
	// ggml's first fit at iscale -nmax/max (candidate 0: -(nmax+0.1*0)/max
	// is the same float), then 18 candidates, qxWidth per kernel call,
	// compared in ggml's order.
	const ncand = 19
	cands := [ncand + 7]int32{0, -9, -8, -7, -6, -5, -4, -3, -2, -1, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	var lf [32][8]float32
	var scale, best float32
	for c0 := 0; c0 < ncand; c0 += qxWidth {
		var sums [2][8]float32
		qxLanes(x, ws, wx, nmax, (*[8]int32)(cands[c0:]), max, &lf, &sums)
		for k := range min(qxWidth, ncand-c0) {
			sumlx, suml2 := sums[0][k], sums[1][k]
			if c0+k == 0 {
				for i := range L {
					L[i] = int8(int(lf[i][0]) + nmax)
				}
				if suml2 != 0 {
					scale = sumlx / suml2
				}
				best = scale * sumlx
				continue
			}
			if suml2 > 0 && sumlx*sumlx > best*suml2 {
				for i := range L {
					L[i] = int8(int(lf[i][k]) + nmax)
				}
				scale = sumlx / suml2
				best = scale * sumlx
			}
		}
	}
	return scale
}

// sum32 adds up v in order, in float32.
func sum32(v []float32) float32 {
	var s float32
	for _, x := range v {
		s += x
	}
	return s
}

func clampInt(v, lo, hi int) int { return max(lo, min(hi, v)) }

// makeQ3Quants is ggml's make_q3_quants for its caller's n = 16 (Q3_K's
// reference search): weights x^2 and up to five rounds of coordinate
// descent on the levels. The weights, the products w*x (ggml's w*x[i]*l
// rounds w*x[i] first) and the levels are kept as floats, so that each step
// is float arithmetic only.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	x, L = x[:16], L[:16]
	amax, max := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	fnmax := float32(nmax)
	lo, hi := -fnmax, fnmax-1
	iscale := -fnmax / max
	var w, wx, lf [16]float32
	var sumlx, suml2 float32
	for i, v := range x {
		l := levelOf(iscale*v, lo, hi)
		lf[i] = l
		w[i] = v * v
		wx[i] = w[i] * v
		sumlx += float32(wx[i] * l)
		suml2 += float32(float32(w[i]*l) * l)
	}
	for itry := 0; itry < 5; itry++ {
		nChanged := 0
		for i, v := range x {
			li := lf[i]
			slx := sumlx - float32(wx[i]*li)
			if slx > 0 {
				sl2 := suml2 - float32(float32(w[i]*li)*li)
				newL := levelOf(v*sl2/slx, lo, hi)
				if newL != li {
					slx += float32(wx[i] * newL)
					sl2 += float32(float32(w[i]*newL) * newL)
					if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
						lf[i] = newL
						sumlx, suml2 = slx, sl2
						nChanged++
					}
				}
			}
		}
		if nChanged == 0 {
			break
		}
	}
	for i, l := range lf {
		L[i] = int8(int(l) + nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

func max32i(a, b int32) int32 { return max(a, b) }
func min32i(a, b int32) int32 { return min(a, b) }

// makeQkxQuants is ggml's make_qkx2_quants and make_qkx3_quants: an
// asymmetric (scale, min) fit for levels 0..nmax, searching nstep+1
// candidate scales, weighted by weights (nil means x^2, which only the
// make_qkx3_quants form allows). The two C functions differ only in that
// default and in testing max == min versus max <= min, which agree for every
// input (max < min cannot happen). It returns the scale and the negated
// min, as ggml stores it.
//
// The candidate scales are independent until the comparison of their
// errors, so the lane kernels (search.go) evaluate several per pass; the
// comparisons then run in ggml's order.
func makeQkxQuants(n, nmax int, x, weights []float32, L []uint8, rmin, rdelta float32, nstep int, useMad bool) (scale, theMin float32) {
	x, L = x[:n], L[:n]
	// nil weights mean x^2; computed once (n is at most 32 in ggml's callers).
	var wbuf [32]float32
	ws := weights
	if ws != nil {
		ws = ws[:n]
	} else {
		ws = wbuf[:n]
		for i := range ws {
			ws[i] = x[i] * x[i]
		}
	}
	min, max := x[0], x[0]
	sumW := ws[0]
	sumX := sumW * x[0]
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		w := ws[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if min > 0 {
		min = 0
	}
	if max <= min {
		for i := 0; i < n; i++ {
			L[i] = 0
		}
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	// x[i]-min is the same float subtraction at every candidate scale.
	var xmBuf [32]float32
	xm := xmBuf[:n]
	for i := range xm {
		xm[i] = x[i] - min
	}
	var bestMad float32
	for i := 0; i < n; i++ {
		l := nearestInt(iscale * xm[i])
		L[i] = uint8(max32i(0, min32i(int32(nmax), l)))
		diff := float32(scale*float32(L[i])) + min - x[i]
		if useMad {
			diff = abs32(diff)
		} else {
			diff *= diff
		}
		bestMad += float32(ws[i] * diff)
	}
	if nstep < 1 {
		return scale, -min
	}
	var lf [32][8]float32
	for is := 0; is <= nstep; {
		// Steps is..is+nl-1 at the current min. ggml moves min to the
		// winner's min, which changes the following steps' levels: they
		// are only kept while no selected step has moved it.
		nl := qkxWidth // min is shadowed here
		if nstep-is+1 < nl {
			nl = nstep - is + 1
		}
		var r [4][8]float32
		qkxPass(xm, x, ws, nmax, is, rmin, rdelta, max-min, sumW, sumX, useMad, &lf, &r)
		next := is + nl
		for k := range nl {
			if math.Float32bits(r[3][k]) == 0 || !(r[0][k] < bestMad) {
				continue
			}
			for i := range L {
				L[i] = uint8(lf[i][k])
			}
			bestMad, scale = r[0][k], r[1][k]
			moved := r[2][k] != min
			min = r[2][k]
			if moved {
				for i := range xm {
					xm[i] = x[i] - min
				}
				next = is + k + 1
				break
			}
		}
		is = next
	}
	return scale, -min
}

// qkxFit is the least-squares scale and min of one make_qkx2_quants
// candidate from its sums; ok is ggml's D > 0.
func qkxFit(sumW, sumX, sumL, sumL2, sumXL float32) (scale, min float32, ok bool) {
	D := float32(sumW*sumL2) - float32(sumL*sumL)
	if !(D > 0) {
		return 0, 0, false
	}
	scale = (float32(sumW*sumXL) - float32(sumX*sumL)) / D
	min = (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
	if min > 0 {
		min = 0
		scale = sumXL / sumL2
	}
	return scale, min, true
}

// makeQpQuants is ggml's make_qp_quants: a scale for non-negative values
// (sub-block scales and mins) with levels 0..nmax, weighted by qw. L is
// uint8 as in ggml, so its wrap-around on odd inputs is reproduced too.
func makeQpQuants(n, nmax int, x []float32, L []uint8, qw []float32) float32 {
	var max float32
	for i := 0; i < n; i++ {
		max = maxC(max, x[i])
	}
	if max < groupMaxEps {
		for i := 0; i < n; i++ {
			L[i] = 0
		}
		return 0
	}
	fnmax := float32(nmax)
	iscale := fnmax / max
	for i := 0; i < n; i++ {
		L[i] = uint8(nearestInt(iscale * x[i]))
	}
	scale := 1 / iscale
	var bestMse float32
	for i := 0; i < n; i++ {
		diff := x[i] - float32(scale*float32(L[i]))
		bestMse += float32(qw[i] * diff * diff)
	}
	for is := -4; is <= 4; is++ {
		if is == 0 {
			continue
		}
		iscaleIs := (float32(0.1*float32(is)) + fnmax) / max
		scaleIs := 1 / iscaleIs
		var mse float32
		for i := 0; i < n; i++ {
			l := min(int32(nmax), nearestInt(iscaleIs*x[i]))
			diff := x[i] - float32(scaleIs*float32(l))
			mse += float32(qw[i] * diff * diff)
		}
		if mse < bestMse {
			bestMse = mse
			iscale = iscaleIs
		}
	}
	var sumlx, suml2 float32
	for i := 0; i < n; i++ {
		l := min(int32(nmax), nearestInt(iscale*x[i]))
		L[i] = uint8(l)
		w := qw[i]
		fl := float32(l)
		sumlx += float32(w * x[i] * fl)
		suml2 += float32(w * fl * fl)
	}
	for itry := 0; itry < 5; itry++ {
		nChanged := 0
		for i := 0; i < n; i++ {
			w := qw[i]
			li := float32(L[i])
			slx := sumlx - float32(w*x[i]*li)
			sl2 := suml2 - float32(w*li*li)
			if slx > 0 && sl2 > 0 {
				newL := min(int32(nmax), nearestInt(x[i]*sl2/slx))
				if newL != int32(L[i]) {
					fl := float32(newL)
					slx += float32(w * x[i] * fl)
					sl2 += float32(w * fl * fl)
					if slx*slx*suml2 > sumlx*sumlx*sl2 {
						L[i] = uint8(newL)
						sumlx, suml2 = slx, sl2
						nChanged++
					}
				}
			}
		}
		if nChanged == 0 {
			break
		}
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// getScaleMinK4 unpacks the j-th 6-bit scale and min of a Q4_K/Q5_K block.
func getScaleMinK4(j int, q []byte) (d, m uint8) {
	if j < 4 {
		return q[j] & 63, q[j+4] & 63
	}
	return q[j+4]&0xf | (q[j-4]>>6)<<4, q[j+4]>>4 | (q[j]>>6)<<4
}

// packK4Scales stores 8 six-bit scales and mins in the 12-byte Q4_K/Q5_K
// layout.
func packK4Scales(s []byte, ls, lm *[8]uint8) {
	for j := 0; j < 8; j++ {
		if j < 4 {
			s[j] = ls[j]
			s[j+4] = lm[j]
		} else {
			s[j+4] = ls[j]&0xf | (lm[j]&0xf)<<4
			s[j-4] |= (ls[j] >> 4) << 6
			s[j] |= (lm[j] >> 4) << 6
		}
	}
}

// pack2bit stores 256 2-bit levels as Q2_K/Q3_K do: byte l of each 32-byte
// group holds elements l, l+32, l+64, l+96 of a 128-element half.
func pack2bit(qs []byte, L []uint8) {
	for j := 0; j < qkK; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// Q2_K: scales@0 (16: 4-bit scale | 4-bit min), qs@16 (64), d@80, dmin@82.

func quantizeQ2KRef(y []byte, x []float32) {
	var L [qkK]uint8
	var weights, mins, scales [16]float32
	const q4scale = float32(15)
	for len(x) > 0 {
		b := y[:84]
		var maxScale, maxMin float32
		for j := 0; j < 16; j++ {
			for l := 0; l < 16; l++ {
				weights[l] = abs32(x[16*j+l])
			}
			scales[j], mins[j] = makeQkxQuants(16, 3, x[16*j:], weights[:], L[16*j:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		if maxScale > 0 {
			iscale := q4scale / maxScale
			for j := 0; j < 16; j++ {
				b[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(b[80:], maxScale/q4scale)
		} else {
			for j := 0; j < 16; j++ {
				b[j] = 0
			}
			putF16(b[80:], 0)
		}
		if maxMin > 0 {
			iscale := q4scale / maxMin
			for j := 0; j < 16; j++ {
				b[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(b[82:], maxMin/q4scale)
		} else {
			putF16(b[82:], 0)
		}
		requantizeQ2K(b, x, L[:])
		pack2bit(b[16:], L[:])
		y, x = y[84:], x[qkK:]
	}
}

// requantizeQ2K recomputes the levels from the stored (rounded) scales.
func requantizeQ2K(b []byte, x []float32, L []uint8) {
	dAll, mAll := getF16(b[80:]), getF16(b[82:])
	var d, dm [16]float32
	for j := range d {
		d[j] = dAll * float32(b[j]&0xf)
		dm[j] = mAll * float32(b[j]>>4)
	}
	requantize(x[:qkK], 16, d[:], dm[:], 0, 3, 0, L)
}

func quantizeQ2KImat(y []byte, x, qw []float32) {
	var L [qkK]uint8
	var mins, scales, sw, weight [16]float32
	var Ls, Lm [16]uint8
	for len(x) > 0 {
		b := y[:84]
		sigma2 := superSigma2(x, 1)
		for j := 0; j < 16; j++ {
			iqWeights(weight[:], x[16*j:], qw[16*j:], sigma2)
			sw[j] = sum32(weight[:])
			scales[j], mins[j] = makeQkxQuants(16, 3, x[16*j:], weight[:], L[16*j:], -0.9, 0.05, 36, false)
		}
		dm := makeQpQuants(16, 15, scales[:], Ls[:], sw[:])
		mm := makeQpQuants(16, 15, mins[:], Lm[:], sw[:])
		putF16(b[80:], dm)
		putF16(b[82:], mm)
		for j := 0; j < 16; j++ {
			b[j] = Ls[j] | Lm[j]<<4
		}
		requantizeQ2K(b, x, L[:])
		pack2bit(b[16:], L[:])
		y, x, qw = y[84:], x[qkK:], qw[qkK:]
	}
}

func dequantizeQ2K(y []float32, x []byte) {
	for len(x) > 0 {
		d, min := getF16(x[80:]), getF16(x[82:])
		q := x[16:80]
		is := 0
		for n := 0; n < qkK; n += 128 {
			shift := 0
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					sc := x[is]
					is++
					dl, ml := float32(d*float32(sc&0xf)), float32(min*float32(sc>>4))
					for l := 0; l < 16; l++ {
						y[l] = float32(dl*float32((q[l+16*half]>>shift)&3)) - ml
					}
					y = y[16:]
				}
				shift += 2
			}
			q = q[32:]
		}
		x = x[84:]
	}
}

// Q3_K: hmask@0 (32), qs@32 (64), scales@96 (12: 16 six-bit signed scales),
// d@108.

func packQ3KScale(s []byte, j int, l int) {
	if j < 8 {
		s[j] = uint8(l & 0xf)
	} else {
		s[j-8] |= uint8((l & 0xf) << 4)
	}
	l >>= 4
	s[j%4+8] |= uint8(l << (2 * (j / 4)))
}

func q3KScale(s []byte, j int) int8 {
	var sc int8
	if j < 8 {
		sc = int8(s[j] & 0xf)
	} else {
		sc = int8(s[j-8] >> 4)
	}
	return (sc | int8(((s[8+j%4]>>(2*(j/4)))&3)<<4)) - 32
}

func quantizeQ3KRef(y []byte, x []float32) {
	var L [qkK]int8
	var scales [16]float32
	for len(x) > 0 {
		b := y[:110]
		var maxScale, amax float32
		for h := 0; h < 2; h++ {
			if !q3Lanes(x[128*h:], L[128*h:], scales[8*h:]) {
				for j := 8 * h; j < 8*h+8; j++ {
					scales[j] = makeQ3Quants(4, x[16*j:], L[16*j:])
				}
			}
		}
		for j := 0; j < 16; j++ {
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		s := b[96:108]
		for j := range s {
			s[j] = 0
		}
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := 0; j < 16; j++ {
				l := int8(nearestInt(iscale * scales[j]))
				packQ3KScale(s, j, clampInt(int(l), -32, 31)+32)
			}
			putF16(b[108:], 1/iscale)
		} else {
			putF16(b[108:], 0)
		}
		finishQ3K(b, x, L[:])
		y, x = y[110:], x[qkK:]
	}
}

// finishQ3K requantizes with the stored scales and packs hmask and qs.
func finishQ3K(b []byte, x []float32, L []int8) {
	s := b[96:108]
	dAll := getF16(b[108:])
	var d, zero [16]float32
	for j := range d {
		d[j] = dAll * float32(q3KScale(s, j))
	}
	var Lu [qkK]uint8 // the levels kept where d is 0, then the new ones
	for i, l := range L[:qkK] {
		Lu[i] = uint8(l)
	}
	requantize(x[:qkK], 16, d[:], zero[:], -4, 3, 4, Lu[:])
	// Levels 0..7: bit 2 of element j goes to bit j/32 of hmask[j%32] (ggml
	// tests L > 3 and subtracts 4), the low two bits to qs.
	hmask := b[:32:32]
	for m := range hmask {
		var h uint8
		for k := range 8 {
			h |= Lu[m+32*k] >> 2 & 1 << k
		}
		hmask[m] = h
	}
	var U [qkK]uint8
	for j, l := range Lu {
		U[j] = l & 3
	}
	pack2bit(b[32:], U[:])
}

func quantizeQ3KImat(y []byte, x, qw []float32) {
	var L [qkK]int8
	var scales, weight, sw [16]float32
	var Ls [16]int8
	for len(x) > 0 {
		b := y[:110]
		sigma2 := superSigma2(x, 2)
		for j := 0; j < 16; j++ {
			iqWeights(weight[:], x[16*j:], qw[16*j:], sigma2)
			sw[j] = sum32(weight[:])
			scales[j] = makeQxQuants(16, 4, x[16*j:], L[16*j:], weight[:])
		}
		s := b[96:108]
		for j := range s {
			s[j] = 0
		}
		dBlock := makeQxQuants(16, 32, scales[:], Ls[:], sw[:])
		for j := 0; j < 16; j++ {
			packQ3KScale(s, j, int(Ls[j]))
		}
		putF16(b[108:], dBlock)
		finishQ3K(b, x, L[:])
		y, x, qw = y[110:], x[qkK:], qw[qkK:]
	}
}

func dequantizeQ3K(y []float32, x []byte) {
	const kmask1, kmask2 = 0x03030303, 0x0f0f0f0f
	for len(x) > 0 {
		dAll := getF16(x[108:])
		var aux [4]uint32
		aux[0], aux[1], aux[2] = le.Uint32(x[96:]), le.Uint32(x[100:]), le.Uint32(x[104:])
		tmp := aux[2]
		aux[2] = (aux[0]>>4)&kmask2 | ((tmp>>4)&kmask1)<<4
		aux[3] = (aux[1]>>4)&kmask2 | ((tmp>>6)&kmask1)<<4
		aux[0] = aux[0]&kmask2 | (tmp&kmask1)<<4
		aux[1] = aux[1]&kmask2 | ((tmp>>2)&kmask1)<<4
		var scales [16]int8
		for i := range scales {
			scales[i] = int8(aux[i/4] >> (8 * (i % 4)))
		}
		q, hm := x[32:96], x[:32]
		m := uint8(1)
		is := 0
		for n := 0; n < qkK; n += 128 {
			shift := 0
			for j := 0; j < 4; j++ {
				for half := 0; half < 2; half++ {
					dl := dAll * float32(int(scales[is])-32)
					is++
					for l := 0; l < 16; l++ {
						v := int((q[l+16*half] >> shift) & 3)
						if hm[l+16*half]&m == 0 {
							v -= 4
						}
						y[l] = dl * float32(v)
					}
					y = y[16:]
				}
				shift += 2
				m <<= 1
			}
			q = q[32:]
		}
		x = x[110:]
	}
}

// Q4_K: d@0, dmin@2, scales@4 (12), qs@16 (128). Q5_K: the same header, then
// qh@16 (32) and qs@48 (128).

// kScalesRef turns the per-sub-block fits into 6-bit codes as the reference
// Q4_K/Q5_K quantizers do (one max-based scale each for scales and mins).
func kScalesRef(b []byte, scales, mins *[8]float32, maxScale, maxMin float32) {
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	var ls, lm [8]uint8
	for j := 0; j < 8; j++ {
		ls[j] = min(63, uint8(nearestInt(invScale*scales[j])))
		lm[j] = min(63, uint8(nearestInt(invMin*mins[j])))
	}
	packK4Scales(b[4:16], &ls, &lm)
	putF16(b, maxScale/63)
	putF16(b[2:], maxMin/63)
}

// requantizeK4 recomputes levels 0..nmax from the stored Q4_K/Q5_K scales.
func requantizeK4(b []byte, x []float32, L []uint8, nmax int32) {
	dAll, mAll := getF16(b), getF16(b[2:])
	var d, dm [8]float32
	for j := range d {
		sc, m := getScaleMinK4(j, b[4:16])
		d[j] = dAll * float32(sc)
		dm[j] = mAll * float32(m)
	}
	requantize(x[:qkK], 32, d[:], dm[:], 0, nmax, 0, L)
}

// refWeightsK4 fills the reference K4/K5 weights av_x + |x| of one 32-group.
func refWeightsK4(weights []float32, xg []float32) {
	var sumx2 float32
	for l := 0; l < 32; l++ {
		sumx2 += float32(xg[l] * xg[l])
	}
	avx := sqrtf(sumx2 / 32)
	for l := 0; l < 32; l++ {
		weights[l] = avx + abs32(xg[l])
	}
}

// kRefFits is the part of the Q4_K and Q5_K reference quantizers before
// packing: a (scale, min) fit per 32-group, their 6-bit codes, and the levels
// 0..nmax recomputed from the stored scales.
func kRefFits(b []byte, x []float32, L []uint8, nmax int, rmin float32, nstep int) {
	var weights [32]float32
	var mins, scales [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		refWeightsK4(weights[:], x[32*j:])
		scales[j], mins[j] = makeQkxQuants(32, nmax, x[32*j:], weights[:], L[32*j:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	kScalesRef(b, &scales, &mins, maxScale, maxMin)
	requantizeK4(b, x, L, int32(nmax))
}

func quantizeQ4KRef(y []byte, x []float32) {
	var L [qkK]uint8
	for len(x) > 0 {
		kRefFits(y[:144], x, L[:], 15, -1, 20)
		packQ4K(y[16:144], L[:])
		y, x = y[144:], x[qkK:]
	}
}

func packQ4K(q []byte, L []uint8) {
	for j := 0; j < qkK; j += 64 {
		for l := 0; l < 32; l++ {
			q[l] = L[j+l] | L[j+l+32]<<4
		}
		q = q[32:]
	}
}

// kImatFits runs the weighted Q4_K/Q5_K sub-block fits and the scale-of-
// scales search (make_qp_quants over the 8 scales and 8 mins), then packs
// the codes. capCodes applies Q5_K's MIN(63, ...) that Q4_K lacks.
func kImatFits(b []byte, x, qw []float32, L []uint8, nmax int, capCodes bool) {
	var weights [32]float32
	var mins, scales, sw [8]float32
	var ls, lm [8]uint8
	sigma2 := superSigma2(x, 2)
	for j := 0; j < 8; j++ {
		iqWeights(weights[:], x[32*j:], qw[32*j:], sigma2)
		sw[j] = sum32(weights[:])
		scales[j], mins[j] = makeQkxQuants(32, nmax, x[32*j:], weights[:], L[32*j:], -0.9, 0.05, 36, false)
	}
	dBlock := makeQpQuants(8, 63, scales[:], ls[:], sw[:])
	mBlock := makeQpQuants(8, 63, mins[:], lm[:], sw[:])
	if capCodes {
		for j := range ls {
			ls[j], lm[j] = min(63, ls[j]), min(63, lm[j])
		}
	}
	packK4Scales(b[4:16], &ls, &lm)
	putF16(b, dBlock)
	putF16(b[2:], mBlock)
}

func quantizeQ4KImat(y []byte, x, qw []float32) {
	var L [qkK]uint8
	for len(x) > 0 {
		b := y[:144]
		kImatFits(b, x, qw, L[:], 15, false)
		requantizeK4(b, x, L[:], 15)
		packQ4K(b[16:144], L[:])
		y, x, qw = y[144:], x[qkK:], qw[qkK:]
	}
}

func dequantizeQ4K(y []float32, x []byte) {
	for len(x) > 0 {
		d, min := getF16(x), getF16(x[2:])
		q := x[16:144]
		is := 0
		for j := 0; j < qkK; j += 64 {
			sc, m := getScaleMinK4(is, x[4:16])
			d1, m1 := float32(d*float32(sc)), float32(min*float32(m))
			sc, m = getScaleMinK4(is+1, x[4:16])
			d2, m2 := float32(d*float32(sc)), float32(min*float32(m))
			for l := 0; l < 32; l++ {
				y[l] = float32(d1*float32(q[l]&0xf)) - m1
				y[l+32] = float32(d2*float32(q[l]>>4)) - m2
			}
			y, q = y[64:], q[32:]
			is += 2
		}
		x = x[144:]
	}
}

func quantizeQ5KRef(y []byte, x []float32) {
	var L [qkK]uint8
	for len(x) > 0 {
		kRefFits(y[:176], x, L[:], 31, -0.5, 15)
		packQ5K(y[:176], L[:])
		y, x = y[176:], x[qkK:]
	}
}

func packQ5K(b []byte, L []uint8) {
	qh, ql := b[16:48], b[48:176]
	for j := range qh {
		qh[j] = 0
	}
	m1, m2 := uint8(1), uint8(2)
	for n := 0; n < qkK; n += 64 {
		for j := 0; j < 32; j++ {
			l1, l2 := L[n+j], L[n+j+32]
			if l1 > 15 {
				l1 -= 16
				qh[j] |= m1
			}
			if l2 > 15 {
				l2 -= 16
				qh[j] |= m2
			}
			ql[j] = l1 | l2<<4
		}
		m1, m2 = m1<<2, m2<<2
		ql = ql[32:]
	}
}

func quantizeQ5KImat(y []byte, x, qw []float32) {
	var L [qkK]uint8
	for len(x) > 0 {
		b := y[:176]
		kImatFits(b, x, qw, L[:], 31, true)
		requantizeK4(b, x, L[:], 31)
		packQ5K(b, L[:])
		y, x, qw = y[176:], x[qkK:], qw[qkK:]
	}
}

func dequantizeQ5K(y []float32, x []byte) {
	for len(x) > 0 {
		d, min := getF16(x), getF16(x[2:])
		ql, qh := x[48:176], x[16:48]
		is := 0
		u1, u2 := uint8(1), uint8(2)
		for j := 0; j < qkK; j += 64 {
			sc, m := getScaleMinK4(is, x[4:16])
			d1, m1 := float32(d*float32(sc)), float32(min*float32(m))
			sc, m = getScaleMinK4(is+1, x[4:16])
			d2, m2 := float32(d*float32(sc)), float32(min*float32(m))
			for l := 0; l < 32; l++ {
				v1, v2 := int(ql[l]&0xf), int(ql[l]>>4)
				if qh[l]&u1 != 0 {
					v1 += 16
				}
				if qh[l]&u2 != 0 {
					v2 += 16
				}
				y[l] = float32(d1*float32(v1)) - m1
				y[l+32] = float32(d2*float32(v2)) - m2
			}
			y, ql = y[64:], ql[32:]
			is += 2
			u1, u2 = u1<<2, u2<<2
		}
		x = x[176:]
	}
}

// Q6_K: ql@0 (128), qh@128 (64), scales@192 (16 int8), d@208.

func quantizeQ6K(y []byte, x, qw []float32) {
	var L [qkK]int8
	var scales [16]float32
	for len(x) > 0 {
		b := y[:210]
		var maxScale, maxAbsScale float32
		for ib := 0; ib < 16; ib++ {
			var q []float32
			if qw != nil {
				q = qw[16*ib:]
			}
			scale := makeQxQuants(16, 32, x[16*ib:], L[16*ib:], q)
			scales[ib] = scale
			if a := abs32(scale); a > maxAbsScale {
				maxAbsScale, maxScale = a, scale
			}
		}
		if maxAbsScale < groupMaxEps {
			for j := range b {
				b[j] = 0
			}
		} else {
			iscale := -128 / maxScale
			putF16(b[208:], 1/iscale)
			sc := b[192:208]
			for ib := 0; ib < 16; ib++ {
				sc[ib] = uint8(min(127, nearestInt(iscale*scales[ib])))
			}
			dAll := getF16(b[208:])
			var d, zero [16]float32
			for j := range d {
				d[j] = dAll * float32(int8(sc[j]))
			}
			var Lu [qkK]uint8 // the levels kept where d is 0, then the new ones
			for i, l := range L {
				Lu[i] = uint8(l)
			}
			requantize(x[:qkK], 16, d[:], zero[:], -32, 31, 32, Lu[:])
			for i, l := range Lu {
				L[i] = int8(l)
			}
			ql, qh := b[:128], b[128:192]
			for j := 0; j < qkK; j += 128 {
				for l := 0; l < 32; l++ {
					q1 := uint8(L[j+l]) & 0xf
					q2 := uint8(L[j+l+32]) & 0xf
					q3 := uint8(L[j+l+64]) & 0xf
					q4 := uint8(L[j+l+96]) & 0xf
					ql[l] = q1 | q3<<4
					ql[l+32] = q2 | q4<<4
					qh[l] = uint8(L[j+l])>>4 | (uint8(L[j+l+32])>>4)<<2 | (uint8(L[j+l+64])>>4)<<4 | (uint8(L[j+l+96])>>4)<<6
				}
				ql, qh = ql[64:], qh[32:]
			}
		}
		y, x = y[210:], x[qkK:]
		if qw != nil {
			qw = qw[qkK:]
		}
	}
}

func dequantizeQ6K(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x[208:])
		ql, qh, sc := x[:128], x[128:192], x[192:208]
		for n := 0; n < qkK; n += 128 {
			for l := 0; l < 32; l++ {
				is := l / 16
				q1 := int8(ql[l]&0xf|((qh[l]>>0)&3)<<4) - 32
				q2 := int8(ql[l+32]&0xf|((qh[l]>>2)&3)<<4) - 32
				q3 := int8(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32
				q4 := int8(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32
				y[l] = d * float32(int8(sc[is])) * float32(q1)
				y[l+32] = d * float32(int8(sc[is+2])) * float32(q2)
				y[l+64] = d * float32(int8(sc[is+4])) * float32(q3)
				y[l+96] = d * float32(int8(sc[is+6])) * float32(q4)
			}
			y, ql, qh, sc = y[128:], ql[64:], qh[32:], sc[8:]
		}
		x = x[210:]
	}
}

// Q8_K: d@0 (float32), qs@4 (256 int8), bsums@260 (16 int16).

func quantizeQ8KRef(y []byte, x []float32) {
	n := q8_KBlocks(y, x)
	y, x = y[292*n:], x[qkK*n:]
	for len(x) > 0 {
		b := y[:292]
		var max, amax float32
		for j := 0; j < qkK; j++ {
			if ax := abs32(x[j]); ax > amax {
				amax, max = ax, x[j]
			}
		}
		if amax == 0 {
			for j := range b {
				b[j] = 0
			}
		} else {
			iscale := -127 / max
			qs := b[4:260]
			for j := 0; j < qkK; j++ {
				qs[j] = uint8(min(127, nearestInt(iscale*x[j])))
			}
			for j := 0; j < 16; j++ {
				sum := 0
				for ii := 0; ii < 16; ii++ {
					sum += int(int8(qs[16*j+ii]))
				}
				le.PutUint16(b[260+2*j:], uint16(int16(sum)))
			}
			le.PutUint32(b, math.Float32bits(1/iscale))
		}
		y, x = y[292:], x[qkK:]
	}
}

func dequantizeQ8K(y []float32, x []byte) {
	for len(x) > 0 {
		d := math.Float32frombits(le.Uint32(x))
		for j := 0; j < qkK; j++ {
			y[j] = d * float32(int8(x[4+j]))
		}
		y, x = y[qkK:], x[292:]
	}
}
