package engine

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSamplerBanned: a banned id is never sampled, greedy or not, even
// when its logit is far the largest (--ignore-eos bans the
// end-of-generation tokens).
func TestSamplerBanned(t *testing.T) {
	for _, temp := range []float32{0, 0.8} {
		o := DefaultSampler()
		o.Temp, o.Seed, o.Banned = temp, 1, []int32{2}
		s := NewSampler(o, 4)
		for i := 0; i < 100; i++ {
			if id := s.Sample([]float32{0, 1, 50, 0.5}); id == 2 {
				t.Fatalf("temp %g: sampled the banned id", temp)
			}
		}
		o.Banned = nil
		if id := NewSampler(o, 4).Sample([]float32{0, 1, 50, 0.5}); id != 2 {
			t.Fatalf("temp %g: without a ban got %d, want 2", temp, id)
		}
	}
}

// sampleSorted is the sampler as it was before the top-k heap: every
// candidate sorted by logit, then top-k, top-p, min-p and the draw. The
// heap must give the same token for the same state.
func sampleSorted(s *Sampler, logits []float32) int32 {
	o := s.o
	var c []candidate
	for i, v := range logits {
		if !math.IsInf(float64(v), -1) && !math.IsNaN(float64(v)) {
			c = append(c, candidate{id: int32(i), logit: v})
		}
	}
	slices.SortFunc(c, byLogit)
	if o.TopK > 0 && o.TopK < len(c) {
		c = c[:o.TopK]
	}
	softmaxCand(c, 1)
	if o.TopP > 0 && o.TopP < 1 {
		cum := 0.0
		for i := range c {
			cum += c[i].p
			if cum >= float64(o.TopP) {
				c = c[:i+1]
				break
			}
		}
	}
	if o.MinP > 0 {
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

// TestSamplerSameSamples draws 300 tokens from random logits (ties
// included: logits rounded to 1/8) under several option sets with the
// sampler and with the full sort it replaced, from the same seed: the
// same tokens every time.
func TestSamplerSameSamples(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const vocab = 5000
	for _, o := range []SamplerOptions{
		DefaultSampler(),
		{Temp: 0.7, TopK: 1},
		{Temp: 1.2, TopK: 200, TopP: 0.5},
		{Temp: 1, TopK: 0, TopP: 0.9, MinP: 0.01},
		{Temp: 1, TopK: 0, TopP: 1, MinP: 0},
		{Temp: 0.9, TopK: 40, MinP: 0.2},
		{Temp: 1, TopK: vocab + 10, TopP: 0.95},
	} {
		o.Seed = 42
		a, b := NewSampler(o, vocab), NewSampler(o, vocab)
		l := make([]float32, vocab)
		for n := range 300 {
			for i := range l {
				l[i] = float32(math.Round(r.NormFloat64()*3*8) / 8)
				if i%97 == 5 {
					l[i] = float32(math.Inf(-1))
				}
			}
			l2 := append([]float32(nil), l...)
			if x, y := a.Sample(l), sampleSorted(b, l2); x != y {
				t.Fatalf("%+v: draw %d: %d, the full sort %d", o, n, x, y)
			}
		}
	}
}

// BenchmarkSampler is one default-chain draw (top-k 40, top-p 0.95, min-p
// 0.05, temp 0.8) over Qwen3's 151,669 ids.
func BenchmarkSampler(b *testing.B) {
	const vocab = 151669
	r := rand.New(rand.NewPCG(7, 8))
	l := make([]float32, vocab)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	o := DefaultSampler()
	s := NewSampler(o, vocab)
	w := make([]float32, vocab)
	b.ResetTimer()
	for range b.N {
		copy(w, l)
		s.Sample(w)
	}
}
