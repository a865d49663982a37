package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/kernels"
)

// TestQ1LUTModel opens a generated Q1_0 model with and without the lookup
// layout under every kernel set: where the set has a lookup kernel the
// matrices are repacked (mapped, locked, read into memory; the prompt as
// one batch and a token at a time) and the logits equal the row kernels'
// (NoRepack) bit for bit; where it has none nothing is repacked.
func TestQ1LUTModel(t *testing.T) {
	ids := crosscheck.PromptIDs
	t.Cleanup(func() { _ = kernels.SelectKernels("") })
	path := crossModel(t, crosscheck.Case{Shape: "dense", Type: "Q1_0"})
	run := func(o OpenOptions, set string, batch int) ([]float32, int64) {
		t.Helper()
		return packedLogits(t, path, o, set, batch)
	}
	for _, set := range kernels.KernelSets() {
		want, none := run(OpenOptions{NoRepack: true}, set, len(ids))
		if none != 0 {
			t.Errorf("%s: NoRepack repacked %d bytes", set, none)
		}
		for _, c := range []struct {
			o     OpenOptions
			batch int
		}{{OpenOptions{}, len(ids)}, {OpenOptions{}, 1}, {OpenOptions{Mlock: true}, len(ids)}, {OpenOptions{NoMmap: true}, len(ids)}} {
			got, packed := run(c.o, set, c.batch)
			if _ = kernels.SelectKernels(set); !kernels.Packs(gguf.TypeQ1_0) {
				if packed != 0 {
					t.Errorf("%s has no lookup kernel, yet repacked %d bytes", set, packed)
				}
			} else if packed == 0 {
				t.Errorf("%s mlock %v no-mmap %v: nothing repacked", set, c.o.Mlock, c.o.NoMmap)
			}
			if !slices.Equal(got, want) {
				d, _ := maxDiff(got, want)
				t.Errorf("%s mlock %v no-mmap %v batch %d: logits differ from the row kernels' by up to %g", set, c.o.Mlock, c.o.NoMmap, c.batch, d)
			}
			t.Logf("%s mlock %v no-mmap %v batch %d: %d bytes repacked", set, c.o.Mlock, c.o.NoMmap, c.batch, packed)
		}
	}
}

// BenchmarkQ1LUTModel runs a 2-layer Q1_0 model of Bonsai-1.7B's layer
// shape (width 2048, FFN 6144, 16 heads over 8 KV heads) with the row
// kernels ("row": opened with NoRepack) and the lookup kernel ("lut")
// under every set this CPU runs: prompt batches of 64 tokens and one-token
// generation, 1 and 2 threads; the ratios lut/row read off one run (a set
// without a lookup kernel runs its row kernels in both).
func BenchmarkQ1LUTModel(b *testing.B) {
	defer kernels.SelectKernels("")
	path := writeGenerated(b, b.TempDir(), genSpec{embd: 2048, ff: 6144, layers: 2, heads: 16, kvHeads: 8, typ: gguf.TypeQ1_0})
	for _, set := range kernels.KernelSets() {
		if err := kernels.SelectKernels(set); err != nil {
			b.Fatal(err)
		}
		models := map[string]*Model{}
		for _, kind := range []string{"row", "lut"} {
			m, err := OpenWith(path, OpenOptions{NoRepack: kind == "row"})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			models[kind] = m
		}
		for _, threads := range []int{1, 2} {
			for _, r := range []struct {
				name string
				fn   func(*testing.B, *State)
			}{{"prompt", benchPrompt}, {"gen", benchGen}} {
				for _, kind := range []string{"row", "lut"} {
					b.Run(fmt.Sprintf("%s/t%d/%s/%s", set, threads, r.name, kind), func(b *testing.B) {
						if err := kernels.SelectKernels(set); err != nil {
							b.Fatal(err)
						}
						r.fn(b, newState(b, models[kind], Options{Ctx: 512, Threads: threads, Batch: 64}))
					})
				}
			}
		}
	}
}
