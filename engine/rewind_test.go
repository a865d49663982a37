package engine

import (
	"slices"
	"testing"

	"github.com/ggufkit/gguf/gguf"
)

// TestRewind evaluates a sequence, rewinds the cache to its first k
// positions and evaluates another continuation: the logits are those of
// the kept start plus the continuation evaluated from scratch, bit for
// bit (the same products in the same order).
func TestRewind(t *testing.T) {
	m := openModel(t, writeGenerated(t, t.TempDir(), genSpec{embd: 256, ff: 512, layers: 2, heads: 8, kvHeads: 4, typ: gguf.TypeQ8_0}))
	a := []int32{1, 17, 93, 4, 250, 7, 311, 45}
	b := []int32{60, 61, 62}
	const k = 5
	s := newState(t, m, Options{Ctx: 64, Threads: 1, Batch: 1})
	sequenceLogits(t, s, a, len(a))
	s.Rewind(k)
	if s.Pos() != k {
		t.Fatalf("Pos %d after Rewind(%d)", s.Pos(), k)
	}
	got := sequenceLogits(t, s, b, len(b))
	fresh := newState(t, m, Options{Ctx: 64, Threads: 1, Batch: 1})
	want := sequenceLogits(t, fresh, slices.Concat(a[:k], b), k+len(b))[k*m.Config.Vocab:]
	if d, at := maxDiff(got, want); d != 0 {
		t.Errorf("after Rewind: logits differ by %g at %d", d, at)
	}
	s.Rewind(100)
	if s.Pos() != k+len(b) {
		t.Errorf("Rewind past the end moved Pos to %d", s.Pos())
	}
}
