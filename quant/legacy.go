package quant

import (
	"encoding/binary"
	"math"
)

// The 32-element block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1) and the
// 1- and 2-bit Q1_0/Q2_0. Each function handles a whole number of blocks;
// x holds the input floats and y the output bytes.

var le = binary.LittleEndian

func putF16(b []byte, f float32) { le.PutUint16(b, FP32ToFP16(f)) }
func getF16(b []byte) float32    { return FP16ToFP32(le.Uint16(b)) }

// absMaxSigned returns the element of largest magnitude (the first one on
// ties, NaNs never win), as the ggml loops "if (amax < fabsf(v))" do.
func absMaxSigned(x []float32) (amax, max float32) {
	amax, max, _ = absMaxSignedNaN(x)
	return amax, max
}

// absMaxSignedNaN is absMaxSigned that also reports whether x holds a NaN.
// For non-negative floats the order of the bit patterns is the order of the
// values, so the loop runs on integers, where the selections are
// conditional moves rather than unpredictable branches.
func absMaxSignedNaN(x []float32) (amax, max float32, nan bool) {
	var ab, mb uint32
	for _, v := range x {
		b := math.Float32bits(v)
		a := b & 0x7fffffff
		if a > 0x7f800000 {
			a, nan = 0, true
		}
		if a > ab {
			ab, mb = a, b
		}
	}
	return math.Float32frombits(ab), math.Float32frombits(mb), nan
}

// absMax is ggml's "amax = MAX(amax, fabsf(v))" from amax = 0. On NaN the C
// macro is order-dependent (a NaN replaces amax, the next value replaces
// the NaN), so such input takes the literal loop; otherwise it is the
// largest magnitude, found on the integer bit patterns without branches.
func absMax(x []float32) float32 {
	var ab uint32
	nan := false
	for _, v := range x {
		a := math.Float32bits(v) & 0x7fffffff
		if a > 0x7f800000 {
			nan = true
		}
		ab = max(ab, a)
	}
	if !nan {
		return math.Float32frombits(ab)
	}
	var amax float32
	for _, v := range x {
		amax = maxC(amax, abs32(v))
	}
	return amax
}

// minScale stores the scale (max-min)/nmax and the min of a Q4_1/Q5_1
// block at b and returns the min and the inverse scale (0 if constant).
func minScale(b []byte, xb []float32, nmax float32) (lo, id float32) {
	lo, hi := float32(math.MaxFloat32), float32(-math.MaxFloat32)
	for _, v := range xb {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	d := (hi - lo) / nmax
	if d != 0 {
		id = 1 / d
	}
	putF16(b, d)
	putF16(b[2:], lo)
	return lo, id
}

// packLegacy stores 32 levels of a Q4_x (bits 4: nibbles, element j low
// and j+16 high, unmasked like ggml) or Q5_x block (bits 5: 32 high bits
// first, then the masked nibbles) at b.
func packLegacy(b []byte, L *[32]uint8, bits int) {
	if bits == 4 {
		q := b[:16:16]
		for j := range q {
			q[j] = L[j] | L[j+16]<<4
		}
		return
	}
	q := b[4:20:20]
	var qh uint32
	for j := range q {
		xi0, xi1 := L[j], L[j+16]
		q[j] = xi0&0xf | (xi1&0xf)<<4
		qh |= uint32(xi0&0x10) >> 4 << j
		qh |= uint32(xi1&0x10) >> 4 << (j + 16)
	}
	le.PutUint32(b, qh)
}

// quantizeSymRef is quantize_row_q4_0_ref (bits 4) and quantize_row_q5_0_ref
// (bits 5): d = max/-2^(bits-1), levels trunc(x/d + 2^(bits-1) + 0.5)
// capped at 2^bits-1.
func quantizeSymRef(y []byte, x []float32, bits int) {
	blockBytes := 2 + 16 + 4*(bits-4)
	n := symBlocks(y, x, bits)
	y, x = y[blockBytes*n:], x[32*n:]
	for len(x) >= 32 && len(y) >= blockBytes {
		symRefBlock(y[:blockBytes], (*[32]float32)(x), bits)
		y, x = y[blockBytes:], x[32:]
	}
}

// symRefBlock quantizes one block for quantizeSymRef. A function of its own
// keeps the per-block values in registers.
func symRefBlock(b []byte, xb *[32]float32, bits int) {
	half := float32(int(1) << (bits - 1))
	top := int32(1<<bits - 1)
	amax, max, nan := absMaxSignedNaN(xb[:])
	d := max / -half
	var id float32
	if d != 0 {
		id = 1 / d
	}
	putF16(b, d)
	// With finite values and a finite 1/d every x/d + half + 0.5 lies
	// within [0, 2*half+1], where a plain conversion is cvttss2si; otherwise
	// cvtt32 reproduces its out-of-range result.
	finite := !nan && amax <= math.MaxFloat32 && abs32(id) <= math.MaxFloat32
	var L [32]uint8
	for j, v := range xb {
		t := float32(v*id) + (half + 0.5)
		var l int32
		if finite {
			l = int32(t)
		} else {
			l = cvtt32(t)
		}
		// ggml's MIN(2^bits-1, (int8_t)t): the cast keeps the low byte.
		L[j] = uint8(min(top, int32(int8(l))))
	}
	packLegacy(b[2:], &L, bits)
}

func quantizeQ4_0Ref(y []byte, x []float32) { quantizeSymRef(y, x, 4) }

func dequantizeQ4_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for j := 0; j < 16; j++ {
			y[j] = float32(int(x[2+j]&0xf)-8) * d
			y[j+16] = float32(int(x[2+j]>>4)-8) * d
		}
		y, x = y[32:], x[18:]
	}
}

// quantizeMinRef is quantize_row_q4_1_ref (bits 4) and
// quantize_row_q5_1_ref (bits 5): d = (max-min)/(2^bits-1), levels
// trunc((x-min)/d + 0.5), Q4_1 capping at 15 as ggml does.
func quantizeMinRef(y []byte, x []float32, bits int) {
	nmax := 1<<bits - 1
	blockBytes := 4 + 16 + 4*(bits-4)
	var L [32]uint8
	for len(x) > 0 {
		if n := minBlocks(y, x, bits); n > 0 {
			y, x = y[blockBytes*n:], x[32*n:]
			continue
		}
		b, xb := y[:blockBytes], x[:32]
		lo, id := minScale(b, xb, float32(nmax))
		for j, v := range xb {
			xi := cvtt32(float32((v-lo)*id) + 0.5)
			if bits == 4 {
				L[j] = uint8(min(15, int8(xi)))
			} else {
				L[j] = uint8(xi)
			}
		}
		packLegacy(b[4:], &L, bits)
		y, x = y[blockBytes:], x[32:]
	}
}

func quantizeQ4_1Ref(y []byte, x []float32) { quantizeMinRef(y, x, 4) }

func dequantizeQ4_1(y []float32, x []byte) {
	for len(x) > 0 {
		d, m := getF16(x), getF16(x[2:])
		for j := 0; j < 16; j++ {
			y[j] = float32(float32(x[4+j]&0xf)*d) + m
			y[j+16] = float32(float32(x[4+j]>>4)*d) + m
		}
		y, x = y[32:], x[20:]
	}
}

func quantizeQ5_0Ref(y []byte, x []float32) { quantizeSymRef(y, x, 5) }

func dequantizeQ5_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		qh := le.Uint32(x[2:])
		for j := 0; j < 16; j++ {
			xh0 := uint8(qh>>j<<4) & 0x10
			xh1 := uint8(qh>>(j+12)) & 0x10
			y[j] = float32(int(x[6+j]&0xf|xh0)-16) * d
			y[j+16] = float32(int(x[6+j]>>4|xh1)-16) * d
		}
		y, x = y[32:], x[22:]
	}
}

func quantizeQ5_1Ref(y []byte, x []float32) { quantizeMinRef(y, x, 5) }

func dequantizeQ5_1(y []float32, x []byte) {
	for len(x) > 0 {
		d, m := getF16(x), getF16(x[2:])
		qh := le.Uint32(x[4:])
		for j := 0; j < 16; j++ {
			xh0 := uint8(qh>>j<<4) & 0x10
			xh1 := uint8(qh>>(j+12)) & 0x10
			y[j] = float32(float32(x[8+j]&0xf|xh0)*d) + m
			y[j+16] = float32(float32(x[8+j]>>4|xh1)*d) + m
		}
		y, x = y[32:], x[24:]
	}
}

// q8Scale stores the scale max|x|/127 of a Q8_0/Q8_1 block at b and
// returns it with its inverse (0 for an all-zero block).
func q8Scale(b []byte, xb []float32) (d, id float32) {
	d = absMax(xb) / 127
	if d != 0 {
		id = 1 / d
	}
	putF16(b, d)
	return d, id
}

func quantizeQ8_0Ref(y []byte, x []float32) {
	for len(x) >= 32 && len(y) >= 34 {
		if n := q8Blocks(y, x, false); n > 0 {
			y, x = y[34*n:], x[32*n:]
			continue
		}
		b, xb := y[:34:34], x[:32:32]
		_, id := q8Scale(b, xb)
		q := b[2:34:34]
		for j, v := range xb {
			q[j] = uint8(roundToInt32(v * id))
		}
		y, x = y[34:], x[32:]
	}
}

// maxC is C's MAX(a, b) macro, ((a) > (b) ? (a) : (b)): unlike Go's max it
// returns b when either is NaN.
func maxC(a, b float32) float32 {
	if a > b {
		return a
	}
	return b
}

func dequantizeQ8_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for j := 0; j < 32; j++ {
			y[j] = float32(int8(x[2+j])) * d
		}
		y, x = y[32:], x[34:]
	}
}

func quantizeQ8_1Ref(y []byte, x []float32) {
	for len(x) > 0 {
		if n := q8Blocks(y, x, true); n > 0 {
			y, x = y[36*n:], x[32*n:]
			continue
		}
		b, xb := y[:36], x[:32]
		d, id := q8Scale(b, xb)
		sum := 0
		for j := 0; j < 16; j++ {
			q0 := int8(roundToInt32(xb[j] * id))
			q1 := int8(roundToInt32(xb[16+j] * id))
			b[4+j], b[20+j] = uint8(q0), uint8(q1)
			sum += int(q0) + int(q1)
		}
		putF16(b[2:], float32(sum)*d)
		y, x = y[36:], x[32:]
	}
}

func quantizeQ1_0Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:18], x[:128]
		var sumAbs float32
		for _, v := range xb {
			sumAbs += abs32(v)
		}
		putF16(b, sumAbs/128)
		for j := range 16 {
			b[2+j] = 0
		}
		for j, v := range xb {
			if v >= 0 {
				b[2+j/8] |= 1 << (j % 8)
			}
		}
		y, x = y[18:], x[128:]
	}
}

func dequantizeQ1_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for j := 0; j < 128; j++ {
			if x[2+j/8]>>(j%8)&1 != 0 {
				y[j] = d
			} else {
				y[j] = -d
			}
		}
		y, x = y[128:], x[18:]
	}
}

func quantizeQ2_0Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:18], x[:64]
		var amax float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax = a
			}
		}
		d := amax
		var id float32
		if d > 0 {
			id = 1 / d
		}
		putF16(b, d)
		for j := range 16 {
			b[2+j] = 0
		}
		for j, v := range xb {
			q := roundToInt32(v*id) + 1
			q = max(0, min(3, q))
			b[2+j/4] |= uint8(q) << (2 * (j % 4))
		}
		y, x = y[18:], x[64:]
	}
}

func dequantizeQ2_0(y []float32, x []byte) {
	for len(x) > 0 {
		d := getF16(x)
		for j := 0; j < 64; j++ {
			q := int(x[2+j/4]>>(2*(j%4))) & 3
			y[j] = float32(q-1) * d
		}
		y, x = y[64:], x[18:]
	}
}

// rowSigma2 is sum(x^2)/n over a whole row, the variance floor the weighted
// legacy quantizers add to every element's weight.
func rowSigma2(x []float32) float32 {
	var s float32
	for _, v := range x {
		s += float32(v * v)
	}
	return s / float32(len(x))
}

// legacyWeights fills the weights of one 32-block of the legacy types:
// qw * sqrt(sigma2 + x^2), sigma2 being the row's mean square.
func legacyWeights(weight *[32]float32, xb, qw []float32, sigma2 float32) {
	for j := range weight {
		weight[j] = qw[j] * sqrtf(sigma2+float32(xb[j]*xb[j]))
	}
}

// quantizeLegacyImat is quantize_row_q{4,5}_{0,1}_impl with importance
// weights: make_qx_quants for the symmetric types, make_qkx3_quants (scale
// and min) for the _1 types.
func quantizeLegacyImat(y []byte, x, qw []float32, bits int, withMin bool) {
	sigma2 := rowSigma2(x)
	var weight [32]float32
	var L [32]uint8
	var Ls [32]int8
	off := 2
	if withMin {
		off = 4
	}
	blockBytes := off + 16 + 4*(bits-4)
	for len(x) > 0 {
		xb := x[:32]
		legacyWeights(&weight, xb, qw, sigma2)
		if withMin {
			d, min := makeQkxQuants(32, 1<<bits-1, xb, weight[:], L[:], -0.9, 0.05, 36, false)
			putF16(y, d)
			putF16(y[2:], -min)
		} else {
			putF16(y, makeQxQuants(32, 1<<(bits-1), xb, Ls[:], weight[:]))
			for j, l := range Ls {
				L[j] = uint8(l)
			}
		}
		packLegacy(y[off:], &L, bits)
		y, x, qw = y[blockBytes:], x[32:], qw[32:]
	}
}

func quantizeQ4_0Imat(y []byte, x, qw []float32) { quantizeLegacyImat(y, x, qw, 4, false) }
func quantizeQ5_0Imat(y []byte, x, qw []float32) { quantizeLegacyImat(y, x, qw, 5, false) }
func quantizeQ4_1Imat(y []byte, x, qw []float32) { quantizeLegacyImat(y, x, qw, 4, true) }
func quantizeQ5_1Imat(y []byte, x, qw []float32) { quantizeLegacyImat(y, x, qw, 5, true) }
