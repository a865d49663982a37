package kernels

import (
	"encoding/binary"
	"math"
)

// Reference dot products: one weight row (in its ggml block layout) with one
// activation row (in the weight type's vec_dot_type layout), written as
// plainly as ggml-cpu's generic C kernels (quants.c "_generic" functions):
// integer sums per block, then float32 scaling in the same order. Every
// product is rounded to float32 before it is added (the float32()
// conversions): Go fuses x*y+z into one FMA on arm64 (not on amd64), which
// rounds once and, where a scale term nearly cancels the mins term of a
// k-quant, moved the logits of a Q5_K test model by 0.06 between the two;
// unfused, every architecture computes the same bits. The fast kernels are
// tested against these; these are tested against ggml's own results
// (../shared/refdata/quant/vecdot.txt).

func le16(b []byte) uint16   { return binary.LittleEndian.Uint16(b) }
func le32(b []byte) uint32   { return binary.LittleEndian.Uint32(b) }
func f16(b []byte) float32   { return f16tab[le16(b)] }
func lef32(b []byte) float32 { return math.Float32frombits(le32(b)) }

// Block sizes in bytes of the types the kernels read.
const (
	q8_0Bytes  = 34  // d f16, qs[32] int8
	q8_1Bytes  = 36  // d f16, s f16, qs[32] int8
	q8_KBytes  = 292 // d f32, qs[256] int8, bsums[16] int16
	q4_0Bytes  = 18  // d f16, qs[16]
	q4_1Bytes  = 20  // d f16, m f16, qs[16]
	iq4NLBytes = 18  // d f16, qs[16] (indexes into kvaluesIQ4NL)
	q5_0Bytes  = 22  // d f16, qh[4], qs[16]
	q5_1Bytes  = 24  // d f16, m f16, qh[4], qs[16]
	q2_KBytes  = 84  // scales[16], qs[64], d f16, dmin f16
	q3_KBytes  = 110 // hmask[32], qs[64], scales[12], d f16
	q4_KBytes  = 144 // d f16, dmin f16, scales[12], qs[128]
	q5_KBytes  = 176 // d f16, dmin f16, scales[12], qh[32], qs[128]
	q6_KBytes  = 210 // ql[128], qh[64], scales[16] int8, d f16
	q1_0Bytes  = 18  // d f16, qs[16]: 128 sign bits (set +d, clear -d)
	q2_0Bytes  = 18  // d f16, qs[16]: 64 2-bit q, weight (q-1)*d
)

func refDotF32(n int, w, a []byte) float32 {
	x, y := F32s(w)[:n], F32s(a)[:n]
	var s float32
	for i := range x {
		s += float32(x[i] * y[i])
	}
	return s
}

// refDotF16 accumulates in float64 as ggml's scalar ggml_vec_dot_f16 does.
func refDotF16(n int, w, a []byte) float32 {
	var s float64
	for i := 0; i < n; i++ {
		s += float64(f16tab[le16(w[2*i:])] * f16tab[le16(a[2*i:])])
	}
	return float32(s)
}

func bf16f(b []byte) float32 { return math.Float32frombits(uint32(le16(b)) << 16) }

// refDotBF16 accumulates in float64 as ggml's scalar ggml_vec_dot_bf16 does.
func refDotBF16(n int, w, a []byte) float32 {
	var s float64
	for i := 0; i < n; i++ {
		s += float64(bf16f(w[2*i:]) * bf16f(a[2*i:]))
	}
	return float32(s)
}

func refDotQ8_0(n int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < n/32; ib++ {
		x, y := w[ib*q8_0Bytes:], a[ib*q8_0Bytes:]
		sumi := int32(0)
		for j := 0; j < 32; j++ {
			sumi += int32(int8(x[2+j])) * int32(int8(y[2+j]))
		}
		sumf += float32(float32(sumi) * (f16(x) * f16(y)))
	}
	return sumf
}

func refDotQ4_0(n int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < n/32; ib++ {
		x, y := w[ib*q4_0Bytes:], a[ib*q8_0Bytes:]
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			v0 := int32(x[2+j]&0x0F) - 8
			v1 := int32(x[2+j]>>4) - 8
			s0 += v0 * int32(int8(y[2+j]))
			s1 += v1 * int32(int8(y[2+16+j]))
		}
		sumf += float32(float32(s0+s1) * f16(x) * f16(y))
	}
	return sumf
}

// refDotQ1_0 is ggml's generic q1_0 x q8_0 dot. A 128-weight block spans
// four q8_0 blocks: each one's integer sum (activations added where the
// sign bit is set, subtracted where it is clear) is scaled by its
// activation scale and summed in float32, and that sum once by the weight
// scale. The float32 conversions keep Go from fusing the multiply-adds
// (ggml's generic C does not).
func refDotQ1_0(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/128; i++ {
		x := w[i*q1_0Bytes:]
		var sumi float32
		for k := 0; k < 4; k++ {
			y := a[(4*i+k)*q8_0Bytes:]
			sb := int32(0)
			for j := 0; j < 32; j++ {
				v := int32(int8(y[2+j]))
				if x[2+4*k+j/8]>>(j%8)&1 == 0 {
					v = -v
				}
				sb += v
			}
			sumi += float32(f16(y) * float32(sb))
		}
		sumf += float32(f16(x) * sumi)
	}
	return sumf
}

// refDotQ2_0 is ggml's generic q2_0 x q8_0 dot: a 64-weight block spans
// two q8_0 blocks, summed as refDotQ1_0 sums its four, with weights q-1.
func refDotQ2_0(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/64; i++ {
		x := w[i*q2_0Bytes:]
		var sumi float32
		for k := 0; k < 2; k++ {
			y := a[(2*i+k)*q8_0Bytes:]
			sb := int32(0)
			for j := 0; j < 32; j++ {
				q := int32(x[2+8*k+j/4]>>(2*(j%4))) & 3
				sb += (q - 1) * int32(int8(y[2+j]))
			}
			sumi += float32(f16(y) * float32(sb))
		}
		sumf += float32(f16(x) * sumi)
	}
	return sumf
}

// kvaluesIQ4NL is ggml's kvalues_iq4nl, the 16 values an IQ4_NL nibble
// indexes.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// refDotIQ4NL is ggml's generic iq4_nl x q8_0 dot: per block the two
// halves' integer sums, times the product of the two scales.
func refDotIQ4NL(n int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < n/32; ib++ {
		sumf += iq4NLBlock(w[ib*iq4NLBytes:], a[ib*q8_0Bytes:])
	}
	return sumf
}

// iq4NLBlock is one block of refDotIQ4NL.
func iq4NLBlock(x, y []byte) float32 {
	var s0, s1 int32
	for j := 0; j < 16; j++ {
		s0 += int32(int8(y[2+j])) * int32(kvaluesIQ4NL[x[2+j]&0x0F])
		s1 += int32(int8(y[2+16+j])) * int32(kvaluesIQ4NL[x[2+j]>>4])
	}
	return float32(f16(y) * f16(x) * float32(s0+s1))
}

func refDotQ4_1(n int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < n/32; ib++ {
		x, y := w[ib*q4_1Bytes:], a[ib*q8_1Bytes:]
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			s0 += int32(x[4+j]&0x0F) * int32(int8(y[4+j]))
			s1 += int32(x[4+j]>>4) * int32(int8(y[4+16+j]))
		}
		sumf += float32(float32((f16(x)*f16(y))*float32(s0+s1)) + float32(f16(x[2:])*f16(y[2:])))
	}
	return sumf
}

func refDotQ5_0(n int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < n/32; ib++ {
		x, y := w[ib*q5_0Bytes:], a[ib*q8_0Bytes:]
		qh := le32(x[2:])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			h0 := byte((qh>>uint(j))&1) << 4
			h1 := byte((qh>>uint(j+16))&1) << 4
			x0 := int32(int8((x[6+j]&0x0F)|h0) - 16)
			x1 := int32(int8((x[6+j]>>4)|h1) - 16)
			s0 += x0 * int32(int8(y[2+j]))
			s1 += x1 * int32(int8(y[2+16+j]))
		}
		sumf += float32((f16(x) * f16(y)) * float32(s0+s1))
	}
	return sumf
}

func refDotQ5_1(n int, w, a []byte) float32 {
	var sumf float32
	for ib := 0; ib < n/32; ib++ {
		x, y := w[ib*q5_1Bytes:], a[ib*q8_1Bytes:]
		qh := le32(x[4:])
		var s0, s1 int32
		for j := 0; j < 16; j++ {
			h0 := byte((qh>>uint(j))&1) << 4
			h1 := byte((qh>>uint(j+16))&1) << 4
			s0 += int32((x[8+j]&0x0F)|h0) * int32(int8(y[4+j]))
			s1 += int32((x[8+j]>>4)|h1) * int32(int8(y[4+16+j]))
		}
		sumf += float32(float32((f16(x)*f16(y))*float32(s0+s1)) + float32(f16(x[2:])*f16(y[2:])))
	}
	return sumf
}

// q8K splits a Q8_K activation block into its fields.
func q8K(y []byte) (d float32, qs []byte, bsum func(j int) int32) {
	return lef32(y), y[4 : 4+256], func(j int) int32 { return int32(int16(le16(y[260+2*j:]))) }
}

func refDotQ2_K(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x, y := w[i*q2_KBytes:], a[i*q8_KBytes:]
		sc, q2 := x[:16], x[16:80]
		yd, q8, bsum := q8K(y)
		summs := int32(0)
		for j := 0; j < 16; j++ {
			summs += bsum(j) * int32(sc[j]>>4)
		}
		dall := yd * f16(x[80:])
		dmin := yd * f16(x[82:])
		isum, is := int32(0), 0
		for k := 0; k < 2; k++ {
			shift := uint(0)
			for j := 0; j < 4; j++ {
				d := int32(sc[is] & 0xF)
				is++
				isuml := int32(0)
				for l := 0; l < 16; l++ {
					isuml += int32(int8(q8[l])) * int32((q2[l]>>shift)&3)
				}
				isum += d * isuml
				d = int32(sc[is] & 0xF)
				is++
				isuml = 0
				for l := 16; l < 32; l++ {
					isuml += int32(int8(q8[l])) * int32((q2[l]>>shift)&3)
				}
				isum += d * isuml
				shift += 2
				q8 = q8[32:]
			}
			q2 = q2[32:]
		}
		sumf += float32(float32(dall*float32(isum)) - float32(dmin*float32(summs)))
	}
	return sumf
}

// kScales unpacks the 12 packed bytes of 6-bit scales and mins of Q4_K and
// Q5_K into 8 scales and 8 mins (ggml's get_scale_min_k4).
func kScales(p []byte) (sc, mn [8]uint8) {
	for j := 0; j < 4; j++ {
		sc[j] = p[j] & 63
		mn[j] = p[j+4] & 63
	}
	for j := 4; j < 8; j++ {
		sc[j] = (p[j+4] & 0xF) | ((p[j-4] >> 6) << 4)
		mn[j] = (p[j+4] >> 4) | ((p[j] >> 6) << 4)
	}
	return
}

// q3Scales unpacks Q3_K's 12 bytes into 16 signed 6-bit scales (minus 32).
func q3Scales(p []byte) (sc [16]int8) {
	for j := 0; j < 16; j++ {
		lo := (p[j%8] >> (4 * uint(j/8))) & 0xF
		hi := (p[8+j%4] >> (2 * uint(j/4))) & 3
		sc[j] = int8(lo|hi<<4) - 32
	}
	return
}

// refDotSub8 is the shared tail of ggml's generic k-quant dots: the
// unpacked weights a (256 int8) times q8 with one scale per 16 values,
// accumulated in 8 lanes exactly as the C code's aux32[8].
func refDotSub16(a *[256]int8, q8 []byte, scale func(j int) int32) (aux32 [8]int32) {
	for j := 0; j < 16; j++ {
		s := scale(j)
		for h := 0; h < 2; h++ {
			for l := 0; l < 8; l++ {
				k := j*16 + h*8 + l
				aux32[l] += s * (int32(int8(q8[k])) * int32(a[k]))
			}
		}
	}
	return
}

func refDotQ3_K(n int, w, a []byte) float32 {
	var sums [8]float32
	for i := 0; i < n/256; i++ {
		x, y := w[i*q3_KBytes:], a[i*q8_KBytes:]
		hm, q3 := x[:32], x[32:96]
		var aux [256]int8
		m := byte(1)
		for j := 0; j < 2; j++ {
			for s := uint(0); s < 8; s += 2 {
				base := j*128 + int(s/2)*32
				for l := 0; l < 32; l++ {
					v := int8((q3[j*32+l] >> s) & 3)
					if hm[l]&m == 0 {
						v -= 4
					}
					aux[base+l] = v
				}
				m <<= 1
			}
		}
		sc := q3Scales(x[96:108])
		yd, q8, _ := q8K(y)
		aux32 := refDotSub16(&aux, q8, func(j int) int32 { return int32(sc[j]) })
		d := f16(x[108:]) * yd
		for l := 0; l < 8; l++ {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	var sumf float32
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}

// refDotQ45K is ggml's generic Q4_K / Q5_K dot (high selects Q5_K's fifth bit).
func refDotQ45K(n int, w, a []byte, bytes int, high bool) float32 {
	var sums [8]float32
	var sumf float32
	for i := 0; i < n/256; i++ {
		x, y := w[i*bytes:], a[i*q8_KBytes:]
		var aux [256]int8
		q4 := x[16:]
		var qh []byte
		if high {
			qh, q4 = x[16:48], x[48:]
		}
		m := byte(1)
		for j := 0; j < 4; j++ {
			for l := 0; l < 32; l++ {
				lo, hi := int8(q4[l]&0xF), int8(q4[l]>>4)
				if high {
					if qh[l]&m != 0 {
						lo += 16
					}
					if qh[l]&(m<<1) != 0 {
						hi += 16
					}
				}
				aux[j*64+l], aux[j*64+32+l] = lo, hi
			}
			q4 = q4[32:]
			m <<= 2
		}
		sc, mn := kScales(x[4:16])
		yd, q8, bsum := q8K(y)
		sumi := int32(0)
		for j := 0; j < 16; j++ {
			sumi += bsum(j) * int32(mn[j/2])
		}
		aux32 := refDotSub16(&aux, q8, func(j int) int32 { return int32(sc[j/2]) })
		d := f16(x) * yd
		for l := 0; l < 8; l++ {
			sums[l] += float32(d * float32(aux32[l]))
		}
		dmin := f16(x[2:]) * yd
		sumf -= float32(dmin * float32(sumi))
	}
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}

func refDotQ4_K(n int, w, a []byte) float32 { return refDotQ45K(n, w, a, q4_KBytes, false) }
func refDotQ5_K(n int, w, a []byte) float32 { return refDotQ45K(n, w, a, q5_KBytes, true) }

// q6Unpack unpacks one Q6_K block into 256 signed values (-32..31).
func q6Unpack(x []byte, aux *[256]int8) {
	ql, qh := x[:128], x[128:192]
	for j := 0; j < 2; j++ {
		for l := 0; l < 32; l++ {
			aux[j*128+l] = int8((ql[l]&0xF)|((qh[l]>>0)&3)<<4) - 32
			aux[j*128+l+32] = int8((ql[l+32]&0xF)|((qh[l]>>2)&3)<<4) - 32
			aux[j*128+l+64] = int8((ql[l]>>4)|((qh[l]>>4)&3)<<4) - 32
			aux[j*128+l+96] = int8((ql[l+32]>>4)|((qh[l]>>6)&3)<<4) - 32
		}
		ql, qh = ql[64:], qh[32:]
	}
}

func refDotQ6_K(n int, w, a []byte) float32 {
	var sums [8]float32
	for i := 0; i < n/256; i++ {
		x, y := w[i*q6_KBytes:], a[i*q8_KBytes:]
		var aux [256]int8
		q6Unpack(x, &aux)
		sc := x[192:208]
		yd, q8, _ := q8K(y)
		aux32 := refDotSub16(&aux, q8, func(j int) int32 { return int32(int8(sc[j])) })
		d := f16(x[208:]) * yd
		for l := 0; l < 8; l++ {
			sums[l] += float32(d * float32(aux32[l]))
		}
	}
	var sumf float32
	for l := 0; l < 8; l++ {
		sumf += sums[l]
	}
	return sumf
}
