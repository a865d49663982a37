package engine

import (
	"math"
	"sync"
)

// The element-wise operations, in llama.cpp's (ggml-cpu's) operation order
// and precision, so that activations match llama.cpp's bit for bit as often
// as possible: a quantized model's activation rows are rounded to 8 bits
// before every matrix product, and a last-bit difference there can move a
// value across a rounding boundary.

func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }

// expf is a float32 exponential computed in float64 (range reduction to
// |r| <= ln2/2, degree-9 Taylor polynomial, relative error ~1e-11) so that
// rounding to float32 gives the correctly rounded result as libm's expf
// does, at a fraction of math.Exp's cost (softmax calls it per score).
func expf(x float32) float32 {
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
	// otherwise fuse them, and expf must give the same bits everywhere.
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

// rmsNorm is ggml_rms_norm followed by ggml_mul with the weight: the sum of
// squares in float64, the scale 1/sqrt(mean + eps) in float32.
func rmsNorm(dst, x, w []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	mean := float32(sum / float64(len(x)))
	scale := 1 / sqrtf(mean+eps)
	w = w[:len(x)]
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = (v * scale) * w[i]
	}
}

// softmaxInPlace is ggml_soft_max's inner loop: subtract the max, expf,
// sum in float64, multiply by the float32 reciprocal.
func softmaxInPlace(x []float32) {
	mx := negInf
	for _, v := range x {
		if v > mx {
			mx = v
		}
	}
	softmaxMax(x, mx)
}

// softmaxMax is softmaxInPlace with the maximum of x already known: the
// exponentials (expShift), their sum in float64 in index order, then x
// scaled by the float32 inverse of the sum, as ggml_vec_soft_max_f32 and
// ggml_vec_scale_f32 do.
func softmaxMax(x []float32, mx float32) {
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

// swigluGo is swiglu element by element: silu(g) * u with
// silu(x) = x/(1+expf(-x)), ggml_swiglu_split's formula.
func swigluGo(g, u []float32) {
	u = u[:len(g)]
	for i, v := range g {
		g[i] = v / (1 + expf(-v)) * u[i]
	}
}

// geglu is ggml_vec_geglu_f32 as ggml-cpu builds it (GGML_GELU_FP16):
// g[i] = gelu(g[i]) * u[i], the GELU of g rounded to half and looked up in
// a table of half-float results; 0 below -10 and g itself from 10.
func geglu(g, u []float32) {
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

// ropeCache fills cs with (cos, sin) pairs for one position as ggml's
// ggml_rope_cache_init does for rope type NORM without YaRN: theta starts
// at the position and is multiplied by base^(-2/n_dims) per pair, in
// float32; each frequency is divided by its factor (rope_freqs) if any.
func ropeCache(cs []float32, pos int, dims int, base, freqScale float32, factors []float32) {
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

// rope rotates adjacent pairs (x[2i], x[2i+1]) of each head (NORM mode).
func rope(x []float32, heads, headDim int, cs []float32) {
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

// ropeNeox rotates (x[i], x[i+n/2]) for i < n/2 of each head, n the
// rotated dimensions (len(cs)); the rest of the head is left as it is
// (partial RoPE), as ggml's rope in NEOX mode.
func ropeNeox(x []float32, heads, headDim int, cs []float32) {
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

// rmsNormChunks RMS-normalizes x in place chunk by chunk of len(w) (each
// head for a per-head q/k norm, or all of x), multiplying by w.
func rmsNormChunks(x, w []float32, eps float32) {
	n := len(w)
	for o := 0; o+n <= len(x); o += n {
		rmsNorm(x[o:o+n], x[o:o+n], w, eps)
	}
}

func addBias(x, b []float32) {
	if b == nil {
		return
	}
	b = b[:len(x)]
	for i := range x {
		x[i] += b[i]
	}
}
