package engine

// moeBuffers holds what a MoE FFN needs per batch.
type moeBuffers struct {
	router []float32 // [batch][experts]
	sel    []int     // [batch][used] selected experts
	weight []float32 // [batch][used]
	out    []float32 // [batch][used][embd] each expert's output
	in     []float32 // gathered inputs of one expert [batch][embd]
	tok    []int     // [batch] token index of each gathered row
	slot   []int     // [batch] selection slot of each gathered row
	res    []float32 // [batch][embd] one expert's outputs
	shared []float32 // [batch][embd] the shared experts' output, or nil
	sgate  []float32 // [batch] the shared experts' gate, or nil
	route  *routeScratch
}

func newMoEBuffers(c *Config, b int) *moeBuffers {
	mb := &moeBuffers{
		router: make([]float32, b*c.Experts),
		sel:    make([]int, b*c.ExpertsUsed),
		weight: make([]float32, b*c.ExpertsUsed),
		out:    make([]float32, b*c.ExpertsUsed*c.Embd),
		in:     make([]float32, b*c.Embd),
		tok:    make([]int, b),
		slot:   make([]int, b),
		res:    make([]float32, b*c.Embd),
		route:  newRouteScratch(c.Experts, max(c.Routing.Groups, 1)),
	}
	if c.SharedFF > 0 {
		mb.shared = make([]float32, b*c.Embd)
	}
	if c.fam.sharedGate {
		mb.sgate = make([]float32, b)
	}
	return mb
}

// moeBufferFloats is the float32s of moeBuffers per batch token.
func moeBufferFloats(c *Config) int {
	n := c.Experts + c.ExpertsUsed*(c.Embd+1) + 2*c.Embd
	if c.SharedFF > 0 {
		n += c.Embd + 1
	}
	return n
}

// moeFFN is llama.cpp's build_moe_ffn: router logits, the family's
// routing (Routing.route), the weighted sum (in selection order) of each
// chosen expert's SiLU-gated FFN, and the shared experts' FFN added to it
// where the family has them (bailingmoe2; gated per token by
// sigmoid(ffn_gate_inp_shexp x) in qwen35moe).
func (s *State) moeFFN(L *Layer, nb int) {
	c, mb := s.c, s.moe
	E, X, K, F := c.Embd, c.Experts, c.ExpertsUsed, c.ExpertFF
	s.matmul(L.Router, s.xb, mb.router, nb)
	for i := 0; i < nb; i++ {
		c.Routing.route(mb.router[i*X:(i+1)*X], L.ExpBias, mb.sel[i*K:(i+1)*K], mb.weight[i*K:(i+1)*K], mb.route)
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
	if L.Shared.Gate != nil {
		s.ffn(&L.Shared, c.SharedFF, mb.shared, nb)
		if L.SharedGate != nil {
			s.matmul(L.SharedGate, s.xb, mb.sgate, nb)
			for i := 0; i < nb; i++ {
				g := sigmoid(mb.sgate[i])
				for d := range mb.shared[i*E : (i+1)*E] {
					mb.shared[i*E+d] *= g
				}
			}
		}
		for i, v := range mb.shared[:nb*E] {
			s.xb2[i] += v
		}
	}
}
