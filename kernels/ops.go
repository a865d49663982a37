package kernels

import (
	"math"
	"sync"
)

// The element-wise operations, in llama.cpp's (ggml-cpu's) operation order
// and precision, so that activations match llama.cpp's bit for bit as often
// as possible: a quantized model's activation rows are rounded to 8 bits
// before every matrix product, and a last-bit difference there can move a
// value across a rounding boundary.

func Sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// Expf is a float32 exponential computed in float64 (range reduction to
// |r| <= ln2/2, degree-9 Taylor polynomial, relative error ~1e-11) so that
// rounding to float32 gives the correctly rounded result as libm's Expf
// does, at a fraction of math.Exp's cost (softmax calls it per score).
func Expf(x float32) float32 {
	switch {
	case x != x:
		return x
	case x < -104: // below half the smallest subnormal
		return 0
	case x > 88.73:
		return float32(math.Inf(1))
	}
	// Adding and removing 1.5*2^52 rounds to the nearest integer.
	const log2e, ln2, magic = 1.4426950408889634, 0.6931471805599453, 6755399441055744.0
	xd := float64(x)
	// Every product is rounded before its sum (float64(...)): arm64 would
	// otherwise fuse them, and Expf must give the same bits everywhere.
	t := float64(xd*log2e) + magic
	k := t - magic
	r := xd - float64(k*ln2)
	p := float64(r*(1.0/362880)) + 1.0/40320
	p = float64(p*r) + 1.0/5040
	p = float64(p*r) + 1.0/720
	p = float64(p*r) + 1.0/120
	p = float64(p*r) + 1.0/24
	p = float64(p*r) + 1.0/6
	p = float64(p*r) + 1.0/2
	p = float64(p*r) + 1
	p = float64(p*r) + 1
	return float32(p * math.Float64frombits(uint64(int64(k)+1023)<<52))
}

// RMSNorm is ggml_rms_norm followed by ggml_mul with the weight: the sum of
// squares in float64, the scale 1/sqrt(mean + eps) in float32.
func RMSNorm(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / Sqrtf(mean+eps)
	w = w[:len(x)]
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = (v * scale) * w[i]
	}
}

// Softmax is ggml_soft_max's inner loop: subtract the max, Expf,
// sum in float64, multiply by the float32 reciprocal.
func Softmax(x []float32) {
	mx := negInf
	for _, v := range x {
		if v > mx {
			mx = v
		}
	}
	SoftmaxMax(x, mx)
}

// SoftmaxMax is Softmax with the maximum of x already known: the
// exponentials (expShift), their sum in float64 in index order, then x
// scaled by the float32 inverse of the sum, as ggml_vec_soft_max_f32 and
// ggml_vec_scale_f32 do.
func SoftmaxMax(x []float32, mx float32) {
	expShift(x, mx)
	var sum float64
	for _, e := range x {
		sum += float64(e)
	}
	inv := float32(1 / sum)
	for i := range x {
		x[i] *= inv
	}
}

// swigluGo is Swiglu element by element: silu(g) * u with
// silu(x) = x/(1+Expf(-x)), ggml_swiglu_split's formula.
func swigluGo(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		g[i] = v / (1 + Expf(-v)) * u[i]
	}
}

// Geglu is ggml_vec_geglu_f32 as ggml-cpu builds it (GGML_GELU_FP16):
// g[i] = gelu(g[i]) * u[i], the GELU of g rounded to half and looked up in
// a table of half-float results; 0 below -10 and g itself from 10.
func Geglu(g, u []float32) {
	t := geluTable()
	u = u[:len(g)]
	for i, v := range g {
		switch {
		case v <= -10:
			g[i] = 0
		case v >= 10:
			g[i] = v * u[i]
		default:
			g[i] = f16tab[t[f32ToF16(v)]] * u[i]
		}
	}
}

// geluTable is ggml_table_gelu_f16: for every half h, the half of
// ggml_gelu_f32(h), 0.5x(1 + tanh(sqrt(2/pi) x (1 + 0.044715 x^2))) in
// float32 (no fused multiply-adds, as ggml's C).
var geluTable = sync.OnceValue(func() *[1 << 16]uint16 {
	const a, c = float32(0.044715), float32(0.79788456080286535587989211986876)
	var t [1 << 16]uint16
	for i := range t {
		x := f16tab[i]
		in := float32(c*x) * (1 + float32(float32(a*x)*x))
		th := float32(math.Tanh(float64(in)))
		t[i] = f32ToF16(float32(0.5*x) * (1 + th))
	}
	return &t
})

// RopeCache fills cs with (cos, sin) pairs for one position as ggml's
// ggml_rope_cache_init does for rope type NORM without YaRN: theta starts
// at the position and is multiplied by base^(-2/n_dims) per pair, in
// float32; each frequency is divided by its factor (rope_freqs) if any.
func RopeCache(cs []float32, pos int, dims int, base, freqScale float32, factors []float32) {
	thetaScale := float32(math.Pow(float64(base), float64(float32(-2)/float32(dims))))
	theta := float32(pos)
	for i := 0; i < dims/2; i++ {
		t := theta
		if factors != nil {
			t /= factors[i]
		}
		t *= freqScale
		cs[2*i] = float32(math.Cos(float64(t)))
		cs[2*i+1] = float32(math.Sin(float64(t)))
		theta *= thetaScale
	}
}

// Rope rotates adjacent pairs (x[2i], x[2i+1]) of each head (NORM mode).
func Rope(x []float32, heads, headDim int, cs []float32) {
	n := len(cs)
	for h := 0; h < heads; h++ {
		v := x[h*headDim : h*headDim+n]
		for i := 0; i < n; i += 2 {
			c, s := cs[i], cs[i+1]
			x0, x1 := v[i], v[i+1]
			// each product rounded (arm64 would fuse one into the sum)
			v[i] = float32(x0*c) - float32(x1*s)
			v[i+1] = float32(x0*s) + float32(x1*c)
		}
	}
}

// RopeNeox rotates (x[i], x[i+n/2]) for i < n/2 of each head, n the
// rotated dimensions (len(cs)); the rest of the head is left as it is
// (partial RoPE), as ggml's rope in NEOX mode.
func RopeNeox(x []float32, heads, headDim int, cs []float32) {
	n := len(cs)
	half := n / 2
	for h := 0; h < heads; h++ {
		v := x[h*headDim : h*headDim+n]
		for i := 0; i < half; i++ {
			c, s := cs[2*i], cs[2*i+1]
			x0, x1 := v[i], v[i+half]
			v[i] = float32(x0*c) - float32(x1*s)
			v[i+half] = float32(x0*s) + float32(x1*c)
		}
	}
}

// RMSNormChunks RMS-normalizes x in place chunk by chunk of len(w) (each
// head for a per-head q/k norm, or all of x), multiplying by w.
func RMSNormChunks(x, w []float32, eps float32) {
	n := len(w)
	for o := 0; o+n <= len(x); o += n {
		RMSNorm(x[o:o+n], x[o:o+n], w, eps)
	}
}

func AddBias(x, b []float32) {
	if b == nil {
		return
	}
	b = b[:len(x)]
	for i := range x {
		x[i] += b[i]
	}
}

// fmaf is a*b+c rounded once (but where the float64 sum sits within
// 2^-29 of a float32 rounding boundary: see madF32Go).
//
// The float64 product of two float32s is exact, so rounding it apart (the
// explicit float64, which keeps arm64 from fusing) changes nothing.
func fmaf(a, b, c float32) float32 { return float32(float64(float64(a)*float64(b)) + float64(c)) }

// madF32Go is ggml_vec_mad_f32 with ggml's fused multiply-add: y[i] +=
// x[i]*a rounded once. The float32 product is exact in float64, so the
// float64 sum rounds the exact result (whether or not the compiler fuses
// it), and rounding that to float32 gives the fused result but where the
// float64 sum sits within 2^-29 of a float32 rounding boundary.
func madF32Go(y, x []float32, a float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] = fmaf(v, a, y[i])
	}
}

// dot32Go is dot32FMA in Go (len(x) a multiple of 32): 32 lanes, lane l
// accumulating x[i]*y[i] for i%32 == l with one rounding per step (the
// float32 product is exact in float64, so only the float64 sum rounds
// before float32 does), reduced in GGML_F32x8_REDUCE's order.
func dot32Go(x, y []float32) float32 {
	var acc [32]float32
	y = y[:len(x)]
	for i := 0; i+32 <= len(x); i += 32 {
		for l := range acc {
			acc[l] = fmaf(x[i+l], y[i+l], acc[l])
		}
	}
	var v [8]float32
	for l := range v {
		v[l] = (acc[l] + acc[16+l]) + (acc[8+l] + acc[24+l])
	}
	// 128-bit halves, then _mm_hadd_ps twice: (a0+a1) + (a2+a3)
	a := [4]float32{v[0] + v[4], v[1] + v[5], v[2] + v[6], v[3] + v[7]}
	return (a[0] + a[1]) + (a[2] + a[3])
}

// dotTail adds ggml_vec_dot_f32's leftover products to s in float64.
func dotTail(s float64, x, y []float32) float32 {
	y = y[:len(x)]
	for i, v := range x {
		s += float64(v * y[i])
	}
	return float32(s)
}

// negInf is -Inf in float32 (the maximum of no Scores).
var negInf = float32(math.Inf(-1))
