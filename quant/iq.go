package quant

import (
	"errors"
	"math"
)

// The lattice ("i-quant") types IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S,
// IQ1_S and IQ1_M, transcribed from ggml-quants.c.

// errOffGrid is returned where ggml aborts: a level vector that is not on the
// grid after the neighbour search. It only happens for non-finite input
// (NaN distances defeat the search), which ggml cannot quantize either.
var errOffGrid = errors.New("quant: input has no nearest grid point (NaN or infinite values?)")

const (
	groupMaxEpsIQ3XXS = float32(1e-8)
	groupMaxEpsIQ2S   = float32(1e-8)
	groupMaxEpsIQ1M   = float32(1e-7)
	groupMaxEpsIQ1S   = float32(1e-12)
	iq1Delta          = float32(0.125) // IQ1S_DELTA and IQ1M_DELTA
)

func sign8(signs uint8, j int) float32 {
	if signs&(1<<j) != 0 {
		return -1
	}
	return 1
}

func dequantizeIQ2XXS(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for ib := 0; ib < 8; ib++ {
			a0, a1 := le.Uint32(x[2+8*ib:]), le.Uint32(x[6+8*ib:])
			db := float32(d*(0.5+float32(a1>>28))) * 0.25
			for l := 0; l < 4; l++ {
				g := &iq2xxsGrid[uint8(a0>>(8*l))]
				signs := ksignsIQ2XS[(a1>>(7*l))&127]
				for j := 0; j < 8; j++ {
					y[j] = db * float32(g[j]) * sign8(signs, j)
				}
				y = y[8:]
			}
		}
		x = x[66:]
	}
}

func dequantizeIQ2XS(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for ib := 0; ib < 8; ib++ {
			sc := x[66+ib]
			db := [2]float32{float32(d*(0.5+float32(sc&0xf))) * 0.25, float32(d*(0.5+float32(sc>>4))) * 0.25}
			for l := 0; l < 4; l++ {
				q := le.Uint16(x[2+2*(4*ib+l):])
				g := &iq2xsGrid[q&511]
				signs := ksignsIQ2XS[q>>9]
				for j := 0; j < 8; j++ {
					y[j] = db[l/2] * float32(g[j]) * sign8(signs, j)
				}
				y = y[8:]
			}
		}
		x = x[74:]
	}
}

func dequantizeIQ2S(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		qs, signs, qh := x[2:34], x[34:66], x[66:74]
		for ib := 0; ib < 8; ib++ {
			sc := x[74+ib]
			db := [2]float32{float32(d*(0.5+float32(sc&0xf))) * 0.25, float32(d*(0.5+float32(sc>>4))) * 0.25}
			for l := 0; l < 4; l++ {
				g := &iq2sGrid[int(qs[l])|(int(qh[ib])<<(8-2*l))&0x300]
				for j := 0; j < 8; j++ {
					y[j] = db[l/2] * float32(g[j]) * sign8(signs[l], j)
				}
				y = y[8:]
			}
			qs, signs = qs[4:], signs[4:]
		}
		x = x[82:]
	}
}

func dequantizeIQ3XXS(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		qs := x[2:66]
		for ib := 0; ib < 8; ib++ {
			aux := le.Uint32(x[66+4*ib:])
			db := float32(d*(0.5+float32(aux>>28))) * 0.5
			for l := 0; l < 4; l++ {
				signs := ksignsIQ2XS[(aux>>(7*l))&127]
				g1, g2 := &iq3xxsGrid[qs[2*l]], &iq3xxsGrid[qs[2*l+1]]
				for j := 0; j < 4; j++ {
					y[j] = db * float32(g1[j]) * sign8(signs, j)
					y[j+4] = db * float32(g2[j]) * sign8(signs, j+4)
				}
				y = y[8:]
			}
			qs = qs[8:]
		}
		x = x[98:]
	}
}

func dequantizeIQ3S(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		qs, qh, signs := x[2:66], x[66:74], x[74:106]
		for ib := 0; ib < 8; ib += 2 {
			sc := x[106+ib/2]
			dbs := [2]float32{d * float32(1+2*int(sc&0xf)), d * float32(1+2*int(sc>>4))}
			for half := 0; half < 2; half++ {
				db := dbs[half]
				h := int(qh[half])
				for l := 0; l < 4; l++ {
					g1 := &iq3sGrid[int(qs[2*l])|(h<<(8-2*l))&256]
					g2 := &iq3sGrid[int(qs[2*l+1])|(h<<(7-2*l))&256]
					for j := 0; j < 4; j++ {
						y[j] = db * float32(g1[j]) * sign8(signs[l], j)
						y[j+4] = db * float32(g2[j]) * sign8(signs[l], j+4)
					}
					y = y[8:]
				}
				qs, signs = qs[8:], signs[4:]
			}
			qh = qh[2:]
		}
		x = x[110:]
	}
}

func dequantizeIQ1S(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		qs := x[2:34]
		for ib := 0; ib < 8; ib++ {
			qh := le.Uint16(x[34+2*ib:])
			dl := d * float32(2*int((qh>>12)&7)+1)
			delta := iq1Delta
			if qh&0x8000 != 0 {
				delta = -iq1Delta
			}
			for l := 0; l < 4; l++ {
				g := &iq1sGrid[int(qs[l])|int((qh>>(3*l))&7)<<8]
				for j := 0; j < 8; j++ {
					y[j] = dl * (float32(int8(g[j])) + delta)
				}
				y = y[8:]
			}
			qs = qs[4:]
		}
		x = x[50:]
	}
}

// iq1mScale reassembles IQ1_M's fp16 super-block scale from the top nibbles
// of its four 16-bit scale words.
func iq1mScale(sc *[4]uint16) float32 {
	u := sc[0]>>12 | (sc[1]>>8)&0x00f0 | (sc[2]>>4)&0x0f00 | sc[3]&0xf000
	return FP16ToFP32(u)
}

func dequantizeIQ1M(y []float32, x []byte) {
	for len(x) > 0 {
		var sc [4]uint16
		for i := range sc {
			sc[i] = le.Uint16(x[48+2*i:])
		}
		d := iq1mScale(&sc)
		qs, qh := x[:32], x[32:48]
		for ib := 0; ib < 8; ib++ {
			s := sc[ib/2] >> (6 * (ib % 2))
			dl := [2]float32{d * float32(2*int(s&7)+1), d * float32(2*int((s>>3)&7)+1)}
			idx := [4]int{
				int(qs[0]) | (int(qh[0])<<8)&0x700,
				int(qs[1]) | (int(qh[0])<<4)&0x700,
				int(qs[2]) | (int(qh[1])<<8)&0x700,
				int(qs[3]) | (int(qh[1])<<4)&0x700,
			}
			masks := [4]uint8{qh[0] & 0x08, qh[0] & 0x80, qh[1] & 0x08, qh[1] & 0x80}
			for l := 0; l < 4; l++ {
				delta := iq1Delta
				if masks[l] != 0 {
					delta = -iq1Delta
				}
				g := &iq1sGrid[idx[l]]
				for j := 0; j < 8; j++ {
					y[j] = dl[l/2] * (float32(int8(g[j])) + delta)
				}
				y = y[8:]
			}
			qs, qh = qs[4:], qh[2:]
		}
		x = x[56:]
	}
}

// findBestNeighbour is ggml's iq2_find_best_neighbour/iq3_find_best_neighbour:
// the neighbour minimising the weighted distance to xval at this scale; it
// writes the point's levels to L.
func findBestNeighbour(lt *lattice, u int, xval, weight []float32, scale float32, L []int8) (int, error) {
	nb := lt.neighboursOf(u)
	if len(nb) == 0 {
		return -1, errOffGrid
	}
	var sv [8]float32
	for l := range sv {
		sv[l] = scale * float32(2*l+1)
	}
	gridIndex := lt.nearest(nb, &sv, xval, weight)
	if gridIndex < 0 {
		return -1, errOffGrid
	}
	for i, p := range lt.point(gridIndex) {
		L[i] = (p - 1) / 2
	}
	return gridIndex, nil
}

// packLevels packs dim levels of nbits each into ggml's kmap index.
func packLevels(L []int8, nbits int) int {
	u := 0
	for i, l := range L {
		u |= int(l) << (nbits * i)
	}
	return u
}

// gridIndexOf returns the grid index of the level vector L (which must be
// on the grid at this point of the algorithm).
func gridIndexOf(lt *lattice, L []int8) (int, error) {
	u := packLevels(L, lt.bits)
	if u < 0 || u >= len(lt.kmap) || lt.kmap[u] < 0 {
		return -1, errOffGrid
	}
	return int(lt.kmap[u]), nil
}

// levelsFor rounds xval*id to lattice levels 0..kMaxQ-1 (ggml:
// nearest_int(0.5f*(id*xval-1)) clamped) and returns the packed vector.
func levelsFor(L []int8, xval []float32, id float32, kMaxQ, nbits int) int {
	u := 0
	for i := range L {
		l := clampInt(int(nearestInt(0.5*(float32(id*xval[i])-1))), 0, kMaxQ-1)
		L[i] = int8(l)
		u |= l << (nbits * i)
	}
	return u
}

// snapToGrid makes L a grid point: itself if on the grid, else the best
// neighbour at this scale. It reports whether L was already on the grid.
func snapToGrid(lt *lattice, u int, L []int8, xval, waux []float32, scale float32) (bool, error) {
	if lt.kmap[u] >= 0 {
		return true, nil
	}
	_, err := findBestNeighbour(lt, u, xval, waux, scale, L)
	return false, err
}

// evenSigns takes |x| of 8 values into xval and returns their sign bits,
// flipping the least important one when the count of negatives is odd (the
// IQ2_XXS/IQ2_XS/IQ3_XXS sign encoding stores only 7 bits).
func evenSigns(xb, weight, xval []float32) uint8 {
	nflip := 0
	var s uint8
	for i := 0; i < 8; i++ {
		if xb[i] >= 0 {
			xval[i] = xb[i]
		} else {
			xval[i] = -xb[i]
			nflip++
			s |= 1 << i
		}
	}
	if nflip%2 != 0 {
		imin := 0
		min := weight[0] * xb[0] * xb[0]
		for i := 1; i < 8; i++ {
			if ax := weight[i] * xb[i] * xb[i]; ax < min {
				min, imin = ax, i
			}
		}
		xval[imin] = -xval[imin]
		s ^= 1 << imin
	}
	return s & 127
}

// allSigns takes |x| into xval and returns all 8 sign bits (IQ2_S, IQ3_S).
func allSigns(xb, xval []float32) uint8 {
	var s uint8
	for i := 0; i < 8; i++ {
		if xb[i] >= 0 {
			xval[i] = xb[i]
		} else {
			xval[i] = -xb[i]
			s |= 1 << i
		}
	}
	return s
}

// sumQX returns the weighted correlation and energy of the odd levels 2L+1
// against xval: the least-squares scale is sumqx/sumq2.
func sumQX(weight, xval []float32, L []int8) (sumqx, sumq2 float32) {
	for i := range L {
		w := weight[i]
		q := float32(2*int(L[i]) + 1)
		sumqx += float32(w * xval[i] * q)
		sumq2 += float32(w * q * q)
	}
	return sumqx, sumq2
}

// at returns w[off:], or nil when there are no weights.
func at(w []float32, off int) []float32 {
	if w == nil {
		return nil
	}
	return w[off:]
}

// iqWeights fills the weights of one block as the i-quants compute them:
// qw * sqrt(sigma2 + x^2) with importance weights, x^2 without.
func iqWeights(weight, xb, qw []float32, sigma2 float32) {
	sigma2 = float32(sigma2) // a caller's sigma2 = s*k must not fuse with the add below (arm64 FMA)
	for i := range weight {
		if qw != nil {
			weight[i] = qw[i] * sqrtf(sigma2+float32(xb[i]*xb[i]))
		} else {
			weight[i] = xb[i] * xb[i]
		}
	}
}

// sqrtAll sets dst[i] = sqrt(src[i]): the per-coordinate weights of the
// neighbour search.
func sqrtAll(dst, src []float32) {
	for i := range dst {
		dst[i] = sqrtf(src[i])
	}
}

func superSigma2(x []float32, factor float32) float32 {
	var sumx2 float32
	for i := 0; i < qkK; i++ {
		sumx2 += float32(x[i] * x[i])
	}
	return float32(float32(factor*sumx2) / qkK) // rounded here, not fused into a caller's add
}

// quantizeIQ2XXS is quantize_row_iq2_xxs_impl (weights required).
func quantizeIQ2XXS(y []byte, x, qw []float32) error {
	lt := latIQ2XXS()
	const kMaxQ = 3
	var scales [8]float32
	var weight, xval, waux [32]float32
	var L, Laux [32]int8
	var blockSigns [4]uint8
	var q2 [16]uint32
	for len(x) > 0 {
		b := y[:66]
		putF16(b, 0)
		q2 = [16]uint32{}
		var maxScale float32
		sigma2 := superSigma2(x, 1)
		for ib := 0; ib < 8; ib++ {
			xb := x[32*ib : 32*ib+32]
			iqWeights(weight[:], xb, qw[32*ib:], sigma2)
			sqrtAll(waux[:], weight[:])
			for k := 0; k < 4; k++ {
				blockSigns[k] = evenSigns(xb[8*k:], weight[8*k:], xval[8*k:])
			}
			max := xval[0]
			for i := 1; i < 32; i++ {
				max = maxC(max, xval[i])
			}
			if max < groupMaxEps {
				scales[ib] = 0
				L = [32]int8{}
				continue
			}
			var Lu [32]uint8
			scale := makeQpQuants(32, kMaxQ+1, xval[:], Lu[:], weight[:])
			for i := range L {
				L[i] = int8(Lu[i])
			}
			effMax := scale * kMaxQ
			if effMax <= 0 {
				scales[ib] = 0
				L = [32]int8{}
				continue
			}
			var best float32
			for is := -6; is <= 6; is++ {
				id := (2*kMaxQ - 1 + float32(float32(is)*0.1)) / effMax
				thisScale := 1 / id
				for k := 0; k < 4; k++ {
					u := levelsFor(Laux[8*k:8*k+8], xval[8*k:], id, kMaxQ, 2)
					if _, err := snapToGrid(lt, u, Laux[8*k:8*k+8], xval[8*k:], waux[8*k:], thisScale); err != nil {
						return err
					}
				}
				sumqx, sumq2 := sumQX(weight[:], xval[:], Laux[:])
				if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
					scale = sumqx / sumq2
					best = scale * sumqx
					L = Laux
				}
			}
			if scale > 0 {
				id := 1 / scale
				for k := 0; k < 4; k++ {
					u := levelsFor(L[8*k:8*k+8], xval[8*k:], id, kMaxQ, 2)
					if _, err := snapToGrid(lt, u, L[8*k:8*k+8], xval[8*k:], waux[8*k:], scale); err != nil {
						return err
					}
				}
				if sumqx, sumq2 := sumQX(weight[:], xval[:], L[:]); sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			if scale < 0 {
				scale = -scale
				for k := range blockSigns {
					blockSigns[k] = ^blockSigns[k] & 127
				}
			}
			for k := 0; k < 4; k++ {
				gi, err := gridIndexOf(lt, L[8*k:8*k+8])
				if err != nil {
					return err
				}
				q2[2*ib] |= uint32(gi) << (8 * k)
				q2[2*ib+1] |= uint32(blockSigns[k]) << (7 * k)
			}
			scales[ib] = scale
			maxScale = maxC(maxScale, scale)
		}
		if maxScale != 0 {
			d := maxScale / 31
			putF16(b, d)
			id := 1 / d
			for ib := 0; ib < 8; ib++ {
				l := clampInt(int(nearestInt(0.5*(float32(id*scales[ib])-1))), 0, 15)
				q2[2*ib+1] |= uint32(l) << 28
			}
		} else {
			q2 = [16]uint32{}
		}
		for i, v := range q2 {
			le.PutUint32(b[2+4*i:], v)
		}
		y, x, qw = y[66:], x[qkK:], qw[qkK:]
	}
	return nil
}

// latticeSearch is the scale search shared by IQ2_XS and IQ2_S (blocks of
// 16: two 8-D points, kMaxQ 3) and IQ3_XXS and IQ3_S (blocks of 32: eight
// 4-D points, kMaxQ 8): 2*nTry+1 trial scales around max/(2*kMaxQ-1), then a
// re-fit of the points that had to be snapped to a neighbour (of all points
// with refitAll). The variants also differ in whether points start out
// counted as on the grid. It returns the scale; L holds the levels.
func latticeSearch(lt *lattice, weight, xval, waux []float32, L []int8, max float32, kMaxQ, nTry int, step float32, initOnGrid, refitAll bool) (float32, error) {
	dim := lt.dim
	ng := len(L) / dim
	var lauxBuf [32]int8
	Laux := lauxBuf[:len(L)]
	var onGrid, onGridAux [8]bool
	for k := 0; k < ng; k++ {
		onGrid[k] = initOnGrid
	}
	var best float32
	scale := max / float32(2*kMaxQ-1)
	for is := -nTry; is <= nTry; is++ {
		id := (float32(2*kMaxQ-1) + float32(float32(is)*step)) / max
		thisScale := 1 / id
		for k := 0; k < ng; k++ {
			g := Laux[dim*k : dim*k+dim]
			u := levelsFor(g, xval[dim*k:], id, kMaxQ, lt.bits)
			ok, err := snapToGrid(lt, u, g, xval[dim*k:], waux[dim*k:], thisScale)
			if err != nil {
				return 0, err
			}
			onGridAux[k] = ok
		}
		sumqx, sumq2 := sumQX(weight, xval, Laux)
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			scale = sumqx / sumq2
			best = scale * sumqx
			copy(L, Laux)
			onGrid = onGridAux
		}
	}
	notOnGrid := 0
	for _, ok := range onGrid[:ng] {
		if !ok {
			notOnGrid++
		}
	}
	if notOnGrid > 0 && scale > 0 {
		id := 1 / scale
		for k := 0; k < ng; k++ {
			if onGrid[k] && !refitAll {
				continue
			}
			g := L[dim*k : dim*k+dim]
			u := levelsFor(g, xval[dim*k:], id, kMaxQ, lt.bits)
			if _, err := snapToGrid(lt, u, g, xval[dim*k:], waux[dim*k:], scale); err != nil {
				return 0, err
			}
		}
		if sumqx, sumq2 := sumQX(weight, xval, L); sumq2 > 0 {
			scale = sumqx / sumq2
		}
	}
	return scale, nil
}

// packScales4 stores 4-bit block scales, two per byte, as IQ2_XS and IQ2_S
// do: the code l encodes the scale d*(2l+1).
func packScales4(sc []byte, scales []float32, id float32) {
	for ib, s := range scales {
		l := uint8(clampInt(int(nearestInt(0.5*(float32(id*s)-1))), 0, 15))
		if ib%2 == 0 {
			sc[ib/2] = l
		} else {
			sc[ib/2] |= l << 4
		}
	}
}

// quantizeIQ2XS is quantize_row_iq2_xs_impl (weights required).
func quantizeIQ2XS(y []byte, x, qw []float32) error { return quantizeIQ2Pairs(y, x, qw, false) }

// quantizeIQ2S is quantize_row_iq2_s_impl; qw may be nil.
func quantizeIQ2S(y []byte, x, qw []float32) error { return quantizeIQ2Pairs(y, x, qw, true) }

// quantizeIQ2Pairs is the common body of IQ2_XS and IQ2_S: blocks of 16
// values as two 8-D lattice points. IQ2_S (isS) differs in its grid, sign
// coding (8 stored bits instead of 7 plus parity), variance factor, default
// weights, layout and scale fudge factor, and in keeping the levels of a
// super-block whose scales are all zero.
func quantizeIQ2Pairs(y []byte, x, qw []float32, isS bool) error {
	lt, blockBytes, scOff := latIQ2XS(), 74, 66
	fudge, eps, sigmaFactor := float32(1), groupMaxEps, float32(1)
	if isS {
		lt, blockBytes, scOff = latIQ2S(), 82, 74
		fudge, eps, sigmaFactor = 0.9875, groupMaxEpsIQ2S, 2
	}
	var scales [16]float32
	var weight, xval, waux [16]float32
	var L [16]int8
	for len(x) > 0 {
		b := y[:blockBytes]
		clear(b)
		var maxScale float32
		sigma2 := superSigma2(x, sigmaFactor)
		for ib := 0; ib < 16; ib++ {
			xb := x[16*ib : 16*ib+16]
			iqWeights(weight[:], xb, at(qw, 16*ib), sigma2)
			if qw == nil { // IQ2_S's own default: x^2 plus a quarter of the variance
				for i := 0; i < 16; i++ {
					weight[i] = float32(0.25*sigma2) + float32(xb[i]*xb[i])
				}
			}
			sqrtAll(waux[:], weight[:])
			var blockSigns [2]uint8
			for k := 0; k < 2; k++ {
				if isS {
					blockSigns[k] = allSigns(xb[8*k:], xval[8*k:])
				} else {
					blockSigns[k] = evenSigns(xb[8*k:], weight[8*k:], xval[8*k:])
				}
			}
			max := xval[0]
			for i := 1; i < 16; i++ {
				max = maxC(max, xval[i])
			}
			L = [16]int8{}
			if max < eps {
				scales[ib] = 0
				continue
			}
			scale, err := latticeSearch(lt, weight[:], xval[:], waux[:], L[:], max, 3, 9, 0.1, true, false)
			if err != nil {
				return err
			}
			if scale < 0 {
				scale = -scale
				for k := range blockSigns {
					blockSigns[k] = ^blockSigns[k]
					if !isS {
						blockSigns[k] &= 127
					}
				}
			}
			for k := 0; k < 2; k++ {
				gi, err := gridIndexOf(lt, L[8*k:8*k+8])
				if err != nil {
					return err
				}
				i8 := 2*ib + k
				if isS {
					b[2+i8] = uint8(gi)
					b[66+i8/4] |= uint8((gi >> 8) << (2 * (i8 % 4)))
					b[2+32+i8] = blockSigns[k]
				} else {
					le.PutUint16(b[2+2*i8:], uint16(gi)|uint16(blockSigns[k])<<9)
				}
			}
			scales[ib] = scale
			maxScale = maxC(maxScale, scale)
		}
		if maxScale != 0 {
			d := maxScale / 31
			putF16(b, d*fudge)
			packScales4(b[scOff:scOff+8], scales[:], 1/d)
		} else if !isS {
			clear(b[2:66])
		}
		y, x = y[blockBytes:], x[qkK:]
		if qw != nil {
			qw = qw[qkK:]
		}
	}
	return nil
}

// quantizeIQ3XXS is quantize_row_iq3_xxs_impl with the 256-point grid; qw
// may be nil.
func quantizeIQ3XXS(y []byte, x, qw []float32) error {
	lt := latIQ3XXS()
	var scales [8]float32
	var weight, xval, waux [32]float32
	var L [32]int8
	for len(x) > 0 {
		b := y[:98]
		for i := range b {
			b[i] = 0
		}
		q3 := b[2:66]
		var maxScale float32
		sigma2 := superSigma2(x, 2)
		var scalesAndSigns [8]uint32
		for ib := 0; ib < 8; ib++ {
			xb := x[32*ib : 32*ib+32]
			iqWeights(weight[:], xb, at(qw, 32*ib), sigma2)
			sqrtAll(waux[:], weight[:])
			var blockSigns [4]uint8
			for k := 0; k < 4; k++ {
				blockSigns[k] = evenSigns(xb[8*k:], weight[8*k:], xval[8*k:])
			}
			max := xval[0]
			for i := 1; i < 32; i++ {
				max = maxC(max, xval[i])
			}
			L = [32]int8{}
			if max < groupMaxEpsIQ3XXS {
				scales[ib] = 0
				continue
			}
			scale, err := latticeSearch(lt, weight[:], xval[:], waux[:], L[:], max, 8, 15, 0.2, true, false)
			if err != nil {
				return err
			}
			if scale < 0 {
				scale = -scale
				for k := range blockSigns {
					blockSigns[k] = ^blockSigns[k] & 127
				}
			}
			for k := 0; k < 8; k++ {
				gi, err := gridIndexOf(lt, L[4*k:4*k+4])
				if err != nil {
					return err
				}
				q3[8*ib+k] = uint8(gi)
			}
			scalesAndSigns[ib] = uint32(blockSigns[0]) | uint32(blockSigns[1])<<7 | uint32(blockSigns[2])<<14 | uint32(blockSigns[3])<<21
			scales[ib] = scale
			maxScale = maxC(maxScale, scale)
		}
		if maxScale != 0 {
			d := maxScale / 31
			putF16(b, d*1.0125)
			id := 1 / d
			for ib := 0; ib < 8; ib++ {
				l := clampInt(int(nearestInt(0.5*(float32(id*scales[ib])-1))), 0, 15)
				scalesAndSigns[ib] |= uint32(l) << 28
			}
			for ib, v := range scalesAndSigns {
				le.PutUint32(b[66+4*ib:], v)
			}
		} else {
			for i := range q3 {
				q3[i] = 0
			}
		}
		y, x = y[98:], x[qkK:]
		if qw != nil {
			qw = qw[qkK:]
		}
	}
	return nil
}

// quantizeIQ3S is quantize_row_iq3_s_impl with blocks of 32; qw may be nil.
func quantizeIQ3S(y []byte, x, qw []float32) error {
	lt := latIQ3S()
	var scales [8]float32
	var weight, xval, waux [32]float32
	var L [32]int8
	for len(x) > 0 {
		b := y[:110]
		for i := range b {
			b[i] = 0
		}
		qs, qh, signs := b[2:66], b[66:74], b[74:106]
		var maxScale float32
		sigma2 := superSigma2(x, 2)
		for ib := 0; ib < 8; ib++ {
			xb := x[32*ib : 32*ib+32]
			iqWeights(weight[:], xb, at(qw, 32*ib), sigma2)
			sqrtAll(waux[:], weight[:])
			var blockSigns [4]uint8
			for k := 0; k < 4; k++ {
				blockSigns[k] = allSigns(xb[8*k:], xval[8*k:])
			}
			max := xval[0]
			for i := 1; i < 32; i++ {
				max = maxC(max, xval[i])
			}
			L = [32]int8{}
			if max == 0 {
				scales[ib] = 0
				continue
			}
			scale, err := latticeSearch(lt, weight[:], xval[:], waux[:], L[:], max, 8, 9, 0.2, false, true)
			if err != nil {
				return err
			}
			if scale < 0 {
				scale = -scale
				for k := range blockSigns {
					blockSigns[k] = ^blockSigns[k]
				}
			}
			for k := 0; k < 8; k++ {
				gi, err := gridIndexOf(lt, L[4*k:4*k+4])
				if err != nil {
					return err
				}
				qs[8*ib+k] = uint8(gi)
				qh[(ib*8+k)/8] |= uint8((gi >> 8) << ((ib*8 + k) % 8))
			}
			copy(signs[4*ib:4*ib+4], blockSigns[:])
			scales[ib] = scale
			maxScale = maxC(maxScale, scale)
		}
		if maxScale != 0 {
			d := maxScale / 31
			putF16(b, d*1.033)
			id := 1 / d
			for ib := 0; ib < 8; ib += 2 {
				l1 := clampInt(int(nearestInt(0.5*(float32(id*scales[ib])-1))), 0, 15)
				l2 := clampInt(int(nearestInt(0.5*(float32(id*scales[ib+1])-1))), 0, 15)
				b[106+ib/2] = uint8(l1 | l2<<4)
			}
		}
		y, x = y[110:], x[qkK:]
		if qw != nil {
			qw = qw[qkK:]
		}
	}
	return nil
}

// sortedOrder fills idx with 0..n-1 ordered by x ascending, ties kept in
// index order: the order of glibc's qsort (a stable merge sort for arrays
// this small) on ggml's (value, index) pairs.
func sortedOrder(x []float32, idx []int) {
	for i := range idx {
		idx[i] = i
	}
	for i := 1; i < len(idx); i++ {
		v := idx[i]
		j := i
		for j > 0 && x[idx[j-1]] > x[v] {
			idx[j] = idx[j-1]
			j--
		}
		idx[j] = v
	}
}

// findBestNeighbour2 is ggml's iq1_find_best_neighbour2: the neighbour with
// the smallest weighted distance when level l stands for xg[l].
func findBestNeighbour2(lt *lattice, u int, xval, weight []float32, scale float32, xg *[3]float32, L []int8) (int, error) {
	nb := lt.neighboursOf(u)
	// Level l stands for xg[l] (the IQ1 grid has levels 0..2 only).
	var sv [8]float32
	for l, q := range xg {
		sv[l] = scale * q
	}
	gridIndex := lt.nearest(nb, &sv, xval, weight)
	// ggml then scans the whole grid, reading past its 8 inputs (a bug that
	// only non-finite input reaches); refuse instead.
	if gridIndex < 0 {
		return -1, errOffGrid
	}
	for i, p := range lt.point(gridIndex) {
		L[i] = (p - 1) / 2
	}
	return gridIndex, nil
}

// quantizeIQ1S is quantize_row_iq1_s_impl (weights required).
func quantizeIQ1S(y []byte, x, qw []float32) error {
	lt := latIQ1()
	xp := [3]float32{-1 + iq1Delta, iq1Delta, 1 + iq1Delta}
	xm := [3]float32{-1 - iq1Delta, -iq1Delta, 1 - iq1Delta}
	var scales [8]float32
	var w32 [32]float32
	var L [32]int8
	var idx [32]int
	var sumx, sumw [33]float32
	var shifts [8]int8
	for len(x) > 0 {
		b := y[:50]
		for i := range b {
			b[i] = 0
		}
		var qh [8]uint16
		var maxScale float32
		sigma2 := superSigma2(x, 2)
		for ib := 0; ib < 8; ib++ {
			xb := x[32*ib : 32*ib+32]
			iqWeights(w32[:], xb, qw[32*ib:], sigma2)
			max := abs32(xb[0])
			for i := 1; i < 32; i++ {
				max = maxC(max, abs32(xb[i]))
			}
			if max < groupMaxEpsIQ1S {
				scales[ib], shifts[ib] = 0, 1
				continue
			}
			sortedOrder(xb, idx[:])
			for j := 0; j < 32; j++ {
				i := idx[j]
				sumx[j+1] = sumx[j] + float32(w32[i]*xb[i])
				sumw[j+1] = sumw[j] + w32[i]
			}
			bestScore := float32(-math.MaxFloat32)
			scale := max
			besti1, besti2, bestShift := -1, -1, 0
			for i1 := 0; i1 <= 32; i1++ {
				for i2 := i1; i2 <= 32; i2++ {
					for _, c := range [2]struct {
						v     *[3]float32
						shift int
					}{{&xp, 1}, {&xm, -1}} {
						v := c.v
						sumqx := float32((sumx[i1]-sumx[0])*v[0]) + float32((sumx[i2]-sumx[i1])*v[1]) + float32((sumx[32]-sumx[i2])*v[2])
						sumq2 := float32((sumw[i1]-sumw[0])*v[0]*v[0]) + float32((sumw[i2]-sumw[i1])*v[1]*v[1]) + float32((sumw[32]-sumw[i2])*v[2]*v[2])
						if sumq2 > 0 && sumqx*sumqx > bestScore*sumq2 {
							scale = sumqx / sumq2
							bestScore = scale * sumqx
							besti1, besti2, bestShift = i1, i2, c.shift
						}
					}
				}
			}
			if besti1 < 0 || besti2 < 0 || bestShift == 0 {
				scales[ib], shifts[ib] = 0, 1
				continue
			}
			for j := 0; j < 32; j++ {
				switch {
				case j < besti1:
					L[idx[j]] = 0
				case j < besti2:
					L[idx[j]] = 1
				default:
					L[idx[j]] = 2
				}
			}
			if scale < 0 {
				for j := range L {
					L[j] = 2 - L[j]
				}
				scale, bestShift = -scale, -bestShift
			}
			xx := &xp
			if bestShift != 1 {
				xx = &xm
			}
			allOnGrid := true
			var index [4]int
			for k := 0; k < 4; k++ {
				u := packLevels(L[8*k:8*k+8], 2)
				gi := int(lt.kmap[u])
				if gi < 0 {
					allOnGrid = false
					var err error
					if gi, err = findBestNeighbour2(lt, u, xb[8*k:], w32[8*k:], scale, xx, L[8*k:8*k+8]); err != nil {
						return err
					}
				}
				index[k] = gi
			}
			if !allOnGrid {
				var sumqx, sumq2 float32
				for k := 0; k < 4; k++ {
					pg := lt.point(index[k])
					for j := 0; j < 8; j++ {
						w := w32[8*k+j]
						q := xx[(pg[j]-1)/2]
						sumqx += float32(w * q * xb[8*k+j])
						sumq2 += float32(w * q * q)
					}
				}
				if sumqx > 0 && sumq2 > 0 {
					scale = sumqx / sumq2
				}
			}
			var h uint16
			for k := 0; k < 4; k++ {
				b[2+4*ib+k] = uint8(index[k])
				h |= uint16(index[k]>>8) << (3 * k)
			}
			qh[ib] = h
			scales[ib], shifts[ib] = scale, int8(bestShift)
			maxScale = maxC(maxScale, scale)
		}
		if maxScale != 0 {
			d := maxScale / 15
			putF16(b, d*1.125)
			id := 1 / d
			for ib := 0; ib < 8; ib++ {
				l := clampInt(int(nearestInt(0.5*(float32(id*scales[ib])-1))), 0, 7)
				if shifts[ib] == -1 {
					l |= 8
				}
				qh[ib] |= uint16(l << 12)
			}
			for ib, v := range qh {
				le.PutUint16(b[34+2*ib:], v)
			}
		}
		y, x, qw = y[50:], x[qkK:], qw[qkK:]
	}
	return nil
}

// iq1mSplits is IQ1_M's exhaustive search: for every split i1 <= i2 of the
// 16 sorted values into levels 0, 1 and 2, and each of the four codebook
// combinations k, the least-squares scale sumqx/sumq2, keeping the first
// best score in ggml's order (i1, then i2, then k). terms[j][level] holds
// the four sumqx terms then the four sumq2 terms of sorted value j at that
// level. It returns the scale (max when nothing scores) and the split,
// besti1 < 0 if none.
func iq1mSplits(terms *[16][3][8]float32, max float32) (scale float32, besti1, besti2, bestK int) {
	var sums [iq1mNumSplits][8]float32
	iq1mSplitSums(terms, &sums)
	bestScore := float32(-math.MaxFloat32)
	scale = max
	besti1, besti2, bestK = -1, -1, -1
	// Candidate c is split c/4 with combination c%4; only those passing
	// ggml's test against the current best change anything.
	for c := iq1mNextBetter(&sums, 0, bestScore); c >= 0; c = iq1mNextBetter(&sums, c+1, bestScore) {
		sum := &sums[c/4]
		sumqx, sumq2 := sum[c%4], sum[4+c%4]
		scale = sumqx / sumq2
		bestScore = scale * sumqx
		besti1, besti2, bestK = int(iq1mSplitAt[c/4][0]), int(iq1mSplitAt[c/4][1]), c%4
	}
	return scale, besti1, besti2, bestK
}

// iq1mSplitAt lists the splits (i1, i2) in iq1mSplits' order.
var iq1mSplitAt = func() (t [iq1mNumSplits][2]uint8) {
	s := 0
	for i1 := 0; i1 <= 16; i1++ {
		for i2 := i1; i2 <= 16; i2++ {
			t[s] = [2]uint8{uint8(i1), uint8(i2)}
			s++
		}
	}
	return t
}()

// iq1mNextBetterGo returns the first candidate c >= from (split c/4,
// combination c%4) that passes ggml's test sumq2 > 0 && sumqx*sumqx >
// bestScore*sumq2, or -1.
func iq1mNextBetterGo(sums *[iq1mNumSplits][8]float32, from int, bestScore float32) int {
	for c := from; c < 4*iq1mNumSplits; c++ {
		sumqx, sumq2 := sums[c/4][c%4], sums[c/4][4+c%4]
		if sumq2 > 0 && sumqx*sumqx > bestScore*sumq2 {
			return c
		}
	}
	return -1
}

// iq1mNumSplits is the number of splits 0 <= i1 <= i2 <= 16.
const iq1mNumSplits = 17 * 18 / 2

// iq1mSplitSumsGo fills sums[s], for the splits in iq1mSplits' order, with
// the eight sums of the 16 terms at their levels, added in index order from
// zero as ggml adds them. The sums of a split share their first i2
// additions with the splits before it (the same terms in the same order),
// so those partial sums are carried along and only the level-2 tail is
// added per split, giving the same floats.
func iq1mSplitSumsGo(terms *[16][3][8]float32, sums *[iq1mNumSplits][8]float32) {
	var pre [8]float32 // values 0..i1-1 at level 0
	s := 0
	for i1 := 0; i1 <= 16; i1++ {
		if i1 > 0 {
			addTerms(&pre, &terms[i1-1][0])
		}
		mid := pre // then i1..i2-1 at level 1
		for i2 := i1; i2 <= 16; i2++ {
			if i2 > i1 {
				addTerms(&mid, &terms[i2-1][1])
			}
			sum := mid
			for j := i2; j < 16; j++ {
				addTerms(&sum, &terms[j][2])
			}
			sums[s] = sum
			s++
		}
	}
}

// addTerms adds t to the eight running sums s.
func addTerms(s, t *[8]float32) {
	s[0] += t[0]
	s[1] += t[1]
	s[2] += t[2]
	s[3] += t[3]
	s[4] += t[4]
	s[5] += t[5]
	s[6] += t[6]
	s[7] += t[7]
}

// quantizeIQ1M is quantize_row_iq1_m_impl; qw may be nil.
func quantizeIQ1M(y []byte, x, qw []float32) error {
	lt := latIQ1()
	xp := [3]float32{-1 + iq1Delta, iq1Delta, 1 + iq1Delta}
	xm := [3]float32{-1 - iq1Delta, -iq1Delta, 1 - iq1Delta}
	masks := [4]uint8{0x00, 0x80, 0x08, 0x88}
	var scales [16]float32
	var weight [16]float32
	var L [16]int8
	var idx [16]int
	var shifts [16]int
	// codebook returns the value table for half k (0 or 1) of a block with
	// sign combination s (0: ++, 1: +-, 2: -+, 3: --).
	codebook := func(s, k int) *[3]float32 {
		if (k == 0 && s < 2) || (k == 1 && s%2 == 0) {
			return &xp
		}
		return &xm
	}
	for len(x) > 0 {
		b := y[:56]
		for i := range b {
			b[i] = 0
		}
		qs, qh := b[:32], b[32:48]
		var maxScale float32
		sigma2 := superSigma2(x, 2)
		for ib := 0; ib < 16; ib++ {
			xb := x[16*ib : 16*ib+16]
			iqWeights(weight[:], xb, at(qw, 16*ib), sigma2)
			max := abs32(xb[0])
			for i := 1; i < 16; i++ {
				max = maxC(max, abs32(xb[i]))
			}
			if max < groupMaxEpsIQ1M {
				scales[ib], shifts[ib] = 0, 0
				continue
			}
			sortedOrder(xb, idx[:])
			// Every split of the sorted values into levels 0/1/2 at i1 <= i2,
			// for each of the four codebook pairs (one per half of the block).
			var terms [16][3][8]float32
			for j, i := range idx {
				h, w := i/8, weight[i]
				for level := range 3 {
					for k := 0; k < 4; k++ {
						v := codebook(k, h)[level]
						terms[j][level][k] = float32(w * v * xb[i])
						terms[j][level][4+k] = float32(w * v * v)
					}
				}
			}
			scale, besti1, besti2, bestK := iq1mSplits(&terms, max)
			if besti1 < 0 || besti2 < 0 || bestK < 0 {
				scales[ib], shifts[ib] = 0, 0
				continue
			}
			for j := 0; j < 16; j++ {
				switch {
				case j < besti1:
					L[idx[j]] = 0
				case j < besti2:
					L[idx[j]] = 1
				default:
					L[idx[j]] = 2
				}
			}
			if scale < 0 {
				for j := range L {
					L[j] = 2 - L[j]
				}
				scale = -scale
				bestK = 3 - bestK
			}
			allOnGrid := true
			var index [2]int
			for k := 0; k < 2; k++ {
				xx := codebook(bestK, k)
				u := packLevels(L[8*k:8*k+8], 2)
				gi := int(lt.kmap[u])
				if gi < 0 {
					allOnGrid = false
					var err error
					if gi, err = findBestNeighbour2(lt, u, xb[8*k:], weight[8*k:], scale, xx, L[8*k:8*k+8]); err != nil {
						return err
					}
				}
				index[k] = gi
			}
			if !allOnGrid {
				var sqx, sq2 float32
				for k := 0; k < 2; k++ {
					xx := codebook(bestK, k)
					pg := lt.point(index[k])
					for j := 0; j < 8; j++ {
						w := weight[8*k+j]
						q := xx[(pg[j]-1)/2]
						sqx += float32(w * q * xb[8*k+j])
						sq2 += float32(w * q * q)
					}
				}
				if sqx > 0 && sq2 > 0 {
					scale = sqx / sq2
				}
			}
			qs[2*ib] = uint8(index[0])
			qs[2*ib+1] = uint8(index[1])
			qh[ib] = uint8(index[0]>>8) | uint8(index[1]>>8)<<4
			scales[ib], shifts[ib] = scale, bestK
			maxScale = maxC(maxScale, scale)
		}
		if maxScale != 0 {
			var sc [4]uint16
			d := maxScale / 15
			id := 1 / d
			var sqx, sq2 float32
			for ib := 0; ib < 16; ib++ {
				l := clampInt(int(nearestInt(0.5*(float32(id*scales[ib])-1))), 0, 7)
				sc[ib/4] |= uint16(l << (3 * (ib % 4)))
				qh[ib] |= masks[shifts[ib]]
				xb := x[16*ib : 16*ib+16]
				iqWeights(weight[:], xb, at(qw, 16*ib), sigma2)
				for k := 0; k < 2; k++ {
					xx := codebook(shifts[ib], k)
					pg := lt.point(int(qs[2*ib+k]) + (int(qh[ib])<<(8-4*k))&0x700)
					for j := 0; j < 8; j++ {
						w := weight[8*k+j]
						q := xx[(pg[j]-1)/2] * float32(2*l+1)
						sqx += float32(w * q * xb[8*k+j])
						sq2 += float32(w * q * q)
					}
				}
			}
			if sq2 > 0 {
				d = sqx / sq2
			}
			s := FP32ToFP16(d * 1.1125)
			sc[0] |= (s & 0x000f) << 12
			sc[1] |= (s & 0x00f0) << 8
			sc[2] |= (s & 0x0f00) << 4
			sc[3] |= s & 0xf000
			for i, v := range sc {
				le.PutUint16(b[48+2*i:], v)
			}
		}
		y, x = y[56:], x[qkK:]
		if qw != nil {
			qw = qw[qkK:]
		}
	}
	return nil
}
