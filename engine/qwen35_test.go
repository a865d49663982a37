package engine

import (
	"math"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
)

// TestQwen35BatchEqualsTokens evaluates 200 tokens of the crosscheck text
// on the qwen35 model as batches of 200, 64 and 7 and one token at a time.
// The recurrence runs token by token inside a batch, in the same order, so
// the only difference left is the matrix kernels': four tokens at a time
// (dot4) sum a row in another order than one (dot) for F32 weights, last
// bits that the recurrence carries on (measured: 1.0e-5 at most over the
// 200 positions, logits of magnitude ~5; Q8_0 bit for bit). The
// tolerance, 1e-4, is 10x that and far below what a wrong state hand-over
// between batches gives (O(1)).
func TestQwen35BatchEqualsTokens(t *testing.T) {
	ids := crosscheck.TextIDs(199)
	for _, typ := range []string{"F32", "Q8_0"} {
		t.Run(typ, func(t *testing.T) {
			m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35", Type: typ}))
			one := sequenceLogits(t, newState(t, m, Options{Ctx: 256, Batch: 1}), ids, len(ids))
			for _, b := range []int{200, 64, 7} {
				got := sequenceLogits(t, newState(t, m, Options{Ctx: 256, Batch: b, Threads: 2}), ids, len(ids))
				d, at := maxDiff(got, one)
				t.Logf("batch %d: max |diff| %.3g", b, d)
				if d > 1e-4 {
					t.Fatalf("batch %d: logits differ from token by token by %g at position %d", b, d, at/m.Config.Vocab)
				}
			}
		})
	}
}

// TestQwen35StateReset checks that Reset zeroes the recurrent state (the
// same prompt gives the same logits again), that Rewind to an earlier
// position empties a recurrent model's state (Pos 0) and that the
// recurrent state's size is what the shape says: per Gated DeltaNet layer
// (4-1) x 512 convolution inputs and 4 heads of 64 x 64.
func TestQwen35StateReset(t *testing.T) {
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35", Type: "F32"}))
	s := newState(t, m, Options{Ctx: 64})
	ids := crosscheck.PromptIDs
	first := sequenceLogits(t, s, ids, len(ids))
	s.Reset()
	again := sequenceLogits(t, s, ids, len(ids))
	if d, at := maxDiff(first, again); d != 0 {
		t.Fatalf("after Reset logits differ by %g at %d", d, at)
	}
	s.Rewind(3)
	if s.Pos() != 0 {
		t.Fatalf("Rewind(3) on a recurrent model left Pos %d", s.Pos())
	}
	again = sequenceLogits(t, s, ids, len(ids))
	if d, at := maxDiff(first, again); d != 0 {
		t.Fatalf("after Rewind logits differ by %g at %d", d, at)
	}
	if want := int64(2 * 4 * (3*512 + 4*64*64)); s.RecurrentBytes() != want {
		t.Fatalf("RecurrentBytes %d, want %d", s.RecurrentBytes(), want)
	}
	if got, want := m.KVCacheBytes(64), int64(2*64*128*2*4)+s.RecurrentBytes(); got != want {
		t.Fatalf("KVCacheBytes(64) %d, want %d (2 attention layers)", got, want)
	}
	for _, v := range first {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("logit %g", v)
		}
	}
}
