package engine

import (
	"github.com/ggufkit/gguf/engine/pager"
	"github.com/ggufkit/gguf/kernels"
)

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
	used   []bool    // [experts] chosen by some token of the batch
	need   []int     // the chosen experts, in order
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
		used:   make([]bool, c.Experts),
		need:   make([]int, 0, c.Experts),
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

// moeFFN is llama.cpp's build_moe_ffn for layer l: router logits, the
// family's routing (Routing.route), the weighted sum (in selection order)
// of each chosen expert's SiLU-gated FFN, and the shared experts' FFN
// added to it where the family has them (bailingmoe2). The experts run in
// order of their number, from the model's mapping or, for a paged model,
// from the pager's slots.
func (s *State) moeFFN(l int, L *Layer, nb int) error {
	c, mb := s.c, s.moe
	E, X, K := c.Embd, c.Experts, c.ExpertsUsed
	s.matmul(L.Router, s.xb, mb.router, nb)
	mb.route.bonus = s.pg.bonusFor(l)
	for i := 0; i < nb; i++ {
		c.Routing.route(mb.router[i*X:(i+1)*X], L.ExpBias, mb.sel[i*K:(i+1)*K], mb.weight[i*K:(i+1)*K], mb.route)
	}
	clear(mb.used)
	for _, e := range mb.sel[:nb*K] {
		if e >= 0 {
			mb.used[e] = true
		}
	}
	need := mb.need[:0]
	for e, u := range mb.used {
		if u {
			need = append(need, e)
		}
	}
	if s.trace != nil {
		s.trace.Call(l, need)
	}
	if s.pg != nil {
		// the shared experts run while the misses are read
		if err := s.pagedExperts(l, L, need, nb); err != nil {
			return err
		}
	} else {
		for _, e := range need {
			n := s.gather(e, nb)
			s.expertUp(L.GateExps[e], L.UpExps[e], n)
			s.expertDown(L.DownExps[e], n)
		}
		s.sharedExperts(L, nb)
	}
	for i := 0; i < nb; i++ {
		o := s.xb2[i*E : (i+1)*E]
		copy(o, mb.out[i*K*E:(i*K+1)*E])
		for k := 1; k < K; k++ {
			if mb.sel[i*K+k] < 0 {
				continue // dropped by TopP
			}
			src := mb.out[(i*K+k)*E : (i*K+k+1)*E]
			for d := range o {
				o[d] += src[d]
			}
		}
	}
	if L.Shared.Gate != nil {
		for i, v := range mb.shared[:nb*E] {
			s.xb2[i] += v
		}
	}
	return nil
}

// sharedExperts computes the layer's shared experts' FFN of the batch (gated
// where the family has a shared-expert gate) into mb.shared, for moeFFN to
// add; a layer without them is left alone.
func (s *State) sharedExperts(L *Layer, nb int) {
	c, mb := s.c, s.moe
	E := c.Embd
	if L.Shared.Gate == nil {
		return
	}
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
}

// gather copies the inputs of the batch tokens that chose expert e to
// mb.in and returns their number.
func (s *State) gather(e, nb int) int {
	c, mb := s.c, s.moe
	E, K := c.Embd, c.ExpertsUsed
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
	return n
}

// expertUp computes silu(gate x) * up x of the n gathered inputs into s.hb.
func (s *State) expertUp(gate, up *Matrix, n int) {
	F, mb := s.c.ExpertFF, s.moe
	s.matmul(gate, mb.in, s.hb, n)
	s.matmul(up, mb.in, s.hb2, n)
	for j := 0; j < n; j++ {
		kernels.Swiglu(s.hb[j*F:(j+1)*F], s.hb2[j*F:(j+1)*F])
	}
}

// expertDown computes down s.hb of the n gathered tokens, each scaled by
// its routing weight into its selection's output.
func (s *State) expertDown(down *Matrix, n int) {
	c, mb := s.c, s.moe
	E, K := c.Embd, c.ExpertsUsed
	s.matmul(down, s.hb, mb.res, n)
	for j := 0; j < n; j++ {
		i, k := mb.tok[j], mb.slot[j]
		w := mb.weight[i*K+k]
		dst := mb.out[(i*K+k)*E : (i*K+k+1)*E]
		for d, v := range mb.res[j*E : (j+1)*E] {
			dst[d] = v * w
		}
	}
}

// pagedExperts runs the experts need of layer L (number l) from the pager's
// slots, and its shared experts. The pool places the experts (in groups of
// at most its size) and the reads of a group's misses are all queued at
// once; while they are read, the next layer's predictions are queued
// (--moe-prefetch), the shared experts computed, then the group's experts
// in the order their bytes are in: the hits first, each miss as soon as
// its gate, up and down are read (or, when none is, the first queued).
// Every expert writes its own outputs, summed later in selection order, so
// the order of computing them changes no bit.
func (s *State) pagedExperts(l int, L *Layer, need []int, nb int) error {
	p := s.pg
	p.loader.SetProgress(p.prio(l))
	first := true
	return p.layers[l].pool.Run(need, p.placed, func(g []pager.Placement) error {
		if err := p.load(l, g, false); err != nil {
			return err
		}
		if first {
			if nb == 1 && p.o.Prefetch > 0 {
				if err := s.prefetch(l); err != nil {
					return err
				}
			}
			s.sharedExperts(L, nb)
		}
		first = false
		pending := append(p.pending[:0], g...)
		for len(pending) > 0 {
			i := p.firstReady(l, pending)
			x := pending[i]
			pending = append(pending[:i], pending[i+1:]...)
			gate, err := p.matrix(l, x.Slot, 0)
			if err != nil {
				return err
			}
			up, err := p.matrix(l, x.Slot, 1)
			if err != nil {
				return err
			}
			n := s.gather(x.Expert, nb)
			s.expertUp(gate, up, n)
			down, err := p.matrix(l, x.Slot, 2)
			if err != nil {
				return err
			}
			s.expertDown(down, n)
		}
		p.pending = pending
		return nil
	})
}

// prefetch is the pre-gated prefetch (the seeds' E103): the next MoE
// layer's router, with the family's full decision rule, applied to this
// layer's FFN input predicts the experts the token will use there; those
// not resident are queued into free or evictable slots (Pool.Prefetch).
func (s *State) prefetch(l int) error {
	p := s.pg
	l2 := l + 1
	if l2 >= len(p.layers) || p.layers[l2] == nil {
		return nil
	}
	L2 := &s.m.Layers[l2]
	s.matmul(L2.Router, s.xb, p.preLog, 1)
	p.pre.bonus = p.bonusFor(l2)
	p.preRouting.route(p.preLog, L2.ExpBias, p.preSel, p.preW, p.pre)
	g := p.layers[l2].pool.Prefetch(p.preSel, p.prePlaced[:0])
	return p.load(l2, g, true)
}
