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
	for _, v := range x {
		if a := abs32(v); amax < a {
			amax, max = a, v
		}
	}
	return amax, max
}

func minMax(x []float32) (min, max float32) {
	min, max = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < min {
			min = v
		}
		if v > max {
			max = v
		}
	}
	return min, max
}

func quantizeQ4_0Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:18], x[:32]
		_, max := absMaxSigned(xb)
		d := max / -8
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		for j := 0; j < 16; j++ {
			x0 := float32(xb[j] * id)
			x1 := float32(xb[16+j] * id)
			xi0 := min(15, int8(cvtt32(x0+8.5)))
			xi1 := min(15, int8(cvtt32(x1+8.5)))
			b[2+j] = uint8(xi0) | uint8(xi1)<<4
		}
		y, x = y[18:], x[32:]
	}
}

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

func quantizeQ4_1Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:20], x[:32]
		lo, hi := minMax(xb)
		d := (hi - lo) / 15
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		putF16(b[2:], lo)
		for j := 0; j < 16; j++ {
			x0 := float32((xb[j] - lo) * id)
			x1 := float32((xb[16+j] - lo) * id)
			xi0 := uint8(min(15, int8(cvtt32(x0+0.5))))
			xi1 := uint8(min(15, int8(cvtt32(x1+0.5))))
			b[4+j] = xi0 | xi1<<4
		}
		y, x = y[20:], x[32:]
	}
}

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

func quantizeQ5_0Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:22], x[:32]
		_, max := absMaxSigned(xb)
		d := max / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		var qh uint32
		for j := 0; j < 16; j++ {
			xi0 := uint8(min(31, int8(cvtt32(float32(xb[j]*id)+16.5))))
			xi1 := uint8(min(31, int8(cvtt32(float32(xb[16+j]*id)+16.5))))
			b[6+j] = xi0&0xf | (xi1&0xf)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		le.PutUint32(b[2:], qh)
		y, x = y[22:], x[32:]
	}
}

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

func quantizeQ5_1Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:24], x[:32]
		lo, hi := minMax(xb)
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		putF16(b[2:], lo)
		var qh uint32
		for j := 0; j < 16; j++ {
			xi0 := uint8(cvtt32(float32((xb[j]-lo)*id) + 0.5))
			xi1 := uint8(cvtt32(float32((xb[16+j]-lo)*id) + 0.5))
			b[8+j] = xi0&0xf | (xi1&0xf)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		le.PutUint32(b[4:], qh)
		y, x = y[24:], x[32:]
	}
}

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

func quantizeQ8_0Ref(y []byte, x []float32) {
	for len(x) > 0 {
		b, xb := y[:34], x[:32]
		var amax float32
		for _, v := range xb {
			amax = maxC(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		for j, v := range xb {
			b[2+j] = uint8(cvtt32(roundf(v * id)))
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

// minC is C's MIN(a, b) macro, ((a) < (b) ? (a) : (b)).
func minC(a, b float32) float32 {
	if a < b {
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
		b, xb := y[:36], x[:32]
		var amax float32
		for _, v := range xb {
			amax = maxC(amax, abs32(v))
		}
		d := amax / 127
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(b, d)
		sum := 0
		for j := 0; j < 16; j++ {
			q0 := int8(cvtt32(roundf(xb[j] * id)))
			q1 := int8(cvtt32(roundf(xb[16+j] * id)))
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
			q := cvtt32(roundf(v*id)) + 1
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

// quantizeQ4_0Imat is quantize_row_q4_0_impl with importance weights.
func quantizeQ4_0Imat(y []byte, x, qw []float32) {
	sigma2 := rowSigma2(x)
	var weight [32]float32
	var L [32]int8
	for len(x) > 0 {
		xb := x[:32]
		for j := range 32 {
			weight[j] = qw[j] * sqrtf(sigma2+float32(xb[j]*xb[j]))
		}
		d := makeQxQuants(32, 8, xb, L[:], 1, weight[:])
		putF16(y, d)
		for j := range 16 {
			y[2+j] = uint8(L[j]) | uint8(L[j+16])<<4
		}
		y, x, qw = y[18:], x[32:], qw[32:]
	}
}

func quantizeQ5_0Imat(y []byte, x, qw []float32) {
	sigma2 := rowSigma2(x)
	var weight [32]float32
	var L [32]int8
	for len(x) > 0 {
		xb := x[:32]
		for j := range 32 {
			weight[j] = qw[j] * sqrtf(sigma2+float32(xb[j]*xb[j]))
		}
		d := makeQxQuants(32, 16, xb, L[:], 1, weight[:])
		putF16(y, d)
		var qh uint32
		for j := range 16 {
			xi0, xi1 := uint8(L[j]), uint8(L[j+16])
			y[6+j] = xi0&0xf | (xi1&0xf)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		le.PutUint32(y[2:], qh)
		y, x, qw = y[22:], x[32:], qw[32:]
	}
}

func quantizeQ4_1Imat(y []byte, x, qw []float32) {
	sigma2 := rowSigma2(x)
	var weight [32]float32
	var L, Laux [32]uint8
	for len(x) > 0 {
		xb := x[:32]
		for j := range 32 {
			weight[j] = qw[j] * sqrtf(sigma2+float32(xb[j]*xb[j]))
		}
		d, min := makeQkx3Quants(32, 15, xb, weight[:], L[:], Laux[:], -0.9, 0.05, 36, false)
		putF16(y, d)
		putF16(y[2:], -min)
		for j := range 16 {
			y[4+j] = L[j] | L[j+16]<<4
		}
		y, x, qw = y[20:], x[32:], qw[32:]
	}
}

func quantizeQ5_1Imat(y []byte, x, qw []float32) {
	sigma2 := rowSigma2(x)
	var weight [32]float32
	var L, Laux [32]uint8
	for len(x) > 0 {
		xb := x[:32]
		for j := range 32 {
			weight[j] = qw[j] * sqrtf(sigma2+float32(xb[j]*xb[j]))
		}
		d, min := makeQkx3Quants(32, 31, xb, weight[:], L[:], Laux[:], -0.9, 0.05, 36, false)
		putF16(y, d)
		putF16(y[2:], -min)
		var qh uint32
		for j := range 16 {
			xi0, xi1 := L[j], L[j+16]
			y[8+j] = xi0&0xf | (xi1&0xf)<<4
			qh |= uint32(xi0&0x10) >> 4 << j
			qh |= uint32(xi1&0x10) >> 4 << (j + 16)
		}
		le.PutUint32(y[4:], qh)
		y, x, qw = y[24:], x[32:], qw[32:]
	}
}
