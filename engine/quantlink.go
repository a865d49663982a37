package engine

import (
	"fmt"
	"math"

	"github.com/ggufkit/gguf/gguf"
)

// This file is the engine's only link to the block codecs. Until the quant
// package's Quantize and Dequantize land in this repository it carries the
// few conversions the engine needs (half floats, the activation quantizers
// Q8_0/Q8_1/Q8_K, dequantization of the float, Q8_0, Q2_K, Q4_K and Q6_K
// types, written from ggml's formulas); then every function here becomes a
// one-line call into quant.

// f16tab maps every half-float bit pattern to its float32 value, so kernels
// read scales with one load (ggml-cpu keeps the same table).
var f16tab = func() (t [1 << 16]float32) {
	for i := range t {
		t[i] = fp16ToFP32(uint16(i))
	}
	return
}()

func fp16ToFP32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(man) / (1 << 24)
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}

// fp32ToFP16 rounds to nearest even, as ggml's GGML_FP32_TO_FP16 (F16C).
func fp32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	man := b & 0x7fffff
	if b&0x7fffffff > 0x7f800000 { // NaN
		return sign | 0x7e00
	}
	if exp >= 0x1f {
		return sign | 0x7c00
	}
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - exp)
		h := man >> shift
		rem := man & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | man>>13
	rem := man & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}

// fp32ToBF16 rounds to nearest even, as ggml's GGML_FP32_TO_BF16.
func fp32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + (u>>16)&1)) >> 16)
}

// nearestInt is ggml's nearest_int: round half to even via the float trick.
func nearestInt(f float32) int32 {
	v := f + 12582912
	return int32(math.Float32bits(v)&0x007fffff) - 0x00400000
}

// quantizeAct converts an activation row to the vec_dot_type t, exactly as
// ggml's reference quantizers (which ggml-cpu's from_float equals for
// these types).
func quantizeAct(t gguf.Type, dst []byte, src []float32) error {
	switch t {
	case gguf.TypeF32:
		copy(f32s(dst), src)
	case gguf.TypeF16:
		for i, v := range src {
			h := fp32ToFP16(v)
			dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
		}
	case gguf.TypeBF16:
		for i, v := range src {
			h := fp32ToBF16(v)
			dst[2*i], dst[2*i+1] = byte(h), byte(h>>8)
		}
	case gguf.TypeQ8_0, gguf.TypeQ8_1:
		bs := q8_0Bytes
		qo := 2
		if t == gguf.TypeQ8_1 {
			bs, qo = q8_1Bytes, 4
		}
		for ib := 0; ib < len(src)/32; ib++ {
			x := src[ib*32 : ib*32+32]
			y := dst[ib*bs : ib*bs+bs]
			amax := float32(0)
			for _, v := range x {
				amax = max(amax, float32(math.Abs(float64(v))))
			}
			d := amax / 127
			id := float32(0)
			if d != 0 {
				id = 1 / d
			}
			h := fp32ToFP16(d)
			y[0], y[1] = byte(h), byte(h>>8)
			sum := int32(0)
			for j, v := range x {
				q := int32(math.Round(float64(v * id)))
				y[qo+j] = byte(int8(q))
				sum += q
			}
			if t == gguf.TypeQ8_1 {
				s := fp32ToFP16(float32(sum) * d)
				y[2], y[3] = byte(s), byte(s>>8)
			}
		}
	case gguf.TypeQ8_K:
		for ib := 0; ib < len(src)/256; ib++ {
			x := src[ib*256 : ib*256+256]
			y := dst[ib*q8_KBytes : (ib+1)*q8_KBytes]
			var amax, vmax float32
			for _, v := range x {
				if a := float32(math.Abs(float64(v))); a > amax {
					amax, vmax = a, v
				}
			}
			clear(y)
			if amax == 0 {
				continue
			}
			iscale := -127 / vmax
			for j, v := range x {
				y[4+j] = byte(int8(min(127, nearestInt(iscale*v))))
			}
			for j := 0; j < 16; j++ {
				s := int32(0)
				for k := 0; k < 16; k++ {
					s += int32(int8(y[4+j*16+k]))
				}
				y[260+2*j], y[261+2*j] = byte(s), byte(s>>8)
			}
			bits := math.Float32bits(1 / iscale)
			y[0], y[1], y[2], y[3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
	default:
		return fmt.Errorf("no activation quantizer for %s", t)
	}
	return nil
}

// dequantizeRow converts one row of type t to float32.
func dequantizeRow(t gguf.Type, dst []float32, src []byte) error {
	switch t {
	case gguf.TypeF32:
		copy(dst, f32s(src))
	case gguf.TypeF16:
		for i := range dst {
			dst[i] = f16tab[le16(src[2*i:])]
		}
	case gguf.TypeBF16:
		for i := range dst {
			dst[i] = bf16f(src[2*i:])
		}
	case gguf.TypeQ8_0:
		for ib := 0; ib < len(dst)/32; ib++ {
			x := src[ib*q8_0Bytes:]
			d := f16(x)
			for j := 0; j < 32; j++ {
				dst[ib*32+j] = float32(int8(x[2+j])) * d
			}
		}
	case gguf.TypeQ4_K:
		for i := 0; i < len(dst)/256; i++ {
			x, y := src[i*q4_KBytes:], dst[i*256:]
			d, dmin := f16(x), f16(x[2:])
			sc, mn := kScales(x[4:16])
			for j := 0; j < 4; j++ {
				d1, m1 := d*float32(sc[2*j]), dmin*float32(mn[2*j])
				d2, m2 := d*float32(sc[2*j+1]), dmin*float32(mn[2*j+1])
				for l := 0; l < 32; l++ {
					q := x[16+32*j+l]
					y[64*j+l] = d1*float32(q&0xF) - m1
					y[64*j+32+l] = d2*float32(q>>4) - m2
				}
			}
		}
	case gguf.TypeQ6_K:
		var aux [256]int8
		for i := 0; i < len(dst)/256; i++ {
			x, y := src[i*q6_KBytes:], dst[i*256:]
			q6Unpack(x, &aux)
			d := f16(x[208:])
			for k := 0; k < 256; k++ {
				y[k] = d * float32(int8(x[192+k/16])) * float32(aux[k])
			}
		}
	case gguf.TypeQ2_K:
		for i := 0; i < len(dst)/256; i++ {
			x, y := src[i*q2_KBytes:], dst[i*256:]
			d, dmin := f16(x[80:]), f16(x[82:])
			is := 0
			for k := 0; k < 2; k++ {
				for j := 0; j < 4; j++ {
					for h := 0; h < 2; h++ {
						sc := x[is]
						is++
						dl, ml := d*float32(sc&0xF), dmin*float32(sc>>4)
						for l := 0; l < 16; l++ {
							q := x[16+32*k+16*h+l]
							y[128*k+32*j+16*h+l] = dl*float32((q>>(2*uint(j)))&3) - ml
						}
					}
				}
			}
		}
	default:
		return fmt.Errorf("dequantizing %s is not available yet", t)
	}
	return nil
}
