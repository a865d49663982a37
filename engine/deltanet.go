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
// summed in tap order from zero as ggml_ssm_conv does, and the state moves
// on by one input. w is [channels][k], state [channels][k-1].
func convStep(x, w, state []float32, k int) {
	n := k - 1
	for c, in := range x {
		st := state[c*n : (c+1)*n]
		wc := w[c*k : (c+1)*k]
		var sum float32
		for t, v := range st {
			sum += float32(v * wc[t])
		}
		sum += float32(in * wc[n])
		copy(st, st[1:])
		if n > 0 {
			st[n-1] = in
		}
		x[c] = sum
	}
}

// siluInPlace is ggml_silu: x/(1+expf(-x)).
func siluInPlace(x []float32) {
	for i, v := range x {
		x[i] = v / (1 + expf(-v))
	}
}

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
		g := decay[0]
		for i := range m {
			m[i] *= g
		}
	} else {
		for j := range v {
			row := m[j*sk : (j+1)*sk]
			for i := range row {
				row[i] *= decay[i]
			}
		}
	}
	kb, qb := bytesOf(k), bytesOf(q)
	for j := range v {
		sum := dotF32(sk, bytesOf(m[j*sk:(j+1)*sk]), kb)
		d[j] = (v[j] - sum) * beta
	}
	for j, dj := range d[:len(v)] {
		madF32(m[j*sk:(j+1)*sk], k, dj)
	}
	for j := range v {
		out[j] = dotF32(sk, bytesOf(m[j*sk:(j+1)*sk]), qb) * scale
	}
}

// madF32Go is ggml_vec_mad_f32 with ggml's fused multiply-add: y[i] +=
// x[i]*a rounded once. The float32 product is exact in float64, so the
// float64 sum rounds the exact result (whether or not the compiler fuses
// it), and rounding that to float32 gives the fused result but where the
// float64 sum sits within 2^-29 of a float32 rounding boundary.
func madF32Go(y, x []float32, a float32) {
	x = x[:len(y)]
	for i, v := range x {
		y[i] = float32(float64(v)*float64(a) + float64(y[i]))
	}
}
