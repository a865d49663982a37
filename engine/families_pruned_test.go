package engine

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/headprune"
	"github.com/ggufkit/gguf/internal/opstest"
	"github.com/ggufkit/gguf/ops"
)

// buildPruned cuts a head out of the model file src as `gguf build
// --head-ids` does (package ops, rows padded to a multiple of 8, specials
// kept) and writes it to dir.
func buildPruned(t *testing.T, src []byte, ranked []int32, dir string) string {
	t.Helper()
	out := opstest.Build(t, "src.gguf", src, ops.Options{HeadIDs: ranked, Head: headprune.Options{Pad: 8}})
	path := filepath.Join(dir, "pruned.gguf")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestFamilyPrunedHead checks pruned heads of tied (qwen3, qwen35) and
// untied (bailingmoe2) families, F32 and quantized: the head keeps the ids of every
// third word; at those ids the prompt's logits equal the full model's bit
// for bit (the rows are the same bytes, multiplied by the same kernel),
// every other id is -inf, and perplexity counts the targets outside the
// head as misses and scores the others: over 9 chunks of 128 tokens, 2
// with -short (bench/device-tests.sh under qemu, where the 9 take 12
// minutes; go test ./... runs the 9).
func TestFamilyPrunedHead(t *testing.T) {
	var ranked []int32
	for id := int32(17); id < 512; id += 3 {
		ranked = append(ranked, id)
	}
	chunks := 9
	if testing.Short() {
		chunks = 2
	}
	text := crosscheck.TextIDs(128*chunks + 48)
	for _, c := range []crosscheck.Case{{Shape: "qwen3", Type: "F32"}, {Shape: "qwen3", Type: "Q4_K_M"},
		{Shape: "bailingmoe2", Type: "F32"}, {Shape: "bailingmoe2", Type: "Q8_0"},
		{Shape: "bailingmoe3", Type: "F32"}, {Shape: "bailingmoe3", Type: "Q8_0"},
		{Shape: "qwen35", Type: "F32"}, {Shape: "qwen35", Type: "Q4_K_M"}} {
		t.Run(c.Tag(), func(t *testing.T) {
			fullPath := crossModel(t, c)
			src, err := os.ReadFile(fullPath)
			if err != nil {
				t.Fatal(err)
			}
			fm := openModel(t, fullPath)
			pm := openModel(t, buildPruned(t, src, ranked, t.TempDir()))
			if pm.OutputIDs == nil || pm.Output.Rows%8 != 0 || pm.Output == pm.Embed {
				t.Fatalf("pruned head: %d rows, ids %v", pm.Output.Rows, pm.OutputIDs != nil)
			}
			kept := map[int32]bool{}
			for _, id := range pm.OutputIDs {
				kept[id] = true
			}
			ids := crosscheck.PromptIDs
			want := sequenceLogits(t, newState(t, fm, Options{Ctx: 512}), ids, len(ids))
			got := sequenceLogits(t, newState(t, pm, Options{Ctx: 512}), ids, len(ids))
			for i := range got {
				id := int32(i % 512)
				if kept[id] && got[i] != want[i] {
					t.Fatalf("pos %d id %d: %g, full model %g", i/512, id, got[i], want[i])
				}
				if !kept[id] && !math.IsInf(float64(got[i]), -1) {
					t.Fatalf("pos %d id %d outside the head has logit %g", i/512, id, got[i])
				}
			}
			misses := 0
			for ch := 0; ch < chunks; ch++ {
				for j := 64; j < 127; j++ {
					if !kept[text[ch*128+j+1]] {
						misses++
					}
				}
			}
			r, err := Perplexity(newState(t, pm, Options{Ctx: 128, Batch: 128}), SliceTokens(text), PerplexityOptions{Ctx: 128, BOS: 1})
			if err != nil {
				t.Fatal(err)
			}
			if r.Misses != misses || r.Scored+r.Misses != 63*chunks || misses == 0 {
				t.Fatalf("pruned: %d scored, %d misses; expected %d misses of %d", r.Scored, r.Misses, misses, 63*chunks)
			}
			t.Logf("%d head rows; PPL %.4f over %d scored, %d misses", pm.Output.Rows, r.PPL, r.Scored, r.Misses)
		})
	}
}
