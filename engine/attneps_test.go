package engine

import (
	"crypto/sha256"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ggufkit/gguf/bench/crosscheck"
	"github.com/ggufkit/gguf/gguf"
	"github.com/ggufkit/gguf/internal/shared"
	"github.com/ggufkit/gguf/kernels"
)

// attnDigests are the SHA-256 of the crosscheck qwen3 F32 file's logits
// over the first 300 tokens of crosscheck.TextIDs(1200) (batches of 128),
// per KV cache type, recorded before the many-position KV kernels and
// Options.AttnEps existed (main at 8e50c1b): with the portable kernels
// (every set but amd64's avx2 and vnni promises their sums) and with
// avx2's (ggml's x86 order).
var attnDigests = map[string]string{
	"portable f32":  "601f0f1c877c6dbd65aa7cefcb91d012264f75e5cf8ea27512dbfb90b715fd26",
	"portable f16":  "77b8a819edae6f0f3aa1cfdef905f4b3d9196720c0fade9a3e8376aa98911a5b",
	"portable q8_0": "478b9b9cddbe19e357dd72e5a452595280a3918856dfb124a2f7d3442fdd9016",
	"avx2 f32":      "e8813a34cc3de1b16fe2b22e9914a81e516fa8fe2c274933d527606db19f5d8a",
	"avx2 f16":      "75d104370d6d88359b1f65e8e4b8158625c63415a60a05006d329c83245dc249",
	"avx2 q8_0":     "3e6b2970b6252acd6c1b801edfb0fe3e6b20c3173d9de62437793ec2a1d3e4f2",
}

// TestAttnEpsOffUnchanged checks that the KV cache's many-position
// kernels and an AttnEps of 0 leave the logits as they were, bit for bit,
// in every cache type and kernel set (attnDigests), and that a threshold
// so low that no position is pruned (1e-38: ln is -87.5) gives the same
// bits through the pruned path.
func TestAttnEpsOffUnchanged(t *testing.T) {
	t.Cleanup(func() { _ = kernels.SelectKernels("") })
	m := openModel(t, crossModel(t, crosscheck.Case{Shape: "qwen3", Type: "F32"}))
	ids := crosscheck.TextIDs(1200)[:300]
	for _, set := range kernels.KernelSets() {
		if err := kernels.SelectKernels(set); err != nil {
			t.Fatal(err)
		}
		class := "portable"
		if set == "avx2" || set == "vnni" {
			class = "avx2"
		}
		for _, tt := range CacheTypes {
			var prev []float32
			for _, eps := range []float64{0, 1e-38} {
				s := newState(t, m, Options{Ctx: 512, Threads: 2, Batch: 128, TypeK: tt, TypeV: tt, AttnEps: eps})
				got := sequenceLogits(t, s, ids, len(ids))
				if eps == 0 {
					tag := class + " " + CacheTypeName(tt)
					if d := fmt.Sprintf("%x", sha256.Sum256(kernels.BytesOf(got))); d != attnDigests[tag] {
						t.Errorf("%s kernels, %s cache: logits digest %s, before %s", set, CacheTypeName(tt), d, attnDigests[tag])
					}
					prev = got
					continue
				}
				kept, seen := s.AttnKept()
				if kept != seen || seen == 0 {
					t.Errorf("%s, %s cache, eps %g: kept %d of %d positions, want all", set, CacheTypeName(tt), eps, kept, seen)
				}
				if !slices.Equal(kernels.BytesOf(got), kernels.BytesOf(prev)) {
					t.Errorf("%s, %s cache: pruning nothing changed the logits", set, CacheTypeName(tt))
				}
			}
		}
	}
}

// TestAttnEpsPruned runs one head of pruned attention in every cache type
// over caches whose scores spread as a trained model's do (a query of
// norm 2.5-6x the keys'), and checks that positions were skipped, exactly
// those below max + ln(eps) (kept counts them), and that the output is the
// float64 attention over the kept positions only, normalized over them,
// within the type's rounding (as TestKVCacheTypes: 1e-6 f32, 2e-3 f16,
// 2e-2 q8_0). The cases take each path of kvCache.pruned: 42 % kept
// (F32/F16: every position summed, the pruned with probability 0), 3 %
// kept (gathered), ~600 of 5000 kept (gathered in two chunks); and at eps
// 1e-38 all of 1100 positions are kept, which must give the unpruned
// output bit for bit.
func TestAttnEpsPruned(t *testing.T) {
	const hd, kvd = 64, 128
	r := rand.New(rand.NewPCG(7, 8))
	rnd := func(n int, s float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(r.NormFloat64() * s)
		}
		return x
	}
	for _, cs := range []struct {
		ctx    int
		qscale float64
		eps    float64 // 0: keep about 600 positions
	}{{300, 2.5, 1e-3}, {300, 6, 1e-3}, {5000, 2.5, 0}, {1100, 2.5, 1e-38}} {
		q := rnd(hd, cs.qscale)
		keys, vals := make([][]float32, cs.ctx), make([][]float32, cs.ctx)
		for p := range cs.ctx {
			keys[p], vals[p] = rnd(kvd, 1), rnd(kvd, 1)
		}
		for _, tc := range []struct {
			t   gguf.Type
			tol float64
		}{{gguf.TypeF32, 1e-6}, {gguf.TypeF16, 2e-3}, {gguf.TypeQ8_0, 2e-2}} {
			c, err := newKVCache(tc.t, tc.t, 2, cs.ctx, kvd, hd)
			if err != nil {
				t.Fatal(err)
			}
			for p := range cs.ctx {
				c.put(1, p, keys[p], vals[p])
			}
			ws := newAttnScratch(cs.ctx, hd)
			ws.addPruning(cs.ctx, hd)
			const from, kvo = 2, hd
			n := cs.ctx - from
			sc := ws.sc[:n]
			mx := c.scores(q, 1, from, kvo, 0.125, sc, ws.qa)
			scores := slices.Clone(sc)
			lnEps := float32(math.Log(cs.eps))
			if cs.eps == 0 {
				sorted := slices.Clone(scores)
				slices.Sort(sorted)
				lnEps = sorted[n-600] - mx
			}
			out := make([]float32, hd)
			c.pruned(sc, mx, lnEps, 1, from, kvo, out, &ws)
			var keep []int
			for i, x := range scores {
				if x >= mx+lnEps {
					keep = append(keep, i)
				}
			}
			if ws.kept != int64(len(keep)) || ws.seen != int64(n) {
				t.Fatalf("%s, %d positions: counted %d kept of %d, want %d of %d", tc.t, n, ws.kept, ws.seen, len(keep), n)
			}
			if cs.eps == 1e-38 {
				if len(keep) != n {
					t.Fatalf("%s: eps 1e-38 kept %d of %d positions", tc.t, len(keep), n)
				}
				want := make([]float32, hd)
				copy(sc, scores)
				kernels.SoftmaxMax(sc, mx)
				c.values(sc, 1, from, kvo, want, ws.pa)
				if !slices.Equal(kernels.BytesOf(out), kernels.BytesOf(want)) {
					t.Errorf("%s: nothing pruned, output %v, unpruned %v", tc.t, out, want)
				}
				continue
			}
			if len(keep) == n || len(keep) == 0 {
				t.Fatalf("%s: kept %d of %d positions: the case prunes nothing", tc.t, len(keep), n)
			}
			var sum float64
			for _, i := range keep {
				sum += math.Exp(float64(scores[i] - mx))
			}
			for d := range hd {
				var want float64
				for _, i := range keep {
					want += float64(math.Exp(float64(scores[i]-mx)) / sum * float64(vals[from+i][kvo+d]))
				}
				if e := math.Abs(float64(out[d]) - want); e > tc.tol {
					t.Errorf("%s, %d of %d positions kept: out[%d] %g, float64 pruned attention %g", tc.t, len(keep), n, d, out[d], want)
				}
			}
			t.Logf("%s: %d of %d positions kept", tc.t, len(keep), n)
		}
	}
}

// TestAttnEpsPerplexity scores stories260K (a trained model: its
// attention is peaked, unlike the generated files') with and without
// AttnEps: pruning must skip positions and move the perplexity by a small
// measured amount (1e-3: +0.18 % over war-and-peace's first 20 chunks of
// 512 in `gguf perplexity`; here, over the model's own greedy text in
// chunks of 128, 1.7149 to 1.7140 with 44 % of the positions kept), and an
// out-of-range threshold is refused.
func TestAttnEpsPerplexity(t *testing.T) {
	m := openModel(t, shared.Path(t, "models", "stories260K-f32.gguf"))
	prompt, gen := greedyIDs(t, "refdata", "llama-cpp", "logits-f32-kvf32-nofa-greedy-ids.txt")
	ids := append(prompt, gen...)
	ppl := map[float64]float64{}
	for _, eps := range []float64{0, 1e-3} {
		s := newState(t, m, Options{Ctx: 128, Threads: 2, TypeK: gguf.TypeF16, TypeV: gguf.TypeF16, AttnEps: eps})
		res, err := Perplexity(s, SliceTokens(ids), PerplexityOptions{Ctx: 128, BOS: 1})
		if err != nil {
			t.Fatal(err)
		}
		ppl[eps] = res.PPL
		kept, seen := s.AttnKept()
		t.Logf("eps %g: PPL %.4f, kept %d of %d positions", eps, res.PPL, kept, seen)
		if eps > 0 && (seen == 0 || kept >= seen) {
			t.Errorf("eps %g kept %d of %d positions: nothing pruned", eps, kept, seen)
		}
	}
	rel := (ppl[1e-3] - ppl[0]) / ppl[0]
	if rel == 0 || math.Abs(rel) > 1e-2 {
		t.Errorf("eps 1e-3 moved the perplexity by %.3g relative (%.4f to %.4f): want a small nonzero change", rel, ppl[0], ppl[1e-3])
	}
	for _, eps := range []float64{-1e-3, 1, math.NaN()} {
		if _, err := NewState(m, Options{Ctx: 16, AttnEps: eps}); err == nil {
			t.Errorf("AttnEps %g accepted", eps)
		}
	}
}
