package engine

// moeBuffers holds what the Mixtral-style FFN needs per batch.
type moeBuffers struct {
	router []float32 // [batch][experts]
	sel    []int     // [batch][used] selected experts
	weight []float32 // [batch][used]
	out    []float32 // [batch][used][embd] each expert's output
	in     []float32 // gathered inputs of one expert [batch][embd]
	tok    []int     // [batch] token index of each gathered row
	slot   []int     // [batch] selection slot of each gathered row
	res    []float32 // [batch][embd] one expert's outputs
	order  []int     // expert indices, for sorting
}

func newMoEBuffers(c *Config, b int) *moeBuffers {
	return &moeBuffers{
		router: make([]float32, b*c.Experts),
		sel:    make([]int, b*c.ExpertsUsed),
		weight: make([]float32, b*c.ExpertsUsed),
		out:    make([]float32, b*c.ExpertsUsed*c.Embd),
		in:     make([]float32, b*c.Embd),
		tok:    make([]int, b),
		slot:   make([]int, b),
		res:    make([]float32, b*c.Embd),
		order:  make([]int, c.Experts),
	}
}

// moeFFN is llama.cpp's build_moe_ffn for the llama architecture: router
// logits, softmax over all experts, the top expert_used_count by
// probability, their probabilities renormalized to sum 1, and the weighted
// sum (in selection order) of each chosen expert's SiLU-gated FFN.
func (s *State) moeFFN(L *Layer, nb int) {
	c, mb := s.c, s.moe
	E, X, K, F := c.Embd, c.Experts, c.ExpertsUsed, c.FF
	s.matmul(L.Router, s.xb, mb.router, nb)
	for i := 0; i < nb; i++ {
		p := mb.router[i*X : (i+1)*X]
		softmaxInPlace(p)
		// ggml_argsort descending (ties keep the lower index first), as an
		// insertion sort: expert counts are small and it allocates nothing.
		for e := range mb.order {
			j := e
			for ; j > 0 && p[mb.order[j-1]] < p[e]; j-- {
				mb.order[j] = mb.order[j-1]
			}
			mb.order[j] = e
		}
		var sum float32
		for k := 0; k < K; k++ {
			mb.sel[i*K+k] = mb.order[k]
			mb.weight[i*K+k] = p[mb.order[k]]
			sum += p[mb.order[k]]
		}
		sum = max(sum, 6.103515625e-5)
		for k := 0; k < K; k++ {
			mb.weight[i*K+k] /= sum
		}
	}
	for e := 0; e < X; e++ {
		n := 0
		for i := 0; i < nb; i++ {
			for k := 0; k < K; k++ {
				if mb.sel[i*K+k] == e {
					copy(mb.in[n*E:(n+1)*E], s.xb[i*E:(i+1)*E])
					mb.tok[n], mb.slot[n] = i, k
					n++
				}
			}
		}
		if n == 0 {
			continue
		}
		s.matmul(L.GateExps[e], mb.in, s.hb, n)
		s.matmul(L.UpExps[e], mb.in, s.hb2, n)
		for j := 0; j < n; j++ {
			swiglu(s.hb[j*F:(j+1)*F], s.hb2[j*F:(j+1)*F])
		}
		s.matmul(L.DownExps[e], s.hb, mb.res, n)
		for j := 0; j < n; j++ {
			i, k := mb.tok[j], mb.slot[j]
			w := mb.weight[i*K+k]
			dst := mb.out[(i*K+k)*E : (i*K+k+1)*E]
			for d, v := range mb.res[j*E : (j+1)*E] {
				dst[d] = v * w
			}
		}
	}
	for i := 0; i < nb; i++ {
		o := s.xb2[i*E : (i+1)*E]
		copy(o, mb.out[i*K*E:(i*K+1)*E])
		for k := 1; k < K; k++ {
			src := mb.out[(i*K+k)*E : (i*K+k+1)*E]
			for d := range o {
				o[d] += src[d]
			}
		}
	}
}
