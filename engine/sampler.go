package engine

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerOptions are llama.cpp's sampling parameters (llama-cli flags).
type SamplerOptions struct {
	Temp          float32 // 0: greedy
	TopK          int     // <= 0: off
	TopP          float32 // >= 1: off
	MinP          float32 // <= 0: off
	RepeatPenalty float32 // 1: off
	RepeatLastN   int     // tokens the penalty looks back over
	Seed          uint64
	// Banned ids are never sampled: llama.cpp's logit bias of -inf, which
	// its --ignore-eos puts on the end-of-generation tokens.
	Banned []int32
}

// DefaultSampler returns llama-cli's defaults.
func DefaultSampler() SamplerOptions {
	return SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1, RepeatLastN: 64}
}

// Sampler picks the next token from logits with llama.cpp's default chain:
// repeat penalty, then top-k, top-p, min-p, temperature and a draw (or
// argmax when the temperature is 0). Ids whose logit is -inf (outside a
// pruned head) are never candidates. Buffers are allocated once.
type Sampler struct {
	o       SamplerOptions
	rng     *rand.Rand
	cand    []candidate
	history []int32
	seen    map[int32]bool
}

type candidate struct {
	id    int32
	logit float32
	p     float64
}

// NewSampler returns a sampler for a vocabulary of n ids.
func NewSampler(o SamplerOptions, n int) *Sampler {
	return &Sampler{
		o:    o,
		rng:  rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15)),
		cand: make([]candidate, 0, n),
		seen: make(map[int32]bool, max(0, o.RepeatLastN)),
	}
}

// Accept records a token (prompt or generated) for the repeat penalty.
func (s *Sampler) Accept(id int32) {
	if s.o.RepeatLastN <= 0 {
		return
	}
	if len(s.history) == s.o.RepeatLastN {
		copy(s.history, s.history[1:])
		s.history = s.history[:len(s.history)-1]
	}
	s.history = append(s.history, id)
}

// Sample returns the next token. logits is modified by the penalty.
func (s *Sampler) Sample(logits []float32) int32 {
	o := s.o
	for _, id := range o.Banned {
		if int(id) < len(logits) {
			logits[id] = float32(math.Inf(-1))
		}
	}
	if o.RepeatPenalty != 1 && o.RepeatPenalty > 0 {
		// llama.cpp's penalties sampler: once per distinct recent token.
		clear(s.seen)
		for _, id := range s.history {
			if s.seen[id] || int(id) >= len(logits) {
				continue
			}
			s.seen[id] = true
			if logits[id] <= 0 {
				logits[id] *= o.RepeatPenalty
			} else {
				logits[id] /= o.RepeatPenalty
			}
		}
	}
	if o.Temp <= 0 {
		best := int32(-1)
		for i, v := range logits {
			if !math.IsInf(float64(v), -1) && (best < 0 || v > logits[best]) {
				best = int32(i)
			}
		}
		return max(best, 0)
	}
	var c []candidate
	if o.TopK > 0 {
		c = s.topK(logits, o.TopK)
	} else {
		c = s.topP(logits, o.TopP)
	}
	if len(c) == 0 {
		return 0
	}
	if o.TopK > 0 {
		softmaxCand(c, 1)
		c = cutTopP(c, o.TopP)
	}
	if o.MinP > 0 {
		// c[0] holds the largest probability.
		limit := c[0].p * float64(o.MinP)
		n := 1
		for n < len(c) && c[n].p >= limit {
			n++
		}
		c = c[:n]
	}
	softmaxCand(c, o.Temp)
	r := s.rng.Float64()
	for _, x := range c {
		if r < x.p {
			return x.id
		}
		r -= x.p
	}
	return c[len(c)-1].id
}

// topK returns the k best candidates (byLogit order) of logits, sorted:
// one pass keeps them in a heap whose root is the worst kept, so an id
// costs one comparison unless it enters (the seeds' E126: a full sort of
// 151,669 ids per token took 3 ms of a phone's 0.23 ms budget).
func (s *Sampler) topK(logits []float32, k int) []candidate {
	h := s.cand[:0]
	for i, v := range logits {
		if math.IsInf(float64(v), -1) || math.IsNaN(float64(v)) {
			continue
		}
		x := candidate{id: int32(i), logit: v}
		switch {
		case len(h) < k:
			h = append(h, x)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if byLogit(h[j], h[p]) <= 0 {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
		case byLogit(x, h[0]) < 0:
			h[0] = x
			siftWorst(h, 0)
		}
	}
	slices.SortFunc(h, byLogit)
	return h
}

// siftWorst restores the heap property below j: every entry orders no
// earlier (byLogit) than its children, the worst at the root.
func siftWorst(h []candidate, j int) {
	for {
		w := j
		for _, c := range []int{2*j + 1, 2*j + 2} {
			if c < len(h) && byLogit(h[c], h[w]) > 0 {
				w = c
			}
		}
		if w == j {
			return
		}
		h[j], h[w] = h[w], h[j]
		j = w
	}
}

// topP returns, without top-k, the best candidates of logits (sorted)
// whose probabilities reach topP (every candidate when topP is off), with
// p set: the normalizer is one linear pass, and only the candidates kept
// are drawn from a heap of all, in order. The sum runs in id order where
// the full sort summed in logit order: the same p but for the last bits.
func (s *Sampler) topP(logits []float32, topP float32) []candidate {
	h := s.cand[:0]
	mx := negInf
	for i, v := range logits {
		if !math.IsInf(float64(v), -1) && !math.IsNaN(float64(v)) {
			h = append(h, candidate{id: int32(i), logit: v})
			mx = max(mx, v)
		}
	}
	if len(h) == 0 {
		return h
	}
	if topP <= 0 || topP >= 1 {
		slices.SortFunc(h, byLogit)
		softmaxCand(h, 1)
		return h
	}
	sum := 0.0
	for _, x := range h {
		sum += math.Exp(float64(x.logit) - float64(mx))
	}
	// a heap with the best at the root: byLogit reversed
	for j := len(h)/2 - 1; j >= 0; j-- {
		siftBest(h, j)
	}
	// pop the best to the end, building the kept list there in reverse
	cum, n := 0.0, len(h)
	for n > 0 {
		best := h[0]
		n--
		h[0] = h[n]
		siftBest(h[:n], 0)
		best.p = math.Exp(float64(best.logit)-float64(mx)) / sum
		h[n] = best
		cum += best.p
		if cum >= float64(topP) {
			break
		}
	}
	c := h[n:]
	slices.Reverse(c)
	return c
}

// siftBest is siftWorst for a heap with the best candidate at the root.
func siftBest(h []candidate, j int) {
	for {
		w := j
		for _, c := range []int{2*j + 1, 2*j + 2} {
			if c < len(h) && byLogit(h[c], h[w]) < 0 {
				w = c
			}
		}
		if w == j {
			return
		}
		h[j], h[w] = h[w], h[j]
		j = w
	}
}

// cutTopP keeps the fewest candidates (sorted, p set) whose probabilities
// reach topP (all when topP is off).
func cutTopP(c []candidate, topP float32) []candidate {
	if topP <= 0 || topP >= 1 {
		return c
	}
	cum := 0.0
	for i := range c {
		cum += c[i].p
		if cum >= float64(topP) {
			return c[:i+1]
		}
	}
	return c
}

// softmaxCand sets p from logits/temp over the (sorted) candidates.
func softmaxCand(c []candidate, temp float32) {
	mx := float64(c[0].logit / temp)
	sum := 0.0
	for i := range c {
		c[i].p = math.Exp(float64(c[i].logit/temp) - mx)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}

// byLogit orders candidates by descending logit, then ascending id.
func byLogit(a, b candidate) int {
	if c := cmp.Compare(b.logit, a.logit); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}
