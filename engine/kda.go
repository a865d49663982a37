package engine

import (
	"fmt"

	"github.com/ggufkit/gguf/kernels"
)

// KDAConfig is the geometry of Kimi delta attention layers (bailingmoe3).
type KDAConfig struct {
	Heads   int // attention.head_count
	HeadDim int // kda.head_dim: keys and values alike
	// ConvKernel is ssm.conv_kernel, the taps of the short causal
	// convolutions on q, k and v.
	ConvKernel int
	// GateLowerBound is kda.gate_lower_bound (negative): each channel's log
	// decay is GateLowerBound * sigmoid(...), in (GateLowerBound, 0).
	GateLowerBound float32
}

// kdaLayer is one KDA layer as llama.cpp's bailingmoe3 graph computes it
// (src/models/bailingmoe3.cpp, ggml_gated_delta_net's CPU kernel):
//
//	q, k, v = silu(causal_conv(W x)) per channel, conv state of K-1 inputs
//	q, k    = x / sqrt(sum x^2 + eps) per head (eps: the RMS norm epsilon)
//	g       = lower_bound * sigmoid(A_h * (F_a x + dt_bias))  per channel
//	beta    = sigmoid(W_beta x)                              per head
//	per head, per token, with the state S[key i][value j]:
//	  S[i][:] *= exp(g[i]);  d = beta * (v - S^T k);  S += k d^T
//	  o = S^T q / sqrt(head_dim)
//	out     = W_o (rms_norm(o per head) * sigmoid(G_a x))
//
// Batches are computed token by token in the recurrence (as the fused
// kernel llama.cpp runs does for prompts too), so a prompt batch equals
// one-token steps up to the products' rounding of the batch.
type kdaLayer struct {
	cfg            *KDAConfig
	eps            float32
	Q, K, V        *Matrix
	conv           [3][]float32 // q, k, v: [channel][ConvKernel] taps, oldest first
	FA, Beta, GA   *Matrix
	DTBias, A      []float32 // [heads*head_dim], [heads]
	Norm           []float32 // [head_dim]
	O              *Matrix
	task           kdaTask
	d, convFloats  int // heads*head_dim, per-layer conv state floats
	stateFloatsPer int // heads*head_dim^2
}

// loadKDA loads the KDA tensors of the layer with prefix p.
func loadKDA(ts *tensorSet, c *Config, p string) (*kdaLayer, error) {
	kc := &c.KDA
	H, hd, E := kc.Heads, kc.HeadDim, c.Embd
	d := H * hd
	l := &kdaLayer{cfg: kc, eps: c.RMSEps, d: d, convFloats: 3 * d * (kc.ConvKernel - 1), stateFloatsPer: H * hd * hd}
	ld := layerTensors{ts: ts, p: p}
	mat, floats := ld.mat, ld.floats
	mat(&l.Q, "attn_q.weight", E, d)
	mat(&l.K, "attn_k.weight", E, d)
	mat(&l.V, "attn_v.weight", E, d)
	for i, x := range []string{"q", "k", "v"} {
		floats(&l.conv[i], "ssm_conv1d_"+x+".weight", kc.ConvKernel, 1, d, 1)
	}
	mat(&l.FA, "ssm_f_a.weight", E, d)
	mat(&l.Beta, "ssm_beta.weight", E, H)
	floats(&l.A, "ssm_a", 1, H)
	floats(&l.DTBias, "ssm_dt.bias", d)
	mat(&l.GA, "ssm_g_a.weight", E, d)
	floats(&l.Norm, "ssm_norm.weight", hd)
	mat(&l.O, "attn_output.weight", d, E)
	if ld.err != nil {
		return nil, ld.err
	}
	if kc.ConvKernel < 1 {
		return nil, fmt.Errorf("%sssm_conv1d: ssm.conv_kernel must be at least 1", p)
	}
	l.task.l = l
	return l, nil
}

func (l *kdaLayer) recurrent() bool { return true }

// contextFloats: the three convolutions' last K-1 inputs per channel and
// the per-head state matrices; independent of the context size.
func (l *kdaLayer) contextFloats(int) int { return l.convFloats + l.stateFloatsPer }

// scratchFloats: q, k, v, g, the output gate and the output per token
// (d each), beta per token and head, one convolution window, and each
// worker's delta vector.
func (l *kdaLayer) scratchFloats(nb, threads, _ int) int {
	return nb*(6*l.d+l.cfg.Heads) + nb + l.cfg.ConvKernel + threads*l.cfg.HeadDim
}

// mix runs the layer on s.xb for nb tokens into s.xb2.
func (l *kdaLayer) mix(s *State, st, scratch []float32, nb int) {
	kc := l.cfg
	H, hd, d, K := kc.Heads, kc.HeadDim, l.d, kc.ConvKernel
	take := func(n int) []float32 {
		b := scratch[:n:n]
		scratch = scratch[n:]
		return b
	}
	q, k, v, g, og, out := take(nb*d), take(nb*d), take(nb*d), take(nb*d), take(nb*d), take(nb*d)
	beta := take(nb * H)
	win := take(nb + K - 1)
	convState, state := st[:l.convFloats], st[l.convFloats:]
	for i, x := range []struct {
		w   *Matrix
		dst []float32
	}{{l.Q, q}, {l.K, k}, {l.V, v}} {
		s.matmul(x.w, s.xb, x.dst, nb)
		causalConvSiLU(x.dst, l.conv[i], convState[i*d*(K-1):(i+1)*d*(K-1)], win, d, K, nb)
	}
	for i := 0; i < nb; i++ {
		for h := 0; h < H; h++ {
			gdnL2Norm(q[i*d+h*hd:i*d+(h+1)*hd], l.eps)
			gdnL2Norm(k[i*d+h*hd:i*d+(h+1)*hd], l.eps)
		}
	}
	s.matmul(l.FA, s.xb, g, nb)
	for i := 0; i < nb; i++ {
		gi := g[i*d : (i+1)*d]
		for c := range gi {
			x := (gi[c] + l.DTBias[c]) * l.A[c/hd]
			gi[c] = kc.GateLowerBound * (1 / (1 + kernels.Expf(-x)))
		}
	}
	s.matmul(l.Beta, s.xb, beta, nb)
	for i, x := range beta {
		beta[i] = 1 / (1 + kernels.Expf(-x))
	}
	t := &l.task
	t.q, t.k, t.v, t.g, t.beta, t.out, t.state, t.nb = q, k, v, g, beta, out, state, nb
	t.delta = scratch[:s.pool.Threads()*hd]
	s.pool.Run(t, H, 1, nb*H*hd*hd >= 16<<10)
	s.matmul(l.GA, s.xb, og, nb)
	for i := 0; i < nb; i++ {
		for h := 0; h < H; h++ {
			o := out[i*d+h*hd : i*d+(h+1)*hd]
			kernels.RMSNorm(o, o, l.Norm, l.eps)
			gate := og[i*d+h*hd : i*d+(h+1)*hd]
			for j := range o {
				o[j] *= 1 / (1 + kernels.Expf(-gate[j]))
			}
		}
	}
	s.matmul(l.O, out, s.xb2, nb)
}

// causalConvSiLU replaces x ([nb][d], one token per row) by
// silu(sum_t w[c][t] * in[t]) per channel c over the K inputs ending at
// each token (ggml_ssm_conv: the taps oldest first, summed in order in
// float32), the inputs before the batch coming from state ([d][K-1],
// oldest first), which is then advanced to the batch's last K-1 inputs.
func causalConvSiLU(x, w, state, win []float32, d, K, nb int) {
	for c := 0; c < d; c++ {
		copy(win, state[c*(K-1):(c+1)*(K-1)])
		for i := 0; i < nb; i++ {
			win[K-1+i] = x[i*d+c]
		}
		wc := w[c*K : (c+1)*K]
		for i := 0; i < nb; i++ {
			var sum float32
			for t, wt := range wc {
				sum += float32(win[i+t] * wt)
			}
			x[i*d+c] = sum / (1 + kernels.Expf(-sum))
		}
		copy(state[c*(K-1):(c+1)*(K-1)], win[nb:nb+K-1])
	}
}

// gdnL2Norm scales x to unit length as llama.cpp 0.7.0's build_gdn_l2_norm
// does for KDA (not ggml_l2_norm, which qwen35's layers use: l2Norm)
// (x / sqrt(sum x^2 + eps)): ggml_rms_norm with eps/n (the sum of squares
// in float64, its mean rounded to float32), then ggml_scale by 1/sqrt(n).
func gdnL2Norm(x []float32, eps float32) {
	var sum float64
	for _, v := range x {
		sum += float64(v * v)
	}
	n := float32(len(x))
	scale := 1 / kernels.Sqrtf(float32(sum/float64(len(x)))+eps/n)
	s := 1 / kernels.Sqrtf(n)
	for i := range x {
		x[i] = (x[i] * scale) * s
	}
}

// kdaTask runs the delta rule of one KDA layer, one head per item, every
// token of the batch in order.
type kdaTask struct {
	l                     *kdaLayer
	q, k, v, g, beta, out []float32
	state, delta          []float32
	nb                    int
}

func (t *kdaTask) Run(lo, hi, w int) {
	kc := t.l.cfg
	H, hd, d := kc.Heads, kc.HeadDim, t.l.d
	scale := 1 / kernels.Sqrtf(float32(hd))
	delta := t.delta[w*hd : (w+1)*hd]
	for h := lo; h < hi; h++ {
		// M[j][i] = S[key i][value j]: row j is contiguous over the keys
		M := t.state[h*hd*hd : (h+1)*hd*hd]
		for i := 0; i < t.nb; i++ {
			o := i*d + h*hd
			q, k, v, g := t.q[o:o+hd], t.k[o:o+hd], t.v[o:o+hd], t.g[o:o+hd]
			b := t.beta[i*H+h]
			for c, x := range g {
				delta[c] = kernels.Expf(x)
			}
			for j := 0; j < hd; j++ {
				row := M[j*hd : (j+1)*hd]
				for c := range row {
					row[c] *= delta[c]
				}
			}
			for j := 0; j < hd; j++ {
				sum := kernels.DotF32(hd, kernels.BytesOf(M[j*hd:(j+1)*hd]), kernels.BytesOf(k))
				delta[j] = (v[j] - sum) * b
			}
			for j := 0; j < hd; j++ {
				row, dj := M[j*hd:(j+1)*hd], delta[j]
				for c := range row {
					row[c] += float32(k[c] * dj)
				}
			}
			out := t.out[o : o+hd]
			for j := range out {
				out[j] = kernels.DotF32(hd, kernels.BytesOf(M[j*hd:(j+1)*hd]), kernels.BytesOf(q)) * scale
			}
		}
	}
}
