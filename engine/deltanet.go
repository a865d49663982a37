package engine

import "math"

// The recurrent pieces of linear-attention layers (Gated DeltaNet, qwen35;
// the same delta rule with a per-channel decay is Kimi's KDA): a causal
// depthwise convolution with a rolling state, and the gated delta rule
// over a per-head state matrix, both in ggml-cpu's operation order
// (ggml_ssm_conv, ggml_gated_delta_net) and in float32.

// convStep runs one token through a causal depthwise convolution of k taps
// per channel, in place: x[c] becomes sum_t w[c][t] * in[t] over the
// channel's previous k-1 inputs (state, oldest first) and x[c] itself,
// summed in tap order from zero with one rounding per tap, as
// ggml_ssm_conv's loop compiles for an FMA CPU (sumf += s*c contracted),
// and the state moves on by one input. w is [channels][k], state
// [channels][k-1].
func convStep(x, w, state []float32, k int) {
	n := k - 1
	for c, in := range x {
		st := state[c*n : (c+1)*n]
		wc := w[c*k : (c+1)*k]
		var sum float64
		for t, v := range st {
			sum += float64(v * wc[t])
		}
		sum += float64(in * wc[n])
		copy(st, st[1:])
		if n > 0 {
			st[n-1] = in
		}
		x[c] = float32(sum)
	}
}

// siluInPlace is ggml_silu, x/(1+expf(-x)): swiglu with u = 1 (exact),
// whose AVX2 loop computes the same bits as the scalar formula. ones is
// at least len(x) of 1.
func siluInPlace(x, ones []float32) { swiglu(x, ones[:len(x)]) }

// l2Norm is ggml_l2_norm over x: x / max(|x|, eps), the sum of squares in
// float64, the scale in float32.
func l2Norm(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	scale := 1 / max(sqrtf(float32(sum)), eps)
	for i, v := range x {
		x[i] = v * scale
	}
}

// softplus is ggml_softplus: logf(1+expf(x)) in float32, x itself above
// 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + expf(x))))
}

// sigmoid is ggml_sigmoid: 1/(1+expf(-x)).
func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }

// deltaStep advances one head's gated delta rule by one token, as
// ggml_gated_delta_net does. m is the state, stored transposed as ggml
// stores it: m[j*sk+i] = S[i][j] for key channel i < sk and value channel
// j < len(v). With decay[i] = exp(g[i]) (one value for the whole head,
// Gated DeltaNet, or one per key channel, KDA):
//
//	S[i][j] *= decay[i]
//	d[j]     = (v[j] - sum_i S[i][j] k[i]) * beta
//	S[i][j] += k[i] d[j]
//	out[j]   = scale * sum_i S[i][j] q[i]
//
// d is scratch of len(v).
func deltaStep(m, q, k, v, decay []float32, beta, scale float32, out, d []float32) {
	sk := len(k)
	if len(decay) == 1 {
		scaleF32(m, decay[0])
	} else {
		for j := range v {
			row := m[j*sk : (j+1)*sk]
			for i := range row {
				row[i] *= decay[i]
			}
		}
	}
	for j := range v {
		sum := dotGGML(m[j*sk:(j+1)*sk], k)
		d[j] = (v[j] - sum) * beta
	}
	for j, dj := range d[:len(v)] {
		madF32(m[j*sk:(j+1)*sk], k, dj)
	}
	for j := range v {
		out[j] = dotGGML(m[j*sk:(j+1)*sk], q) * scale
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
