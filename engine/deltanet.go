package engine

import (
	"math"

	"github.com/ggufkit/gguf/kernels"
)

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

// siluInPlace is ggml_silu, x/(1+kernels.Expf(-x)): swiglu with u = 1 (exact),
// whose AVX2 loop computes the same bits as the scalar formula. ones is
// at least len(x) of 1.
func siluInPlace(x, ones []float32) { kernels.Swiglu(x, ones[:len(x)]) }

// l2Norm is ggml_l2_norm over x: x / max(|x|, eps), the sum of squares in
// float64, the scale in float32.
func l2Norm(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	scale := 1 / max(kernels.Sqrtf(float32(sum)), eps)
	for i, v := range x {
		x[i] = v * scale
	}
}

// softplus is ggml_softplus: logf(1+kernels.Expf(x)) in float32, x itself above
// 20.
func softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + kernels.Expf(x))))
}

// sigmoid is ggml_sigmoid: 1/(1+kernels.Expf(-x)).
func sigmoid(x float32) float32 { return 1 / (1 + kernels.Expf(-x)) }

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
		kernels.ScaleF32(m, decay[0])
	} else {
		for j := range v {
			row := m[j*sk : (j+1)*sk]
			for i := range row {
				row[i] *= decay[i]
			}
		}
	}
	for j := range v {
		sum := kernels.DotGGML(m[j*sk:(j+1)*sk], k)
		d[j] = (v[j] - sum) * beta
	}
	for j, dj := range d[:len(v)] {
		kernels.MadF32(m[j*sk:(j+1)*sk], k, dj)
	}
	for j := range v {
		out[j] = kernels.DotGGML(m[j*sk:(j+1)*sk], q) * scale
	}
}
