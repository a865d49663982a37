package quant

import "math"

// Non-linear 4-bit codebooks (IQ4_NL, IQ4_XS), the FP4 types (MXFP4,
// NVFP4) and the ternary types (TQ1_0, TQ2_0).

// kvaluesIQ4NL is ggml's kvalues_iq4nl codebook.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// kvaluesMXFP4 is ggml's kvalues_mxfp4: the E2M1 values doubled.
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// iq4nlAtMost[f+127] is how many codebook values are <= f, for the integer
// parts f = -127..112 of the values bestIndexIQ4NL searches between (256
// entries so that a uint8 index needs no bounds check).
var iq4nlAtMost = func() (t [256]uint8) {
	for j := range 240 {
		for _, v := range kvaluesIQ4NL {
			if int(v) <= j-127 {
				t[j]++
			}
		}
	}
	return t
}()

// bestIndexIQ4NL is ggml's best_index_int8 over kvalues_iq4nl: the nearest
// codebook entry, ties going up; 0 at or below the first entry, 15 at or
// above the last and for NaN (where ggml's binary search ends). The binary
// search finds the first entry above x; as the entries are integers, that
// is the count of entries <= floor(x), read from a table instead of taking
// four unpredictable branches. x is clamped into the table first: the final
// comparison then still picks entry 0 below -127 and entry 15 above 112 or
// for NaN, and it compiles to a flag (SETcc) rather than a branch.
func bestIndexIQ4NL(x float32) int {
	c := x
	if !(c <= 112) {
		c = 112
	}
	if c < -127 {
		c = -127
	}
	mu := int(iq4nlAtMost[uint8(int(math.Floor(float64(c)))+127)])
	lo, hi := float32(kvaluesIQ4NL[(mu-1)&15]), float32(kvaluesIQ4NL[mu&15])
	x = float32(x) // a caller's x = a*b must not fuse with these subtractions (arm64 FMA)
	d := 0
	if hi-x > x-lo {
		d = 1
	}
	return mu - d
}

// quantizeIQ4NLImpl is ggml's quantize_row_iq4_nl_impl for the 16-value
// codebook and blocks of 32: sbs is the super-block size (32 for IQ4_NL, 256
// for IQ4_XS). b is the output block, qw the weights for this super-block or
// nil, ntry the scale search width (7 in ggml_quantize_chunk, -1 in the
// IQ4_NL reference quantizer). L is the caller's level buffer: ggml skips
// all-zero blocks without touching their levels, so with ntry <= 0 such a
// block is stored with whatever the previous block of the same call left
// there (its scale is 0, so the values still decode to zero).
func quantizeIQ4NLImpl(sbs int, x []float32, b []byte, qw []float32, ntry int, L *[qkK]uint8) {
	var scales [8]float32
	var weight [32]float32
	var sigma2 float32
	for j := 0; j < sbs; j++ {
		sigma2 += float32(x[j] * x[j])
	}
	sigma2 *= 2 / float32(sbs)
	var q4 []byte
	if sbs == 32 {
		q4 = b[2:18]
	} else {
		q4 = b[8:136]
	}
	for j := range q4 {
		q4[j] = 0
	}
	putF16(b, 0)
	var maxScale, amaxScale float32
	nb := sbs / 32
	for ib := 0; ib < nb; ib++ {
		xb, Lb := x[32*ib:32*ib+32], L[32*ib:32*ib+32]
		iqWeights(weight[:], xb, at(qw, 32*ib), sigma2)
		amax, max := absMaxSigned(xb)
		if amax < groupMaxEps {
			scales[ib] = 0
			continue
		}
		d := iq4Scale(xb, weight[:], max, ntry, Lb)
		scales[ib] = d
		if a := abs32(d); a > amaxScale {
			amaxScale, maxScale = a, d
		}
	}
	if nb > 1 {
		scalesL := b[4:8]
		le.PutUint16(b[2:], 0)
		var scalesH uint16
		d := -maxScale / 32
		putF16(b, d)
		var id float32
		if d != 0 {
			id = 1 / d
		}
		for ib := 0; ib < nb; ib++ {
			l := clampInt(int(nearestInt(id*scales[ib])), -32, 31)
			dl := d * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			xb, Lb := x[32*ib:], L[32*ib:]
			for j := 0; j < 32; j++ {
				Lb[j] = uint8(bestIndexIQ4NL(idl * xb[j]))
			}
			l += 32
			lLow, lHigh := uint8(l&0xf), uint16(l>>4)
			if ib%2 == 0 {
				scalesL[ib/2] = lLow
			} else {
				scalesL[ib/2] |= lLow << 4
			}
			scalesH |= lHigh << (2 * (ib % 8))
		}
		le.PutUint16(b[2:], scalesH)
	} else {
		putF16(b, scales[0])
		if ntry > 0 {
			var id float32
			if scales[0] != 0 {
				id = 1 / scales[0]
			}
			for j := 0; j < sbs; j++ {
				L[j] = uint8(bestIndexIQ4NL(id * x[j]))
			}
		}
	}
	for i := 0; i < sbs/32; i++ {
		for j := 0; j < 16; j++ {
			q4[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// iq4Scale is the scale search of quantize_row_iq4_nl_impl for one block
// of 32 whose largest magnitude is max (signed): a first fit at the scale
// of max, then 2*ntry+1 trial scales, keeping the best weighted fit. The
// first fit's levels go to Lb (they are only kept when ntry <= 0; the
// caller recomputes them otherwise). The fits are independent, so with
// AVX2 they run one per lane (iq4ScaleLanes).
func iq4Scale(xb, weight []float32, max float32, ntry int, Lb []uint8) float32 {
	values := &kvaluesIQ4NL
	var d float32
	if ntry > 0 {
		d = -max / float32(values[0])
	} else {
		d = max / float32(values[0])
	}
	id := 1 / d
	if d, ok := iq4ScaleLanes(xb, weight, id, max, ntry); ok {
		return d
	}
	var sumqx, sumq2 float32
	for j := 0; j < 32; j++ {
		l := bestIndexIQ4NL(id * xb[j])
		Lb[j] = uint8(l)
		q := float32(values[l])
		w := weight[j]
		sumqx += float32(w * q * xb[j])
		sumq2 += float32(w * q * q)
	}
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -ntry; itry <= ntry; itry++ {
		id = float32(itry+int(values[0])) / max
		sumqx, sumq2 = 0, 0
		for j := 0; j < 32; j++ {
			q := float32(values[bestIndexIQ4NL(id*xb[j])])
			w := weight[j]
			sumqx += float32(w * q * xb[j])
			sumq2 += float32(w * q * q)
		}
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// quantizeIQ4NL quantizes blocks of 32 (iq4_nl: d@0, qs@2); ntry selects
// ggml_quantize_chunk's search (7) or the reference quantizer's (-1).
func quantizeIQ4NL(y []byte, x, qw []float32, ntry int) {
	var L [qkK]uint8
	for len(x) > 0 {
		quantizeIQ4NLImpl(32, x, y[:18], qw, ntry, &L)
		y, x = y[18:], x[32:]
		if qw != nil {
			qw = qw[32:]
		}
	}
}

// quantizeIQ4XS quantizes super-blocks (iq4_xs: d@0, scales_h@2,
// scales_l@4, qs@8).
func quantizeIQ4XS(y []byte, x, qw []float32) {
	var L [qkK]uint8
	for len(x) > 0 {
		quantizeIQ4NLImpl(qkK, x, y[:136], qw, 7, &L)
		y, x = y[136:], x[qkK:]
		if qw != nil {
			qw = qw[qkK:]
		}
	}
}

func dequantizeIQ4NL(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for j := 0; j < 16; j++ {
			y[j] = d * float32(kvaluesIQ4NL[x[2+j]&0xf])
			y[j+16] = d * float32(kvaluesIQ4NL[x[2+j]>>4])
		}
		y, x = y[32:], x[18:]
	}
}

func dequantizeIQ4XS(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		scalesH := le.Uint16(x[2:])
		qs := x[8:136]
		for ib := 0; ib < 8; ib++ {
			ls := int((x[4+ib/2]>>(4*(ib%2)))&0xf) | int((scalesH>>(2*ib))&3)<<4
			dl := d * float32(ls-32)
			for j := 0; j < 16; j++ {
				y[j] = dl * float32(kvaluesIQ4NL[qs[j]&0xf])
				y[j+16] = dl * float32(kvaluesIQ4NL[qs[j]>>4])
			}
			y, qs = y[32:], qs[16:]
		}
		x = x[136:]
	}
}

// fp4Levels holds the non-negative codebook values times a block's scale
// e, rounded as ggml's best_index_mxfp4 rounds kvalues_mxfp4[i]*e.
type fp4Levels [8]float32

func newFP4Levels(e float32) *fp4Levels {
	var v fp4Levels
	for i := range v {
		v[i] = float32(kvaluesMXFP4[i]) * e
	}
	return &v
}

// indices sets idx[i] to ggml's best_index_mxfp4 for x[i]: the first of the
// 16 entries with the smallest |value*e - x|. Only half of them can win:
// for x >= 0 a negative entry -v is never closer than +v, which comes first
// (v + x >= |v - x| and rounding keeps the order); for x < 0 the same holds
// mirrored, except that entry 0 (the value 0) precedes all negative ones.
// So the search runs over |x| and the eight non-negative values, comparing
// the errors as bit patterns (same order for non-negative floats) with
// conditional moves. NaN matches nothing, leaving entry 0, as in ggml.
func (v *fp4Levels) indices(idx []uint8, x []float32) {
	idx = idx[:len(x)]
	v1, v2, v3, v4, v5, v6, v7 := v[1], v[2], v[3], v[4], v[5], v[6], v[7]
	for i, xi := range x {
		b := math.Float32bits(xi)
		a := math.Float32frombits(b & 0x7fffffff)
		best, bestErr := uint32(0), b&0x7fffffff // |0*e - x|
		best, bestErr = fp4Closer(best, bestErr, 1, v1, a)
		best, bestErr = fp4Closer(best, bestErr, 2, v2, a)
		best, bestErr = fp4Closer(best, bestErr, 3, v3, a)
		best, bestErr = fp4Closer(best, bestErr, 4, v4, a)
		best, bestErr = fp4Closer(best, bestErr, 5, v5, a)
		best, bestErr = fp4Closer(best, bestErr, 6, v6, a)
		best, _ = fp4Closer(best, bestErr, 7, v7, a)
		// Negative x (sign bit; -0 has best 0) moves a non-zero best to
		// the negative half, without a branch on the sign.
		best |= b >> 31 << 3 & -min(best, 1)
		if xi != xi {
			best = 0
		}
		idx[i] = uint8(best)
	}
}

// fp4Closer is one step of the search in indices: entry k with value vk
// replaces the best so far when strictly closer to a.
func fp4Closer(best, bestErr, k uint32, vk, a float32) (uint32, uint32) {
	if err := math.Float32bits(vk-a) & 0x7fffffff; err < bestErr {
		return k, err
	}
	return best, bestErr
}

// mxfp4Exponent is ggml's (uint8_t)(floorf(log2f(amax)) - 2 + 127) for
// amax > 0. For a normal amax whose mantissa is not within 1% of the next
// power of two, floorf(log2f(amax)) is the binary exponent (checked
// against the log2f path for every such float32), so that path is only
// taken for the rest.
func mxfp4Exponent(amax float32) uint8 {
	b := math.Float32bits(amax)
	if exp := b >> 23; exp >= 1 && exp < 255 && b&0x7fffff < 0x7f0000 {
		return uint8(exp - 2)
	}
	return uint8(cvtt32(float32(float32(floor32(log2f(amax))-2) + 127)))
}

// MXFP4: e@0 (E8M0), qs@1 (16 nibbles: element j low, j+16 high).

func quantizeMXFP4(y []byte, x []float32) {
	for len(x) >= 32 && len(y) >= 17 {
		if n := mxfp4Blocks(y, x); n > 0 {
			y, x = y[17*n:], x[32*n:]
			continue
		}
		xb := (*[32]float32)(x)
		amax, _ := absMaxSigned(xb[:])
		var e uint8
		if amax > 0 {
			e = mxfp4Exponent(amax)
		}
		var idx [32]uint8
		newFP4Levels(E8M0ToFP32Half(e)).indices(idx[:], xb[:])
		y[0] = e
		q := y[1:17:17]
		for j := range q {
			q[j] = idx[j] | idx[16+j]<<4
		}
		y, x = y[17:], x[32:]
	}
}

func dequantizeMXFP4(y []float32, x []byte) {
	for len(x) > 0 {
		d := E8M0ToFP32Half(x[0])
		for j := 0; j < 16; j++ {
			y[j] = float32(kvaluesMXFP4[x[1+j]&0xf]) * d
			y[j+16] = float32(kvaluesMXFP4[x[1+j]>>4]) * d
		}
		y, x = y[32:], x[17:]
	}
}

// NVFP4: d@0 (4 UE4M3 scales, one per 16 elements), qs@4 (32).

func quantizeNVFP4(y []byte, x []float32) {
	for len(x) > 0 {
		for s := 0; s < 4; s++ {
			xb := x[16*s : 16*s+16]
			amax, _ := absMaxSigned(xb)
			ue := FP32ToUE4M3(amax / 6)
			y[s] = ue
			var idx [16]uint8
			newFP4Levels(UE4M3ToFP32(ue)).indices(idx[:], xb)
			for j := 0; j < 8; j++ {
				y[4+8*s+j] = idx[j] | idx[8+j]<<4
			}
		}
		y, x = y[36:], x[64:]
	}
}

func dequantizeNVFP4(y []float32, x []byte) {
	for len(x) > 0 {
		for s := 0; s < 4; s++ {
			d := UE4M3ToFP32(x[s])
			yb := y[16*s:]
			for j := 0; j < 8; j++ {
				q := x[4+8*s+j]
				yb[j] = float32(kvaluesMXFP4[q&0xf]) * d
				yb[j+8] = float32(kvaluesMXFP4[q>>4]) * d
			}
		}
		y, x = y[64:], x[36:]
	}
}

// TQ1_0: qs@0 (48 bytes of 5 trits), qh@48 (4 bytes of 4 trits), d@52.

// ternaryScale stores the super-block scale d = max|x| of the ternary types
// at dst and returns 1/d (0 for an all-zero block).
func ternaryScale(dst []byte, x []float32) float32 {
	amax := absMax(x[:qkK])
	putF16(dst, amax)
	if amax != 0 {
		return 1 / amax
	}
	return 0
}

// packTrits encodes base-3 digits into one byte as ggml does: the value
// 0..242 scaled so that multiplying by 3^k and keeping 8 bits exposes digit k
// in the top bits (ceiling division by 243).
func packTrits(q uint8) uint8 { return uint8((uint16(q)*256 + 242) / 243) }

// trit is ggml's lroundf(x*id) + 1 kept as C keeps it: only its low byte
// survives the uint8 arithmetic that follows. That byte is the same with
// the 32-bit rounding (checked on all 2^32 inputs): below 2^31 both round
// half away from zero; above, float32 values are multiples of 256 and both
// sentinels (LONG_MIN for NaN and overflow, cvttss2si's INT_MIN) end in a
// zero byte.
func trit(v, id float32) uint8 { return uint8(roundToInt32(v*id) + 1) }

func quantizeTQ1_0(y []byte, x []float32) {
	for len(x) > 0 {
		b := y[:54]
		id := ternaryScale(b[52:], x)
		xs := x
		for m := 0; m < 32; m++ {
			var q uint8
			for n := 0; n < 5; n++ {
				q = q*3 + trit(xs[m+n*32], id)
			}
			b[m] = packTrits(q)
		}
		xs = xs[160:]
		for m := 0; m < 16; m++ {
			var q uint8
			for n := 0; n < 5; n++ {
				q = q*3 + trit(xs[m+n*16], id)
			}
			b[32+m] = packTrits(q)
		}
		xs = xs[80:]
		for j := 0; j < 4; j++ {
			var q uint8
			for m := 0; m < 4; m++ {
				q = q*3 + trit(xs[j+m*4], id)
			}
			b[48+j] = packTrits(q * 3)
		}
		y, x = y[54:], x[qkK:]
	}
}

var pow3 = [6]uint8{1, 3, 9, 27, 81, 243}

// PackTrits encodes q = t0*3^4 + t1*3^3 + ... + t4 (0..242, base-3 digits
// t0 first) into one byte as TQ1_0 does; Trit decodes it. The repacked
// ternary layouts (package layout) store trits this way too.
func PackTrits(q uint8) uint8 { return packTrits(q) }

// Trit returns digit n (0 = most significant) of a byte made by PackTrits,
// 0..2, by ggml's multiply-and-shift (no division).
func Trit(b uint8, n int) uint8 { return uint8((uint16(b*pow3[n]) * 3) >> 8) }

func tritAt(b, pow uint8) float32 {
	q := b * pow
	return float32(int16((uint16(q)*3)>>8) - 1)
}

func dequantizeTQ1_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x[52:])
		for n := 0; n < 5; n++ {
			for m := 0; m < 32; m++ {
				y[0] = tritAt(x[m], pow3[n]) * d
				y = y[1:]
			}
		}
		for n := 0; n < 5; n++ {
			for m := 0; m < 16; m++ {
				y[0] = tritAt(x[32+m], pow3[n]) * d
				y = y[1:]
			}
		}
		for n := 0; n < 4; n++ {
			for j := 0; j < 4; j++ {
				y[0] = tritAt(x[48+j], pow3[n]) * d
				y = y[1:]
			}
		}
		x = x[54:]
	}
}

// TQ2_0: qs@0 (64 bytes of 2-bit values q+1), d@64.

func quantizeTQ2_0(y []byte, x []float32) {
	for len(x) > 0 {
		b := y[:66]
		id := ternaryScale(b[64:], x)
		xs := x
		for j := 0; j < 64; j += 32 {
			for m := 0; m < 32; m++ {
				var q uint8
				for n := 0; n < 4; n++ {
					q += (trit(xs[m+n*32], id) & 3) << (2 * n)
				}
				b[j+m] = q
			}
			xs = xs[128:]
		}
		y, x = y[66:], x[qkK:]
	}
}

func dequantizeTQ2_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x[64:])
		for j := 0; j < 64; j += 32 {
			for l := 0; l < 4; l++ {
				for m := 0; m < 32; m++ {
					q := int((x[j+m] >> (2 * l)) & 3)
					y[m] = float32(q-1) * d
				}
				y = y[32:]
			}
		}
		x = x[66:]
	}
}
