package kernels

import "unsafe"

// Fast portable dot products. They compute the same integer sums as the
// reference kernels, restructured for Go's compiler: whole blocks at a time
// with bounds checks hoisted, several independent accumulators, and one
// float multiply per block (or super-block) instead of per lane. Float
// rounding can therefore differ from the reference in the last bits only.

func i8s(b []byte) []int8 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(b))), len(b))
}

func dotF32Go(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		xx, yy := x[i:i+8:i+8], y[i:i+8:i+8]
		s0 += float32(xx[0] * yy[0])
		s1 += float32(xx[1] * yy[1])
		s2 += float32(xx[2] * yy[2])
		s3 += float32(xx[3] * yy[3])
		s4 += float32(xx[4] * yy[4])
		s5 += float32(xx[5] * yy[5])
		s6 += float32(xx[6] * yy[6])
		s7 += float32(xx[7] * yy[7])
	}
	for ; i < len(x); i++ {
		s0 += float32(x[i] * y[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func dotF16(n int, w, a []byte) float32 {
	var s [4]float32
	return f16Sums(&s, w[:2*n], a[:2*n])
}

// f16Sums continues dotF16's four sums s (s[k] sums the products of the
// elements k mod 4, in order; a tail of fewer than 4 goes to s[0]) over
// the halves of w and a, and returns their total, (s0+s1)+(s2+s3): the
// order every architecture's F16 kernel follows.
func f16Sums(s *[4]float32, w, a []byte) float32 {
	a = a[:len(w)]
	s0, s1, s2, s3 := s[0], s[1], s[2], s[3]
	i := 0
	for ; i+8 <= len(w); i += 8 {
		ww, aa := w[i:i+8:i+8], a[i:i+8:i+8]
		s0 += float32(f16tab[uint16(ww[0])|uint16(ww[1])<<8] * f16tab[uint16(aa[0])|uint16(aa[1])<<8])
		s1 += float32(f16tab[uint16(ww[2])|uint16(ww[3])<<8] * f16tab[uint16(aa[2])|uint16(aa[3])<<8])
		s2 += float32(f16tab[uint16(ww[4])|uint16(ww[5])<<8] * f16tab[uint16(aa[4])|uint16(aa[5])<<8])
		s3 += float32(f16tab[uint16(ww[6])|uint16(ww[7])<<8] * f16tab[uint16(aa[6])|uint16(aa[7])<<8])
	}
	for ; i+1 < len(w); i += 2 {
		s0 += float32(f16tab[le16(w[i:])] * f16tab[le16(a[i:])])
	}
	return (s0 + s1) + (s2 + s3)
}

func dotBF16(n int, w, a []byte) float32 {
	var s0, s1 float32
	i := 0
	for ; i+4 <= 2*n; i += 4 {
		s0 += float32(bf16f(w[i:]) * bf16f(a[i:]))
		s1 += float32(bf16f(w[i+2:]) * bf16f(a[i+2:]))
	}
	for ; i < 2*n; i += 2 {
		s0 += float32(bf16f(w[i:]) * bf16f(a[i:]))
	}
	return s0 + s1
}

// sum32 returns the integer dot product of 32 int8 pairs.
func sum32(x, y []int8) int32 {
	x, y = x[:32:32], y[:32:32]
	var s0, s1, s2, s3 int32
	for j := 0; j < 32; j += 4 {
		s0 += int32(x[j]) * int32(y[j])
		s1 += int32(x[j+1]) * int32(y[j+1])
		s2 += int32(x[j+2]) * int32(y[j+2])
		s3 += int32(x[j+3]) * int32(y[j+3])
	}
	return (s0 + s1) + (s2 + s3)
}

func dotQ8_0Go(n int, w, a []byte) float32 {
	nb := n / 32
	w, a = w[:nb*q8_0Bytes], a[:nb*q8_0Bytes]
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		x, y := w[ib*q8_0Bytes:(ib+1)*q8_0Bytes], a[ib*q8_0Bytes:(ib+1)*q8_0Bytes]
		sumf = q8_0Add(sumf, sum32(i8s(x[2:]), i8s(y[2:])), x, y)
	}
	return sumf
}

// q8_0Add adds one block's integer sum sumi, scaled by its weight block
// x's and activation block y's scales, to sumf: the float step of every
// q8_0 kernel, unfused (float32() stops Go's arm64 FMA contraction), so all
// architectures round alike.
func q8_0Add(sumf float32, sumi int32, x, y []byte) float32 {
	return sumf + float32(float32(sumi)*(f16tab[le16(x)]*f16tab[le16(y)]))
}

func dotQ4_0Go(n int, w, a []byte) float32 {
	nb := n / 32
	w, a = w[:nb*q4_0Bytes], a[:nb*q8_0Bytes]
	var sumf float32
	for ib := 0; ib < nb; ib++ {
		x := w[ib*q4_0Bytes : (ib+1)*q4_0Bytes]
		y := i8s(a[ib*q8_0Bytes+2 : (ib+1)*q8_0Bytes])
		qs := x[2:18:18]
		y = y[:32:32]
		var s0, s1 int32
		for j := 0; j < 16; j += 2 {
			s0 += (int32(qs[j]&0xF)-8)*int32(y[j]) + (int32(qs[j+1]&0xF)-8)*int32(y[j+1])
			s1 += (int32(qs[j]>>4)-8)*int32(y[j+16]) + (int32(qs[j+1]>>4)-8)*int32(y[j+17])
		}
		sumf += float32(float32(s0+s1) * f16tab[le16(x)] * f16tab[le16(a[ib*q8_0Bytes:])])
	}
	return sumf
}

func dotQ2_KGo(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x := w[i*q2_KBytes : (i+1)*q2_KBytes]
		y := a[i*q8_KBytes : (i+1)*q8_KBytes]
		sc := x[:16:16]
		q2 := x[16:80:80]
		q8 := i8s(y[4:260:260])
		isum := int32(0)
		for k := 0; k < 2; k++ {
			q := q2[k*32 : k*32+32 : k*32+32]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				p := q8[k*128+j*32 : k*128+j*32+32 : k*128+j*32+32]
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					s0 += int32(p[l]) * int32((q[l]>>shift)&3)
					s1 += int32(p[l+16]) * int32((q[l+16]>>shift)&3)
				}
				isum += int32(sc[k*8+2*j]&0xF)*s0 + int32(sc[k*8+2*j+1]&0xF)*s1
			}
		}
		sumf = q2_KAdd(sumf, isum, q2_KMins(x, y), x, y)
	}
	return sumf
}

// q2_KMins is the mins term of a Q2_K super-block: each 16-value group's
// activation sum times its 4-bit min.
func q2_KMins(x, y []byte) int32 {
	sc, bs := x[:16:16], y[260:292:292]
	summs := int32(0)
	for j := 0; j < 16; j++ {
		summs += int32(int16(uint16(bs[2*j])|uint16(bs[2*j+1])<<8)) * int32(sc[j]>>4)
	}
	return summs
}

// q2_KAdd adds a Q2_K super-block to sumf as q4_KAdd does (ggml's order:
// activation scale first).
func q2_KAdd(sumf float32, isum, summs int32, x, y []byte) float32 {
	return q2_KAddScaled(sumf, isum, summs, lef32(y), f16tab[le16(x[80:])], f16tab[le16(x[82:])])
}

// q2_KAddScaled is q2_KAdd given the scales: the activation block's yd and
// the weight block's d and dmin (q2lut keeps them away from the codes).
func q2_KAddScaled(sumf float32, isum, summs int32, yd, d, dmin float32) float32 {
	return sumf + float32(float32(yd*d*float32(isum))-float32(yd*dmin*float32(summs)))
}

// kMinsSum is the mins term of a Q4_K/Q5_K super-block: each 32-value
// group's activation sum (two q8_K block sums) times its 6-bit min.
func kMinsSum(bs []byte, mn *[8]uint8) int32 {
	summ := int32(0)
	for j := 0; j < 8; j++ {
		b0 := int32(int16(uint16(bs[4*j]) | uint16(bs[4*j+1])<<8))
		b1 := int32(int16(uint16(bs[4*j+2]) | uint16(bs[4*j+3])<<8))
		summ += (b0 + b1) * int32(mn[j])
	}
	return summ
}

func dotQ4_KGo(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x := w[i*q4_KBytes : (i+1)*q4_KBytes]
		y := a[i*q8_KBytes : (i+1)*q8_KBytes]
		sc, mn := kScales(x[4:16])
		q8 := i8s(y[4:260:260])
		bs := y[260:292:292]
		summ := kMinsSum(bs, &mn)
		isum := int32(0)
		for j := 0; j < 4; j++ {
			q := x[16+32*j : 48+32*j : 48+32*j]
			lo := q8[64*j : 64*j+32 : 64*j+32]
			hi := q8[64*j+32 : 64*j+64 : 64*j+64]
			var s0, s1, s2, s3 int32
			for l := 0; l < 32; l += 2 {
				s0 += int32(q[l]&0xF) * int32(lo[l])
				s1 += int32(q[l+1]&0xF) * int32(lo[l+1])
				s2 += int32(q[l]>>4) * int32(hi[l])
				s3 += int32(q[l+1]>>4) * int32(hi[l+1])
			}
			isum += int32(sc[2*j])*(s0+s1) + int32(sc[2*j+1])*(s2+s3)
		}
		sumf = q4_KAdd(sumf, isum, summ, x, y)
	}
	return sumf
}

// q4_KAdd adds one Q4_K (or Q5_K: same scale fields) super-block to sumf: isum, its scaled integer sum,
// times the super-block scale, less summ (its mins term) times the min
// scale, each product rounded before the subtraction (no FMA on any
// architecture).
func q4_KAdd(sumf float32, isum, summ int32, x, y []byte) float32 {
	yd := lef32(y)
	return sumf + float32(float32(f16tab[le16(x)]*yd*float32(isum))-float32(f16tab[le16(x[2:])]*yd*float32(summ)))
}

func dotQ6_KGo(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x := w[i*q6_KBytes : (i+1)*q6_KBytes]
		y := a[i*q8_KBytes : (i+1)*q8_KBytes]
		q8 := i8s(y[4:260:260])
		sc := i8s(x[192:208:208])
		isum := int32(0)
		for h := 0; h < 2; h++ {
			ql := x[64*h : 64*h+64 : 64*h+64]
			qh := x[128+32*h : 160+32*h : 160+32*h]
			p := q8[128*h : 128*h+128 : 128*h+128]
			s := sc[8*h : 8*h+8 : 8*h+8]
			var a0, a1, a2, a3, b0, b1, b2, b3 int32
			for l := 0; l < 16; l++ {
				a0 += (int32(ql[l]&0xF|(qh[l]&3)<<4) - 32) * int32(p[l])
				a1 += (int32(ql[l+32]&0xF|((qh[l]>>2)&3)<<4) - 32) * int32(p[l+32])
				a2 += (int32(ql[l]>>4|((qh[l]>>4)&3)<<4) - 32) * int32(p[l+64])
				a3 += (int32(ql[l+32]>>4|((qh[l]>>6)&3)<<4) - 32) * int32(p[l+96])
				b0 += (int32(ql[l+16]&0xF|(qh[l+16]&3)<<4) - 32) * int32(p[l+16])
				b1 += (int32(ql[l+48]&0xF|((qh[l+16]>>2)&3)<<4) - 32) * int32(p[l+48])
				b2 += (int32(ql[l+16]>>4|((qh[l+16]>>4)&3)<<4) - 32) * int32(p[l+80])
				b3 += (int32(ql[l+48]>>4|((qh[l+16]>>6)&3)<<4) - 32) * int32(p[l+112])
			}
			isum += int32(s[0])*a0 + int32(s[1])*b0 + int32(s[2])*a1 + int32(s[3])*b1 +
				int32(s[4])*a2 + int32(s[5])*b2 + int32(s[6])*a3 + int32(s[7])*b3
		}
		sumf = kAdd(sumf, isum, x[208:], y)
	}
	return sumf
}

// kAdd adds a k-quant super-block without mins (Q3_K, Q6_K) to sumf: isum,
// its scaled integer sum, times its f16 scale d and the activations' yd,
// rounded before the addition.
func kAdd(sumf float32, isum int32, d, y []byte) float32 {
	return sumf + float32(f16tab[le16(d)]*lef32(y)*float32(isum))
}

func dotQ3_KGo(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x := w[i*q3_KBytes : (i+1)*q3_KBytes]
		y := a[i*q8_KBytes : (i+1)*q8_KBytes]
		hm := x[:32:32]
		sc := q3Scales(x[96:108])
		q8 := i8s(y[4:260:260])
		isum := int32(0)
		for j := 0; j < 2; j++ {
			q := x[32+32*j : 64+32*j : 64+32*j]
			for s := 0; s < 4; s++ {
				// A value is its 2 low bits minus 4 unless its hmask bit
				// (bit 4j+s of hm[l]) is set: v = q - 4 + 4*h, no branch.
				shift, bit := uint(2*s), uint(4*j+s)
				p := q8[128*j+32*s : 128*j+32*s+32 : 128*j+32*s+32]
				var s0, s1 int32
				for l := 0; l < 16; l++ {
					s0 += (int32((q[l]>>shift)&3) - 4 + 4*int32((hm[l]>>bit)&1)) * int32(p[l])
					s1 += (int32((q[l+16]>>shift)&3) - 4 + 4*int32((hm[l+16]>>bit)&1)) * int32(p[l+16])
				}
				isum += int32(sc[8*j+2*s])*s0 + int32(sc[8*j+2*s+1])*s1
			}
		}
		sumf = kAdd(sumf, isum, x[108:], y)
	}
	return sumf
}

func dotQ5_KGo(n int, w, a []byte) float32 {
	var sumf float32
	for i := 0; i < n/256; i++ {
		x := w[i*q5_KBytes : (i+1)*q5_KBytes]
		y := a[i*q8_KBytes : (i+1)*q8_KBytes]
		sc, mn := kScales(x[4:16])
		qh := x[16:48:48]
		q8 := i8s(y[4:260:260])
		bs := y[260:292:292]
		summ := kMinsSum(bs, &mn)
		isum := int32(0)
		for j := 0; j < 4; j++ {
			q := x[48+32*j : 80+32*j : 80+32*j]
			lo := q8[64*j : 64*j+32 : 64*j+32]
			hi := q8[64*j+32 : 64*j+64 : 64*j+64]
			// The fifth bit of the low nibbles is bit 2j of qh[l], of the
			// high nibbles bit 2j+1.
			bl, bh := uint(2*j), uint(2*j+1)
			var s0, s1 int32
			for l := 0; l < 32; l++ {
				s0 += int32(q[l]&0xF|((qh[l]>>bl)&1)<<4) * int32(lo[l])
				s1 += int32(q[l]>>4|((qh[l]>>bh)&1)<<4) * int32(hi[l])
			}
			isum += int32(sc[2*j])*s0 + int32(sc[2*j+1])*s1
		}
		sumf = q4_KAdd(sumf, isum, summ, x, y)
	}
	return sumf
}

// u16s views a byte slice (2-byte aligned) as its little-endian halves.
func u16s(b []byte) []uint16 {
	if len(b) < 2 {
		return nil
	}
	return unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/2)
}
