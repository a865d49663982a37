package quant

import (
	"math"
)

// FP16ToFP32 converts an IEEE binary16 value to float32 as ggml's
// ggml_compute_fp16_to_fp32 does. Every half value is exactly representable;
// the one observable detail is that ggml computes infinities and NaNs with a
// float multiply, which quiets a signalling NaN (sets the top mantissa bit).
func FP16ToFP32(h uint16) float32 { return fp16Table[h] }

// fp16Table holds every conversion (256 KiB): dequantizers call FP16ToFP32
// once per block or element, and a load beats the branches.
var fp16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for h := range t {
		t[h] = fp16ToFP32(uint16(h))
	}
	return &t
}()

func fp16ToFP32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		bits := sign | 0x7f800000 | man<<13
		if man != 0 {
			bits |= 0x00400000
		}
		return math.Float32frombits(bits)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	default:
		// Zero or subnormal: man * 2^-24, exact in float32.
		v := float32(man) * 0x1p-24
		return math.Float32frombits(sign | math.Float32bits(v))
	}
}

// FP32ToFP16 converts a float32 to IEEE binary16 exactly as ggml's
// ggml_compute_fp32_to_fp16 (the FP16 library trick ggml-base uses for every
// quantizer): round to nearest even, overflow to infinity, subnormals kept,
// and every NaN becomes 0x7E00 with the input's sign.
//
// It is one expression on purpose: at this size the compiler inlines it
// (the F16 conversion and every block scale go through it) and turns both
// selections into conditional moves.
func FP32ToFP16(f float32) uint16 {
	w := math.Float32bits(f)
	// |f|*2^112*2^-110 (each product rounded on its own: the explicit
	// conversions forbid a fused multiply-add, as in the C code) plus a
	// power of two that makes the float addition round to ten mantissa bits.
	bits := math.Float32bits(math.Float32frombits(max(w<<1&0xff000000, 0x71000000)>>1+0x07800000) + float32(float32(math.Float32frombits(w&0x7fffffff)*0x1p+112)*0x1p-110))
	h := bits>>13&0x7c00 + bits&0x0fff
	if f != f { // NaN
		h = 0x7e00
	}
	return uint16(w>>16&0x8000 | h)
}

// BF16ToFP32 converts a bfloat16 to float32 (ggml_compute_bf16_to_fp32: the
// bits shifted into the top half, NaN payloads untouched).
func BF16ToFP32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// FP32ToBF16 converts a float32 to bfloat16 as ggml's GGML_FP32_TO_BF16:
// round to nearest even; a NaN keeps its top bits and is forced quiet.
func FP32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 64
	}
	return uint16((u + (0x7fff + ((u >> 16) & 1))) >> 16)
}

// E8M0ToFP32 decodes an OCP E8M0 scale (2^(x-127)) as ggml_e8m0_to_fp32;
// like ggml it has no NaN for 0xFF.
func E8M0ToFP32(x uint8) float32 {
	if x == 0 {
		return math.Float32frombits(0x00400000)
	}
	return math.Float32frombits(uint32(x) << 23)
}

// E8M0ToFP32Half returns half of E8M0ToFP32(x) (ggml_e8m0_to_fp32_half),
// the scale MXFP4 uses because ggml stores its E2M1 values doubled.
func E8M0ToFP32Half(x uint8) float32 {
	if x < 2 {
		return math.Float32frombits(0x00200000 << x)
	}
	return math.Float32frombits(uint32(x-1) << 23)
}

// UE4M3ToFP32 decodes an unsigned E4M3 scale (NVFP4) as ggml_ue4m3_to_fp32,
// including ggml's factor 0.5 (its E2M1 table is doubled) and its mapping of
// 0x7F (the NaN code) to zero.
func UE4M3ToFP32(x uint8) float32 {
	if x == 0 || x == 0x7f {
		return 0
	}
	exp := int(x>>3) & 0xf
	man := int(x & 7)
	var raw float32
	if exp == 0 {
		raw = float32(man) * 0x1p-9
	} else {
		// ldexpf(1 + man/8, exp-7): both steps are exact.
		raw = float32(math.Ldexp(float64(1+float32(float32(man)/8)), exp-7))
	}
	return raw * 0.5
}

// FP32ToUE4M3 encodes a scale as ggml_fp32_to_ue4m3: non-positive and NaN
// give 0, values are clamped to 448, rounding is half-up on the mantissa and
// the largest code produced is 0x7E.
func FP32ToUE4M3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	if x > 448 {
		x = 448
	}
	bits := math.Float32bits(x)
	fexp := int((bits>>23)&0xff) - 127
	fman := int((bits >> 20) & 7)
	uexp := fexp + 7
	if uexp <= 0 {
		man := int(cvtt32(float32(x*512) + 0.5))
		if man > 7 {
			man = 7
		}
		if man < 1 {
			return 0
		}
		return uint8(man)
	}
	if uexp >= 15 {
		return 0x7e
	}
	uman := fman + int((bits>>19)&1)
	if uman > 7 {
		uman = 0
		uexp++
		if uexp >= 15 {
			return 0x7e
		}
	}
	return uint8(uexp<<3 | uman)
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ 0x80000000) }

// cvtt32 converts like x86's cvttss2si, which is what gcc emits for C's
// float-to-integer casts: truncation toward zero, and the "integer
// indefinite" value INT32_MIN for NaN and out-of-range inputs. C leaves the
// out-of-range case undefined; matching the machine the reference ran on
// keeps hostile inputs deterministic instead of platform-dependent.
func cvtt32(x float32) int32 {
	if !(x > -2147483904 && x < 2147483648) { // also catches NaN
		return math.MinInt32
	}
	return int32(x)
}

// roundToInt32 is (int)roundf(x) as gcc compiles it on x86-64: C's roundf
// (halfway cases away from zero), then cvttss2si (cvtt32). Adding the
// largest float below 0.5 with x's sign and truncating gives the same
// integer for every one of the 2^32 float32 inputs (checked exhaustively
// against math.Round; TestRoundToInt32 keeps a sample), without a float64
// round trip.
func roundToInt32(x float32) int32 {
	// float32(x): a caller's x*y must not fuse with this add (arm64 FMA).
	return cvtt32(float32(x) + math.Float32frombits(0x3effffff|math.Float32bits(x)&0x80000000))
}

// nearestInt is ggml's nearest_int: the float add of 1.5*2^23 puts the
// rounded integer (to nearest even) in the low mantissa bits. Reproducing the
// trick, not its intent, keeps out-of-range and NaN inputs bit-identical.
func nearestInt(f float32) int32 {
	v := float32(f) + 12582912 // float32(f): a caller's f = x*y must not fuse with this add
	i := int32(math.Float32bits(v))
	return (i & 0x007fffff) - 0x00400000
}

// sqrtf is C's sqrtf (correctly rounded, so float64 sqrt then rounding to
// float32 gives the same bits).
func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// log2f stands in for glibc's log2f, whose result is correctly rounded for
// the arguments ggml passes (positive finite floats).
func log2f(x float32) float32 { return float32(math.Log2(float64(x))) }

// floor32 is C's floorf.
func floor32(x float32) float32 { return float32(math.Floor(float64(x))) }
