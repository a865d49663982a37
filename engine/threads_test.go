package engine

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/moegen"
)

// TestMoEThreadsBitIdentical: a prompt's experts run concurrently on 3
// threads (expertTask: chunks of an expert's tokens, each on its own
// thread's products) give exactly the logits of one thread running them
// in order, resident and paged, for batches that split a popular expert
// into chunks (120 tokens) and that end in a four-row kernel's tail (23);
// and so do one token's experts (resident: concurrent too; paged: in
// order, each split by rows), 24 tokens one at a time.
func TestMoEThreadsBitIdentical(t *testing.T) {
	dir := t.TempDir()
	specs := []moegen.Spec{
		moeModel("qwen3moe", 256, 256, 2, 16, 4, gguf.TypeQ8_0, gguf.TypeQ4_K),
		moeModel("bailingmoe2", 64, 32, 2, 16, 4, gguf.TypeF32, gguf.TypeF32),
		moeModel("llama", 256, 256, 2, 16, 4, gguf.TypeQ8_0, gguf.TypeQ2_K),
	}
	toks := moeTokens(120)
	for _, g := range specs {
		path := writeMoE(t, dir, g)
		for _, batch := range []int{120, 23} {
			want, _ := runLogits(t, path, OpenOptions{}, Options{Batch: batch, Threads: 1}, toks, false)
			got, _ := runLogits(t, path, OpenOptions{}, Options{Batch: batch, Threads: 3}, toks, false)
			name := fmt.Sprintf("%s batch %d", filepath.Base(path), batch)
			if !sameBits(got, want) {
				d, at := maxDiff(got, want)
				t.Errorf("%s: 3 threads differ from 1 by %g at %d", name, d, at)
			}
			po := &PagerOptions{Pool: g.Experts / 2, Readers: 2}
			paged, st := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Batch: batch, Threads: 3, Pager: po}, toks, false)
			if !sameBits(paged, want) {
				d, at := maxDiff(paged, want)
				t.Errorf("%s paged: 3 threads differ from 1 unpaged by %g at %d", name, d, at)
			}
			if st.Misses == 0 {
				t.Errorf("%s paged: nothing was paged in", name)
			}
		}
		one := toks[:24]
		want, _ := runLogits(t, path, OpenOptions{}, Options{Batch: 1, Threads: 1}, one, true)
		got, _ := runLogits(t, path, OpenOptions{}, Options{Batch: 1, Threads: 3}, one, true)
		po := &PagerOptions{Pool: g.Experts / 2, Readers: 2}
		paged, _ := runLogits(t, path, OpenOptions{PageExperts: true}, Options{Batch: 1, Threads: 3, Pager: po}, one, true)
		for _, c := range []struct {
			what string
			l    []float32
		}{{"resident", got}, {"paged", paged}} {
			if !sameBits(c.l, want) {
				d, at := maxDiff(c.l, want)
				t.Errorf("%s one token at a time, %s: 3 threads differ from 1 by %g at %d", filepath.Base(path), c.what, d, at)
			}
		}
	}
}

// TestQwen35ThreadsBitIdentical: a prompt's Gated DeltaNet layers on 3
// threads (the convolution by ranges of channels, the delta rule, output
// norm and gate by value heads) give exactly the logits of one thread.
func TestQwen35ThreadsBitIdentical(t *testing.T) {
	ids := crosscheck.TextIDs(199)
	for _, typ := range []string{"F32", "Q8_0"} {
		m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen35", Type: typ}))
		want := sequenceLogits(t, newState(t, m, Options{Ctx: 256, Batch: 200, Threads: 1}), ids, len(ids))
		got := sequenceLogits(t, newState(t, m, Options{Ctx: 256, Batch: 200, Threads: 3}), ids, len(ids))
		if !sameBits(got, want) {
			d, at := maxDiff(got, want)
			t.Errorf("%s: 3 threads differ from 1 by %g at position %d", typ, d, at/m.Config.Vocab)
		}
	}
}
