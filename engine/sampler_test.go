package engine

import "testing"

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
